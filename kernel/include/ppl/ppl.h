// ppl.h: the PPL programming model as a C++ header library over this
// SDK's tpu-kernel API (docs/ppl.md). A `.pl` file includes this header,
// says `using namespace ppl;` and is compiled by an ordinary C++20 compiler;
// the generated interface (cmake/ppl_interface.py) wraps each __KERNEL__
// into `int k(...)`, which plans local memory, then runs the kernel on the
// emulator.
//
// tpu_kernel.h stays out of a .pl translation unit: both define DT_*, dim4,
// rounding_mode_t with different values. The commands are issued by the
// compiled runtime (kernel/src/ppl_runtime.cc) behind PPL-typed calls.
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

// Scalar helpers of the scalar core.
template <typename A, typename B>
constexpr auto min(A a, B b) { return a < b ? a : b; }
template <typename A, typename B>
constexpr auto max(A a, B b) { return a > b ? a : b; }
constexpr int div_up(int x, int a) { return (x + a - 1) / a; }
constexpr int align(int x, int a) { return div_up(x, a) * a; }

namespace rt {

// Where a PPL call was written: the .pl line the errors name.
using site = std::source_location;

// A tensor as the runtime sees it: memory space, element type, shape and
// strides in elements, and its place. Global: `address` is the byte
// address. Local: `address` is the byte offset inside the tensor's
// allocation (`instance`, an index into the running kernel's allocations;
// -1 for a tensor at an explicit local address, whose offset is absolute)
// and `lane` its start lane.
struct desc {
  tensor_mode_t mode = GLOBAL;
  data_type_t dtype = DT_FP32;
  int element_size = 4;
  align_mode_t align = TPU_ALIGN;
  dim4 shape, stride, block;
  uint64_t address = 0;
  int lane = 0;
  int instance = -1;
};

// Local allocations: created by tensor constructors, counted by handles.
int create_local(const dim4 &block, data_type_t dtype, int element_size, align_mode_t align, const site &where);
void retain(int instance);
void release(int instance);

// Strides of `shape` in `align` layout starting on `lane` (spec §2.6).
dim4 local_strides(const dim4 &shape, align_mode_t align, int element_size, int lane);
dim4 continuous_strides(const dim4 &shape);
// `d` advanced by `offset` (elements per dimension), shape `shape`.
desc sub_view(const desc &d, const dim4 &shape, const dim4 &offset, const site &where);

// Global pointer parameters carry a global address, never dereferenced.
struct global_address {
  uint64_t value;
  template <typename T>
  operator T *() const { return reinterpret_cast<T *>(static_cast<uintptr_t>(value)); }
};

// Runs a kernel body: a plan pass (no command), local memory assignment,
// then the body under the emulator. 0, a PplErrorCode_t, or -1 when the run
// stopped on an error (cmodel_last_error() says which, at which .pl line).
int launch(void (*body)(void *), void *arguments);

// The operations the headers lower to (kernel/src/ppl_runtime.cc).
enum class binary { add, sub, mul, div, max, min };
void dma_copy(const char *name, const desc &dst, const desc &src, const site &where);
void tiu_binary(const char *name, binary op, const desc &dst, const desc &a, const desc &b, const site &where);
void tiu_binary_scalar(const char *name, binary op, const desc &dst, const desc &a, double c, bool scalar_first,
                       const site &where);
void tiu_fill(const char *name, const desc &dst, double value, const site &where);
void tiu_move(const char *name, const desc &dst, const desc &src, const site &where);
void tiu_cast(const char *name, const desc &dst, const desc &src, rounding_mode_t mode, const site &where);
void tiu_reduce_w(const char *name, const desc &dst, const desc &src, all_reduce_opcode_t op, const site &where);
void tiu_fmm2(const char *name, const desc &dst, const desc &left, const desc &right, bool result_add,
              const site &where);
void enable_pipeline(const site &where);
void tiu_exp(const char *name, const desc &dst, const desc &src, const desc &work0, const desc &work1,
             const desc &coeff, const site &where);
void tiu_lane_broadcast(const char *name, const desc &dst, const desc &src, int lanes, const site &where);
void dma_move(const char *name, const desc &dst, const desc &src, const site &where);
struct int_mode {
  int shift = 0;
  rounding_mode_t rounding = RM_HALF_UP;
  bool saturation = false;
};
void tiu_int_binary(const char *name, binary op, const desc &dst, const desc &a, const desc &b, const int_mode &mode,
                    const site &where);
void tiu_int_binary_scalar(const char *name, binary op, const desc &dst, const desc &a, long long c,
                           bool scalar_first, const int_mode &mode, const site &where);
void dma_fill(const char *name, const desc &dst, double value, const site &where);
void tiu_rsqrt(const char *name, const desc &dst, const desc &src, int iterations, const site &where);
enum class pool { average, max };
struct pool_window {
  dim2 kernel, stride, dilation;
  padding_t padding;
};
void tiu_pool(const char *name, pool kind, const desc &dst, const desc &src, const pool_window &window, double scale,
              const site &where);

}  // namespace rt

