/*
 * backend_helper.h: the macros the generated backend_custom_api.c expands,
 * one exported backend_api_<op>_<kind> function per registration.
 *
 * The global and local wrappers make the caller's command-id node the
 * current one, run the user's api_<op>_* (whose tpu_* calls then append to
 * that node's command streams) and hand the updated node back. The bfsz
 * wrappers only ask the op how much scratch memory it wants.
 *
 * The optional functions (local layer, scratch sizes) may be missing from
 * the op's sources: the generated file declares them weak, and calling one
 * that no source defines stops with an error naming it and its
 * registration (TPU_CUSTOM_REQUIRE, tpu_custom_abi.h) instead of failing
 * the link. The global layer is required and stays a link error.
 *
 * IMPL_CUSTOM_API_GLB_BFSZ exists here (the vendor SDK generates calls to it
 * but never defines it), so a global scratch buffer really works.
 */
#ifndef TPU_SDK_BACKEND_HELPER_H
#define TPU_SDK_BACKEND_HELPER_H

#include <api_common.h>
#include <common.h>
#include <tpu_kernel.h>
#include <tpu_custom_abi.h>

static inline void custom_backend_enter_node(void *pid_node) {
  if (pid_node == NULL) return;
  if (((CMD_ID_NODE *)pid_node)->in_parallel_state)
    tpu_set_parallel_id_node(pid_node, NULL);
  else
    tpu_set_id_node(pid_node);
  tpu_disable_check_id_node();
}

static inline void custom_backend_leave_node(void *pid_node) {
  if (pid_node == NULL) return;
  if (((CMD_ID_NODE *)pid_node)->in_parallel_state)
    tpu_get_parallel_id_node(pid_node, NULL);
  else
    tpu_get_id_node(pid_node);
  tpu_enable_check_id_node();
}

#define IMPL_CUSTOM_API_GLB(op)                                                              \
  int backend_api_##op##_global(const void *param, int param_size,                          \
                                const global_tensor_spec_t *inputs,                         \
                                global_tensor_spec_t *outputs, void *pid_node) {            \
    (void)param_size;                                                                        \
    custom_backend_enter_node(pid_node);                                                     \
    api_##op##_global(inputs, outputs, param);                                               \
    custom_backend_leave_node(pid_node);                                                     \
    return 0;                                                                                \
  }

#define IMPL_CUSTOM_API_LOC(op)                                                              \
  int backend_api_##op##_local(const void *param, int param_size, local_sec_info_t *sec_info, \
                               const local_tensor_spec_t *inputs,                            \
                               local_tensor_spec_t *outputs, void *pid_node) {               \
    (void)param_size;                                                                        \
    TPU_CUSTOM_REQUIRE(api_##op##_local, "register_custom_local_op(" #op ")");               \
    custom_backend_enter_node(pid_node);                                                     \
    api_##op##_local(sec_info, inputs, outputs, param);                                      \
    custom_backend_leave_node(pid_node);                                                     \
    return 0;                                                                                \
  }

#define IMPL_CUSTOM_API_LOC_BFSZ(op)                                                         \
  int backend_api_##op##_local_bfsz(const void *param, int param_size,                      \
                                    local_sec_info_t *sec_info, local_tensor_spec_t *inputs, \
                                    local_tensor_spec_t *outputs) {                          \
    (void)param_size;                                                                        \
    TPU_CUSTOM_REQUIRE(api_##op##_local_bfsz, "register_custom_local_bfsz(" #op ")");        \
    return api_##op##_local_bfsz(sec_info, inputs, outputs, param);                          \
  }

#define IMPL_CUSTOM_API_GLB_BFSZ(op)                                                          \
  int64_t backend_api_##op##_global_bfsz(void *param, int param_size, void *inputs,          \
                                         void *outputs) {                                   \
    (void)param_size;                                                                        \
    TPU_CUSTOM_REQUIRE(api_##op##_global_bfsz, "register_custom_global_bfsz(" #op ")");      \
    return api_##op##_global_bfsz((const global_tensor_spec_t *)inputs,                     \
                                  (global_tensor_spec_t *)outputs, param);                  \
  }

/* The vendor's PPL variants (its generator emits them for
 * register_custom_ppl_op). A PPL kernel issues its commands through the same
 * tpu-kernel calls (docs/ppl.md), so the same node handling serves; the
 * generated file here uses the plain macros for every op. */
#define IMPL_CUSTOM_PPL_API_GLB(op) IMPL_CUSTOM_API_GLB(op)
#define IMPL_CUSTOM_PPL_API_LOC(op) IMPL_CUSTOM_API_LOC(op)

#endif /* TPU_SDK_BACKEND_HELPER_H */
