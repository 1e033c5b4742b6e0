/*
 * bmlib_runtime.h: the device, memory and tpu-kernel module part of the
 * vendor's host library bmlib, implemented on the emulator (libbmlib.so).
 *
 * A host program written for a device opens it with bm_dev_request,
 * allocates and fills device memory, loads a kernel module and launches
 * its kernels by name; built against this SDK the same source runs on the
 * emulated chip chosen by TPU_SDK_CHIP ("bm1684x", the default, or
 * "bm1688"). Device memory is the emulator's global memory; a kernel module
 * is a host shared library of kernels registered with
 * TPUKERNEL_FUNC_REGISTER. docs/host-programs.md says what differs from a
 * device.
 *
 * Declarations, type layouts and constants follow the vendor's interface
 * so that programs and other Sophgo headers compile unchanged.
 */
#ifndef BMLIB_RUNTIME_H_
#define BMLIB_RUNTIME_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define DECL_EXPORT
#define DECL_IMPORT

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status, memory types and descriptors ------------------------------- */

#ifndef BM_MEM_DESC_T_
#define BM_MEM_DESC_T_

typedef enum {
  BM_SUCCESS = 0,
  BM_ERR_DEVNOTREADY = 1, /* NULL or closed handle, unusable out-pointer */
  BM_ERR_FAILURE = 2,     /* failed below bmlib: device, kernel, verification */
  BM_ERR_TIMEOUT = 3,
  BM_ERR_PARAM = 4,       /* bad argument, address or size */
  BM_ERR_NOMEM = 5,       /* allocation failed */
  BM_ERR_DATA = 6,
  BM_ERR_BUSY = 7,        /* device absent or taken */
  BM_ERR_NOFEATURE = 8,
  BM_NOT_SUPPORTED = 9    /* size beyond 32 bits */
} bm_status_t;

typedef enum {
  BM_MEM_TYPE_DEVICE = 0,
  BM_MEM_TYPE_HOST = 1,
  BM_MEM_TYPE_SYSTEM = 2,
  BM_MEM_TYPE_INT8_DEVICE = 3,
  BM_MEM_TYPE_INVALID = 4
} bm_mem_type_t;

typedef union {
  struct {
    bm_mem_type_t mem_type : 3;
    unsigned int gmem_heapid : 3;
    unsigned int reserved : 26;
  } u;
  unsigned int rawflags;
} bm_mem_flags_t;

typedef struct bm_mem_desc {
  union {
    struct {
#ifdef __linux__
      unsigned long device_addr;
#else
      unsigned long long device_addr;
#endif
      unsigned int reserved;
      int dmabuf_fd;
    } device;
    struct {
      void *system_addr;
      unsigned int reserved0;
      int reserved1;
    } system;
  } u;
  bm_mem_flags_t flags;
  unsigned int size;
} bm_mem_desc_t;

typedef struct bm_mem_desc bm_device_mem_t;
typedef struct bm_mem_desc bm_system_mem_t;

/* The same descriptor with a 64-bit size (used by other Sophgo headers). */
typedef struct sg_mem_desc {
  union {
    struct {
#ifdef __linux__
      unsigned long device_addr;
#else
      unsigned long long device_addr;
#endif
      unsigned int reserved;
      int dmabuf_fd;
    } device;
    struct {
      void *system_addr;
      unsigned int reserved0;
      int reserved1;
    } system;
  } u;
  bm_mem_flags_t flags;
  unsigned long long size;
} sg_mem_desc_t;

typedef struct sg_mem_desc sg_device_mem_t;
typedef struct sg_mem_desc sg_system_mem_t;

typedef struct bm_mem_desc_u64 {
  union {
    struct {
#ifdef __linux__
      unsigned long device_addr;
#else
      unsigned long long device_addr;
#endif
      unsigned int reserved;
      int dmabuf_fd;
    } device;
    struct {
      void *system_addr;
      unsigned int reserved0;
      int reserved1;
    } system;
  } u;
  bm_mem_flags_t flags;
  unsigned long long size;
} bm_mem_desc_u64_t;

typedef struct bm_mem_desc_u64 bm_device_mem_u64_t;
typedef struct bm_mem_desc_u64 bm_system_mem_u64_t;

#endif /* BM_MEM_DESC_T_ */