// A local-memory tensor: a handle (copies alias the same memory; copy
// assignment does not compile, as in PPL). view/sub_view return new
// handles by value: pass them to our operations directly or name them with
// `auto`.
template <typename T>
class tensor {
 public:
  explicit tensor(const dim4 &shape, align_mode_t align = TPU_ALIGN, long long addr = -1,
                  const rt::site &where = rt::site::current()) {
    d_.mode = LOCAL;
    d_.dtype = element<T>::dtype;
    d_.element_size = sizeof(T);
    d_.align = align;
    d_.shape = d_.block = shape;
    d_.stride = rt::local_strides(shape, align, sizeof(T), 0);
    if (addr < 0) {
      d_.instance = rt::create_local(shape, d_.dtype, sizeof(T), align, where);
    } else {
      d_.address = static_cast<uint64_t>(addr);
    }
  }
  explicit tensor(const dim4 *shape, align_mode_t align = TPU_ALIGN, long long addr = -1,
                  const rt::site &where = rt::site::current())
      : tensor(*shape, align, addr, where) {}
  tensor(const tensor &other) : d_(other.d_) { rt::retain(d_.instance); }
  tensor &operator=(const tensor &) = delete;
  ~tensor() { rt::release(d_.instance); }

  // New shape, strides recomputed from the layout; same address.
  tensor view(const dim4 &shape) const {
    rt::desc d = d_;
    d.shape = shape;
    d.stride = rt::local_strides(shape, d.align, sizeof(T), d.lane);
    return tensor(d);
  }
  tensor view(const dim4 &shape, const dim4 &stride) const {
    rt::desc d = d_;
    d.shape = shape;
    d.stride = stride;
    d.align = NONE_ALIGN;
    return tensor(d);
  }
  template <typename U>
  tensor<U> view() const {
    static_assert(sizeof(U) == sizeof(T), "PPL: view<T2>() needs an element type of the same size");
    rt::desc d = d_;
    d.dtype = element<U>::dtype;
    return tensor<U>(d);
  }
  tensor sub_view(const dim4 &shape, const dim4 &offset, const rt::site &where = rt::site::current()) const {
    return tensor(rt::sub_view(d_, shape, offset, where));
  }
  dim4 getShape() const { return d_.shape; }
  dim4 getBlockShape() const { return d_.block; }
  const rt::desc &describe() const { return d_; }
  // A handle over an existing description (the views above).
  explicit tensor(const rt::desc &d) : d_(d) { rt::retain(d_.instance); }

 private:
  rt::desc d_;
};

// A global-memory tensor (L2 is not modelled yet: refused at run time).
template <typename T>
class gtensor {
 public:
  gtensor(const dim4 &shape, tensor_mode_t mode, T *addr) {
    static_assert(sizeof(element<T>) >= 1);
    d_.mode = mode;
    d_.dtype = element<T>::dtype;
    d_.element_size = sizeof(T);
    d_.align = CONTINUOUS;
    d_.shape = d_.block = shape;
    d_.stride = rt::continuous_strides(shape);
    d_.address = reinterpret_cast<uintptr_t>(addr);
  }
  gtensor(const dim4 *shape, tensor_mode_t mode, T *addr) : gtensor(*shape, mode, addr) {}
  gtensor(const gtensor &) = default;
  gtensor &operator=(const gtensor &) = delete;
  explicit gtensor(const rt::desc &d) : d_(d) {}

