// bdc_conv_test: convolution and depthwise convolution (family I:
// tpu_bdc_fp_conv2d*, tpu_bdc_fp_*depthwise*, tpu_bdc_int8_*conv2d*,
// tpu_bdc_int8_*depthwise*, the fused requant forms; cmodel/bdc/conv.h) on
// both chips.
//
// Every operand is written here from the tier-3 spec's layouts: the weight
// in the P-IC packing (§1.2) built from a plain [oc][ic][kh][kw] array with
// P from the spec's table, compact per-channel vectors, aligned or strided
// inputs. The references are written here too, from §3.1 (window
// geometry), §1.6 (float accumulation) and §1.4 / §1.5 (integer rounding
// and requant):
//  - float: the documented fp32 rule, compared bit for bit over the whole
//    local memory, and a long-double direct convolution within the error
//    bound of fp32 accumulation plus one rounding into the output dtype;
//  - integer: an exact int64 direct convolution.
// Transposed convolutions are also checked against a scatter-form
// reference that never inserts or rotates. Every check's message is
// asserted.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "support/bdc_helpers.h"
#include "support/run_body.h"
#include "support/test_support.h"

namespace {

using namespace local_model;
using namespace bdc_helpers;

// ---- geometry (tier-3 §3.1) ---------------------------------------------------------------

struct Geo {
  int n = 1, ic = 1, ih = 1, iw = 1, oc = 1, kh = 1, kw = 1;
  int sh = 1, sw = 1, dh = 1, dw = 1, ins_h = 0, ins_w = 0;
  int pt = 0, pb = 0, pl = 0, pr = 0;
  bool rotate = false, depthwise = false;

  static int extent(int in, int ins, int lo, int hi, int k, int d, int s) {
    const int padded = (in - 1) * (ins + 1) + 1 + lo + hi, span = d * (k - 1) + 1;
    return padded < span ? 0 : (padded - span) / s + 1;
  }
  int oh() const { return extent(ih, ins_h, pt, pb, kh, dh, sh); }
  int ow() const { return extent(iw, ins_w, pl, pr, kw, dw, sw); }
  int outc() const { return depthwise ? ic : oc; }
  dim4 in_shape() const { return {n, ic, ih, iw}; }
  dim4 out_shape() const { return {n, outc(), oh(), ow()}; }
  dim2 kernel() const { return {kh, kw}; }
  dim2 stride() const { return {sh, sw}; }
  dim2 dilation() const { return {dh, dw}; }
  dim2 insert() const { return {ins_h, ins_w}; }
  padding_t padding() const { return {pt, pb, pl, pr}; }
  std::string text() const {
    return "n" + std::to_string(n) + " ic" + std::to_string(ic) + " " + std::to_string(ih) + "x" + std::to_string(iw) +
           " oc" + std::to_string(outc()) + " k" + std::to_string(kh) + "x" + std::to_string(kw) + " s" +
           std::to_string(sh) + "," + std::to_string(sw) + " d" + std::to_string(dh) + "," + std::to_string(dw) +
           " ins" + std::to_string(ins_h) + "," + std::to_string(ins_w) + " pad" + std::to_string(pt) + "," +
           std::to_string(pb) + "," + std::to_string(pl) + "," + std::to_string(pr) + (rotate ? " rotated" : "");
  }
};

enum class Src { input, inserted, padding };

// Along one axis: what output o, tap t reads.
Src locate(int o, int t, int stride, int dil, int pad, int in, int ins, int &index) {
  const int u = o * stride + t * dil - pad, extent = (in - 1) * (ins + 1) + 1;
  if (u < 0 || u >= extent) return Src::padding;
  if (u % (ins + 1) != 0) return Src::inserted;
  index = u / (ins + 1);
  return Src::input;
}

// f(i, where, h, w, kp, kq) for every term of output (o, y, x), in the
// documented order: input channel i, then p, then q; (kp, kq) the weight
// tap read (rotated for the deconv forms).
template <typename F>
void for_each_term(const Geo &g, int o, int y, int x, F &&f) {
  const int first = g.depthwise ? o : 0, last = g.depthwise ? o + 1 : g.ic;
  for (int i = first; i < last; ++i)
    for (int p = 0; p < g.kh; ++p)
      for (int q = 0; q < g.kw; ++q) {
        int h = 0, w = 0;
        const Src r = locate(y, p, g.sh, g.dh, g.pt, g.ih, g.ins_h, h);
        const Src c = locate(x, q, g.sw, g.dw, g.pl, g.iw, g.ins_w, w);
        const Src where = (r == Src::padding || c == Src::padding)     ? Src::padding
                          : (r == Src::inserted || c == Src::inserted) ? Src::inserted
                                                                        : Src::input;
        const int kp = g.rotate ? g.kh - 1 - p : p, kq = g.rotate ? g.kw - 1 - q : q;
        f(i, where, h, w, kp, kq);
      }
}

// ---- operands in local memory ---------------------------------------------------------------

// Input-channel parallelism P(t) (tier-3 §1.1 table).
int parallel(const Chip &chip, data_type_t t) {
  const bool big = chip.npu == 64;
  switch (esize(t)) {
    case 4: return 1;
    case 2: return big ? 32 : 16;
    default: return big ? 64 : 32;
  }
}

size_t byte_at(const Chip &chip, int lane, uint32_t offset) { return size_t(lane) * chip.lmem + offset; }

void poke(size_t at, uint32_t bits, int bytes) { std::memcpy(local_at(at), &bits, size_t(bytes)); }

// The P-IC weight (§1.2) of output channels starting on lane `s`, from
// bits[o][i][p][q].
void write_conv_weight(const Chip &chip, int s, uint32_t offset, const Geo &g, data_type_t t,
                       const std::vector<uint32_t> &bits) {
  const int P = parallel(chip, t), taps = g.kh * g.kw;
  const int64_t row = int64_t(div_up(g.ic, P) * P) * taps;
  for (int o = 0; o < g.oc; ++o)
    for (int i = 0; i < g.ic; ++i)
      for (int tap = 0; tap < taps; ++tap) {
        const int64_t e = P == 1 ? int64_t(i) * taps + tap : int64_t(i / P) * taps * P + int64_t(tap) * P + i % P;
        const int lane = (s + o) % chip.npu, r = (s + o) / chip.npu;
        poke(byte_at(chip, lane, offset) + size_t(esize(t) * (r * row + e)),
             bits[(size_t(o) * g.ic + i) * taps + tap], esize(t));
      }
}

// A compact (1, C, 1, w) tensor starting on lane s: element (c, j) from bits[c * w + j].
void write_vector(const Chip &chip, int s, uint32_t offset, int C, int w, data_type_t t,
                  const std::vector<uint32_t> &bits) {
  for (int c = 0; c < C; ++c)
    for (int j = 0; j < w; ++j) {
      const int lane = (s + c) % chip.npu, r = (s + c) / chip.npu;
      poke(byte_at(chip, lane, offset) + size_t(esize(t)) * (size_t(r) * w + j), bits[size_t(c) * w + j], esize(t));
    }
}

// The depthwise weight: compact (1, C, kh, kw) on lane s.
void write_depthwise_weight(const Chip &chip, int s, uint32_t offset, const Geo &g, data_type_t t,
                            const std::vector<uint32_t> &bits) {
  write_vector(chip, s, offset, g.ic, g.kh * g.kw, t, bits);
}

// An input tensor: aligned (NULL stride) or with gaps between rows,
// channels and batches.
template <typename Rng>
Tensor place_input(Rng &rng, const Chip &chip, int lane, uint32_t offset, const Geo &g, data_type_t t, bool strided) {
  if (!strided) return aligned(chip, lane, offset, g.in_shape(), t);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Tensor x{local_addr_t(lane * chip.lmem + offset + uint32_t(esize(t) * pick(0, 3))), g.in_shape(), {}, t, false};
  x.stride.w = 1;
  x.stride.h = g.iw + pick(0, 2);
  x.stride.c = g.ih * x.stride.h + pick(0, 3);
  x.stride.n = x.stride.c * int(div_up(lane + g.ic, chip.npu)) + pick(0, 5);
  return x;
}

// ---- float -------------------------------------------------------------------------------------

// The P-IC weight as values w[o][i][p][q] and the input as x[n][i][h][w].
struct FpData {
  std::vector<float> x, w, old, bias;
  float C = 0;
  bool constant = false;
  double X(const Geo &g, int n, int i, int h, int w) const {
    return x[((size_t(n) * g.ic + i) * g.ih + h) * g.iw + w];
  }
  double W(const Geo &g, int o, int i, int p, int q) const {
    if (constant) return C;
    return g.depthwise ? w[(size_t(o) * g.kh + p) * g.kw + q] : w[((size_t(o) * g.ic + i) * g.kh + p) * g.kw + q];
  }
};

struct FpFlags {
  bool bias = false, result_add = false, relu = false;
};

// The documented rule (§1.6) in fp32, one rounding per step (volatile: no
// fused multiply-add, no extended precision).
float fp_rule(const Geo &g, const FpData &d, const FpFlags &f, int n, int o, int y, int x) {
  volatile float acc = f.result_add ? d.old[((size_t(n) * g.outc() + o) * g.oh() + y) * g.ow() + x] : 0.0f;
  for_each_term(g, o, y, x, [&](int i, Src where, int h, int w, int kp, int kq) {
    const float v = where == Src::input ? float(d.X(g, n, i, h, w)) : 0.0f;
    volatile float p = v * float(d.W(g, o, i, kp, kq));
    acc = acc + p;
  });
  if (f.bias) acc = acc + d.bias[size_t(o)];
  if (f.relu && !(acc > 0)) acc = 0.0f;
  return acc;
}

// The exact value and the sum of |terms|, in long double.
struct Exact {
  long double value = 0, magnitude = 0;
  int terms = 0;
};
Exact fp_exact(const Geo &g, const FpData &d, const FpFlags &f, int n, int o, int y, int x) {
  Exact e;
  if (f.result_add) e.value = e.magnitude = d.old[((size_t(n) * g.outc() + o) * g.oh() + y) * g.ow() + x];
  e.magnitude = fabsl(e.magnitude);
  for_each_term(g, o, y, x, [&](int i, Src where, int h, int w, int kp, int kq) {
    if (where != Src::input) return;
    const long double t = (long double)d.X(g, n, i, h, w) * d.W(g, o, i, kp, kq);
    e.value += t;
    e.magnitude += fabsl(t);
    ++e.terms;
  });
  if (f.bias) {
    e.value += d.bias[size_t(o)];
    e.magnitude += fabsl((long double)d.bias[size_t(o)]);
  }
  if (f.relu && e.value < 0) e.value = 0;
  return e;
}

// fp32 accumulation of k terms errs by at most about (k + 2) 2^-24 of the
// sum of magnitudes; the final rounding by half an ulp of the output dtype
// (relative), or half its smallest subnormal.
long double tolerance(const Exact &e, data_type_t out) {
  const long double unit = out == DT_FP32 ? 0x1p-24L : out == DT_FP16 ? 0x1p-11L : 0x1p-8L;
  const long double tiny = out == DT_FP16 ? 0x1p-25L : out == DT_FP32 ? 0x1p-150L : 0x1p-134L;
  return (e.terms + 3) * 0x1p-24L * e.magnitude + unit * fabsl(e.value) + tiny;
}

// Small values so fp16 / bf16 products and sums stay in range; zeros of
// both signs now and then.
template <typename Rng>
uint32_t small_float(Rng &rng, data_type_t t) {
  return random_float_bits(rng, t, 2);
}

// Offsets of the regions in every lane (bm1688 has 128 KiB per lane).
constexpr uint32_t input_off = 0, output_off = 0x4000, weight_off = 0xc000, bias_off = 0x10000, extra_off = 0x14000;

enum FpVariant { fp_conv2d, fp_kernel_const, fp_with_relu, fp_long_instr, fp_for_deconv2d, fp_with_rescale,
                 fp_variant_count };
const char *const fp_names[] = {"fp_conv2d", "fp_conv2d_kernel_const", "fp_conv2d_with_relu", "fp_conv2d_long_instr",
                                "fp_conv2d_for_deconv2d", "fp_conv2d_with_rescale"};

class BdcConv : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }
  Chip chip;

  template <typename Rng>
  Geo random_geo(Rng &rng, bool deconv, bool depthwise, int max_ic) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (;;) {
      Geo g;
      g.depthwise = depthwise;
      g.n = pick(1, 2);
      g.ic = pick(0, 3) == 0 ? pick(1, max_ic) : pick(1, 5);
      g.ih = pick(1, 6);
      g.iw = pick(1, 7);
      g.oc = pick(0, 3) == 0 ? pick(chip.npu - 2, chip.npu + 3) : pick(1, 6);
      g.kh = pick(1, 3);
      g.kw = pick(1, 3);
      g.dh = pick(1, 2);
      g.dw = pick(1, 2);
      g.pt = pick(0, 2);
      g.pb = pick(0, 2);
      g.pl = pick(0, 2);
      g.pr = pick(0, 2);
      if (deconv) {
        g.rotate = true;
        g.ins_h = pick(0, 2);
        g.ins_w = pick(0, 2);
      } else {
        g.sh = pick(1, 3);
        g.sw = pick(1, 3);
      }
      if (g.oh() >= 1 && g.ow() >= 1) return g;
    }
  }

  // Places every operand of a float conv on random lanes, with random
  // values; returns the host copies.
  template <typename Rng>
  FpData place_fp(Rng &rng, const Geo &g, data_type_t in_t, data_type_t out_t, const FpFlags &f, int in_lane,
                  int out_lane, bool strided, bool constant, Tensor &x, data_type_t bias_t) {
    FpData d;
    x = place_input(rng, chip, in_lane, input_off, g, in_t, strided);
    d.x.resize(size_t(g.n) * g.ic * g.ih * g.iw);
    size_t k = 0;
    for_each_index(g.in_shape(), [&](int n, int c, int h, int w) {
      const uint32_t b = small_float(rng, in_t);
      set_bits(chip, x, n, c, h, w, b);
      d.x[k++] = decode(in_t, b);
    });
    d.constant = constant;
    if (constant) {
      d.C = decode(in_t, small_float(rng, in_t));
    } else {
      const size_t count = size_t(g.outc()) * (g.depthwise ? 1 : g.ic) * g.kh * g.kw;
      std::vector<uint32_t> bits(count);
      d.w.resize(count);
      for (size_t i = 0; i < count; ++i) {
        bits[i] = small_float(rng, in_t);
        d.w[i] = decode(in_t, bits[i]);
      }
      if (g.depthwise)
        write_depthwise_weight(chip, out_lane, weight_off, g, in_t, bits);
      else
        write_conv_weight(chip, out_lane, weight_off, g, in_t, bits);
    }
    if (f.bias) {
      std::vector<uint32_t> bits(size_t(g.outc()));
      d.bias.resize(bits.size());
      for (size_t i = 0; i < bits.size(); ++i) {
        bits[i] = small_float(rng, bias_t);
        d.bias[i] = decode(bias_t, bits[i]);
      }
      write_vector(chip, out_lane, bias_off, g.outc(), 1, bias_t, bits);
    }
    if (f.result_add) {
      const Tensor y = aligned(chip, out_lane, output_off, g.out_shape(), out_t);
      for_each_index(g.out_shape(), [&](int n, int c, int h, int w) {
        const uint32_t b = small_float(rng, out_t);
        set_bits(chip, y, n, c, h, w, b);
        d.old.push_back(decode(out_t, b));
      });
    }
    return d;
  }

  // Expected image and tolerance check of a float conv's output.
  void check_fp(const Geo &g, const FpData &d, const FpFlags &f, const Tensor &y, data_type_t out_t,
                std::vector<uint8_t> expected, const std::function<bool()> &call, const std::string &what) {
    for_each_index(g.out_shape(), [&](int n, int o, int yy, int xx) {
      put(expected, chip, y, n, o, yy, xx, encode(out_t, fp_rule(g, d, f, n, o, yy, xx)));
    });
    ASSERT_TRUE(call()) << what << ": " << cmodel_last_error();
    expect_local_memory(chip, expected, [&] { return what; });
    for_each_index(g.out_shape(), [&](int n, int o, int yy, int xx) {
      const Exact e = fp_exact(g, d, f, n, o, yy, xx);
      const long double got = decode(out_t, get_bits(chip, y, n, o, yy, xx));
      EXPECT_LE(fabsl(got - e.value), tolerance(e, out_t)) << what << " at " << n << "," << o << "," << yy << "," << xx;
    });
  }
};

