# custom_layer_project.cmake: the vendor-style build of an op project against
# an installed SDK: this repository's own ops (register_ops.cmake,
# customlayer/, plugin/) or a vendor customlayer directory anywhere
# (-DCUSTOM_LAYER_PROJECT_DIR=<dir>: register_ops.cmake, src/, include/,
# plugin/), which envsetup.sh passes as $CUSTOM_LAYER_PATH.
#
# CMakeLists.txt includes this file instead of building the SDK when
# CUSTOM_LAYER_DEV_MODE is given on the command line, which is what the
# rebuild_custom_* functions of envsetup.sh do, one build tree per mode:
#
#   cmake -S <this SDK> -DCUSTOM_LAYER_DEV_MODE=plugin|backend|cmodel|unittest
#         -DCUSTOM_LAYER_CHIP_ARCH=bm1684x|bm1688 -DTPUC_ROOT=<sdk prefix>
#         [-DCUSTOM_LAYER_PROJECT_DIR=<op project>]
#
#   plugin    libplugin_custom.so            (chip-independent)
#   backend   libbackend_custom.so           (chip-independent)
#   cmodel    libcmodel_custom_<arch>.so     (one tree per chip)
#   unittest  the project's tests (custom_layer_unittest.cmake)
#   customcpuop  libcustomapop.so (SOVERSION 1.0.0) and its copy
#             libcustomcpuop.so: the AP (host CPU) ops of ap_src/
#             (TpuHostOps.cmake), with bmcpu.h and customap_common.h
#             installed into ${TPUC_ROOT}/include, as the vendor's
#             customcpuop.cmake does; -DCUSTOM_LAYER_AP_ARCH=x86 (default)
#             or aarch64 (with the aarch64 cross compiler given as
#             CMAKE_CXX_COMPILER; no exit wrappers, it cannot link the
#             host's emulator library)
#
# The plugin also holds the AP ops (ap_src/*.cpp, C++17, include dirs
# include, include/kernel, include/custom_ap): their createLayerInstance is
# the compile-time side (shape inference and reference).
#
# The libraries install into ${TPUC_ROOT}/lib (the firmware also under the
# vendor's name, libcmodel_custom_1684x.so / _1688.so). Only the command-line variable
# counts: an environment left over from the vendor's envsetup.sh must not turn
# an ordinary SDK build into this one.

set(CUSTOM_LAYER_CHIP_ARCH bm1684x CACHE STRING "Chip of the firmware library (bm1684x or bm1688)")
if(NOT CUSTOM_LAYER_CHIP_ARCH MATCHES "^(bm1684x|bm1688)$")
  message(FATAL_ERROR "CUSTOM_LAYER_CHIP_ARCH='${CUSTOM_LAYER_CHIP_ARCH}': expected bm1684x or bm1688")
endif()
if(DEFINED ENV{TPUC_ROOT} AND NOT "$ENV{TPUC_ROOT}" STREQUAL "")
  set(_custom_layer_default_root "$ENV{TPUC_ROOT}")
else()
  set(_custom_layer_default_root "${PROJECT_SOURCE_DIR}/install")
endif()
set(TPUC_ROOT "${_custom_layer_default_root}" CACHE PATH "Prefix of the installed SDK")

if(CUSTOM_LAYER_DEV_MODE MATCHES "^(soc|pcie)$")
  message(FATAL_ERROR "CUSTOM_LAYER_DEV_MODE=${CUSTOM_LAYER_DEV_MODE}: device firmware links the vendor's "
                      "firmware core and needs its cross toolchains, which this SDK does not ship; "
                      "the cmodel firmware (CUSTOM_LAYER_DEV_MODE=cmodel) is what runs here")
elseif(NOT CUSTOM_LAYER_DEV_MODE MATCHES "^(plugin|backend|cmodel|unittest|customcpuop)$")
  message(FATAL_ERROR "CUSTOM_LAYER_DEV_MODE='${CUSTOM_LAYER_DEV_MODE}': expected plugin, backend, cmodel, unittest "
                      "or customcpuop")
endif()
set(CUSTOM_LAYER_AP_ARCH x86 CACHE STRING "Architecture of the AP op run-time library (x86 or aarch64)")
if(NOT CUSTOM_LAYER_AP_ARCH MATCHES "^(x86|aarch64)$")
  message(FATAL_ERROR "CUSTOM_LAYER_AP_ARCH='${CUSTOM_LAYER_AP_ARCH}': expected x86 or aarch64")
endif()

# A tree reconfigured for another TPUC_ROOT must look the package up again,
# not keep the TpuSdk_DIR cached from the first prefix.
if(DEFINED _CUSTOM_LAYER_TPUC_ROOT_USED AND NOT _CUSTOM_LAYER_TPUC_ROOT_USED STREQUAL TPUC_ROOT)
  unset(TpuSdk_DIR CACHE)
