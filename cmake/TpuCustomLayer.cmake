# TpuCustomLayer.cmake: builds a set of custom ops into the three libraries
# of the custom-layer flow.
#
#   libplugin_custom.so           host hooks (inference_<op>, shape_inference_<op>, ...)
#   libbackend_custom.so          backend_api_<op>_* wrappers over the user's api_<op>_*
#   libcmodel_custom_<arch>.so    firmware for the emulator: tpu_*_entry dispatch by name
#
# A project lists its ops in a registry file with the vendor macros
# (register_custom_op(absadd), register_custom_local_op(absadd), ...) and calls
#
#   tpu_custom_layer(
#     REGISTRY        register_ops.cmake
#     KERNEL_SOURCES  src/*.c          (api_<op>_*, tpu_impl_<op>_*)
#     PLUGIN_SOURCES  plugin/*.c       (host hooks)
#     INCLUDE_DIRS    include          (param structs, parsers, tpu_impl_custom_ops.h)
#     MODES           plugin backend cmodel     (default: all three)
#     ARCHS           bm1684x bm1688            (default: both)
#     CMODEL_TARGET   TpuSdk::cmodel            (the emulator library to link)
#     OUTPUT_DIRECTORY <dir>                    (default: <binary dir>/lib)
#     TARGET_PREFIX   <prefix>                  (default: none)
#     WARNINGS        VENDOR|STRICT             (default: VENDOR, the vendor's set)
#     PPL_KERNELS     PplBackend/src/*.pl       (PPL ops: kernels, docs/ppl.md)
#     PPL_HOST_SOURCES PplBackend/src/*.c *.cpp (PPL ops: tiling and api_<op>_*,
#                                               which include the generated <stem>.h)
#     PPL_INCLUDE_DIRS PplBackend/include)
#
# Targets: <prefix>plugin_custom, <prefix>backend_custom,
# <prefix>cmodel_custom_<arch>; the files keep the vendor names, so two sets
# in one project need two OUTPUT_DIRECTORYs.
#
# Unlike the vendor generators, the generated sources are rewritten only when
# their content changes (never appended to), so a build tree can be reused
# and a rebuild after editing one kernel only recompiles that kernel.

