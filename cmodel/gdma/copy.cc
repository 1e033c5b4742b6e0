// copy.cc: GDMA plain, general (reshaping), channel-broadcast and flat copies.
#include <algorithm>

#include "cmodel/dtype.h"
#include "cmodel/error.h"
#include "mover.h"

namespace cmodel::gdma {

Direction direction(Space dst, Space src) {
  if (src == Space::system) return dst == Space::local ? Direction::S2L : Direction::S2S;
  return dst == Space::local ? Direction::L2L : Direction::L2S;
}

namespace {

bool on_sdma(const Context &ctx) { return ctx.dma_engine == Engine::sdma; }

void check_dims(const char *role, const dim4 &shape, const DimLimits &limits) {
  const int dims[] = {shape.n, shape.c, shape.h, shape.w};
  const int max[] = {limits.max.n, limits.max.c, limits.max.h, limits.max.w};
  const bool one_limit = max[0] == max[1] && max[1] == max[2] && max[2] == max[3];
  const char *names = "nchw";
  for (int i = 0; i < 4; ++i)
    if (dims[i] < 1 || dims[i] > max[i])
      fail(limits.rule, "{} shape {}: {} = {}; {} must be in [1, {}]", role, describe(shape), names[i], dims[i],
           one_limit ? "every dim" : "it", max[i]);
}

}  // namespace

void check_not_static(const Context &ctx, const char *role, uint64_t addr) {
  const uint64_t begin = ctx.chip.static_mem_start, end = begin + ctx.chip.static_mem_bytes;
  if (addr >= begin && addr < end)
    fail(ErrorKind::memory_fault, engine_rule(ctx, Rule::DMA_3, Rule::SDMA_3),
         "{} address {:#x} is in static memory [{:#x}, {:#x}); the {} cannot read or write static memory", role, addr,
         begin, end, on_sdma(ctx) ? "SDMA" : "GDMA");
}

void check_local_aligned(const Context &ctx, const char *role, const TensorRef &t, Rule rule) {
  const uint64_t offset = t.addr % ctx.chip.local_mem_bytes;
  if (t.is_local() && offset % uint64_t(ctx.chip.eu_bytes) != 0)
    fail(rule, "{} local address {:#x} (offset {:#x} on NPU {}) is not a multiple of ALIGN_BYTES = {}", role, t.addr,
         offset, t.start_npu, ctx.chip.eu_bytes);
}

TensorRef operand(Context &ctx, const char *role, const Endpoint &end, const dim4 &shape, data_type_t dtype) {
  const int limit = ctx.chip.gdma_shape_limit;
  return operand(ctx, role, end, shape, dtype,
                 {{limit, limit, limit, limit}, engine_rule(ctx, Rule::DMA_1, Rule::SDMA_1)});
}

TensorRef operand(Context &ctx, const char *role, const Endpoint &end, const dim4 &shape, data_type_t dtype,
                  const DimLimits &limits) {
  check_dims(role, shape, limits);
  check_not_static(ctx, role, end.addr);
  TensorRef t = end.space == Space::local
                    ? local_tensor(ctx.memory, role, local_addr_t(end.addr), shape, end.stride, dtype, limits.max)
                    : system_tensor(ctx.memory, role, end.addr, shape, end.stride, dtype, limits.max);
  const bool sdma = on_sdma(ctx);
  if (sdma && t.is_local())
    fail(Rule::SDMA_3, "{} is a local address; the SDMA moves system memory only", role);
  if (sdma && t.stride.w == 0)
    fail(Rule::SDMA_2, "{} stride.w = 0; the SDMA needs a non-zero w-stride", role);
  const int64_t w_bytes = std::abs(int64_t(t.stride.w)) * t.esize;
  const int max_bytes = sdma ? ctx.chip.sdma_max_wstride_bytes : ctx.chip.gdma_max_wstride_bytes;
  // The GDMA's 128 bytes are the tpu-kernel documentation's rule; the
  // vendor checker asserts its own copy (DMA-5) only for sg2262.
  if (w_bytes > max_bytes)
    fail(sdma ? Rule::SDMA_2 : Rule::DOC_GDMA_1,
         "{} stride.w = {} elements ({} bytes of {}); the {} allows at most {} bytes", role, t.stride.w, w_bytes,
         dtype_name(dtype), sdma ? "SDMA" : "GDMA", max_bytes);
  return t;
}

void book(Context &ctx, const char *api, Direction dir, uint64_t bytes, const TensorRef *dst,
          const TensorRef *src) {
  if (dst) ctx.hazards.note(*dst, true);
  if (src) ctx.hazards.note(*src, false);
  ctx.count(api);
  ctx.stats.gdma_bytes[int(dir)] += bytes;
  const Interval time = ctx.issue(ctx.dma_engine, ctx.timeline.gdma_cycles(dir, bytes), api, bytes);
  ctx.stats.transfer(ctx.dma_engine, dir, bytes, time.end_ns - time.start_ns);
}

void copy(Context &ctx, const char *api, Endpoint dst_end, Endpoint src_end, const dim4 &shape, data_type_t dtype) {
  const TensorRef dst = operand(ctx, "dst", dst_end, shape, dtype);
  const TensorRef src = operand(ctx, "src", src_end, shape, dtype);
  if (dst.plane_contiguous() && src.plane_contiguous()) {
    // Each channel's h x w plane is one run on both sides.
    for (int n = 0; n < shape.n; ++n)
      for (int c = 0; c < shape.c; ++c)
        move_run(dst.channel(n, c), 1, src.channel(n, c), 1, int64_t(shape.h) * shape.w, dst.esize);
  } else {
    move_rows(dst, [&](int n, int c, int h) { return src.row(n, c, h); }, src.stride.w);
  }
  book(ctx, api, dst, src);
}

namespace {

// Walks the w-rows of a tensor in n, c, h order, `take` elements at a time.
class RowCursor {
 public:
  explicit RowCursor(const TensorRef &t) : t_(t) {}
  int64_t left_in_row() const { return t_.shape.w - w_; }
  uint8_t *here() const { return t_.at(n_, c_, h_, w_); }
  int64_t step() const { return t_.stride.w; }
  void take(int64_t count) {
    w_ += int(count);
    if (w_ < t_.shape.w) return;
    w_ = 0;
    if (++h_ < t_.shape.h) return;
    h_ = 0;
    if (++c_ < t_.shape.c) return;
    c_ = 0;
    ++n_;
  }