// Every float conv function, each dtype and output dtype, random geometry
// (padding, stride, dilation, insertion), input lanes and strides, output
// lanes, bias, result_add, relu.
TEST_P(BdcConv, FloatConvFollowsTheRuleAndTheDirectConvolution) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const data_type_t types[] = {DT_FP32, DT_FP16, DT_BFP16};
  for (int iter = 0; iter < 30 * fp_variant_count; ++iter) {
    const int variant = iter % fp_variant_count;
    const data_type_t in_t = types[seeded.uniform(0, 2)];
    const data_type_t out_t = seeded.uniform(0, 1) ? in_t : DT_FP32;
    const data_type_t bias_t = variant == fp_with_rescale && seeded.uniform(0, 1) ? in_t : DT_FP32;
    const Geo g = random_geo(rng, variant == fp_for_deconv2d, false, 2 * parallel(chip, in_t) + 3);
    FpFlags f;
    f.bias = seeded.uniform(0, 1);
    f.result_add = seeded.uniform(0, 1);
    f.relu = (variant == fp_with_relu || variant == fp_with_rescale) && seeded.uniform(0, 1);
    const int in_lane = in_t == DT_FP32 ? seeded.uniform(0, chip.npu - 1) : 0;
    const int out_lane = seeded.uniform(0, chip.npu - 1);
    const bool strided = seeded.uniform(0, 2) == 0;
    Tensor x{};
    const FpData d = place_fp(rng, g, in_t, out_t, f, in_lane, out_lane, strided, variant == fp_kernel_const, x,
                              bias_t);
    const Tensor y = aligned(chip, out_lane, output_off, g.out_shape(), out_t);
    const local_addr_t W = out_lane * chip.lmem + weight_off, B = out_lane * chip.lmem + bias_off;
    const dim4 shape = g.in_shape();
    const dim4 *xs = x.api_stride();
    const dim2 k = g.kernel(), s = g.stride(), dl = g.dilation(), ins = g.insert();
    const padding_t pad = g.padding();
    scalar_t C{};
    C.u32 = encode(in_t, d.C);
    auto call = [&] {
      return test::run_kernel_body([&] {
        switch (variant) {
          case fp_conv2d:
            tpu_bdc_fp_conv2d(y.addr, x.addr, W, B, &shape, xs, g.oc, &k, &pad, &s, &dl, out_t, in_t, f.bias,
                              f.result_add);
            break;
          case fp_kernel_const:
            tpu_bdc_fp_conv2d_kernel_const(y.addr, x.addr, B, C, &shape, xs, g.oc, &k, &pad, &s, &dl, out_t, in_t,
                                           f.bias, f.result_add);
            break;
          case fp_with_relu:
            tpu_bdc_fp_conv2d_with_relu(y.addr, x.addr, W, B, &shape, xs, g.oc, &k, &pad, &s, &dl, out_t, in_t,
                                        f.bias, f.result_add, f.relu);
            break;
          case fp_long_instr:
            tpu_bdc_fp_conv2d_long_instr(y.addr, x.addr, W, B, &shape, xs, g.oc, &k, &pad, &s, &dl, out_t, in_t,
                                         f.bias, f.result_add);
            break;
          case fp_for_deconv2d:
            tpu_bdc_fp_conv2d_for_deconv2d(y.addr, x.addr, W, B, &shape, xs, g.oc, &k, &ins, &pad, &dl, out_t, in_t,
                                           f.bias, f.result_add);
            break;
          case fp_with_rescale:
            tpu_bdc_fp_conv2d_with_rescale(y.addr, x.addr, W, B, 0, &shape, xs, g.oc, &k, &pad, &s, &dl, out_t, in_t,
                                           in_t, bias_t, f.bias, f.result_add, f.relu, false, false);
            break;
        }
      });
    };
    const std::string what = std::string(fp_names[variant]) + " " + dtype_label(in_t) + "->" + dtype_label(out_t) +
                             " " + g.text() + (f.bias ? " bias" : "") + (f.result_add ? " result_add" : "") +
                             (f.relu ? " relu" : "") + (strided ? " strided" : "") + " lanes " +
                             std::to_string(in_lane) + "->" + std::to_string(out_lane) + " iteration " +
                             std::to_string(iter);
    check_fp(g, d, f, y, out_t, snapshot(chip), call, what);
    if (HasFailure()) return;
  }
}

