# custom_layer_unittest.cmake: CUSTOM_LAYER_DEV_MODE=unittest (what
# run_custom_unittest in envsetup.sh builds and runs). Included by
# custom_layer_project.cmake once the installed SDK and the op project are
# known (custom_project, custom_layout, custom_unittest_dir,
# custom_include_dirs, custom_op_cases).
#
# The tests of an op project, each one CTest test run on
# CUSTOM_LAYER_CHIP_ARCH with TPUC_ROOT in its environment
# (TPUKERNEL_CUSTOM_FIRMWARE_PATH comes from the caller's, set by
# envsetup.sh):
#   - every <unittest dir>/*_test.cc, a GoogleTest program linked with
#     TpuSdk::runtime (loader and op tester): customlayer/unittest/ in this
#     SDK's layout, unittest/ in a vendor directory;
#   - the op checker over the project's op cases (customlayer/op_cases.json
#     or op_cases.json) when it has them: tpu_op_check --cases <file>.
# The vendor's Python tests (test_if/unittest/test_*.py) need the TpuLang
# front end, which this SDK does not have yet: they are counted and named as
# not run, never as passed.
#
# One CTest test per program, not per GoogleTest case: the programs name
# their cases after the chips they run on, which they read from
# CUSTOM_LAYER_CHIP_ARCH, and gtest_discover_tests would list the cases
# without that environment (then run none of them, and pass).
#
# Switching the chip only reconfigures: the programs do not depend on it.

enable_testing()
set(custom_test_environment "CUSTOM_LAYER_CHIP_ARCH=${CUSTOM_LAYER_CHIP_ARCH};TPUC_ROOT=${TPUC_ROOT}")
set(custom_test_count 0)

file(GLOB custom_unittest_sources CONFIGURE_DEPENDS ${custom_unittest_dir}/*_test.cc)
if(custom_unittest_sources)
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
  foreach(source IN LISTS custom_unittest_sources)
    get_filename_component(name ${source} NAME_WE)
    add_executable(${name} ${source})
    target_include_directories(${name} PRIVATE ${custom_unittest_dir} ${custom_include_dirs})
    target_link_libraries(${name} PRIVATE ${custom_unittest_runtime} GTest::gtest_main)
    target_compile_options(${name} PRIVATE -Wall -Wextra)
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${custom_test_environment}"
                         LABELS "${CUSTOM_LAYER_CHIP_ARCH}")
    math(EXPR custom_test_count "${custom_test_count} + 1")
  endforeach()
endif()

if(EXISTS ${custom_op_cases})
  find_program(custom_op_check tpu_op_check PATHS ${TPUC_ROOT}/bin NO_DEFAULT_PATH)
  if(NOT custom_op_check)
    message(FATAL_ERROR "custom layer: ${TPUC_ROOT}/bin/tpu_op_check is missing; reinstall the SDK there")
  endif()
  add_test(NAME op_check COMMAND ${custom_op_check} --cases ${custom_op_cases} --chip ${CUSTOM_LAYER_CHIP_ARCH})
  set_tests_properties(op_check PROPERTIES ENVIRONMENT "${custom_test_environment}"
                       LABELS "${CUSTOM_LAYER_CHIP_ARCH}")
  math(EXPR custom_test_count "${custom_test_count} + 1")
endif()

file(GLOB custom_python_tests RELATIVE ${custom_project} ${custom_project}/test_if/unittest/test_*.py)
if(custom_python_tests)
  list(LENGTH custom_python_tests python_count)
  string(REPLACE ";" ", " python_names "${custom_python_tests}")
  message(STATUS "custom layer: ${python_count} Python test(s) NOT run (they need the TpuLang front end, "
                 "not in this SDK yet): ${python_names}")
endif()

if(custom_test_count EQUAL 0)
  message(STATUS "custom layer: no tests to run in ${custom_project}: add ${custom_unittest_dir}/*_test.cc "
                 "or ${custom_op_cases}")
else()
  message(STATUS "custom layer: ${custom_test_count} test(s) for ${CUSTOM_LAYER_CHIP_ARCH}")
endif()
