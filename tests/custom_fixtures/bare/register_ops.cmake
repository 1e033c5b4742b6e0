# The "bare" fixture set: one global op, no local op at all.
register_custom_op(fx_bare)
