// stats.cc: what a program learns about the device: statistics, profile,
// heaps, serial number, and the engine trace.
//
// Every figure comes from the emulator's own counters: the memory in use
// is what the live buffers asked for (cmodel_global_allocated), run time
// and BDC busy time are the emulated ones of each kernel run
// (cmodel_last_run_stats, added up per core by count_run), copies and
// launches are counted by bmlib as they happen.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "bmlib_internal.h"
#include "cmodel_host.h"

namespace bmlib {
namespace {

constexpr uint64_t mib = 1ull << 20;

// The open device behind `handle` with a non-null out-pointer, or null
// (logged): status in *status.
template <typename T>
Device *checked(bm_handle_t handle, T *out, const char *what, const char *tag, bm_status_t *status) {
  Device *device = device_of(handle, tag);
  *status = BM_ERR_DEVNOTREADY;
  if (!device) return nullptr;
  *status = BM_ERR_PARAM;
  if (!out) {
    log_error(tag, "{} is a null pointer", what);
    return nullptr;
  }
  *status = BM_SUCCESS;
  return device;
}

double number_at(const nlohmann::json &report, const nlohmann::json::json_pointer &where) {
  return report.contains(where) && report[where].is_number() ? report[where].get<double>() : 0.0;
}

// Microseconds as the profile's integer counters hold them.
unsigned long whole_us(double us) { return static_cast<unsigned long>(std::llround(us)); }

// Records (on) or pauses (off) the emulator's engine trace.
bm_status_t trace_on(bm_handle_t handle, bool on, const char *tag) {
  Guard guard(lock());
  if (!device_of(handle, tag)) return BM_ERR_DEVNOTREADY;
  if (cmodel_trace_enable(on ? 1 : 0) == 0) return BM_SUCCESS;
  log_error(tag, "{}", cmodel_last_error());
  return BM_ERR_FAILURE;
}

}  // namespace

void count_run(Device &device, int core, bool completed) {
  Profile &profile = device.profile;
  ++profile.launches_sent;
  if (completed) ++profile.launches_completed;
  const nlohmann::json report = nlohmann::json::parse(cmodel_last_run_stats(), nullptr, false);
  if (report.is_discarded()) return;
  profile.core_us[core == 1 ? 1 : 0] += number_at(report, nlohmann::json::json_pointer("/total_us"));
  profile.bdc_busy_us += number_at(report, nlohmann::json::json_pointer("/engines/bdc/busy_us"));
}

}  // namespace bmlib

using namespace bmlib;

extern "C" {

bm_status_t bm_get_stat(bm_handle_t handle, bm_dev_stat_t *stat) {
  Guard guard(lock());
  bm_status_t status;
  const Device *device = checked(handle, stat, "stat", __func__, &status);
  if (!device) return status;
  std::memset(stat, 0, sizeof *stat);
  const uint64_t total = cmodel_global_size(), used = cmodel_global_allocated();
  stat->mem_total = int(total / mib);
  stat->mem_used = int(used / mib);
  const Profile &profile = device->profile;
  const double run_us = profile.core_us[0] + profile.core_us[1];
  stat->tpu_util = run_us > 0 ? int(std::lround(100 * profile.bdc_busy_us / run_us)) : 0;
  stat->heap_num = 1;
  stat->heap_stat[0] = {unsigned(total / mib), unsigned((total - used) / mib), unsigned(used / mib)};
  return BM_SUCCESS;
}

bm_status_t bm_get_profile(bm_handle_t handle, bm_profile_t *profile) {
  Guard guard(lock());
  bm_status_t status;
  const Device *device = checked(handle, profile, "profile", __func__, &status);
  if (!device) return status;
  std::memset(profile, 0, sizeof *profile);
  const Profile &counted = device->profile;
  profile->cdma_in_counter = counted.copies_in;
  profile->cdma_out_counter = counted.copies_out;
  profile->tpu_process_time = whole_us(counted.core_us[0]);
  profile->tpu1_process_time = whole_us(counted.core_us[1]);
  profile->sent_api_counter = counted.launches_sent;
  profile->completed_api_counter = counted.launches_completed;
  return BM_SUCCESS;
}

bm_status_t bm_get_gmem_total_heap_num(bm_handle_t handle, unsigned int *heap_num) {
  Guard guard(lock());
  bm_status_t status;
  if (!checked(handle, heap_num, "heap_num", __func__, &status)) return status;
  *heap_num = 1;
  return BM_SUCCESS;
}

bm_status_t bm_get_gmem_heap_stat_byte_by_id(bm_handle_t handle, bm_heap_stat_byte_t *pheap_byte,
                                             unsigned int heap_id) {
  Guard guard(lock());
  bm_status_t status;
  if (!checked(handle, pheap_byte, "pheap_byte", __func__, &status)) return status;
  if (heap_id != 0) {
    log_error(__func__, "heap {} does not exist (the emulated device has heap 0 only)", heap_id);
    return BM_ERR_PARAM;
  }
  std::memset(pheap_byte, 0, sizeof *pheap_byte);
  const uint64_t total = cmodel_global_size(), used = cmodel_global_allocated();
  pheap_byte->heap_id = 0;
  pheap_byte->mem_total = total;
  pheap_byte->mem_used = used;
  pheap_byte->mem_avail = total - used;
  pheap_byte->mem_start_addr = 0x100000000ull;  // global memory starts there on both chips
  return BM_SUCCESS;
}

bm_status_t bm_get_sn(bm_handle_t handle, char *sn) {
  Guard guard(lock());
  bm_status_t status;
  const Device *device = checked(handle, sn, "sn", __func__, &status);
  if (!device) return status;
  std::string text = "EMU-" + device->chip;
  for (char &c : text) c = char(std::toupper(static_cast<unsigned char>(c)));
  std::snprintf(sn, 18, "%s", text.c_str());  // a device's serial number fills at most 17 characters
  return BM_SUCCESS;
}

bm_status_t bm_trace_enable(bm_handle_t handle) { return trace_on(handle, true, __func__); }
bm_status_t bm_trace_disable(bm_handle_t handle) { return trace_on(handle, false, __func__); }

bm_status_t bm_trace_dump(bm_handle_t handle) {
  Guard guard(lock());
  if (!device_of(handle, __func__)) return BM_ERR_DEVNOTREADY;
  const char *json = cmodel_trace_json();
  if (!json) {
    log_error(__func__, "{}", cmodel_last_error());
    return BM_ERR_FAILURE;
  }
  const char *env = std::getenv("TPU_SDK_BMLIB_TRACE");
  const std::string path = env && *env ? env : "bmlib_trace.json";
  FILE *file = std::fopen(path.c_str(), "w");
  const bool written = file && std::fputs(json, file) >= 0;
  if (file && std::fclose(file) != 0) file = nullptr;
  if (!written || !file) {
    log_error(__func__, "cannot write the trace to \"{}\": {}", path, std::strerror(errno));
    return BM_ERR_FAILURE;
  }
  log_line(BMLIB_LOG_INFO, __func__, fmt::format("trace written to {}", path));
  return BM_SUCCESS;
}

bm_status_t bm_trace_dump_all(bm_handle_t handle) { return bm_trace_dump(handle); }

}  // extern "C"
