# The "extended" op set of tpu_model_test: the sample ops (the same sources,
# rebuilt into another library, as a user rebuilding the firmware would)
# plus five small ops that exercise what the sample ops do not:
include(${PROJECT_SOURCE_DIR}/register_ops.cmake)

register_custom_op(mf_scratch)          # copies through a global scratch buffer
register_custom_global_bfsz(mf_scratch)
register_custom_op(mf_forced)           # a copy whose force_dynamic_run_ hook says true
register_custom_op(mf_pick)             # two inputs; the output is a copy of input 1
register_custom_op(mf_split)            # two outputs, each a copy of the input
register_custom_op(mf_hostcopy)        # a copy through host pointers: cannot be recorded, runs dynamic only
