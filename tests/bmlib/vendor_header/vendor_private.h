/* vendor_private.h: a stand-in for the vendor-side headers a host program
 * includes after bmlib_runtime.h (the vendor's bmcv / bmrt / bm-smi
 * headers, a demo's own). Written the way those are written:
 *  - they include bmlib_runtime.h themselves (a no-op after ours);
 *  - some repeat the descriptor block under its guard BM_MEM_DESC_T_, which
 *    our header defines, so the repeat is skipped (spec §3.3);
 *  - the rest of the vendor's types (bm_dev_stat_t, bm_profile_t, ...) are
 *    not guarded in the vendor's header, so no vendor header repeats them:
 *    they use them, and so does this one;
 *  - they may declare bmlib functions again; C and C++ accept a repeated
 *    declaration only when it matches, so every prototype below, copied
 *    from the vendor's header, checks ours.
 * VENDOR_HEADER_MISMATCH declares one call differently: that compile must
 * fail (the check can fail). */
#ifndef VENDOR_PRIVATE_H
#define VENDOR_PRIVATE_H

#include "bmlib_runtime.h"

#ifndef BM_MEM_DESC_T_
#define BM_MEM_DESC_T_
typedef enum {
  BM_SUCCESS = 0,
  BM_ERR_DEVNOTREADY = 1,
  BM_ERR_FAILURE = 2,
  BM_ERR_TIMEOUT = 3,
  BM_ERR_PARAM = 4,
  BM_ERR_NOMEM = 5,
  BM_ERR_DATA = 6,
  BM_ERR_BUSY = 7,
  BM_ERR_NOFEATURE = 8,
  BM_NOT_SUPPORTED = 9
} bm_status_t;
#error "bmlib_runtime.h must define BM_MEM_DESC_T_ so that vendor headers skip their copy of the descriptor block"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifndef VENDOR_HEADER_MISMATCH
bm_status_t bm_get_stat(bm_handle_t handle, bm_dev_stat_t *stat);
#else
bm_status_t bm_get_stat(bm_handle_t handle, bm_profile_t *stat);  /* conflicts with bmlib_runtime.h's */
#endif
bm_status_t bm_get_profile(bm_handle_t handle, bm_profile_t *profile);
bm_status_t bm_get_gmem_total_heap_num(bm_handle_t handle, unsigned int *heap_num);
bm_status_t bm_get_gmem_heap_stat_byte_by_id(bm_handle_t handle, bm_heap_stat_byte_t *pheap_byte,
                                             unsigned int heap_id);
unsigned int bm_mem_get_size(struct bm_mem_desc mem);
bm_status_t bm_get_sn(bm_handle_t handle, char *sn);
bm_status_t bm_memcpy_c2c(bm_handle_t src, bm_handle_t dst, bm_device_mem_t device_src, bm_device_mem_t device_dst,
                          bool force_dst_cdma);
bm_status_t bm_malloc_device_mem(bm_handle_t handle, unsigned long long *paddr, int heap_id,
                                 unsigned long long size);
bm_status_t bm_malloc_device_mem_mask(bm_handle_t handle, unsigned long long *paddr, int heap_id_mask,
                                      unsigned long long size);
void bm_free_device_mem(bm_handle_t ctx, unsigned long long paddr);
bm_status_t bm_trace_enable(bm_handle_t handle);
bm_status_t bm_trace_disable(bm_handle_t handle);
bm_status_t bm_trace_dump(bm_handle_t handle);
bm_status_t bm_trace_dump_all(bm_handle_t handle);
bm_device_mem_u64_t bm_mem_from_device_u64(unsigned long long device_addr, unsigned long long len);
unsigned long long bm_mem_get_device_addr_u64(struct bm_mem_desc_u64 mem);
void bm_mem_set_device_addr_u64(struct bm_mem_desc_u64 *pmem, unsigned long long addr);
unsigned long long bm_mem_get_device_size_u64(struct bm_mem_desc_u64 mem);
void bm_mem_set_device_size_u64(struct bm_mem_desc_u64 *pmem, unsigned long long size);
void bm_set_device_mem_u64(bm_device_mem_u64_t *pmem, unsigned long long size, unsigned long long addr);
bm_status_t bm_malloc_device_byte_u64(bm_handle_t handle, bm_device_mem_u64_t *pmem, unsigned long long size);
bm_status_t bm_malloc_device_byte_heap_u64(bm_handle_t handle, bm_device_mem_u64_t *pmem, int heap_id,
                                           unsigned long long size);
bm_status_t bm_malloc_device_byte_heap_mask_u64(bm_handle_t handle, bm_device_mem_u64_t *pmem, int heap_id_mask,
                                                unsigned long long size);
void bm_free_device_u64(bm_handle_t handle, bm_device_mem_u64_t mem);
bm_status_t bm_memcpy_s2d_u64(bm_handle_t handle, bm_device_mem_u64_t dst, void *src);
bm_status_t bm_memcpy_d2s_u64(bm_handle_t handle, void *dst, bm_device_mem_u64_t src);
bm_status_t bm_memcpy_s2d_partial_u64(bm_handle_t handle, bm_device_mem_u64_t dst, void *src,
                                      unsigned long long size);
bm_status_t bm_memcpy_d2s_partial_u64(bm_handle_t handle, void *dst, bm_device_mem_u64_t src,
                                      unsigned long long size);
bm_status_t bm_memcpy_s2d_partial_offset_u64(bm_handle_t handle, bm_device_mem_u64_t dst, void *src,
                                             unsigned long long size, unsigned long long offset);
bm_status_t bm_memcpy_d2s_partial_offset_u64(bm_handle_t handle, void *dst, bm_device_mem_u64_t src,
                                             unsigned long long size, unsigned long long offset);
bm_status_t bm_memcpy_d2d_byte_u64(bm_handle_t handle, bm_device_mem_u64_t dst, size_t dst_offset,
                                   bm_device_mem_u64_t src, size_t src_offset, size_t size);
bm_status_t bm_mem_mmap_device_mem_u64(bm_handle_t handle, bm_device_mem_u64_t *dmem, unsigned long long *vmem);

/* What such headers build from the vendor's types. */
typedef struct {
  bm_dev_stat_t stat;
  bm_profile_t profile;
  bm_heap_stat_byte_t heaps[4];
  bm_perf_monitor_t monitor;
  bm_cpu_status_t cpu;
  boot_loader_version boot;
  MODULE_ID module;
  PERF_MONITOR_ID monitor_id;
  bm_fw_desc firmware;
} vendor_smi_attr;

#ifdef __cplusplus
}
#endif

#endif
