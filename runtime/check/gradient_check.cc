// gradient_check.cc: a declared gradient op against central finite
// differences of the forward reference (gradient_check.h).
#include "tpu_runtime/gradient_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>

#include "tpu_runtime/error.h"
#include "tpu_runtime/op_tester.h"

namespace tpu_runtime {
namespace {

using Values = std::vector<std::vector<float>>;

constexpr double kFp32Roundoff = 0x1p-24;

std::int64_t element_count(const Shape &shape) {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

std::string coordinates_of(const Shape &shape, std::int64_t index) {
  std::vector<std::int64_t> coords(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    coords[i] = index % shape[i];
    index /= shape[i];
  }
  return fmt::format("[{}]", fmt::join(coords, ","));
}

std::vector<float> rounded_to(std::vector<float> values, Dtype dtype) {
  std::vector<std::uint8_t> stored(values.size() * dtype_size(dtype));
  encode_floats(dtype, values.data(), values.size(), stored.data());
  decode_floats(dtype, stored.data(), values.size(), values.data());
  return values;
}

// The forward op's reference (inference_<op>) on host values.
class Reference {
 public:
  Reference(const Plugin &plugin, std::string op, PackedParams params, std::vector<Shape> in, std::vector<Shape> out)
      : plugin_(plugin), op_(std::move(op)), params_(std::move(params)), in_(std::move(in)), out_(std::move(out)) {}
  Values operator()(const Values &inputs) const {
    std::vector<const float *> in;
    for (const auto &v : inputs) in.push_back(v.data());
    Values outputs;
    for (const Shape &s : out_) outputs.emplace_back(std::size_t(element_count(s)), std::nanf(""));
    std::vector<float *> out;
    for (auto &v : outputs) out.push_back(v.data());
    plugin_.inference(op_, params_, in_, in, out);
    return outputs;
  }

 private:
  const Plugin &plugin_;
  std::string op_;
  PackedParams params_;
  std::vector<Shape> in_, out_;
};

// The step of one element: h d_k rounded to a multiple of two ulps of the
// largest value the perturbation reaches, so that x +- delta and
// x +- delta / 2 are exact in fp32 and the spans are exactly symmetric.
double exact_step(float x, double wanted) {
  const double reach = std::fabs(double(x)) + 2 * std::fabs(wanted);
  if (reach == 0) return 0;
  int exponent = 0;
  std::frexp(reach, &exponent);
  const double quantum = std::ldexp(1.0, exponent - 24 + 1);  // 2 ulps of fp32 at `reach`
  return std::nearbyint(wanted / quantum) * quantum;
}

// One input's direction: delta per element (exact steps, see above).
struct Direction {
  int input = 0;
  std::vector<double> delta;
};

Direction make_direction(const std::vector<float> &x, int input, double step, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  double rms = 0;
  for (float v : x) rms += double(v) * double(v);
  rms = x.empty() ? 0 : std::sqrt(rms / double(x.size()));
  const double h = step * std::max(1.0, rms);
  Direction d{input, std::vector<double>(x.size())};
  for (std::size_t k = 0; k < x.size(); ++k) d.delta[k] = exact_step(x[k], h * normal(rng));
  return d;
}

// The forward reference at x moved by `scale` * delta on [begin, end) of one input.
Values moved(const Reference &f, const Values &x, const Direction &d, std::size_t begin, std::size_t end,
             double scale) {
  Values in = x;
  auto &xi = in[std::size_t(d.input)];
  for (std::size_t k = begin; k < end; ++k) xi[k] = float(double(xi[k]) + scale * d.delta[k]);
  return f(in);
}

// The four evaluations of a block, and which outputs are not smooth there.
struct BlockEvaluation {
  Values plus, minus, half_plus, half_minus;
  std::vector<std::vector<bool>> kink;  // per output element
};

BlockEvaluation evaluate_block(const Reference &f, const Values &x, const Values &f0, const Direction &d,
                               std::size_t begin, std::size_t end, double tau) {
  BlockEvaluation e{moved(f, x, d, begin, end, 1), moved(f, x, d, begin, end, -1), moved(f, x, d, begin, end, 0.5),
                    moved(f, x, d, begin, end, -0.5), {}};
  const double kappa = tau / 8;
  for (std::size_t o = 0; o < f0.size(); ++o) {
    e.kink.emplace_back(f0[o].size(), false);
    for (std::size_t j = 0; j < f0[o].size(); ++j) {
      const double p = e.plus[o][j], m = e.minus[o][j], hp = e.half_plus[o][j], hm = e.half_minus[o][j];
      const double c = f0[o][j];
      const double noise = 16 * kFp32Roundoff * (std::fabs(p) + std::fabs(m) + std::fabs(hp) + std::fabs(hm) + 2 * std::fabs(c));
      const double d1 = p - m, d2 = hp - hm;
      const double slopes = std::fabs(d1 - 2 * d2), curvature = std::fabs((p + m - 2 * c) - 4 * (hp + hm - 2 * c));
      const double bound = kappa * (std::fabs(d1) + 2 * std::fabs(d2)) + noise;
      // A NaN (the reference failing) counts as a kink too: nothing to compare.
      e.kink[o][j] = !(slopes <= bound) || !(curvature <= bound);
    }
  }
  return e;
}

struct BlockTest {
  bool conclusive = true;
  double lhs = 0, rhs = 0, ratio = 0;
};

// lhs = v . (f(x+) - f(x-)), rhs = g . (x+ - x-) over the block.
BlockTest test_block(const Reference &f, const Values &x, const Values &f0, const Values &v,
                     const std::vector<float> &g, const Direction &d, std::size_t begin, std::size_t end, double tau) {
  const BlockEvaluation e = evaluate_block(f, x, f0, d, begin, end, tau);
  BlockTest t;
  double lhs_scale = 0, rhs_scale = 0;
  for (std::size_t o = 0; o < v.size(); ++o)
    for (std::size_t j = 0; j < v[o].size(); ++j) {
      if (v[o][j] == 0) continue;
      if (e.kink[o][j]) t.conclusive = false;
      const double term = double(v[o][j]) * (double(e.plus[o][j]) - double(e.minus[o][j]));
      t.lhs += term;
      lhs_scale += std::fabs(term);
    }
  for (std::size_t k = begin; k < end; ++k) {
    const double term = double(g[k]) * 2 * d.delta[k];
    t.rhs += term;
    rhs_scale += std::fabs(term);
  }
  const double scale = std::max(lhs_scale, rhs_scale);
  t.ratio = scale > 0 ? std::fabs(t.lhs - t.rhs) / scale : 0;
  if (!std::isfinite(t.ratio)) t.ratio = std::numeric_limits<double>::infinity();
  return t;
}

// Zeroes v where the forward reference has a kink along any direction.
std::size_t mask_kinks(const Reference &f, const Values &x, const Values &f0, const std::vector<Direction> &dirs,
                       double tau, Values &v) {
  std::size_t masked = 0;
  for (const Direction &d : dirs) {
    const BlockEvaluation e = evaluate_block(f, x, f0, d, 0, d.delta.size(), tau);
    for (std::size_t o = 0; o < v.size(); ++o)
      for (std::size_t j = 0; j < v[o].size(); ++j)
        if (e.kink[o][j] && v[o][j] != 0) {
          v[o][j] = 0;
          ++masked;
        }
  }
  return masked;
}

// The whole input, then the worse half, down to one element; updates the
// input's worst block.
void descend(const Reference &f, const Values &x, const Values &f0, const Values &v, const std::vector<float> &g,
             const Direction &d, double tau, const Shape &shape, GradInputResult &r) {
  std::size_t begin = 0, end = d.delta.size();
  const auto record = [&](const BlockTest &t, std::size_t b, std::size_t e) {
    ++r.blocks_checked;
    if (!t.conclusive) {
      ++r.blocks_inconclusive;
      return;
    }
    if (t.ratio > tau) r.passed = false;
    if (t.ratio >= r.worst_ratio) {
      r.worst_ratio = t.ratio;
      r.block_begin = std::int64_t(b);
      r.block_end = std::int64_t(e);
    }
    if (e - b != 1 || t.ratio < r.element_ratio) return;
    r.element_ratio = t.ratio;
    r.element = std::int64_t(b);
    r.coordinates = coordinates_of(shape, r.element);
    r.gradient = g[b];
    r.finite_difference = d.delta[b] != 0 ? t.lhs / (2 * d.delta[b]) : 0;
  };
  record(test_block(f, x, f0, v, g, d, begin, end, tau), begin, end);
  while (end - begin > 1) {
    const std::size_t middle = begin + (end - begin) / 2;
    const BlockTest low = test_block(f, x, f0, v, g, d, begin, middle, tau);
    const BlockTest high = test_block(f, x, f0, v, g, d, middle, end, tau);
    record(low, begin, middle);
    record(high, middle, end);
    const double low_ratio = low.conclusive ? low.ratio : -1, high_ratio = high.conclusive ? high.ratio : -1;
    if (low_ratio >= high_ratio) end = middle;
    else begin = middle;
  }
}

}  // namespace

double gradient_step_for(Dtype dtype) {
  return dtype == Dtype::bf16 ? 0x1p-5 : 0x1p-6;
}

double gradient_tolerance_for(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp16: return 0x1p-8;
    case Dtype::bf16: return 0x1p-5;
    default: return 0x1p-10;
  }
}

namespace {

// What the checks share: the libraries, the declaration, the packed parameters.
struct Setup {
  LibraryPaths paths;
  GradientDeclaration declaration;
  std::vector<int> differentiable;
  nlohmann::ordered_json params;
};

Setup prepare(const std::string &op, const std::string &params_json, const std::string &chip,
              const std::optional<LibraryPaths> &paths, int num_inputs) {
  Setup s;
  s.paths = paths ? *paths : default_library_paths(chip);
  const Backend backend = Backend::open(s.paths.backend);
  const std::optional<GradientDeclaration> g = backend.gradient_of(op);
  if (!g)
    throw Error(fmt::format("op '{}' declares no gradient: {} has no register_custom_grad({} <grad_op>) (ops with "
                            "one: {})",
                            op, backend.path(), op, [&] {
                              std::vector<std::string> names;
                              for (const GradientDeclaration &d : backend.gradients()) names.push_back(d.op);
                              return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
                            }()));
  s.declaration = *g;
  s.differentiable = differentiable_inputs(s.declaration, num_inputs);
  try {
    s.params = params_json.find_first_not_of(" \t\r\n") == std::string::npos ? nlohmann::ordered_json::object()
                                                                               : nlohmann::ordered_json::parse(params_json);
  } catch (const nlohmann::json::exception &e) {
    throw Error(fmt::format("GradientChecker({}): params are not JSON: {}", op, e.what()));
  }
  if (!s.params.is_object()) throw Error(fmt::format("GradientChecker({}): params must be a JSON object", op));
  return s;
}

// The gradient op's inputs in the declared order: output gradients, forward
// inputs, forward outputs.
OpTester gradient_tester(const GradientDeclaration &g, const Values &v, const std::vector<Shape> &out_shapes,
                         const Values &x, const std::vector<Shape> &in_shapes, const Values &y) {
  OpTester t;
  Values values = v;
  for (const Shape &s : out_shapes) t.input_shape(s);
  if (g.receives_inputs) {
    for (const Shape &s : in_shapes) t.input_shape(s);
    values.insert(values.end(), x.begin(), x.end());
  }
  if (g.receives_outputs) {
    for (const Shape &s : out_shapes) t.input_shape(s);
    values.insert(values.end(), y.begin(), y.end());
  }
  t.op(g.grad_op).input_values(std::move(values)).global_only().keep_outputs();
  return t;
}

// g for each differentiable input (in that order), from one run (together)
// or one run per input (separate); the runs' verdicts against the gradient
// op's own reference go to the report.
Values run_gradient_op(const Setup &s, const OpTester &base, Dtype dtype,
                       const std::vector<Shape> &in_shapes, GradReport &report, Values *fp32_values) {
  Values g;
  report.grad_op_passed = true;
  const auto run_one = [&](OpTester t, const nlohmann::ordered_json &params, int outputs) {
    t.params(params.dump()).num_outputs(outputs).dtype(dtype);
    const OpReport r = t.run();
    report.grad_op_passed = report.grad_op_passed && r.passed;
    report.grad_op_summary += r.summary();
    for (std::size_t o = 0; o < r.output_shapes.size(); ++o) {
      const Shape &want = in_shapes[std::size_t(s.differentiable[g.size()])];
      if (r.output_shapes[o] != want)
        throw Error(fmt::format("gradient op '{}' gives output {} the shape [{}], but forward input {} is [{}]",
                                s.declaration.grad_op, o, fmt::join(r.output_shapes[o], ","),
                                s.differentiable[g.size()], fmt::join(want, ",")));
      g.push_back(r.cases.at(0).values.at(o));
    }
    if (fp32_values && dtype != Dtype::fp32) {
      t.dtype(Dtype::fp32).input_values(r.inputs).backend_only();
      OpReport wide = t.run();
      for (auto &values : wide.cases.at(0).values) fp32_values->push_back(std::move(values));
    }
  };
  if (!s.declaration.separate) {
    run_one(base, s.params, int(s.differentiable.size()));
    return g;
  }
  for (int i : s.differentiable) {
    nlohmann::ordered_json params = s.params;
    params["input_grad_index"] = i;
    run_one(base, params, 1);
  }
  return g;
}

}  // namespace

GradReport GradientChecker::run() const {
  if (op_.empty()) throw Error("GradientChecker: no op name given");
  if (shapes_.empty()) throw Error(fmt::format("GradientChecker({}): no input shape given", op_));
  if (rounds_ < 1) throw Error(fmt::format("GradientChecker({}): rounds must be at least 1", op_));
  const Setup s = prepare(op_, params_, chip_, paths_, int(shapes_.size()));
  GradReport report;
  report.op = op_;
  report.chip = chip_;
  report.declaration = s.declaration;
  report.dtype = dtype_;
  report.input_shapes = shapes_;
  report.seed = seed_;
  report.rounds = rounds_;
  report.step = gradient_step_for(dtype_);
  report.tolerance = gradient_tolerance_for(dtype_);

  // 1. The forward op on the emulator: x (as the op saw them) and y.
  OpTester forward;
  forward.op(op_).chip(chip_).dtype(dtype_).params(params_).seed(seed_).libraries(s.paths).num_outputs(num_outputs_);
  forward.input_range(low_, high_).global_only().keep_outputs();
  for (const Shape &shape : shapes_) forward.input_shape(shape);
  const OpReport f = forward.run();
  report.forward_passed = f.passed;
  report.forward_summary = f.summary();
  const Values &x = f.inputs, &f0 = f.reference, &y = f.cases.at(0).values;

  // 2. v, the directions; 3. v zeroed at kinks.
  const Plugin plugin = Plugin::open(s.paths.plugin);
  std::vector<std::string> warnings;
  const Reference reference(plugin, op_, plugin.pack_params(op_, s.params, warnings), shapes_, f.output_shapes);
  std::mt19937_64 rng(seed_ ^ 0x9e3779b97f4a7c15ull);
  std::uniform_real_distribution<float> uniform(-1, 1);
  Values v;
  for (const auto &out : f0) {
    std::vector<float> values(out.size());
    for (float &e : values) e = uniform(rng);
    v.push_back(rounded_to(std::move(values), dtype_));
    report.outputs += out.size();
  }
  std::vector<Direction> dirs;
  for (int round = 0; round < rounds_; ++round)
    for (int i : s.differentiable)
      dirs.push_back(make_direction(x[std::size_t(i)], i, report.step, seed_ * 1000003u + std::uint64_t(round * 64 + i)));
  report.masked_outputs = mask_kinks(reference, x, f0, dirs, report.tolerance, v);

  // 4. The gradient op on the emulator.
  OpTester base = gradient_tester(s.declaration, v, f.output_shapes, x, shapes_, y);
  base.chip(chip_).seed(seed_).libraries(s.paths);
  Values g32;
  const bool triage = triage_ && dtype_ != Dtype::fp32;
  const Values g = run_gradient_op(s, base, dtype_, shapes_, report, triage ? &g32 : nullptr);
  if (triage) report.triage = triage_outputs(dtype_, g, g32);

  // 5. The descent, per input and direction.
  for (std::size_t k = 0; k < s.differentiable.size(); ++k) {
    GradInputResult r;
    r.input = s.differentiable[k];
    for (const Direction &d : dirs)
      if (d.input == r.input) descend(reference, x, f0, v, g[k], d, report.tolerance, shapes_[std::size_t(r.input)], r);
    report.inputs.push_back(r);
  }
  report.passed = report.forward_passed && report.grad_op_passed;
  if (!report.forward_passed) report.failure = "the forward op fails its own check (see its summary)";
  else if (!report.grad_op_passed) report.failure = "the gradient op fails against its own reference (see its summary)";
  for (const GradInputResult &r : report.inputs) {
    if (r.passed) continue;
    if (report.passed)
      report.failure = fmt::format("input {}: the gradient disagrees with the finite differences", r.input);
    report.passed = false;
  }
  if (report.outputs > 0 && report.masked_outputs == report.outputs) {
    report.passed = false;
    report.failure = "every output element is at a kink of the forward reference: nothing could be compared";
  }
  return report;
}

std::string GradReport::summary() const {
  std::string text = fmt::format("{} -> {} on {} {}", op, declaration.grad_op, chip, dtype_name(dtype));
  for (const Shape &shape : input_shapes) text += fmt::format(" [{}]", fmt::join(shape, ","));
  text += fmt::format(" seed {}: {}\n", seed, passed ? "PASS" : "FAIL");
  text += fmt::format("  step h = {} x max(1, rms of the input), tolerance tau = {} (relative), {} round(s), "
                      "{} of {} output elements masked at kinks\n",
                      step, tolerance, rounds, masked_outputs, outputs);
  text += fmt::format("  forward vs its reference: {}; gradient op vs its reference: {}\n",
                      forward_passed ? "pass" : "FAIL", grad_op_passed ? "pass" : "FAIL");
  for (const GradInputResult &r : inputs) {
    text += fmt::format("  input {}: {}  worst |lhs - rhs| / scale = {:.3g} on elements [{}, {})", r.input,
                        r.passed ? "pass" : "FAIL", r.worst_ratio, r.block_begin, r.block_end);
    if (r.element >= 0)
      text += fmt::format("; worst element {} {} (relative error {:.3g}): gradient op {:.9g}, finite differences "
                          "{:.9g}",
                          r.element, r.coordinates, r.element_ratio, r.gradient, r.finite_difference);
    text += fmt::format(" ({} blocks, {} skipped at kinks)\n", r.blocks_checked, r.blocks_inconclusive);
  }
  if (triage) text += fmt::format("  triage: {}\n", triage->text());
  if (!passed) text += fmt::format("  {} (seed {})\n", failure, seed);
  if (!forward_passed) text += forward_summary;
  if (!grad_op_passed) text += grad_op_summary;
  return text;
}

}  // namespace tpu_runtime