// Every float depthwise function: fp_depthwise2d, fp_ins_depthwise,
// fp_depthwise_for_deconv2d (tensor and constant kernel),
// fp_depthwise2d_with_scale (without rescale).
TEST_P(BdcConv, FloatDepthwiseFollowsTheRuleAndTheDirectConvolution) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  const data_type_t types[] = {DT_FP32, DT_FP16, DT_BFP16};
  for (int iter = 0; iter < 120; ++iter) {
    const int variant = iter % 5;  // depthwise2d, ins, for_deconv, for_deconv const, with_scale
    const data_type_t in_t = types[seeded.uniform(0, 2)];
    const data_type_t out_t = variant == 4 && seeded.uniform(0, 1) ? DT_FP32 : in_t;
    const data_type_t bias_t = variant == 4 ? out_t : in_t;
    Geo g = random_geo(rng, variant == 2 || variant == 3, true, chip.npu + 5);
    if (variant == 1) {  // strides and insertion together
      g.ins_h = seeded.uniform(0, 2);
      g.ins_w = seeded.uniform(0, 2);
      if (g.oh() < 1 || g.ow() < 1) g.ins_h = g.ins_w = 0;
    }
    FpFlags f;
    f.bias = seeded.uniform(0, 1);
    f.relu = variant == 4 && seeded.uniform(0, 1);
    const int lane = seeded.uniform(0, chip.npu - 1);
    Tensor x{};
    const FpData d = place_fp(rng, g, in_t, out_t, f, lane, lane, false, variant == 3, x, bias_t);
    const Tensor y = aligned(chip, lane, output_off, g.out_shape(), out_t);
    const local_addr_t W = lane * chip.lmem + weight_off, B = lane * chip.lmem + bias_off;
    const dim4 shape = g.in_shape();
    const dim2 k = g.kernel(), s = g.stride(), dl = g.dilation(), ins = g.insert();
    const padding_t pad = g.padding();
    const local_addr_t weight_or_C = variant == 3 ? local_addr_t(encode(in_t, d.C)) : W;
    auto call = [&] {
      return test::run_kernel_body([&] {
        switch (variant) {
          case 0: tpu_bdc_fp_depthwise2d(y.addr, x.addr, W, B, &shape, &k, &pad, &s, &dl, in_t, f.bias); break;
          case 1: tpu_bdc_fp_ins_depthwise(y.addr, x.addr, W, B, &shape, &k, &pad, &s, &ins, &dl, in_t, f.bias); break;
          case 2:
          case 3:
            tpu_bdc_fp_depthwise_for_deconv2d(y.addr, x.addr, weight_or_C, B, &shape, &k, &ins, &pad, &dl, out_t, in_t,
                                              variant == 3, f.bias);
            break;
          case 4:
            tpu_bdc_fp_depthwise2d_with_scale(y.addr, x.addr, W, B, 0, &shape, &k, &pad, &s, &dl, out_t, in_t, in_t,
                                              bias_t, 1.0f, f.bias, f.relu, false, false);
            break;
        }
      });
    };
    const std::string what = "depthwise variant " + std::to_string(variant) + " " + dtype_label(in_t) + "->" +
                             dtype_label(out_t) + " " + g.text() + (f.bias ? " bias" : "") + (f.relu ? " relu" : "") +
                             " lane " + std::to_string(lane) + " iteration " + std::to_string(iter);
    check_fp(g, d, f, y, out_t, snapshot(chip), call, what);
    if (HasFailure()) return;
  }
}

// A transposed convolution of stride s, padding p, dilation d is one
// for_deconv2d call with insert s - 1, padding d (k - 1) - p, the same
// dilation and the forward weight (§3.1); checked against the scatter form
// y[o][iy s - p + kp d][ix s - p + kq d] += x[i][iy][ix] w[o][i][kp][kq],
// which neither inserts nor rotates. Integer-valued data: exact in fp32.
TEST_P(BdcConv, ForDeconv2dIsATransposedConvolution) {
  test::Seeded seeded;
  for (int iter = 0; iter < 16; ++iter) {
    const int s = seeded.uniform(1, 3), d = seeded.uniform(1, 2), k = seeded.uniform(1, 3);
    const int p = seeded.uniform(0, d * (k - 1));
    const int ic = seeded.uniform(1, 5), oc = seeded.uniform(1, 4), ih = seeded.uniform(1, 5), iw = seeded.uniform(1, 5);
    const int oh = (ih - 1) * s - 2 * p + d * (k - 1) + 1, ow = (iw - 1) * s - 2 * p + d * (k - 1) + 1;
    if (oh < 1 || ow < 1) continue;
    const bool depthwise = iter % 2 == 1;
    const int occ = depthwise ? ic : oc;
    const data_type_t t = iter % 4 < 2 ? DT_FP32 : DT_FP16;
    std::vector<float> x(size_t(ic) * ih * iw), w(size_t(occ) * (depthwise ? 1 : ic) * k * k);
    for (float &v : x) v = float(seeded.uniform(-4, 4));
    for (float &v : w) v = float(seeded.uniform(-4, 4));
    // The scatter form.
    std::vector<double> ref(size_t(occ) * oh * ow, 0.0);
    for (int o = 0; o < occ; ++o)
      for (int i = 0; i < ic; ++i) {
        if (depthwise && i != o) continue;
        for (int iy = 0; iy < ih; ++iy)
          for (int ix = 0; ix < iw; ++ix)
            for (int kp = 0; kp < k; ++kp)
              for (int kq = 0; kq < k; ++kq) {
                const int yy = iy * s - p + kp * d, xx = ix * s - p + kq * d;
                if (yy < 0 || yy >= oh || xx < 0 || xx >= ow) continue;
                const size_t wi = depthwise ? (size_t(o) * k + kp) * k + kq : ((size_t(o) * ic + i) * k + kp) * k + kq;
                ref[(size_t(o) * oh + yy) * ow + xx] += double(x[(size_t(i) * ih + iy) * iw + ix]) * w[wi];
              }
      }
    const Tensor X = aligned(chip, 0, input_off, {1, ic, ih, iw}, t), Y = aligned(chip, 0, output_off, {1, occ, oh, ow}, t);
    for_each_index(X.shape, [&](int, int c, int h, int ww) {
      set_bits(chip, X, 0, c, h, ww, encode(t, x[(size_t(c) * ih + h) * iw + ww]));
    });
    std::vector<uint32_t> wbits(w.size());
    for (size_t i = 0; i < w.size(); ++i) wbits[i] = encode(t, w[i]);
    Geo g;
    g.ic = ic;
    g.oc = oc;
    g.kh = g.kw = k;
    if (depthwise)
      write_vector(chip, 0, weight_off, ic, k * k, t, wbits);
    else
      write_conv_weight(chip, 0, weight_off, g, t, wbits);
    const dim4 shape{1, ic, ih, iw};
    const dim2 kernel{k, k}, insert{s - 1, s - 1}, dilation{d, d};
    const padding_t pad{d * (k - 1) - p, d * (k - 1) - p, d * (k - 1) - p, d * (k - 1) - p};
    ASSERT_TRUE(test::run_kernel_body([&] {
      if (depthwise)
        tpu_bdc_fp_depthwise_for_deconv2d(Y.addr, X.addr, weight_off, 0, &shape, &kernel, &insert, &pad, &dilation, t,
                                          t, false, false);
      else
        tpu_bdc_fp_conv2d_for_deconv2d(Y.addr, X.addr, weight_off, 0, &shape, nullptr, oc, &kernel, &insert, &pad,
                                       &dilation, t, t, false, false);
    })) << cmodel_last_error();
    for_each_index(Y.shape, [&](int, int o, int yy, int xx) {
      EXPECT_EQ(decode(t, get_bits(chip, Y, 0, o, yy, xx)), float(ref[(size_t(o) * oh + yy) * ow + xx]))
          << (depthwise ? "depthwise " : "conv ") << "s" << s << " d" << d << " k" << k << " p" << p << " at " << o
          << "," << yy << "," << xx;
    });
    if (HasFailure()) return;
  }
}

// Tier-3 §8 example 1, bm1684x FP16, ic 40, oc 70, 3x3: P = 32, a weight row
// of 64 x 9 = 576 elements; w[65][35][1][2] is on lane 1 at element
// 576 + 1 x 288 + 5 x 32 + 3 = 1027 (byte 2054). On bm1688 (P = 16, NPU 32,
// row 48 x 9 = 432): lane 1, row 2, element 2 x 432 + 2 x 144 + 5 x 16 + 3.
TEST_P(BdcConv, WorkedExampleWeightOffset) {
  const bool big = chip.npu == 64;
  const dim2 k{3, 3};
  if (big) {
    EXPECT_EQ(tpu_conv_kernel_size(70, 40, &k, DT_FP16), 2304);
    EXPECT_EQ(tpu_conv_kernel_size_per_oc(40, &k, DT_FP16), 1152);
  }
  EXPECT_EQ(tpu_get_ic_parallel(DT_FP16), big ? 32 : 16);
  const int element = big ? 1027 : 2 * 432 + 2 * 144 + 5 * 16 + 3;
  // Input: 40 channels of 3x3 ones except channel 35 = 2; a single non-zero
  // weight at the hand-computed position.
  const Tensor X = aligned(chip, 0, input_off, {1, 40, 3, 3}, DT_FP16);
  for_each_index(X.shape, [&](int, int c, int h, int w) { set_bits(chip, X, 0, c, h, w, to_fp16(c == 35 ? 2 : 1)); });
  // Every lane's weight rows zero (local memory starts with a fill pattern) but one.
  for (int lane = 0; lane < chip.npu; ++lane) std::memset(local_at(byte_at(chip, lane, weight_off)), 0, 4096);
  poke(byte_at(chip, 1, weight_off) + 2 * size_t(element), to_fp16(3), 2);
  const Tensor Y = aligned(chip, 0, output_off, {1, 70, 1, 1}, DT_FP32);
  const dim4 shape{1, 40, 3, 3};
  const dim2 one{1, 1};
  const padding_t none{0, 0, 0, 0};
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_bdc_fp_conv2d(Y.addr, X.addr, weight_off, 0, &shape, nullptr, 70, &k, &none, &one, &one, DT_FP32, DT_FP16,
                      false, false);
  })) << cmodel_last_error();
  for (int o = 0; o < 70; ++o) EXPECT_EQ(get<float>(chip, Y, 0, o, 0, 0), o == 65 ? 6.0f : 0.0f) << o;
}

