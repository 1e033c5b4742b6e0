// ppl.h: the PPL programming model as a C++ header library over this
// SDK's tpu-kernel API (docs/ppl.md). A `.pl` file includes this header,
// says `using namespace ppl;` and is compiled by an ordinary C++20 compiler;
// the generated interface (cmake/ppl_interface.py) wraps each __KERNEL__
// into `int k(...)`, which plans local memory, then runs the kernel on the
// emulator.
//
// tpu_kernel.h stays out of a .pl translation unit: both define DT_*, dim4,
// rounding_mode_t with different values. The commands are issued by the
// compiled runtime (kernel/src/ppl_*.cc) behind PPL-typed calls (ppl_rt.h).
//
// Kept free of <cmath>, <cstdlib>, <cstring> and <cassert>: PPL declares
// min, max, assert, ... of its own, which kernels call unqualified.
#pragma once

#include "ppl_types.h"
#include "ppl_rt.h"

namespace ppl {

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
  // Without a shape (spec §2.4, §2.6): the first operation that writes the
  // tensor and has inputs gives it its shape (and block), which never
  // changes after; writing it first through a view, by an operation without
  // inputs (fill, zero), or reading it before, is PplShapeInferErr.
  explicit tensor(align_mode_t align = TPU_ALIGN, long long addr = -1, const rt::site &where = rt::site::current()) {
    d_.mode = LOCAL;
    d_.dtype = element<T>::dtype;
    d_.element_size = sizeof(T);
    d_.align = align;
    d_.shape_id = rt::declare_unshaped(where);
    if (addr < 0)
      d_.instance = rt::create_unshaped_local(where);
    else
      d_.address = static_cast<uint64_t>(addr);
  }
  tensor(const tensor &other) : d_(other.d_) { rt::retain(d_.instance); }
  tensor &operator=(const tensor &) = delete;
  ~tensor() { rt::release(d_.instance); }

  // New shape, strides recomputed from the layout; same address.
  tensor view(const dim4 &shape, const rt::site &where = rt::site::current()) const {
    rt::desc d = known("ppl::tensor::view", where);
    d.shape = shape;
    d.stride = rt::local_strides(shape, d.align, sizeof(T), d.lane);
    return tensor(d);
  }
  tensor view(const dim4 &shape, const dim4 &stride, const rt::site &where = rt::site::current()) const {
    rt::desc d = known("ppl::tensor::view", where);
    d.shape = shape;
    d.stride = stride;
    d.align = NONE_ALIGN;
    return tensor(d);
  }
  template <typename U>
  tensor<U> view() const {
    static_assert(sizeof(U) == sizeof(T), "PPL: view<T2>() needs an element type of the same size");
    rt::desc d = describe();  // an unshaped tensor's record serves both types
    d.dtype = element<U>::dtype;
    return tensor<U>(d);
  }
  tensor sub_view(const dim4 &shape, const dim4 &offset, const rt::site &where = rt::site::current()) const {
    return tensor(rt::sub_view(known("ppl::tensor::sub_view", where), shape, offset, where));
  }
  dim4 getShape() const { return describe().shape; }
  dim4 getBlockShape() const { return describe().block; }
  // The description, with the shape of an unshaped tensor once a write gave
  // it one (the handle learns it on its next use).
  const rt::desc &describe() const {
    if (d_.shape_id >= 0) rt::resolve(d_);
    return d_;
  }
  // A handle over an existing description (the views above).
  explicit tensor(const rt::desc &d) : d_(d) { rt::retain(d_.instance); }

 private:
  const rt::desc &known(const char *name, const rt::site &where) const {
    rt::require_shape_known(name, describe(), where);
    return d_;
  }
  mutable rt::desc d_;  // mutable: resolved in place (describe)
};

