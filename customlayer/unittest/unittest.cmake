# unittest.cmake: CUSTOM_LAYER_DEV_MODE=unittest (run_custom_unittest in
# envsetup.sh). Included by cmake/custom_layer_project.cmake after the
# installed SDK was found.
#
# Every customlayer/unittest/*_test.cc becomes a GoogleTest program linked
# with TpuSdk::runtime (loader and op tester) and registered as one CTest
# test, which runs with CUSTOM_LAYER_CHIP_ARCH (the chip to run on) and
# TPUC_ROOT (where rebuild_custom_lib_cmodel installed the libraries) in its
# environment; TPUKERNEL_CUSTOM_FIRMWARE_PATH comes from the caller's
# environment (envsetup.sh sets it).
#
# One CTest test per program, not per GoogleTest case: the programs name
# their cases after the chips they run on, which they read from
# CUSTOM_LAYER_CHIP_ARCH, and gtest_discover_tests would list the cases
# without that environment (then run none of them, and pass).
#
# Switching the chip only reconfigures: the programs do not depend on it.

file(GLOB custom_unittest_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*_test.cc)
if(NOT custom_unittest_sources)
  message(STATUS "custom layer: no unit tests yet (customlayer/unittest/*_test.cc); nothing to build")
  return()
endif()

# The installed package exports the runtime as TpuSdk::runtime; older
# installs named it TpuSdk::tpu_runtime.
if(TARGET TpuSdk::runtime)
  set(custom_unittest_runtime TpuSdk::runtime)
elseif(TARGET TpuSdk::tpu_runtime)
  set(custom_unittest_runtime TpuSdk::tpu_runtime)
else()
  message(FATAL_ERROR "custom layer: the SDK in ${TPUC_ROOT} exports no TpuSdk::runtime target; reinstall it")
endif()

find_package(GTest REQUIRED)
enable_testing()

foreach(source IN LISTS custom_unittest_sources)
  get_filename_component(name ${source} NAME_WE)
  add_executable(${name} ${source})
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                             ${PROJECT_SOURCE_DIR}/customlayer/include)
  target_link_libraries(${name} PRIVATE ${custom_unittest_runtime} GTest::gtest_main)
  target_compile_options(${name} PRIVATE -Wall -Wextra)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "CUSTOM_LAYER_CHIP_ARCH=${CUSTOM_LAYER_CHIP_ARCH};TPUC_ROOT=${TPUC_ROOT}"
    LABELS "${CUSTOM_LAYER_CHIP_ARCH}")
endforeach()
list(LENGTH custom_unittest_sources count)
message(STATUS "custom layer: ${count} unit test program(s) for ${CUSTOM_LAYER_CHIP_ARCH}")
