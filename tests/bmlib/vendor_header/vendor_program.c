/* vendor_program.c: a host program with the vendor's header layout: our
 * bmlib_runtime.h first, then a vendor-side header (vendor_private.h). It
 * must compile as C and as C++ with every warning an error
 * (tests/CMakeLists.txt: bmlib_vendor_header_*), and the vendor's types
 * have the vendor's layouts (LP64). */
#include <stddef.h>

#include "bmlib_runtime.h"
#include "vendor_private.h"

#ifdef __cplusplus
#define LAYOUT(condition) static_assert(condition, #condition)
#else
#define LAYOUT(condition) _Static_assert(condition, #condition)
#endif

LAYOUT(sizeof(bm_heap_stat_t) == 12 && offsetof(bm_heap_stat_t, mem_used) == 8);
LAYOUT(sizeof(bm_heap_stat_byte_t) == 40 && offsetof(bm_heap_stat_byte_t, mem_total) == 8 &&
       offsetof(bm_heap_stat_byte_t, mem_avail) == 16 && offsetof(bm_heap_stat_byte_t, mem_used) == 24 &&
       offsetof(bm_heap_stat_byte_t, mem_start_addr) == 32);
LAYOUT(sizeof(bm_dev_stat_t) == 64 && offsetof(bm_dev_stat_t, tpu_util) == 8 &&
       offsetof(bm_dev_stat_t, heap_num) == 12 && offsetof(bm_dev_stat_t, heap_stat) == 16);
LAYOUT(sizeof(bm_profile_t) == 64 && offsetof(bm_profile_t, cdma_out_time) == 16 &&
       offsetof(bm_profile_t, tpu_process_time) == 32 && offsetof(bm_profile_t, tpu1_process_time) == 40 &&
       offsetof(bm_profile_t, sent_api_counter) == 48 && offsetof(bm_profile_t, completed_api_counter) == 56);
LAYOUT(sizeof(bm_perf_monitor_t) == 16 && offsetof(bm_perf_monitor_t, buffer_size) == 8 &&
       offsetof(bm_perf_monitor_t, monitor_id) == 12);
LAYOUT(sizeof(boot_loader_version) == 32 && offsetof(boot_loader_version, uboot_version) == 24);
LAYOUT(sizeof(bm_fw_desc) == 32 && offsetof(bm_fw_desc, ddr_fw) == 16 && offsetof(bm_fw_desc, ddrfw_size) == 24);
LAYOUT(sizeof(MODULE_ID) == sizeof(int) && MODULE_CDMA == 0 && MODULE_GDMA == 1 && MODULE_TPU == 2 &&
       MODULE_SMMU == 3 && MODULE_SRAM == 4 && MODULE_END == 5);
LAYOUT(sizeof(PERF_MONITOR_ID) == sizeof(int) && PERF_MONITOR_GDMA == 0 && PERF_MONITOR_TPU == 1);
LAYOUT(sizeof(bm_cpu_status_t) == sizeof(int) && BMCPU_IDLE == 0 && BMCPU_RUNNING == 1 && BMCPU_FAULT == 2);
LAYOUT(sizeof(bm_device_mem_u64_t) == 32 && offsetof(bm_device_mem_u64_t, size) == 24);

/* A program's use of them. */
int device_summary(bm_handle_t handle, vendor_smi_attr *attr) {
  char sn[18];
  unsigned int heaps = 0;
  if (bm_get_stat(handle, &attr->stat) != BM_SUCCESS || bm_get_profile(handle, &attr->profile) != BM_SUCCESS ||
      bm_get_gmem_total_heap_num(handle, &heaps) != BM_SUCCESS || bm_get_sn(handle, sn) != BM_SUCCESS)
    return -1;
  for (unsigned int i = 0; i < heaps && i < 4; ++i)
    if (bm_get_gmem_heap_stat_byte_by_id(handle, &attr->heaps[i], i) != BM_SUCCESS) return -1;
  attr->module = MODULE_TPU;
  attr->monitor_id = PERF_MONITOR_TPU;
  attr->cpu = BMCPU_RUNNING;
  return attr->stat.mem_used;
}
