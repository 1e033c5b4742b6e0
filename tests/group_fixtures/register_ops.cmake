# The sample ops plus two fixture ops of layer_groups_test (gf_kernels.c):
#   vsum3      out[h] = in[h] + in[h-1] + in[h+1] (rows outside the tensor are
#              0); backward_h_vsum3 declares the one-row halo on each side
#   vsum3_bad  the same kernel, but backward_h_vsum3_bad declares no halo:
#              the slice check must catch it
#   hsum3      out[w] = in[w] + in[w-1] + in[w+1] along W (columns outside
#              are 0); backward_w_hsum3 declares the one-column halo
#   hsum3_bad  the same kernel, no backward_w_ hook (the default: the same
#              columns): the slice check must catch it when W is split
#   vsum3_par  vsum3 whose local kernel opens a parallel region of its own,
#              which a double-buffered group stage cannot hold: the group
#              must fall back to running its slices one after another
include(${PROJECT_SOURCE_DIR}/register_ops.cmake)

register_custom_op(vsum3)
register_custom_local_op(vsum3)
register_custom_op(vsum3_bad)
register_custom_local_op(vsum3_bad)
register_custom_op(vsum3_par)
register_custom_local_op(vsum3_par)
register_custom_op(hsum3)
register_custom_local_op(hsum3)
register_custom_op(hsum3_bad)
register_custom_local_op(hsum3_bad)
