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
#   - every test_if/unittest/test_*.py (customlayer/test_if/unittest here),
#     the vendor's TpuLang tests, run by the SDK's Python interpreter through
#     tpu_sdk.unittest_runner, which judges them by their unittest results.
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
    target_compile_options(${name} PRIVATE -Wall -Wextra -UNDEBUG)  # the tests' assert() fires, as the ops'
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

# The vendor's Python unit tests, each run by the SDK's interpreter from its
# own working directory in this tree (the test base works in ./tmp), with
# the SDK's Python front end, the project's python/ (my_tpulang_layer.py)
# and the tests' own directory on PYTHONPATH, and the SDK's commands
# (model_deploy.py) on PATH.
file(GLOB custom_python_tests CONFIGURE_DEPENDS ${custom_python_test_dir}/test_*.py)
if(custom_python_tests)
  file(GLOB custom_python_extension ${TPUC_ROOT}/python/_tpu_sdk*.so)
  if(NOT TPU_SDK_PYTHON_EXECUTABLE OR NOT custom_python_extension)
    message(FATAL_ERROR "custom layer: ${custom_python_test_dir} holds Python tests, but the SDK in ${TPUC_ROOT} "
                        "was built without its Python front end (TPU_SDK_BUILD_PYTHON; pybind11-dev, python3-numpy)")
  endif()
  set(custom_python_path "${TPUC_ROOT}/python:${custom_python_dir}:${custom_python_test_dir}")
  foreach(test_file IN LISTS custom_python_tests)
    get_filename_component(stem ${test_file} NAME_WE)
    set(work_dir ${CMAKE_BINARY_DIR}/python_tests/${stem})
    file(MAKE_DIRECTORY ${work_dir})
    # Judged by its unittest results, not only its exit status (a vendor
    # file may exit 0 whatever its tests did): tpu_sdk/unittest_runner.py.
    add_test(NAME ${stem}.py COMMAND ${TPU_SDK_PYTHON_EXECUTABLE} -m tpu_sdk.unittest_runner ${test_file}
             WORKING_DIRECTORY ${work_dir})
    set_tests_properties(${stem}.py PROPERTIES LABELS "${CUSTOM_LAYER_CHIP_ARCH};python"
      ENVIRONMENT "${custom_test_environment};PYTHONPATH=${custom_python_path};PATH=${TPUC_ROOT}/bin:$ENV{PATH}")
    math(EXPR custom_test_count "${custom_test_count} + 1")
  endforeach()
endif()

if(custom_test_count EQUAL 0)
  message(STATUS "custom layer: no tests to run in ${custom_project}: add ${custom_unittest_dir}/*_test.cc, "
                 "${custom_python_test_dir}/test_*.py or ${custom_op_cases}")
else()
  message(STATUS "custom layer: ${custom_test_count} test(s) for ${CUSTOM_LAYER_CHIP_ARCH}")
endif()
