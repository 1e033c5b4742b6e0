# TpuPpl.cmake: PPL kernel files (.pl) built as C++ over the SDK's own PPL
# headers (kernel/include/ppl, docs/ppl.md); no closed compiler involved.
#
# tpu_ppl_library(NAME FILE.pl...): a static library holding, for each
# file, the kernels and their generated entries `int k(...)`; the generated
# headers (<stem>.h) are on its public include path.
set(TPU_PPL_GENERATOR ${CMAKE_CURRENT_LIST_DIR}/ppl_interface.py)
set(TPU_PPL_INCLUDE_DIR ${CMAKE_CURRENT_LIST_DIR}/../kernel/include/ppl)

function(tpu_ppl_library name)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/ppl_${name})
  set(sources "")
  foreach(pl ${ARGN})
    get_filename_component(absolute ${pl} ABSOLUTE)
    get_filename_component(stem ${pl} NAME_WE)
    add_custom_command(OUTPUT ${out}/${stem}.h ${out}/${stem}_ppl.cpp
                       COMMAND Python3::Interpreter ${TPU_PPL_GENERATOR} ${absolute} ${out}
                       DEPENDS ${absolute} ${TPU_PPL_GENERATOR}
                       COMMENT "PPL interface of ${stem}.pl" VERBATIM)
    list(APPEND sources ${out}/${stem}_ppl.cpp ${out}/${stem}.h)
  endforeach()
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC ${out} PRIVATE ${TPU_PPL_INCLUDE_DIR})
  target_link_libraries(${name} PUBLIC cmodel)
  target_compile_options(${name} PRIVATE -Wall -Wextra)
endfunction()