// §1.6: fp32 accumulation in input-channel order: ((0 + 1) + 1e8) - 1e8 = 0.
TEST_P(BdcConv, AccumulatesInFp32InInputChannelOrder) {
  const Tensor X = aligned(chip, 0, input_off, {1, 3, 1, 1}, DT_FP32);
  const float v[3] = {1, 1e8f, -1e8f};
  for (int c = 0; c < 3; ++c) set<float>(chip, X, 0, c, 0, 0, v[c]);
  const Tensor Y = aligned(chip, 0, output_off, {1, 1, 1, 1}, DT_FP32);
  const dim4 shape{1, 3, 1, 1};
  const dim2 one{1, 1};
  const padding_t none{0, 0, 0, 0};
  scalar_t C{};
  C.f32 = 1;
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_bdc_fp_conv2d_kernel_const(Y.addr, X.addr, 0, C, &shape, nullptr, 1, &one, &none, &one, &one, DT_FP32, DT_FP32,
                                   false, false);
  })) << cmodel_last_error();
  EXPECT_EQ(get<float>(chip, Y, 0, 0, 0, 0), 0.0f);
}

// Cost: ceil(n oc oh ow ic kh kw / peak) + 16 (tier-3 §6); depthwise: the
// pool factor x kh x kw per EU pass of the output.
TEST_P(BdcConv, CostIsMacsOverPeak) {
  const bool big = chip.npu == 64;
  const dim4 shape{2, 20, 8, 8};
  const dim2 k{3, 3}, one{1, 1};
  const padding_t same{1, 1, 1, 1};
  for (data_type_t t : {DT_FP32, DT_FP16}) {
    scalar_t C{};
    ASSERT_TRUE(test::run_kernel_body([&] {
      tpu_bdc_fp_conv2d_kernel_const(output_off, input_off, 0, C, &shape, nullptr, 30, &k, &same, &one, &one, t, t,
                                     false, false);
    })) << cmodel_last_error();
    const double peak = t == DT_FP32 ? (big ? 1024 : 128) : (big ? 8192 : 2048);
    EXPECT_EQ(bdc_cycles(), std::ceil(2.0 * 30 * 8 * 8 * 20 * 9 / peak) + 16) << dtype_label(t);
  }
  scalar_t C{}, zero{};
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_bdc_int8_asym_quant_conv2d_kernel_const(output_off, input_off, C, zero, zero, &shape, nullptr, 30, &k, &same,
                                                &one, &one, DT_INT32, DT_INT8, DT_INT8, DT_INT8, false);
  })) << cmodel_last_error();
  EXPECT_EQ(bdc_cycles(), std::ceil(2.0 * 30 * 8 * 8 * 20 * 9 / (big ? 16384 : 4096)) + 16);
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_bdc_fp_depthwise2d(output_off, input_off, weight_off, 0, &shape, &k, &same, &one, &one, DT_FP32, false);
  })) << cmodel_last_error();
  // 2 x ceil(20 / NPU) rows of 64 fp32 per lane, eu(FP32) = EU bytes / 4.
  const double passes = std::ceil(2.0 * div_up(20, chip.npu) * 64 / (chip.eu_bytes / 4));
  EXPECT_EQ(bdc_cycles(), passes * 9 + 16);
  // int8 depthwise into INT32: EU passes of the output dtype.
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_bdc_int8_depthwise2d(output_off, input_off, weight_off, 0, zero, &shape, &k, &same, &one, &one, DT_INT32,
                             DT_INT8, DT_INT8, DT_INT32, 0, false, false, RM_HALF_UP);
  })) << cmodel_last_error();
  EXPECT_EQ(bdc_cycles(), passes * 9 + 16);
}

// The output overlapping the input: computed as if the input were read
// first, with a warning naming both.
TEST_P(BdcConv, OutputOverInputReadsTheInputFirstAndWarns) {
  const dim4 shape{1, 1, 1, 4};
  const Tensor X = aligned(chip, 0, input_off, shape, DT_FP32);
  for (int w = 0; w < 4; ++w) set<float>(chip, X, 0, 0, 0, w, float(w + 1));
  const dim2 k{1, 2}, one{1, 1};
  const padding_t none{0, 0, 0, 0};
  scalar_t C{};
  C.f32 = 1;
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_bdc_fp_conv2d_kernel_const(X.addr, X.addr, 0, C, &shape, nullptr, 1, &k, &none, &one, &one, DT_FP32, DT_FP32,
                                   false, false);
  })) << cmodel_last_error();
  for (int w = 0; w < 3; ++w) EXPECT_EQ(get<float>(chip, X, 0, 0, 0, w), float(2 * w + 3)) << w;
  const auto warnings = run_stats().at("warnings");
  ASSERT_EQ(warnings.size(), 1u) << warnings.dump();
  EXPECT_EQ(warnings[0].get<std::string>().find("tpu_bdc_fp_conv2d_kernel_const: output at 0x0 overlaps input at 0x0"),
            0u)
      << warnings.dump();
}

// Strides the command does not use are not checked: the n-stride of one
// batch, the c-stride of channels that all sit in the first row of NPUs.
TEST_P(BdcConv, UnusedInputStridesAreIgnored) {
  const dim4 shape{1, 2, 2, 2}, stride{1 << 20, 1 << 20, 2, 1};
  const Tensor X{input_off, shape, {0, 0, 2, 1}, DT_FP32, false};
  for_each_index(shape, [&](int, int c, int h, int w) { set<float>(chip, X, 0, c, h, w, float(c + 1)); });
  const Tensor Y = aligned(chip, 0, output_off, {1, 1, 1, 1}, DT_FP32);
  const dim2 k{2, 2}, one{1, 1};
  const padding_t none{0, 0, 0, 0};
  scalar_t C{};
  C.f32 = 1;
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_bdc_fp_conv2d_kernel_const(Y.addr, X.addr, 0, C, &shape, &stride, 1, &k, &none, &one, &one, DT_FP32, DT_FP32,
                                   false, false);
  })) << cmodel_last_error();
  EXPECT_EQ(get<float>(chip, Y, 0, 0, 0, 0), 4.0f + 8.0f);
}

// ---- integer ----------------------------------------------------------------------------------

int64_t sat(int64_t v, data_type_t t, bool sym) {
  const int64_t hi = int_max(t), lo = sym && int_min(t) < 0 ? -hi : int_min(t);
  return std::min(std::max(v, lo), hi);
}

// R(x, k, mode) of §1.4, by the table.
int64_t round_shift(__int128 x, int k, rounding_mode_t mode) {
  if (k == 0) return int64_t(x);
  k = std::min(k, 63);
  const __int128 d = __int128(1) << k, h = d / 2;
  __int128 q = x / d, r = x - q * d;
  if (r < 0) {
    q -= 1;
    r += d;
  }
  bool up = false;
  switch (mode) {
    case RM_HALF_TO_EVEN: up = r > h || (r == h && (q & 1)); break;
    case RM_HALF_AWAY_FROM_ZERO: up = r > h || (r == h && x >= 0); break;
    case RM_TOWARDS_ZERO: up = x < 0 && r != 0; break;
    case RM_DOWN: up = false; break;
    case RM_UP: up = r != 0; break;
    case RM_HALF_UP: up = r >= h; break;
    case RM_HALF_DOWN: up = r > h; break;
  }
  return int64_t(q + (up ? 1 : 0));
}

// RQ of §1.5.
int64_t requant(int64_t acc, int64_t m, int sigma, int zp, rounding_mode_t mode, bool relu, data_type_t t, bool sym) {
  __int128 v = __int128(acc) * m;
  v = sigma >= 0 ? v * (__int128(1) << sigma) : round_shift(v, -sigma, mode);
  if (relu && v < 0) v = 0;
  return sat(int64_t(v) + zp, t, sym);
}

data_type_t signed_as(data_type_t t, bool is_signed) { return data_type_t(is_signed ? (t | 1) : (t & ~1)); }

enum IntVariant {
  asym, asym_kernel_const, asym_for_deconv, asym_pc, asym_pc_for_deconv, sym, sym_for_deconv, requant_pc_asym_pc,
  requant_C_asym_C, int8_dw, int8_dw_kernel_const, int8_pc_pad_dw, int8_dw_for_deconv, int8_pc_pad_dw_for_deconv,
  dw_requant_pc_asym_C, dw_requant_C_sym_C, int_variant_count
};
const char *const int_names[] = {
    "int8_asym_quant_conv2d", "int8_asym_quant_conv2d_kernel_const", "int8_asym_quant_conv2d_for_deconv2d",
    "int8_asym_pc_quant_conv2d", "int8_asym_pc_quant_conv2d_for_deconv2d", "int8_sym_quant_conv2d",
    "int8_sym_quant_conv2d_for_deconv2d", "conv2d_requant_pc_asym_pc", "conv2d_requant_C_asym_C", "int8_depthwise2d",
    "int8_depthwise2d_kernel_const", "int8_pc_pad_depthwise2d", "int8_depthwise_for_deconv2d",
    "int8_pc_pad_depthwise_for_deconv2d", "depthwise2d_requant_pc_asym_C", "depthwise2d_requant_C_sym_C"};

bool is_depthwise(int v) { return v >= int8_dw; }
bool is_deconv(int v) {
  return v == asym_for_deconv || v == asym_pc_for_deconv || v == sym_for_deconv || v == int8_dw_for_deconv ||
         v == int8_pc_pad_dw_for_deconv;
}
bool per_channel_pad(int v) {
  return v == asym_pc || v == asym_pc_for_deconv || v == requant_pc_asym_pc || v == int8_pc_pad_dw ||
         v == int8_pc_pad_dw_for_deconv;
}
bool has_kzp(int v) { return v <= asym_pc_for_deconv || v == requant_pc_asym_pc || v == requant_C_asym_C; }
bool per_channel_kzp(int v) { return v == asym_pc || v == asym_pc_for_deconv || v == requant_pc_asym_pc; }
bool takes_bias(int v) { return v >= sym; }
bool takes_result_add(int v) { return v <= asym_pc_for_deconv || v == requant_pc_asym_pc || v == requant_C_asym_C; }

