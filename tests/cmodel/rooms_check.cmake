# rooms_check.cmake: fails when a file of the emulator (cmodel/) includes a
# header of the API layer above it (kernel/).
#
#   cmake -DROOT=<source root> -P rooms_check.cmake
#   cmake -DSELF_TEST=<scratch dir> -P rooms_check.cmake
#
# The emulator is the bottom floor: the tpu-kernel API (kernel/) is built on
# it and may include its headers, never the other way round. The build
# already compiles cmodel/ with the source root alone on its include path;
# this check reads the #include lines themselves, so a way round that (a
# relative path, an include directory added later) fails too.
#
# An #include resolves as the compiler resolves it for cmodel/ sources:
# "x" next to the including file, then from the source root, and <x> from
# the source root. Resolved under kernel/, it is refused. Unresolved, it
# would have to come from another include directory, so it is refused when
# kernel/include or kernel/src has a header of that name (tpu_kernel.h is
# generated from kernel/include/tpu_kernel.h.in).
#
# SELF_TEST plants includes in a small tree under the scratch directory and
# checks that exactly the forbidden ones are reported.
cmake_minimum_required(VERSION 3.25)

# The header names of the API layer under `root`, in `out`.
function(api_header_names root out)
  set(names "")
  foreach(dir include src)
    file(GLOB_RECURSE files RELATIVE ${root}/kernel/${dir} ${root}/kernel/${dir}/*.h ${root}/kernel/${dir}/*.h.in)
    foreach(file IN LISTS files)
      string(REGEX REPLACE "\\.in$" "" file "${file}")
      list(APPEND names "${file}")
    endforeach()
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# The file `name` (as written in `including`, bracketed or not) resolves
# to under `root`, or "" when it resolves to none there.
function(resolve root including name bracketed out)
  set(bases ${root})
  if(NOT bracketed)
    get_filename_component(dir ${including} DIRECTORY)
    list(PREPEND bases ${dir})
  endif()
  foreach(base IN LISTS bases)
    if(EXISTS ${base}/${name} AND NOT IS_DIRECTORY ${base}/${name})
      get_filename_component(found ${base}/${name} ABSOLUTE)
      set(${out} ${found} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

# Whether the include `name` of `including` reaches into kernel/, in `out`.
function(reaches_api root api_names including name bracketed out)
  resolve(${root} ${including} ${name} ${bracketed} found)
  if(found)
    string(FIND "${found}/" "${root}/kernel/" at)
    if(at EQUAL 0)
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
    set(${out} FALSE PARENT_SCOPE)
    return()
  endif()
  if(name IN_LIST api_names)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# "file: #include line" for every include of cmodel/ that reaches kernel/,
# in `out`.
function(scan root out)
  get_filename_component(root ${root} ABSOLUTE)
  api_header_names(${root} api_names)
  file(GLOB_RECURSE sources ${root}/cmodel/*.h ${root}/cmodel/*.cc ${root}/cmodel/*.def)
  list(SORT sources)
  set(found "")
  foreach(source IN LISTS sources)
    file(STRINGS ${source} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"][^>\"]+[>\"]")
    foreach(line IN LISTS lines)
      string(REGEX MATCH "[<\"]([^>\"]+)[>\"]" spelled "${line}")
      set(name "${CMAKE_MATCH_1}")
      string(SUBSTRING "${spelled}" 0 1 open)
      set(bracketed FALSE)
      if(open STREQUAL "<")
        set(bracketed TRUE)
      endif()
      reaches_api(${root} "${api_names}" ${source} "${name}" ${bracketed} bad)
      if(bad)
        file(RELATIVE_PATH shown ${root} ${source})
        list(APPEND found "${shown}: ${line}")
      endif()
    endforeach()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# A tree with one include of each kind; the forbidden ones are reported.
function(self_test scratch)
  file(REMOVE_RECURSE ${scratch})
  file(WRITE ${scratch}/kernel/include/tpu_defs.h "")
  file(WRITE ${scratch}/kernel/include/tpu_kernel.h.in "")
  file(WRITE ${scratch}/kernel/src/session.h "")
  file(WRITE ${scratch}/cmodel/include/cmodel_machine_types.h "")
  file(WRITE ${scratch}/cmodel/bdc/family.h "")
  file(WRITE ${scratch}/cmodel/bdc/family.cc
       "#include \"family.h\"\n#include <vector>\n#include \"cmodel/include/cmodel_machine_types.h\"\n"
       "#include \"tpu_kernel.h\"\n#  include <tpu_defs.h>\n#include \"session.h\"\n"
       "#include \"../../kernel/include/tpu_defs.h\"\n#include <kernel/src/session.h>\n")
  scan(${scratch} found)
  set(expected
      "cmodel/bdc/family.cc: #include \"tpu_kernel.h\""
      "cmodel/bdc/family.cc: #  include <tpu_defs.h>"
      "cmodel/bdc/family.cc: #include \"session.h\""
      "cmodel/bdc/family.cc: #include \"../../kernel/include/tpu_defs.h\""
      "cmodel/bdc/family.cc: #include <kernel/src/session.h>")
  if(NOT found STREQUAL expected)
    string(REPLACE ";" "\n  " found "${found}")
    message(FATAL_ERROR "rooms check self-test: reported\n  ${found}\ninstead of the five planted includes of kernel/")
  endif()
  message(STATUS "rooms check self-test: the five planted includes of kernel/ are reported, the others not")
endfunction()

if(SELF_TEST)
  self_test(${SELF_TEST})
  return()
endif()
if(NOT ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<source root> -P rooms_check.cmake")
endif()
scan(${ROOT} found)
if(found)
  list(LENGTH found count)
  string(REPLACE ";" "\n  " found "${found}")
  message(FATAL_ERROR
          "${count} #include line(s) of the emulator (cmodel/) reach the API layer above it (kernel/):\n  ${found}\n"
          "The emulator defines what it needs itself (cmodel/include holds the machine types kernel/ takes from it).")
endif()
message(STATUS "rooms: no file under cmodel/ includes a header of kernel/")