endif()
set(_CUSTOM_LAYER_TPUC_ROOT_USED "${TPUC_ROOT}" CACHE INTERNAL "")
find_package(TpuSdk CONFIG PATHS ${TPUC_ROOT} NO_DEFAULT_PATH)
if(NOT TpuSdk_FOUND)
  message(FATAL_ERROR "No installed SDK in TPUC_ROOT=${TPUC_ROOT} (no ${TPUC_ROOT}/lib/cmake/TpuSdk/TpuSdkConfig.cmake). "
                      "Install it with scripts/build.sh (default prefix ${PROJECT_SOURCE_DIR}/install) or "
                      "cmake --install <SDK build dir> --prefix ${TPUC_ROOT}")
endif()
set(CMAKE_INSTALL_PREFIX ${TPUC_ROOT} CACHE PATH "" FORCE)
# Installed next to libcmodel.so, the libraries find it without LD_LIBRARY_PATH.
set(CMAKE_INSTALL_RPATH "\$ORIGIN")

# ---- the op project -----------------------------------------------------------
# Two layouts: this SDK's own (register_ops.cmake, customlayer/{src,include,
# unittest}, plugin/) and the vendor's customlayer directory (register_ops.cmake,
# src/, include/ with include/kernel/, plugin/, optional python/, test_if/),
# which builds as it is, from wherever it lies.
set(CUSTOM_LAYER_PROJECT_DIR "${PROJECT_SOURCE_DIR}" CACHE PATH
    "The op project: a vendor customlayer directory or this SDK's own tree")
get_filename_component(custom_project "${CUSTOM_LAYER_PROJECT_DIR}" ABSOLUTE)
if(NOT EXISTS "${custom_project}/register_ops.cmake")
  message(FATAL_ERROR "CUSTOM_LAYER_PROJECT_DIR=${custom_project} is not an op project: it has no register_ops.cmake")
elseif(IS_DIRECTORY "${custom_project}/customlayer/src")
  set(custom_layout sdk)
elseif(IS_DIRECTORY "${custom_project}/src")
  set(custom_layout vendor)
else()
  message(FATAL_ERROR "CUSTOM_LAYER_PROJECT_DIR=${custom_project}: expected kernel sources in src/ (a vendor "
                      "customlayer directory) or customlayer/src/ (this SDK's layout)")
endif()

