# register_ops.cmake: the custom ops this project builds.
#
#   register_custom_op(op)          api_<op>_global exists (every op)
#   register_custom_local_op(op)    api_<op>_local exists (op can run inside a layer group)
#   register_custom_global_bfsz(op) api_<op>_global_bfsz asks for a global scratch buffer
#   register_custom_local_bfsz(op)  api_<op>_local_bfsz asks for a local scratch buffer
#   register_custom_ppl_op(op)      api_<op>_global is in customlayer/PplBackend/src/ over PPL kernels
#                                   (.pl files, docs/ppl.md)
#   register_custom_ppl_local_op(op) ... and api_<op>_local
#   register_custom_grad(op grad_op [SEPARATE] [NON_DIFFERENTIABLE i...] [NO_FORWARD_INPUTS] [NO_FORWARD_OUTPUTS])
#                                   grad_op is op's gradient (docs/gradients.md)
#
# After editing, rebuild with rebuild_custom_lib_cmodel (envsetup.sh).

register_custom_op(absadd)
register_custom_op(ceiladd)
register_custom_op(swapchannel)
register_custom_op(crop)
register_custom_op(linear)
register_custom_op(scaleinplace)

# scaleadd: two inputs, two outputs; its kernels are PPL
# (customlayer/PplBackend/src/scale_add_fp.pl). The guard keeps the registry
# readable by vendor CMake versions without PPL.
# hardsigmoid: a PPL op with a local entry, so it joins layer groups
# (customlayer/PplBackend/src/hard_sigmoid_fp.pl); a 16-bit slice needs an
# fp32 work buffer.
if(COMMAND register_custom_ppl_op)
  register_custom_ppl_op(scaleadd)
  register_custom_ppl_op(hardsigmoid)
  register_custom_ppl_local_op(hardsigmoid)
  register_custom_local_bfsz(hardsigmoid)
endif()

register_custom_local_op(absadd)
register_custom_local_op(ceiladd)
register_custom_local_op(scaleinplace)

register_custom_local_bfsz(absadd)
register_custom_local_bfsz(ceiladd)
register_custom_local_bfsz(scaleinplace)

# leakyrelu (PopART's example op) and the gradient ops of leakyrelu and
# linear: each is a registered op of its own, and register_custom_grad
# (our addition, docs/gradients.md; vendor tools ignore it) names it as the
# op's gradient. leakyrelu_grad receives dy and x; linear_grad dy, x, W, (b,) y.
register_custom_op(leakyrelu)
register_custom_op(leakyrelu_grad)
register_custom_op(linear_grad)
# The guard keeps the registry readable by the vendor's CMake, which has no
# such command.
if(COMMAND register_custom_grad)
  register_custom_grad(leakyrelu leakyrelu_grad NO_FORWARD_OUTPUTS)
  register_custom_grad(linear linear_grad)
endif()
