// bdc_bench: BDC throughput of the emulator against independent host
// baselines over the same bytes, measured in the same run (issue 16).
//
// Each emulated command family (add, mul, a cast, exp, a 2x2 max-pool) runs
// on fp32, fp16 and bf16 tensors of [1, 64, 8, 256] elements (the pool reads
// [1, 64, 32, 64]), which stay in the host's L2 cache. Its baseline never
// calls the emulator's code:
//  - fp32: a plain loop the compiler vectorises (this file is built at -O3),
//    except the cast (fp32 -> fp16), whose baseline is the F16C loop;
//  - fp16 and bf16: a loop over the same bytes using the processor's own
//    F16C conversions (vcvtph2ps / vcvtps2ph, 8 lanes at a time), compiled
//    for AVX2 + F16C by target attributes; bf16 commands are compared with
//    the same fp16 loop (no x86 instruction converts bf16), so both 16-bit
//    formats must reach the same speed.
// Targets: fp32 >= 0.5 of its baseline, fp16 / bf16 >= 0.25 of the F16C
// loop. Small commands (64 channels x 16 elements, 1 channel x 64
// elements, every check on) are reported in commands per second; the
// 64 x 16 one has an absolute target of 2 M commands/s.
//
// Exit status: 0 every target met, 1 one missed (a WARNING line names it),
// 2 a benchmark errored or a number is missing. .ci/run relies on it.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "bench/ratio_reporter.h"
#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace {

// ---- the emulated commands ----------------------------------------------------

enum class Op { add, mul, cast, exp, max_pool };

// Per-NPU local addresses of the operands (bm1684x and bm1688 have at
// least 128 KiB per NPU).
constexpr local_addr_t kSrc0 = 0, kSrc1 = 16 << 10, kDst = 32 << 10, kWork0 = 48 << 10, kWork1 = 64 << 10,
                       kCoeff = 96 << 10;

struct Job {
  Op op;
  data_type_t dtype;
  dim4 shape;
  int repeat;
};

// The data every command reads: a constant (the values do not change the
// emulator's speed; exp gets an ordinary argument).
void fill(local_addr_t addr, const dim4 &shape, data_type_t dtype, float value) {
  scalar_t c{};
  if (dtype == DT_FP32) c.f32 = value;
  else if (dtype == DT_FP16) c.u16 = 0x3c00 + uint16_t(value * 100);  // ~1.0 .. 2.0
  else c.u16 = 0x3f80 + uint16_t(value * 10);
  tpu_bdc_set_C(addr, c, &shape, nullptr, dtype);
}

// The cast of each dtype: fp32 narrows to fp16, fp16 and bf16 widen to fp32.
data_type_t cast_target(data_type_t dtype) { return dtype == DT_FP32 ? DT_FP16 : DT_FP32; }

// The operands, once before the timed runs (local memory keeps them from
// one cmodel_run to the next, and the baselines do not refill their
// inputs either); only the commands measured are timed.
void setup_kernel(const void *arg) {
  const auto &job = *static_cast<const Job *>(arg);
  fill(kSrc0, job.shape, job.dtype, 0.5f);
  if (job.op == Op::add || job.op == Op::mul) fill(kSrc1, job.shape, job.dtype, 0.25f);
  if (job.op == Op::exp) tpu_bdc_load_fp_exp_coeff(kCoeff, job.dtype);
}

void job_kernel(const void *arg) {
  const auto &job = *static_cast<const Job *>(arg);
  const dim2 kernel = {2, 2}, stride = {2, 2}, dilation = {1, 1};
  const padding_t padding = {0, 0, 0, 0};
  const scalar_t pad{};
  for (int i = 0; i < job.repeat; ++i) switch (job.op) {
      case Op::add: tpu_bdc_fp_add(kDst, kSrc0, kSrc1, &job.shape, nullptr, nullptr, nullptr, job.dtype); break;
      case Op::mul: tpu_bdc_fp_mul(kDst, kSrc0, kSrc1, &job.shape, nullptr, nullptr, nullptr, job.dtype); break;
      case Op::cast:
        tpu_bdc_cast(kDst, kSrc0, &job.shape, nullptr, nullptr, cast_target(job.dtype), job.dtype, RM_HALF_TO_EVEN);
        break;
      case Op::exp: tpu_bdc_fp_exp(kDst, kSrc0, kWork0, kWork1, kCoeff, &job.shape, job.dtype); break;
      case Op::max_pool:
        tpu_bdc_fp_max_pool2d(kDst, kSrc0, &job.shape, &kernel, &padding, &stride, &dilation, job.dtype, pad);
        break;
    }
}

int64_t elements(const dim4 &s) { return int64_t(s.n) * s.c * s.h * s.w; }

constexpr dim4 kShape = {1, 64, 8, 256};      // element-wise commands
constexpr dim4 kPoolShape = {1, 64, 32, 64};  // max-pool input: as many elements

dim4 shape_of(Op op) { return op == Op::max_pool ? kPoolShape : kShape; }

