// gdma_bench: GDMA copy throughput of the emulator against memcpy.
//
// Target (issue "cmodel foundation"): a contiguous fp32 S2L + L2S round
// trip of a tensor filling most of local memory runs at no less than half
// of memcpy's throughput for the same bytes. A strided case is reported.
#include <cstring>
#include <vector>

#include "bench/ratio_reporter.h"
#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace {

struct RoundTrip {
  global_addr_t input, output;
  dim4 shape;
  dim4 system_stride;  // of the global tensors
  bool strided;
};

void round_trip_kernel(const void *arg) {
  const auto *p = static_cast<const RoundTrip *>(arg);
  const dim4 *stride = p->strided ? &p->system_stride : nullptr;
  tpu_gdma_cpy_S2L(0, p->input, &p->shape, nullptr, stride, DT_FP32);
  tpu_gdma_cpy_L2S(p->output, 0, &p->shape, stride, nullptr, DT_FP32);
}

// A [1, NPU_NUM, h, w] fp32 tensor using 15/16 of each NPU's local memory.
dim4 large_shape(const char *chip) {
  const bool x = std::strcmp(chip, "bm1684x") == 0;
  const int npus = x ? 64 : 32, bytes = x ? (1 << 18) : (1 << 17);
  const int elements = bytes / 16 * 15 / 4;
  return {1, npus, elements / 512, 512};
}

void BM_gdma_round_trip(benchmark::State &state, const char *chip, bool strided) {
  cmodel_open(chip);
  RoundTrip p{};
  p.shape = large_shape(chip);
  p.strided = strided;
  const dim4 &s = p.shape;
  // Strided: every other row of a twice-as-tall global tensor.
  p.system_stride = {s.c * s.h * s.w * 2, s.h * s.w * 2, s.w * 2, 1};
  const uint64_t bytes = uint64_t(s.n) * s.c * s.h * s.w * sizeof(float);
  const uint64_t footprint = strided ? bytes * 2 : bytes;
  p.input = cmodel_global_alloc(footprint);
  p.output = cmodel_global_alloc(footprint);
  std::vector<char> fill(footprint, 1);
  cmodel_global_write(p.input, fill.data(), footprint);
  cmodel_global_write(p.output, fill.data(), footprint);
  for (auto _ : state)
    if (cmodel_run(round_trip_kernel, &p) != 0) state.SkipWithError(cmodel_last_error());
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes) * 2);
  cmodel_close();
}

void BM_memcpy(benchmark::State &state, const char *chip) {
  const dim4 s = large_shape(chip);
  const size_t bytes = size_t(s.n) * s.c * s.h * s.w * sizeof(float);
  std::vector<char> a(bytes, 1), b(bytes, 2), c(bytes, 3);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    std::memcpy(c.data(), b.data(), bytes);
    benchmark::DoNotOptimize(c.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes) * 2);
}

BENCHMARK_CAPTURE(BM_memcpy, bm1684x, "bm1684x")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_gdma_round_trip, bm1684x_contiguous, "bm1684x", false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_gdma_round_trip, bm1684x_strided, "bm1684x", true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_memcpy, bm1688, "bm1688")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_gdma_round_trip, bm1688_contiguous, "bm1688", false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_gdma_round_trip, bm1688_strided, "bm1688", true)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char **argv) {
  return bench::run_with_ratios(argc, argv,
                                {
                                    {"BM_gdma_round_trip/bm1684x_contiguous", "BM_memcpy/bm1684x", 0.5},
                                    {"BM_gdma_round_trip/bm1684x_strided", "BM_memcpy/bm1684x", 0},
                                    {"BM_gdma_round_trip/bm1688_contiguous", "BM_memcpy/bm1688", 0.5},
                                    {"BM_gdma_round_trip/bm1688_strided", "BM_memcpy/bm1688", 0},
                                });
}
