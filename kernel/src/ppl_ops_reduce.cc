// ppl_ops_reduce.cc: the PPL operations that combine elements: reductions
// over W, pooling and matrix multiplication (spec §3.8).
#include <algorithm>
#include <iterator>
#include <limits>
#include <mutex>
#include <vector>

#include "ppl_ops_common.h"

namespace ppl::rt {

void tiu_reduce_w(const char *name, const desc &dst_in, const desc &src, all_reduce_opcode_t op,
                  const site &where) {
  require_local(name, "src", src, where);
  const dim4 expected{src.shape.n, src.shape.c, src.shape.h, 1};
  const desc dst = written(name, dst_in, expected, where);
  require_local(name, "dst", dst, where);
  if (!same(dst.shape, expected))
    refuse(name, where, fmt::format("dst of shape {} must be {} to reduce W of {}", text(dst.shape), text(expected),
                                    text(src.shape)));
  if (op != ALL_REDUCE_SUM && op != ALL_REDUCE_ADD && op != ALL_REDUCE_MAX)
    refuse(name, where, fmt::format("reduction {} is not implemented (SUM, ADD and MAX are)", static_cast<int>(op)));
  require_aligned(name, "dst", dst, where);
  require_aligned(name, "src", src, where);
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}}, [=] {
    // A pooling window of 1 x W over the aligned tensors.
    const ::dim4 shape = kernel_dim4(src.shape);
    const ::dim2 kernel{1, src.shape.w}, one{1, 1};
    const ::padding_t none{0, 0, 0, 0};
    if (op == ALL_REDUCE_MAX)
      tpu_bdc_fp_max_pool2d(local_address(dst), local_address(src), &shape, &kernel, &none, &one, &one,
                            kernel_dtype(src.dtype), scalar_of(-std::numeric_limits<double>::infinity(), src.dtype));
    else
      tpu_bdc_fp_avg_pool2d(local_address(dst), local_address(src), &shape, &kernel, &none, &one, &one,
                            kernel_dtype(src.dtype), scalar_of(1.0, src.dtype));
  });
}

// ---- the handle forms' window parameters ------------------------------------------------------

namespace {

std::mutex window_params_mutex;
std::vector<window_param> window_params;  // distinct records, a handle is the index

const char *kind_name(window_param_kind kind) {
  switch (kind) {
    case window_param_kind::kernel: return "kernel";
    case window_param_kind::padding: return "padding";
    case window_param_kind::insert: return "insert";
  }
  return "?";
}

window_param window_param_at(const char *name, const char *role, int handle, window_param_kind kind,
                             const site &where) {
  std::lock_guard<std::mutex> lock(window_params_mutex);
  if (handle < 0 || std::size_t(handle) >= window_params.size())
    refuse(name, where, fmt::format("{} handle {} was not made by a ::param::{} builder", role, handle, kind_name(kind)));
  const window_param p = window_params[std::size_t(handle)];
  if (p.kind != kind)
    refuse(name, where, fmt::format("the {} argument is a {} handle (::param::{}); pass a ::param::{} handle", role,
                                    kind_name(p.kind), kind_name(p.kind), kind_name(kind)));
  return p;
}

}  // namespace

int window_param_handle(const window_param &record) {
  std::lock_guard<std::mutex> lock(window_params_mutex);
  for (std::size_t i = 0; i < window_params.size(); ++i)
    if (window_params[i].kind == record.kind &&
        std::equal(std::begin(record.values), std::end(record.values), std::begin(window_params[i].values)))
      return int(i);
  window_params.push_back(record);
  return int(window_params.size() - 1);
}

void require_dtype(const char *name, const char *role, data_type_t given, data_type_t expected, const site &where) {
  if (given != expected)
    refuse(name, where, fmt::format("{} is data type {}, but the tensor it describes is {}", role, int(given),
                                    int(expected)));
}