// Elements (of the input) per second.
void BM_emu(benchmark::State &state, Op op, data_type_t dtype, const char *chip) {
  if (cmodel_open(chip) != 0) return state.SkipWithError(cmodel_last_error());
  const Job job{op, dtype, shape_of(op), 16};
  if (cmodel_run(setup_kernel, &job) != 0) return state.SkipWithError(cmodel_last_error());
  for (auto _ : state)
    if (cmodel_run(job_kernel, &job) != 0) {
      state.SkipWithError(cmodel_last_error());
      break;
    }
  state.SetItemsProcessed(int64_t(state.iterations()) * job.repeat * elements(job.shape));
  cmodel_close();
}

// Commands per second for one small shape (an add, every check on). The
// operands sit at 0, 16 KiB and 32 KiB of each NPU, as kernels place them,
// so a 64-channel command touches one short row at one offset on every NPU
// (see Memory::npu_pitch for how the host lays the NPUs out).
void BM_small(benchmark::State &state, dim4 shape, data_type_t dtype) {
  if (cmodel_open("bm1684x") != 0) return state.SkipWithError(cmodel_last_error());
  const Job job{Op::add, dtype, shape, 2000};
  if (cmodel_run(setup_kernel, &job) != 0) return state.SkipWithError(cmodel_last_error());
  for (auto _ : state)
    if (cmodel_run(job_kernel, &job) != 0) {
      state.SkipWithError(cmodel_last_error());
      break;
    }
  state.SetItemsProcessed(int64_t(state.iterations()) * job.repeat);
  cmodel_close();
}

// ---- fp32 baselines: plain loops ------------------------------------------------

#define BENCH_F16C __attribute__((target("avx2,f16c"), noinline))

// fp32 -> fp16 through F16C, 8 at a time: the fp32 cast's baseline.
BENCH_F16C void narrow_f16c(uint16_t *__restrict d, const float *__restrict a, int64_t n) {
  for (int64_t i = 0; i < n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(d + i), _mm256_cvtps_ph(_mm256_loadu_ps(a + i), _MM_FROUND_TO_NEAREST_INT));
}

struct Fp32Data {
  std::vector<float> a, b, d;
  explicit Fp32Data(int64_t n) : a(size_t(n)), b(size_t(n)), d(size_t(n)) {
    for (int64_t i = 0; i < n; ++i) a[size_t(i)] = 1.0f + float(i % 97) / 97, b[size_t(i)] = 0.25f + float(i % 89) / 89;
  }
};

__attribute__((noinline)) void loop_fp32(Op op, float *__restrict d, const float *__restrict a,
                                         const float *__restrict b, int64_t n) {
  switch (op) {
    case Op::add: for (int64_t i = 0; i < n; ++i) d[i] = a[i] + b[i]; break;
    case Op::mul: for (int64_t i = 0; i < n; ++i) d[i] = a[i] * b[i]; break;
    case Op::exp: for (int64_t i = 0; i < n; ++i) d[i] = std::exp(a[i]); break;
    case Op::cast: narrow_f16c(reinterpret_cast<uint16_t *>(d), a, n); break;
    case Op::max_pool: {  // 2x2, stride 2, over [64][32][64]
      const int h = kPoolShape.h, w = kPoolShape.w;
      for (int64_t c = 0; c < n / (h * w); ++c)
        for (int y = 0; y < h / 2; ++y) {
          const float *r0 = a + (c * h + 2 * y) * w, *r1 = r0 + w;
          float *o = d + (c * (h / 2) + y) * (w / 2);
          for (int x = 0; x < w / 2; ++x)
            o[x] = std::max(std::max(r0[2 * x], r0[2 * x + 1]), std::max(r1[2 * x], r1[2 * x + 1]));
        }
      break;
    }
  }
}

// ---- fp16 baselines: F16C loops ---------------------------------------------------

