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
/* Firmware only: "bm1684x" or "bm1688". */
extern const char tpu_custom_firmware_chip[];

/* Called by the generated entry functions for a name no op registered:
 * records "<entry>: no custom op named '<name>' (registered: <list>)" as
 * the emulator's last error (cmodel_last_error) and returns -1. */
int tpu_custom_unknown_op(const char *entry, const char *name, const char *registered);

#ifdef __cplusplus
}
#endif

#endif /* TPU_SDK_TPU_CUSTOM_ABI_H */
