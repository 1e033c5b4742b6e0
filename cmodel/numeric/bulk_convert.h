// bulk_convert.h: fp16 / bf16 <-> fp32 over whole runs of elements, with
// results bit-identical to the per-element functions of float_convert.h
// (subnormals, NaN payloads and every rounding_mode_t included).
//
// Element-wise commands on fp16 / bf16 spend most of their time converting
// one element at a time; these convert a run at once. Where the host has
// F16C and AVX2 (checked once, at run time, so one binary serves every x86
// host) fp16 goes through the hardware's conversion instructions, with the
// cases where their result differs from ours (signalling NaNs when widening,
// the three rounding modes F16C lacks when narrowing) done per element.
// bf16 needs no special instruction: rounding it is integer arithmetic the
// compiler vectorises.
//
// `step` is the distance between consecutive elements of the 16-bit side,
// in elements (1 = contiguous); the fp32 side is always contiguous.
#pragma once

#include <cstdint>

#include "cmodel/include/cmodel_machine_types.h"

namespace cmodel::numeric {

// out[i] = fp16_to_fp32(src[i * step]) for i < n.
void fp16_to_fp32_n(const uint16_t *src, int64_t step, float *out, int64_t n);
// out[i] = bf16_to_fp32(src[i * step]) for i < n.
void bf16_to_fp32_n(const uint16_t *src, int64_t step, float *out, int64_t n);
// dst[i * step] = fp32_to_fp16(in[i], mode) for i < n.
void fp32_to_fp16_n(const float *in, uint16_t *dst, int64_t step, int64_t n, rounding_mode_t mode);
// dst[i * step] = fp32_to_bf16(in[i], mode) for i < n.
void fp32_to_bf16_n(const float *in, uint16_t *dst, int64_t step, int64_t n, rounding_mode_t mode);

// Which implementation the functions above use.
enum class BulkIsa { portable, f16c_avx2 };
// The one chosen for this host (the best it supports).
BulkIsa bulk_convert_isa();
// Forces an implementation (tests compare both with the per-element
// functions); returns the previous one. Asking for f16c_avx2 on a host
// without it keeps the portable one. Not thread-safe: for tests only.
BulkIsa set_bulk_convert_isa(BulkIsa isa);
const char *bulk_isa_name(BulkIsa isa);

}  // namespace cmodel::numeric
