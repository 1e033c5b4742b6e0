# custom_layer_vendor_includes.cmake: the include directories of a vendor
# customlayer project (include/ and include/kernel/), with this SDK's
# headers taking the place of the user's copies of them.
#
# A vendor customlayer directory carries its own copies of the SDK headers
# (api_common.h, api_utils.h, backend_helper.h, kernel/tpu_kernel.h, ...).
# Putting the SDK's include directory first is not enough: a header of the
# user's include/ that says #include "api_common.h" finds the copy beside it
# before any -I directory, and the two copies then clash. So the project's
# headers are presented through a staging directory of symbolic links to
# them, leaving out every file the SDK installs under the same name at
# include/ or include/kernel/: such an include then resolves to the SDK's
# header. The user's files are neither copied nor changed; edits to them
# take effect at once (the links point at them), and a header added or
# removed reconfigures the build (CONFIGURE_DEPENDS).

# custom_layer_stage_vendor_includes(<project> <sdk include dir> <stage dir> <out var>)
# sets <out var> to the include directories to use, in order.
function(custom_layer_stage_vendor_includes project sdk_include stage out)
  file(GLOB sdk_headers RELATIVE ${sdk_include} ${sdk_include}/*.h)
  file(REMOVE_RECURSE ${stage})
  file(MAKE_DIRECTORY ${stage})
  set(dirs ${stage})
  if(NOT IS_DIRECTORY ${project}/include)
    set(${out} ${dirs} PARENT_SCOPE)
    return()
  endif()
  file(GLOB_RECURSE user_files RELATIVE ${project}/include CONFIGURE_DEPENDS ${project}/include/*)
  # The AP headers are the project's own (its op table, its entry points):
  # never replaced, though the AP build installs two of them into the SDK's
  # include directory, as the vendor's does.
  set(project_owned bmcpu.h bmcpu_macro.h customap_common.h cpu_layer.h cpu_layer_factory.h)
  set(replaced "")
  foreach(file IN LISTS user_files)
    get_filename_component(name ${file} NAME)
    get_filename_component(subdir ${file} DIRECTORY)
    if(name IN_LIST sdk_headers AND NOT name IN_LIST project_owned AND (subdir STREQUAL "" OR subdir STREQUAL "kernel"))
      list(APPEND replaced include/${file})
      continue()
    endif()
    get_filename_component(parent ${stage}/${file} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${project}/include/${file} ${stage}/${file} SYMBOLIC)
  endforeach()
  # The vendor build adds include/kernel too (include/custom_ap, for the AP
  # ops, custom_layer_project.cmake adds to the plugin and AP builds).
  if(IS_DIRECTORY ${project}/include/kernel)
    file(MAKE_DIRECTORY ${stage}/kernel)
    list(APPEND dirs ${stage}/kernel)
  endif()
  if(replaced)
    list(LENGTH replaced count)
    string(REPLACE ";" ", " replaced "${replaced}")
    message(STATUS "custom layer: ${count} header(s) of the project replaced by the SDK's own: ${replaced}")
  endif()
  set(${out} ${dirs} PARENT_SCOPE)
endfunction()
