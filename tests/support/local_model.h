// local_model.h: an independent model of local-memory tensors for BDC
// tests, written from the spec (§1 figures, §3 layout), not from the
// emulator: where element (n, c, h, w) of a local tensor lives, the
// aligned layout, and typed access to the emulator's local memory.
#pragma once

#include <cstdint>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel_host.h"
#include "support/local_image.h"
#include "tpu_kernel.h"

namespace local_model {

struct Chip {
  std::string name;
  int npu;
  uint32_t lmem;  // bytes per NPU
  int eu_bytes;
};

inline Chip chip(std::string_view name) {
  if (name == "bm1684x") return {"bm1684x", 64, 1u << 18, 64};
  return {"bm1688", 32, 1u << 17, 16};
}

inline int esize(data_type_t t) {
  switch (t) {
    case DT_INT8: case DT_UINT8: return 1;
    case DT_INT16: case DT_UINT16: case DT_FP16: case DT_BFP16: return 2;
    default: return 4;
  }
}

// Range of an 8/16/32-bit integer dtype, and an element's raw bits read as
// a number of that dtype.
inline int64_t int_min(data_type_t t) {
  return t == DT_INT8 ? -128 : t == DT_INT16 ? -32768 : t == DT_INT32 ? -2147483648LL : 0;
}
inline int64_t int_max(data_type_t t) {
  switch (t) {
    case DT_INT8: return 127;
    case DT_UINT8: return 255;
    case DT_INT16: return 32767;
    case DT_UINT16: return 65535;
    case DT_INT32: return 2147483647LL;
    default: return 4294967295LL;
  }
}
inline int64_t int_value(data_type_t t, uint32_t bits) {
  switch (t) {
    case DT_INT8: return int8_t(bits);
    case DT_UINT8: return uint8_t(bits);
    case DT_INT16: return int16_t(bits);
    case DT_UINT16: return uint16_t(bits);
    case DT_INT32: return int32_t(bits);
    default: return uint32_t(bits);
  }
}

inline int64_t div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Spec §3.3: c = ALIGN(h*w, eu), n = c * DIV_UP(start + C, NPU).
inline dim4 aligned_stride(const Chip &chip, int start_npu, const dim4 &s, data_type_t t) {
  const int eu = chip.eu_bytes / esize(t);
  const int c = int(div_up(int64_t(s.h) * s.w, eu) * eu);
  return {c * int(div_up(start_npu + s.c, chip.npu)), c, s.w, 1};
}

struct Tensor {
  local_addr_t addr;
  dim4 shape;
  dim4 stride;
  data_type_t dtype;
  bool null_stride = false;  // pass NULL to the API (stride holds the aligned one)
  const dim4 *api_stride() const { return null_stride ? nullptr : &stride; }
};

// Byte offset of element (n, c, h, w) in the whole local memory (spec §3.2).
inline size_t offset_of(const Chip &chip, const Tensor &t, int n, int c, int h, int w) {
  const int start = int(t.addr / chip.lmem);
  const int64_t in_npu = int64_t(t.addr % chip.lmem) +
                         int64_t(esize(t.dtype)) * (int64_t(n) * t.stride.n + int64_t((start + c) / chip.npu) * t.stride.c +
                                                    int64_t(h) * t.stride.h + int64_t(w) * t.stride.w);
  return size_t((start + c) % chip.npu) * chip.lmem + size_t(in_npu);
}

// The emulator's local byte at `offset` (a unified local address, as
// offset_of gives); valid between cmodel_open and cmodel_close, for
// accesses inside that NPU (see local_image.h).
inline uint8_t *local_at(size_t offset) { return local_image::at(offset); }

template <typename T>
T get(const Chip &chip, const Tensor &t, int n, int c, int h, int w) {
  T v;
  std::memcpy(&v, local_at(offset_of(chip, t, n, c, h, w)), sizeof v);
  return v;
}

template <typename T>
void set(const Chip &chip, const Tensor &t, int n, int c, int h, int w, T v) {
  std::memcpy(local_at(offset_of(chip, t, n, c, h, w)), &v, sizeof v);
}

// Element (n, c, h, w) of `t` as raw bits of its dtype's width (1, 2 or 4
// bytes, zero-extended), read from or written to the emulator's local memory.
inline uint32_t get_bits(const Chip &chip, const Tensor &t, int n, int c, int h, int w) {
  uint32_t v = 0;
  std::memcpy(&v, local_at(offset_of(chip, t, n, c, h, w)), esize(t.dtype));
  return v;
}
inline void set_bits(const Chip &chip, const Tensor &t, int n, int c, int h, int w, uint32_t v) {
  std::memcpy(local_at(offset_of(chip, t, n, c, h, w)), &v, esize(t.dtype));
}
// The same element written into a copy of local memory (an expected image).
inline void put(std::vector<uint8_t> &mem, const Chip &chip, const Tensor &t, int n, int c, int h, int w, uint32_t v) {
  std::memcpy(mem.data() + offset_of(chip, t, n, c, h, w), &v, esize(t.dtype));
}
// A copy of the whole local memory, the starting point of an expected image.
inline std::vector<uint8_t> snapshot(const Chip &chip) {
  std::vector<uint8_t> image = local_image::read();
  EXPECT_EQ(image.size(), size_t(chip.npu) * chip.lmem);
  return image;
}

template <typename F>
void for_each_index(const dim4 &s, F &&f) {
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int h = 0; h < s.h; ++h)
        for (int w = 0; w < s.w; ++w) f(n, c, h, w);
}

