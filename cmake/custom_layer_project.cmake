# custom_layer_project.cmake: the vendor-style build of this repository's own
# ops (register_ops.cmake, customlayer/, plugin/) against an installed SDK.
#
# CMakeLists.txt includes this file instead of building the SDK when
# CUSTOM_LAYER_DEV_MODE is given on the command line, which is what the
# rebuild_custom_* functions of envsetup.sh do, one build tree per mode:
#
#   cmake -DCUSTOM_LAYER_DEV_MODE=plugin|backend|cmodel|unittest
#         -DCUSTOM_LAYER_CHIP_ARCH=bm1684x|bm1688 -DTPUC_ROOT=<sdk prefix>
#
#   plugin    libplugin_custom.so            (chip-independent)
#   backend   libbackend_custom.so           (chip-independent)
#   cmodel    libcmodel_custom_<arch>.so     (one tree per chip)
#   unittest  customlayer/unittest/*_test.cc (customlayer/unittest/unittest.cmake)
#
# The libraries install into ${TPUC_ROOT}/lib. Only the command-line variable
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
elseif(CUSTOM_LAYER_DEV_MODE STREQUAL "customcpuop")
  message(FATAL_ERROR "CUSTOM_LAYER_DEV_MODE=customcpuop: AP (host CPU) custom ops are not supported by this SDK")
elseif(NOT CUSTOM_LAYER_DEV_MODE MATCHES "^(plugin|backend|cmodel|unittest)$")
  message(FATAL_ERROR "CUSTOM_LAYER_DEV_MODE='${CUSTOM_LAYER_DEV_MODE}': expected plugin, backend, cmodel or unittest")
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

file(GLOB custom_kernel_sources CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/customlayer/src/*.c ${PROJECT_SOURCE_DIR}/customlayer/src/*.cpp)
file(GLOB custom_plugin_sources CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/plugin/*.c ${PROJECT_SOURCE_DIR}/plugin/*.cpp)

if(CUSTOM_LAYER_DEV_MODE STREQUAL "unittest")
  include(${PROJECT_SOURCE_DIR}/customlayer/unittest/unittest.cmake)
  return()
endif()

if(CUSTOM_LAYER_DEV_MODE STREQUAL "plugin" AND NOT custom_plugin_sources)
  message(FATAL_ERROR "custom layer: no plugin sources (${PROJECT_SOURCE_DIR}/plugin/*.c, *.cpp)")
elseif(NOT CUSTOM_LAYER_DEV_MODE STREQUAL "plugin" AND NOT custom_kernel_sources)
  message(FATAL_ERROR "custom layer: no kernel sources (${PROJECT_SOURCE_DIR}/customlayer/src/*.c, *.cpp)")
endif()

tpu_custom_layer(
  REGISTRY ${PROJECT_SOURCE_DIR}/register_ops.cmake
  KERNEL_SOURCES ${custom_kernel_sources}
  PLUGIN_SOURCES ${custom_plugin_sources}
  INCLUDE_DIRS ${PROJECT_SOURCE_DIR}/customlayer/include
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
install(TARGETS ${_custom_layer_target} LIBRARY DESTINATION lib)

# envsetup.sh shows the lines that start with "custom layer: ".
if(CUSTOM_LAYER_DEV_MODE STREQUAL "plugin")
  list(LENGTH custom_plugin_sources _custom_layer_count)
  message(STATUS "custom layer: plugin from ${_custom_layer_count} source(s) in plugin/")
else()
  function(_custom_layer_report_ops registry)
    set(REGSTERED_OP_NAMES "")
    include(${registry})
    list(REMOVE_DUPLICATES REGSTERED_OP_NAMES)
    string(REPLACE ";" ", " ops "${REGSTERED_OP_NAMES}")
    message(STATUS "custom layer: ${CUSTOM_LAYER_DEV_MODE} with ops: ${ops}")
  endfunction()
  _custom_layer_report_ops(${PROJECT_SOURCE_DIR}/register_ops.cmake)
endif()
