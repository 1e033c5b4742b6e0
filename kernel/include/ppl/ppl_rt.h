// ppl_rt.h: the calls the PPL headers lower to, implemented by the compiled
// runtime in libcmodel (kernel/src/ppl_*.cc), which alone includes
// tpu_kernel.h; part of ppl.h (docs/ppl.md).
#pragma once

#include "ppl_types.h"

namespace ppl {
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
  // A tensor declared without a shape (spec §2.6) whose first write has not
  // been seen: the index of its record in the running kernel's shapes,
  // which that write fills; -1 once the shape is known (resolve).
  int shape_id = -1;
};

// Local allocations: created by tensor constructors, counted by handles.
int create_local(const dim4 &block, data_type_t dtype, int element_size, align_mode_t align, const site &where);
void retain(int instance);
// A local tensor declared without a shape (`tensor<T> t;`): its record's
// index (desc::shape_id), and for automatic placement (addr < 0) its
// allocation, sized and planned when the first write gives it a shape.
int declare_unshaped(const site &where);
int create_unshaped_local(const site &where);
// Fills `d`'s shape, block and strides once its record knows its shape.
void resolve(desc &d);
// Refuses with PplShapeInferErr a view of a tensor whose shape is not known
// yet (written first through a view, or read before any write).
void require_shape_known(const char *name, const desc &d, const site &where);
void release(int instance);

// Strides of `shape` in `align` layout starting on `lane` (spec §2.6).
dim4 local_strides(const dim4 &shape, align_mode_t align, int element_size, int lane);
dim4 continuous_strides(const dim4 &shape);
// `d` with its dimensions permuted: dimension i is d's dimension order[i]
// (order a permutation of 0..3, else refused).
desc permuted(const desc &d, const int order[4], const site &where);
// `d` advanced by `offset` (elements per dimension), shape `shape`.
desc sub_view(const desc &d, const dim4 &shape, const dim4 &offset, const site &where);

// The address of a global or L2 tensor: `given` for GLOBAL (required); for
// L2 `given`, or when null a new block of the kernel's L2 SRAM (in order of
// creation, the same on every core; PplL2AddrAssignErr when it is full).
uint64_t global_tensor_address(tensor_mode_t mode, const dim4 &shape, int element_size, uint64_t given,
                               const site &where);

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

// The operations the headers lower to (kernel/src/ppl_ops_*.cc).
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
// Refuses fmm2's ltrans and rst_trans (not implemented: only rtrans is).
void require_untransposed(const char *name, bool ltrans, bool rst_trans, const site &where);
void enable_pipeline(const site &where);
void disable_pingpong(const desc &d);
void set_bank_aware(bool on);
// Cores of the launch, this core's index; set_core_num in the plan pass
// fixes the launch's count (n < 1 refused).
int core_num();
int core_index();
void set_core_num(int n, const site &where);
void set_group_num(int n, const site &where);
void sync(bool all_cores, const site &where);
enum class message_engine { tiu, dma };
void send_message(message_engine engine, int id, int count, const site &where);
void wait_message(message_engine engine, int id, int count, const site &where);
// Table-driven functions of tpu-kernel: the coefficients are loaded into
// `coeff` first; log and arcsin use work0 only.
enum class table_function { exp, log, arcsin };
void tiu_table_function(const char *name, table_function f, const desc &dst, const desc &src, const desc &work0,
                        const desc &work1, const desc &coeff, const site &where);
void tiu_lane_broadcast(const char *name, const desc &dst, const desc &src, int lanes, const site &where);
void dma_move(const char *name, const desc &dst, const desc &src, const site &where);
struct int_mode {
  int shift = 0;
  rounding_mode_t rounding = RM_HALF_UP;
  bool saturation = false;
  // A left shift with saturation: a 32-bit tensor of dst's shape (signed as
  // dst is) where the operation's result waits, saturated to 32 bits, for
  // its saturating shift into dst.
  const desc *work = nullptr;
};
void tiu_int_binary(const char *name, binary op, const desc &dst, const desc &a, const desc &b, const int_mode &mode,
                    const site &where);
void tiu_int_binary_scalar(const char *name, binary op, const desc &dst, const desc &a, long long c,
                           bool scalar_first, const int_mode &mode, const site &where);