// Every integer conv and depthwise function (the bm1688-only requant_pc / _C
// aside, tested on their own), random geometry and values, against an
// exact int64 reference with the requant / saturation of each.
TEST_P(BdcConv, IntegerConvMatchesTheExactReference) {
  test::Seeded seeded;
  auto &rng = seeded.rng();
  auto pick = [&](int lo, int hi) { return seeded.uniform(lo, hi); };
  for (int iter = 0; iter < 20 * int_variant_count; ++iter) {
    const int v = iter % int_variant_count;
    const bool dw = is_depthwise(v);
    const data_type_t in_t = pick(0, 1) ? DT_INT8 : DT_UINT8, w_t = pick(0, 1) ? DT_INT8 : DT_UINT8;
    const data_type_t kzp_t = pick(0, 1) ? DT_INT8 : DT_UINT8;
    const data_type_t bias_t = pick(0, 3) ? DT_INT32 : DT_INT16;
    Geo g = random_geo(rng, is_deconv(v), dw, 2 * parallel(chip, DT_INT8) + 3);
    const bool relu = pick(0, 1), has_bias = takes_bias(v) && pick(0, 1);
    const bool result_add = takes_result_add(v) && pick(0, 1), sym_range = pick(0, 1), has_requant = pick(0, 3) != 0;
    const rounding_mode_t mode = rounding_mode_t(pick(0, 6));
    const int rshift = pick(0, 2) ? pick(0, 12) : 0;
    const int lane = dw ? pick(0, chip.npu - 1) : 0, out_lane = dw ? lane : pick(0, chip.npu - 1);
    const bool strided = !dw && pick(0, 2) == 0;
    // Output dtype as passed.
    data_type_t out_t;
    if (v <= asym_pc_for_deconv)
      out_t = pick(0, 1) ? DT_INT16 : DT_INT32;
    else if (v <= sym_for_deconv)
      out_t = pick(0, 1) ? DT_INT8 : DT_INT16;
    else
      out_t = std::vector<data_type_t>{DT_INT8, DT_UINT8, DT_INT16, DT_INT32}[size_t(pick(0, 3))];
    const int occ = g.outc(), icn = dw ? 1 : g.ic, taps = g.kh * g.kw;

    // Values.
    Tensor x = place_input(rng, chip, lane, input_off, g, in_t, strided);
    std::vector<int64_t> X;
    for_each_index(g.in_shape(), [&](int n, int c, int h, int w) {
      const uint32_t b = uint32_t(rng()) & 0xff;
      set_bits(chip, x, n, c, h, w, b);
      X.push_back(int_value(in_t, b));
    });
    const bool kconst = v == asym_kernel_const || v == int8_dw_kernel_const;
    scalar_t C{};
    C.u32 = uint32_t(rng()) | 0x100;  // only the low byte counts
    std::vector<int64_t> Wv(size_t(occ) * icn * taps, int_value(w_t, C.u32 & 0xff));
    if (!kconst) {
      std::vector<uint32_t> bits(Wv.size());
      for (size_t i = 0; i < bits.size(); ++i) {
        bits[i] = uint32_t(rng()) & 0xff;
        Wv[i] = int_value(w_t, bits[i]);
      }
      if (dw)
        write_depthwise_weight(chip, lane, weight_off, g, w_t, bits);
      else
        write_conv_weight(chip, out_lane, weight_off, g, w_t, bits);
    }
    scalar_t kzp_val{}, pad_val{}, insert_val{};
    kzp_val.u32 = pick(0, 2) ? uint32_t(rng()) : 0;
    pad_val.u32 = uint32_t(rng());
    insert_val.u32 = uint32_t(rng());
    std::vector<int64_t> kzp(size_t(occ), 0), pad(size_t(g.ic)), ins(size_t(g.ic));
    const data_type_t kzp_read = (v == requant_pc_asym_pc || v == requant_C_asym_C) ? w_t : kzp_t;
    if (has_kzp(v)) {
      if (per_channel_kzp(v)) {
        std::vector<uint32_t> bits(static_cast<size_t>(occ));
        for (size_t i = 0; i < bits.size(); ++i) {
          bits[i] = uint32_t(rng()) & 0xff;
          kzp[i] = int_value(kzp_read, bits[i]);
        }
        write_vector(chip, out_lane, extra_off, occ, 1, kzp_read, bits);
      } else {
        kzp.assign(size_t(occ), int_value(kzp_read, kzp_val.u32 & 0xff));
      }
    }
    if (per_channel_pad(v)) {
      std::vector<uint32_t> bits(size_t(2 * g.ic));
      for (size_t i = 0; i < bits.size(); ++i) bits[i] = uint32_t(rng()) & 0xff;
      for (int i = 0; i < g.ic; ++i) {
        pad[size_t(i)] = int_value(in_t, bits[size_t(2 * i)]);
        ins[size_t(i)] = int_value(in_t, bits[size_t(2 * i + 1)]);
      }
      write_vector(chip, lane, extra_off + 0x1000, g.ic, 2, in_t, bits);
    } else {
      // The sym commands pad with 0.
      const bool zero_pad = v == sym || v == sym_for_deconv;
      pad.assign(size_t(g.ic), zero_pad ? 0 : int_value(in_t, pad_val.u32 & 0xff));
      // Depthwise commands pad and insert with pad_val; conv with the insert value (0 unless given).
      const int64_t insert = dw ? pad[0] : v == asym_for_deconv ? int_value(in_t, insert_val.u32 & 0xff) : 0;
      ins.assign(size_t(g.ic), insert);
    }
    std::vector<int64_t> bias(size_t(occ), 0);
    if (has_bias) {
      std::vector<uint32_t> bits(static_cast<size_t>(occ));
      for (size_t i = 0; i < bits.size(); ++i) {
        const int64_t b = bias_t == DT_INT32 ? int64_t(pick(-100000, 100000)) : int64_t(pick(-30000, 30000));
        bits[i] = uint32_t(b) & (bias_t == DT_INT32 ? 0xffffffffu : 0xffffu);
        bias[i] = b;
      }
      write_vector(chip, out_lane, bias_off, occ, 1, bias_t, bits);
    }
    // Per-channel requant words (§1.5).
    std::vector<int64_t> mult(size_t(occ), 1), sigma(size_t(occ), 0), zp(size_t(occ), 0);
    int scalar_m = pick(-3000, 3000), scalar_sigma = pick(-20, 2), scalar_zp = pick(-200, 200);
    const bool pc_requant = v == requant_pc_asym_pc || v == dw_requant_pc_asym_C;
    if (pc_requant) {
      std::vector<uint32_t> words(size_t(2 * occ));
      for (int o = 0; o < occ; ++o) {
        mult[size_t(o)] = pick(-3000, 3000);
        sigma[size_t(o)] = pick(-20, 2);
        zp[size_t(o)] = pick(-200, 200);
        words[size_t(2 * o)] = uint32_t(int32_t(mult[size_t(o)]));
        words[size_t(2 * o + 1)] = (uint32_t(sigma[size_t(o)]) & 0xff) | 0xab00u | (uint32_t(zp[size_t(o)]) << 16);
      }
      write_vector(chip, out_lane, extra_off + 0x2000, occ, 2, DT_INT32, words);
    }

    // The effective output dtype and post-processing of each function (§3.4, §3.5).
    const bool sym_sign = !relu && (in_t == DT_INT8 || w_t == DT_INT8 || (has_bias && bias_t != DT_UINT16));
    data_type_t eff = out_t;
    bool post_relu = false, post_sym = false;
    rounding_mode_t post_mode = RM_HALF_UP;
    int fixed_m = 1, fixed_sigma = 0, fixed_zp = 0;
    bool use_pc = false;
    switch (v) {
      case asym: case asym_kernel_const: case asym_for_deconv: {
        const bool zero = (kzp_val.u32 & 0xff) == 0;
        eff = signed_as(out_t, !(in_t == DT_UINT8 && w_t == DT_UINT8 && zero));
        break;
      }
      case asym_pc: case asym_pc_for_deconv: break;
      case sym: case sym_for_deconv: case int8_dw: case int8_dw_kernel_const: case int8_pc_pad_dw:
      case int8_dw_for_deconv: case int8_pc_pad_dw_for_deconv: case dw_requant_C_sym_C:
        eff = signed_as(out_t, sym_sign);
        post_relu = relu;
        fixed_sigma = -rshift;
        if (v != sym && v != sym_for_deconv) post_mode = mode;
        if (v == dw_requant_C_sym_C) {
          post_sym = sym_range;
          if (rshift != 0) eff = relu ? DT_UINT8 : DT_INT8;
        }
        break;
      case requant_pc_asym_pc: case requant_C_asym_C: case dw_requant_pc_asym_C:
        post_relu = relu;
        post_sym = sym_range && has_requant;  // plain saturation without requant
        post_mode = mode;
        if (!has_requant) {
          eff = signed_as(out_t, sym_sign);
        } else if (v == requant_C_asym_C) {
          fixed_m = scalar_m;
          fixed_sigma = scalar_sigma;
          fixed_zp = scalar_zp;
        } else {
          use_pc = true;
        }
        break;
    }
    const Tensor y = aligned(chip, out_lane, output_off, g.out_shape(), eff);
    std::vector<int64_t> old;
    if (result_add)
      for_each_index(g.out_shape(), [&](int n, int c, int h, int w) {
        const uint32_t b = uint32_t(rng()) & 0xff;
        set_bits(chip, y, n, c, h, w, b);
        old.push_back(int_value(eff, b));
      });
    std::vector<uint8_t> expected = snapshot(chip);
    size_t k = 0;
    for_each_index(g.out_shape(), [&](int n, int o, int yy, int xx) {
      int64_t acc = 0;
      for_each_term(g, o, yy, xx, [&](int i, Src where, int h, int w, int kp, int kq) {
        const int64_t xv = where == Src::input      ? X[((size_t(n) * g.ic + i) * g.ih + h) * g.iw + w]
                           : where == Src::padding ? pad[size_t(i)]
                                                   : ins[size_t(i)];
        const size_t wi = (size_t(o) * icn + (dw ? 0 : i)) * taps + size_t(kp * g.kw + kq);
        acc += xv * (Wv[wi] - kzp[size_t(o)]);
      });
      acc += bias[size_t(o)];
      if (result_add) acc += old[k];
      ++k;
      const int64_t r = use_pc ? requant(acc, mult[size_t(o)], int(sigma[size_t(o)]), int(zp[size_t(o)]), post_mode,
                                         post_relu, eff, post_sym)
                               : requant(acc, fixed_m, fixed_sigma, fixed_zp, post_mode, post_relu, eff, post_sym);
      put(expected, chip, y, n, o, yy, xx, uint32_t(r));
    });

    const dim4 shape = g.in_shape();
    const dim4 *xs = x.api_stride();
    const dim2 kk = g.kernel(), s = g.stride(), dl = g.dilation(), insd = g.insert();
    const padding_t pd = g.padding();
    const local_addr_t W = out_lane * chip.lmem + weight_off, B = out_lane * chip.lmem + bias_off;
    const local_addr_t KZ = out_lane * chip.lmem + extra_off, PD = lane * chip.lmem + extra_off + 0x1000;
    const local_addr_t RQ = out_lane * chip.lmem + extra_off + 0x2000;
    const unsigned char rs = (unsigned char)rshift;
    const bool ok = test::run_kernel_body([&] {
      switch (v) {
        case asym:
          tpu_bdc_int8_asym_quant_conv2d(y.addr, x.addr, W, kzp_val, pad_val, &shape, xs, g.oc, &kk, &pd, &s, &dl,
                                         out_t, in_t, w_t, kzp_t, result_add);
          break;
        case asym_kernel_const:
          tpu_bdc_int8_asym_quant_conv2d_kernel_const(y.addr, x.addr, C, kzp_val, pad_val, &shape, xs, g.oc, &kk, &pd,
                                                      &s, &dl, out_t, in_t, w_t, kzp_t, result_add);
          break;
        case asym_for_deconv:
          tpu_bdc_int8_asym_quant_conv2d_for_deconv2d(y.addr, x.addr, W, kzp_val, pad_val, insert_val, &shape, xs,
                                                      g.oc, &kk, &insd, &pd, &dl, out_t, in_t, w_t, kzp_t, result_add);
          break;
        case asym_pc:
          tpu_bdc_int8_asym_pc_quant_conv2d(y.addr, x.addr, W, KZ, PD, &shape, xs, g.oc, &kk, &pd, &s, &dl, out_t, in_t,
                                            w_t, kzp_t, result_add);
          break;
        case asym_pc_for_deconv:
          tpu_bdc_int8_asym_pc_quant_conv2d_for_deconv2d(y.addr, x.addr, W, KZ, PD, &shape, xs, g.oc, &kk, &insd, &pd,
                                                         &dl, out_t, in_t, w_t, kzp_t, result_add);
          break;
        case sym:
          tpu_bdc_int8_sym_quant_conv2d(y.addr, x.addr, W, B, &shape, xs, g.oc, &kk, &pd, &s, &dl, out_t, in_t, w_t,
                                        bias_t, rs, has_bias, relu);
          break;
        case sym_for_deconv:
          tpu_bdc_int8_sym_quant_conv2d_for_deconv2d(y.addr, x.addr, W, B, &shape, xs, g.oc, &kk, &insd, &pd, &dl,
                                                     out_t, in_t, w_t, bias_t, rs, has_bias, relu);
          break;
        case requant_pc_asym_pc:
          tpu_bdc_conv2d_requant_pc_asym_pc(y.addr, x.addr, W, B, KZ, PD, RQ, &shape, xs, g.oc, &kk, &pd, &s, &dl,
                                            out_t, in_t, w_t, bias_t, has_requant, has_bias, relu, result_add,
                                            sym_range, mode);
          break;
        case requant_C_asym_C:
          tpu_bdc_conv2d_requant_C_asym_C(y.addr, x.addr, W, B, kzp_val, pad_val, &shape, xs, g.oc, &kk, &pd, &s, &dl,
                                          out_t, in_t, w_t, bias_t, scalar_m, char(scalar_sigma), short(scalar_zp),
                                          has_requant, has_bias, relu, result_add, sym_range, mode);
          break;
        case int8_dw:
          tpu_bdc_int8_depthwise2d(y.addr, x.addr, W, B, pad_val, &shape, &kk, &pd, &s, &dl, out_t, in_t, w_t, bias_t,
                                   rs, has_bias, relu, mode);
          break;
        case int8_dw_kernel_const:
          tpu_bdc_int8_depthwise2d_kernel_const(y.addr, x.addr, B, C, pad_val, &shape, &kk, &pd, &s, &dl, out_t, in_t,
                                                w_t, bias_t, rs, has_bias, relu, mode);
          break;
        case int8_pc_pad_dw:
          tpu_bdc_int8_pc_pad_depthwise2d(y.addr, x.addr, W, B, PD, &shape, &kk, &pd, &s, &dl, out_t, in_t, w_t,
                                          bias_t, rs, has_bias, relu, mode);
          break;
        case int8_dw_for_deconv:
          tpu_bdc_int8_depthwise_for_deconv2d(y.addr, x.addr, W, B, pad_val, &shape, &kk, &pd, &insd, &dl, out_t, in_t,
                                              w_t, bias_t, rs, has_bias, relu, mode);
          break;
        case int8_pc_pad_dw_for_deconv:
          tpu_bdc_int8_pc_pad_depthwise_for_deconv2d(y.addr, x.addr, W, B, PD, &shape, &kk, &pd, &insd, &dl, out_t,
                                                     in_t, w_t, bias_t, rs, has_bias, relu, mode);
          break;
        case dw_requant_pc_asym_C:
          tpu_bdc_depthwise2d_requant_pc_asym_C(y.addr, x.addr, W, B, RQ, pad_val, &shape, &kk, &pd, &s, &dl, out_t,
                                                in_t, w_t, bias_t, has_bias, has_requant, relu, sym_range, mode);
          break;
        case dw_requant_C_sym_C:
          tpu_bdc_depthwise2d_requant_C_sym_C(y.addr, x.addr, W, B, pad_val, &shape, &kk, &pd, &s, &dl, out_t, in_t,
                                              w_t, bias_t, rs, has_bias, relu, sym_range, mode);
          break;
      }
    });
    const std::string what = std::string(int_names[v]) + " " + dtype_label(in_t) + "x" + dtype_label(w_t) + "->" +
                             dtype_label(eff) + " " + g.text() + (has_bias ? " bias " + dtype_label(bias_t) : "") +
                             (relu ? " relu" : "") + (result_add ? " result_add" : "") + " rshift " +
                             std::to_string(rshift) + " mode " + std::to_string(int(mode)) +
                             (has_requant ? " requant" : "") + (sym_range ? " sym" : "") + " iteration " +
                             std::to_string(iter);
    ASSERT_TRUE(ok) << what << ": " << cmodel_last_error();
    expect_local_memory(chip, expected, [&] { return what; });
    if (HasFailure()) return;
  }
}