set(TPU_CUSTOM_LAYER_ARCHS bm1684x bm1688)
set(_TPU_CUSTOM_LAYER_DIR ${CMAKE_CURRENT_LIST_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/TpuKernelExits.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/TpuPpl.cmake)

# ---- the registry macros (vendor names; the list variables keep the vendor
# spelling too, since some registries append to them directly) -------------
macro(register_custom_op name)
  list(APPEND REGSTERED_OP_NAMES ${name})
endmacro()
macro(register_custom_local_op name)
  list(APPEND REGSTERED_LOCAL_OP_NAMES ${name})
endmacro()
macro(register_custom_global_bfsz name)
  list(APPEND REGSTERED_GLOBAL_BFSZ_NAMES ${name})
endmacro()
macro(register_custom_local_bfsz name)
  list(APPEND REGSTERED_LOCAL_BFSZ_NAMES ${name})
endmacro()
# Our addition, not the vendor's (its tools ignore it): op `op`'s gradient
# is the registered op `grad_op` (docs/gradients.md). Options:
#   SEPARATE                 grad_op runs once per differentiable input and
#                            gives that input's partial (its parameters end
#                            with input_grad_index); default: all at once
#   NON_DIFFERENTIABLE i...  forward inputs without a partial
#   NO_FORWARD_INPUTS        grad_op does not receive the forward inputs
#   NO_FORWARD_OUTPUTS       grad_op does not receive the forward outputs
# grad_op's inputs, in this order: the gradients of op's outputs, then op's
# inputs, then op's outputs (the last two unless left out above).
macro(register_custom_grad op grad_op)
  string(REPLACE ";" "," _tpu_grad_options "${ARGN}")
  list(APPEND TPU_CUSTOM_GRAD_DECLARATIONS "${op}|${grad_op}|${_tpu_grad_options}")
endmacro()
# PPL ops: api_<op>_global (and _local) are written in the project's
# PplBackend/src/ over kernels in .pl files, which TpuPpl.cmake builds with
# the C++ compiler (docs/ppl.md); from then on a PPL op is an op like any
# other. The list variables keep the vendor's names.
macro(register_custom_ppl_op name)
  list(APPEND REGSTERED_PPL_OP_NAMES ${name})
endmacro()
macro(register_custom_ppl_local_op name)
  list(APPEND REGSTERED_PPL_LOCAL_OP_NAMES ${name})
endmacro()

# ---- reading the registry ---------------------------------------------------
#
# The registry is CMake code (vendor registries may append to the lists
# directly), so it runs through include(). Its text is read first, line by
# line, so that a mistake is reported at its line of the registry
# ("register_ops.cmake:12: error: ..."), where the user has to look, rather
# than in this file or in a generated source; each registration's line is
# kept for the messages that come later (a function no source defines).

set(_TPU_CUSTOM_REGISTRY_MACROS register_custom_op register_custom_local_op register_custom_global_bfsz
    register_custom_local_bfsz register_custom_ppl_op register_custom_ppl_local_op register_custom_grad)
set(_TPU_CUSTOM_GRAD_OPTIONS SEPARATE NON_DIFFERENTIABLE NO_FORWARD_INPUTS NO_FORWARD_OUTPUTS)

# The lines of `path`, empty ones included (file(STRINGS) drops them, and
# every line counts). What CMake lists treat specially is neutralised: only
# command names and simple arguments are read from the lines.
function(_tpu_custom_file_lines out path)
  file(READ "${path}" text)
  string(REPLACE "\\" "/" text "${text}")
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "[" "<" text "${text}")
  string(REPLACE "]" ">" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

# The Levenshtein distance of two short strings (a registry macro's name
# and a misspelling of it).
function(_tpu_custom_edit_distance out a b)
  string(LENGTH "${a}" a_length)
  string(LENGTH "${b}" b_length)
  set(previous "")
  foreach(j RANGE ${b_length})
    list(APPEND previous ${j})
  endforeach()
  foreach(i RANGE 1 ${a_length})
    math(EXPR a_index "${i} - 1")
    string(SUBSTRING "${a}" ${a_index} 1 a_char)
    set(row ${i})
    foreach(j RANGE 1 ${b_length})
      math(EXPR b_index "${j} - 1")
      string(SUBSTRING "${b}" ${b_index} 1 b_char)
      list(GET previous ${b_index} diagonal)
      list(GET previous ${j} above)
      list(GET row ${b_index} left)
      if(NOT a_char STREQUAL b_char)
        math(EXPR diagonal "${diagonal} + 1")
      endif()
      math(EXPR above "${above} + 1")
      math(EXPR left "${left} + 1")
      set(best ${diagonal})
      foreach(candidate ${above} ${left})
        if(candidate LESS best)
          set(best ${candidate})
        endif()
      endforeach()
      list(APPEND row ${best})
    endforeach()
    set(previous "${row}")
  endforeach()
  list(GET previous ${b_length} distance)
  set(${out} ${distance} PARENT_SCOPE)
endfunction()

# " (did you mean register_custom_op?)" for a command two edits or fewer
# from a registry macro, else "".
function(_tpu_custom_suggest out command)
  set(hint "")
  set(best 3)
  foreach(macro IN LISTS _TPU_CUSTOM_REGISTRY_MACROS)
    _tpu_custom_edit_distance(distance "${command}" "${macro}")
    if(distance LESS best)
      set(best ${distance})
      set(hint " (did you mean ${macro}?)")
    endif()
  endforeach()
  set(${out} "${hint}" PARENT_SCOPE)
endfunction()

# What is wrong with `name` as the op of `macro`, or "". Op names become C
# identifiers and model-file records of at most 20 bytes.
function(_tpu_custom_name_problem out macro name)
  string(LENGTH "${name}" length)
  set(problem "")
  if(name STREQUAL "")
    set(problem "${macro}() names no op")
  elseif(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    set(problem "${macro}(${name}): op name '${name}' is not a C identifier")
  elseif(length GREATER 20)
    set(problem "${macro}(${name}): op name '${name}' is ${length} characters, but at most 20 fit a model record")
  endif()
  set(${out} "${problem}" PARENT_SCOPE)
endfunction()

# What is wrong with the words of register_custom_grad(<arguments>), or "":
# two op names, then options (_TPU_CUSTOM_GRAD_OPTIONS), NON_DIFFERENTIABLE
# followed by one or more input indices.
function(_tpu_custom_grad_call_problem out arguments)
  set(call "register_custom_grad(${arguments})")
  string(REGEX REPLACE "[ \t]+" ";" words "${arguments}")
  list(LENGTH words count)
  set(problem "")
  if(count LESS 2)
    set(problem "${call}: expected the op and its gradient op, as register_custom_grad(myop myop_grad)")
  else()
    list(GET words 0 op)
    list(GET words 1 grad_op)
    _tpu_custom_name_problem(problem register_custom_grad "${op}")
    if(NOT problem)
      _tpu_custom_name_problem(problem register_custom_grad "${grad_op}")
    endif()
    if(NOT problem AND op STREQUAL grad_op)
      set(problem "${call}: op '${op}' cannot be its own gradient op")
    endif()
    set(options "")
    if(count GREATER 2)
      list(SUBLIST words 2 -1 options)
    endif()
    set(after_nd FALSE)
    foreach(word IN LISTS options)
      if(problem)
        break()
      elseif(word IN_LIST _TPU_CUSTOM_GRAD_OPTIONS)
        set(after_nd FALSE)
        if(word STREQUAL "NON_DIFFERENTIABLE")
          set(after_nd TRUE)
        endif()
      elseif(after_nd AND word MATCHES "^[0-9]+$")
      elseif(after_nd)
        set(problem "${call}: NON_DIFFERENTIABLE takes input indices (0, 1, ...), not '${word}'")
      else()
        string(REPLACE ";" ", " known "${_TPU_CUSTOM_GRAD_OPTIONS}")
        set(problem "${call}: unknown option '${word}' (options: ${known})")
      endif()
    endforeach()
  endif()
  set(${out} "${problem}" PARENT_SCOPE)
endfunction()

# What is wrong with one command call of the registry, or "". `closed`:
# the call ends on its line, so `arguments` holds all of them.
function(_tpu_custom_call_problem out command arguments closed)
  set(problem "")
  if(NOT COMMAND "${command}")
    _tpu_custom_suggest(hint "${command}")
    string(REPLACE ";" ", " macros "${_TPU_CUSTOM_REGISTRY_MACROS}")
    set(problem "unknown command ${command}(${arguments})${hint}: ops are registered with ${macros}")
  elseif(command STREQUAL "register_custom_grad" AND closed)
    _tpu_custom_grad_call_problem(problem "${arguments}")
  elseif(command IN_LIST _TPU_CUSTOM_REGISTRY_MACROS AND closed)
    _tpu_custom_name_problem(problem "${command}" "${arguments}")
  endif()
  set(${out} "${problem}" PARENT_SCOPE)
endfunction()

# Prints each error ("<registry>:<line>: error: ...", first, where a user
# and an editor look) and stops the configuration. (Errors are list
# elements: their texts hold no semicolon.)
function(_tpu_custom_registry_errors registry)
  if(NOT ARGN)
    return()
  endif()
  foreach(error IN LISTS ARGN)
    message(NOTICE "${error}")
  endforeach()
  list(LENGTH ARGN count)
  message(FATAL_ERROR "the op registry ${registry} has ${count} error(s), listed above with their lines")
endfunction()

# Reads the registry's text: stops at the first errors found, and sets
# TPU_CUSTOM_REGISTRY_LINES to "<macro>(<op>)=<line>" per registration.
function(_tpu_custom_scan_registry registry)
  _tpu_custom_file_lines(lines "${registry}")
  set(number 0)
  set(errors "")
  set(found "")
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    string(REGEX REPLACE "#.*" "" code "${line}")
    if(NOT code MATCHES "^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\\(")
      continue()
    endif()
    set(command "${CMAKE_MATCH_1}")
    set(arguments "")
    set(closed FALSE)
    if(code MATCHES "\\(([^()]*)\\)")
      string(STRIP "${CMAKE_MATCH_1}" arguments)
      set(closed TRUE)
    endif()
    _tpu_custom_call_problem(problem "${command}" "${arguments}" ${closed})
    if(problem)
      list(APPEND errors "${registry}:${number}: error: ${problem}")
    elseif(closed AND command STREQUAL "register_custom_grad")
      # Found again by its first two words, the op and its gradient op.
      string(REGEX REPLACE "^([^ \t]+)[ \t]+([^ \t]+).*$" "\\1 \\2" ops "${arguments}")
      list(APPEND found "${command}(${ops})=${number}")
    elseif(closed AND command IN_LIST _TPU_CUSTOM_REGISTRY_MACROS)
      list(APPEND found "${command}(${arguments})=${number}")
    endif()
  endforeach()
  _tpu_custom_registry_errors("${registry}" ${errors})
  set(TPU_CUSTOM_REGISTRY_LINES "${found}" PARENT_SCOPE)
endfunction()

# "<registry>:<line>" of the registration `macro(op)`, or the registry
# alone when the call was not found on one line (an op appended to a list
# directly, a call spread over lines).
function(_tpu_custom_registration_site out registry macro op)
  set(site "${registry}")
  foreach(entry IN LISTS TPU_CUSTOM_REGISTRY_LINES)
    string(FIND "${entry}" "${macro}(${op})=" at)
    if(at EQUAL 0)
      string(REGEX REPLACE "^.*=" "" line "${entry}")
      set(site "${registry}:${line}")
      break()
    endif()
  endforeach()
  set(${out} "${site}" PARENT_SCOPE)
endfunction()

# Names that reached the lists without a registration on one line (appended
# directly, or a call spread over lines) are checked here.
function(_tpu_custom_check_names registry macro)
  set(errors "")
  foreach(name IN LISTS ARGN)
    _tpu_custom_name_problem(problem "${macro}" "${name}")
    if(problem)
      _tpu_custom_registration_site(site "${registry}" "${macro}" "${name}")
      list(APPEND errors "${site}: error: ${problem}")
    endif()
  endforeach()
  _tpu_custom_registry_errors("${registry}" ${errors})
endfunction()

# A registration under a secondary list must name an op of the main list:
# otherwise the wrappers would reference functions nobody writes.
function(_tpu_custom_check_subset registry macro_name)
  set(errors "")
  foreach(name IN LISTS ARGN)
    if(name IN_LIST REGSTERED_OP_NAMES)
      continue()
    endif()
    _tpu_custom_registration_site(site "${registry}" "${macro_name}" "${name}")
    list(APPEND errors "${site}: error: ${macro_name}(${name}) but no register_custom_op(${name})")
  endforeach()
  _tpu_custom_registry_errors("${registry}" ${errors})
endfunction()

function(_tpu_custom_read_registry registry)
  _tpu_custom_scan_registry("${registry}")
  set(TPU_CUSTOM_REGISTRY_LINES "${TPU_CUSTOM_REGISTRY_LINES}" PARENT_SCOPE)
  set(REGSTERED_OP_NAMES "")
  set(REGSTERED_LOCAL_OP_NAMES "")
  set(REGSTERED_GLOBAL_BFSZ_NAMES "")
  set(REGSTERED_LOCAL_BFSZ_NAMES "")
  set(REGSTERED_PPL_OP_NAMES "")
  set(REGSTERED_PPL_LOCAL_OP_NAMES "")
  set(TPU_CUSTOM_GRAD_DECLARATIONS "")
  include(${registry})
  # A PPL op is dispatched like a C op; TPU_CUSTOM_PPL_OP_NAMES says which
  # ops need the project's PPL sources.
  list(APPEND REGSTERED_OP_NAMES ${REGSTERED_PPL_OP_NAMES})
  list(APPEND REGSTERED_LOCAL_OP_NAMES ${REGSTERED_PPL_LOCAL_OP_NAMES})
  set(TPU_CUSTOM_PPL_OP_NAMES ${REGSTERED_PPL_OP_NAMES} ${REGSTERED_PPL_LOCAL_OP_NAMES})
  list(REMOVE_DUPLICATES TPU_CUSTOM_PPL_OP_NAMES)
  set(TPU_CUSTOM_PPL_OP_NAMES "${TPU_CUSTOM_PPL_OP_NAMES}" PARENT_SCOPE)
  _tpu_custom_check_names(${registry} register_custom_ppl_op ${REGSTERED_PPL_OP_NAMES})
  _tpu_custom_check_names(${registry} register_custom_ppl_local_op ${REGSTERED_PPL_LOCAL_OP_NAMES})
  foreach(pair register_custom_op=REGSTERED_OP_NAMES register_custom_local_op=REGSTERED_LOCAL_OP_NAMES
               register_custom_global_bfsz=REGSTERED_GLOBAL_BFSZ_NAMES
               register_custom_local_bfsz=REGSTERED_LOCAL_BFSZ_NAMES)
    string(REPLACE "=" ";" pair "${pair}")
    list(GET pair 0 macro)
    list(GET pair 1 list_name)
    list(REMOVE_DUPLICATES ${list_name})
    _tpu_custom_check_names(${registry} ${macro} ${${list_name}})
    set(${list_name} "${${list_name}}" PARENT_SCOPE)
  endforeach()
  _tpu_custom_check_subset(${registry} register_custom_local_op ${REGSTERED_LOCAL_OP_NAMES})
  _tpu_custom_check_subset(${registry} register_custom_global_bfsz ${REGSTERED_GLOBAL_BFSZ_NAMES})
  _tpu_custom_check_subset(${registry} register_custom_local_bfsz ${REGSTERED_LOCAL_BFSZ_NAMES})
  _tpu_custom_gradient_specs(specs ${registry} ${TPU_CUSTOM_GRAD_DECLARATIONS})
  set(TPU_CUSTOM_GRAD_SPECS "${specs}" PARENT_SCOPE)
endfunction()

# The gradient declarations (register_custom_grad) as the text the runtime
# reads (tpu_custom_abi.h), one per op:
#   "op=<op> grad=<grad_op> mode=together|separate receives=output_grads[,inputs][,outputs]
#    non_differentiable=<i,j,...>"
# Both ops must be registered, and an op has one gradient.
function(_tpu_custom_gradient_specs out registry)
  set(errors "")
  set(specs "")
  set(seen "")
  foreach(declaration IN LISTS ARGN)
    string(REPLACE "|" ";" fields "${declaration}")
    list(GET fields 0 op)
    list(GET fields 1 grad_op)
    list(LENGTH fields field_count)
    set(options "")
    if(field_count GREATER 2)
      list(GET fields 2 options)
      string(REPLACE "," ";" options "${options}")
    endif()
    _tpu_custom_registration_site(site "${registry}" register_custom_grad "${op} ${grad_op}")
    foreach(name IN ITEMS ${op} ${grad_op})
      if(NOT name IN_LIST REGSTERED_OP_NAMES)
        list(APPEND errors "${site}: error: register_custom_grad(${op} ${grad_op}) but no register_custom_op(${name})")
      endif()
    endforeach()
    if(op IN_LIST seen)
      list(APPEND errors "${site}: error: register_custom_grad(${op} ${grad_op}): op '${op}' already has a gradient")
    endif()
    list(APPEND seen ${op})
    set(mode together)
    set(receives output_grads,inputs,outputs)
    set(non_differentiable "")
    set(nd_words FALSE)
    foreach(word IN LISTS options)
      if(word STREQUAL "SEPARATE")
        set(mode separate)
      elseif(word STREQUAL "NO_FORWARD_INPUTS")
        string(REPLACE ",inputs" "" receives "${receives}")
      elseif(word STREQUAL "NO_FORWARD_OUTPUTS")
        string(REPLACE ",outputs" "" receives "${receives}")
      elseif(word STREQUAL "NON_DIFFERENTIABLE")
        set(nd_words TRUE)
      elseif(nd_words)
        list(APPEND non_differentiable ${word})
      endif()
    endforeach()
    string(REPLACE ";" "," non_differentiable "${non_differentiable}")
    list(APPEND specs "op=${op} grad=${grad_op} mode=${mode} receives=${receives} non_differentiable=${non_differentiable}")
  endforeach()
  _tpu_custom_registry_errors("${registry}" ${errors})
  set(${out} "${specs}" PARENT_SCOPE)
endfunction()

# Writes `content` to `path` only when it differs, so unchanged generated
# files keep their time stamps and nothing recompiles.
function(_tpu_custom_write path content)
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${content}")
endfunction()

# "absadd, ceiladd" and {"absadd", "ceiladd", NULL} from a list.
function(_tpu_custom_name_lists out_text out_array)
  set(text "")
  set(array "")
  foreach(name IN LISTS ARGN)
    if(text)
      string(APPEND text ", ")
    endif()
    string(APPEND text "${name}")
    string(APPEND array "\"${name}\", ")
  endforeach()
  set(${out_text} "${text}" PARENT_SCOPE)
  set(${out_array} "{${array}NULL}" PARENT_SCOPE)
endfunction()

set(_TPU_CUSTOM_BANNER "/* Generated by TpuCustomLayer.cmake from the op registry. Do not edit:\n * edit the registry and rebuild. */\n")

function(_tpu_custom_generate_interface path)
  set(c "${_TPU_CUSTOM_BANNER}#pragma once\n\n#include <stdint.h>\n\n#include \"api_common.h\"\n")
  string(APPEND c "#if defined(__has_include)\n#if __has_include(\"tpu_impl_custom_ops.h\")\n")
  string(APPEND c "#include \"tpu_impl_custom_ops.h\"\n#endif\n#endif\n\n")
  string(APPEND c "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n")
  foreach(op IN LISTS REGSTERED_GLOBAL_BFSZ_NAMES)
    string(APPEND c "int64_t api_${op}_global_bfsz(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param);\n")
  endforeach()
  foreach(op IN LISTS REGSTERED_OP_NAMES)
    string(APPEND c "void api_${op}_global(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param);\n")
  endforeach()
  foreach(op IN LISTS REGSTERED_LOCAL_BFSZ_NAMES)
    string(APPEND c "int api_${op}_local_bfsz(const local_sec_info_t *sec_info, const local_tensor_spec_t *input, local_tensor_spec_t *output, const void *param);\n")
  endforeach()
  foreach(op IN LISTS REGSTERED_LOCAL_OP_NAMES)
    string(APPEND c "void api_${op}_local(const local_sec_info_t *sec_info, const local_tensor_spec_t *input, local_tensor_spec_t *output, const void *param);\n")
  endforeach()
  foreach(op IN LISTS REGSTERED_OP_NAMES)
    string(APPEND c "void type_infer_${op}(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param);\n")
    string(APPEND c "void slice_infer_${op}(const local_sec_info_t *sec_info, const local_tensor_spec_t *input, tensor_slice_t *output, const void *param);\n")
  endforeach()
  string(APPEND c "\n#ifdef __cplusplus\n}\n#endif\n")
  _tpu_custom_write("${path}" "${c}")
endfunction()

# The registry tables both generated libraries export (tpu_custom_abi.h).
function(_tpu_custom_registry_tables out)
  _tpu_custom_name_lists(ops_text ops_array ${REGSTERED_OP_NAMES})
  _tpu_custom_name_lists(local_text local_array ${REGSTERED_LOCAL_OP_NAMES})
  _tpu_custom_name_lists(grad_text grad_array ${TPU_CUSTOM_GRAD_SPECS})
  set(c "const int tpu_custom_api_level = TPU_SDK_CUSTOM_API_LEVEL;\n")
  string(APPEND c "const char *const tpu_custom_registered_ops[] = ${ops_array};\n")
  string(APPEND c "const char *const tpu_custom_registered_local_ops[] = ${local_array};\n")
  string(APPEND c "const char *const tpu_custom_registered_gradients[] = ${grad_array};\n")
  string(APPEND c "static const char registered_global_names[] __attribute__((unused)) = \"${ops_text}\";\n")
  string(APPEND c "static const char registered_local_names[] __attribute__((unused)) = \"${local_text}\";\n")
  set(${out} "${c}" PARENT_SCOPE)
endfunction()

# The functions the registrations of a library promise, as
# "<symbol>|<required or optional>|<registration>" entries. api_<op>_global
# is required (every op needs it); the others are optional, as in the
# vendor's build, whose libraries are made without them.
function(_tpu_custom_registered_functions out mode)
  set(entries "")
  foreach(op IN LISTS REGSTERED_OP_NAMES)
    list(APPEND entries "api_${op}_global|required|register_custom_op(${op})")
  endforeach()
  foreach(op IN LISTS REGSTERED_LOCAL_OP_NAMES)
    list(APPEND entries "api_${op}_local|optional|register_custom_local_op(${op})")
  endforeach()
  if(mode STREQUAL "backend")
    foreach(op IN LISTS REGSTERED_LOCAL_BFSZ_NAMES)
      list(APPEND entries "api_${op}_local_bfsz|optional|register_custom_local_bfsz(${op})")
    endforeach()
    foreach(op IN LISTS REGSTERED_GLOBAL_BFSZ_NAMES)
      list(APPEND entries "api_${op}_global_bfsz|optional|register_custom_global_bfsz(${op})")
    endforeach()
  endif()
  set(${out} "${entries}" PARENT_SCOPE)
endfunction()

# `#pragma weak` for the registered functions, so that the library links
# whichever of them no source defines: the post-build check
# (_tpu_custom_report_missing) then names each at its registry line, and
# fails the build for a required one, instead of the linker naming a
# generated file. An optional one stays missing (calling it stops with an
# error, TPU_CUSTOM_REQUIRE). Without nm there is no such check: a required
# function stays a strong reference, which the link itself checks.
function(_tpu_custom_weak_pragmas out mode)
  _tpu_custom_registered_functions(entries ${mode})
  set(c "")
  foreach(entry IN LISTS entries)
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 0 symbol)
    list(GET fields 1 kind)
    if(kind STREQUAL "optional" OR CMAKE_NM)
      string(APPEND c "#pragma weak ${symbol}\n")
    endif()
  endforeach()
  set(${out} "${c}" PARENT_SCOPE)
endfunction()

function(_tpu_custom_generate_backend path)
  set(c "${_TPU_CUSTOM_BANNER}#include <stddef.h>\n\n#include \"backend_helper.h\"\n#include \"interface_custom_ops.h\"\n#include \"tpu_custom_abi.h\"\n\n")
  _tpu_custom_registry_tables(tables)
  _tpu_custom_weak_pragmas(weak backend)
  string(APPEND c "${tables}\n${weak}\n")
  foreach(op IN LISTS REGSTERED_OP_NAMES)
    string(APPEND c "IMPL_CUSTOM_API_GLB(${op})\n")
  endforeach()
  foreach(op IN LISTS REGSTERED_GLOBAL_BFSZ_NAMES)
    string(APPEND c "IMPL_CUSTOM_API_GLB_BFSZ(${op})\n")
  endforeach()
  foreach(op IN LISTS REGSTERED_LOCAL_OP_NAMES)
    string(APPEND c "IMPL_CUSTOM_API_LOC(${op})\n")
  endforeach()
  foreach(op IN LISTS REGSTERED_LOCAL_BFSZ_NAMES)
    string(APPEND c "IMPL_CUSTOM_API_LOC_BFSZ(${op})\n")
  endforeach()
  _tpu_custom_write("${path}" "${c}")
endfunction()

# One `else if (strcmp(name, "<op>") == 0) <call>;` per op. Chains start with
# `if (0) {}` so an empty list still compiles, and end with an error that
# lists the registered ops instead of silently doing nothing.
function(_tpu_custom_dispatch out entry names_var call_template)
  set(c "  if (name == NULL) return tpu_custom_unknown_op(\"${entry}\", name, ${names_var});\n  if (0) {\n  }")
  foreach(op IN LISTS ARGN)
    string(REPLACE "<op>" "${op}" call "${call_template}")
    string(APPEND c " else if (strcmp(name, \"${op}\") == 0) {\n    ${call};\n  }")
  endforeach()
  string(APPEND c " else {\n    return tpu_custom_unknown_op(\"${entry}\", name, ${names_var});\n  }\n  return 0;\n")
  set(${out} "${c}" PARENT_SCOPE)
endfunction()

function(_tpu_custom_generate_entry path)
  set(c "${_TPU_CUSTOM_BANNER}#include <stddef.h>\n#include <string.h>\n\n#include \"interface_custom_ops.h\"\n#include \"tpu_custom_abi.h\"\n\n")
  _tpu_custom_registry_tables(tables)
  _tpu_custom_weak_pragmas(weak cmodel)
  string(APPEND c "${tables}")
  string(APPEND c "const char tpu_custom_firmware_chip[] = TPU_CUSTOM_FIRMWARE_CHIP;\n\n${weak}\n")

  # Defaults for the dynamic inference hooks an op may leave out. The type
  # default copies input 0's dtype and shape (all of its dims) to output 0.
  string(APPEND c "static void default_type_infer(const global_tensor_spec_t *input, global_tensor_spec_t *output) {\n")
  string(APPEND c "  output->dtype = input->dtype;\n  output->dims = input->dims;\n")
  string(APPEND c "  memcpy(output->shape, input->shape, sizeof(output->shape));\n  output->elem_num = input->elem_num;\n}\n\n")
  string(APPEND c "static void default_slice_infer(const local_sec_info_t *sec_info, tensor_slice_t *output) {\n")
  string(APPEND c "  output->h_idx = sec_info->h_idx;\n  output->h_slice = sec_info->h_slice;\n}\n\n")
  foreach(op IN LISTS REGSTERED_OP_NAMES)
    string(APPEND c "__attribute__((weak)) void type_infer_${op}(const global_tensor_spec_t *input, global_tensor_spec_t *output, const void *param) {\n  (void)param;\n  default_type_infer(input, output);\n}\n")
  endforeach()
  foreach(op IN LISTS REGSTERED_LOCAL_OP_NAMES)
    string(APPEND c "__attribute__((weak)) void slice_infer_${op}(const local_sec_info_t *sec_info, const local_tensor_spec_t *input, tensor_slice_t *output, const void *param) {\n  (void)input;\n  (void)param;\n  default_slice_infer(sec_info, output);\n}\n")
  endforeach()

  set(unused "  (void)param_size;\n  (void)in_num;\n  (void)out_num;\n")
  _tpu_custom_dispatch(body tpu_global_calculate_entry registered_global_names
                       "api_<op>_global(in_tensors, out_tensors, param)" ${REGSTERED_OP_NAMES})
  string(APPEND c "\nint tpu_global_calculate_entry(const char *name, const void *param, const int param_size,\n"
                  "                               const tensor_spec_t *in_tensors, const int in_num,\n"
                  "                               tensor_spec_t *out_tensors, const int out_num) {\n${unused}${body}}\n")
  _tpu_custom_dispatch(body tpu_local_calculate_entry registered_local_names
                       "TPU_CUSTOM_REQUIRE(api_<op>_local, \"register_custom_local_op(<op>)\");\n    api_<op>_local(sec_info, in_tensors, out_tensors, param)"
                       ${REGSTERED_LOCAL_OP_NAMES})
  string(APPEND c "\nint tpu_local_calculate_entry(const char *name, const void *param, const int param_size,\n"
                  "                              const tensor_spec_t *in_tensors, const int in_num,\n"
                  "                              const local_sec_info_t *sec_info, tensor_spec_t *out_tensors,\n"
                  "                              const int out_num) {\n${unused}${body}}\n")
  _tpu_custom_dispatch(body tpu_shape_infer_entry registered_global_names
                       "type_infer_<op>(in_tensors, out_tensors, param)" ${REGSTERED_OP_NAMES})
  string(APPEND c "\nint tpu_shape_infer_entry(const char *name, const void *param, const int param_size,\n"
                  "                          const tensor_spec_t *in_tensors, const int in_num,\n"
                  "                          tensor_spec_t *out_tensors, const int out_num) {\n${unused}${body}}\n")
  _tpu_custom_dispatch(body tpu_slice_infer_entry registered_local_names
                       "slice_infer_<op>(sec_info, in_tensors, out_slices, param)" ${REGSTERED_LOCAL_OP_NAMES})
  string(APPEND c "\nint tpu_slice_infer_entry(const char *name, const void *param, const int param_size,\n"
                  "                          const tensor_spec_t *in_tensors, const int in_num,\n"
                  "                          const local_sec_info_t *sec_info, tensor_slice_t *out_slices,\n"
                  "                          const int out_num) {\n${unused}${body}}\n")
  _tpu_custom_write("${path}" "${c}")
endfunction()

# The warnings user code is compiled with. VENDOR (the default) is the set
# the vendor's customlayer build uses, so vendor sources build as quietly as
# they do there (their param_parser.h is full of unused static parsers);
# STRICT adds -Wextra for sources held to this SDK's own standard (its
# sample ops). Both keep -funwind-tables -fno-short-enums, as the vendor's.
set(_TPU_CUSTOM_VENDOR_WARNINGS -Wall -Wno-error=deprecated-declarations -Wno-unused-function)
set(_TPU_CUSTOM_STRICT_WARNINGS -Wall -Wextra -Wno-unused-function -Wno-unused-parameter)

function(_tpu_custom_user_flags target warnings)
  if(warnings STREQUAL "STRICT")
    target_compile_options(${target} PRIVATE ${_TPU_CUSTOM_STRICT_WARNINGS})
  else()
    target_compile_options(${target} PRIVATE ${_TPU_CUSTOM_VENDOR_WARNINGS})
  endif()
  # An undeclared function is an error, not a warning: C would pass a float
  # argument as a double and the kernel would silently compute garbage.
  # -UNDEBUG: a plugin's or kernel's assert() fires whatever the build type
  # (RelWithDebInfo and Release add -DNDEBUG), as in the vendor's build,
  # which defines no NDEBUG; vendor plugins check their inputs with assert.
  # -fno-optimize-sibling-calls: a tpu_* call (or exit()) as a function's
  # last statement would otherwise become a jump, and the error would name
  # the caller's line instead of the kernel's.
  target_compile_options(${target} PRIVATE -funwind-tables -fno-short-enums -ffunction-sections -fdata-sections
                         -fno-optimize-sibling-calls
                         $<$<COMPILE_LANGUAGE:C>:-Werror=implicit-function-declaration> -UNDEBUG)
  target_link_options(${target} PRIVATE -Wl,--no-undefined)
  set_target_properties(${target} PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
endfunction()

# Kernel code: optimised (the vendor builds without -O), and every symbol
# resolved at link time, so a registry naming a required function nobody
# wrote fails the build instead of the first dlopen (optional ones are weak
# references, see _tpu_custom_weak_pragmas).
function(_tpu_custom_kernel_library target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "CMODEL_TARGET;OUTPUT_DIRECTORY;OUTPUT_NAME;WARNINGS;IDENTITY_TARGET"
                        "SOURCES;INCLUDE_DIRS;LINK")
  add_library(${target} SHARED ${arg_SOURCES})
  target_include_directories(${target} PRIVATE ${arg_INCLUDE_DIRS})
  target_link_libraries(${target} PRIVATE ${arg_LINK} ${arg_CMODEL_TARGET} m)
  tpu_kernel_wrap_exits(${target})
  _tpu_custom_user_flags(${target} "${arg_WARNINGS}")
  add_dependencies(${target} ${arg_IDENTITY_TARGET})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${arg_OUTPUT_NAME}
                        LIBRARY_OUTPUT_DIRECTORY ${arg_OUTPUT_DIRECTORY})
endfunction()

# The build identity every library of the set carries (tpu_custom_abi.h):
# a hash of the registry, the kernel and plugin sources and the op's
# headers, computed at build time (TpuCustomLayerIdentity.cmake), so the
# plugin, backend and firmware built from the same sources agree and a
# library left from older sources does not. `out` is the generated source.
function(_tpu_custom_build_identity out target_prefix generated registry)
  cmake_parse_arguments(PARSE_ARGV 4 arg "" "" "INCLUDE_DIRS;FILES")
  set(inputs ${registry} ${arg_FILES})
  foreach(dir IN LISTS arg_INCLUDE_DIRS)
    file(GLOB_RECURSE headers CONFIGURE_DEPENDS ${dir}/*.h ${dir}/*.hpp ${dir}/*.inc)
    list(APPEND inputs ${headers})
  endforeach()
  list(REMOVE_DUPLICATES inputs)
  list(SORT inputs)
  string(REPLACE ";" "\n" listed "${inputs}")
  _tpu_custom_write(${generated}/identity_inputs.txt "${listed}\n")
  get_filename_component(base ${registry} DIRECTORY)
  set(source ${generated}/src/build_identity.c)
  add_custom_command(OUTPUT ${source}
    COMMAND ${CMAKE_COMMAND} -DINPUTS=${generated}/identity_inputs.txt -DBASE=${base} -DOUTPUT=${source}
            -P ${_TPU_CUSTOM_LAYER_DIR}/TpuCustomLayerIdentity.cmake
    DEPENDS ${inputs} ${generated}/identity_inputs.txt ${_TPU_CUSTOM_LAYER_DIR}/TpuCustomLayerIdentity.cmake
    COMMENT "Computing the build identity of the custom ops"
    VERBATIM)
  # One target runs the command; the libraries depend on it, so parallel
  # make never runs it twice at once.
  add_custom_target(${target_prefix}custom_build_identity DEPENDS ${source})
  set(${out} ${source} PARENT_SCOPE)
endfunction()

# After linking `target`: names each registered function no source defined
# at its registration's line, an error for a required one, a warning for an
# optional one (TpuCustomLayerMissing.cmake). The functions, with their
# registry lines, go to a file the check reads.
function(_tpu_custom_report_missing target mode registry generated)
  _tpu_custom_registered_functions(entries ${mode})
  if(NOT entries)
    return()
  endif()
  if(NOT CMAKE_NM)
    message(STATUS "custom layer: no nm found: registered functions that no source defines are not reported")
    return()
  endif()
  set(listing "")
  foreach(entry IN LISTS entries)
    string(REGEX MATCH "\\|([a-z_]+)\\(([^)]*)\\)$" registration "${entry}")
    _tpu_custom_registration_site(site "${registry}" "${CMAKE_MATCH_1}" "${CMAKE_MATCH_2}")
    string(APPEND listing "${entry}|${site}\n")
  endforeach()
  set(functions_file ${generated}/registered_functions_${target}.txt)
  _tpu_custom_write(${functions_file} "${listing}")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DLIBRARY=$<TARGET_FILE:${target}> -DNM=${CMAKE_NM} -DFUNCTIONS_FILE=${functions_file}
            -P ${_TPU_CUSTOM_LAYER_DIR}/TpuCustomLayerMissing.cmake
    VERBATIM)
endfunction()

# The PPL ops' kernels (docs/ppl.md): when the registry has PPL ops, the
# .pl files become one static library (TpuPpl.cmake) that the backend and
# firmware link; `out` is its target, or empty when the registry has no PPL
# op. A PPL op without .pl files is an error at its registry line.
function(_tpu_custom_ppl_part out registry cmodel warnings)
  cmake_parse_arguments(PARSE_ARGV 4 arg "" "" "KERNELS")
  set(${out} "" PARENT_SCOPE)
  if(NOT TPU_CUSTOM_PPL_OP_NAMES)
    if(arg_KERNELS)
      message(STATUS "custom layer: PPL kernels not built (no register_custom_ppl_op in ${registry})")
    endif()
    return()
  endif()
  if(NOT arg_KERNELS)
    set(errors "")
    foreach(name IN LISTS TPU_CUSTOM_PPL_OP_NAMES)
      _tpu_custom_registration_site(site "${registry}" register_custom_ppl_op "${name}")
      if(site STREQUAL registry)
        _tpu_custom_registration_site(site "${registry}" register_custom_ppl_local_op "${name}")
      endif()
      list(APPEND errors
           "${site}: error: PPL op '${name}' is registered, but the project has no PPL kernels (PplBackend/src/*.pl)")
    endforeach()
    _tpu_custom_registry_errors("${registry}" ${errors})
  endif()
  # One library per set of .pl files and emulator target: sets of ops that
  # share their PPL kernels (the SDK's test fixtures) compile them once.
  string(MD5 key "${arg_KERNELS}|${cmodel}|${warnings}")
  string(SUBSTRING ${key} 0 10 key)
  set(library custom_ppl_kernels_${key})
  if(NOT TARGET ${library})
    tpu_ppl_library(${library} ${arg_KERNELS} CMODEL_TARGET ${cmodel} WARNINGS NONE)
    if(warnings STREQUAL "STRICT")
      target_compile_options(${library} PRIVATE ${_TPU_CUSTOM_STRICT_WARNINGS})
    else()
      target_compile_options(${library} PRIVATE ${_TPU_CUSTOM_VENDOR_WARNINGS})
    endif()
    target_compile_options(${library} PRIVATE -funwind-tables -UNDEBUG)
  endif()
  list(LENGTH arg_KERNELS count)
  string(REPLACE ";" ", " names "${TPU_CUSTOM_PPL_OP_NAMES}")
  message(STATUS "custom layer: PPL op(s) ${names}, kernels from ${count} .pl file(s)")
  set(${out} ${library} PARENT_SCOPE)
endfunction()

function(tpu_custom_layer)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "REGISTRY;CMODEL_TARGET;OUTPUT_DIRECTORY;TARGET_PREFIX;WARNINGS"
                        "KERNEL_SOURCES;PLUGIN_SOURCES;INCLUDE_DIRS;MODES;ARCHS;PPL_KERNELS;PPL_HOST_SOURCES;PPL_INCLUDE_DIRS")
  if(NOT arg_REGISTRY)
    message(FATAL_ERROR "tpu_custom_layer: REGISTRY <register_ops.cmake> is required")
  endif()
  if(NOT EXISTS "${arg_REGISTRY}")
    message(FATAL_ERROR "tpu_custom_layer: registry ${arg_REGISTRY} does not exist")
  endif()
  if(NOT arg_MODES)
    set(arg_MODES plugin backend cmodel)
  endif()
  if(NOT arg_WARNINGS)
    set(arg_WARNINGS VENDOR)
  elseif(NOT arg_WARNINGS MATCHES "^(VENDOR|STRICT)$")
    message(FATAL_ERROR "tpu_custom_layer: WARNINGS '${arg_WARNINGS}': expected VENDOR or STRICT")
  endif()
  if(NOT arg_ARCHS)
    set(arg_ARCHS ${TPU_CUSTOM_LAYER_ARCHS})
  endif()
  if(NOT arg_CMODEL_TARGET)
    set(arg_CMODEL_TARGET TpuSdk::cmodel)
  endif()
  if(NOT arg_OUTPUT_DIRECTORY)
    set(arg_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/lib)
  endif()
  foreach(mode IN LISTS arg_MODES)
    if(NOT mode MATCHES "^(plugin|backend|cmodel)$")
      message(FATAL_ERROR "tpu_custom_layer: unknown mode '${mode}' (plugin, backend or cmodel)")
    endif()
  endforeach()
  foreach(arch IN LISTS arg_ARCHS)
    if(NOT arch IN_LIST TPU_CUSTOM_LAYER_ARCHS)
      message(FATAL_ERROR "tpu_custom_layer: unknown chip '${arch}' (bm1684x or bm1688)")
    endif()
  endforeach()

  get_filename_component(registry "${arg_REGISTRY}" ABSOLUTE)
  set(generated ${CMAKE_CURRENT_BINARY_DIR}/${arg_TARGET_PREFIX}custom_generated)
  _tpu_custom_build_identity(identity_source "${arg_TARGET_PREFIX}" ${generated} ${registry}
                             INCLUDE_DIRS ${arg_INCLUDE_DIRS} ${arg_PPL_INCLUDE_DIRS}
                             FILES ${arg_KERNEL_SOURCES} ${arg_PLUGIN_SOURCES} ${arg_PPL_KERNELS} ${arg_PPL_HOST_SOURCES})

  if("plugin" IN_LIST arg_MODES)
    set(plugin ${arg_TARGET_PREFIX}plugin_custom)
    add_library(${plugin} SHARED ${arg_PLUGIN_SOURCES} ${identity_source})
    target_include_directories(${plugin} PRIVATE ${arg_INCLUDE_DIRS})
    # Hooks use only the SDK's headers; the emulator library is linked for
    # the wrappers of exit(), abort() and assert() (TpuKernelExits.cmake),
    # which turn them into a failed hook call instead of a dead process.
    target_link_libraries(${plugin} PRIVATE ${arg_CMODEL_TARGET} m)
    tpu_kernel_wrap_exits(${plugin})
    _tpu_custom_user_flags(${plugin} "${arg_WARNINGS}")
    add_dependencies(${plugin} ${arg_TARGET_PREFIX}custom_build_identity)
    set_target_properties(${plugin} PROPERTIES OUTPUT_NAME plugin_custom LIBRARY_OUTPUT_DIRECTORY ${arg_OUTPUT_DIRECTORY})
  endif()
  if(NOT ("backend" IN_LIST arg_MODES OR "cmodel" IN_LIST arg_MODES))
    return()
  endif()

  _tpu_custom_read_registry(${registry})
  _tpu_custom_generate_interface(${generated}/include/interface_custom_ops.h)
  set(include_dirs ${generated}/include ${arg_INCLUDE_DIRS})
  _tpu_custom_ppl_part(ppl_link "${registry}" ${arg_CMODEL_TARGET} ${arg_WARNINGS}
                       KERNELS ${arg_PPL_KERNELS})
  if(ppl_link)
    list(APPEND arg_KERNEL_SOURCES ${arg_PPL_HOST_SOURCES})
    list(APPEND include_dirs ${arg_PPL_INCLUDE_DIRS})
  endif()

  if("backend" IN_LIST arg_MODES)
    _tpu_custom_generate_backend(${generated}/src/backend_custom_api.c)
    _tpu_custom_kernel_library(${arg_TARGET_PREFIX}backend_custom
      SOURCES ${arg_KERNEL_SOURCES} ${generated}/src/backend_custom_api.c ${identity_source}
      INCLUDE_DIRS ${include_dirs} CMODEL_TARGET ${arg_CMODEL_TARGET} WARNINGS "${arg_WARNINGS}"
      IDENTITY_TARGET ${arg_TARGET_PREFIX}custom_build_identity LINK ${ppl_link}
      OUTPUT_DIRECTORY ${arg_OUTPUT_DIRECTORY} OUTPUT_NAME backend_custom)
    _tpu_custom_report_missing(${arg_TARGET_PREFIX}backend_custom backend ${registry} ${generated})
  endif()
  if("cmodel" IN_LIST arg_MODES)
    _tpu_custom_generate_entry(${generated}/src/entry.c)
    foreach(arch IN LISTS arg_ARCHS)
      _tpu_custom_kernel_library(${arg_TARGET_PREFIX}cmodel_custom_${arch}
        SOURCES ${arg_KERNEL_SOURCES} ${generated}/src/entry.c ${identity_source}
        INCLUDE_DIRS ${include_dirs} CMODEL_TARGET ${arg_CMODEL_TARGET} WARNINGS "${arg_WARNINGS}"
        IDENTITY_TARGET ${arg_TARGET_PREFIX}custom_build_identity LINK ${ppl_link}
        OUTPUT_DIRECTORY ${arg_OUTPUT_DIRECTORY} OUTPUT_NAME cmodel_custom_${arch})
      target_compile_definitions(${arg_TARGET_PREFIX}cmodel_custom_${arch} PRIVATE TPU_CUSTOM_FIRMWARE_CHIP="${arch}")
      _tpu_custom_report_missing(${arg_TARGET_PREFIX}cmodel_custom_${arch} cmodel ${registry} ${generated})
    endforeach()
  endif()
endfunction()