if(custom_layout STREQUAL "sdk")
  file(GLOB custom_kernel_sources CONFIGURE_DEPENDS
    ${custom_project}/customlayer/src/*.c ${custom_project}/customlayer/src/*.cpp)
  set(custom_include_dirs ${custom_project}/customlayer/include)
  set(custom_ap_dir ${custom_project}/customlayer/ap_src)
  set(custom_ap_include ${custom_project}/customlayer/include)
  set(custom_ap_include_dirs ${custom_include_dirs} ${custom_project}/customlayer/include/custom_ap)
  set(custom_unittest_dir ${custom_project}/customlayer/unittest)
  set(custom_op_cases ${custom_project}/customlayer/op_cases.json)
  set(custom_python_dir ${custom_project}/customlayer/python)
  set(custom_python_test_dir ${custom_project}/customlayer/test_if/unittest)
  set(custom_ppl_dir ${custom_project}/customlayer/PplBackend)
else()
  # The vendor globs src/ recursively.
  file(GLOB_RECURSE custom_kernel_sources CONFIGURE_DEPENDS ${custom_project}/src/*.c ${custom_project}/src/*.cpp)
  include(${CMAKE_CURRENT_LIST_DIR}/custom_layer_vendor_includes.cmake)
  custom_layer_stage_vendor_includes(${custom_project} ${TPUC_ROOT}/include ${CMAKE_BINARY_DIR}/user_include
                                     custom_include_dirs)
  set(custom_ap_dir ${custom_project}/ap_src)
  set(custom_ap_include ${custom_project}/include)
  # include/custom_ap through the staging directory too (its headers are
  # the project's own, linked there).
  list(GET custom_include_dirs 0 _custom_layer_stage)
  set(custom_ap_include_dirs ${custom_include_dirs} ${_custom_layer_stage}/custom_ap)
  set(custom_unittest_dir ${custom_project}/unittest)
  set(custom_op_cases ${custom_project}/op_cases.json)
  set(custom_python_dir ${custom_project}/python)
  set(custom_python_test_dir ${custom_project}/test_if/unittest)
  set(custom_ppl_dir ${custom_project}/PplBackend)
endif()
# PPL ops (register_custom_ppl_op): kernels in PplBackend/src/*.pl, built
# with the C++ compiler (TpuPpl.cmake, docs/ppl.md).
tpu_ppl_backend(${custom_ppl_dir} custom_ppl)
file(GLOB custom_plugin_sources CONFIGURE_DEPENDS ${custom_project}/plugin/*.c ${custom_project}/plugin/*.cpp)
# AP ops: the vendor's plugin build globs ap_src/*.cpp, its customcpuop
# build ap_src/ recursively.
file(GLOB custom_ap_sources CONFIGURE_DEPENDS ${custom_ap_dir}/*.cpp)
list(APPEND custom_plugin_sources ${custom_ap_sources})

if(CUSTOM_LAYER_DEV_MODE STREQUAL "customcpuop")
  include(${CMAKE_CURRENT_LIST_DIR}/custom_layer_ap.cmake)
  return()
endif()
set(custom_registry ${custom_project}/register_ops.cmake)

if(CUSTOM_LAYER_DEV_MODE STREQUAL "unittest")
  include(${CMAKE_CURRENT_LIST_DIR}/custom_layer_unittest.cmake)
  return()
endif()

if(CUSTOM_LAYER_DEV_MODE STREQUAL "plugin" AND NOT custom_plugin_sources)
  message(FATAL_ERROR "custom layer: no plugin sources (${custom_project}/plugin/*.c, *.cpp)")
elseif(NOT CUSTOM_LAYER_DEV_MODE STREQUAL "plugin" AND NOT custom_kernel_sources)
  message(FATAL_ERROR "custom layer: no kernel sources in ${custom_project} (${custom_layout} layout)")
endif()

tpu_custom_layer(
  REGISTRY ${custom_registry}
  KERNEL_SOURCES ${custom_kernel_sources}
  PLUGIN_SOURCES ${custom_plugin_sources}
  INCLUDE_DIRS ${custom_include_dirs}
  PPL_KERNELS ${custom_ppl_KERNELS}
  PPL_HOST_SOURCES ${custom_ppl_HOST_SOURCES}
  PPL_INCLUDE_DIRS ${custom_ppl_INCLUDE_DIRS}
  MODES ${CUSTOM_LAYER_DEV_MODE}
  ARCHS ${CUSTOM_LAYER_CHIP_ARCH}
  CMODEL_TARGET TpuSdk::cmodel)

if(CUSTOM_LAYER_DEV_MODE STREQUAL "plugin")
  set(_custom_layer_target plugin_custom)
elseif(CUSTOM_LAYER_DEV_MODE STREQUAL "backend")
  set(_custom_layer_target backend_custom)
else()
  set(_custom_layer_target cmodel_custom_${CUSTOM_LAYER_CHIP_ARCH})
endif()
if(CUSTOM_LAYER_DEV_MODE STREQUAL "plugin")
  tpu_ap_plugin_sources(plugin_custom INCLUDE_DIRS ${custom_ap_include_dirs})
endif()
install(TARGETS ${_custom_layer_target} LIBRARY DESTINATION lib)
if(CUSTOM_LAYER_DEV_MODE STREQUAL "cmodel")
  # The vendor's name for the same firmware (libcmodel_custom_1684x.so), as
  # a link to ours, so scripts and TPUKERNEL_CUSTOM_FIRMWARE_PATH values
  # written for the vendor's flow find it.
  string(SUBSTRING ${CUSTOM_LAYER_CHIP_ARCH} 2 -1 _custom_layer_vendor_chip)
  install(CODE "file(CREATE_LINK libcmodel_custom_${CUSTOM_LAYER_CHIP_ARCH}.so
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/libcmodel_custom_${_custom_layer_vendor_chip}.so\" SYMBOLIC)
    message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/libcmodel_custom_${_custom_layer_vendor_chip}.so -> libcmodel_custom_${CUSTOM_LAYER_CHIP_ARCH}.so\")")
endif()

# envsetup.sh shows the lines that start with "custom layer: ".
if(CUSTOM_LAYER_DEV_MODE STREQUAL "plugin")
  list(LENGTH custom_plugin_sources _custom_layer_count)
  list(LENGTH custom_ap_sources _custom_layer_ap_count)
  math(EXPR _custom_layer_count "${_custom_layer_count} - ${_custom_layer_ap_count}")
  if(_custom_layer_ap_count)
    message(STATUS "custom layer: plugin from ${_custom_layer_count} source(s) in ${custom_project}/plugin/ and "
                   "${_custom_layer_ap_count} AP op source(s) in ${custom_ap_dir}/")
  else()
    message(STATUS "custom layer: plugin from ${_custom_layer_count} source(s) in ${custom_project}/plugin/")
  endif()
else()
  function(_custom_layer_report_ops registry)
    set(REGSTERED_OP_NAMES "")
    set(REGSTERED_PPL_OP_NAMES "")
    include(${registry})
    list(APPEND REGSTERED_OP_NAMES ${REGSTERED_PPL_OP_NAMES})
    list(REMOVE_DUPLICATES REGSTERED_OP_NAMES)
    string(REPLACE ";" ", " ops "${REGSTERED_OP_NAMES}")
    message(STATUS "custom layer: ${CUSTOM_LAYER_DEV_MODE} with ops: ${ops}")
  endfunction()
  _custom_layer_report_ops(${custom_registry})
endif()
