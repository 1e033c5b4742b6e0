# The "good" fixture set of runtime_loader_test (see ../CMakeLists.txt).
register_custom_op(fx_copy)         # GDMA copy; local too; every plugin hook
register_custom_local_op(fx_copy)
register_custom_op(fx_plain)        # GDMA copy; no plugin hook, default inference hooks
register_custom_op(fx_scratch)      # copies through its global scratch buffer
register_custom_global_bfsz(fx_scratch)
register_custom_op(fx_local)        # local copy through its local buffer
register_custom_local_op(fx_local)
register_custom_local_bfsz(fx_local)
register_custom_op(fx_fail)         # an out-of-range GDMA
register_custom_op(fx_fault)        # divides by zero: SIGFPE in kernel code
register_custom_op(fx_cast)         # input converted to the output's dtype; params {to: SG dtype}
register_custom_op(fx_short)        # writes only the first half of its output (the rest is 0 in its reference)
register_custom_ppl_op(fx_ppl)      # a PPL op: skipped by the build, named in "unknown op" errors