  gtensor view(const dim4 &shape) const {
    rt::desc d = d_;
    d.shape = shape;
    d.stride = rt::continuous_strides(shape);
    return gtensor(d);
  }
  gtensor view(const dim4 &shape, const dim4 &stride) const {
    rt::desc d = d_;
    d.shape = shape;
    d.stride = stride;
    return gtensor(d);
  }
  gtensor sub_view(const dim4 &shape, const dim4 &offset, const rt::site &where = rt::site::current()) const {
    return gtensor(rt::sub_view(d_, shape, offset, where));
  }
  dim4 getShape() const { return d_.shape; }
  const rt::desc &describe() const { return d_; }

 private:
  rt::desc d_;
};

// make_tensor(block, real) = tensor(block, align).view(real).
template <typename T>
tensor<T> make_tensor(const dim4 &block, const dim4 &real, align_mode_t align = TPU_ALIGN,
                      const rt::site &where = rt::site::current()) {
  return tensor<T>(block, align, -1, where).view(real);
}
template <typename T>
tensor<T> make_tensor(const dim4 *block, const dim4 *real, align_mode_t align = TPU_ALIGN,
                      const rt::site &where = rt::site::current()) {
  return make_tensor<T>(*block, *real, align, where);
}
template <typename T>
gtensor<T> make_gtensor(const dim4 &shape, tensor_mode_t mode, T *addr, const dim4 &stride) {
  return gtensor<T>(shape, mode, addr).view(shape, stride);
}

// Pipelining has no effect on results (spec §1.5); it makes local memory
// count ping-pong buffers (docs/ppl.md).
inline void enable_pipeline(const rt::site &where = rt::site::current()) { rt::enable_pipeline(where); }

// Multi-core: one core until the multi-core emulator lands (docs/ppl.md).
inline int get_core_num() { return 1; }
inline int get_core_index() { return 0; }
inline int get_block_num() { return 1; }
inline int get_block_index() { return 0; }
inline void set_core_num(int) {}
inline void set_block_num(int) {}

namespace dma {

template <typename T>
void load(const tensor<T> &dst, const gtensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::dma_copy("ppl::dma::load", dst.describe(), src.describe(), where);
}
template <typename T>
void store(const gtensor<T> &dst, const tensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::dma_copy("ppl::dma::store", dst.describe(), src.describe(), where);
}
// Local to local or global to global.
template <typename Tensor>
void move(const Tensor &dst, const Tensor &src, const rt::site &where = rt::site::current()) {
  rt::dma_move("ppl::dma::move", dst.describe(), src.describe(), where);
}
// Local or global: the constant converted to the tensor's type.
template <typename Tensor>
void fill(const Tensor &dst, double value, const rt::site &where = rt::site::current()) {
  rt::dma_fill("ppl::dma::fill", dst.describe(), value, where);
}
template <typename Tensor>
void zero(const Tensor &dst, const rt::site &where = rt::site::current()) {
  rt::dma_fill("ppl::dma::zero", dst.describe(), 0.0, where);
}

}  // namespace dma

