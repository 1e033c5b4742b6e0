// mm_bench: matrix multiply and convolution speed of the emulator.
//
// Target (issue 13, item 7): tpu_bdc_fp_mm in FP32, 256 x 256 x 256 with
// every operand already in local memory, runs at no less than a quarter of
// the multiply-accumulates per second of a single-threaded host GEMM of the
// same size measured in the same run (OpenBLAS cblas_sgemm, one thread).
// Reported without a target: the same product on bm1688, and
// tpu_bdc_fp_conv2d FP32 3 x 3 (64 -> 64 channels, 32 x 32, padding 1) in
// MACs per second against a naive host loop of the same convolution.
//
// Throughput is in items per second, one item being one multiply-accumulate.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "bench/host_sgemm.h"
#include "bench/ratio_reporter.h"
#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace {

constexpr int kMm = 256;  // M = K = N

std::vector<float> random_values(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float &x : v) x = uniform(rng);
  return v;
}

global_addr_t upload(const std::vector<float> &values) {
  const std::uint64_t bytes = values.size() * sizeof(float);
  const global_addr_t addr = cmodel_global_alloc(bytes);
  cmodel_global_write(addr, values.data(), bytes);
  return addr;
}

// ---- fp_mm ------------------------------------------------------------------

// Left, right and output (1, 256, 1, 256) each, one row per channel from NPU 0.
struct MmLayout {
  local_addr_t left = 0, right = 0, output = 0;
  global_addr_t left_g = 0, right_g = 0;
};

void mm_load_kernel(const void *arg) {
  const auto *p = static_cast<const MmLayout *>(arg);
  const dim4 shape = {1, kMm, 1, kMm};
  tpu_gdma_cpy_S2L(p->left, p->left_g, &shape, nullptr, nullptr, DT_FP32);
  tpu_gdma_cpy_S2L(p->right, p->right_g, &shape, nullptr, nullptr, DT_FP32);
}

void mm_kernel(const void *arg) {
  const auto *p = static_cast<const MmLayout *>(arg);
  tpu_bdc_fp_mm(p->output, p->left, p->right, kMm, kMm, kMm, DT_FP32, DT_FP32, false);
}

void BM_fp_mm(benchmark::State &state, const char *chip) {
  if (cmodel_open(chip) != 0) {
    state.SkipWithError(cmodel_last_error());
    return;
  }
  MmLayout p;
  // Matrix bytes per NPU, rounded up to a bank-friendly boundary.
  const int npus = std::string(chip) == "bm1684x" ? 64 : 32;
  const local_addr_t bytes = local_addr_t((kMm + npus - 1) / npus * kMm * 4);
  p.right = (bytes + 4095) / 4096 * 4096;
  p.output = 2 * p.right;
  p.left_g = upload(random_values(std::size_t(kMm) * kMm, 1));
  p.right_g = upload(random_values(std::size_t(kMm) * kMm, 2));
  if (cmodel_run(mm_load_kernel, &p) != 0) state.SkipWithError(cmodel_last_error());
  for (auto _ : state)
    if (cmodel_run(mm_kernel, &p) != 0) {
      state.SkipWithError(cmodel_last_error());
      break;
    }
  state.SetItemsProcessed(int64_t(state.iterations()) * kMm * kMm * kMm);
  cmodel_close();
}

void BM_cblas_sgemm_1thread(benchmark::State &state) {
  bench::host_sgemm_single_thread();
  const std::vector<float> a = random_values(std::size_t(kMm) * kMm, 1), b = random_values(std::size_t(kMm) * kMm, 2);
  std::vector<float> c(std::size_t(kMm) * kMm);
  for (auto _ : state) {
    bench::host_sgemm(kMm, a.data(), b.data(), c.data());
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * kMm * kMm * kMm);
}

// ---- fp_conv2d 3 x 3 ------------------------------------------------------------

constexpr int kConvC = 64, kConvH = 32, kConvW = 32, kConvK = 3;
constexpr int64_t kConvMacs = int64_t(kConvC) * kConvH * kConvW * kConvC * kConvK * kConvK;

// Input and output (1, 64, 32, 32) aligned; weight (1, 64, 64, 9) compact
// (FP32: P = 1, one row of 64 * 9 weights per output channel).
struct ConvLayout {
  local_addr_t input = 0, weight = 0, output = 0;
  global_addr_t input_g = 0, weight_g = 0;
};

