#include "conv.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "cmodel/numeric/integer.h"
#include "elementwise.h"
#include "int_arith.h"
#include "family_rules.h"
#include "window.h"

namespace cmodel::bdc {
namespace {

constexpr int limit = 65535;
// The 4-bit register fields behind stride, dilation, padding and insertion
// (tier-3 §5).
constexpr int field_limit = 15;

// ---- vendor rules -----------------------------------------------------------------------

// The rules a command's checks enforce: a convolution (CONV-*) names one per
// field and operand; a depthwise one is a PorD command (DW-*: float DW-1..4,
// integer DW-6..9).
struct Rules {
  Rule shape, kernel, step, insert;  // input dims and extents; kh, kw; stride, dilation, pads; insert
  Rule input_npu, input_align;
  std::optional<Rule> output_align;  // none: a float depthwise output (DW-2 aligns only the input)
  Rule output_npu;                   // depthwise: the input's NPU
  Rule weight_npu, weight_align;
  Rule vector_npu, vector_align;  // bias, kernel zero point, requant
  Rule pad_npu, pad_align;        // the per-channel (pad, insert) pairs
};

Rules rules_of(ConvKind kind, bool quant) {
  if (kind == ConvKind::full)
    return {.shape = Rule::CONV_13,
            .kernel = Rule::CONV_16,
            .step = Rule::CONV_14,
            .insert = Rule::CONV_15,
            .input_npu = quant ? Rule::CONV_2 : Rule::CONV_1,
            .input_align = Rule::CONV_6,
            .output_align = Rule::CONV_11,
            .output_npu = Rule::CONV_4,  // not checked: a conv output may start on any NPU
            .weight_npu = Rule::CONV_4,
            .weight_align = Rule::CONV_9,
            .vector_npu = Rule::CONV_4,
            .vector_align = Rule::CONV_10,
            .pad_npu = Rule::CONV_5,
            .pad_align = Rule::CONV_5};
  const Rule geometry = quant ? Rule::DW_9 : Rule::DW_4, npu = quant ? Rule::DW_6 : Rule::DW_1,
             align = quant ? Rule::DW_7 : Rule::DW_2;
  return {.shape = geometry,
          .kernel = geometry,
          .step = geometry,
          .insert = geometry,
          .input_npu = npu,  // not checked: the output follows the input
          .input_align = align,
          .output_align = quant ? std::optional<Rule>(align) : std::nullopt,
          .output_npu = npu,
          .weight_npu = npu,
          .weight_align = align,
          .vector_npu = npu,
          .vector_align = align,
          .pad_npu = npu,
          .pad_align = align};
}

// ---- geometry ---------------------------------------------------------------------------

struct Geometry {
  int n, ic, ih, iw, oc, oh, ow, kh, kw;
  bool depthwise, rotate;
  // What tap p of output row y reads: rows[y * kh + p]; likewise columns.
  std::vector<Position> rows, cols;