void dma_fill(const char *name, const desc &dst, double value, const site &where);
void tiu_rsqrt(const char *name, const desc &dst, const desc &src, int iterations, const site &where);
enum class pool { average, max, min };
struct pool_window {
  dim2 kernel, stride, dilation;
  padding_t padding;
};
// The handle forms' window parameters (spec §2.3: pool::param's kernel,
// padding and insert; H2's int handles). A handle is the index of its
// record in a table of the process's distinct records, so a kernel that
// builds its handles inside a loop does not grow the table.
enum class window_param_kind { kernel, padding, insert };
struct window_param {
  window_param_kind kind;
  int values[6];  // kernel: kh kw stride_h stride_w relu rotate; padding: value up down left right mode;
                  // insert: value dil_h dil_w ins_h ins_w
};
int window_param_handle(const window_param &record);
// Refuses `given` unless it is `expected` (an operation's explicit dtype
// argument against its tensor's type).
void require_dtype(const char *name, const char *role, data_type_t given, data_type_t expected, const site &where);
// The window of a pooling or convolution call's handles (insert < 0: none
// given); refuses a handle of another kind or unknown, and what those
// commands do not do here (relu, rotate, insertion, a padding value or
// mode of its own).
pool_window window_of(const char *name, int kernel, int padding, int insert, const site &where);
// The window of a deconvolution's handles (deconv::param): kernel, the
// transposed convolution's stride, dilation and padding; the kernel handle
// must ask for rotate (its default) and no relu, the insert handle for no
// insertion (the stride inserts).
pool_window deconv_window_of(const char *name, int kernel, int padding, int insert, const site &where);
// Elements of the others' type read from `d`; nullptr = the scalar.
struct tensor_or_scalar {
  const desc *d = nullptr;
  double value = 0;
};
enum class bitwise { and_, or_, xor_ };
void tiu_bitwise(const char *name, bitwise op, const desc &dst, const desc &a, tensor_or_scalar b, const site &where);
enum class compare { greater, less, equal };
// dst = true_value where a op b, else 0.
void tiu_compare(const char *name, compare op, const desc &dst, const desc &a, tensor_or_scalar b, double true_value,
                 const site &where);
// dst = (a op b) ? x : y.
void tiu_select(const char *name, compare op, const desc &dst, tensor_or_scalar a, tensor_or_scalar b,
                tensor_or_scalar x, tensor_or_scalar y, const site &where);
void tiu_abs(const char *name, const desc &dst, const desc &src, const site &where);
// Arithmetic (or logical) shift by a tensor of int8 shifts or a constant;
// positive shifts left.
void tiu_shift(const char *name, bool logical, const desc &dst, const desc &src, tensor_or_scalar shift,
               rounding_mode_t rm, const site &where);
// dst += a * b (fp32).
void tiu_fmac(const char *name, const desc &dst, const desc &a, tensor_or_scalar b, const site &where);
// Round to an integer value in the same float type; floor when `floor`.
void tiu_round(const char *name, const desc &dst, const desc &src, rounding_mode_t mode, bool floor,
               const site &where);
// dst(n, c, h, w) = src(n, w, h, c), through tpu_bdc_cw_trans (`cw`) or
// tpu_bdc_wc_trans.
void tiu_transpose(const char *name, bool cw, const desc &dst, const desc &src, const site &where);
void tiu_move_cross_lane(const char *name, const desc &dst, const desc &src, const site &where);
// dst(0, c, 0, i) = start + i * step for i < num, in each of dst's C lanes
// (`lanes`, when not 0, must be that C).
void tiu_arange(const char *name, const desc &dst, int start, int step, int num, int lanes, const site &where);
// dst [1, M, 1, N] = left [1, M, 1, K] x right^T, right [1, N, 1, K].
void tiu_fmm2_nt(const char *name, const desc &dst, const desc &left, const desc &right, const site &where);
enum class transpose { nc, cw };
// Global or local, by GDMA: NC: dst(n, c, h, w) = src(c, n, h, w); CW:
// dst(n, c, h, w) = src(n, w, h, c).
void dma_transpose(const char *name, transpose mode, const desc &dst, const desc &src, const site &where);
// src [n, 1, h, w] (global or local) to the `num` (or dst's C) channels of
// local dst.
void dma_channel_broadcast(const char *name, const desc &dst, const desc &src, int num, const site &where);
// L2 dst = dst op src (ALL_REDUCE_PSUM_WR) or src (_WO), src local, global or L2.
void dma_reduce(const char *name, const desc &dst, const desc &src, all_reduce_psum_t psum, all_reduce_opcode_t op,
                const site &where);
// dst(n, c, h, w) = param(n, c, index(n, c, h) - start_pos, w), `fill` where
// that row is outside param; index uint32 [n, c, h, 1].
void dma_gather_h(const char *name, const desc &dst, const desc &param, const desc &index, double fill, int start_pos,
                  const site &where);
// dst(n, c, index(n, c, h) - start_pos, w) = param(n, c, h, w) (added when
// `add`); index uint32 [n, c, param's h, 1].
void dma_scatter_h(const char *name, const desc &dst, const desc &param, const desc &index, int start_pos, bool add,
                   const site &where);
void dma_load_compact(const char *name, const desc &dst, const desc &src, const site &where);
void tiu_pool(const char *name, pool kind, const desc &dst, const desc &src, const pool_window &window, double scale,
              const site &where);