// A weight row longer than 65535 elements (ic 8192, 3 x 3 INT8: 73728
// bytes on the output's NPU) is a legal operand.
TEST_P(BdcConv, LongWeightRows) {
  const int ic = 8192;
  const dim4 shape{1, ic, 3, 3};
  const Tensor X = aligned(chip, 0, 0, shape, DT_INT8);
  for_each_index(shape, [&](int, int c, int h, int w) { set_bits(chip, X, 0, c, h, w, 1); });
  const uint32_t w_off = 0x8000, y_off = 0x1f000;
  std::memset(local_at(w_off), 2, size_t(ic) * 9);  // output channel 0's row, on NPU 0
  const Tensor Y = aligned(chip, 0, y_off, {1, 1, 1, 1}, DT_INT32);
  const dim2 k{3, 3}, one{1, 1};
  const padding_t none{0, 0, 0, 0};
  scalar_t zero{};
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_bdc_int8_asym_quant_conv2d(Y.addr, X.addr, w_off, zero, zero, &shape, nullptr, 1, &k, &none, &one, &one,
                                   DT_INT32, DT_INT8, DT_INT8, DT_INT8, false);
  })) << cmodel_last_error();
  EXPECT_EQ(int32_t(get_bits(chip, Y, 0, 0, 0, 0)), 2 * 9 * ic);
}

// ---- worked examples and the bm1688-only requant forms ---------------------------------------

// A 1 x 1 conv of one channel: acc = x w (+ bias).
struct OneByOne {
  dim4 shape{1, 1, 1, 1};
  dim2 one{1, 1};
  padding_t none{0, 0, 0, 0};
};

