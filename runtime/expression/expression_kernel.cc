// expression_kernel.cc: the fused kernel (expression_kernel.h).
//
// Local memory per NPU, from 0: the coefficient tables (on NPU 0's offsets
// as the loaders want them), then the registers of set 0, of set 1 when
// pipelined, then the work buffers; every buffer is a tile of the same size
// and starts on a bank or a 64-byte boundary (a multiple of the EU bytes of
// both chips, as the transcendental commands require). See lay_out().
#include <fmt/format.h>

#include <algorithm>

#include "emulator/emulator.h"
#include "expression/elementwise_view.h"
#include "expression/expression_kernel.h"
#include "io/arrays.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime::detail {
namespace {

constexpr int64_t kMaxDim = 65535;
constexpr int64_t kAlign = 64;
constexpr int64_t kTableBytes = 256;  // exp coefficients at 0, log coefficients at 128
constexpr local_addr_t kExpTable = 0, kLogTable = 128;

int64_t align_up(int64_t value, int64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

dim4 make_dim4(int64_t n, int64_t c, int64_t h, int64_t w) { return {int(n), int(c), int(h), int(w)}; }

struct Layout {
  local_addr_t reg[2][64];  // per set; registers <= steps + inputs + 1, checked by the host
  local_addr_t work[2] = {0, 0};
  int64_t buffer_bytes = 0;
};

// Every register and work buffer in whole banks of its own when they fit
// (the tables, when needed, in bank 0): then no command has two distinct
// operands in one bank, the stall the vendor's allocator avoids. Otherwise
// the buffers packed after the tables.
Layout lay_out(const ExprProgram &p, bool pipelined) {
  Layout l;
  const int sets = pipelined ? 2 : 1;
  const int64_t buffers = int64_t(p.registers) * sets + p.work_buffers;
  const int64_t local = tpu_local_mem_size_per_npu(), banks = tpu_bank_num(), bank = local / banks;
  const bool tables = p.exp_table || p.log_table;
  int64_t at = kTableBytes;
  if (buffers + (tables ? 1 : 0) <= banks) {
    l.buffer_bytes = banks / (buffers + (tables ? 1 : 0)) * bank;
    at = tables ? bank : 0;
  } else {
    l.buffer_bytes = (local - kTableBytes) / buffers / kAlign * kAlign;
  }
  for (int s = 0; s < sets; ++s)
    for (int r = 0; r < p.registers; ++r, at += l.buffer_bytes) l.reg[s][r] = local_addr_t(at);
  if (!pipelined)
    for (int r = 0; r < p.registers; ++r) l.reg[1][r] = l.reg[0][r];
  for (int w = 0; w < p.work_buffers; ++w, at += l.buffer_bytes) l.work[w] = local_addr_t(at);
  return l;
}

// An integral constant (compile_expression checked that it is exact in
// dtype) in the scalar_t member the dtype reads.
scalar_t int_scalar_of(float value, data_type_t dtype) {
  scalar_t c;
  c.u32 = 0;
  switch (dtype) {
    case DT_INT8: c.s8 = char(value); break;
    case DT_UINT8: c.u8 = static_cast<unsigned char>(value); break;
    case DT_INT16: c.s16 = short(value); break;
    case DT_UINT16: c.u16 = static_cast<unsigned short>(value); break;
    case DT_UINT32: c.u32 = static_cast<unsigned int>(value); break;
    default: c.s32 = int(value); break;
  }
  return c;
}

scalar_t scalar_of(float value, data_type_t dtype) {
  if (tpu_is_data_type_int(dtype)) return int_scalar_of(value, dtype);
  scalar_t c;
  c.f32 = value;  // already a value of dtype: the cast is exact
  return dtype == DT_FP32 ? c : tpu_fp_cast(c, dtype, DT_FP32, RM_HALF_TO_EVEN);
}

variable_t variable(const ExprOperand &o, const local_addr_t *reg, data_type_t dtype) {
  variable_t v;
  if (o.constant) {
    v.type = SCALAR;
    v.context.scalar = scalar_of(o.value, dtype);
  } else {
    v.type = TENSOR;
    v.context.addr = reg[o.reg];
  }
  return v;
}

// A comparison of two operands, one of which may be a constant (then the
// tensor goes first and the comparison turns around).
void compare(ExprOp op, local_addr_t dst, const ExprOperand &a, const ExprOperand &b, const local_addr_t *reg,
             const dim4 &shape, data_type_t dtype) {
  const scalar_t one = scalar_of(1.0f, dtype);
  if (!a.constant && !b.constant) {
    const local_addr_t x = reg[a.reg], y = reg[b.reg];
    switch (op) {
      case ExprOp::gt: return tpu_bdc_greater(dst, x, y, one, &shape, nullptr, nullptr, nullptr, dtype, dtype);
      case ExprOp::ge: return tpu_bdc_greater_equal(dst, x, y, one, &shape, nullptr, nullptr, nullptr, dtype, dtype);
      case ExprOp::lt: return tpu_bdc_less(dst, x, y, one, &shape, nullptr, nullptr, nullptr, dtype, dtype);
      case ExprOp::le: return tpu_bdc_less_equal(dst, x, y, one, &shape, nullptr, nullptr, nullptr, dtype, dtype);
      case ExprOp::eq: return tpu_bdc_equal(dst, x, y, one, &shape, nullptr, nullptr, nullptr, dtype, dtype);
      default: return tpu_bdc_not_equal(dst, x, y, one, &shape, nullptr, nullptr, nullptr, dtype, dtype);
    }
  }
  const bool flip = a.constant;
  const local_addr_t x = reg[flip ? b.reg : a.reg];
  const scalar_t c = scalar_of(flip ? a.value : b.value, dtype);
  ExprOp o = op;
  if (flip) o = op == ExprOp::gt ? ExprOp::lt : op == ExprOp::lt ? ExprOp::gt : op == ExprOp::ge ? ExprOp::le
                : op == ExprOp::le ? ExprOp::ge : op;
  switch (o) {
    case ExprOp::gt: return tpu_bdc_greater_C(dst, x, c, one, &shape, nullptr, nullptr, dtype, dtype);
    case ExprOp::ge: return tpu_bdc_greater_equal_C(dst, x, c, one, &shape, nullptr, nullptr, dtype, dtype);
    case ExprOp::lt: return tpu_bdc_less_C(dst, x, c, one, &shape, nullptr, nullptr, dtype, dtype);
    case ExprOp::le: return tpu_bdc_less_equal_C(dst, x, c, one, &shape, nullptr, nullptr, dtype, dtype);
    case ExprOp::eq: return tpu_bdc_equal_C(dst, x, c, one, &shape, nullptr, nullptr, dtype, dtype);
    default: return tpu_bdc_not_equal_C(dst, x, c, one, &shape, nullptr, nullptr, dtype, dtype);
  }
}

// Integer add, sub, mul: exact, then wrapped to the dtype (two's
// complement, as numpy and ONNX's reference compute), no shift.
void int_arithmetic(ExprOp op, local_addr_t dst, const ExprOperand &a, const ExprOperand &b, const local_addr_t *reg,
                    const dim4 &shape, data_type_t t) {
  if (!a.constant && !b.constant) {
    const local_addr_t x = reg[a.reg], y = reg[b.reg];
    if (op == ExprOp::add) return tpu_bdc_int_add(dst, x, y, &shape, nullptr, nullptr, nullptr, t, t, t, 0, RM_DOWN, false);
    if (op == ExprOp::sub) return tpu_bdc_int_sub(dst, x, y, &shape, nullptr, nullptr, nullptr, t, t, t, 0, RM_DOWN, false);
    return tpu_bdc_int_mul(dst, x, y, &shape, nullptr, nullptr, nullptr, t, t, t, 0, RM_DOWN, false);
  }
  const bool first = a.constant;
  const local_addr_t x = reg[first ? b.reg : a.reg];
  const scalar_t c = scalar_of(first ? a.value : b.value, t);
  if (op == ExprOp::add) return tpu_bdc_int_add_C(dst, x, c, &shape, nullptr, nullptr, t, t, t, 0, RM_DOWN, false);
  if (op == ExprOp::mul) return tpu_bdc_int_mul_C(dst, x, c, &shape, nullptr, nullptr, t, t, t, 0, RM_DOWN, false);
  if (first) return tpu_bdc_int_C_sub(dst, x, c, &shape, nullptr, nullptr, t, t, t, 0, RM_DOWN, false);
  return tpu_bdc_int_sub_C(dst, x, c, &shape, nullptr, nullptr, t, t, t, 0, RM_DOWN, false);
}

// add, sub, mul, div, max, min with at most one constant operand.
void arithmetic(ExprOp op, local_addr_t dst, const ExprOperand &a, const ExprOperand &b, const local_addr_t *reg,
                const dim4 &shape, data_type_t dtype) {
  if (tpu_is_data_type_int(dtype) && (op == ExprOp::add || op == ExprOp::sub || op == ExprOp::mul))
    return int_arithmetic(op, dst, a, b, reg, shape, dtype);
  if (!a.constant && !b.constant) {
    const local_addr_t x = reg[a.reg], y = reg[b.reg];
    switch (op) {
      case ExprOp::add: return tpu_bdc_fp_add(dst, x, y, &shape, nullptr, nullptr, nullptr, dtype);
      case ExprOp::sub: return tpu_bdc_fp_sub(dst, x, y, &shape, nullptr, nullptr, nullptr, dtype);
      case ExprOp::mul: return tpu_bdc_fp_mul(dst, x, y, &shape, nullptr, nullptr, nullptr, dtype);
      case ExprOp::div: return tpu_bdc_fp_div(dst, x, y, &shape, nullptr, nullptr, nullptr, dtype);
      case ExprOp::max: return tpu_bdc_max(dst, x, y, &shape, nullptr, nullptr, nullptr, dtype);
      default: return tpu_bdc_min(dst, x, y, &shape, nullptr, nullptr, nullptr, dtype);
    }
  }
  const bool first = a.constant;  // constant op tensor
  const local_addr_t x = reg[first ? b.reg : a.reg];
  const scalar_t c = scalar_of(first ? a.value : b.value, dtype);
  switch (op) {
    case ExprOp::add: return tpu_bdc_fp_add_C(dst, x, c, &shape, nullptr, nullptr, dtype);
    case ExprOp::mul: return tpu_bdc_fp_mul_C(dst, x, c, &shape, nullptr, nullptr, dtype);
    case ExprOp::max: return tpu_bdc_max_C(dst, x, c, &shape, nullptr, nullptr, dtype);
    case ExprOp::min: return tpu_bdc_min_C(dst, x, c, &shape, nullptr, nullptr, dtype);
    case ExprOp::sub:
      if (first) return tpu_bdc_fp_C_sub(dst, x, c, &shape, nullptr, nullptr, dtype);
      return tpu_bdc_fp_sub_C(dst, x, c, &shape, nullptr, nullptr, dtype);
    default:
      if (first) return tpu_bdc_fp_C_div(dst, x, c, &shape, nullptr, nullptr, dtype);
      return tpu_bdc_fp_div_C(dst, x, c, &shape, nullptr, nullptr, dtype);
  }
}

void unary(ExprOp op, local_addr_t dst, local_addr_t x, const Layout &l, const dim4 &shape, data_type_t dtype,
           local_addr_t tables) {
  const local_addr_t exp_table = tables + kExpTable, log_table = tables + kLogTable;
  switch (op) {
    case ExprOp::neg:  // an integer's: 0 - x wrapped, as numpy (the BDC's neg saturates INT_MIN)
      if (tpu_is_data_type_int(dtype))
        return tpu_bdc_int_C_sub(dst, x, scalar_of(0.0f, dtype), &shape, nullptr, nullptr, dtype, dtype, dtype, 0,
                                 RM_DOWN, false);
      return tpu_bdc_neg(dst, x, &shape, nullptr, nullptr, dtype);
    case ExprOp::abs: return tpu_bdc_abs(dst, x, &shape, nullptr, nullptr, dtype);
    case ExprOp::relu: return tpu_bdc_relu(dst, x, &shape, nullptr, nullptr, dtype);
    case ExprOp::sqrt: return tpu_bdc_fp_sqrt(dst, x, &shape, dtype);
    case ExprOp::rsqrt: return tpu_bdc_fp_rsqrt(dst, x, &shape, dtype);
    case ExprOp::exp: return tpu_bdc_fp_exp(dst, x, l.work[0], l.work[1], exp_table, &shape, dtype);
    case ExprOp::log: return tpu_bdc_fp_log(dst, x, l.work[0], log_table, &shape, dtype);
    case ExprOp::sigmoid: return tpu_bdc_fp_sigmoid(dst, x, l.work[0], l.work[1], exp_table, NO_USE, &shape, dtype);
    case ExprOp::tanh: return tpu_bdc_fp_tanh(dst, x, l.work[0], l.work[1], exp_table, &shape, dtype);
    default: return tpu_bdc_cpy(dst, x, &shape, nullptr, nullptr, dtype);  // ExprOp::input: a copy
  }
}

void compute(const ExprProgram &p, const local_addr_t *reg, const Layout &l, const dim4 &shape, data_type_t dtype,
             local_addr_t tables = 0) {
  for (int s = 0; s < p.steps; ++s) {
    const ExprStep &st = p.step[s];
    const local_addr_t dst = reg[st.dst];
    if (st.op == ExprOp::where) {  // where(c, a, b): c == 0 ? b : a
      const variable_t cond = variable(st.src[0], reg, dtype), a = variable(st.src[1], reg, dtype),
                       b = variable(st.src[2], reg, dtype);
      variable_t zero;
      zero.type = SCALAR;
      zero.context.scalar = scalar_of(0.0f, dtype);
      tpu_bdc_equal_select(dst, &cond, &zero, &b, &a, &shape, dtype, dtype);
    } else if (st.op >= ExprOp::gt && st.op <= ExprOp::ne) {
      compare(st.op, dst, st.src[0], st.src[1], reg, shape, dtype);
    } else if (expr_arity(st.op) == 2) {
      arithmetic(st.op, dst, st.src[0], st.src[1], reg, shape, dtype);
    } else {
      unary(st.op, dst, reg[st.src[0].reg], l, shape, dtype, tables);
    }
  }
}

// One tile's position: the block's first elements and the tile's offsets.
struct TilePos {
  uint64_t out_base = 0;
  uint64_t in_base[kExprMaxInputs] = {};
  int64_t n = 0, c = 0, h = 0, w = 0;
  dim4 shape{1, 1, 1, 1};
};

uint64_t at(uint64_t base, const int64_t *stride, const TilePos &t, int64_t esize) {
  return base + uint64_t((t.n * stride[0] + t.c * stride[1] + t.h * stride[2] + t.w * stride[3]) * esize);
}

// The inputs every tile takes the same part of, and per register set the
// tile shape each one's register holds ({0, 0, 0, 0}: nothing yet): such
// an input is loaded again only for a tile of another shape (another
// layout), whose register the program keeps (kept_inputs).
struct Shared {
  bool input[kExprMaxInputs] = {};
  dim4 held[2][kExprMaxInputs] = {};
};

bool same_shape(const dim4 &a, const dim4 &b) { return a.n == b.n && a.c == b.c && a.h == b.h && a.w == b.w; }

void load(const ExprKernelArgs &a, const TilePos &t, const local_addr_t *reg, Shared &shared, int set) {
  const int64_t esize = tpu_data_type_size(a.dtype);
  for (int i = 0; i < a.program->inputs; ++i) {
    if (a.program->input_register[i] < 0) continue;
    if (shared.input[i]) {
      if (same_shape(shared.held[set][i], t.shape)) continue;
      shared.held[set][i] = t.shape;
    }
    const int64_t *s = a.in_stride[i] + (kExprDims - 4);
    const dim4 stride = make_dim4(s[0], s[1], s[2], s[3]);
    tpu_gdma_cpy_S2L(reg[a.program->input_register[i]], at(t.in_base[i], s, t, esize), &t.shape, nullptr, &stride,
                     a.dtype);
  }
}

void store(const ExprKernelArgs &a, const TilePos &t, const local_addr_t *reg) {
  const int64_t esize = tpu_data_type_size(a.dtype);
  const int64_t *d = a.dims + (kExprDims - 4);
  const int64_t out_stride[4] = {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
  const dim4 stride = make_dim4(out_stride[0], out_stride[1], out_stride[2], out_stride[3]);
  tpu_gdma_cpy_L2S(at(t.out_base, out_stride, t, esize), reg[a.program->output_register], &t.shape, &stride, nullptr,
                   a.dtype);
}

// Tile number `index` of the whole output (outer blocks, then n, c, h, w).
struct Tiling {
  ElementwiseTile tile;
  int64_t blocks = 1, nt = 1, ct = 1, ht = 1, wt = 1;
  int64_t count() const { return blocks * nt * ct * ht * wt; }
};

TilePos tile_at(const ExprKernelArgs &a, const Tiling &g, int64_t index) {
  const int64_t esize = tpu_data_type_size(a.dtype);
  const int64_t *d = a.dims + (kExprDims - 4);
  TilePos t;
  const int64_t wi = index % g.wt, hi = index / g.wt % g.ht, ci = index / (g.wt * g.ht) % g.ct;
  const int64_t ni = index / (g.wt * g.ht * g.ct) % g.nt, b = index / (g.wt * g.ht * g.ct * g.nt);
  t.n = ni, t.c = ci * g.tile.c, t.h = hi * g.tile.h, t.w = wi * g.tile.w;
  t.shape = make_dim4(1, std::min(g.tile.c, d[1] - t.c), std::min(g.tile.h, d[2] - t.h), std::min(g.tile.w, d[3] - t.w));
  t.out_base = a.out_addr + uint64_t(b * d[0] * d[1] * d[2] * d[3] * esize);
  for (int i = 0; i < a.program->inputs; ++i) t.in_base[i] = a.in_addr[i];
  for (int64_t rest = b, dim = kExprDims - 4; dim-- > 0; rest /= a.dims[dim]) {
    const int64_t index_in_dim = rest % a.dims[dim];
    for (int i = 0; i < a.program->inputs; ++i) t.in_base[i] += uint64_t(index_in_dim * a.in_stride[i][dim] * esize);
  }
  return t;
}

void load_tables(const ExprProgram &p, data_type_t dtype) {
  if (p.exp_table) tpu_bdc_load_fp_exp_coeff(kExpTable, dtype);
  if (p.log_table) tpu_bdc_load_fp_log_coeff(kLogTable, dtype);
}

// Whether every tile of `g` takes the same part of input i: stride 0 along
// each dim the tiles walk (more than one position).
bool tiles_share(const ExprKernelArgs &a, const Tiling &g, int i) {
  const int64_t *s = a.in_stride[i];
  for (int d = 0; d < kExprDims - 4; ++d)
    if (a.dims[d] > 1 && s[d] != 0) return false;
  const int64_t *q = s + (kExprDims - 4);
  return (g.nt == 1 || q[0] == 0) && (g.ct == 1 || q[1] == 0) && (g.ht == 1 || q[2] == 0) && (g.wt == 1 || q[3] == 0);
}

void expression_kernel(const ExprKernelArgs &a) {
  const ExprProgram &p = *a.program;
  const Layout l = lay_out(p, a.pipelined);
  Tiling g;
  g.tile = choose_tile(a.dims + (kExprDims - 4), a.dtype, l.buffer_bytes);
  for (int d = 0; d < kExprDims - 4; ++d) g.blocks *= a.dims[d];
  const int64_t *d = a.dims + (kExprDims - 4);
  g.nt = d[0];
  g.ct = (d[1] + g.tile.c - 1) / g.tile.c, g.ht = (d[2] + g.tile.h - 1) / g.tile.h;
  g.wt = (d[3] + g.tile.w - 1) / g.tile.w;
  load_tables(p, a.dtype);
  Shared shared;
  for (int i = 0; i < p.inputs; ++i) shared.input[i] = ((a.kept_inputs >> i) & 1u) && tiles_share(a, g, i);
  const int64_t tiles = g.count();
  if (!a.pipelined || tiles == 1) {
    for (int64_t t = 0; t < tiles; ++t) {
      const TilePos pos = tile_at(a, g, t);
      load(a, pos, l.reg[0], shared, 0);
      compute(p, l.reg[0], l, pos.shape, a.dtype);
      store(a, pos, l.reg[0]);
    }
    return;
  }
  // Stage t: store tile t - 2 and load tile t (GDMA, set t % 2) while the
  // BDC computes tile t - 1 (set (t - 1) % 2).
  for (int64_t t = 0; t < tiles + 2; ++t) {
    tpu_parallel_start();
    if (t >= 2) store(a, tile_at(a, g, t - 2), l.reg[t % 2]);
    if (t < tiles) load(a, tile_at(a, g, t), l.reg[t % 2], shared, int(t % 2));
    if (t >= 1 && t <= tiles) compute(p, l.reg[(t - 1) % 2], l, tile_at(a, g, t - 1).shape, a.dtype);
    tpu_parallel_end();
  }
}

}  // namespace

ExprKernelArgs expression_args(const ExprProgram &program, Dtype dtype, const std::vector<Shape> &input_shapes,
                               const std::vector<uint64_t> &input_addrs, const Shape &out_shape, uint64_t out_addr) {
  const ElementwiseView v = elementwise_view(out_shape, input_shapes);
  ExprKernelArgs a;
  a.program = &program;
  a.dtype = kernel_dtype(dtype);
  const std::size_t pad = kExprDims - v.dims.size();  // at most eight groups: tensors have at most eight dims
  for (std::size_t g = 0; g < v.dims.size(); ++g) a.dims[pad + g] = v.dims[g];
  a.out_addr = out_addr;
  for (std::size_t i = 0; i < input_shapes.size(); ++i) {
    a.in_addr[i] = input_addrs[i];
    for (std::size_t g = 0; g < v.dims.size(); ++g) a.in_stride[i][pad + g] = v.strides[i][g];
  }
  return a;
}

uint32_t broadcast_inputs(int inputs, const std::vector<Shape> &input_shapes, const Shape &out_shape) {
  const ElementwiseView v = elementwise_view(out_shape, input_shapes);
  const std::size_t pad = kExprDims - v.dims.size(), first_in_tile = kExprDims - 3;  // c, h, w
  uint32_t mask = 0;
  for (int i = 0; i < inputs && i < kExprMaxInputs; ++i) {
    bool outside = true, broadcast = false;
    for (std::size_t g = 0; g < v.dims.size(); ++g) {
      const bool zero = v.strides[std::size_t(i)][g] == 0 && v.dims[g] > 1;
      if (pad + g < first_in_tile) outside = outside && (zero || v.dims[g] == 1);
      broadcast = broadcast || zero;
    }
    if (outside && broadcast) mask |= 1u << i;
  }
  return mask;
}

void run_expression_kernel(const ExprKernelArgs &args) {
  if (args.program->registers > 64)
    throw Error(fmt::format("the formula needs {} registers; the fused kernel has 64", args.program->registers));
  run_on_emulator("the expression kernel failed", [&] { expression_kernel(args); });
}

int64_t expression_scratch_bytes(const ExprProgram &program, int64_t slice_bytes, int expanded) {
  int inputs = 0;
  for (int i = 0; i < program.inputs; ++i) inputs += program.input_register[i] >= 0 ? 1 : 0;
  const int temporaries = program.registers - inputs - 1;  // the output is the output slice
  return kTableBytes + align_up(slice_bytes, kAlign) * (temporaries + expanded + program.work_buffers);
}

void run_expression_local(const ExprLocalArgs &a) {
  const ExprProgram &p = *a.program;
  if (p.registers > 64) throw Error(fmt::format("the formula needs {} registers; the fused kernel has 64", p.registers));
  Layout l;
  const int64_t bytes = align_up(a.slice_bytes, kAlign);
  int64_t at = int64_t(a.scratch) + kTableBytes;
  int input_of_register[64];
  std::fill(std::begin(input_of_register), std::end(input_of_register), -1);
  for (int i = 0; i < p.inputs; ++i)
    if (p.input_register[i] >= 0) input_of_register[p.input_register[i]] = i;
  for (int r = 0; r < p.registers; ++r) {
    const int input = input_of_register[r];
    if (input >= 0 && !a.input[input].expand) l.reg[0][r] = a.input[input].addr;
    else if (r == p.output_register) l.reg[0][r] = a.output;
    else l.reg[0][r] = local_addr_t(at), at += bytes;  // a temporary, or an input expanded here
  }
  for (int w = 0; w < p.work_buffers; ++w, at += bytes) l.work[w] = local_addr_t(at);
  run_on_emulator("the expression's local kernel failed", [&] {
    for (int i = 0; i < p.inputs; ++i)
      if (p.input_register[i] >= 0 && a.input[i].expand)
        tpu_bdc_cpy(l.reg[0][p.input_register[i]], a.input[i].addr, &a.shape, nullptr, &a.input[i].stride, a.dtype);
    if (p.exp_table) tpu_bdc_load_fp_exp_coeff(a.scratch + kExpTable, a.dtype);
    if (p.log_table) tpu_bdc_load_fp_log_coeff(a.scratch + kLogTable, a.dtype);
    compute(p, l.reg[0], l, a.shape, a.dtype, a.scratch);
  });
}

}  // namespace tpu_runtime::detail
