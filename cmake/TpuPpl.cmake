# TpuPpl.cmake: PPL kernel files (.pl) built as C++ over the SDK's own PPL
# headers (kernel/include/ppl, installed as include/ppl; docs/ppl.md); no
# closed compiler involved. Works from the source tree and from an
# installed SDK (find_package(TpuSdk) includes it).
#
# tpu_ppl_library(NAME FILE.pl... [CMODEL_TARGET t] [WARNINGS STRICT|NONE])
#     a static library holding, for each file, the kernels and their
#     generated entries `int k(...)`; the generated headers (<stem>.h) are on
#     its public include path. Position-independent, so shared libraries
#     (a custom layer's backend and firmware) can link it. CMODEL_TARGET
#     (default TpuSdk::cmodel) is the emulator library it links. WARNINGS
#     STRICT (default) compiles with -Wall -Wextra; NONE leaves the warning
#     options to the caller.
#
# tpu_ppl_test(NAME FILE.pl [CMODEL_TARGET t] [RUNTIME_TARGET t])
#     a host program NAME running the file's __TEST__ functions on the
#     emulator (docs/ppl.md, "__TEST__ programs": `NAME [chip] [data dir]`),
#     and the CTest tests NAME_bm1684x and NAME_bm1688 that run it (when the
#     project enabled testing). RUNTIME_TARGET (default TpuSdk::runtime)
#     holds the test runner.
#
# tpu_ppl_backend(DIR PREFIX)
#     the PPL part of a custom-op project in the vendor's layout: sets
#     PREFIX_KERNELS (DIR/src/*.pl), PREFIX_HOST_SOURCES (DIR/src/*.c,
#     *.cpp: the tiling and api_<op>_* code that includes the generated
#     <stem>.h) and PREFIX_INCLUDE_DIRS (DIR/include when it exists).
set(TPU_PPL_GENERATOR ${CMAKE_CURRENT_LIST_DIR}/ppl_interface.py)
if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/../kernel/include/ppl/ppl.h)
  get_filename_component(TPU_PPL_INCLUDE_DIR ${CMAKE_CURRENT_LIST_DIR}/../kernel/include/ppl ABSOLUTE)
else()
  # Installed: <prefix>/lib/cmake/TpuSdk/TpuPpl.cmake, <prefix>/include/ppl.
  get_filename_component(TPU_PPL_INCLUDE_DIR ${CMAKE_CURRENT_LIST_DIR}/../../../include/ppl ABSOLUTE)
endif()
if(NOT TARGET Python3::Interpreter)
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
endif()

# Generates <out>/<stem>.h and <out>/<stem>_<kind>.cpp for `pl`; appends the
# generated files to the list variable `list_var`.
function(_tpu_ppl_generate pl out kind list_var)
  get_filename_component(absolute ${pl} ABSOLUTE)
  get_filename_component(stem ${pl} NAME_WE)
  if(kind STREQUAL "ppl")
    set(outputs ${out}/${stem}.h ${out}/${stem}_ppl.cpp ${out}/${stem}_ppl.pl)
    set(mode "")
    set(what "PPL interface of ${stem}.pl")
  else()
    set(outputs ${out}/${stem}_test.cpp ${out}/${stem}_test.pl)
    set(mode --test)
    set(what "PPL __TEST__ program of ${stem}.pl")
  endif()
  add_custom_command(OUTPUT ${outputs}
                     COMMAND Python3::Interpreter ${TPU_PPL_GENERATOR} ${mode} ${absolute} ${out}
                     DEPENDS ${absolute} ${TPU_PPL_GENERATOR}
                     COMMENT "${what}" VERBATIM)
  set(${list_var} ${${list_var}} ${outputs} PARENT_SCOPE)
endfunction()

function(_tpu_ppl_compile_settings target cmodel warnings)
  target_include_directories(${target} PRIVATE ${TPU_PPL_INCLUDE_DIR})
  target_link_libraries(${target} PUBLIC ${cmodel})
  set_target_properties(${target} PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON POSITION_INDEPENDENT_CODE ON)
  if(NOT warnings STREQUAL "NONE")
    target_compile_options(${target} PRIVATE -Wall -Wextra)
  endif()
  # A check error names the .pl line of the call: no call may become a jump.
  target_compile_options(${target} PRIVATE -fno-optimize-sibling-calls)
endfunction()

function(tpu_ppl_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "CMODEL_TARGET;WARNINGS" "")
  if(NOT arg_CMODEL_TARGET)
    set(arg_CMODEL_TARGET TpuSdk::cmodel)
  endif()
  if(NOT arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tpu_ppl_library(${name}): no .pl files given")
  endif()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/ppl_${name})
  set(sources "")
  foreach(pl ${arg_UNPARSED_ARGUMENTS})
    _tpu_ppl_generate(${pl} ${out} ppl sources)
  endforeach()
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC ${out})
  # Each .pl's own #include "..." lines, from its directory (the compiler
  # reads a generated copy, <stem>_ppl.pl).
  foreach(pl ${arg_UNPARSED_ARGUMENTS})
    get_filename_component(pl_dir ${pl} ABSOLUTE)
    get_filename_component(pl_dir ${pl_dir} DIRECTORY)
    target_include_directories(${name} PRIVATE ${pl_dir})
  endforeach()
  _tpu_ppl_compile_settings(${name} ${arg_CMODEL_TARGET} "${arg_WARNINGS}")
endfunction()

function(tpu_ppl_test name pl)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "CMODEL_TARGET;RUNTIME_TARGET" "")
  if(NOT arg_CMODEL_TARGET)
    set(arg_CMODEL_TARGET TpuSdk::cmodel)
  endif()
  if(NOT arg_RUNTIME_TARGET)
    set(arg_RUNTIME_TARGET TpuSdk::runtime)
  endif()
  set(sources "")
  _tpu_ppl_generate(${pl} ${CMAKE_CURRENT_BINARY_DIR}/ppl_test_${name} test sources)
  add_executable(${name} ${sources})
  _tpu_ppl_compile_settings(${name} ${arg_CMODEL_TARGET} STRICT)
  # The .pl's own #include "..." lines, from its directory.
  get_filename_component(pl_dir ${pl} ABSOLUTE)
  get_filename_component(pl_dir ${pl_dir} DIRECTORY)
  target_include_directories(${name} PRIVATE ${pl_dir})
  target_link_libraries(${name} PRIVATE ${arg_RUNTIME_TARGET})
  # (add_test does nothing in a project that did not enable testing.)
  foreach(chip bm1684x bm1688)
    # Each chip's dumps in a directory of its own: the two may run at once.
    add_test(NAME ${name}_${chip} COMMAND ${name} ${chip} ${CMAKE_CURRENT_BINARY_DIR}/ppl_test_${name}/data_${chip})
  endforeach()
endfunction()

function(tpu_ppl_backend dir prefix)
  file(GLOB kernels CONFIGURE_DEPENDS ${dir}/src/*.pl)
  file(GLOB host CONFIGURE_DEPENDS ${dir}/src/*.c ${dir}/src/*.cpp)
  set(includes "")
  if(IS_DIRECTORY ${dir}/include)
    set(includes ${dir}/include)
  endif()
  set(${prefix}_KERNELS "${kernels}" PARENT_SCOPE)
  set(${prefix}_HOST_SOURCES "${host}" PARENT_SCOPE)
  set(${prefix}_INCLUDE_DIRS "${includes}" PARENT_SCOPE)
endfunction()
