#include "math.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "elementwise.h"
#include "cmodel/hazard.h"
#include "cmodel/numeric/fast_exp.h"

namespace cmodel::bdc {
namespace {

constexpr double inv_sqrt2 = 0.70710678118654752440;     // 1/sqrt(2)
constexpr double sqrt_2_over_pi = 0.79788456080286535588;  // sqrt(2/pi)
constexpr double pi = 3.14159265358979323846;
// SELU (Klambauer et al. 2017): scale (x > 0 ? x : alpha (e^x - 1)).
constexpr double selu_alpha = 1.67326324235437728482;
constexpr double selu_scale = 1.05070098735548049342;

// ---- rounding ------------------------------------------------------------------------------
// (round_to_odd and store_rounded_once are in elementwise.h.)

template <typename D>
typename D::Storage store(double y) {
  return store_rounded_once<D>(y);
}

// The elements of t in (n, c, h, w) order, loaded as dtype D.
template <typename D>
std::vector<float> gather(const TensorRef &t) {
  std::vector<float> out(size_t(t.elements()));
  size_t k = 0;
  for_each_run(t, [&](int64_t count, Run r) {
    load_block<D>(r, 0, count, out.data() + k);  // fp16 / bf16: converted at once
    k += size_t(count);
  });
  return out;
}

// The fp16 / bf16 encodings of fp32 values, rounded to nearest-even, at once.
template <typename D>
std::vector<uint16_t> narrow_all(const std::vector<float> &values) {
  std::vector<uint16_t> out(values.size());
  if constexpr (std::is_same_v<D, Fp16>)
    numeric::fp32_to_fp16_n(values.data(), out.data(), 1, int64_t(values.size()), RM_HALF_TO_EVEN);
  else
    numeric::fp32_to_bf16_n(values.data(), out.data(), 1, int64_t(values.size()), RM_HALF_TO_EVEN);
  return out;
}

// Writes `values` (storage of t's dtype, in (n, c, h, w) order) into t.
template <typename Storage>
void scatter(const TensorRef &t, const Storage *values) {
  size_t k = 0;
  for_each_run(t, [&](int64_t count, Run r) {
    auto *p = reinterpret_cast<Storage *>(r.p);
    for (int64_t i = 0; i < count; ++i) p[i * r.step] = values[k++];
  });
}

template <typename Storage>
void scatter(const TensorRef &t, const std::vector<Storage> &values) {
  scatter(t, values.data());
}

// Results not zeroed first (every element is written before it is read):
// zeroing them was a few percent of exp's time.
template <typename Storage>
std::unique_ptr<Storage[]> uninitialised(size_t count) {
  return std::unique_ptr<Storage[]>(new Storage[count]);
}

// ---- checks ----------------------------------------------------------------------------------

// The checker allows 1 to 4 steps, for RSQ (SFU-7: a 2-bit field + 1) and
// DIV (AR-6) alike; `rule` is the one of the command's instruction.
constexpr int max_iterations = 4;

void require_iterations(Rule rule, int num_iter) {
  if (num_iter == 0)
    fail(ErrorKind::unsupported,
         "num_iter 0 returns the hardware's bare SFU seed, which this SDK does not model; use num_iter >= 1");
  if (num_iter < 0) fail(rule, "num_iter {} is negative; at least 1 Newton-Raphson step is needed", num_iter);
  if (num_iter > max_iterations)
    fail(rule, "num_iter {} is above {}; the command takes 1 to {} Newton-Raphson steps", num_iter, max_iterations,
         max_iterations);
}

struct Named {
  const char *role;
  const TensorRef *t;
};

void require_disjoint(const Named &a, const Named &b, const char *why) {
  bdc::require_disjoint(*a.t, a.role, *b.t, b.role, why);
}

constexpr const char *scratch_reason = work_buffer_reason;
constexpr const char *table_reason = "writing dst would overwrite the table";

// The operands of one transcendental command, checked.
struct Operands {
  TensorRef dst;
  std::vector<Named> sources;  // src / src0, src1
  std::vector<TensorRef> work;
  std::vector<TensorRef> tables;
  data_type_t dtype = DT_FP32;
};

// A table operand placed (NPU 0, aligned, inside local memory) and the
// check of its contents, run last.
struct TableCheck {
  const char *param;
  TensorRef t;
  std::function<void()> verify;
};

Operands check_operands(Context &ctx, data_type_t dtype, local_addr_t dst_addr,
                        std::initializer_list<WorkBuffer> work, const std::vector<TableCheck> &tables,
                        const dim4 &shape, const std::vector<const TensorRef *> &sources,
                        const std::vector<const char *> &source_roles) {
  Operands ops{.dst = operand(ctx, "dst", dst_addr, shape, nullptr, dtype), .sources = {}, .work = {}, .tables = {},
               .dtype = dtype};
  for (size_t i = 0; i < sources.size(); ++i) {
    require_same_npu(ops.dst, "dst", *sources[i], source_roles[i]);
    ops.sources.push_back({source_roles[i], sources[i]});
  }
  ops.work.reserve(work.size());
  for (const WorkBuffer &w : work) {
    ops.work.push_back(operand(ctx, w.role, w.addr, shape, nullptr, dtype));
    require_same_npu(ops.dst, "dst", ops.work.back(), w.role);
  }
  ops.tables.reserve(tables.size());
  for (const TableCheck &t : tables) ops.tables.push_back(t.t);

  // Overlaps: work buffers with everything, dst with the tables.
  const Named dst{"dst", &ops.dst};
  size_t k = 0;
  for (const WorkBuffer &w : work) {
    const Named mine{w.role, &ops.work[k]};
    require_disjoint(mine, dst, scratch_reason);
    for (const Named &s : ops.sources) require_disjoint(mine, s, scratch_reason);
    for (size_t j = 0; j < k; ++j) require_disjoint(mine, {work.begin()[j].role, &ops.work[j]}, scratch_reason);
    size_t i = 0;
    for (const TableCheck &t : tables) require_disjoint(mine, {t.param, &ops.tables[i++]}, scratch_reason);
    ++k;
  }
  size_t i = 0;
  for (const TableCheck &t : tables) require_disjoint(dst, {t.param, &ops.tables[i++]}, table_reason);

  // Last: the tables' contents (an overlap above may explain a bad table).
  for (const TableCheck &t : tables) t.verify();
  return ops;
}

// The fp32 family: each table must be exactly its fp32 loader's.
Operands check_operands(Context &ctx, local_addr_t dst_addr, std::initializer_list<WorkBuffer> work,
                        std::initializer_list<TableBuffer> tables, const dim4 &shape,
                        const std::vector<const TensorRef *> &sources, const std::vector<const char *> &source_roles) {
  std::vector<TableCheck> checks;
  for (const TableBuffer &t : tables) {
    TensorRef ref = table_operand(ctx, t.param, t.addr, t.table);
    checks.push_back({t.param, ref, [ref, t] { require_table_contents(ref, t.param, t.table); }});
  }
  return check_operands(ctx, DT_FP32, dst_addr, work, checks, shape, sources, source_roles);
}

void book_math(Context &ctx, const char *api, BdcCost cost, double factor, const Operands &ops) {
  for (const TensorRef &w : ops.work) ctx.hazards.note(w, true);
  for (const TensorRef &t : ops.tables) ctx.hazards.note(t, false);
  for (const Named &s : ops.sources) ctx.hazards.note(*s.t, false);
  book(ctx, api, cost, ops.dst, ops.dtype, {&ops.dst}, {}, factor);
}

// ---- intermediates left in the work buffers ---------------------------------------------------
// What a table-based evaluation would hold there (values rounded to fp32):

// e^a: w[0] = n, the nearest integer to a clamped to the exp table's range
// [-103, 88]; w[1] = r = a - n, the argument of the Taylor polynomial.
void exp_parts(double a, double *w) {
  // nearbyint(a) clamped, without the libm call (a tenth of exp's time in
  // a profile): clamping first changes nothing (the bounds are integers and
  // rounding is monotone), in [-103, 88] adding and removing 1.5 x 2^52
  // rounds to an integer in the current mode as nearbyint does, and
  // copysign keeps its -0 for a in [-0.5, -0]. NaN stays NaN.
  constexpr double round_shift = 0x1.8p52;
  const double clamped = std::clamp(a, -103.0, 88.0);
  const double n = std::copysign((clamped + round_shift) - round_shift, clamped);
  w[0] = n;
  w[1] = a - n;
}

// ln a: w[0] = e, the exponent of a = m 2^e with m in [sqrt(1/2), sqrt(2))
// (0 when a is not a positive finite number).
void log_parts(double a, double *w) {
  int e = 0;
  if (a > 0 && std::isfinite(a)) {
    const double m = std::frexp(a, &e);
    if (m < inv_sqrt2) --e;
  }
  w[0] = e;
}

// erfc(z): w[0] = t = 1 / (1 + |z|/2), w[1], w[2] = exp_parts(-z^2).
void erf_parts(double z, double *w) {
  w[0] = 1 / (1 + std::fabs(z) / 2);
  exp_parts(-z * z, w + 1);
}

// sin, cos: w[0] = r = x - j period, j the nearest integer to x / period
// (period pi for sin and cos, pi/2 for tan and cot): the argument of the
// Taylor series after range reduction (NaN for infinite x).
void reduce(double x, double period, double *w) { w[0] = x - std::nearbyint(x / period) * period; }

// arcsin x, arccos x: w[0] = the argument of the series, x for |x| <= 1/2,
// sqrt((1 - |x|) / 2) above (NaN for |x| > 1).
void arcsin_parts(double x, double *w) {
  const double a = std::fabs(x);
  w[0] = a <= 0.5 ? x : std::sqrt((1 - a) / 2);
}

// x * s for s = sigmoid(..) in [0, 1], with the limit -0 / +0 when s is 0
// (x = -inf gives -0, not -inf * 0).
double times_fraction(double x, double s) { return s == 0 ? std::copysign(0.0, x) : x * s; }

double sigmoid(double a) { return 1 / (1 + std::exp(-a)); }

// ---- the functions ------------------------------------------------------------------------------
// Each op is f(x, p, w): x the source, p the scalar parameter, w the
// intermediates for the work buffers. Those of more than one expression
// are named here; with_op hands each to its caller as a lambda, so the
// element loop inlines it.

// x (1 + erf(x / sqrt2)) / 2 = x erfc(-x / sqrt2) / 2, without the
// cancellation of 1 + erf for negative x.
double gelu(double x, double *w) {
  const double z = x * inv_sqrt2;
  erf_parts(z, w);
  w[3] = z;
  return times_fraction(x, std::erfc(-z) / 2);
}

// x (1 + tanh(u)) / 2 with u = sqrt(2/pi) (x + 0.044715 x^3), i.e.
// x sigmoid(2u), without the cancellation of 1 + tanh.
double gelu_fast(double x, double *w) {
  const double u = sqrt_2_over_pi * (x + 0.044715 * x * x * x);
  exp_parts(-2 * u, w);
  return times_fraction(x, sigmoid(2 * u));
}

// x sigmoid(1.702 x).
double gelu_fast2(double x, double *w) {
  exp_parts(-1.702 * x, w);
  return times_fraction(x, sigmoid(1.702 * x));
}

// log(1 + e^t) / beta, t = beta x, as max(t, 0) + log1p(e^-|t|).
double softplus(double x, double beta, double *w) {
  const double t = beta * x;
  w[0] = std::exp(-std::fabs(t));
  w[1] = std::log1p(w[0]);
  return ((t > 0 ? t : 0) + w[1]) / beta;
}

double swish(double x, double beta, double *w) {
  exp_parts(-beta * x, w);
  return times_fraction(x, std::isinf(x) && beta == 0 ? 0.5 : sigmoid(beta * x));
}

// x tanh(log(1 + e^x)) = x n / (n + 2), n = e^x (e^x + 2); for x > 30 the
// factor is 1 within 1e-26.
double mish(double x, double *w) {
  exp_parts(x, w);
  if (x > 30) return x;
  const double e = std::exp(x), n = e * (e + 2);
  return times_fraction(x, n / (n + 2));
}

double pow_C(double x, double C, double *w) {
  w[0] = std::log(std::fabs(x));
  w[1] = C * w[0];
  return std::pow(x, C);
}

double selu(double x, double *w) {
  exp_parts(x, w);
  return selu_scale * (x > 0 ? x : selu_alpha * std::expm1(x));
}

// log(1 / (1 + e^-x)) = -(max(-x, 0) + log1p(e^-|x|)), without the
// cancellation of log(sigmoid) near 1.
double log_sigmoid(double x, double *w) {
  w[0] = std::exp(-std::fabs(x));
  w[1] = std::log1p(w[0]);
  return -((x < 0 ? -x : 0) + w[1]);
}

double arcsinh(double x, double *w) { return log_parts(std::fabs(x) + std::hypot(x, 1.0), w), std::asinh(x); }
double arccosh(double x, double *w) { return log_parts(x + std::sqrt((x - 1) * (x + 1)), w), std::acosh(x); }

template <typename F>
void with_op(Math op, F &&f) {
  switch (op) {
    case Math::exp:
    case Math::exp_for_neg_arg:
      return f([](double x, double, double *w) { return exp_parts(x, w), std::exp(x); });
    case Math::expm1:
      return f([](double x, double, double *w) { return exp_parts(x, w), std::expm1(x); });
    case Math::log:
      return f([](double x, double, double *w) { return log_parts(x, w), std::log(x); });
    case Math::log1p:
      return f([](double x, double, double *w) { return log_parts(1 + x, w), std::log1p(x); });
    case Math::logx:
      return f([](double x, double base, double *w) { return log_parts(x, w), std::log(x) / std::log(base); });
    case Math::sigmoid:
      return f([](double x, double, double *w) { return exp_parts(-x, w), sigmoid(x); });
    case Math::silu:
      return f([](double x, double, double *w) { return exp_parts(-x, w), times_fraction(x, sigmoid(x)); });
    case Math::tanh:
      return f([](double x, double, double *w) { return exp_parts(-2 * std::fabs(x), w), std::tanh(x); });
    case Math::erf:
      return f([](double x, double, double *w) { return erf_parts(x, w), std::erf(x); });
    case Math::erfc:
      return f([](double x, double, double *w) { return erf_parts(x, w), std::erfc(x); });
    case Math::gelu:
      return f([](double x, double, double *w) { return gelu(x, w); });
    case Math::gelu_fast:
      return f([](double x, double, double *w) { return gelu_fast(x, w); });
    case Math::gelu_fast2:
      return f([](double x, double, double *w) { return gelu_fast2(x, w); });
    case Math::softplus:
      return f([](double x, double beta, double *w) { return softplus(x, beta, w); });
    case Math::softsign:
      return f([](double x, double, double *) { return std::isinf(x) ? std::copysign(1.0, x) : x / (1 + std::fabs(x)); });
    case Math::elu:
      return f([](double x, double alpha, double *w) { return exp_parts(x, w), x > 0 ? x : alpha * std::expm1(x); });
    case Math::swish:
      return f([](double x, double beta, double *w) { return swish(x, beta, w); });
    case Math::mish:
      return f([](double x, double, double *w) { return mish(x, w); });
    case Math::sinh:
      return f([](double x, double, double *w) { return exp_parts(std::fabs(x), w), std::sinh(x); });
    case Math::cosh:
      return f([](double x, double, double *w) { return exp_parts(std::fabs(x), w), std::cosh(x); });
    case Math::pow_C:
      return f([](double x, double C, double *w) { return pow_C(x, C, w); });
    case Math::C_pow:
      return f([](double x, double C, double *w) { return exp_parts(x * std::log(std::fabs(C)), w), std::pow(C, x); });
    case Math::selu:
      return f([](double x, double, double *w) { return selu(x, w); });
    case Math::log_sigmoid:
      return f([](double x, double, double *w) { return log_sigmoid(x, w); });
    case Math::sin:
      return f([](double x, double, double *w) { return reduce(x, pi, w), std::sin(x); });
    case Math::cos:
      return f([](double x, double, double *w) { return reduce(x, pi, w), std::cos(x); });
    case Math::tan:
      return f([](double x, double, double *w) { return reduce(x, pi / 2, w), std::tan(x); });
    case Math::cot:
      // cos / sin: cot(+-0) = +-inf, as 1 / tan would give.
      return f([](double x, double, double *w) { return reduce(x, pi / 2, w), std::cos(x) / std::sin(x); });
    case Math::arcsin:
      return f([](double x, double, double *w) { return arcsin_parts(x, w), std::asin(x); });
    case Math::arccos:
      return f([](double x, double, double *w) { return arcsin_parts(x, w), std::acos(x); });
    case Math::arcsinh:
      return f([](double x, double, double *w) { return arcsinh(x, w); });
    case Math::arccosh:
      return f([](double x, double, double *w) { return arccosh(x, w); });
    case Math::arctanh:
      return f([](double x, double, double *w) { return log_parts((1 + x) / (1 - x), w), std::atanh(x); });
  }
}

// Cost class and factor: the number of table-based evaluations (exp, log,
// erf) and divisions each function's lowering needs, in units of one
// transcendental (the divide of sigmoid & co. counted as half).
struct Cost {
  BdcCost cost;
  double factor;
};
Cost cost_of(Math op) {
  switch (op) {
    case Math::exp: case Math::exp_for_neg_arg: case Math::expm1: case Math::log: case Math::log1p: case Math::elu: case Math::selu:
    case Math::sin: case Math::cos: case Math::arcsin: return {BdcCost::transcendental, 1};
    case Math::tan: case Math::cot: case Math::arccos: return {BdcCost::transcendental, 1.25};
    case Math::arcsinh: case Math::arccosh: case Math::arctanh: return {BdcCost::transcendental, 1.5};
    case Math::log_sigmoid: return {BdcCost::transcendental, 2};
    case Math::logx: case Math::C_pow: return {BdcCost::transcendental, 1.25};
    case Math::sigmoid: case Math::silu: case Math::tanh: case Math::gelu_fast: case Math::swish:
    case Math::sinh: case Math::cosh: case Math::gelu_fast2: return {BdcCost::transcendental, 1.5};
    case Math::erf: case Math::erfc: case Math::softplus: case Math::pow_C: return {BdcCost::transcendental, 2};
    case Math::gelu: return {BdcCost::transcendental, 2.5};
    case Math::mish: return {BdcCost::transcendental, 3};
    case Math::softsign: return {BdcCost::divide, 1.5};
  }
  return {BdcCost::transcendental, 1};
}

// Evaluates f over the gathered sources and writes dst and the work
// buffers; everything is read before anything is written.
template <typename F>
void evaluate(const Operands &ops, const std::vector<std::vector<float>> &in, F &&f) {
  const size_t count = in[0].size();
  std::vector<float> out(count);
  std::vector<std::vector<float>> work(ops.work.size(), std::vector<float>(count));
  for (size_t i = 0; i < count; ++i) {
    double w[4] = {0, 0, 0, 0};
    out[i] = float(f(in, i, w));
    for (size_t k = 0; k < work.size(); ++k) work[k][i] = float(w[k]);
  }
  scatter(ops.dst, out);
  for (size_t k = 0; k < work.size(); ++k) scatter(ops.work[k], work[k]);
}

// evaluate() for a dtype: results and intermediates rounded once into it;
// f(i, x, w) gives element i's result from x = in[i].
template <typename D, typename F>
void evaluate_as(const Operands &ops, const std::vector<float> &in, F &&f) {
  using Storage = typename D::Storage;
  const size_t count = in.size();
  if constexpr (is_half_dtype<D>) {
    // store<D>(y) is round_to_odd(y) narrowed to nearest-even: the
    // first step per element, the second for all of them at once.
    std::vector<float> out(count);
    std::vector<std::vector<float>> work(ops.work.size(), std::vector<float>(count));
    for (size_t i = 0; i < count; ++i) {
      double w[4] = {0, 0, 0, 0};
      out[i] = round_to_odd(f(i, double(in[i]), w));
      for (size_t k = 0; k < work.size(); ++k) work[k][i] = round_to_odd(w[k]);
    }
    scatter(ops.dst, narrow_all<D>(out));
    for (size_t k = 0; k < work.size(); ++k) scatter(ops.work[k], narrow_all<D>(work[k]));
    return;
  }
  const size_t buffers = ops.work.size();
  const auto out = uninitialised<Storage>(count);
  const auto work = uninitialised<Storage>(buffers * count);
  for (size_t i = 0; i < count; ++i) {
    double w[4] = {0, 0, 0, 0};
    out[i] = store<D>(f(i, double(in[i]), w));
    for (size_t k = 0; k < buffers; ++k) work[k * count + i] = store<D>(w[k]);
  }
  scatter(ops.dst, out.get());
  for (size_t k = 0; k < buffers; ++k) scatter(ops.work[k], work.get() + k * count);
}

}  // namespace

void fp_math(Context &ctx, const char *api, Math op, float param, data_type_t dtype, local_addr_t dst_addr,
             local_addr_t src_addr, std::initializer_list<WorkBuffer> work, std::initializer_list<FpTableBuffer> tables,
             const dim4 &shape) {
  require_generic_float(ctx.chip, "dtype", dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, nullptr, dtype);
  std::vector<TableCheck> checks;
  for (const FpTableBuffer &t : tables) {
    const FpTable found = find_fp_table(ctx, t.param, t.addr, t.func, dtype);
    checks.push_back({t.param, found.t, [&ctx, api, found, t, dtype] {
                        require_fp_table(ctx, api, found, t.param, t.func, dtype);
                      }});
  }
  const Operands ops = check_operands(ctx, dtype, dst_addr, work, checks, shape, {&src}, {"src"});
  const double p = param;
  with_float_dtype(dtype, [&]<typename D>(D) {
    const std::vector<float> in = gather<D>(src);
    if (op == Math::exp || op == Math::exp_for_neg_arg) {
      // Rounded into the dtype next, so the faster bulk exp serves (the
      // same bits as std::exp's after that rounding; see fast_exp.h).
      std::vector<double> e(in.size());
      numeric::exp_before_float_rounding_n(in.data(), e.data(), int64_t(in.size()));
      return evaluate_as<D>(ops, in, [&](size_t i, double x, double *w) { return exp_parts(x, w), e[i]; });
    }
    with_op(op, [&](auto f) {
      evaluate_as<D>(ops, in, [&](size_t, double x, double *w) { return f(x, p, w); });
    });
  });
  const Cost c = cost_of(op);
  book_math(ctx, api, c.cost, c.factor, ops);
}

void fp_sfu(Context &ctx, const char *api, Sfu op, local_addr_t dst_addr, local_addr_t src_addr, const dim4 &shape,
            const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype, int num_iter) {
  // rsqrt and sqrt are the SFU's RSQ; the SFU's RECIPROCAL exists on V9
  // chips only, so reciprocal is an AR divide here, with its rules.
  const bool divides = op == Sfu::reciprocal;
  require_float(divides ? Rule::AR_5 : Rule::SFU_7, "dtype", dtype);
  require_iterations(divides ? Rule::AR_6 : Rule::SFU_7, num_iter);
  const TensorRef dst = result(ctx, "dst", dst_addr, shape, dst_stride, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, dtype);
  require_same_npu(divides ? Rule::TIU_4 : Rule::SFU_1, dst, "dst", src, "src");
  with_float_dtype(dtype, [&]<typename D>(D) {
    const std::vector<float> in = gather<D>(src);
    std::vector<typename D::Storage> out(in.size());
    auto apply = [&](auto f) {
      for (size_t i = 0; i < in.size(); ++i) out[i] = store<D>(f(double(in[i])));
    };
    switch (op) {
      // sqrt in double is correctly rounded and 53 >= 2 x 24 + 2, so the
      // second rounding keeps it correctly rounded; likewise 1 / x.
      case Sfu::rsqrt: apply([](double x) { return 1 / std::sqrt(x); }); break;
      case Sfu::sqrt: apply([](double x) { return std::sqrt(x); }); break;
      case Sfu::reciprocal: apply([](double x) { return 1 / x; }); break;
    }
    scatter(dst, out);
  });
  book(ctx, api, BdcCost::sfu, dst, dtype, {&dst}, {&src},
       double(num_iter + 1) / double(default_sfu_iterations + 1));
}

void fp32_math(Context &ctx, const char *api, Math op, float param, local_addr_t dst_addr, local_addr_t src_addr,
               std::initializer_list<WorkBuffer> work, std::initializer_list<TableBuffer> tables,
               const dim4 &shape) {
  const TensorRef src = operand(ctx, "src", src_addr, shape, nullptr, DT_FP32);
  const Operands ops = check_operands(ctx, dst_addr, work, tables, shape, {&src}, {"src"});
  const double p = param;
  with_op(op, [&](auto f) {
    evaluate(ops, {gather<Fp32>(src)},
             [&](const std::vector<std::vector<float>> &in, size_t i, double *w) { return f(double(in[0][i]), p, w); });
  });
  const Cost c = cost_of(op);
  book_math(ctx, api, c.cost, c.factor, ops);
}

void fp32_compensate_reciprocal(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr,
                                std::initializer_list<WorkBuffer> work, const dim4 &shape, const dim4 *src_stride,
                                int num_iter, int num_comp) {
  require_iterations(Rule::AR_6, num_iter);
  if (num_comp < 0)
    fail(ErrorKind::illegal_command, "num_comp {} is negative; the number of compensation steps must be >= 0",
         num_comp);
  const TensorRef src = operand(ctx, "src", src_addr, shape, src_stride, DT_FP32);
  const Operands ops = check_operands(ctx, dst_addr, work, {}, shape, {&src}, {"src"});
  evaluate(ops, {gather<Fp32>(src)}, [](const std::vector<std::vector<float>> &in, size_t i, double *w) {
    const double x = in[0][i];
    // 1 / x in double, rounded once more to fp32: correctly rounded (53 >= 2 x 24 + 2).
    const float r = float(1 / x);
    w[0] = r;
    w[1] = std::fma(-x, double(r), 1.0);  // the residual, exact in double
    w[2] = double(r) * w[1];
    return double(r);
  });
  book_math(ctx, api, BdcCost::sfu, double(num_iter + 1) / double(default_sfu_iterations + 1) * (1 + num_comp), ops);
}

void fp32_pow(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr,
              std::initializer_list<WorkBuffer> work, std::initializer_list<TableBuffer> tables,
              const dim4 &shape) {
  const TensorRef src0 = operand(ctx, "src0", src0_addr, shape, nullptr, DT_FP32);
  const TensorRef src1 = operand(ctx, "src1", src1_addr, shape, nullptr, DT_FP32);
  const Operands ops = check_operands(ctx, dst_addr, work, tables, shape, {&src0, &src1}, {"src0", "src1"});
  evaluate(ops, {gather<Fp32>(src0), gather<Fp32>(src1)},
           [](const std::vector<std::vector<float>> &in, size_t i, double *w) {
             const double x = in[0][i], y = in[1][i];
             w[0] = std::log(std::fabs(x));
             w[1] = y * w[0];
             return std::pow(x, y);
           });
  book_math(ctx, api, BdcCost::transcendental, 2, ops);
}

}  // namespace cmodel::bdc