// §8 example 4: acc = -1000, m = 3, σ = -4, zp = 5, RM_HALF_UP, INT8:
// -187.5 -> -187, + 5 = -182 -> -128 (sym: -127); with relu 0 + 5 = 5.
TEST_P(BdcConv, WorkedExampleRequant) {
  const bool bm1688 = chip.name == "bm1688";
  OneByOne u;
  const Tensor X = aligned(chip, 0, input_off, u.shape, DT_INT8), Y = aligned(chip, 0, output_off, u.shape, DT_INT8);
  set_bits(chip, X, 0, 0, 0, 0, uint32_t(100));
  poke(byte_at(chip, 0, weight_off), uint32_t(uint8_t(-10)), 1);
  struct Case {
    bool relu, sym;
    int64_t expected;
  } cases[] = {{false, false, -128}, {false, true, -127}, {true, false, 5}};
  for (const Case &c : cases) {
    scalar_t zero{};
    ASSERT_TRUE(test::run_kernel_body([&] {
      tpu_bdc_conv2d_requant_C_asym_C(Y.addr, X.addr, weight_off, 0, zero, zero, &u.shape, nullptr, 1, &u.one, &u.none,
                                      &u.one, &u.one, DT_INT8, DT_INT8, DT_INT8, DT_INT32, 3, char(-4), 5, true, false,
                                      c.relu, false, c.sym, RM_HALF_UP);
    })) << cmodel_last_error();
    EXPECT_EQ(int8_t(get_bits(chip, Y, 0, 0, 0, 0)), c.expected) << c.relu << c.sym;
    // The bm1688-only tpu_bdc_conv2d_requant_C gives the same.
    const bool ran = test::run_kernel_body([&] {
      tpu_bdc_conv2d_requant_C(Y.addr, X.addr, weight_off, 0, &u.shape, nullptr, 1, &u.one, &u.none, &u.one, &u.one,
                               DT_INT8, DT_INT8, DT_INT8, DT_INT32, 3, char(-4), 5, false, c.relu, true, c.sym);
    });
    EXPECT_EQ(ran, bm1688);
    if (bm1688) {
      EXPECT_EQ(int8_t(get_bits(chip, Y, 0, 0, 0, 0)), c.expected) << c.relu << c.sym;
    } else {
      EXPECT_NE(std::string(cmodel_last_error()).find("tpu_bdc_conv2d_requant_C is unsupported on this chip (bm1684x)"),
                std::string::npos)
          << cmodel_last_error();
    }
  }
  // The per-channel form reads (m, σ | zp << 16) words; bm1688 only.
  write_vector(chip, 0, extra_off, 1, 2, DT_INT32, {3u, (uint32_t(uint8_t(-4))) | (5u << 16)});
  const bool ran = test::run_kernel_body([&] {
    tpu_bdc_conv2d_requant_pc(Y.addr, X.addr, weight_off, 0, extra_off, &u.shape, nullptr, 1, &u.one, &u.none, &u.one,
                              &u.one, DT_INT8, DT_INT8, DT_INT8, DT_INT32, false, false, true, false);
  });
  EXPECT_EQ(ran, bm1688) << cmodel_last_error();
  if (bm1688) {
    EXPECT_EQ(int8_t(get_bits(chip, Y, 0, 0, 0, 0)), -128);
  }
}

// §8 example 6: acc + bias = 1000, rshift 3, INT8: 125; acc = 1020: 127.5
// rounds half up to 128 and saturates to 127.
TEST_P(BdcConv, WorkedExampleSymConv) {
  OneByOne u;
  const Tensor X = aligned(chip, 0, input_off, u.shape, DT_INT8), Y = aligned(chip, 0, output_off, u.shape, DT_INT8);
  set_bits(chip, X, 0, 0, 0, 0, uint32_t(10));
  poke(byte_at(chip, 0, weight_off), uint32_t(90), 1);
  for (const auto &[bias, expected] : {std::pair{100, 125}, std::pair{120, 127}}) {
    write_vector(chip, 0, bias_off, 1, 1, DT_INT32, {uint32_t(bias)});
    ASSERT_TRUE(test::run_kernel_body([&] {
      tpu_bdc_int8_sym_quant_conv2d(Y.addr, X.addr, weight_off, bias_off, &u.shape, nullptr, 1, &u.one, &u.none, &u.one,
                                    &u.one, DT_INT8, DT_INT8, DT_INT8, DT_INT32, 3, true, false);
    })) << cmodel_last_error();
    EXPECT_EQ(int8_t(get_bits(chip, Y, 0, 0, 0, 0)), expected) << bias;
  }
}

// A uint8 window sum through the asym kernel_const form (weight 1, kzp 0):
// all-unsigned operands give an unsigned result, so 20 x 9 x 255 = 45900
// is not clipped in a 16-bit output; with a signed input the pad value
// (-1) counts at every padding position.
TEST_P(BdcConv, AsymKernelConstSumsAWindow) {
  const dim2 k{3, 3}, one{1, 1};
  scalar_t C{}, zero{}, pad_val{};
  C.u32 = 1;
  pad_val.u32 = 0xff;
  {
    const dim4 shape{1, 20, 3, 3};
    const padding_t none{0, 0, 0, 0};
    const Tensor X = aligned(chip, 0, input_off, shape, DT_UINT8);
    for_each_index(shape, [&](int, int c, int h, int w) { set_bits(chip, X, 0, c, h, w, 255); });
    const Tensor Y = aligned(chip, 0, output_off, {1, 1, 1, 1}, DT_UINT16);
    ASSERT_TRUE(test::run_kernel_body([&] {
      tpu_bdc_int8_asym_quant_conv2d_kernel_const(Y.addr, X.addr, C, zero, pad_val, &shape, nullptr, 1, &k, &none,
                                                  &one, &one, DT_INT16, DT_UINT8, DT_UINT8, DT_UINT8, false);
    })) << cmodel_last_error();
    EXPECT_EQ(get_bits(chip, Y, 0, 0, 0, 0), 45900u);
  }
  const dim4 shape{1, 2, 2, 2};
  const padding_t pad{1, 0, 1, 0};
  const Tensor X = aligned(chip, 0, input_off, shape, DT_INT8);
  for_each_index(shape, [&](int, int c, int h, int w) { set_bits(chip, X, 0, c, h, w, 0xff); });
  const Tensor Y = aligned(chip, 0, output_off, {1, 1, 1, 1}, DT_INT16);
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_bdc_int8_asym_quant_conv2d_kernel_const(Y.addr, X.addr, C, zero, pad_val, &shape, nullptr, 1, &k, &pad, &one,
                                                &one, DT_INT16, DT_INT8, DT_UINT8, DT_UINT8, false);
  })) << cmodel_last_error();
  // 2 channels x (4 inputs + 5 padding positions), each -1.
  EXPECT_EQ(int16_t(get_bits(chip, Y, 0, 0, 0, 0)), -18);
}

// ---- checks -----------------------------------------------------------------------------------

