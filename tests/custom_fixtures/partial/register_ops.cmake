# The "partial" fixture set: registrations whose functions no source
# defines (the local layer and both scratch sizes). The libraries still
# build (weak references, with a build-time warning); calling one of the
# missing functions stops with an error naming it and its registration.
register_custom_op(fx_partial)
register_custom_local_op(fx_partial)
register_custom_local_bfsz(fx_partial)
register_custom_global_bfsz(fx_partial)