inline __attribute__((target("avx2,f16c"), always_inline)) __m256 load8(const uint16_t *p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
}
inline __attribute__((target("avx2,f16c"), always_inline)) void store8(uint16_t *p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i *>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

BENCH_F16C void loop_f16c(Op op, uint16_t *__restrict d, const uint16_t *__restrict a, const uint16_t *__restrict b,
                          int64_t n) {
  switch (op) {
    case Op::add: for (int64_t i = 0; i < n; i += 8) store8(d + i, _mm256_add_ps(load8(a + i), load8(b + i))); break;
    case Op::mul: for (int64_t i = 0; i < n; i += 8) store8(d + i, _mm256_mul_ps(load8(a + i), load8(b + i))); break;
    case Op::cast:  // fp16 -> fp32
      for (int64_t i = 0; i < n; i += 8) _mm256_storeu_ps(reinterpret_cast<float *>(d) + i, load8(a + i));
      break;
    case Op::exp:
      for (int64_t i = 0; i < n; i += 8) {
        alignas(32) float v[8];
        _mm256_store_ps(v, load8(a + i));
        for (float &x : v) x = std::exp(x);
        store8(d + i, _mm256_load_ps(v));
      }
      break;
    case Op::max_pool: {  // 2x2, stride 2: 16 inputs of two rows -> 8 outputs
      const int h = kPoolShape.h, w = kPoolShape.w;
      for (int64_t c = 0; c < n / (h * w); ++c)
        for (int y = 0; y < h / 2; ++y) {
          const uint16_t *r0 = a + (c * h + 2 * y) * w, *r1 = r0 + w;
          uint16_t *o = d + (c * (h / 2) + y) * (w / 2);
          for (int x = 0; x < w; x += 16) {
            const __m256 lo = _mm256_max_ps(load8(r0 + x), load8(r1 + x));
            const __m256 hi = _mm256_max_ps(load8(r0 + x + 8), load8(r1 + x + 8));
            const __m256 pairs = _mm256_max_ps(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)),
                                               _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
            // Lanes come out as (lo 0-3, hi 0-3 | lo 4-7, hi 4-7) in 64-bit pairs: reorder.
            store8(o + x / 2, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0))));
          }
        }
      break;
    }
  }
}

struct HalfData {
  std::vector<uint16_t> a, b, d;
  explicit HalfData(int64_t n) : a(size_t(n)), b(size_t(n)), d(size_t(2 * n)) {  // d also holds fp32 casts
    for (int64_t i = 0; i < n; ++i) a[size_t(i)] = uint16_t(0x3c00 + i % 97), b[size_t(i)] = uint16_t(0x3400 + i % 89);
  }
};

void BM_base_fp32(benchmark::State &state, Op op) {
  const int64_t n = elements(shape_of(op));
  Fp32Data data(n);
  for (auto _ : state) {
    loop_fp32(op, data.d.data(), data.a.data(), data.b.data(), n);
    benchmark::DoNotOptimize(data.d.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * n);
}

void BM_base_f16c(benchmark::State &state, Op op) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("f16c"))
    return state.SkipWithError("this host has no F16C + AVX2 for the baseline");
  const int64_t n = elements(shape_of(op));
  HalfData data(n);
  for (auto _ : state) {
    loop_f16c(op, data.d.data(), data.a.data(), data.b.data(), n);
    benchmark::DoNotOptimize(data.d.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * n);
}

#define EMU(op, dt, name, chip) \
  BENCHMARK_CAPTURE(BM_emu, op##_##name##_##chip, Op::op, dt, #chip)->Unit(benchmark::kMicrosecond)
#define FAMILY(op)                                                                 \
  BENCHMARK_CAPTURE(BM_base_fp32, op, Op::op)->Unit(benchmark::kMicrosecond);      \
  BENCHMARK_CAPTURE(BM_base_f16c, op, Op::op)->Unit(benchmark::kMicrosecond);      \
  EMU(op, DT_FP32, fp32, bm1684x);                                                 \
  EMU(op, DT_FP16, fp16, bm1684x);                                                 \
  EMU(op, DT_BFP16, bf16, bm1684x)

FAMILY(add);
FAMILY(mul);
FAMILY(cast);
FAMILY(exp);
FAMILY(max_pool);
EMU(add, DT_FP32, fp32, bm1688);
EMU(add, DT_FP16, fp16, bm1688);

BENCHMARK_CAPTURE(BM_small, 64x16_fp32, dim4{1, 64, 1, 16}, DT_FP32)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_small, 1x64_fp32, dim4{1, 1, 1, 64}, DT_FP32)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_small, 64x16_fp16, dim4{1, 64, 1, 16}, DT_FP16)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_small, 1x64_fp16, dim4{1, 1, 1, 64}, DT_FP16)->Unit(benchmark::kMicrosecond);

std::vector<bench::Ratio> ratios() {
  std::vector<bench::Ratio> r;
  for (const char *op : {"add", "mul", "cast", "exp", "max_pool"}) {
    const std::string o = op;
    r.push_back({"BM_emu/" + o + "_fp32_bm1684x", "BM_base_fp32/" + o, 0.5});
    r.push_back({"BM_emu/" + o + "_fp16_bm1684x", "BM_base_f16c/" + o, 0.25});
    r.push_back({"BM_emu/" + o + "_bf16_bm1684x", "BM_base_f16c/" + o, 0.25});
  }
  r.push_back({"BM_emu/add_fp32_bm1688", "BM_base_fp32/add", 0.5});
  r.push_back({"BM_emu/add_fp16_bm1688", "BM_base_f16c/add", 0.25});
  // Absolute: commands per second (no baseline).
  r.push_back({"BM_small/64x16_fp32", "", 2e6});
  r.push_back({"BM_small/1x64_fp32", "", 0});
  r.push_back({"BM_small/64x16_fp16", "", 0});
  r.push_back({"BM_small/1x64_fp16", "", 0});
  return r;
}

}  // namespace

int main(int argc, char **argv) { return bench::run_with_ratios(argc, argv, ratios()); }