TEST_P(BdcConv, ChecksNameTheFunctionTheArgumentAndTheLimit) {
  const dim4 shape{1, 4, 4, 4};
  const dim2 k{3, 3}, one{1, 1};
  const padding_t none{0, 0, 0, 0};
  const local_addr_t lane1 = chip.lmem;
  struct Fp {
    local_addr_t out = output_off, in = input_off, w = weight_off, b = bias_off;
    dim4 shape;
    const dim4 *stride = nullptr;
    int oc = 8;
    dim2 k, s, d, ins{0, 0};
    padding_t pad;
    data_type_t out_t = DT_FP32, in_t = DT_FP32;
    bool bias = false;
  };
  Fp base{.shape = shape, .k = k, .s = one, .d = one, .pad = none};
  auto fails = [&](const Fp &a, const std::string &message, bool deconv = false) {
    EXPECT_FALSE(test::run_kernel_body([&] {
      if (deconv)
        tpu_bdc_fp_conv2d_for_deconv2d(a.out, a.in, a.w, a.b, &a.shape, a.stride, a.oc, &a.k, &a.ins, &a.pad, &a.d,
                                       a.out_t, a.in_t, a.bias, false);
      else
        tpu_bdc_fp_conv2d(a.out, a.in, a.w, a.b, &a.shape, a.stride, a.oc, &a.k, &a.pad, &a.s, &a.d, a.out_t, a.in_t,
                          a.bias, false);
    })) << message;
    const std::string m = cmodel_last_error();
    EXPECT_NE(m.find(message), std::string::npos) << m;
  };
  {
    Fp a = base;
    a.s = {16, 1};
    fails(a, "tpu_bdc_fp_conv2d: stride (h, w) = (16, 1): each must be in [1, 15]");
  }
  {
    Fp a = base;
    a.d = {1, 0};
    fails(a, "tpu_bdc_fp_conv2d: dilation (h, w) = (1, 0): each must be in [1, 15]");
  }
  {
    Fp a = base;
    a.pad = {0, 16, 0, 0};
    fails(a, "tpu_bdc_fp_conv2d: padding (top, bottom, left, right) = (0, 16, 0, 0): each must be in [0, 15]");
  }
  {
    Fp a = base;
    a.ins = {15, 0};
    fails(a, "tpu_bdc_fp_conv2d_for_deconv2d: insert (h, w) = (15, 0): each must be in [0, 14]", true);
  }
  {
    Fp a = base;
    a.k = {0, 3};
    fails(a, "tpu_bdc_fp_conv2d: kernel (h, w) = (0, 3): each must be in [1, 65535]");
  }
  {
    Fp a = base;
    a.oc = 0;
    fails(a, "tpu_bdc_fp_conv2d: output_c = 0: it must be in [1, 65535]");
  }
  {
    Fp a = base;
    a.shape = {1, 4, 0, 4};
    fails(a, "tpu_bdc_fp_conv2d: input shape [1, 4, 0, 4]: h = 0; every dim must be in [1, 65535]");
  }
  {
    Fp a = base;
    a.k = {5, 3};
    fails(a, "tpu_bdc_fp_conv2d: the output would have oh = 0: the padded input h = 4 + 0 + 0 = 4 and the dilated "
             "kernel spans 5 with stride 1; oh must be in [1, 65535]");
  }
  {
    Fp a = base;
    a.in_t = a.out_t = DT_FP16;
    a.in = lane1 + input_off;
    fails(a, "tpu_bdc_fp_conv2d: input local address " + hex(lane1) +
                 " starts on NPU 1; a DT_FP16 conv input must start on NPU 0 (only FP32 inputs may start on any NPU)");
  }
  {
    Fp a = base;
    a.out = lane1 + output_off;
    fails(a, "tpu_bdc_fp_conv2d: weight local address " + hex(weight_off) +
                 " starts on NPU 0; it must start on the output's NPU (NPU 1)");
  }
  {
    Fp a = base;
    a.w = weight_off + 2;
    a.in_t = a.out_t = DT_FP16;
    fails(a, "tpu_bdc_fp_conv2d: weight local address " + hex(weight_off + 2) + ": its offset " + hex(weight_off + 2) +
                 " in NPU 0 must be a multiple of " + std::to_string(chip.eu_bytes) + " bytes");
  }
  {
    Fp a = base;
    a.bias = true;
    a.b = bias_off + 2;
    fails(a, "tpu_bdc_fp_conv2d: bias local address " + hex(bias_off + 2) + " is not a multiple of the 4-byte size");
  }
  {
    Fp a = base;
    a.out = output_off + 4;
    fails(a, "tpu_bdc_fp_conv2d: output local address " + hex(output_off + 4) + " uses the aligned layout");
  }
  {
    Fp a = base;
    a.in_t = DT_FP16;
    a.out_t = DT_BFP16;
    fails(a, "tpu_bdc_fp_conv2d: output_dtype DT_BFP16 is not allowed here; expected one of DT_FP16, DT_FP32");
    a.in_t = DT_INT8;
    fails(a, "tpu_bdc_fp_conv2d: input_dtype DT_INT8 is not allowed here; expected one of DT_FP32, DT_FP16, DT_BFP16");
  }
  {
    Fp a = base;
    a.shape = {1, 1, 65535, 4};
    a.pad = {1, 0, 0, 0};
    fails(a, "tpu_bdc_fp_conv2d: the padded input h = (65535 - 1) x (0 + 1) + 1 + 1 + 0 = 65536; it must be in "
             "[1, 65535]");
  }
  // Strides the command uses are limited to 65535.
  {
    Fp a = base;
    a.shape = {2, 4, 4, 4};
    const dim4 bad{70000, 16, 4, 1};
    a.stride = &bad;
    fails(a, "tpu_bdc_fp_conv2d: input_stride (n, c, h, w) = (70000, 0, 4, 1): each must be in [0, 65535]");
  }
  // Depthwise: insert up to 7, output and weight on the input's NPU.
  auto dw_fails = [&](std::function<void()> body, const std::string &message) {
    EXPECT_FALSE(test::run_kernel_body(body)) << message;
    const std::string m = cmodel_last_error();
    EXPECT_NE(m.find(message), std::string::npos) << m;
  };
  const dim2 ins8{8, 0};
  dw_fails([&] { tpu_bdc_fp_ins_depthwise(output_off, input_off, weight_off, 0, &shape, &k, &none, &one, &ins8, &one,
                                          DT_FP32, false); },
           "tpu_bdc_fp_ins_depthwise: insert (h, w) = (8, 0): each must be in [0, 7]");
  dw_fails([&] { tpu_bdc_fp_depthwise2d(lane1 + output_off, input_off, weight_off, 0, &shape, &k, &none, &one, &one,
                                        DT_FP32, false); },
           "tpu_bdc_fp_depthwise2d: output local address " + hex(lane1 + output_off) +
               " starts on NPU 1; it must start on the input's NPU (NPU 0)");
  dw_fails([&] { tpu_bdc_fp_depthwise2d(output_off, input_off, lane1 + weight_off, 0, &shape, &k, &none, &one, &one,
                                        DT_FP32, false); },
           "tpu_bdc_fp_depthwise2d: weight local address " + hex(lane1 + weight_off) +
               " starts on NPU 1; it must start on the input's NPU (NPU 0)");
  dw_fails([&] { tpu_bdc_fp_depthwise_for_deconv2d(output_off, input_off, weight_off, 0, &shape, &k, &one, &none, &one,
                                                   DT_FP32, DT_FP16, false, false); },
           "tpu_bdc_fp_depthwise_for_deconv2d: output_dtype DT_FP32 is not allowed here; expected one of DT_FP16");
  dw_fails([&] { tpu_bdc_fp_depthwise2d(output_off, input_off + 4, weight_off, 0, &shape, &k, &none, &one, &one,
                                        DT_FP32, false); },
           "tpu_bdc_fp_depthwise2d: input local address " + hex(input_off + 4) + " uses the aligned layout");
  dw_fails([&] { tpu_bdc_fp_depthwise2d(output_off, input_off, weight_off, lane1 + bias_off, &shape, &k, &none, &one,
                                        &one, DT_FP32, true); },
           "tpu_bdc_fp_depthwise2d: bias local address " + hex(lane1 + bias_off) +
               " starts on NPU 1; it must start on the input's NPU (NPU 0)");
  const dim4 strides{64, 16, 4, 1};
  dw_fails([&] { tpu_bdc_fp_conv2d(output_off, input_off + 1, weight_off, 0, &shape, &strides, 8, &k, &none, &one,
                                   &one, DT_FP16, DT_FP16, false, false); },
           "tpu_bdc_fp_conv2d: input local address " + hex(input_off + 1) +
               " is not a multiple of the 2-byte size of DT_FP16");
  // Rescaling is FP8-only.
  dw_fails([&] { tpu_bdc_fp_conv2d_with_rescale(output_off, input_off, weight_off, 0, 0, &shape, nullptr, 8, &k, &none,
                                                &one, &one, DT_FP32, DT_FP32, DT_FP32, DT_FP32, false, false, false,
                                                true, false); },
           "tpu_bdc_fp_conv2d_with_rescale: rescaling (do_rescale) applies to FP8 operands, which " + chip.name +
               " does not have");
  dw_fails([&] { tpu_bdc_fp_conv2d_rescale_C(output_off, input_off, weight_off, 0, &shape, nullptr, 8, &k, &none, &one,
                                             &one, DT_FP32, DT_FP32, DT_FP32, DT_FP32, 1.0f, false, false, false); },
           "tpu_bdc_fp_conv2d_rescale_C: rescaling");
  dw_fails([&] { tpu_bdc_fp_conv2d_with_ins(output_off, input_off, weight_off, 0, &shape, nullptr, 8, &k, &one, &none,
                                            &one, DT_FP32, DT_FP32, false, false, 0, 0); },
           "tpu_bdc_fp_conv2d_with_ins is not implemented");
  // Integer operands.
  scalar_t zero{};
  dw_fails([&] { tpu_bdc_int8_asym_quant_conv2d(output_off, lane1 + input_off, weight_off, zero, zero, &shape, nullptr,
                                                8, &k, &none, &one, &one, DT_INT32, DT_INT8, DT_INT8, DT_INT8, false); },
           "tpu_bdc_int8_asym_quant_conv2d: input local address " + hex(lane1 + input_off) + " starts on NPU 1");
  dw_fails([&] { tpu_bdc_int8_asym_quant_conv2d(output_off, input_off, weight_off, zero, zero, &shape, nullptr, 8, &k,
                                                &none, &one, &one, DT_INT8, DT_INT8, DT_INT8, DT_INT8, false); },
           "tpu_bdc_int8_asym_quant_conv2d: output_dtype DT_INT8 is not allowed here; expected one of DT_INT16, "
           "DT_INT32, DT_UINT16, DT_UINT32");
  dw_fails([&] { tpu_bdc_int8_asym_quant_conv2d(output_off, input_off, weight_off, zero, zero, &shape, nullptr, 8, &k,
                                                &none, &one, &one, DT_INT32, DT_INT16, DT_INT8, DT_INT8, false); },
           "tpu_bdc_int8_asym_quant_conv2d: input_dtype DT_INT16 is not allowed here; expected one of DT_INT8, "
           "DT_UINT8");
  dw_fails([&] { tpu_bdc_int8_asym_pc_quant_conv2d(output_off, input_off, weight_off, extra_off + 1, extra_off, &shape,
                                                   nullptr, 8, &k, &none, &one, &one, DT_INT32, DT_INT8, DT_INT8,
                                                   DT_INT8, false); },
           "tpu_bdc_int8_asym_pc_quant_conv2d: kzp local address " + hex(extra_off + 1) + ": its offset " +
               hex(extra_off + 1) + " in NPU 0 must be a multiple of 2 bytes");
  dw_fails([&] { tpu_bdc_int8_asym_pc_quant_conv2d(output_off, input_off, weight_off, extra_off, extra_off + 0x101,
                                                   &shape, nullptr, 8, &k, &none, &one, &one, DT_INT32, DT_INT8,
                                                   DT_INT8, DT_INT8, false); },
           "tpu_bdc_int8_asym_pc_quant_conv2d: pad local address " + hex(extra_off + 0x101) + ": its offset " +
               hex(extra_off + 0x101) + " in NPU 0 must be a multiple of 2 bytes");
  dw_fails([&] { tpu_bdc_int8_sym_quant_conv2d(output_off, input_off, weight_off, bias_off + 2, &shape, nullptr, 8, &k,
                                               &none, &one, &one, DT_INT8, DT_INT8, DT_INT8, DT_INT16, 0, true,
                                               false); },
           "tpu_bdc_int8_sym_quant_conv2d: bias local address " + hex(bias_off + 2) + ": its offset " +
               hex(bias_off + 2) + " in NPU 0 must be a multiple of 4 bytes");
  dw_fails([&] { tpu_bdc_conv2d_requant_pc_asym_C(output_off, input_off, weight_off, 0, extra_off + 4, zero, zero,
                                                  &shape, nullptr, 8, &k, &none, &one, &one, DT_INT8, DT_INT8, DT_INT8,
                                                  DT_INT32, true, false, false, false, false, RM_HALF_UP); },
           "tpu_bdc_conv2d_requant_pc_asym_C: requant local address " + hex(extra_off + 4) + ": its offset " +
               hex(extra_off + 4) + " in NPU 0 must be a multiple of 8 bytes");
  dw_fails([&] { tpu_bdc_conv2d_requant_C_asym_C(output_off, input_off, weight_off, 0, zero, zero, &shape, nullptr, 8,
                                                 &k, &none, &one, &one, DT_INT8, DT_INT8, DT_INT8, DT_INT32, 1, 0, 0,
                                                 true, false, false, false, false, rounding_mode_t(7)); },
           "tpu_bdc_conv2d_requant_C_asym_C: rounding_mode 7 is not a rounding_mode_t");
  // The per-channel requant words: σ in [-128, 127] always holds (8 bits);
  // the scalar shift argument too (a char). Zero point in int16: a short.
  dw_fails([&] { tpu_bdc_int8_depthwise2d(output_off, input_off, weight_off, 0, zero, &shape, &k, &none, &one, &one,
                                          DT_INT8, DT_INT8, DT_INT32, DT_INT32, 0, false, false, RM_HALF_UP); },
           "tpu_bdc_int8_depthwise2d: weight_dtype DT_INT32 is not allowed here; expected one of DT_INT8, DT_UINT8");
  const dim2 s16{1, 16};
  dw_fails([&] { tpu_bdc_int8_depthwise2d(output_off, input_off, weight_off, 0, zero, &shape, &k, &none, &s16, &one,
                                          DT_INT8, DT_INT8, DT_INT8, DT_INT32, 0, false, false, RM_HALF_UP); },
           "tpu_bdc_int8_depthwise2d: stride (h, w) = (1, 16): each must be in [1, 15]");
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcConv, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
