// ppl_types.h: PPL's element types, enumerations, dim4 and scalar helpers
// (spec §2.1-2.3); part of ppl.h (docs/ppl.md).
//
// Kept free of <cmath>, <cstdlib>, <cstring> and <cassert>: PPL declares
// min, max, assert, ... of its own, which kernels call unqualified.
#pragma once

#include <cstdint>
#include <source_location>
#include <type_traits>
// Function markers: the vendor's front end reads them; here they mark only.
#define __KERNEL__
#define __TEST__
#define __AUTOTUNE__
#define __HOST__
#define None 0

// The runtime's own sources include tpu_kernel.h too, whose macros these
// would clash with.
#ifndef PPL_RUNTIME_SOURCE
#define LANE_NUM (::ppl::lane_num())
#define NPU_NUM (::ppl::lane_num())
#define EU_BYTES (::ppl::eu_bytes())
#endif

namespace ppl {

// PPL's own enum values (spec §2.1), not tpu-kernel's.
enum data_type_t {
  DT_NONE = 0, DT_FP32 = 1, DT_FP16 = 2, DT_BF16 = 3, DT_FP8E5M2 = 4, DT_FP8E4M3 = 5, DT_FP20 = 6, DT_TF32 = 7,
  DT_INT32 = 8, DT_UINT32 = 9, DT_INT16 = 10, DT_UINT16 = 11, DT_INT8 = 12, DT_UINT8 = 13, DT_INT4 = 14,
  DT_UINT4 = 15, DT_INT64 = 16, DT_UINT64 = 17, DT_FP4 = 18
};
enum rounding_mode_t {
  RM_HALF_TO_EVEN = 0, RM_HALF_AWAY_FROM_ZERO = 1, RM_TOWARDS_ZERO = 2, RM_DOWN = 3, RM_UP = 4, RM_HALF_UP = 5,
  RM_HALF_DOWN = 6
};
enum align_mode_t { CONTINUOUS = 0, TPU_ALIGN = 1, TPU_COMPACT = 2, TPU_ROW_ALIGN = 3, NONE_ALIGN = 4 };
enum tensor_mode_t { L2 = 1, GLOBAL = 2, LOCAL = 3 };
enum transpose_mode_t { NC_TRANS = 0, CW_TRANS = 1 };
enum comparision_mode_t { GREATER = 0, LESS = 1, EQUAL = 2 };
enum all_reduce_psum_t { ALL_REDUCE_PSUM_WO = 0, ALL_REDUCE_PSUM_WR = 1 };
enum all_reduce_opcode_t {
  ALL_REDUCE_NOP = 0, ALL_REDUCE_MUL = 1, ALL_REDUCE_MAX = 2, ALL_REDUCE_MIN = 3, ALL_REDUCE_ADD = 4,
  ALL_REDUCE_AMAX = 5, ALL_REDUCE_SUM = 6, ALL_REDUCE_POWERSUM = 7, ALL_REDUCE_MAC = 8
};

// The host return codes of the generated interface (spec §4.3).
enum PplErrorCode_t {
  PplLocalAddrAssignErr = 0x11, FileErr = 0x12, LlvmFeErr = 0x13, PplFeErr = 0x14, PplOpt1Err = 0x15,
  PplOpt2Err = 0x16, PplFinalErr = 0x17, PplTransErr = 0x18, EnvErr = 0x19, PplL2AddrAssignErr = 0x1A,
  PplShapeInferErr = 0x1B, PplSetMemRefShapeErr = 0x1C, ToPplErr = 0x1D, PplTensorConvErr = 0x1E,
  PplDynBlockErr = 0x1F, CacheOpenKernelSoErr = 0x20, CacheGetKernelFunErr = 0x21, PplJitSetChipErr = 0x22,
  LocalMemSetErr = 0x23
};

// Element types. The 16- and 8-bit floats are opaque bit containers: a
// kernel never computes with them on the scalar core.
struct fp16 { uint16_t bits; };
struct bf16 { uint16_t bits; };
struct fp8e4m3 { uint8_t bits; };
struct fp8e5m2 { uint8_t bits; };
using fp32 = float;
using int32 = int32_t;
using uint32 = uint32_t;
using int16 = int16_t;
using uint16 = uint16_t;
using int8 = int8_t;
using uint8 = uint8_t;
using int64 = int64_t;
using uint64 = uint64_t;
using FP32 = fp32;
using FP16 = fp16;
using BF16 = bf16;
using INT8 = int8;
using UINT8 = uint8;

struct dim4 {
  int n = 0, c = 0, h = 0, w = 0;
};
struct dim2 {
  int h = 0, w = 0;
};
struct padding_t {
  int top = 0, bottom = 0, left = 0, right = 0;
};

template <typename T>
inline constexpr bool dependent_false = false;

// What the library knows of an element type; the primary template refuses
// everything it does not list, fp8 by name (no FP8 arithmetic on
// bm1684x/bm1688, spec §5.6).
template <typename T>
struct element {
  static_assert(!std::is_same_v<T, fp8e4m3>, "PPL: fp8e4m3 is not supported on bm1684x/bm1688 (no FP8 on these chips)");
  static_assert(!std::is_same_v<T, fp8e5m2>, "PPL: fp8e5m2 is not supported on bm1684x/bm1688 (no FP8 on these chips)");
  static_assert(std::is_same_v<T, fp8e4m3> || std::is_same_v<T, fp8e5m2> || dependent_false<T>,
                "PPL: this element type is not supported (fp32, fp16, bf16, [u]int32, [u]int16, [u]int8 are)");
};
template <data_type_t D, bool Float>
struct element_of {
  static constexpr data_type_t dtype = D;
  static constexpr bool is_float = Float;
};
template <> struct element<fp32> : element_of<DT_FP32, true> {};
template <> struct element<fp16> : element_of<DT_FP16, true> {};
template <> struct element<bf16> : element_of<DT_BF16, true> {};
template <> struct element<int32> : element_of<DT_INT32, false> {};
template <> struct element<uint32> : element_of<DT_UINT32, false> {};
template <> struct element<int16> : element_of<DT_INT16, false> {};
template <> struct element<uint16> : element_of<DT_UINT16, false> {};
template <> struct element<int8> : element_of<DT_INT8, false> {};
template <> struct element<uint8> : element_of<DT_UINT8, false> {};

template <typename T>
constexpr data_type_t convert_dtype() { return element<T>::dtype; }
template <typename T>
constexpr int get_data_size() { return static_cast<int>(sizeof(T)); }

int lane_num();
int eu_bytes();
template <typename T>
int get_eu_num() { return eu_bytes() / get_data_size<T>(); }

// Input channels a convolution weight packs per step (spec §2.6, "NIC"):
// 1 for fp32, else LANE_NUM / sizeof(T) (tpu_get_ic_parallel).
template <typename T>
int get_nic() { return sizeof(T) == 4 ? 1 : lane_num() / get_data_size<T>(); }

// Scalar helpers of the scalar core.
template <typename A, typename B>
constexpr auto min(A a, B b) { return a < b ? a : b; }
template <typename A, typename B>
constexpr auto max(A a, B b) { return a > b ? a : b; }
constexpr int div_up(int x, int a) { return (x + a - 1) / a; }
constexpr int align(int x, int a) { return div_up(x, a) * a; }

}  // namespace ppl
