# The ops of this project, registered as a vendor customlayer directory does.
register_custom_op(addrow)
register_custom_op(scaleclip)

register_custom_local_op(addrow)

register_custom_local_bfsz(addrow)
# Registered, but no source defines api_scaleclip_local_bfsz: the libraries
# build anyway, with a warning naming it.
register_custom_local_bfsz(scaleclip)