/* The address written into a descriptor whose allocation failed. */
#define BM_MEM_ADDR_NULL (0xfffffffff)

#define MD5SUM_LEN 16
#define LIB_MAX_NAME_LEN 64
#define FUNC_MAX_NAME_LEN 64

/* ---- handles and device information ------------------------------------- */

struct bm_context;
typedef struct bm_context *bm_handle_t;

#define BM1682_CHIPID_BIT_MASK (0X1 << 0)
#define BM1684_CHIPID_BIT_MASK (0X1 << 1)
#define BM1686_CHIPID_BIT_MASK (0X1 << 2)

struct bm_misc_info {
  int pcie_soc_mode; /* 0 = PCIe (copies), 1 = SoC (mapping) */
  int ddr_ecc_enable;
  long long ddr0a_size;
  long long ddr0b_size;
  long long ddr1_size;
  long long ddr2_size;
  unsigned int chipid;
  int tpu_core_num;
#ifdef __linux__
  unsigned long chipid_bit_mask;
#else
  unsigned long long chipid_bit_mask;
#endif
  unsigned int driver_version;
  int domain_bdf;
  int board_version; /* bits 23-16 MCU software, 15-8 board type, 7-0 hardware */
  int a53_enable;
  int dyn_enable;
};

/* ---- log levels ----------------------------------------------------------- */

#define BMLIB_LOG_QUIET -8
#define BMLIB_LOG_PANIC 0
#define BMLIB_LOG_FATAL 8
#define BMLIB_LOG_ERROR 16
#define BMLIB_LOG_WARNING 24
#define BMLIB_LOG_INFO 32
#define BMLIB_LOG_VERBOSE 40
#define BMLIB_LOG_DEBUG 48
#define BMLIB_LOG_TRACE 56

/* Evaluates `call`; on failure logs it and returns its status from the
 * calling function. */
#define BM_CHECK_RET(call)                                                        \
  do {                                                                            \
    bm_status_t bm_check_ret_status_ = (bm_status_t)(call);                       \
    if (bm_check_ret_status_ != BM_SUCCESS) {                                     \
      bmlib_log("BM_CHECK", BMLIB_LOG_ERROR, "BM_CHECK_RET fail %s: %s: %d\n",    \
                __FILE__, __func__, __LINE__);                                    \
      return bm_check_ret_status_;                                                \
    }                                                                             \
  } while (0)

/* ---- devices -------------------------------------------------------------- */

DECL_EXPORT bm_status_t bm_dev_getcount(int *count);
DECL_EXPORT bm_status_t bm_dev_query(int devid);
DECL_EXPORT bm_status_t bm_dev_request(bm_handle_t *handle, int devid);
DECL_EXPORT void bm_dev_free(bm_handle_t handle);
DECL_EXPORT int bm_get_devid(bm_handle_t handle);
DECL_EXPORT bm_status_t bm_get_chipid(bm_handle_t handle, unsigned int *p_chipid);
DECL_EXPORT bm_status_t bm_get_misc_info(bm_handle_t handle, struct bm_misc_info *pmisc_info);
DECL_EXPORT bm_status_t bm_get_tpu_scalar_num(bm_handle_t handle, unsigned int *core_num);
#define bm_get_tpu_core_num bm_get_tpu_scalar_num

/* ---- memory descriptors --------------------------------------------------- */

DECL_EXPORT bm_device_mem_t bm_mem_from_device(unsigned long long device_addr, unsigned int len);
DECL_EXPORT unsigned long long bm_mem_get_device_addr(struct bm_mem_desc mem);
DECL_EXPORT void bm_mem_set_device_addr(struct bm_mem_desc *pmem, unsigned long long addr);
DECL_EXPORT unsigned int bm_mem_get_device_size(struct bm_mem_desc mem);
DECL_EXPORT void bm_mem_set_device_size(struct bm_mem_desc *pmem, unsigned int size);
DECL_EXPORT void bm_set_device_mem(bm_device_mem_t *pmem, unsigned int size, unsigned long long addr);
DECL_EXPORT bm_mem_type_t bm_mem_get_type(struct bm_mem_desc mem);
DECL_EXPORT bm_device_mem_t bm_mem_null(void);
#define BM_MEM_NULL (bm_mem_null())
DECL_EXPORT bm_system_mem_t bm_mem_from_system(void *system_addr);
DECL_EXPORT void *bm_mem_get_system_addr(struct bm_mem_desc mem);

