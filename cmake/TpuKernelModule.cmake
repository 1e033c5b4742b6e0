# TpuKernelModule.cmake: tpu_kernel_module(), a kernel module for device
# programs (bmlib_runtime.h's tpu_kernel_load_module_file) on the emulator.
#
#   tpu_kernel_module(<name> SOURCES a.c b.c
#                     [INCLUDE_DIRS dir...] [LINK_LIBRARIES lib...]
#                     [OUTPUT_DIRECTORY dir])
#
# builds lib<name>.so from kernel sources whose kernels are registered with
# TPUKERNEL_FUNC_REGISTER / TPUKERNEL_FUNC2_REGISTER. The device's module is
# an ELF for the chip's controller; here it is a host shared library linked
# to the emulator (TpuSdk::cmodel), which libbmlib dlopens. Install it with
# install(TARGETS <name> LIBRARY DESTINATION ...).
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/TpuKernelExits.cmake)

function(tpu_kernel_module name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "OUTPUT_DIRECTORY" "SOURCES;INCLUDE_DIRS;LINK_LIBRARIES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tpu_kernel_module(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "tpu_kernel_module(${name}): no SOURCES given")
  endif()
  if(NOT TARGET TpuSdk::cmodel)
    message(FATAL_ERROR "tpu_kernel_module(${name}): TpuSdk::cmodel is not defined; call find_package(TpuSdk) first")
  endif()
  # MODULE: a library to dlopen, never linked against.
  add_library(${name} MODULE ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${ARG_INCLUDE_DIRS})
  target_link_libraries(${name} PRIVATE TpuSdk::cmodel ${ARG_LINK_LIBRARIES})
  tpu_kernel_wrap_exits(${name})
  # The registration constructors must stay visible to the dynamic loader
  # even under a project-wide -fvisibility=hidden.
  set_target_properties(${name} PROPERTIES PREFIX "lib" C_VISIBILITY_PRESET default CXX_VISIBILITY_PRESET default
                                           POSITION_INDEPENDENT_CODE ON)
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  endif()
endfunction()
