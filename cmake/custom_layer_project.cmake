# custom_layer_project.cmake: the vendor-style build of this repository's own
# ops (register_ops.cmake, customlayer/, plugin/) against an installed SDK.
#
# CMakeLists.txt includes this file instead of building the SDK when
# CUSTOM_LAYER_DEV_MODE is given on the command line, which is what the
# rebuild_custom_* functions of envsetup.sh do:
#
#   cmake -DCUSTOM_LAYER_DEV_MODE=plugin|backend|cmodel|unittest
#         -DCUSTOM_LAYER_CHIP_ARCH=bm1684x|bm1688 -DTPUC_ROOT=<sdk prefix>
#
# Only the command-line variable counts: an environment left over from the
# vendor's envsetup.sh must not turn an ordinary SDK build into this one.

set(CUSTOM_LAYER_CHIP_ARCH bm1684x CACHE STRING "Chip of the firmware library (bm1684x or bm1688)")
set(TPUC_ROOT "${CMAKE_INSTALL_PREFIX}" CACHE PATH "Prefix of the installed SDK")
if(NOT CUSTOM_LAYER_DEV_MODE MATCHES "^(plugin|backend|cmodel|unittest)$")
  message(FATAL_ERROR "CUSTOM_LAYER_DEV_MODE='${CUSTOM_LAYER_DEV_MODE}': expected plugin, backend, cmodel or unittest")
endif()

find_package(TpuSdk CONFIG REQUIRED PATHS ${TPUC_ROOT} NO_DEFAULT_PATH)
set(CMAKE_INSTALL_PREFIX ${TPUC_ROOT} CACHE PATH "" FORCE)

file(GLOB custom_kernel_sources CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/customlayer/src/*.c ${PROJECT_SOURCE_DIR}/customlayer/src/*.cpp)
file(GLOB custom_plugin_sources CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/plugin/*.c ${PROJECT_SOURCE_DIR}/plugin/*.cpp)

if(CUSTOM_LAYER_DEV_MODE STREQUAL "unittest")
  include(${PROJECT_SOURCE_DIR}/customlayer/unittest/unittest.cmake)
  return()
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
  install(TARGETS plugin_custom LIBRARY DESTINATION lib)
elseif(CUSTOM_LAYER_DEV_MODE STREQUAL "backend")
  install(TARGETS backend_custom LIBRARY DESTINATION lib)
else()
  install(TARGETS cmodel_custom_${CUSTOM_LAYER_CHIP_ARCH} LIBRARY DESTINATION lib)
endif()
