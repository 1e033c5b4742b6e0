# custom_layer_ap.cmake: CUSTOM_LAYER_DEV_MODE=customcpuop of
# custom_layer_project.cmake, the vendor's customcpuop.cmake counterpart:
# libcustomapop.so (SOVERSION 1.0.0) from ap_src/ (recursively) with the
# runtime's additions (TpuHostOps.cmake), installed into ${TPUC_ROOT}/lib
# with a copy named libcustomcpuop.so (the name the vendor's runtime
# dlopens), and bmcpu.h and customap_common.h into ${TPUC_ROOT}/include.
# Set by the includer: custom_ap_dir, custom_ap_include, custom_ap_include_dirs.
include(${CMAKE_CURRENT_LIST_DIR}/TpuHostOps.cmake)
file(GLOB_RECURSE _custom_ap_sources CONFIGURE_DEPENDS ${custom_ap_dir}/*.cpp)
if(NOT _custom_ap_sources)
  message(FATAL_ERROR "custom layer: no AP op sources (${custom_ap_dir}/*.cpp)")
endif()
foreach(header bmcpu.h customap_common.h)
  if(NOT EXISTS ${custom_ap_include}/${header})
    message(FATAL_ERROR "custom layer: ${custom_ap_include}/${header} is missing: AP ops need the AP headers "
                        "(copy include/ of this SDK's customlayer/ sample)")
  endif()
endforeach()
if(CUSTOM_LAYER_AP_ARCH STREQUAL "aarch64")
  tpu_ap_op_library(customcpuop SOURCES ${_custom_ap_sources} INCLUDE_DIRS ${custom_ap_include_dirs}
                    OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR} NO_EXIT_WRAPPERS)
else()
  tpu_ap_op_library(customcpuop SOURCES ${_custom_ap_sources} INCLUDE_DIRS ${custom_ap_include_dirs}
                    CMODEL_TARGET TpuSdk::cmodel OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
endif()
install(TARGETS customcpuop LIBRARY DESTINATION lib)
install(FILES $<TARGET_FILE:customcpuop> DESTINATION lib RENAME libcustomcpuop.so)
install(FILES ${custom_ap_include}/bmcpu.h ${custom_ap_include}/customap_common.h DESTINATION include)
list(LENGTH _custom_ap_sources _custom_ap_count)
message(STATUS "custom layer: customcpuop (${CUSTOM_LAYER_AP_ARCH}) from ${_custom_ap_count} AP op source(s) in ${custom_ap_dir}/")
