# TpuCustomLayerMissing.cmake: run after linking libbackend_custom.so or a
# libcmodel_custom_<arch>.so (cmake -P). Names every registered function
# that no source of the op defines, at its line of the registry (the
# generated sources reference them weakly, so the library links either way):
#   - a required one (api_<op>_global, which every op needs) is an error:
#     the library is removed and the build fails;
#   - an optional one (local layer, scratch sizes) is a warning: the library
#     is kept, and a call stops with an error at run time.
#
#   -DLIBRARY=<built library> -DNM=<nm>
#   -DFUNCTIONS_FILE=<file of "<symbol>|<required or optional>|<registration>|<registry>:<line>" lines>
get_filename_component(library_name "${LIBRARY}" NAME)
execute_process(COMMAND "${NM}" -D --undefined-only "${LIBRARY}" OUTPUT_VARIABLE symbols
                RESULT_VARIABLE status ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message("custom layer: warning: cannot list the undefined symbols of ${library_name} with ${NM}: ${errors}")
  return()
endif()
file(STRINGS "${FUNCTIONS_FILE}" entries)
set(failed FALSE)
foreach(entry IN LISTS entries)
  string(REPLACE "|" ";" fields "${entry}")
  list(GET fields 0 symbol)
  list(GET fields 1 kind)
  list(GET fields 2 registration)
  list(GET fields 3 site)
  if(NOT symbols MATCHES "(^|\n)[ \t]*w ${symbol}(\n|$)")
    continue()
  endif()
  if(kind STREQUAL "required")
    # First on its line, where a user and an editor look for it.
    message(NOTICE "${site}: error: ${registration} is registered, but no source defines ${symbol}, which every op "
                   "needs (a misspelt op name, or a source file missing from the project)")
    set(failed TRUE)
  else()
    message("${site}: warning: ${registration} is registered, but no source defines ${symbol}. "
            "${library_name} is built without it; calling it stops with an error at run time.")
  endif()
endforeach()
if(failed)
  # Not left behind to be installed or loaded: it would call a null function.
  file(REMOVE "${LIBRARY}")
  message(FATAL_ERROR "${library_name} was removed: the registry names functions no source defines (above)")
endif()
