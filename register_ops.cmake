# register_ops.cmake: the custom ops this project builds.
#
#   register_custom_op(op)          api_<op>_global exists (every op)
#   register_custom_local_op(op)    api_<op>_local exists (op can run inside a layer group)
#   register_custom_global_bfsz(op) api_<op>_global_bfsz asks for a global scratch buffer
#   register_custom_local_bfsz(op)  api_<op>_local_bfsz asks for a local scratch buffer
#
# After editing, rebuild with rebuild_custom_lib_cmodel (envsetup.sh).

register_custom_op(absadd)
register_custom_op(ceiladd)
register_custom_op(swapchannel)
register_custom_op(crop)
register_custom_op(linear)
register_custom_op(scaleinplace)

register_custom_local_op(absadd)
register_custom_local_op(ceiladd)
register_custom_local_op(scaleinplace)

register_custom_local_bfsz(absadd)
register_custom_local_bfsz(ceiladd)
register_custom_local_bfsz(scaleinplace)
