# register_ops.cmake: the ops of this project (the vendor macros; see the
# SDK's register_ops.cmake for what each one means).
#
# scaleshift is global only: no register_custom_local_op, so the plugin's
# local_gen_support_scaleshift is absent (global layer) and the firmware's
# local entries answer "no custom op named ..." for it.

register_custom_op(scaleshift)
