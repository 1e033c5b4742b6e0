// system.cc: flat system-memory commands (fill, broadcast), reducing
// copies into L2 SRAM, and the data-dependent moves (mask select, nonzero).
// The SDMA runs the same implementations (gdma::OnSdma).
#include <cmath>
#include <cstring>

#include "cmodel/dtype.h"
#include "cmodel/error.h"
#include "cmodel/include/cmodel_all_reduce.h"  // all_reduce_psum_t, all_reduce_opcode_t
#include "cmodel/numeric/dtypes.h"
#include "mover.h"

namespace cmodel::gdma {
namespace {

// Flat commands move whole bytes: 8, 16 or 32-bit elements.
void require_byte_dtype(const char *role, data_type_t dtype) {
  if (!dtype_is_known(dtype))
    fail(ErrorKind::illegal_command, "{} dtype {} is not a data type of this chip", role, int(dtype));
  if (dtype_bits(dtype) < 8)
    fail(ErrorKind::unsupported, "{} dtype {}: 4-bit elements are not emulated yet", role, dtype_name(dtype));
}

// Host pointer to `bytes` bytes at a system address, the error naming `role`.
uint8_t *system_bytes(Context &ctx, const char *role, uint64_t addr, uint64_t bytes) {
  check_not_static(ctx, role, addr);
  return ctx.memory.system(role, addr, bytes);
}

}  // namespace

void flat_fill(Context &ctx, const char *api, uint64_t dst_addr, uint32_t value, uint64_t count, data_type_t dtype) {
  require_byte_dtype("dst", dtype);
  if (count == 0) fail(engine_rule(ctx, Rule::DMA_10, Rule::SDMA_5), "count = 0; a fill writes at least one element");
  const int esize = dtype_bytes(dtype);
  uint8_t *dst = system_bytes(ctx, "dst", dst_addr, count * esize);
  // The scalar's low bytes hold the value in dtype (x86 is little-endian).
  uint8_t pattern[4];
  std::memcpy(pattern, &value, sizeof pattern);
  move_run(dst, 1, pattern, 0, int64_t(count), esize);
  ctx.hazards.note_system("dst", dst_addr, count * esize, true);
  book(ctx, api, Direction::S2S, count * esize, nullptr, nullptr);
}

void flat_broadcast(Context &ctx, const char *api, uint64_t dst_addr, uint64_t src_addr, uint64_t count,
                    int channels, data_type_t dtype) {
  require_byte_dtype("src", dtype);
  if (count == 0) fail(ErrorKind::illegal_command, "count = 0; a broadcast copies at least one element");
  if (channels <= 0) fail(ErrorKind::illegal_command, "dst_channel = {}; must be positive", channels);
  const uint64_t bytes = count * dtype_bytes(dtype);
  uint64_t total = 0;
  // count < 2^32 and channels < 2^31: the product may not fit 64 bits.
  if (__builtin_mul_overflow(bytes, uint64_t(channels), &total))
    fail(ErrorKind::memory_fault, "dst: {} copies of {} do not fit any memory", channels, Bytes{bytes});
  const uint8_t *src = system_bytes(ctx, "src", src_addr, bytes);
  uint8_t *dst = system_bytes(ctx, "dst", dst_addr, total);
  for (int c = 0; c < channels; ++c) std::memmove(dst + bytes * uint64_t(c), src, bytes);
  ctx.hazards.note_system("src", src_addr, bytes, false);
  ctx.hazards.note_system("dst", dst_addr, total, true);
  book(ctx, api, Direction::S2S, total, nullptr, nullptr);
}

// ---- reducing copies into L2 SRAM ------------------------------------------------
namespace {

void check_reduce_op(ReduceOp op) {
  if (op.psum_op != ALL_REDUCE_PSUM_WO && op.psum_op != ALL_REDUCE_PSUM_WR)
    fail(ErrorKind::illegal_command, "reduce_psum_op = {}; expected ALL_REDUCE_PSUM_WO (0) or ALL_REDUCE_PSUM_WR (1)",
         op.psum_op);
  if (op.opcode < ALL_REDUCE_NOP || op.opcode > ALL_REDUCE_ADD)
    fail(ErrorKind::illegal_command,
         "reduce_opcode = {}; expected ALL_REDUCE_NOP, _MUL, _MAX, _MIN or _ADD (0 .. 4)", op.opcode);
}

// The checker wants a destination outside local memory; the API's names
// (…2L2) say where in system memory each end is.
void check_reduce_places(Context &ctx, const Endpoint &dst, const Endpoint &src, ReduceSource from) {
  const Rule rule = engine_rule(ctx, Rule::DMA_25, Rule::SDMA_10);
  if (!ctx.memory.is_l2(dst.addr))
    fail(rule, "dst {:#x} is not an L2 SRAM address; a reducing copy writes L2 SRAM", dst.addr);
  if (from == ReduceSource::l2 && !ctx.memory.is_l2(src.addr))
    fail(rule, "src {:#x} is not an L2 SRAM address (L22L2 reads L2 SRAM)", src.addr);
  if (from == ReduceSource::ddr && ctx.memory.is_l2(src.addr))
    fail(rule, "src {:#x} is an L2 SRAM address; S2L2 reads global memory (use L22L2)", src.addr);
}

// a (what dst holds) combined with b (the source) by an opcode; integers
// wrap, floats follow IEEE maxNum / minNum (a NaN loses against a number).
template <typename V>
V combine(int opcode, V a, V b) {
  // Integer values arrive as int64: multiply and add in uint64 so the
  // product of two uint32 wraps instead of overflowing.
  auto wrap = [](auto x) { return V(x); };
  switch (opcode) {
    case ALL_REDUCE_MUL:
      if constexpr (std::is_floating_point_v<V>) return a * b;
      else return wrap(uint64_t(a) * uint64_t(b));
    case ALL_REDUCE_ADD:
      if constexpr (std::is_floating_point_v<V>) return a + b;
      else return wrap(uint64_t(a) + uint64_t(b));
    case ALL_REDUCE_MAX:
      if constexpr (std::is_floating_point_v<V>) return std::fmax(a, b);
      else return a > b ? a : b;
    case ALL_REDUCE_MIN:
      if constexpr (std::is_floating_point_v<V>) return std::fmin(a, b);
      else return a < b ? a : b;
    default: return b;  // NOP: a plain write
  }
}

// The engine has no 32-bit integer multiplier for the reduction (the
// command field is checked whatever psum_op says).
void check_reduce_dtype(const Context &ctx, data_type_t dtype, ReduceOp op) {
  if (op.opcode == ALL_REDUCE_MUL && (dtype == DT_INT32 || dtype == DT_UINT32))
    fail(engine_rule(ctx, Rule::DMA_24, Rule::SDMA_10),
         "reduce_opcode = ALL_REDUCE_MUL with dtype {}; a reducing copy cannot multiply 32-bit integers (ADD, MAX, "
         "MIN and NOP can)",
         dtype_name(dtype));
}

}  // namespace

void reduce_copy(Context &ctx, const char *api, Endpoint dst_end, Endpoint src_end, ReduceSource from,
                 const dim4 &shape, data_type_t dtype, ReduceOp op) {
  check_reduce_op(op);
  check_reduce_dtype(ctx, dtype, op);
  const TensorRef dst = operand(ctx, "dst", dst_end, shape, dtype);
  const TensorRef src = operand(ctx, "src", src_end, shape, dtype);
  check_reduce_places(ctx, dst_end, src_end, from);
  // WO, and WR with NOP, overwrite; the others read what dst holds first.
  const int opcode = op.psum_op == ALL_REDUCE_PSUM_WO ? int(ALL_REDUCE_NOP) : op.opcode;
  numeric::with_dtype(dtype, [&]<typename D>(D) {
    using S = typename D::Storage;
    for (int n = 0; n < shape.n; ++n)
      for (int c = 0; c < shape.c; ++c)
        for (int h = 0; h < shape.h; ++h)
          for (int w = 0; w < shape.w; ++w) {
            S a, b;
            std::memcpy(&a, dst.at(n, c, h, w), sizeof a);
            std::memcpy(&b, src.at(n, c, h, w), sizeof b);
            const S r = D::store(combine(opcode, D::load(a), D::load(b)));
            std::memcpy(dst.at(n, c, h, w), &r, sizeof r);
          }
  });
  // Reducing copies of one opcode from several cores combine in any order:
  // no cross-core race between them (HazardTracker::reducing).
  struct Reducing {
    HazardTracker &hazards;
    ~Reducing() { hazards.reducing = {}; }
  } reducing{ctx.hazards};
  if (opcode != ALL_REDUCE_NOP) ctx.hazards.reducing = {true, dst.addr, opcode};
  if (opcode != ALL_REDUCE_NOP) ctx.hazards.note(dst, false);  // combines with what dst holds
  book(ctx, api, dst, src);
}

// ---- mask select and nonzero ---------------------------------------------------
namespace {

// Calls f(n, c, h, w, is_nonzero) for every element of t in n, c, h, w
// order. Floats compare by value (both zeros are zero, a NaN is not).
template <typename F>
void for_each_nonzero_flag(const TensorRef &t, F &&f) {
  numeric::with_dtype(t.dtype, [&]<typename D>(D) {
    using S = typename D::Storage;
    for (int n = 0; n < t.shape.n; ++n)
      for (int c = 0; c < t.shape.c; ++c)
        for (int h = 0; h < t.shape.h; ++h)
          for (int w = 0; w < t.shape.w; ++w) {
            S raw;
            std::memcpy(&raw, t.at(n, c, h, w), sizeof raw);
            f(n, c, h, w, D::load(raw) != 0);
          }
  });
}

}  // namespace

uint32_t mask_select(Context &ctx, const char *api, uint64_t dst_addr, Endpoint src_end, Endpoint mask_end,
                     const dim4 &shape, data_type_t data_dtype, data_type_t mask_dtype) {
  const TensorRef src = operand(ctx, "src", src_end, shape, data_dtype);
  const TensorRef mask = operand(ctx, "mask", mask_end, shape, mask_dtype);
  check_local_aligned(ctx, "src", src, Rule::DMA_12);
  check_local_aligned(ctx, "mask", mask, Rule::DMA_12);
  std::vector<const uint8_t *> picked;
  for_each_nonzero_flag(mask, [&](int n, int c, int h, int w, bool on) {
    if (on) picked.push_back(src.at(n, c, h, w));
  });
  // Checked only now: the destination needs room for what was selected.
  if (!picked.empty()) {
    uint8_t *dst = system_bytes(ctx, "dst", dst_addr, picked.size() * src.esize);
    for (size_t i = 0; i < picked.size(); ++i) std::memmove(dst + i * src.esize, picked[i], size_t(src.esize));
  }
  ctx.hazards.note(mask, false);
  ctx.hazards.note_system("dst", dst_addr, picked.size() * src.esize, true);
  book(ctx, api, direction(Space::system, src.space), picked.size() * src.esize, nullptr, &src);
  return uint32_t(picked.size());
}

uint32_t nonzero(Context &ctx, const char *api, uint64_t dst_addr, Endpoint src_end, const dim4 &shape,
                 data_type_t dtype, uint32_t base_idx) {
  const TensorRef src = operand(ctx, "src", src_end, shape, dtype);
  check_local_aligned(ctx, "src", src, Rule::DMA_13);
  std::vector<uint32_t> indices;
  uint32_t flat = 0;
  for_each_nonzero_flag(src, [&](int, int, int, int, bool on) {
    if (on) indices.push_back(base_idx + flat);
    ++flat;
  });
  if (!indices.empty())
    std::memcpy(system_bytes(ctx, "dst", dst_addr, indices.size() * sizeof(uint32_t)), indices.data(),
                indices.size() * sizeof(uint32_t));
  ctx.hazards.note_system("dst", dst_addr, indices.size() * sizeof(uint32_t), true);
  book(ctx, api, direction(Space::system, src.space), indices.size() * sizeof(uint32_t), nullptr, &src);
  return uint32_t(indices.size());
}

}  // namespace cmodel::gdma
