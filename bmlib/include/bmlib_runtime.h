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

/* ---- statistics, profiles and other device types --------------------------
 * Layouts as the vendor's header has them (tests/bmlib/bmlib_test.cc
 * checks sizes and offsets). Memory figures of bm_dev_stat_t and
 * bm_heap_stat_t are in MiB. */

typedef struct bm_heap_stat {
  unsigned int mem_total;
  unsigned int mem_avail;
  unsigned int mem_used;
} bm_heap_stat_t;

typedef struct bm_heap_stat_byte {
  unsigned int heap_id;
  unsigned long long mem_total;
  unsigned long long mem_avail;
  unsigned long long mem_used;
  unsigned long long mem_start_addr;
} bm_heap_stat_byte_t;

typedef struct bm_dev_stat {
  int mem_total;
  int mem_used;
  int tpu_util; /* percent */
  int heap_num;
  struct bm_heap_stat heap_stat[4];
} bm_dev_stat_t;

typedef struct bm_profile {
#ifdef __linux__
  unsigned long cdma_in_time;
  unsigned long cdma_in_counter;
  unsigned long cdma_out_time;
  unsigned long cdma_out_counter;
  unsigned long tpu_process_time;
  unsigned long tpu1_process_time;
  unsigned long sent_api_counter;
  unsigned long completed_api_counter;
#else
  unsigned long long cdma_in_time;
  unsigned long long cdma_in_counter;
  unsigned long long cdma_out_time;
  unsigned long long cdma_out_counter;
  unsigned long long tpu_process_time;
  unsigned long long tpu1_process_time;
  unsigned long long sent_api_counter;
  unsigned long long completed_api_counter;
#endif
} bm_profile_t;

typedef enum {
  PERF_MONITOR_GDMA = 0,
  PERF_MONITOR_TPU = 1
} PERF_MONITOR_ID;

typedef enum {
  BMCPU_IDLE = 0,
  BMCPU_RUNNING = 1,
  BMCPU_FAULT = 2
} bm_cpu_status_t;

typedef struct bm_perf_monitor {
  long long buffer_start_addr;
  int buffer_size;
  PERF_MONITOR_ID monitor_id;
} bm_perf_monitor_t;

typedef enum {
  MODULE_CDMA = 0,
  MODULE_GDMA = 1,
  MODULE_TPU = 2,
  MODULE_SMMU = 3,
  MODULE_SRAM = 4,
  MODULE_END = 5
} MODULE_ID;

typedef struct bm_fw_desc {
  unsigned int *itcm_fw;
  int itcmfw_size;
  unsigned int *ddr_fw;
  int ddrfw_size;
} bm_fw_desc, *pbm_fw_desc;

typedef struct boot_loader_version {
  char *bl1_version;
  char *bl2_version;
  char *bl31_version;
  char *uboot_version;
} boot_loader_version;

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
/* The emulator's own figures: memory in use (the live allocations, MiB), TPU utilisation (BDC busy time
 * over the kernels' run time since the device opened, percent), one heap. */
DECL_EXPORT bm_status_t bm_get_stat(bm_handle_t handle, bm_dev_stat_t *stat);
/* Since the device opened: host copies in (s2d) and out (d2s) and their device time (0: the emulator
 * gives host copies none), emulated run time of the kernels on core 0 and core 1 (microseconds),
 * kernel launches sent and completed without a fault. */
DECL_EXPORT bm_status_t bm_get_profile(bm_handle_t handle, bm_profile_t *profile);
DECL_EXPORT bm_status_t bm_get_gmem_total_heap_num(bm_handle_t handle, unsigned int *heap_num);
DECL_EXPORT bm_status_t bm_get_gmem_heap_stat_byte_by_id(bm_handle_t handle, bm_heap_stat_byte_t *pheap_byte,
                                                         unsigned int heap_id);
/* A serial number naming the emulated chip ("EMU-BM1684X"); sn must hold 18 bytes. */
DECL_EXPORT bm_status_t bm_get_sn(bm_handle_t handle, char *sn);
/* Engine-command trace of the kernels' runs (the emulator's profile trace): enable, pause; dump writes
 * it as Chrome trace-event JSON to $TPU_SDK_BMLIB_TRACE (default bmlib_trace.json in the current
 * directory). */
DECL_EXPORT bm_status_t bm_trace_enable(bm_handle_t handle);
DECL_EXPORT bm_status_t bm_trace_disable(bm_handle_t handle);
DECL_EXPORT bm_status_t bm_trace_dump(bm_handle_t handle);
DECL_EXPORT bm_status_t bm_trace_dump_all(bm_handle_t handle);

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
/* The descriptor's size, whatever its memory type. */
DECL_EXPORT unsigned int bm_mem_get_size(struct bm_mem_desc mem);