// Integer pooling (int8/uint8 sources): max, or the window's sum times
// `scale`, shifted right by `rshift` (rounding half up) and saturated.
struct int_pool {
  bool average = false;
  int scale = 1;
  int rshift = 0;
};
void tiu_int_pool(const char *name, const int_pool &kind, const desc &dst, const desc &src, const pool_window &window,
                  const site &where);
// dst(n, c, h, index(n, c, h, w)) = param(n, c, h, w) (16- or 8-bit index);
// `repeated`: param is one channel present in every lane.
void tiu_scatter_w(const char *name, const desc &dst, const desc &param, const desc &index, bool repeated,
                   const site &where);
// Float convolution (tpu_bdc_fp_conv2d, or _kernel_const for a constant
// weight): dst [n, oc, oh, ow] = [dst +] conv(src [n, ic, ih, iw], weight)
// [+ bias]; weight [1, oc, ceil(ic / nic) kh kw, nic] compact on dst's lane,
// bias [1, oc, 1, 1] fp32 compact on dst's lane (docs/ppl.md, "fconv").
struct conv_operands {
  tensor_or_scalar weight;
  const desc *bias = nullptr;
  int oc = 0;
  bool result_add = false;
};
// A convolution's window with the insert handle's insertion (ins_h, ins_w)
// and the kernel handle's rotate (the kernel read turned by 180 degrees).
struct conv_window {
  pool_window window;
  dim2 insert{0, 0};
  bool rotate = false;
};
// The window of fconv's handles: no relu; insertion and rotate as given.
conv_window conv_window_of(const char *name, int kernel, int padding, int insert, const site &where);
// With insertion or rotate: tpu_bdc_fp_conv2d_for_deconv2d, which inserts
// and rotates, so both need rotate, stride 1 and a tensor weight (else
// refused; docs/ppl.md, "fconv").
void tiu_fconv(const char *name, const desc &dst, const desc &src, const conv_operands &operands,
               const conv_window &window, const site &where);
// Transposed float convolution (tpu_bdc_fp_conv2d_for_deconv2d): dst [n,
// oc, (ih - 1) sh - up - down + dh (kh - 1) + 1, likewise w] = [dst +]
// deconv(src, weight) [+ bias], `window` in the transposed convolution's
// terms; weight and bias laid out as fconv's, weight(o, i, p, q) the
// forward convolution's (docs/ppl.md, "fdeconv").
void tiu_fdeconv(const char *name, const desc &dst, const desc &src, const conv_operands &operands,
                 const pool_window &window, const site &where);
// Depthwise float convolution (tpu_bdc_fp_depthwise2d): dst [n, c, oh, ow]
// of src's type = conv of each channel with its own kernel, weight [1, c,
// kh, kw] and bias [1, c, 1, 1] of src's type, compact, on src's lane.
void tiu_fdw_conv(const char *name, const desc &dst, const desc &src, const desc &weight, const desc *bias,
                  const pool_window &window, const site &where);
// dst [n, c, 1, w] = param [n, c, ph, pw] at the (h, w) pairs of index
// (lane 0, shared by every channel): 16-bit [n, 1, 1, 2w] (h, w, h, w, ...)
// or 32-bit [n, 1, 1, w] (h in the low half). `exception`: out-of-range
// pairs give `fill` when fill_const, else are clamped; otherwise they stop
// the kernel.
struct gather_fill {
  bool exception = false;
  double value = 0;
  bool fill_const = true;
};
void tiu_gather_hw(const char *name, const desc &dst, const desc &param, const desc &index, const gather_fill &fill,
                   const site &where);
// Gathers inside local memory (8- or 16-bit index, every operand aligned
// on one lane): W: dst(n, c, h, w) = param(n, c, h, index(n, c, h, w)),
// index of dst's shape; H: dst(n, c, h, w) = param(n, c, index(n, c, h), w),
// index [n, c, h, 1]. `repeated`: param is one channel present in every
// lane. Out-of-range indices as for gather_hw.
enum class gather_axis { w, h };
void tiu_gather(const char *name, gather_axis axis, const desc &dst, const desc &param, const desc &index,
                const gather_fill &fill, bool repeated, const site &where);
// dst(n, c, index(n, c, h), w) = param(n, c, h, w); index [n, c, param's h, 1].
void tiu_scatter_h(const char *name, const desc &dst, const desc &param, const desc &index, bool repeated,
                   const site &where);
// dst(n, c, h_i, w_i) = param(n, c, 0, i) for the (h, w) pairs of index (as
// gather_hw's); outside pairs are skipped.
void tiu_scatter_hw(const char *name, const desc &dst, const desc &param, const desc &index, const site &where);
// The flat indices (+ base) of src's non-zero elements into dst (uint32);
// their count. In the plan pass: src's element count, an upper bound.
unsigned dma_nonzero(const char *name, const desc &dst, const desc &src, unsigned base, const site &where);

}  // namespace rt
}  // namespace ppl