namespace {

// The window of a kernel handle `k` (relu and rotate already judged) and
// the padding and insert handles, with the insert handle's insertion.
conv_window window_from(const char *name, const window_param &k, int padding, int insert, const site &where) {
  const window_param p = window_param_at(name, "pad", padding, window_param_kind::padding, where);
  if (p.values[0] != 0 || p.values[5] != 0)
    refuse(name, where, fmt::format("the padding handle has value {} and mode {}; the command pads with its own value "
                                    "(0 for a convolution or an average, -inf for max, +inf for min) in mode 0: "
                                    "pass value 0, mode 0",
                                    p.values[0], p.values[5]));
  conv_window w{{{k.values[0], k.values[1]}, {k.values[2], k.values[3]}, {1, 1},
                 {p.values[1], p.values[2], p.values[3], p.values[4]}},
                {0, 0},
                k.values[5] != 0};
  if (insert >= 0) {
    const window_param ins = window_param_at(name, "insert", insert, window_param_kind::insert, where);
    w.window.dilation = {ins.values[1], ins.values[2]};
    w.insert = {ins.values[3], ins.values[4]};
  }
  return w;
}

void refuse_insertion(const char *name, const conv_window &w, const site &where) {
  if (w.insert.h || w.insert.w)
    refuse(name, where, fmt::format("the insert handle inserts {} rows and {} columns; this SDK takes "
                                    "dilation only here (ins_h = ins_w = 0)",
                                    w.insert.h, w.insert.w));
}

}  // namespace

conv_window conv_window_of(const char *name, int kernel, int padding, int insert, const site &where) {
  const window_param k = window_param_at(name, "kernel", kernel, window_param_kind::kernel, where);
  if (k.values[4]) refuse(name, where, "the kernel handle asks for relu, which this SDK does not do here");
  return window_from(name, k, padding, insert, where);
}

pool_window window_of(const char *name, int kernel, int padding, int insert, const site &where) {
  const conv_window w = conv_window_of(name, kernel, padding, insert, where);
  if (w.rotate) refuse(name, where, "the kernel handle asks for rotate, which this SDK does not do here");
  refuse_insertion(name, w, where);
  return w.window;
}

pool_window deconv_window_of(const char *name, int kernel, int padding, int insert, const site &where) {
  const conv_window w = conv_window_of(name, kernel, padding, insert, where);
  if (!w.rotate)
    refuse(name, where, "the kernel handle has rotate = false; a deconvolution reads its kernel rotated "
                        "(deconv::param::kernel's default, rotate = true), the only form done here");
  refuse_insertion(name, w, where);
  return w.window;
}

// Local aligned dst and src, dst of the output shape of a pooling window
// over src (a dst declared without a shape takes it); refuses a bad window.
desc check_window_output(const char *name, const desc &dst_in, const desc &src, const pool_window &window,
                         const site &where) {
  require_local(name, "src", src, where);
  require_aligned(name, "src", src, where);
  const dim2 out = window_output(name, src.shape, window, where);
  const dim4 expected{src.shape.n, src.shape.c, out.h, out.w};
  const desc dst = written(name, dst_in, expected, where);
  require_local(name, "dst", dst, where);
  require_aligned(name, "dst", dst, where);
  if (!same(dst.shape, expected))
    refuse(name, where, fmt::format("dst of shape {} must be {} for this window over {}", text(dst.shape),
                                    text(expected), text(src.shape)));
  return dst;
}


void tiu_pool(const char *name, pool kind, const desc &dst_in, const desc &src, const pool_window &window,
              double scale, const site &where) {
  const desc dst = check_window_output(name, dst_in, src, window, where);
  const dim2 k = window.kernel, st = window.stride, dl = window.dilation;
  const padding_t p = window.padding;
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(src.shape);
    const ::dim2 kk{k.h, k.w}, ss{st.h, st.w}, dd{dl.h, dl.w};
    const ::padding_t pp{p.top, p.bottom, p.left, p.right};
    if (kind == pool::max)
      tpu_bdc_fp_max_pool2d(local_address(dst), local_address(src), &shape, &kk, &pp, &ss, &dd, kernel_dtype(src.dtype),
                            scalar_of(-std::numeric_limits<double>::infinity(), src.dtype));
    else if (kind == pool::min)  // padding with +infinity, as max pads with -infinity
      tpu_bdc_fp_min_pool2d(local_address(dst), local_address(src), &shape, &kk, &pp, &ss, &dd, kernel_dtype(src.dtype),
                            scalar_of(std::numeric_limits<double>::infinity(), src.dtype));
    else
      tpu_bdc_fp_avg_pool2d(local_address(dst), local_address(src), &shape, &kk, &pp, &ss, &dd, kernel_dtype(src.dtype),
                            scalar_of(scale, src.dtype));
  });
}


