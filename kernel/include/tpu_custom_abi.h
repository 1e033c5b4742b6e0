/*
 * tpu_custom_abi.h: what this SDK adds to the custom-layer libraries so the
 * runtime can check them before use.
 *
 * The generated sources of libbackend_custom.so and libcmodel_custom_<arch>.so
 * define the symbols below; the loader reads them to refuse a firmware built
 * for the other chip or an older SDK, and to list the registered ops in its
 * error messages. User code never needs them.
 *
 * This header is C11 and C++ compatible.
 */
#ifndef TPU_SDK_TPU_CUSTOM_ABI_H
#define TPU_SDK_TPU_CUSTOM_ABI_H

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever a struct layout, an entry signature or the meaning of a
 * parameter changes; a library built against another level is refused. */
#define TPU_SDK_CUSTOM_API_LEVEL 1

/* Both generated libraries. */
extern const int tpu_custom_api_level;
/* NULL-terminated list of the ops registered with register_custom_op. */
extern const char *const tpu_custom_registered_ops[];
/* ... and with register_custom_local_op. */
extern const char *const tpu_custom_registered_local_ops[];
/* NULL-terminated list of the gradients declared with register_custom_grad
 * (our addition: the vendor flow has none), one text per op:
 *   "op=<op> grad=<grad_op> mode=together|separate
 *    receives=output_grads[,inputs][,outputs] non_differentiable=<i,j,...>"
 * (one line, single spaces). Optional: libraries of older builds lack it. */
extern const char *const tpu_custom_registered_gradients[];
/* All three libraries (the plugin too): the build identity, 16 hex digits
 * hashed from the registry, the op's sources and headers; libraries built
 * from the same sources carry the same one, and the runtime refuses a
 * plugin / backend / firmware set whose identities differ. The info string
 * says where and when those sources were built. */
extern const char tpu_custom_build_id[];
extern const char tpu_custom_build_info[];
/* Firmware only: "bm1684x" or "bm1688". */
extern const char tpu_custom_firmware_chip[];

/* Called by the generated entry functions for a name no op registered:
 * records "<entry>: no custom op named '<name>' (registered: <list>)" as
 * the emulator's last error (cmodel_last_error) and returns -1. */
int tpu_custom_unknown_op(const char *entry, const char *name, const char *registered);

/* A registered function that no source defines: the generated sources
 * declare the optional ones (api_<op>_local, _local_bfsz, _global_bfsz)
 * weak, so the library still links and such a reference is NULL. Records
 * "<function> is registered (<registration> in register_ops.cmake) but no
 * source defines it" as the emulator's last error and stops the running
 * kernel; outside a kernel run it returns -1. */
int tpu_custom_missing_function(const char *function, const char *registration);

static inline int tpu_custom_is_defined(const void *function) { return function != 0; }

/* In a generated wrapper or entry: leave with the error above when `fn` is
 * a weak reference no source defined. */
#define TPU_CUSTOM_REQUIRE(fn, registration) \
  if (!tpu_custom_is_defined((const void *)(fn))) return tpu_custom_missing_function(#fn, registration)

#ifdef __cplusplus
}
#endif

#endif /* TPU_SDK_TPU_CUSTOM_ABI_H */