/* ---- allocation ----------------------------------------------------------- */

DECL_EXPORT bm_status_t bm_malloc_device_byte(bm_handle_t handle, bm_device_mem_t *pmem, unsigned int size);
DECL_EXPORT bm_status_t bm_malloc_device_dword(bm_handle_t handle, bm_device_mem_t *pmem, int count);
DECL_EXPORT bm_status_t bm_malloc_neuron_device(bm_handle_t handle, bm_device_mem_t *pmem, int n, int c, int h,
                                                int w);
DECL_EXPORT bm_status_t bm_malloc_device_byte_heap(bm_handle_t handle, bm_device_mem_t *pmem, int heap_id,
                                                   unsigned int size);
DECL_EXPORT bm_status_t bm_malloc_device_byte_heap_mask(bm_handle_t handle, bm_device_mem_t *pmem,
                                                        int heap_id_mask, unsigned int size);
DECL_EXPORT void bm_free_device(bm_handle_t handle, bm_device_mem_t mem);

/* ---- copies and fills ----------------------------------------------------- */

DECL_EXPORT bm_status_t bm_memcpy_s2d(bm_handle_t handle, bm_device_mem_t dst, void *src);
DECL_EXPORT bm_status_t bm_memcpy_d2s(bm_handle_t handle, void *dst, bm_device_mem_t src);
DECL_EXPORT bm_status_t bm_memcpy_s2d_partial(bm_handle_t handle, bm_device_mem_t dst, void *src,
                                              unsigned int size);
DECL_EXPORT bm_status_t bm_memcpy_d2s_partial(bm_handle_t handle, void *dst, bm_device_mem_t src,
                                              unsigned int size);
DECL_EXPORT bm_status_t bm_memcpy_s2d_partial_offset(bm_handle_t handle, bm_device_mem_t dst, void *src,
                                                     unsigned int size, unsigned int offset);
DECL_EXPORT bm_status_t bm_memcpy_d2s_partial_offset(bm_handle_t handle, void *dst, bm_device_mem_t src,
                                                     unsigned int size, unsigned int offset);
/* len counts 4-byte words. */
DECL_EXPORT bm_status_t bm_memcpy_d2d(bm_handle_t handle, bm_device_mem_t dst, int dst_offset, bm_device_mem_t src,
                                      int src_offset, int len);
DECL_EXPORT bm_status_t bm_memcpy_d2d_byte(bm_handle_t handle, bm_device_mem_t dst, size_t dst_offset,
                                           bm_device_mem_t src, size_t src_offset, size_t size);
DECL_EXPORT bm_status_t bm_memcpy_d2d_stride(bm_handle_t handle, bm_device_mem_t dst, int dst_stride,
                                             bm_device_mem_t src, int src_stride, int count, int format_size);
DECL_EXPORT bm_status_t bm_memset_device(bm_handle_t handle, const int value, bm_device_mem_t mem);
DECL_EXPORT bm_status_t bm_memset_device_ext(bm_handle_t handle, void *value, int mode, bm_device_mem_t mem);

/* ---- mapping -------------------------------------------------------------- */

DECL_EXPORT bm_status_t bm_mem_mmap_device_mem(bm_handle_t handle, bm_device_mem_t *dmem, unsigned long long *vmem);
DECL_EXPORT bm_status_t bm_mem_unmap_device_mem(bm_handle_t handle, void *vmem, int size);
DECL_EXPORT bm_status_t bm_mem_flush_device_mem(bm_handle_t handle, bm_device_mem_t *dmem);
DECL_EXPORT bm_status_t bm_mem_flush_partial_device_mem(bm_handle_t handle, bm_device_mem_t *dmem,
                                                        unsigned int offset, unsigned int len);
DECL_EXPORT bm_status_t bm_mem_invalidate_device_mem(bm_handle_t handle, bm_device_mem_t *dmem);
DECL_EXPORT bm_status_t bm_mem_invalidate_partial_device_mem(bm_handle_t handle, bm_device_mem_t *dmem,
                                                             unsigned int offset, unsigned int len);

/* ---- synchronisation ------------------------------------------------------ */

