# The "stray" fixture set: a local op that processes the whole tensor
# instead of its slice, writing past its output slice.
register_custom_op(fx_stray)
register_custom_local_op(fx_stray)