namespace tiu {

template <typename T>
constexpr void require_float(const char *) {
  static_assert(element<T>::is_float, "PPL: this tiu operation takes fp32, fp16 or bf16 tensors");
}

#define PPL_TIU_BINARY(NAME, OP)                                                                          \
  template <typename T>                                                                                   \
  void NAME(const tensor<T> &dst, const tensor<T> &a, const tensor<T> &b, bool = false,                   \
            const rt::site &where = rt::site::current()) {                                                \
    require_float<T>(#NAME);                                                                              \
    rt::tiu_binary("ppl::tiu::" #NAME, rt::binary::OP, dst.describe(), a.describe(), b.describe(), where); \
  }                                                                                                       \
  template <typename T>                                                                                   \
  void NAME(const tensor<T> &dst, const tensor<T> &a, float c, bool = false,                              \
            const rt::site &where = rt::site::current()) {                                                \
    require_float<T>(#NAME);                                                                              \
    rt::tiu_binary_scalar("ppl::tiu::" #NAME, rt::binary::OP, dst.describe(), a.describe(), c, false, where); \
  }
PPL_TIU_BINARY(fadd, add)
PPL_TIU_BINARY(fmul, mul)
PPL_TIU_BINARY(fsub, sub)
PPL_TIU_BINARY(fmax, max)
PPL_TIU_BINARY(fmin, min)
#undef PPL_TIU_BINARY

// c - a.
template <typename T>
void fsub(const tensor<T> &dst, float c, const tensor<T> &a, bool = false,
          const rt::site &where = rt::site::current()) {
  require_float<T>("fsub");
  rt::tiu_binary_scalar("ppl::tiu::fsub", rt::binary::sub, dst.describe(), a.describe(), c, true, where);
}

template <typename T>
void fdiv(const tensor<T> &dst, const tensor<T> &a, const tensor<T> &b, int = 3,
          const rt::site &where = rt::site::current()) {
  require_float<T>("fdiv");
  rt::tiu_binary("ppl::tiu::fdiv", rt::binary::div, dst.describe(), a.describe(), b.describe(), where);
}

template <typename T>
void fill(const tensor<T> &dst, double value, const rt::site &where = rt::site::current()) {
  rt::tiu_fill("ppl::tiu::fill", dst.describe(), value, where);
}
template <typename T>
void zero(const tensor<T> &dst, const rt::site &where = rt::site::current()) {
  rt::tiu_fill("ppl::tiu::zero", dst.describe(), 0.0, where);
}
template <typename T>
void move(const tensor<T> &dst, const tensor<T> &src, const rt::site &where = rt::site::current()) {
  rt::tiu_move("ppl::tiu::move", dst.describe(), src.describe(), where);
}
template <typename T0, typename T1>
void cast(const tensor<T0> &dst, const tensor<T1> &src, rounding_mode_t mode = RM_HALF_TO_EVEN,
          const rt::site &where = rt::site::current()) {
  rt::tiu_cast("ppl::tiu::cast", dst.describe(), src.describe(), mode, where);
}
template <typename T>
constexpr void require_integer() {
  static_assert(!element<T>::is_float, "PPL: the integer tiu operations (add, sub, mul) take integer tensors");
}

// Integer add, sub, mul: (a op b) shifted left by `shift` (right by -shift,
// rounded by `rm`), saturated to dst's type when `saturation`.
#define PPL_TIU_INT(NAME, OP)                                                                                     \
  template <typename TD, typename TA, typename TB>                                                                \
  void NAME(const tensor<TD> &dst, const tensor<TA> &a, const tensor<TB> &b, int shift = 0,                     \
            rounding_mode_t rm = RM_HALF_UP, bool saturation = false, const rt::site &where = rt::site::current()) { \
    require_integer<TD>();                                                                                        \
    rt::tiu_int_binary("ppl::tiu::" #NAME, rt::binary::OP, dst.describe(), a.describe(), b.describe(),           \
                       rt::int_mode{shift, rm, saturation}, where);                                                \
  }                                                                                                               \
  template <typename TD, typename TA>                                                                             \
  void NAME(const tensor<TD> &dst, const tensor<TA> &a, long long c, int shift = 0, rounding_mode_t rm = RM_HALF_UP, \
            bool saturation = false, const rt::site &where = rt::site::current()) {                              \
    require_integer<TD>();                                                                                        \
    rt::tiu_int_binary_scalar("ppl::tiu::" #NAME, rt::binary::OP, dst.describe(), a.describe(), c, false,        \
                              rt::int_mode{shift, rm, saturation}, where);                                        \
  }
PPL_TIU_INT(add, add)
PPL_TIU_INT(sub, sub)
PPL_TIU_INT(mul, mul)
#undef PPL_TIU_INT

// Element-wise maximum and minimum of any type (the corpus uses them on
// floats too).
template <typename T>
void max(const tensor<T> &dst, const tensor<T> &a, const tensor<T> &b, const rt::site &where = rt::site::current()) {
  rt::tiu_binary("ppl::tiu::max", rt::binary::max, dst.describe(), a.describe(), b.describe(), where);
}
template <typename T>
void min(const tensor<T> &dst, const tensor<T> &a, const tensor<T> &b, const rt::site &where = rt::site::current()) {
  rt::tiu_binary("ppl::tiu::min", rt::binary::min, dst.describe(), a.describe(), b.describe(), where);
}
template <typename T>
void max(const tensor<T> &dst, const tensor<T> &a, double c, const rt::site &where = rt::site::current()) {
  rt::tiu_binary_scalar("ppl::tiu::max", rt::binary::max, dst.describe(), a.describe(), c, false, where);
}
template <typename T>
void min(const tensor<T> &dst, const tensor<T> &a, double c, const rt::site &where = rt::site::current()) {
  rt::tiu_binary_scalar("ppl::tiu::min", rt::binary::min, dst.describe(), a.describe(), c, false, where);
}

// src [n, 1, h, w] copied to `num` (or dst's C) lanes: dst [n, num, h, w].
template <typename T>
void broadcast(const tensor<T> &dst, const tensor<T> &src, int num = 0, const rt::site &where = rt::site::current()) {
  rt::tiu_lane_broadcast("ppl::tiu::broadcast", dst.describe(), src.describe(), num, where);
}
// 1/sqrt(x) by Newton iterations (1 to 4; aligned tensors).
template <typename T>
void frsqrt(const tensor<T> &dst, const tensor<T> &src, int num_iter = 3,
            const rt::site &where = rt::site::current()) {
  require_float<T>("frsqrt");
  rt::tiu_rsqrt("ppl::tiu::frsqrt", dst.describe(), src.describe(), num_iter, where);
}
// Pooling over H and W in the vendor's pointer form; fpool_avg gives the
// window's sum times `scale` (docs/ppl.md). Aligned tensors.
template <typename T>
void fpool_avg(const tensor<T> &dst, const tensor<T> &src, const dim2 *kernel, const padding_t *pad,
               const dim2 *stride, const dim2 *dilation, float scale = 1.0f,
               const rt::site &where = rt::site::current()) {
  require_float<T>("fpool_avg");
  rt::tiu_pool("ppl::tiu::fpool_avg", rt::pool::average, dst.describe(), src.describe(),
               rt::pool_window{*kernel, *stride, *dilation, *pad}, scale, where);
}
template <typename T>
void fpool_max(const tensor<T> &dst, const tensor<T> &src, const dim2 *kernel, const padding_t *pad,
               const dim2 *stride, const dim2 *dilation, const rt::site &where = rt::site::current()) {
  require_float<T>("fpool_max");
  rt::tiu_pool("ppl::tiu::fpool_max", rt::pool::max, dst.describe(), src.describe(),
               rt::pool_window{*kernel, *stride, *dilation, *pad}, 1.0, where);
}
// Reduces the W dimension (spec §3.8, `reduce`; §7 question 9 decided as W).
template <typename T>
void reduce(const tensor<T> &dst, const tensor<T> &src, all_reduce_opcode_t op, bool = false,
            const rt::site &where = rt::site::current()) {
  require_float<T>("reduce");
  rt::tiu_reduce_w("ppl::tiu::reduce", dst.describe(), src.describe(), op, where);
}
// dst[1,M,1,N] (fp32, or T) = [dst +] left[1,M,1,K] x right[1,K,1,N].
template <typename TD, typename T>
void fmm2(const tensor<TD> &dst, const tensor<T> &left, const tensor<T> &right, bool result_add = false,
          const rt::site &where = rt::site::current()) {
  require_float<T>("fmm2");
  rt::tiu_fmm2("ppl::tiu::fmm2", dst.describe(), left.describe(), right.describe(), result_add, where);
}

}  // namespace tiu
}  // namespace ppl

#include "ppl_unimplemented.h"