void tiu_fmm2(const char *name, const desc &dst_in, const desc &left, const desc &right, bool result_add,
              const site &where) {
  check_known(name, "left", left, where);
  check_known(name, "right", right, where);
  if (result_add) check_known(name, "dst (accumulated into)", dst_in, where);
  const int m = left.shape.c, k = left.shape.w, n = right.shape.w;
  const desc dst = written(name, dst_in, dim4{1, m, 1, n}, where);
  if (left.shape.n != 1 || left.shape.h != 1 || right.shape.n != 1 || right.shape.h != 1 || right.shape.c != k ||
      !same(dst.shape, dim4{1, m, 1, n}))
    refuse(name, where, fmt::format("fmm2 takes dst [1,M,1,N], left [1,M,1,K], right [1,K,1,N]; got {}, {}, {}",
                                    text(dst.shape), text(left.shape), text(right.shape)));
  require_lane0_aligned(name, {{"dst", &dst}, {"left", &left}, {"right", &right}}, where);
  submit(where, {{&dst, tiu_engine}, {&left, tiu_engine}, {&right, tiu_engine}}, [=] {
    tpu_bdc_fp_mm(local_address(dst), local_address(left), local_address(right), m, k, n, kernel_dtype(dst.dtype),
                  kernel_dtype(left.dtype), result_add);
  });
}


void require_untransposed(const char *name, bool ltrans, bool rst_trans, const site &where) {
  if (ltrans || rst_trans)
    refuse(name, where, fmt::format("ltrans = {}, rst_trans = {}: only the right operand's transpose (rtrans) is "
                                    "implemented", ltrans, rst_trans));
}

void tiu_fmm2_nt(const char *name, const desc &dst_in, const desc &left, const desc &right, const site &where) {
  check_known(name, "left", left, where);
  check_known(name, "right", right, where);
  const int m = left.shape.c, k = left.shape.w, n = right.shape.c;
  const desc dst = written(name, dst_in, dim4{1, m, 1, n}, where);
  if (left.shape.n != 1 || left.shape.h != 1 || right.shape.n != 1 || right.shape.h != 1 || right.shape.w != k ||
      !same(dst.shape, dim4{1, m, 1, n}))
    refuse(name, where, fmt::format("fmm2_nt takes dst [1,M,1,N], left [1,M,1,K], right [1,N,1,K]; got {}, {}, {}",
                                    text(dst.shape), text(left.shape), text(right.shape)));
  require_lane0_aligned(name, {{"dst", &dst}, {"left", &left}, {"right", &right}}, where);
  if (left.dtype != right.dtype) refuse(name, where, "left and right must be of one type");
  submit(where, {{&dst, tiu_engine}, {&left, tiu_engine}, {&right, tiu_engine}}, [=] {
    tpu_bdc_fp_mm_R_trans(local_address(dst), local_address(left), local_address(right), m, k, n,
                          kernel_dtype(dst.dtype), kernel_dtype(left.dtype));
  });
}


void tiu_int_pool(const char *name, const int_pool &kind, const desc &dst_in, const desc &src,
                  const pool_window &window, const site &where) {
  const desc dst = check_window_output(name, dst_in, src, window, where);
  if (src.dtype != ppl::DT_INT8 && src.dtype != ppl::DT_UINT8)
    refuse(name, where, "the integer pooling takes int8 or uint8 sources (the pooling command's integers)");
  if (!kind.average && dst.dtype != src.dtype) refuse(name, where, "pool_max gives the source's type");
  if (kind.average && (kind.scale < 0 || kind.scale > 255 || kind.rshift < 0 || kind.rshift > 255))
    refuse(name, where, fmt::format("scale {} and rshift {} must each be in [0, 255]", kind.scale, kind.rshift));
  submit(where, {{&dst, tiu_engine}, {&src, tiu_engine}}, [=] {
    const ::dim4 shape = kernel_dim4(src.shape);
    const ::dim2 kk{window.kernel.h, window.kernel.w}, ss{window.stride.h, window.stride.w},
        dd{window.dilation.h, window.dilation.w};
    const ::padding_t pp{window.padding.top, window.padding.bottom, window.padding.left, window.padding.right};
    if (kind.average) {
      tpu_bdc_int8_avg_pool2d(local_address(dst), local_address(src), &shape, &kk, &pp, &ss, &dd,
                              kernel_dtype(dst.dtype), kernel_dtype(src.dtype), static_cast<unsigned char>(kind.scale),
                              static_cast<unsigned char>(kind.rshift));
      return;
    }
    // Padding takes the type's lowest value, which never wins a maximum.
    const double lowest = src.dtype == ppl::DT_INT8 ? -128.0 : 0.0;
    tpu_bdc_int8_max_pool2d(local_address(dst), local_address(src), &shape, &kk, &pp, &ss, &dd,
                            kernel_dtype(src.dtype), scalar_of(lowest, src.dtype));
  });
}

}  // namespace ppl::rt
