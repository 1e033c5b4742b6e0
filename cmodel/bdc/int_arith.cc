#include "int_arith.h"

#include <type_traits>
#include <vector>

namespace cmodel::bdc {

// ---- shared pipeline ------------------------------------------------------------

void require_int_dtype(const char *role, data_type_t dtype) {
  require_dtype(role, dtype, {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32});
}

void require_int_dtype(Rule rule, const char *role, data_type_t dtype) {
  require_dtype(rule, role, dtype, {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32});
}

void require_rounding_mode(rounding_mode_t mode) {
  if (!numeric::is_valid_rounding_mode(mode))
    fail(ErrorKind::illegal_command,
         "rounding_mode {} is not a rounding_mode_t; expected RM_HALF_TO_EVEN (0) to RM_HALF_DOWN (6)", int(mode));
}

int64_t int_min_of(data_type_t dtype) {
  return dtype_is_signed(dtype) ? -(int64_t{1} << (dtype_bits(dtype) - 1)) : 0;
}

int64_t int_max_of(data_type_t dtype) {
  return dtype_is_signed(dtype) ? (int64_t{1} << (dtype_bits(dtype) - 1)) - 1
                                : (int64_t{1} << dtype_bits(dtype)) - 1;
}

namespace {

// Integer storage of a dtype's raw bits: floats are read as their bits.
template <typename F>
decltype(auto) with_storage(data_type_t dtype, F &&f) {
  switch (dtype) {
    case DT_INT8: return f(int8_t{});
    case DT_UINT8: return f(uint8_t{});
    case DT_INT16: return f(int16_t{});
    case DT_UINT16: case DT_FP16: case DT_BFP16: return f(uint16_t{});
    case DT_INT32: return f(int32_t{});
    case DT_UINT32: case DT_FP32: return f(uint32_t{});
    default: fail(ErrorKind::illegal_command, "dtype {} has no integer storage", dtype_name(dtype));
  }
}

}  // namespace

void load_ints(data_type_t dtype, const uint8_t *p, int64_t step, int64_t count, int64_t *out) {
  with_storage(dtype, [&]<typename T>(T) {
    const T *q = reinterpret_cast<const T *>(p);
    if (step == 1)
      for (int64_t i = 0; i < count; ++i) out[i] = q[i];
    else
      for (int64_t i = 0; i < count; ++i) out[i] = q[i * step];
  });
}

void store_ints(data_type_t dtype, uint8_t *p, int64_t step, int64_t count, const int64_t *in) {
  with_storage(dtype, [&]<typename T>(T) {
    T *q = reinterpret_cast<T *>(p);
    if (step == 1)
      for (int64_t i = 0; i < count; ++i) q[i] = T(in[i]);
    else
      for (int64_t i = 0; i < count; ++i) q[i * step] = T(in[i]);
  });
}

namespace {

void require_shift(const char *what, int shift) {
  if (shift < 0 || shift > 127)
    fail(ErrorKind::illegal_command, "{} {} is out of range; the right-shift amount must be in [0, 127]", what,
         shift);
}

data_type_t wider(data_type_t a, data_type_t b) { return dtype_bits(b) > dtype_bits(a) ? b : a; }

// The exact result of `op` needs more than 64 bits only for a product of
// two unsigned 32-bit values.
bool needs_128_bits(IntBinary op, data_type_t a, data_type_t b) {
  return op == IntBinary::mul && a == DT_UINT32 && b == DT_UINT32;
}

// Where the shift of each element comes from.
struct ShiftSource {
  int constant;                       // when per_channel is null
  const int8_t *per_channel = nullptr;  // shift of channel c, c in [0, C)
};

// The operand pipeline of every tpu_bdc_int_* command: exact op on W
// values, rounding shift, saturation or wrap. `a(in, k)` and `b(in, k)`
// give the operands of element k of a chunk.
template <typename W, typename Op, typename A, typename B>
void rescale_map(const TensorRef &dst, Op op, A a, B b, const ShiftSource &shift, rounding_mode_t mode,
                 bool saturation, const auto &...src) {
  const int64_t lo = int_min_of(dst.dtype), hi = int_max_of(dst.dtype);
  with_rounding(mode, [&](auto M) {
    // Per-channel shifts are tracked by counting elements: for_each_run
    // visits the channels of each batch in order, as runs that never cross
    // a channel and add up to h x w elements per channel.
    int64_t run_channel_elems = 0;  // elements left in the current channel
    int channel = -1;
    const int64_t channel_elems = int64_t(dst.shape.h) * dst.shape.w;
    int right = shift.constant;
    int_map(
        dst,
        [&](int64_t count, int64_t *out, const int64_t(*in)[int_chunk]) {
          if (shift.per_channel) {
            if (run_channel_elems == 0) {
              channel = (channel + 1) % dst.shape.c;
              run_channel_elems = channel_elems;
              right = shift.per_channel[channel];
            }
            run_channel_elems -= count;
          }
          for (int64_t k = 0; k < count; ++k) {
            W v = shift_right_rounded(W(op(W(a(in, k)), W(b(in, k)))), right, M.value);
            if (saturation) v = v < lo ? lo : v > hi ? hi : v;
            out[k] = int64_t(v);  // wraps to dst's width when stored
          }
        },
        src...);
  });
}

template <typename F>
void with_int_op(IntBinary op, F &&f) {
  switch (op) {
    case IntBinary::add: return f([](auto x, auto y) { return x + y; });
    case IntBinary::sub: return f([](auto x, auto y) { return x - y; });
    case IntBinary::mul: return f([](auto x, auto y) { return x * y; });
  }
}

// Picks the value width, then runs rescale_map.
template <typename A, typename B>
void run_rescale(IntBinary op, bool wide, const TensorRef &dst, A a, B b, const ShiftSource &shift,
                 rounding_mode_t mode, bool saturation, const auto &...src) {
  with_int_op(op, [&](auto f) {
    if (wide)
      rescale_map<__int128>(dst, f, a, b, shift, mode, saturation, src...);
    else
      rescale_map<int64_t>(dst, f, a, b, shift, mode, saturation, src...);
  });
}

// The per-channel shift tensor of a pcs command, checked and read.
struct ChannelShifts {
  TensorRef tensor;
  std::vector<int8_t> values;  // one per channel
};

ChannelShifts channel_shifts(Context &ctx, local_addr_t addr, const TensorRef &dst) {
  ChannelShifts s{per_channel_operand(ctx, "shift", addr, dst.shape.c, DT_INT8, Rule::AR_8),
                  std::vector<int8_t>(size_t(dst.shape.c))};
  require_same_npu(Rule::AR_8, dst, "dst", s.tensor, "shift");
  for (int c = 0; c < dst.shape.c; ++c) {
    const int8_t v = *reinterpret_cast<const int8_t *>(s.tensor.channel(0, c));
    if (v < 0)
      fail(ErrorKind::illegal_command,
           "shift of channel {} is {} (tensor at {:#x}); a per-channel right-shift amount must be in [0, 127]", c,
           int(v), addr);
    s.values[size_t(c)] = v;
  }
  return s;
}

struct Operands2 {
  TensorRef dst, src0, src1;
};

Operands2 binary_operands(Context &ctx, local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr,
                          const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride,
                          const dim4 *src1_stride, data_type_t dst_dtype, data_type_t src0_dtype,
                          data_type_t src1_dtype, rounding_mode_t mode) {
  // An integer add, sub or mul has integer operands and result (AR-4).
  require_int_dtype(Rule::AR_4, "dst", dst_dtype);
  require_int_dtype(Rule::AR_4, "src0", src0_dtype);
  require_int_dtype(Rule::AR_4, "src1", src1_dtype);
  require_rounding_mode(mode);
  Operands2 o{result(ctx, "dst", dst_addr, shape, dst_stride, dst_dtype),
              operand(ctx, "src0", src0_addr, shape, src0_stride, src0_dtype),
              operand(ctx, "src1", src1_addr, shape, src1_stride, src1_dtype)};
  require_same_npu(Rule::TIU_4, o.dst, "dst", o.src0, "src0");
  require_same_npu(Rule::TIU_4, o.dst, "dst", o.src1, "src1");
  return o;
}

struct Operands1 {
  TensorRef dst, src;
};

Operands1 const_operands(Context &ctx, local_addr_t dst_addr, local_addr_t src_addr, const dim4 &shape,
                         const dim4 *dst_stride, const dim4 *src_stride, data_type_t dst_dtype,
                         data_type_t src_dtype, data_type_t C_dtype, rounding_mode_t mode) {
  require_int_dtype(Rule::AR_4, "dst", dst_dtype);
  require_int_dtype(Rule::AR_4, "src", src_dtype);
  require_int_dtype(Rule::AR_4, "C", C_dtype);
  require_rounding_mode(mode);
  Operands1 o{result(ctx, "dst", dst_addr, shape, dst_stride, dst_dtype),
              operand(ctx, "src", src_addr, shape, src_stride, src_dtype)};
  require_same_npu(Rule::TIU_4, o.dst, "dst", o.src, "src");
  return o;
}

BdcCost cost_of(IntBinary) { return BdcCost::arith; }

// `shift_tensor`: the pcs shift tensor, read by the command (or null).
void binary_impl(Context &ctx, const char *api, IntBinary op, const Operands2 &o, const ShiftSource &shift,
                 rounding_mode_t mode, bool saturation, const TensorRef *shift_tensor = nullptr) {
  const auto first = [](const int64_t(*in)[int_chunk], int64_t k) { return in[0][k]; };
  const auto second = [](const int64_t(*in)[int_chunk], int64_t k) { return in[1][k]; };
  run_rescale(op, needs_128_bits(op, o.src0.dtype, o.src1.dtype), o.dst, first, second, shift, mode, saturation,
              o.src0, o.src1);
  const data_type_t cost_dtype = wider(o.dst.dtype, wider(o.src0.dtype, o.src1.dtype));
  if (shift_tensor)
    book(ctx, api, cost_of(op), o.dst, cost_dtype, {&o.dst}, {&o.src0, &o.src1, shift_tensor});
  else
    book(ctx, api, cost_of(op), o.dst, cost_dtype, {&o.dst}, {&o.src0, &o.src1});
}

void const_impl(Context &ctx, const char *api, IntBinary op, bool constant_first, const Operands1 &o, scalar_t C,
                data_type_t C_dtype, const ShiftSource &shift, rounding_mode_t mode, bool saturation,
                const TensorRef *shift_tensor = nullptr) {
  const int64_t c = int_scalar(C, C_dtype);
  const auto x = [](const int64_t(*in)[int_chunk], int64_t k) { return in[0][k]; };
  const auto constant = [c](const int64_t(*)[int_chunk], int64_t) { return c; };
  const bool wide = needs_128_bits(op, o.src.dtype, C_dtype);
  if (constant_first)
    run_rescale(op, wide, o.dst, constant, x, shift, mode, saturation, o.src);
  else
    run_rescale(op, wide, o.dst, x, constant, shift, mode, saturation, o.src);
  const data_type_t cost_dtype = wider(o.dst.dtype, wider(o.src.dtype, C_dtype));
  if (shift_tensor)
    book(ctx, api, cost_of(op), o.dst, cost_dtype, {&o.dst}, {&o.src, shift_tensor});
  else
    book(ctx, api, cost_of(op), o.dst, cost_dtype, {&o.dst}, {&o.src});
}

}  // namespace

// ---- commands -------------------------------------------------------------------

int64_t int_scalar(scalar_t C, data_type_t dtype) {
  return with_int_dtype(dtype, [&]<typename D>(D) { return int64_t(scalar_value<D>(C)); });
}

void int_binary_on(IntBinary op, const TensorRef &dst, const TensorRef &src0, const TensorRef &src1, bool saturation) {
  require_int_dtype("dst", dst.dtype);
  require_int_dtype("src0", src0.dtype);
  require_int_dtype("src1", src1.dtype);
  const auto first = [](const int64_t(*in)[int_chunk], int64_t k) { return in[0][k]; };
  const auto second = [](const int64_t(*in)[int_chunk], int64_t k) { return in[1][k]; };
  run_rescale(op, needs_128_bits(op, src0.dtype, src1.dtype), dst, first, second, {0}, RM_HALF_TO_EVEN, saturation,
              src0, src1);
}

void int_binary(Context &ctx, const char *api, IntBinary op, local_addr_t dst, local_addr_t src0, local_addr_t src1,
                const dim4 &shape, const dim4 *dst_stride, const dim4 *src0_stride, const dim4 *src1_stride,
                data_type_t dst_dtype, data_type_t src0_dtype, data_type_t src1_dtype, IntRescale rescale) {
  require_shift("shift", rescale.shift);
  const Operands2 o = binary_operands(ctx, dst, src0, src1, shape, dst_stride, src0_stride, src1_stride, dst_dtype,
                                      src0_dtype, src1_dtype, rescale.rounding_mode);
  binary_impl(ctx, api, op, o, {rescale.shift}, rescale.rounding_mode, rescale.saturation);
}

void int_binary_const(Context &ctx, const char *api, IntBinary op, bool constant_first, local_addr_t dst,
                      local_addr_t src, scalar_t C, const dim4 &shape, const dim4 *dst_stride,
                      const dim4 *src_stride, data_type_t dst_dtype, data_type_t src_dtype, data_type_t C_dtype,
                      IntRescale rescale) {
  require_shift("shift", rescale.shift);
  const Operands1 o =
      const_operands(ctx, dst, src, shape, dst_stride, src_stride, dst_dtype, src_dtype, C_dtype, rescale.rounding_mode);
  const_impl(ctx, api, op, constant_first, o, C, C_dtype, {rescale.shift}, rescale.rounding_mode, rescale.saturation);
}

void int_square(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, const dim4 &shape,
                const dim4 *dst_stride, const dim4 *src_stride, data_type_t dst_dtype, data_type_t src_dtype,
                IntRescale rescale) {
  require_shift("shift", rescale.shift);
  require_int_dtype("dst", dst_dtype);
  require_int_dtype("src", src_dtype);
  require_rounding_mode(rescale.rounding_mode);
  const TensorRef dst = result(ctx, "dst", dst_addr, shape, dst_stride, dst_dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, src_dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  const auto x = [](const int64_t(*in)[int_chunk], int64_t k) { return in[0][k]; };
  // (2^32 - 1)^2 needs 64 unsigned bits; int32 squares fit int64.
  run_rescale(IntBinary::mul, src_dtype == DT_UINT32, dst, x, x, {rescale.shift}, rescale.rounding_mode,
              rescale.saturation, src);
  book(ctx, api, BdcCost::mac, dst, wider(dst_dtype, src_dtype), {&dst}, {&src});
}

void int_binary_pcs(Context &ctx, const char *api, IntBinary op, local_addr_t dst, local_addr_t src0,
                    local_addr_t src1, local_addr_t shift, const dim4 &shape, const dim4 *dst_stride,
                    const dim4 *src0_stride, const dim4 *src1_stride, data_type_t dst_dtype, data_type_t src0_dtype,
                    data_type_t src1_dtype, rounding_mode_t rounding_mode, bool saturation) {
  const Operands2 o = binary_operands(ctx, dst, src0, src1, shape, dst_stride, src0_stride, src1_stride, dst_dtype,
                                      src0_dtype, src1_dtype, rounding_mode);
  const ChannelShifts shifts = channel_shifts(ctx, shift, o.dst);
  binary_impl(ctx, api, op, o, {0, shifts.values.data()}, rounding_mode, saturation, &shifts.tensor);
}

void int_binary_pcs_const(Context &ctx, const char *api, IntBinary op, bool constant_first, local_addr_t dst,
                          local_addr_t src, local_addr_t shift, scalar_t C, const dim4 &shape,
                          const dim4 *dst_stride, const dim4 *src_stride, data_type_t dst_dtype,
                          data_type_t src_dtype, data_type_t C_dtype, rounding_mode_t rounding_mode,
                          bool saturation) {
  const Operands1 o =
      const_operands(ctx, dst, src, shape, dst_stride, src_stride, dst_dtype, src_dtype, C_dtype, rounding_mode);
  const ChannelShifts shifts = channel_shifts(ctx, shift, o.dst);
  const_impl(ctx, api, op, constant_first, o, C, C_dtype, {0, shifts.values.data()}, rounding_mode, saturation,
             &shifts.tensor);
}

void int_min_max_const(Context &ctx, const char *api, bool is_max, local_addr_t dst_addr, local_addr_t src_addr,
                       scalar_t C, const dim4 &shape, const dim4 *dst_stride, const dim4 *src_stride,
                       data_type_t dtype, int shift, rounding_mode_t rounding_mode) {
  require_shift("shift", shift);
  require_int_dtype("dtype", dtype);
  require_rounding_mode(rounding_mode);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, dtype);
  require_same_npu(Rule::TIU_4, dst, "dst", src, "src");
  const int64_t c = int_scalar(C, dtype);
  with_rounding(rounding_mode, [&](auto M) {
    int_map(
        dst,
        [&](int64_t count, int64_t *out, const int64_t(*in)[int_chunk]) {
          for (int64_t k = 0; k < count; ++k) {
            const int64_t x = in[0][k];
            out[k] = shift_right_rounded(is_max ? (x > c ? x : c) : (x < c ? x : c), shift, M.value);
          }
        },
        src);
  });
  book(ctx, api, BdcCost::arith, dst, dtype, {&dst}, {&src});
}

}  // namespace cmodel::bdc