 private:
  const TensorRef &t_;
  int n_ = 0, c_ = 0, h_ = 0, w_ = 0;
};

}  // namespace

void general_copy(Context &ctx, const char *api, Endpoint dst_end, Endpoint src_end, const dim4 &dst_shape,
                  const dim4 &src_shape, data_type_t dtype) {
  const TensorRef dst = operand(ctx, "dst", dst_end, dst_shape, dtype);
  const TensorRef src = operand(ctx, "src", src_end, src_shape, dtype);
  if (dst.elements() != src.elements())
    fail(engine_rule(ctx, Rule::DMA_2, Rule::SDMA_1),
         "dst shape {} holds {} elements but src shape {} holds {}; a general copy needs equal counts",
         describe(dst_shape), dst.elements(), describe(src_shape), src.elements());
  RowCursor to(dst), from(src);
  for (int64_t left = dst.elements(); left > 0;) {
    const int64_t run = std::min(to.left_in_row(), from.left_in_row());
    move_run(to.here(), to.step(), from.here(), from.step(), run, dst.esize);
    to.take(run);
    from.take(run);
    left -= run;
  }
  book(ctx, api, dst, src);
}

void channel_broadcast(Context &ctx, const char *api, Endpoint dst_end, Endpoint src_end, const dim4 &shape,
                       data_type_t dtype) {
  const TensorRef dst = operand(ctx, "dst", dst_end, shape, dtype);
  const TensorRef src = operand(ctx, "src", src_end, {shape.n, 1, shape.h, shape.w}, dtype);
  // The broadcast is one lane mask from the start NPU up: it cannot wrap
  // round to NPU 0 as a plain local tensor's channels do.
  if (dst.start_npu + shape.c > ctx.chip.npu_num)
    fail(Rule::DMA_14,
         "dst starts on NPU {} and broadcasts to C = {} channels, past the last NPU ({}); a channel broadcast needs "
         "start NPU + C <= NPU_NUM",
         dst.start_npu, shape.c, ctx.chip.npu_num - 1);
  move_rows(dst, [&](int n, int, int h) { return src.row(n, 0, h); }, src.stride.w);
  book(ctx, api, dst, src);
}

void flat_copy(Context &ctx, const char *api, uint64_t dst_addr, uint64_t src_addr, uint64_t count,
               data_type_t dtype) {
  if (!dtype_is_known(dtype) || dtype_bits(dtype) < 8)
    fail(ErrorKind::illegal_command, "dtype {} cannot be copied by the GDMA", int(dtype));
  if (count == 0) fail(engine_rule(ctx, Rule::DMA_10, Rule::SDMA_5), "count = 0; a copy moves at least one element");
  const uint64_t bytes = count * dtype_bytes(dtype);
  uint8_t *dst = nullptr;
  const uint8_t *src = nullptr;
  check_not_static(ctx, "src", src_addr);
  check_not_static(ctx, "dst", dst_addr);
  try {
    src = ctx.memory.system(src_addr, bytes);
    dst = ctx.memory.system(dst_addr, bytes);
  } catch (const Error &e) {
    throw Error(e.kind(), fmt::format("{}: {}", src ? "dst" : "src", e.what()), e.rule());
  }
  std::memmove(dst, src, bytes);
  ctx.hazards.note_system("src", src_addr, bytes, false);
  ctx.hazards.note_system("dst", dst_addr, bytes, true);
  book(ctx, api, Direction::S2S, bytes, nullptr, nullptr);
}

}  // namespace cmodel::gdma