DECL_EXPORT bm_status_t bm_thread_sync(bm_handle_t handle);
DECL_EXPORT bm_status_t bm_thread_sync_from_core(bm_handle_t handle, int core_id);
DECL_EXPORT bm_status_t bm_handle_sync(bm_handle_t handle);
DECL_EXPORT bm_status_t bm_device_sync(bm_handle_t handle);
DECL_EXPORT void bm_flush(bm_handle_t handle);
DECL_EXPORT bm_status_t bm_set_sync_timeout(bm_handle_t handle, int timeout);

/* ---- logging -------------------------------------------------------------- */

DECL_EXPORT void bmlib_log(const char *tag, int level, const char *fmt, ...);
DECL_EXPORT int bmlib_log_get_level(void);
DECL_EXPORT void bmlib_log_set_level(int level);
DECL_EXPORT void bmlib_log_set_callback(void (*callback)(const char *, int, const char *, va_list args));

/* ---- tpu-kernel modules --------------------------------------------------- */

typedef struct bm_module {
  char lib_name[LIB_MAX_NAME_LEN];
  unsigned char md5[MD5SUM_LEN];
} bm_module;
typedef struct bm_module *tpu_kernel_module_t;
typedef int tpu_kernel_function_t;

typedef struct {
  int core_id;
  tpu_kernel_function_t func_id;
  void *param_data;
  unsigned int param_size;
} tpu_launch_param_t;

typedef struct {
  tpu_launch_param_t *param_list;
  int param_num;
} tpu_launch_async_param_t;

tpu_kernel_module_t tpu_kernel_load_module_file(bm_handle_t handle, const char *module_file);
tpu_kernel_module_t tpu_kernel_load_module_file_to_core(bm_handle_t handle, const char *module_file, int core_id);
tpu_kernel_module_t tpu_kernel_load_module_file_key(bm_handle_t handle, const char *module_file, const char *key,
                                                    int size);
tpu_kernel_module_t tpu_kernel_load_module_file_key_to_core(bm_handle_t handle, const char *module_file,
                                                            const char *key, int size, int core_id);
tpu_kernel_module_t tpu_kernel_load_module(bm_handle_t handle, const char *data, size_t length);
tpu_kernel_module_t tpu_kernel_load_module_to_core(bm_handle_t handle, const char *data, size_t length, int core_id);
bm_status_t tpu_kernel_unload_module(bm_handle_t handle, tpu_kernel_module_t p_module);
bm_status_t tpu_kernel_unload_module_from_core(bm_handle_t handle, tpu_kernel_module_t p_module, int core_id);
bm_status_t tpu_kernel_free_module(bm_handle_t handle, tpu_kernel_module_t p_module);
tpu_kernel_function_t tpu_kernel_get_function(bm_handle_t handle, tpu_kernel_module_t module, const char *function);
tpu_kernel_function_t tpu_kernel_get_function_from_core(bm_handle_t handle, tpu_kernel_module_t module,
                                                        const char *function, int core_id);
bm_status_t tpu_kernel_launch(bm_handle_t handle, tpu_kernel_function_t function, void *args, size_t size);
bm_status_t tpu_kernel_launch_from_core(bm_handle_t handle, tpu_kernel_function_t function, void *args, size_t size,
                                        int core_id);
bm_status_t tpu_kernel_launch_async(bm_handle_t handle, tpu_kernel_function_t function, void *args, size_t size);
bm_status_t tpu_kernel_launch_async_from_core(bm_handle_t handle, tpu_kernel_function_t function, void *args,
                                              size_t size, int core_id);
bm_status_t tpu_kernel_launch_async_multicores(bm_handle_t handle, tpu_launch_param_t *param_list, int param_num);
bm_status_t tpu_kernel_sync(bm_handle_t handle);
bm_status_t tpu_kernel_sync_from_core(bm_handle_t handle, int core_id);
bm_status_t tpu_kernel_launch_sync(bm_handle_t handle, const char *func_name, const void *args, unsigned int size);
bm_status_t tpu_kernel_launch_sync_by_core(bm_handle_t handle, const char *func_name, const void *args,
                                           unsigned int size, int core_id);
bm_status_t tpu_kernel_launch_sync_multi_cores(bm_handle_t handle, const char *func_name, const void *api_param,
                                               size_t api_size, const int *core_list, const int core_num);

#ifdef __cplusplus
}
#endif

#endif /* BMLIB_RUNTIME_H_ */