// An aligned tensor at `npu` * LMEM + `offset` (offset a multiple of EU bytes).
inline Tensor aligned(const Chip &chip, int npu, uint32_t offset, const dim4 &shape, data_type_t t) {
  return {local_addr_t(npu * chip.lmem + offset), shape, aligned_stride(chip, npu, shape, t), t, true};
}

// Bytes one NPU needs for an aligned tensor (tpu_get_local_size).
inline uint32_t aligned_bytes(const Chip &chip, int npu, const dim4 &shape, data_type_t t) {
  return uint32_t(shape.n) * aligned_stride(chip, npu, shape, t).n * esize(t);
}

// A test run on each chip named by the parameter: the emulator is opened
// fresh before every test and closed after it.
class ChipTest : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }
};

// Bytes [0, end) past the tensor's start offset that it can touch in one NPU
// (non-negative strides).
inline int64_t footprint_bytes(const Chip &chip, const Tensor &t) {
  const int start = int(t.addr / chip.lmem);
  const int64_t rows = div_up(start + t.shape.c, chip.npu);
  const int64_t last = int64_t(t.shape.n - 1) * t.stride.n + (rows - 1) * t.stride.c +
                       int64_t(t.shape.h - 1) * t.stride.h + int64_t(t.shape.w - 1) * t.stride.w;
  return (last + 1) * esize(t.dtype);
}

// A random layout for `shape` at npu * LMEM + offset: aligned (NULL stride),
// or free strides with gaps, w-stride 1 or 2, and, when `broadcast` is
// allowed (sources only), some zero strides. Returns false if it would
// need more than `limit` bytes.
template <typename Rng>
bool random_layout(Rng &rng, const Chip &chip, int npu, uint32_t offset, const dim4 &shape, data_type_t dtype,
                   bool broadcast, uint32_t limit, Tensor &out) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  out = {local_addr_t(npu * chip.lmem + offset), shape, {}, dtype, false};
  if (pick(0, 2) == 0) {
    out = aligned(chip, npu, offset, shape, dtype);
  } else {
    dim4 &st = out.stride;
    st.w = pick(1, 2);
    st.h = shape.w * st.w + pick(0, 3);
    st.c = shape.h * st.h + pick(0, 5);
    st.n = int(div_up(npu + shape.c, chip.npu)) * st.c + pick(0, 7);
    if (broadcast) {
      if (pick(0, 3) == 0) st.w = 0;
      if (pick(0, 3) == 0) st.h = 0;
      if (pick(0, 3) == 0) st.n = 0;
    }
  }
  const int64_t bytes = footprint_bytes(chip, out);
  return bytes <= limit && offset + bytes <= chip.lmem;
}

// Compares the emulator's whole local memory with `expected`; on a
// difference names the first differing NPU and offset and how many bytes
// differ. `context` describes the case.
template <typename Context>
void expect_local_memory(const Chip &chip, const std::vector<uint8_t> &expected, Context &&context) {
  if (expected.size() != size_t(chip.npu) * chip.lmem) {
    ADD_FAILURE() << context() << ": the expected image has " << expected.size() << " bytes, not " << chip.npu
                  << " x " << chip.lmem;
    return;
  }
  // NPU by NPU: each NPU's host pointer covers its own memory only.
  size_t first = SIZE_MAX, differing = 0;
  for (int npu = 0; npu < chip.npu; ++npu) {
    const uint8_t *got = static_cast<const uint8_t *>(tpu_local_mem_addr(npu, 0));
    const uint8_t *want = expected.data() + size_t(npu) * chip.lmem;
    if (std::memcmp(got, want, chip.lmem) == 0) continue;
    for (size_t i = 0; i < chip.lmem; ++i)
      if (got[i] != want[i]) {
        if (first == SIZE_MAX) first = size_t(npu) * chip.lmem + i;
        ++differing;
      }
  }
  if (differing == 0) return;
  ADD_FAILURE() << context() << ": " << differing << " byte(s) of local memory differ; the first is NPU "
                << first / chip.lmem << " offset 0x" << std::hex << first % chip.lmem << ": expected 0x"
                << int(expected[first]) << ", emulator 0x" << int(*local_at(first)) << std::dec;
}

// fp16 / bf16 <-> float, written independently of the emulator: bf16 by
// truncation tricks, fp16 through the compiler's _Float16.
inline float from_fp16(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return float(h);
}
inline uint16_t to_fp16(float f) {
  _Float16 h = _Float16(f);  // round to nearest even
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
inline float from_bf16(uint16_t b) {
  const uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t to_bf16(float f) {  // round to nearest even; NaN stays NaN
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return uint16_t((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

// An fp32 / fp16 / bf16 element's bits (zero-extended) as a float, and a
// float rounded to nearest-even into a dtype's bits.
inline float float_of(data_type_t t, uint32_t bits) {
  if (t == DT_FP16) return from_fp16(uint16_t(bits));
  if (t == DT_BFP16) return from_bf16(uint16_t(bits));
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline uint32_t bits_of(data_type_t t, float f) {
  if (t == DT_FP16) return to_fp16(f);
  if (t == DT_BFP16) return to_bf16(f);
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

}  // namespace local_model