void conv_load_kernel(const void *arg) {
  const auto *p = static_cast<const ConvLayout *>(arg);
  const dim4 in = {1, kConvC, kConvH, kConvW}, w = {1, kConvC, kConvC, kConvK * kConvK};
  tpu_gdma_cpy_S2L(p->input, p->input_g, &in, nullptr, nullptr, DT_FP32);
  const dim4 compact = {kConvC * kConvC * kConvK * kConvK, kConvC * kConvK * kConvK, kConvK * kConvK, 1};
  tpu_gdma_cpy_S2L(p->weight, p->weight_g, &w, &compact, nullptr, DT_FP32);
}

void conv_kernel(const void *arg) {
  const auto *p = static_cast<const ConvLayout *>(arg);
  const dim4 in = {1, kConvC, kConvH, kConvW};
  const dim2 kernel = {kConvK, kConvK}, stride = {1, 1}, dilation = {1, 1};
  const padding_t pad = {1, 1, 1, 1};
  tpu_bdc_fp_conv2d(p->output, p->input, p->weight, 0, &in, nullptr, kConvC, &kernel, &pad, &stride, &dilation,
                    DT_FP32, DT_FP32, false, false);
}

void BM_fp_conv2d_3x3(benchmark::State &state, const char *chip) {
  if (cmodel_open(chip) != 0) {
    state.SkipWithError(cmodel_last_error());
    return;
  }
  ConvLayout p;
  p.weight = 32768;
  p.output = 65536;
  p.input_g = upload(random_values(std::size_t(kConvC) * kConvH * kConvW, 3));
  p.weight_g = upload(random_values(std::size_t(kConvC) * kConvC * kConvK * kConvK, 4));
  if (cmodel_run(conv_load_kernel, &p) != 0) state.SkipWithError(cmodel_last_error());
  for (auto _ : state)
    if (cmodel_run(conv_kernel, &p) != 0) {
      state.SkipWithError(cmodel_last_error());
      break;
    }
  state.SetItemsProcessed(int64_t(state.iterations()) * kConvMacs);
  cmodel_close();
}

// The same convolution as a plain loop on the host: fp32, zero padding.
void BM_host_conv2d_3x3(benchmark::State &state) {
  const std::vector<float> x = random_values(std::size_t(kConvC) * kConvH * kConvW, 3),
                           w = random_values(std::size_t(kConvC) * kConvC * kConvK * kConvK, 4);
  std::vector<float> y(std::size_t(kConvC) * kConvH * kConvW);
  for (auto _ : state) {
    for (int o = 0; o < kConvC; ++o)
      for (int i = 0; i < kConvH; ++i)
        for (int j = 0; j < kConvW; ++j) {
          float acc = 0;
          for (int c = 0; c < kConvC; ++c)
            for (int p = 0; p < kConvK; ++p)
              for (int q = 0; q < kConvK; ++q) {
                const int u = i + p - 1, v = j + q - 1;
                if (u < 0 || u >= kConvH || v < 0 || v >= kConvW) continue;
                acc += x[(std::size_t(c) * kConvH + u) * kConvW + v] *
                       w[((std::size_t(o) * kConvC + c) * kConvK + p) * kConvK + q];
              }
          y[(std::size_t(o) * kConvH + i) * kConvW + j] = acc;
        }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * kConvMacs);
}

BENCHMARK(BM_cblas_sgemm_1thread)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_fp_mm, bm1684x_fp32_256, "bm1684x")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_fp_mm, bm1688_fp32_256, "bm1688")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_host_conv2d_3x3)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_fp_conv2d_3x3, bm1684x_fp32, "bm1684x")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_fp_conv2d_3x3, bm1688_fp32, "bm1688")->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char **argv) {
  return bench::run_with_ratios(argc, argv,
                                {
                                    {"BM_fp_mm/bm1684x_fp32_256", "BM_cblas_sgemm_1thread", 0.25},
                                    {"BM_fp_mm/bm1688_fp32_256", "BM_cblas_sgemm_1thread", 0},
                                    {"BM_fp_conv2d_3x3/bm1684x_fp32", "BM_host_conv2d_3x3", 0},
                                    {"BM_fp_conv2d_3x3/bm1688_fp32", "BM_host_conv2d_3x3", 0},
                                });
}
