#include "tensor.h"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "dtype.h"
#include "error.h"

namespace cmodel {
namespace {

// Lowest and one-past-highest element offset reached along one dimension.
struct Extent {
  int64_t lo = 0, hi = 0;
  void add(int64_t count, int64_t stride) {
    const int64_t far = (count - 1) * stride;
    lo += std::min<int64_t>(0, far);
    hi += std::max<int64_t>(0, far);
  }
};

void check_dtype(const char *role, data_type_t dtype) {
  if (!dtype_is_known(dtype))
    fail(ErrorKind::illegal_command, "{} dtype {} is not a data type of this chip", role, int(dtype));
  if (dtype_bits(dtype) == 4)
    fail(ErrorKind::unsupported, "{} dtype {}: 4-bit tensors are not emulated yet", role, dtype_name(dtype));
}

// Rethrows a memory error with the operand it concerns, as the kernel
// described it: "dst [1, 64, 2, 8] DT_FP32 at local 0x3ffe0: ...".
template <typename F>
auto with_role(const char *role, const TensorRef &t, F &&f) {
  try {
    return f();
  } catch (const Error &e) {
    throw Error(e.kind(), fmt::format("{} {} {} at {} {:#x}: {}", role, describe(t.shape), dtype_name(t.dtype),
                                      t.is_local() ? "local" : "system", t.addr, e.what()),
                e.rule());
  }
}

}  // namespace

std::string describe(const dim4 &d) { return fmt::format("[{}, {}, {}, {}]", d.n, d.c, d.h, d.w); }

void check_shape(const char *role, const dim4 &shape, int limit, std::optional<Rule> rule) {
  const int dims[] = {shape.n, shape.c, shape.h, shape.w};
  const char *names = "nchw";
  for (int i = 0; i < 4; ++i) {
    if (dims[i] >= 1 && dims[i] <= limit) continue;
    if (rule)
      fail(*rule, "{} shape {}: {} = {}; every dim must be in [1, {}]", role, describe(shape), names[i], dims[i],
           limit);
    fail(ErrorKind::illegal_command, "{} shape {}: {} = {}; every dim must be in [1, {}]", role, describe(shape),
         names[i], dims[i], limit);
  }
}

void check_dim(const char *what, int value) {
  if (value < 1 || value > 65535) fail(ErrorKind::illegal_command, "{} = {}; it must be in [1, 65535]", what, value);
}

int eu_num(const ChipSpec &chip, data_type_t dtype) {
  return dtype_bits(dtype) == 4 ? chip.eu_bytes * 2 : chip.eu_bytes / dtype_bytes(dtype);
}

namespace {

// Default strides are dim4 ints; with dims up to 65535 their products can
// exceed 32 bits, so they are computed in 64 and refused when too large.
dim4 checked_stride(const char *layout, const dim4 &shape, int64_t n, int64_t c, int64_t h) {
  for (int64_t v : {n, c, h})
    if (v > INT32_MAX)
      fail(ErrorKind::illegal_command, "the {} stride of shape {} is {} elements, which does not fit in 32 bits",
           layout, describe(shape), v);
  return {int(n), int(c), int(h), 1};
}

}  // namespace

dim4 aligned_stride(const ChipSpec &chip, int start_npu, const dim4 &shape, data_type_t dtype) {
  const int64_t eu = eu_num(chip, dtype);
  const int64_t c_stride = (int64_t(shape.h) * shape.w + eu - 1) / eu * eu;
  const int64_t rows = (int64_t(start_npu) + shape.c + chip.npu_num - 1) / chip.npu_num;
  return checked_stride("aligned", shape, c_stride * rows, c_stride, shape.w);
}

dim4 compact_stride(const ChipSpec &chip, int start_npu, const dim4 &shape) {
  const int64_t c_stride = int64_t(shape.h) * shape.w;
  const int64_t rows = (int64_t(start_npu) + shape.c + chip.npu_num - 1) / chip.npu_num;
  return checked_stride("compact", shape, c_stride * rows, c_stride, shape.w);
}

dim4 line_aligned_stride(const ChipSpec &chip, int start_npu, const dim4 &shape, data_type_t dtype) {
  const int64_t eu = eu_num(chip, dtype);
  const int64_t h_stride = (int64_t(shape.w) + eu - 1) / eu * eu;
  const int64_t rows = (int64_t(start_npu) + shape.c + chip.npu_num - 1) / chip.npu_num;
  return checked_stride("line-aligned", shape, shape.h * h_stride * rows, shape.h * h_stride, h_stride);
}

dim4 continuous_stride(const dim4 &shape) {
  const int64_t c_stride = int64_t(shape.h) * shape.w;
  return checked_stride("continuous", shape, c_stride * shape.c, c_stride, shape.w);
}

namespace {

// Bytes [begin, end) of one NPU's local memory that the rows first_row ..
// last_row of a local tensor reach, relative to the start of that memory.
struct NpuSpan {
  int64_t begin = 0, end = 0;
};

NpuSpan rows_span(const TensorRef &t, int64_t offset, int first_row, int last_row) {
  Extent e;
  e.lo = e.hi = int64_t(first_row) * t.stride.c;
  e.add(t.shape.n, t.stride.n);
  e.add(last_row - first_row + 1, t.stride.c);
  e.add(t.shape.h, t.stride.h);
  e.add(t.shape.w, t.stride.w);
  return {offset + e.lo * t.esize, offset + (e.hi + 1) * t.esize};
}

// Channel c of a local tensor lives on NPU (start_npu + c) % npu_num, in
// row (start_npu + c) / npu_num of it: each NPU holds a run of rows, and
// every row must stay inside that NPU's local memory.
void check_local_footprint(const ChipSpec &chip, const TensorRef &t, int64_t offset) {
  const int npu_num = chip.npu_num;
  const int64_t npu_bytes = int64_t(chip.local_mem_bytes);
  const int lanes_end = t.start_npu + t.shape.c;  // one past the last channel's lane
  // Rows 0 .. last row together cover what any single NPU reaches, so when
  // they fit (the usual case) no NPU needs a look of its own.
  const NpuSpan all = rows_span(t, offset, 0, (lanes_end - 1) / npu_num);
  if (all.begin >= 0 && all.end <= npu_bytes) return;
  int first_bad = -1, bad = 0;
  NpuSpan first_span;
  for (int npu = 0; npu < npu_num; ++npu) {
    const int first_row = npu >= t.start_npu ? 0 : 1;
    if (int64_t(first_row) * npu_num + npu >= lanes_end) continue;  // holds no channel
    const NpuSpan span = rows_span(t, offset, first_row, (lanes_end - 1 - npu) / npu_num);
    if (span.begin >= 0 && span.end <= npu_bytes) continue;
    if (bad++ == 0) {
      first_bad = npu;
      first_span = span;
    }
  }
  if (bad == 0) return;
  fail(ErrorKind::memory_fault,
       "local range [{:#x}, {:#x}) of NPU {} is outside its local memory of {} (a local tensor must fit in its "
       "NPU; there is no wrap into the next); the tensor overflows {} of the {} NPUs, the first being NPU {}",
       first_span.begin, first_span.end, first_bad, Bytes{uint64_t(npu_bytes)}, bad, npu_num, first_bad);
}

}  // namespace

namespace {

// Every dim of `shape` in [1, the same dim of max_dims].
void check_dims(const char *role, const dim4 &shape, const dim4 &max_dims) {
  const int dims[] = {shape.n, shape.c, shape.h, shape.w};
  const int max[] = {max_dims.n, max_dims.c, max_dims.h, max_dims.w};
  const char *names = "nchw";
  for (int i = 0; i < 4; ++i)
    if (dims[i] < 1 || dims[i] > max[i])
      fail(ErrorKind::illegal_command, "{} shape {}: {} = {}; it must be in [1, {}]", role, describe(shape),
           names[i], dims[i], max[i]);
}

// local_tensor after the shape check.
TensorRef local_tensor_of(Memory &memory, const char *role, local_addr_t addr, const dim4 &shape,
                          const dim4 *stride, data_type_t dtype) {
  const ChipSpec &chip = memory.chip();
  if (addr >= chip.local_mem_total())
    fail(ErrorKind::memory_fault, "{} local address {:#x} is past the end of local memory ({} NPUs x {})", role,
         addr, chip.npu_num, Bytes{chip.local_mem_bytes});
  TensorRef t{.space = Space::local, .dtype = dtype, .esize = dtype_bytes(dtype), .shape = shape};
  t.addr = addr;
  t.role = role;
  t.start_npu = int(addr / chip.local_mem_bytes);
  t.stride = stride ? *stride : aligned_stride(chip, t.start_npu, shape, dtype);
  t.npu_num = chip.npu_num;
  t.npu_bytes = chip.local_mem_bytes;
  t.host_pitch = memory.npu_pitch();
  t.npu_shift = memory.npu_shift();  // computed once: std::has_single_bit is a library call on plain x86-64
  const int64_t offset = addr % chip.local_mem_bytes;
  with_role(role, t, [&] { check_local_footprint(chip, t, offset); });
  t.origin = memory.local_base() + offset;
  return t;
}

// system_tensor after the shape check.
TensorRef system_tensor_of(Memory &memory, const char *role, uint64_t addr, const dim4 &shape,
                           const dim4 *stride, data_type_t dtype) {
  TensorRef t{.space = Space::system, .dtype = dtype, .esize = dtype_bytes(dtype), .shape = shape};
  t.addr = addr;
  t.role = role;
  t.stride = stride ? *stride : continuous_stride(shape);
  Extent e;
  e.add(shape.n, t.stride.n);
  e.add(shape.c, t.stride.c);
  e.add(shape.h, t.stride.h);
  e.add(shape.w, t.stride.w);
  const int64_t lo_bytes = e.lo * t.esize;
  if (lo_bytes < 0 && uint64_t(-lo_bytes) > addr)
    fail(ErrorKind::memory_fault, "{} strides {} reach below address 0", role, describe(t.stride));
  uint8_t *low = with_role(role, t, [&] {
    return memory.system(addr + lo_bytes, uint64_t(e.hi - e.lo + 1) * t.esize);
  });
  t.origin = low - lo_bytes;
  return t;
}

}  // namespace

TensorRef local_tensor(Memory &memory, const char *role, local_addr_t addr, const dim4 &shape,
                       const dim4 *stride, data_type_t dtype) {
  check_dtype(role, dtype);
  check_shape(role, shape, memory.chip().gdma_shape_limit);
  return local_tensor_of(memory, role, addr, shape, stride, dtype);
}

TensorRef system_tensor(Memory &memory, const char *role, uint64_t addr, const dim4 &shape,
                        const dim4 *stride, data_type_t dtype) {
  check_dtype(role, dtype);
  check_shape(role, shape, memory.chip().gdma_shape_limit);
  return system_tensor_of(memory, role, addr, shape, stride, dtype);
}

TensorRef local_tensor(Memory &memory, const char *role, local_addr_t addr, const dim4 &shape,
                       const dim4 *stride, data_type_t dtype, const dim4 &max_dims) {
  check_dtype(role, dtype);
  check_dims(role, shape, max_dims);
  return local_tensor_of(memory, role, addr, shape, stride, dtype);
}

TensorRef system_tensor(Memory &memory, const char *role, uint64_t addr, const dim4 &shape,
                        const dim4 *stride, data_type_t dtype, const dim4 &max_dims) {
  check_dtype(role, dtype);
  check_dims(role, shape, max_dims);
  return system_tensor_of(memory, role, addr, shape, stride, dtype);
}

}  // namespace cmodel