// A global-memory tensor, or an L2 SRAM one (mode L2, shared by the cores
// of a launch; without an address the kernel's L2 block is allocated).
template <typename T>
class gtensor {
 public:
  gtensor(const dim4 &shape, tensor_mode_t mode, T *addr = nullptr, const rt::site &where = rt::site::current()) {
    static_assert(sizeof(element<T>) >= 1);
    d_.mode = mode;
    d_.dtype = element<T>::dtype;
    d_.element_size = sizeof(T);
    d_.align = CONTINUOUS;
    d_.shape = d_.block = shape;
    d_.stride = rt::continuous_strides(shape);
    d_.address = rt::global_tensor_address(mode, shape, sizeof(T), reinterpret_cast<uintptr_t>(addr), where);
  }
  gtensor(const dim4 *shape, tensor_mode_t mode, T *addr = nullptr, const rt::site &where = rt::site::current())
      : gtensor(*shape, mode, addr, where) {}
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
gtensor<T> make_gtensor(const dim4 &shape, tensor_mode_t mode, T *addr, const dim4 &stride,
                        const rt::site &where = rt::site::current()) {
  return gtensor<T>(shape, mode, addr, where).view(shape, stride);
}
// `mem_shape` memory (continuous) read with its dimensions permuted:
// dimension i of the result is dimension order[i] of mem_shape, with that
// dimension's stride (e.g. order {2, 1, 0, 3} reads [b, s, h, d] as
// [h, s, b, d]). The form without `order` is not offered: its default
// order is not in the public material.
template <typename T>
gtensor<T> make_gtensor_permute(const dim4 &mem_shape, tensor_mode_t mode, T *addr, const int order[4],
                                const rt::site &where = rt::site::current()) {
  const gtensor<T> whole(mem_shape, mode, addr, where);
  return gtensor<T>(rt::permuted(whole.describe(), order, where));
}
// An L2 tensor of `block` viewed as `real`.
template <typename T>
gtensor<T> make_l2tensor(const dim4 &block, tensor_mode_t mode, const dim4 &real,
                         const rt::site &where = rt::site::current()) {
  return gtensor<T>(block, mode, nullptr, where).view(real);
}

// enable_pipeline(), first in a loop body: the tensors created after it
// that both a DMA and a TIU operation use get two buffers, alternating per
// iteration, and the loop's operations are issued software-pipelined (the
// loads of iteration i + 1 and the stores of i - 1 beside the computation
// of i) when that keeps every dependence; results are the serial loop's
// (spec §1.5, docs/ppl.md).
inline void enable_pipeline(const rt::site &where = rt::site::current()) { rt::enable_pipeline(where); }
// Never double `t` (it keeps one buffer; the loop may lose its overlap).
template <typename T>
void disable_pingpong(const tensor<T> &t) { rt::disable_pingpong(t.describe()); }
enum memory_alloc_method_t { BANK_CONFLICT_FIRST = 0, MEMORY_UTILIZATION_FIRST = 1 };
// BANK_CONFLICT_FIRST (the default) keeps the operands of one TIU operation
// in different banks where that costs no fit; MEMORY_UTILIZATION_FIRST
// packs from the bottom (spec §1.4 item 4).
inline void set_memory_alloc_method(memory_alloc_method_t m) { rt::set_bank_aware(m == BANK_CONFLICT_FIRST); }
inline void set_config_memory_alloc_method(memory_alloc_method_t m) { set_memory_alloc_method(m); }

// Multi-core (spec §1.6): set_core_num/set_block_num fix the number of
// cores the kernel is launched on (at most the chip's: bm1688 2, bm1684x 1;
// without a call, one); every core runs the whole body with its own local
// memory, and reads its index and the count here (docs/ppl.md).
inline int get_core_num() { return rt::core_num(); }
inline int get_core_index() { return rt::core_index(); }
inline int get_block_num() { return rt::core_num(); }
inline int get_block_index() { return rt::core_index(); }
inline int get_group_num() { return 1; }
inline int get_group_index() { return 0; }
inline void set_core_num(int n, const rt::site &where = rt::site::current()) { rt::set_core_num(n, where); }
inline void set_block_num(int n, const rt::site &where = rt::site::current()) { rt::set_core_num(n, where); }
inline void set_block_num_max(const rt::site &where = rt::site::current()) { rt::set_core_num(1 << 16, where); }
inline void set_group_num(int n, const rt::site &where = rt::site::current()) {
  rt::set_group_num(n, where);  // one group: other counts are refused
}

// Synchronisation: sync() (= sync_all()) is a barrier of all cores of the
// launch after each core's engines are done; sync_core() waits for this
// core's engines only. They end a pipelined loop's overlap.
inline void sync(const rt::site &where = rt::site::current()) { rt::sync(true, where); }
inline void sync_all(const rt::site &where = rt::site::current()) { rt::sync(true, where); }
inline void sync_core(const rt::site &where = rt::site::current()) { rt::sync(false, where); }
inline void sync_tiu_dma(bool all_core = false, const rt::site &where = rt::site::current()) {
  rt::sync(all_core, where);
}
inline void sync_engine(int, bool all_core, const rt::site &where = rt::site::current()) { rt::sync(all_core, where); }
}  // namespace ppl

#include "ppl_dma_func.h"
#include "ppl_tiu_func.h"
#include "ppl_unimplemented.h"
