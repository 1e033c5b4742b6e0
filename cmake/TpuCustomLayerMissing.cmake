# TpuCustomLayerMissing.cmake: run after linking libbackend_custom.so or a
# libcmodel_custom_<arch>.so (cmake -P). Names every registered optional
# function (local layer, scratch sizes) that no source of the op defines:
# the generated sources reference them weakly, so the library links, and a
# call stops with an error at run time. Warns; never fails the build.
#
#   -DLIBRARY=<built library> -DNM=<nm> -DREGISTRY=<register_ops.cmake>
#   -DFUNCTIONS=<symbol>=<registration>,...
get_filename_component(library_name "${LIBRARY}" NAME)
execute_process(COMMAND "${NM}" -D --undefined-only "${LIBRARY}" OUTPUT_VARIABLE symbols
                RESULT_VARIABLE status ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message("custom layer: warning: cannot list the undefined symbols of ${library_name} with ${NM}: ${errors}")
  return()
endif()
string(REPLACE "," ";" pairs "${FUNCTIONS}")
foreach(pair IN LISTS pairs)
  string(REGEX REPLACE "=.*" "" symbol "${pair}")
  string(REGEX REPLACE "^[^=]*=" "" registration "${pair}")
  if(symbols MATCHES "(^|\n)[ \t]*w ${symbol}(\n|$)")
    message("${REGISTRY}: warning: ${registration} is registered, but no source defines ${symbol}. "
            "${library_name} is built without it; calling it stops with an error at run time.")
  endif()
endforeach()