/* The same with 64-bit sizes (bm_device_mem_u64_t). */
DECL_EXPORT bm_device_mem_u64_t bm_mem_from_device_u64(unsigned long long device_addr, unsigned long long len);
DECL_EXPORT unsigned long long bm_mem_get_device_addr_u64(struct bm_mem_desc_u64 mem);
DECL_EXPORT void bm_mem_set_device_addr_u64(struct bm_mem_desc_u64 *pmem, unsigned long long addr);
DECL_EXPORT unsigned long long bm_mem_get_device_size_u64(struct bm_mem_desc_u64 mem);
DECL_EXPORT void bm_mem_set_device_size_u64(struct bm_mem_desc_u64 *pmem, unsigned long long size);
DECL_EXPORT void bm_set_device_mem_u64(bm_device_mem_u64_t *pmem, unsigned long long size, unsigned long long addr);

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
DECL_EXPORT bm_status_t bm_malloc_device_byte_u64(bm_handle_t handle, bm_device_mem_u64_t *pmem,
                                                  unsigned long long size);
DECL_EXPORT bm_status_t bm_malloc_device_byte_heap_u64(bm_handle_t handle, bm_device_mem_u64_t *pmem, int heap_id,
                                                       unsigned long long size);
DECL_EXPORT bm_status_t bm_malloc_device_byte_heap_mask_u64(bm_handle_t handle, bm_device_mem_u64_t *pmem,
                                                            int heap_id_mask, unsigned long long size);
DECL_EXPORT void bm_free_device_u64(bm_handle_t handle, bm_device_mem_u64_t mem);
/* Allocation by address only. */
DECL_EXPORT bm_status_t bm_malloc_device_mem(bm_handle_t handle, unsigned long long *paddr, int heap_id,
                                             unsigned long long size);
DECL_EXPORT bm_status_t bm_malloc_device_mem_mask(bm_handle_t handle, unsigned long long *paddr, int heap_id_mask,
                                                  unsigned long long size);
DECL_EXPORT void bm_free_device_mem(bm_handle_t ctx, unsigned long long paddr);

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
/* Chip to chip: src.size bytes from src (on src_handle's device) to dst (on dst_handle's); the
 * emulator has one device, so both are device 0. */
DECL_EXPORT bm_status_t bm_memcpy_c2c(bm_handle_t src_handle, bm_handle_t dst_handle, bm_device_mem_t src,
                                      bm_device_mem_t dst, bool force_dst_cdma);
DECL_EXPORT bm_status_t bm_memcpy_s2d_u64(bm_handle_t handle, bm_device_mem_u64_t dst, void *src);
DECL_EXPORT bm_status_t bm_memcpy_d2s_u64(bm_handle_t handle, void *dst, bm_device_mem_u64_t src);
DECL_EXPORT bm_status_t bm_memcpy_s2d_partial_u64(bm_handle_t handle, bm_device_mem_u64_t dst, void *src,
                                                  unsigned long long size);
DECL_EXPORT bm_status_t bm_memcpy_d2s_partial_u64(bm_handle_t handle, void *dst, bm_device_mem_u64_t src,
                                                  unsigned long long size);
DECL_EXPORT bm_status_t bm_memcpy_s2d_partial_offset_u64(bm_handle_t handle, bm_device_mem_u64_t dst, void *src,
                                                         unsigned long long size, unsigned long long offset);
DECL_EXPORT bm_status_t bm_memcpy_d2s_partial_offset_u64(bm_handle_t handle, void *dst, bm_device_mem_u64_t src,
                                                         unsigned long long size, unsigned long long offset);
DECL_EXPORT bm_status_t bm_memcpy_d2d_byte_u64(bm_handle_t handle, bm_device_mem_u64_t dst, size_t dst_offset,
                                               bm_device_mem_u64_t src, size_t src_offset, size_t size);

/* ---- mapping -------------------------------------------------------------- */

DECL_EXPORT bm_status_t bm_mem_mmap_device_mem(bm_handle_t handle, bm_device_mem_t *dmem, unsigned long long *vmem);
DECL_EXPORT bm_status_t bm_mem_mmap_device_mem_u64(bm_handle_t handle, bm_device_mem_u64_t *dmem,
                                                   unsigned long long *vmem);
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

/* ---- emulator settings (this SDK only; a device has no such calls) ---------
 * Global memory size in bytes (a positive multiple of 512 up to 32 GiB; 0 = TPU_SDK_GLOBAL_MEM_SIZE or
 * the board default): for the device opened by the next bm_dev_request, or for the open device while
 * nothing is allocated on it (BM_ERR_BUSY otherwise). allow != 0 lets host copies address device memory
 * outside the allocated buffers, as a board does (TPU_SDK_UNALLOCATED_COPIES=allow); 0 refuses them
 * (the default, naming the nearest buffers); -1 = back to the environment's setting. */
DECL_EXPORT bm_status_t bm_emu_set_global_mem_size(unsigned long long bytes);
DECL_EXPORT bm_status_t bm_emu_set_unallocated_copies(int allow);

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