  int64_t taps() const { return int64_t(kh) * kw; }
  // Input channels each output channel sums over.
  int channels_per_output() const { return depthwise ? 1 : ic; }
};

void require_padded_extent(Rule rule, char axis, int in, int insert, int pad_lo, int pad_hi) {
  const int64_t padded = int64_t(in - 1) * (int64_t(insert) + 1) + 1 + pad_lo + pad_hi;
  if (padded > limit)
    fail(rule,
         "the padded input {} = ({} - 1) x ({} + 1) + 1 + {} + {} = {}; it must be in [1, {}]", axis, in, insert,
         pad_lo, pad_hi, padded, limit);
}

std::vector<Position> taps_of(const WindowAxis &axis, int out) {
  std::vector<Position> taps(size_t(out) * axis.kernel);
  for (int o = 0; o < out; ++o)
    for (int t = 0; t < axis.kernel; ++t) taps[size_t(o) * axis.kernel + t] = axis.locate(o, t);
  return taps;
}

Geometry geometry(const ConvWindow &w, ConvKind kind, const Rules &rules) {
  const dim4 &s = w.input_shape;
  const bool depthwise = kind == ConvKind::depthwise;
  require_shape_in(rules.shape, "input", s, limit);
  if (!depthwise && (w.output_c < 1 || w.output_c > limit))
    fail(rules.shape, "output_c = {}: it must be in [1, {}]", w.output_c, limit);
  const dim2 &k = w.kernel, &st = w.stride, &d = w.dilation, &ins = w.insert;
  const padding_t &p = w.padding;
  require_each_in(rules.kernel, "kernel", "h, w", {k.h, k.w}, 1, limit);
  require_each_in(rules.step, "stride", "h, w", {st.h, st.w}, 1, field_limit);
  require_each_in(rules.step, "dilation", "h, w", {d.h, d.w}, 1, field_limit);
  require_each_in(rules.step, "padding", "top, bottom, left, right", {p.top, p.bottom, p.left, p.right}, 0,
                  field_limit);
  // Depthwise and pooling commands have a narrower insert field (§5).
  require_each_in(rules.insert, "insert", "h, w", {ins.h, ins.w}, 0, depthwise ? 7 : 14);
  require_padded_extent(rules.shape, 'h', s.h, ins.h, p.top, p.bottom);
  require_padded_extent(rules.shape, 'w', s.w, ins.w, p.left, p.right);
  const WindowAxis rows{s.h, ins.h, p.top, k.h, st.h, d.h}, cols{s.w, ins.w, p.left, k.w, st.w, d.w};
  const int oh = window_output_extent(rules.shape, 'h', s.h, ins.h, p.top, p.bottom, k.h, st.h, d.h, limit);
  const int ow = window_output_extent(rules.shape, 'w', s.w, ins.w, p.left, p.right, k.w, st.w, d.w, limit);
  return {s.n, s.c, s.h, s.w, depthwise ? s.c : w.output_c, oh, ow, k.h, k.w, depthwise, w.rotate,
          taps_of(rows, oh), taps_of(cols, ow)};
}

// Padding wins over insertion: a position outside the inserted input along
// either axis is padding (§3.1).
Place place_of(const Position &row, const Position &col) {
  if (row.place == Place::padding || col.place == Place::padding) return Place::padding;
  if (row.place == Place::inserted || col.place == Place::inserted) return Place::inserted;
  return Place::input;
}

constexpr int64_t padding_tap = -1, inserted_tap = -2;

// The element offset inside an input channel's ih x iw plane that each tap
// (p, q) of output (y, x) reads, or padding_tap / inserted_tap. Computed
// once per output position and reused for every input channel.
void tap_offsets(const Geometry &g, int y, int x, std::vector<int64_t> &offsets) {
  offsets.resize(size_t(g.taps()));
  for (int p = 0; p < g.kh; ++p) {
    const Position r = g.rows[size_t(y) * g.kh + p];
    for (int q = 0; q < g.kw; ++q) {
      const Position c = g.cols[size_t(x) * g.kw + q];
      const Place where = place_of(r, c);
      offsets[size_t(p) * g.kw + q] = where == Place::input     ? int64_t(r.index) * g.iw + c.index
                                      : where == Place::padding ? padding_tap
                                                                : inserted_tap;
    }
  }
}

// ---- operand checks ---------------------------------------------------------------------

// A compact tensor on `npu`, at an offset that is a multiple of `bytes`
// (the rules of its placement and its alignment).
TensorRef compact_operand(Context &ctx, Rule npu_rule, Rule align_rule, const char *role, local_addr_t addr,
                          const dim4 &shape, data_type_t dtype, int npu, const char *whose, int bytes) {
  require_element_aligned(ctx, align_rule, role, addr, dtype);
  require_offset_multiple(ctx, align_rule, role, addr, bytes);
  const int start = int(addr / ctx.chip.local_mem_bytes);
  const dim4 stride = compact_stride(ctx.chip, start, shape);
  const TensorRef t = operand(ctx, role, addr, shape, &stride, dtype);
  require_start_npu(npu_rule, t, role, npu, whose);
  return t;
}

// The conv input: aligned or strided; strides the command ignores (n with
// n = 1, c when every channel is in the first row of NPUs) are not checked.
TensorRef conv_input(Context &ctx, const ConvWindow &w, local_addr_t addr, data_type_t dtype, bool depthwise,
                     const Rules &rules) {
  const dim4 *stride = depthwise ? nullptr : w.input_stride;
  if (stride) {
    const dim4 &s = *stride;
    const int start = int(addr / ctx.chip.local_mem_bytes);
    const bool n_used = w.input_shape.n > 1, c_used = start + w.input_shape.c > ctx.chip.npu_num;
    const int n = n_used ? s.n : 0, c = c_used ? s.c : 0;
    // The 16-bit input stride fields of the short conv command (sCONV
    // opd0_*_str). A c-stride is checked whenever the channels wrap past the
    // last NPU, even with C <= NPU_NUM (the checker ignores it then): the
    // command reads it, so it must fit the field.
    require_each_in(Rule::CONV_18, "input_stride", "n, c, h, w", {n, c, s.h, s.w}, 0, limit);
    require_element_aligned(ctx, rules.input_align, "input", addr, dtype);
  } else {
    require_aligned_start(ctx, rules.input_align, "input", addr);
  }
  const TensorRef t = operand(ctx, "input", addr, w.input_shape, stride, dtype);
  if (!depthwise && dtype != DT_FP32 && t.start_npu != 0)
    fail(rules.input_npu,
         "input local address {:#x} starts on NPU {}; a {} conv input must start on NPU 0 (only FP32 inputs may "
         "start on any NPU)",
         t.addr, t.start_npu, dtype_name(dtype));
  return t;
}

TensorRef conv_output(Context &ctx, const Geometry &g, local_addr_t addr, data_type_t dtype, const TensorRef &in,
                      const Rules &rules) {
  if (!g.depthwise && addr >= ctx.chip.local_mem_total())
    fail(ErrorKind::memory_fault, Rule::CONV_3,
         "output local address {:#x} is past the end of local memory ({} NPUs x {})", addr, ctx.chip.npu_num,
         Bytes{ctx.chip.local_mem_bytes});
  const dim4 shape{g.n, g.oc, g.oh, g.ow};
  // The vendor checker asks a float depthwise output for no more than its
  // element size (DW-2 aligns the input only): the aligned layout's strides,
  // from any element-aligned start.
  std::optional<dim4> element_aligned;
  if (rules.output_align)
    require_aligned_start(ctx, *rules.output_align, "output", addr);
  else
    element_aligned = aligned_stride(ctx.chip, int(addr / ctx.chip.local_mem_bytes), shape, dtype);
  const TensorRef out = operand(ctx, "output", addr, shape, element_aligned ? &*element_aligned : nullptr, dtype);
  if (g.depthwise) require_start_npu(rules.output_npu, out, "output", in.start_npu, "the input's NPU");
  return out;
}

// Elements of one output channel's weight row: ALIGN(ic, P) kh kw (conv),
// kh kw (depthwise).
int64_t weight_row(const Geometry &g, int parallel) {
  return g.depthwise ? g.taps() : numeric::align_up(int64_t(g.ic), int64_t(parallel)) * g.taps();
}

TensorRef weight_tensor(Context &ctx, const Geometry &g, local_addr_t addr, data_type_t dtype, const TensorRef &out,
                        int parallel, const Rules &rules) {
  if (g.depthwise)
    return compact_operand(ctx, rules.weight_npu, rules.weight_align, "weight", addr, {1, g.oc, g.kh, g.kw}, dtype,
                           out.start_npu, "the input's NPU", dtype_bytes(dtype));
  // The spec's local shapes of the P-IC packing (§1.2), both compact:
  // (1, oc, ic, kh kw) for P = 1, (1, oc, ceil(ic / P) kh kw, P) otherwise.
  const int64_t taps = g.taps();
  const int64_t h = parallel == 1 ? g.ic : numeric::div_up(int64_t(g.ic), int64_t(parallel)) * taps;
  const int64_t w = parallel == 1 ? taps : parallel;
  if (h > limit || w > limit)
    fail(ErrorKind::illegal_command, "the weight's local shape [1, {}, {}, {}] has a dim past {}", g.oc, h, w, limit);
  const int align = dtype == DT_FP32 ? 4 : ctx.chip.eu_bytes;
  return compact_operand(ctx, rules.weight_npu, rules.weight_align, "weight", addr, {1, g.oc, int(h), int(w)}, dtype,
                         out.start_npu, "the output's NPU", align);
}

// A per-output-channel vector (1, oc, 1, w) on the output's NPU.
TensorRef channel_vector(Context &ctx, const Geometry &g, const char *role, local_addr_t addr, int w, data_type_t dtype,
                         const TensorRef &out, int bytes, const Rules &rules) {
  return compact_operand(ctx, rules.vector_npu, rules.vector_align, role, addr, {1, g.oc, 1, w}, dtype, out.start_npu,
                         g.depthwise ? "the input's NPU" : "the output's NPU", bytes);
}

// ---- loading ----------------------------------------------------------------------------

// Every element of t in (n, c, h, w) order, as floats or exact integers.
std::vector<float> load_floats(const TensorRef &t) {
  std::vector<float> v(size_t(t.elements()));
  size_t k = 0;
  with_float_dtype(t.dtype, [&]<typename D>(D) {
    using S = typename D::Storage;
    for (int n = 0; n < t.shape.n; ++n)
      for (int c = 0; c < t.shape.c; ++c)
        for (int h = 0; h < t.shape.h; ++h) {
          const S *row = reinterpret_cast<const S *>(t.row(n, c, h));
          for (int w = 0; w < t.shape.w; ++w) v[k++] = D::load(row[int64_t(w) * t.stride.w]);
        }
  });
  return v;
}

std::vector<int64_t> load_all_ints(const TensorRef &t) {
  std::vector<int64_t> v(size_t(t.elements()));
  size_t k = 0;
  for (int n = 0; n < t.shape.n; ++n)
    for (int c = 0; c < t.shape.c; ++c)
      for (int h = 0; h < t.shape.h; ++h, k += size_t(t.shape.w))
        load_ints(t.dtype, t.row(n, c, h), t.stride.w, t.shape.w, v.data() + k);
  return v;
}

// The stored weights (each output channel's row) as w[o][j][p][q], j the
// input channel within the group, with the deconv rotation applied.
template <typename V>
std::vector<V> arrange_weights(const std::vector<V> &stored, const Geometry &g, int parallel) {
  const int icn = g.channels_per_output();
  const int64_t row = weight_row(g, parallel), taps = g.taps();
  std::vector<V> w(size_t(g.oc) * icn * taps);
  size_t k = 0;
  for (int o = 0; o < g.oc; ++o)
    for (int i = 0; i < icn; ++i)
      for (int p = 0; p < g.kh; ++p)
        for (int q = 0; q < g.kw; ++q) {
          const int64_t tap = g.rotate ? int64_t(g.kh - 1 - p) * g.kw + (g.kw - 1 - q) : int64_t(p) * g.kw + q;
          const int64_t e = parallel == 1 ? i * taps + tap : (i / parallel) * taps * parallel + tap * parallel + i % parallel;
          w[k++] = stored[size_t(o * row + e)];
        }
  return w;
}

int parallel_of(const Context &ctx, const Geometry &g, data_type_t weight_dtype) {
  return g.depthwise ? 1 : ctx.chip.ic_parallel(dtype_bits(weight_dtype));
}

// ---- cost -------------------------------------------------------------------------------

// Conv: ceil(MACs / peak) + issue latency (tier-3 §6).
double conv_cycles(const Context &ctx, const Geometry &g, data_type_t dtype) {
  const ChipSpec &chip = ctx.chip;
  const double peak = dtype == DT_FP32 ? double(chip.npu_num) * eu_num(chip, DT_FP32)
                                       : double(chip.npu_num) * chip.ic_parallel(dtype_bits(dtype)) * 4;
  const double macs = double(g.n) * g.oc * g.oh * g.ow * g.ic * g.kh * g.kw;
  return std::ceil(macs / peak) + chip.bdc_issue_cycles;
}

void book_conv(Context &ctx, const char *api, const Geometry &g, data_type_t input_dtype, const TensorRef &out,
               std::initializer_list<const TensorRef *> reads) {
  for (const TensorRef *t : reads)
    if (t) ctx.hazards.note(*t, false);
  // Depthwise: the pooling cost, per EU pass of the output (tier-3 §6).
  if (g.depthwise)
    book(ctx, api, BdcCost::pool, out, out.dtype, {&out}, {}, double(g.kh) * g.kw);
  else
    book_cycles(ctx, api, conv_cycles(ctx, g, input_dtype), {&out}, {});
}

const TensorRef *ptr(const std::optional<TensorRef> &t) { return t ? &*t : nullptr; }

// ---- float ------------------------------------------------------------------------------

struct FpInputs {
  std::vector<float> x, w, old, bias;
};

template <typename Out>
void fp_accumulate(const FpConv &cv, const Geometry &g, const FpInputs &in, const TensorRef &out) {
  using S = typename Out::Storage;
  const int icn = g.channels_per_output();
  const int64_t plane = int64_t(g.ih) * g.iw, taps = g.taps();
  std::vector<int64_t> offsets;
  size_t k = 0;
  for (int n = 0; n < g.n; ++n)
    for (int o = 0; o < g.oc; ++o)
      for (int y = 0; y < g.oh; ++y) {
        S *dst = reinterpret_cast<S *>(out.row(n, o, y));
        for (int x = 0; x < g.ow; ++x, ++k) {
          tap_offsets(g, y, x, offsets);
          float acc = cv.result_add ? in.old[k] : 0.0f;
          for (int j = 0; j < icn; ++j) {
            const int i = g.depthwise ? o : j;
            const float *xs = in.x.data() + (int64_t(n) * g.ic + i) * plane;
            const float *ws = in.w.data() + (int64_t(o) * icn + j) * taps;
            for (int64_t t = 0; t < taps; ++t) {
              // Padding and inserted positions are zero terms.
              const float v = offsets[size_t(t)] >= 0 ? xs[offsets[size_t(t)]] : 0.0f;
              const float prod = v * ws[t];  // separate statements: no fused multiply-add
              acc = acc + prod;
            }
          }
          if (cv.has_bias) acc = acc + in.bias[size_t(o)];
          if (cv.relu) acc = acc > 0 ? acc : 0.0f;
          dst[x] = Out::store(acc);
        }
      }
}

float float_constant(scalar_t value, data_type_t dtype) {
  return with_float_dtype(dtype, [&]<typename D>(D) { return float(scalar_value<D>(value)); });
}

// ---- integer ----------------------------------------------------------------------------

struct IntInputs {
  std::vector<int64_t> x, w, old, bias, kzp, pad, insert;  // kzp, pad, insert: per channel
  std::vector<int64_t> multiplier, shift, zero_point;    // per output channel
};

// The low byte of a scalar as an 8-bit dtype.
int64_t byte_value(scalar_t s, data_type_t dtype) {
  const uint8_t b = uint8_t(s.u32 & 0xff);
  return dtype_is_signed(dtype) ? int64_t(int8_t(b)) : int64_t(b);
}

template <typename T>
void int_accumulate(const IntConv &cv, const Geometry &g, const IntInputs &in, const TensorRef &out) {
  const int icn = g.channels_per_output();
  const int64_t plane = int64_t(g.ih) * g.iw, taps = g.taps();
  const bool sym = cv.requant.sym && dtype_is_signed(cv.output_dtype);
  const int64_t hi = int_max_of(cv.output_dtype), lo = sym ? -hi : int_min_of(cv.output_dtype);
  std::vector<int64_t> offsets;
  size_t k = 0;
  for (int n = 0; n < g.n; ++n)
    for (int o = 0; o < g.oc; ++o) {
      const int64_t kzp = in.kzp.empty() ? 0 : in.kzp[size_t(o)];
      for (int y = 0; y < g.oh; ++y) {
        T *dst = reinterpret_cast<T *>(out.row(n, o, y));
        for (int x = 0; x < g.ow; ++x, ++k) {
          tap_offsets(g, y, x, offsets);
          int64_t acc = 0;
          for (int j = 0; j < icn; ++j) {
            const int i = g.depthwise ? o : j;
            const int64_t *xs = in.x.data() + (int64_t(n) * g.ic + i) * plane;
            const int64_t *ws = in.w.data() + (int64_t(o) * icn + j) * taps;
            const int64_t pad = in.pad[size_t(i)], insert = in.insert[size_t(i)];
            for (int64_t t = 0; t < taps; ++t) {
              const int64_t at = offsets[size_t(t)];
              const int64_t v = at >= 0 ? xs[at] : at == padding_tap ? pad : insert;
              acc += v * (ws[t] - kzp);
            }
          }
          if (cv.has_bias) acc += in.bias[size_t(o)];
          if (cv.result_add) acc += in.old[k];
          __int128 v = requant_scale(acc, in.multiplier[size_t(o)], int(in.shift[size_t(o)]), cv.requant.mode);
          if (cv.requant.relu && v < 0) v = 0;
          v += in.zero_point[size_t(o)];
          dst[x] = T(std::clamp<__int128>(v, lo, hi));
        }
      }
    }
}

// The per-channel (pad, insert) values, or the two constants for every
// input channel.
void load_pad_insert(Context &ctx, const IntConv &cv, const Geometry &g, const TensorRef &in, IntInputs &v,
                     std::optional<TensorRef> &tensor, const Rules &rules) {
  if (!cv.pad_insert_tensor) {
    v.pad.assign(size_t(g.ic), byte_value(cv.pad.value, cv.input_dtype));
    v.insert.assign(size_t(g.ic), byte_value(cv.insert.value, cv.input_dtype));
    return;
  }
  const int size = dtype_bytes(cv.input_dtype);
  tensor = compact_operand(ctx, rules.pad_npu, rules.pad_align, "pad", cv.pad_insert_addr, {1, g.ic, 1, 2},
                           cv.input_dtype, in.start_npu, "the input's NPU", 2 * size);
  const std::vector<int64_t> pairs = load_all_ints(*tensor);
  for (int i = 0; i < g.ic; ++i) {
    v.pad.push_back(pairs[size_t(2 * i)]);
    v.insert.push_back(pairs[size_t(2 * i + 1)]);
  }
}

void load_requant(Context &ctx, const IntConv &cv, const Geometry &g, const TensorRef &out, IntInputs &v,
                  std::optional<TensorRef> &tensor, const Rules &rules) {
  const ConvRequant &rq = cv.requant;
  // The argument types (int, char, short) keep σ and zp in range; the
  // tensor's fields are 8 and 16 bits wide.
  if (!rq.per_channel) {
    v.multiplier.assign(size_t(g.oc), rq.multiplier);
    v.shift.assign(size_t(g.oc), rq.shift);
    v.zero_point.assign(size_t(g.oc), rq.zero_point);
    return;
  }
  tensor = channel_vector(ctx, g, "requant", rq.addr, 2, DT_INT32, out, 8, rules);
  const std::vector<int64_t> words = load_all_ints(*tensor);
  for (int o = 0; o < g.oc; ++o) {
    const uint32_t second = uint32_t(words[size_t(2 * o + 1)]);
    v.multiplier.push_back(words[size_t(2 * o)]);
    v.shift.push_back(int8_t(second & 0xff));
    v.zero_point.push_back(int16_t(second >> 16));
  }
}

}  // namespace

void fp_conv(Context &ctx, const char *api, local_addr_t output_addr, const FpConv &cv) {
  const Rules rules = rules_of(cv.kind, false);
  under_rule(cv.kind == ConvKind::full ? Rule::CONV_7 : Rule::DW_3, [&] {
    require_float("input_dtype", cv.input_dtype);
    require_float("output_dtype", cv.output_dtype);
  });
  if (cv.has_bias) require_float("bias_dtype", cv.bias_dtype);
  const Geometry g = geometry(cv.window, cv.kind, rules);
  const TensorRef in = conv_input(ctx, cv.window, cv.input, cv.input_dtype, g.depthwise, rules);
  const TensorRef out = conv_output(ctx, g, output_addr, cv.output_dtype, in, rules);
  const int parallel = parallel_of(ctx, g, cv.input_dtype);
  std::optional<TensorRef> weight, bias;
  if (!cv.weight.is_const) weight = weight_tensor(ctx, g, cv.weight.addr, cv.input_dtype, out, parallel, rules);
  if (cv.has_bias)
    bias = channel_vector(ctx, g, "bias", cv.bias, 1, cv.bias_dtype, out,
                          g.depthwise ? dtype_bytes(cv.bias_dtype) : 4, rules);

  // Every input is read before the output is written.
  FpInputs v;
  v.x = load_floats(in);
  v.w = weight ? arrange_weights(load_floats(*weight), g, parallel)
               : std::vector<float>(size_t(g.oc) * g.channels_per_output() * g.taps(),
                                    float_constant(cv.weight.value, cv.input_dtype));
  if (cv.result_add) v.old = load_floats(out);
  if (bias) v.bias = load_floats(*bias);
  with_float_dtype(cv.output_dtype, [&]<typename Out>(Out) { fp_accumulate<Out>(cv, g, v, out); });

  warn_overlaps(ctx, api, out, {{"input", &in}, {"weight", ptr(weight)}, {"bias", ptr(bias)}});
  book_conv(ctx, api, g, cv.input_dtype, out, {&in, ptr(weight), ptr(bias)});
}

void int_conv(Context &ctx, const char *api, local_addr_t output_addr, const IntConv &cv) {
  const Rules rules = rules_of(cv.kind, true);
  under_rule(cv.kind == ConvKind::full ? Rule::CONV_12 : Rule::DW_8, [&] {
    require_dtype("input_dtype", cv.input_dtype, {DT_INT8, DT_UINT8});
    require_dtype("weight_dtype", cv.weight_dtype, {DT_INT8, DT_UINT8});
    require_int_dtype("output_dtype", cv.output_dtype);
  });
  if (cv.has_kzp) require_dtype("kzp_dtype", cv.kzp_dtype, {DT_INT8, DT_UINT8});
  if (cv.has_bias) require_dtype("bias_dtype", cv.bias_dtype, {DT_INT32, DT_INT16, DT_UINT16});
  require_rounding_mode(cv.requant.mode);
  const Geometry g = geometry(cv.window, cv.kind, rules);
  const TensorRef in = conv_input(ctx, cv.window, cv.input, cv.input_dtype, g.depthwise, rules);
  const TensorRef out = conv_output(ctx, g, output_addr, cv.output_dtype, in, rules);
  const int parallel = parallel_of(ctx, g, cv.weight_dtype);
  std::optional<TensorRef> weight, bias, kzp, pad, requant;
  if (!cv.weight.is_const) weight = weight_tensor(ctx, g, cv.weight.addr, cv.weight_dtype, out, parallel, rules);
  if (cv.has_bias) bias = channel_vector(ctx, g, "bias", cv.bias, 1, cv.bias_dtype, out, 4, rules);
  if (cv.has_kzp && !cv.kzp.is_const)
    kzp = channel_vector(ctx, g, "kzp", cv.kzp.addr, 1, cv.kzp_dtype, out, 2, rules);

  // Every input is read before the output is written.
  IntInputs v;
  v.x = load_all_ints(in);
  v.w = weight ? arrange_weights(load_all_ints(*weight), g, parallel)
               : std::vector<int64_t>(size_t(g.oc) * g.channels_per_output() * g.taps(),
                                      byte_value(cv.weight.value, cv.weight_dtype));
  if (kzp)
    v.kzp = load_all_ints(*kzp);
  else if (cv.has_kzp)
    v.kzp.assign(size_t(g.oc), byte_value(cv.kzp.value, cv.kzp_dtype));
  if (bias) v.bias = load_all_ints(*bias);
  if (cv.result_add) v.old = load_all_ints(out);
  load_pad_insert(ctx, cv, g, in, v, pad, rules);
  load_requant(ctx, cv, g, out, v, requant, rules);
  with_int_dtype(cv.output_dtype, [&]<typename D>(D) {
    int_accumulate<typename D::Storage>(cv, g, v, out);
  });

  warn_overlaps(ctx, api, out, {{"input", &in}, {"weight", ptr(weight)}, {"bias", ptr(bias)}});
  book_conv(ctx, api, g, cv.input_dtype, out, {&in, ptr(weight), ptr(bias), ptr(kzp), ptr(pad), ptr(requant)});
}

}  // namespace cmodel::bdc
