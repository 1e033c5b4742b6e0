// bdc_bench: element-wise BDC throughput of the emulator against a plain
// host loop over the same elements, measured in the same run.
//
// Targets (issue "BDC engine"): tpu_bdc_fp_add over aligned fp32 tensors
// at no less than half the elements per second of a vectorised loop; fp16
// add at no less than half of the same loop with fp16 <-> fp32
// conversions. Commands per second for small shapes are reported.
#include <cstring>
#include <vector>

#include "bench/ratio_reporter.h"
#include "cmodel/numeric/float_convert.h"
#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace {

using cmodel::numeric::fp16_to_fp32;
using cmodel::numeric::fp32_to_fp16;

struct AddJob {
  dim4 shape;
  local_addr_t dst, src0, src1;
  data_type_t dtype;
  int repeat;
};

void add_kernel(const void *arg) {
  const auto *job = static_cast<const AddJob *>(arg);
  for (int i = 0; i < job->repeat; ++i)
    tpu_bdc_fp_add(job->dst, job->src0, job->src1, &job->shape, nullptr, nullptr, nullptr, job->dtype);
}

// Three aligned [1, NPU_NUM, h, 512] tensors, each in its own third of
// every NPU's local memory.
AddJob large_job(data_type_t dtype) {
  const uint32_t third = uint32_t(tpu_local_mem_size_per_npu()) / 3 / 1024 * 1024;
  const int per_channel = int(third / tpu_data_type_size(dtype));
  return {{1, tpu_npu_num(), per_channel / 512, 512}, 0, third, 2 * third, dtype, 1};
}

int64_t elements(const AddJob &job) { return int64_t(job.shape.n) * job.shape.c * job.shape.h * job.shape.w; }

void BM_bdc_fp_add(benchmark::State &state, const char *chip, data_type_t dtype) {
  cmodel_open(chip);
  const AddJob job = large_job(dtype);
  for (auto _ : state)
    if (cmodel_run(add_kernel, &job) != 0) state.SkipWithError(cmodel_last_error());
  state.SetItemsProcessed(int64_t(state.iterations()) * elements(job));
  cmodel_close();
}

// The baseline: the same element count through a loop the compiler vectorises.
__attribute__((noinline)) void add_fp32(float *__restrict d, const float *__restrict a, const float *__restrict b,
                                        int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = a[i] + b[i];
}

__attribute__((noinline)) void add_fp16(uint16_t *__restrict d, const uint16_t *__restrict a,
                                        const uint16_t *__restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_fp16(fp16_to_fp32(a[i]) + fp16_to_fp32(b[i]), RM_HALF_TO_EVEN);
}

template <typename T>
void BM_loop(benchmark::State &state, const char *chip, data_type_t dtype) {
  cmodel_open(chip);
  const int64_t n = elements(large_job(dtype));
  cmodel_close();
  std::vector<T> a(n), b(n), d(n);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (sizeof(T) == 4) {
      a[i] = T(i % 97) * 0.5f;
      b[i] = T(i % 89) * 0.25f;
    } else {
      a[i] = fp32_to_fp16(float(i % 97) * 0.5f, RM_HALF_TO_EVEN);
      b[i] = fp32_to_fp16(float(i % 89) * 0.25f, RM_HALF_TO_EVEN);
    }
  }
  for (auto _ : state) {
    if constexpr (sizeof(T) == 4) add_fp32(d.data(), a.data(), b.data(), n);
    else add_fp16(d.data(), a.data(), b.data(), n);
    benchmark::DoNotOptimize(d.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * n);
}

void BM_loop_fp32(benchmark::State &state, const char *chip) { BM_loop<float>(state, chip, DT_FP32); }
void BM_loop_fp16(benchmark::State &state, const char *chip) { BM_loop<uint16_t>(state, chip, DT_FP16); }

// Many small commands: what issuing, checking and booking one costs.
void BM_bdc_small_commands(benchmark::State &state, const char *chip) {
  cmodel_open(chip);
  AddJob job{{1, 4, 2, 8}, 0, 4096, 8192, DT_FP32, 1000};
  for (auto _ : state)
    if (cmodel_run(add_kernel, &job) != 0) state.SkipWithError(cmodel_last_error());
  state.SetItemsProcessed(int64_t(state.iterations()) * job.repeat);
  cmodel_close();
}

BENCHMARK_CAPTURE(BM_loop_fp32, bm1684x, "bm1684x")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_bdc_fp_add, fp32_bm1684x, "bm1684x", DT_FP32)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_loop_fp16, bm1684x, "bm1684x")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_bdc_fp_add, fp16_bm1684x, "bm1684x", DT_FP16)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_loop_fp32, bm1688, "bm1688")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_bdc_fp_add, fp32_bm1688, "bm1688", DT_FP32)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_bdc_small_commands, bm1684x, "bm1684x")->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char **argv) {
  return bench::run_with_ratios(argc, argv,
                                {
                                    {"BM_bdc_fp_add/fp32_bm1684x", "BM_loop_fp32/bm1684x", 0.5},
                                    {"BM_bdc_fp_add/fp16_bm1684x", "BM_loop_fp16/bm1684x", 0.5},
                                    {"BM_bdc_fp_add/fp32_bm1688", "BM_loop_fp32/bm1688", 0.5},
                                });
}
