// builtin_ops_test: the built-in ops of model nets (builtin.add, sub, mul,
// relu, concat; runtime/builtin/builtin_ops.h) built into models, recorded,
// replayed on both chips and compared with references written plainly here:
// each element computed in double and rounded once to the dtype, so fp32,
// fp16 and bf16 results must match bit for bit. Also the builder's own
// reference (what compile() in the Python front end compares against) and
// every refusal.
//
// The sample ops' libraries come from TPU_SAMPLE_OPS_LIB_DIR (a compile
// definition set by tests/runtime/model/fixtures/CMakeLists.txt, or the
// environment); the test is skipped without them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/sample_ops.h"
#include "support/test_support.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/npz.h"

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::ordered_json;

// ---- the reference's arithmetic ------------------------------------------------

struct Format {
  const char *name;  // SDK dtype name
  int significand;   // bits, the leading one included
  int min_exponent;  // of the smallest normal number
};
constexpr Format kFp32{"fp32", 24, -126}, kFp16{"fp16", 11, -14}, kBf16{"bf16", 8, -126};

// `x` rounded once to the nearest value of `f` (ties to even, the default
// rounding mode of nearbyint), subnormals included; the values here stay
// far from overflow.
double round_to(const Format &f, double x) {
  if (x == 0 || std::isnan(x)) return x;
  const int e = std::max(std::ilogb(x), f.min_exponent);
  const int shift = f.significand - 1 - e;
  return std::ldexp(std::nearbyint(std::ldexp(x, shift)), -shift);
}

// Storage of a value of `f` (exactly representable) as the model's arrays hold it.
uint32_t storage_bits(const Format &f, double v) {
  const float x = float(v);
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if (f.significand == 24) return bits;
  if (f.significand == 8) return bits >> 16;
  // fp16 from a float that is exactly an fp16 value.
  const uint32_t sign = (bits >> 16) & 0x8000;
  const double a = std::fabs(v);
  if (a == 0) return sign;
  const int e = std::ilogb(a);
  if (e < -14) return sign | uint32_t(std::ldexp(a, 24));  // subnormal: units of 2^-24
  const uint32_t frac = uint32_t(std::ldexp(a, 10 - e)) & 0x3ff;
  return sign | uint32_t(e + 15) << 10 | frac;
}

double value_of(const Format &f, uint32_t bits) {
  if (f.significand == 24 || f.significand == 8) {
    const uint32_t b = f.significand == 8 ? bits << 16 : bits;
    float x;
    std::memcpy(&x, &b, 4);
    return x;
  }
  const double sign = (bits & 0x8000) ? -1 : 1;
  const int e = int(bits >> 10 & 0x1f);
  const double frac = bits & 0x3ff;
  return sign * (e == 0 ? std::ldexp(frac, -24) : std::ldexp(1024 + frac, e - 25));
}

tr::npz::Array to_array(const Format &f, const std::vector<int> &shape, const std::vector<double> &values) {
  tr::npz::Array a;
  a.dtype = f.significand == 24 ? "<f4" : f.significand == 11 ? "<f2" : "<u2";
  for (int d : shape) a.shape.push_back(d);
  const std::size_t size = f.significand == 24 ? 4 : 2;
  a.data.resize(values.size() * size);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const uint32_t bits = storage_bits(f, values[i]);
    std::memcpy(a.data.data() + i * size, &bits, size);
  }
  return a;
}

std::vector<double> from_array(const Format &f, const tr::npz::Array &a) {
  const std::size_t size = f.significand == 24 ? 4 : 2;
  std::vector<double> out(a.data.size() / size);
  for (std::size_t i = 0; i < out.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, a.data.data() + i * size, size);
    out[i] = value_of(f, bits);
  }
  return out;
}

std::vector<double> random_values(test::Seeded &s, const Format &f, std::size_t count) {
  std::uniform_real_distribution<double> u(-4, 4);
  std::vector<double> v(count);
  for (double &x : v) x = round_to(f, u(s.rng()));
  return v;
}

std::size_t count_of(const std::vector<int> &shape) {
  std::size_t n = 1;
  for (int d : shape) n *= std::size_t(d);
  return n;
}

// The element of an operand of shape `in` (right-aligned, numpy broadcasting)
// that output element `flat` of shape `out` reads.
std::size_t source_index(const std::vector<int> &out, const std::vector<int> &in, std::size_t flat) {
  std::vector<std::size_t> index(out.size());
  for (std::size_t d = out.size(); d-- > 0;) {
    index[d] = flat % std::size_t(out[d]);
    flat /= std::size_t(out[d]);
  }
  std::size_t src = 0;
  const std::size_t offset = out.size() - in.size();
  for (std::size_t d = 0; d < in.size(); ++d) src = src * std::size_t(in[d]) + (in[d] == 1 ? 0 : index[offset + d]);
  return src;
}

// ---- building and running ---------------------------------------------------

struct Input {
  std::string name;
  std::vector<int> shape;
  std::vector<double> values;
};

struct Outcome {
  std::vector<double> run;        // the model run's output
  std::vector<double> reference;  // the builder's reference, rounded to the dtype
  std::vector<int> shape;
};

// One layer `op` over `inputs`, built for `chip`, run on its own inputs.
Outcome build_and_run(const std::string &chip, const Format &f, const std::string &op, const Json &params,
                      const std::vector<Input> &inputs) {
  Json net = {{"name", "builtin"}, {"inputs", Json::array()}, {"layers", Json::array()}, {"outputs", {"y"}}};
  Json layer = {{"op", op}, {"params", params}, {"inputs", Json::array()}, {"outputs", {"y"}}};
  tr::BuildOptions o;
  o.chip = chip;
  o.libraries = test::sample_ops_libraries(chip);
  o.reference = true;
  for (const Input &in : inputs) {
    net["inputs"].push_back({{"name", in.name}, {"shape", in.shape}, {"dtype", f.name}});
    layer["inputs"].push_back(in.name);
    o.reference_inputs[in.name] = to_array(f, in.shape, in.values);
  }
  net["layers"].push_back(layer);
  const tr::BuildResult built = tr::build_model(tr::parse_net(net, "builtin.json"), o, "builtin.json");
  const tr::RunResult ran = tr::run_model(built.model, o.reference_inputs, "builtin model");
  Outcome out;
  out.run = from_array(f, ran.outputs.at("y"));
  for (float v : built.reference_outputs.at("y").values<float>()) out.reference.push_back(round_to(f, v));
  for (int64_t d : ran.outputs.at("y").shape) out.shape.push_back(int(d));
  return out;
}

// Bitwise equal (NaN equal to NaN, -0 apart from +0).
void expect_same(const std::vector<double> &got, const std::vector<double> &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int shown = 0;
  for (std::size_t i = 0; i < got.size() && shown < 5; ++i) {
    const bool same = (std::isnan(got[i]) && std::isnan(want[i])) ||
                      (got[i] == want[i] && std::signbit(got[i]) == std::signbit(want[i]));
    if (!same) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", expected " << want[i];
      ++shown;
    }
  }
}

const Format *const kFormats[] = {&kFp32, &kFp16, &kBf16};
const char *const kChips[] = {"bm1684x", "bm1688"};

double apply(const std::string &op, double x, double y) {
  if (op == "builtin.add") return x + y;
  if (op == "builtin.sub") return x - y;
  return x * y;
}

// A random shape of 1..5 dims, and a second one that broadcasts against it
// (each dim kept, set to 1, or dropped from the left).
std::pair<std::vector<int>, std::vector<int>> broadcast_pair(test::Seeded &s) {
  std::vector<int> a(std::size_t(s.uniform(1, 5)));
  for (int &d : a) d = s.uniform(1, 9);
  if (s.uniform(0, 3) == 0) a.back() = s.uniform(60, 200);  // long rows
  std::vector<int> b(a.begin() + s.uniform(0, int(a.size()) - 1), a.end());
  for (int &d : b)
    if (s.uniform(0, 2) == 0) d = 1;
  if (s.uniform(0, 1)) std::swap(a, b);
  return {a, b};
}

std::vector<int> broadcast(const std::vector<int> &a, const std::vector<int> &b) {
  std::vector<int> out(std::max(a.size(), b.size()), 1);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::size_t ra = out.size() - a.size(), rb = out.size() - b.size();
    out[i] = std::max(i >= ra ? a[i - ra] : 1, i >= rb ? b[i - rb] : 1);
  }
  return out;
}

// a op b of two tensor inputs, element by element, rounded once to `f`.
std::vector<double> binary_expected(const std::string &op, const Format &f, const std::vector<Input> &in) {
  const std::vector<int> out_shape = broadcast(in[0].shape, in[1].shape);
  std::vector<double> want(count_of(out_shape));
  for (std::size_t i = 0; i < want.size(); ++i)
    want[i] = round_to(f, apply(op, in[0].values[source_index(out_shape, in[0].shape, i)],
                                in[1].values[source_index(out_shape, in[1].shape, i)]));
  return want;
}

// Both the model run and the builder's reference equal `want`.
void expect_outcome(const Outcome &got, const std::vector<double> &want) {
  expect_same(got.run, want, "model run");
  expect_same(got.reference, want, "builder's reference");
}

// ---- tests ------------------------------------------------------------------

TEST(BuiltinOps, BinaryOpsBroadcastBitExact) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  for (int round = 0; round < 18; ++round) {
    const Format &f = *kFormats[round % 3];
    const std::string chip = kChips[round / 3 % 2];
    const std::string op = std::vector<std::string>{"builtin.add", "builtin.sub", "builtin.mul"}[round / 6];
    const auto [sa, sb] = broadcast_pair(s);
    const std::vector<Input> in = {{"a", sa, random_values(s, f, count_of(sa))},
                                   {"b", sb, random_values(s, f, count_of(sb))}};
    SCOPED_TRACE(op + " " + f.name + " " + chip);
    const Outcome got = build_and_run(chip, f, op, Json::object(), in);
    ASSERT_EQ(got.shape, broadcast(sa, sb));
    expect_outcome(got, binary_expected(op, f, in));
  }
}

TEST(BuiltinOps, ScalarOperandOnEitherSide) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  for (const Format *f : kFormats)
    for (const char *chip : kChips)
      for (const std::string op : {"builtin.add", "builtin.sub", "builtin.mul"})
        for (const bool first : {false, true}) {
          const std::vector<int> shape = {2, 3, s.uniform(1, 9), s.uniform(1, 70)};
          const double c = 1.3;  // not an fp16/bf16 value: the kernel rounds it first
          const std::vector<Input> in = {{"x", shape, random_values(s, *f, count_of(shape))}};
          SCOPED_TRACE(op + " " + f->name + " " + chip + (first ? " scalar first" : ""));
          const Outcome got = build_and_run(chip, *f, op, Json{{"scalar", c}, {"scalar_first", int(first)}}, in);
          const double cr = round_to(*f, round_to(kFp32, c));
          std::vector<double> want;
          for (double x : in[0].values) want.push_back(round_to(*f, first ? apply(op, cr, x) : apply(op, x, cr)));
          expect_outcome(got, want);
        }
}

TEST(BuiltinOps, Relu) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  for (const Format *f : kFormats)
    for (const char *chip : kChips) {
      const std::vector<int> shape = {3, s.uniform(1, 70), s.uniform(1, 40)};
      const std::vector<Input> in = {{"x", shape, random_values(s, *f, count_of(shape))}};
      SCOPED_TRACE(std::string(f->name) + " " + chip);
      const Outcome got = build_and_run(chip, *f, "builtin.relu", Json::object(), in);
      std::vector<double> want;
      for (double x : in[0].values) want.push_back(x > 0 ? x : 0.0);
      expect_outcome(got, want);
    }
}

TEST(BuiltinOps, ConcatAlongEveryAxis) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  for (int round = 0; round < 12; ++round) {
    const Format &f = *kFormats[round % 3];
    const std::string chip = kChips[round % 2];
    const std::vector<int> base = {s.uniform(1, 4), s.uniform(1, 70), s.uniform(1, 5), s.uniform(1, 30)};
    const int axis = s.uniform(-4, 3);
    const int real_axis = axis < 0 ? axis + 4 : axis;
    std::vector<Input> in;
    for (int i = 0, n = s.uniform(1, 4); i < n; ++i) {
      std::vector<int> shape = base;
      shape[std::size_t(real_axis)] = s.uniform(1, 9);
      in.push_back({"x" + std::to_string(i), shape, random_values(s, f, count_of(shape))});
    }
    SCOPED_TRACE(std::string(f.name) + " " + chip + " axis " + std::to_string(axis));
    const Outcome got = build_and_run(chip, f, "builtin.concat", Json{{"axis", axis}}, in);
    // Output element (outer, position along the axis, inner) from the input
    // that position falls in.
    std::vector<int> out_shape = base;
    out_shape[std::size_t(real_axis)] = 0;
    for (const Input &i : in) out_shape[std::size_t(real_axis)] += i.shape[std::size_t(real_axis)];
    ASSERT_EQ(got.shape, out_shape);
    std::size_t inner = 1;
    for (std::size_t d = std::size_t(real_axis) + 1; d < 4; ++d) inner *= std::size_t(base[d]);
    const std::size_t total = std::size_t(out_shape[std::size_t(real_axis)]);
    std::vector<double> want(count_of(out_shape));
    for (std::size_t e = 0; e < want.size(); ++e) {
      const std::size_t outer = e / (total * inner), pos = e / inner % total, rest = e % inner;
      std::size_t k = 0, start = 0;
      while (pos >= start + std::size_t(in[k].shape[std::size_t(real_axis)])) start += std::size_t(in[k++].shape[std::size_t(real_axis)]);
      const std::size_t mid = std::size_t(in[k].shape[std::size_t(real_axis)]);
      want[e] = in[k].values[(outer * mid + (pos - start)) * inner + rest];
    }
    expect_outcome(got, want);
  }
}

// Shapes past the engines' 65535 limit per dim and past one tile of local
// memory: the kernels cut them into pieces.
TEST(BuiltinOps, LargeShapesAreTiled) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  const std::vector<int> long_row = {1, 70001};
  const std::vector<int> wide = {3, 130, 41, 50};
  for (const auto &[sa, sb] : {std::pair{long_row, std::vector<int>{1}}, std::pair{wide, std::vector<int>{130, 1, 50}}}) {
    const std::vector<Input> in = {{"a", sa, random_values(s, kFp32, count_of(sa))},
                                   {"b", sb, random_values(s, kFp32, count_of(sb))}};
    expect_outcome(build_and_run("bm1684x", kFp32, "builtin.add", Json::object(), in),
                   binary_expected("builtin.add", kFp32, in));
  }
  const std::vector<Input> in = {{"a", long_row, random_values(s, kFp32, count_of(long_row))},
                                 {"b", long_row, random_values(s, kFp32, count_of(long_row))}};
  const Outcome got = build_and_run("bm1688", kFp32, "builtin.concat", Json{{"axis", 0}}, in);
  std::vector<double> want = in[0].values;
  want.insert(want.end(), in[1].values.begin(), in[1].values.end());
  expect_same(got.run, want, "concat");
}

// Broadcasting that alternates between the operands on every dim: eight
// groups of dims, four more than the engines' n, c, h, w.
TEST(BuiltinOps, BroadcastOverEightAlternatingDims) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  const std::vector<int> sa = {2, 1, 3, 1, 2, 1, 3, 1}, sb = {1, 2, 1, 3, 1, 2, 1, 5};
  for (const Format *f : kFormats) {
    const std::vector<Input> in = {{"a", sa, random_values(s, *f, count_of(sa))},
                                   {"b", sb, random_values(s, *f, count_of(sb))}};
    expect_outcome(build_and_run("bm1688", *f, "builtin.sub", Json::object(), in),
                   binary_expected("builtin.sub", *f, in));
  }
}

// A net mixing a custom op with built-ins, one tensor read twice.
TEST(BuiltinOps, MixedWithCustomOps) {
  REQUIRE_SAMPLE_OPS();
  const char *text = R"({
    "inputs": [{"name": "x", "shape": [2, 3, 5, 7], "dtype": "fp32"}],
    "layers": [
      {"op": "absadd", "params": {"b": 0.5}, "inputs": ["x"], "outputs": ["a"]},
      {"op": "builtin.mul", "inputs": ["a", "a"], "outputs": ["sq"]},
      {"op": "builtin.sub", "inputs": ["sq", "x"], "outputs": ["y"]}
    ],
    "outputs": ["y"]})";
  for (const char *chip : kChips) {
    tr::BuildOptions o;
    o.chip = chip;
    o.libraries = test::sample_ops_libraries(chip);
    o.reference = true;
    const tr::BuildResult built = tr::build_model(tr::parse_net(Json::parse(text), "mixed.json"), o, "mixed.json");
    EXPECT_EQ(built.description.layers[1].name, "mul_1");
    const tr::RunResult ran = tr::run_model(built.model, built.reference_inputs, "mixed");
    const auto x = built.reference_inputs.at("x").values<float>();
    const auto y = ran.outputs.at("y").values<float>();
    ASSERT_EQ(x.size(), y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float a = std::fabs(x[i]) + 0.5f;
      EXPECT_EQ(y[i], a * a - x[i]) << chip << " element " << i;
    }
  }
}

// A net of built-in layers only needs no custom-layer library: it builds
// with no library path (TPUC_ROOT unset), carries no kernel module and runs.
// A custom layer still needs its libraries, and says so.
TEST(BuiltinOps, BuiltinOnlyNetsNeedNoCustomLibraries) {
  const char *text = R"({
    "inputs": [{"name": "x", "shape": [2, 3, 5, 7], "dtype": "fp32"}],
    "layers": [
      {"op": "builtin.mul", "inputs": ["x", "x"], "outputs": ["sq"]},
      {"op": "builtin.sub", "inputs": ["sq", "x"], "outputs": ["y"]}
    ],
    "outputs": ["y"]})";
  for (const char *chip : kChips) {
    tr::BuildOptions o;
    o.chip = chip;
    o.reference = true;  // o.libraries left empty
    const tr::BuildResult built = tr::build_model(tr::parse_net(Json::parse(text), "plain.json"), o, "plain.json");
    EXPECT_FALSE(built.description.kernel_module.has_value()) << chip;
    const tr::RunResult ran = tr::run_model(built.model, built.reference_inputs, "plain");
    const auto x = built.reference_inputs.at("x").values<float>();
    const auto y = ran.outputs.at("y").values<float>();
    ASSERT_EQ(x.size(), y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float sq = x[i] * x[i];
      EXPECT_EQ(y[i], sq - x[i]) << chip << " element " << i;
    }
  }
  tr::BuildOptions o;
  o.chip = "bm1684x";
  const char *custom = R"({
    "inputs": [{"name": "x", "shape": [4], "dtype": "fp32"}],
    "layers": [{"op": "absadd", "params": {"b": 0.5}, "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})";
  try {
    tr::build_model(tr::parse_net(Json::parse(custom), "custom.json"), o, "custom.json");
    ADD_FAILURE() << "a custom layer built without libraries";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(std::string(e.what()), "no path for libplugin_custom.so");
  }
}

// ---- transpose, slice, broadcast, cast -----------------------------------------

// The multi-index of element `flat` of `shape` (last dim fastest).
std::vector<int> unflatten(const std::vector<int> &shape, std::size_t flat) {
  std::vector<int> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = int(flat % std::size_t(shape[d]));
    flat /= std::size_t(shape[d]);
  }
  return index;
}

std::size_t flatten(const std::vector<int> &shape, const std::vector<int> &index) {
  std::size_t flat = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) flat = flat * std::size_t(shape[d]) + std::size_t(index[d]);
  return flat;
}

TEST(BuiltinOps, TransposeSliceAndBroadcastMoveValuesExactly) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  for (int round = 0; round < test::rounds(12); ++round) {
    const Format &f = *kFormats[round % 3];
    const std::string chip = kChips[round % 2];
    std::vector<int> shape(std::size_t(s.uniform(1, 5)));
    for (int &d : shape) d = s.uniform(1, 6);
    if (s.uniform(0, 2) == 0) shape.back() = s.uniform(40, 90);
    const std::vector<Input> in = {{"x", shape, random_values(s, f, count_of(shape))}};
    SCOPED_TRACE(std::string(f.name) + " " + chip + " round " + std::to_string(round));

    std::vector<int> perm(shape.size());
    for (std::size_t d = 0; d < perm.size(); ++d) perm[d] = int(d);
    std::shuffle(perm.begin(), perm.end(), s.rng());
    const Outcome t = build_and_run(chip, f, "builtin.transpose", Json{{"perm", perm}}, in);
    std::vector<double> want(in[0].values.size());
    for (std::size_t e = 0; e < want.size(); ++e) {
      const std::vector<int> o = unflatten(t.shape, e);
      std::vector<int> i(shape.size());
      for (std::size_t k = 0; k < perm.size(); ++k) i[std::size_t(perm[k])] = o[k];
      want[e] = in[0].values[flatten(shape, i)];
    }
    expect_outcome(t, want);

    std::vector<int> starts, ends, steps, out_shape;
    for (int d : shape) {
      starts.push_back(s.uniform(0, d - 1));
      ends.push_back(s.uniform(starts.back() + 1, d));
      steps.push_back(s.uniform(1, 3));
      out_shape.push_back((ends.back() - starts.back() + steps.back() - 1) / steps.back());
    }
    const Outcome sl = build_and_run(chip, f, "builtin.slice", Json{{"starts", starts}, {"ends", ends}, {"steps", steps}}, in);
    ASSERT_EQ(sl.shape, out_shape);
    want.assign(count_of(out_shape), 0);
    for (std::size_t e = 0; e < want.size(); ++e) {
      std::vector<int> i = unflatten(out_shape, e);
      for (std::size_t d = 0; d < i.size(); ++d) i[d] = starts[d] + i[d] * steps[d];
      want[e] = in[0].values[flatten(shape, i)];
    }
    expect_outcome(sl, want);

    std::vector<int> narrow = shape, wide = shape;
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (s.uniform(0, 1)) narrow[d] = 1;
    wide.insert(wide.begin(), s.uniform(1, 3));
    const std::vector<Input> small = {{"x", narrow, random_values(s, f, count_of(narrow))}};
    const Outcome b = build_and_run(chip, f, "builtin.broadcast", Json{{"shape", wide}}, small);
    ASSERT_EQ(b.shape, wide);
    want.assign(count_of(wide), 0);
    for (std::size_t e = 0; e < want.size(); ++e) want[e] = small[0].values[source_index(wide, narrow, e)];
    expect_outcome(b, want);
  }
}

// fp32 -> fp16 / bf16 and back: each value rounded once to the nearest
// value of the target, ties to even (values chosen on ties too).
TEST(BuiltinOps, CastRoundsToNearestEven) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  const std::pair<const Format *, const Format *> casts[] = {{&kFp32, &kFp16}, {&kFp32, &kBf16}, {&kFp16, &kFp32},
                                                            {&kBf16, &kFp16}};
  for (const auto &[from, to] : casts)
    for (const char *chip : kChips) {
      SCOPED_TRACE(std::string(from->name) + " -> " + to->name + " on " + chip);
      const std::vector<int> shape = {3, s.uniform(1, 70), 5};
      std::vector<double> values = random_values(s, *from, count_of(shape));
      values[0] = round_to(*from, 1.0 + std::ldexp(1.0, -11));  // a tie in fp16: stays 1
      values[1] = round_to(*from, 1.0 + 3 * std::ldexp(1.0, -11));  // a tie in fp16: up to even
      Json net = {{"name", "cast"},
                  {"inputs", {{{"name", "x"}, {"shape", shape}, {"dtype", from->name}}}},
                  {"layers", {{{"op", "builtin.cast"}, {"params", {{"to", to->name}}}, {"inputs", {"x"}}, {"outputs", {"y"}}}}},
                  {"outputs", {"y"}}};
      tr::BuildOptions o;
      o.chip = chip;
      o.libraries = test::sample_ops_libraries(chip);
      const tr::BuildResult built = tr::build_model(tr::parse_net(net, "cast.json"), o, "cast.json");
      const tr::RunResult ran = tr::run_model(built.model, {{"x", to_array(*from, shape, values)}}, "cast model");
      std::vector<double> want;
      for (double v : values) want.push_back(round_to(*to, v));
      expect_same(from_array(*to, ran.outputs.at("y")), want, "cast");
    }
}

// builtin.sin, cos, tan, asin, acos: the BDC's fp32 functions are
// correctly rounded (docs/bdc-math.md), so each result is the double
// function of the input rounded once to fp32, bit for bit (sin and cos far
// from zero too: the argument reduction is exact).
TEST(BuiltinOps, TrigonometricFunctionsAreCorrectlyRounded) {
  REQUIRE_SAMPLE_OPS();
  test::Seeded s;
  const std::pair<const char *, double (*)(double)> functions[] = {
      {"builtin.sin", [](double x) { return std::sin(x); }},   {"builtin.cos", [](double x) { return std::cos(x); }},
      {"builtin.tan", [](double x) { return std::tan(x); }},   {"builtin.asin", [](double x) { return std::asin(x); }},
      {"builtin.acos", [](double x) { return std::acos(x); }}};
  for (const auto &[op, f] : functions)
    for (const char *chip : kChips) {
      SCOPED_TRACE(std::string(op) + " on " + chip);
      const bool inverse = std::string(op).find("builtin.a") == 0;
      const std::vector<int> shape = {2, s.uniform(1, 90)};
      std::vector<double> values = random_values(s, kFp32, count_of(shape));
      for (double &v : values) v = inverse ? round_to(kFp32, v / 4) : v;
      values[0] = inverse ? 1.0 : round_to(kFp32, 12345.679);  // far from zero
      Json net = {{"name", "math"},
                  {"inputs", {{{"name", "x"}, {"shape", shape}, {"dtype", "fp32"}}}},
                  {"layers", {{{"op", op}, {"params", Json::object()}, {"inputs", {"x"}}, {"outputs", {"y"}}}}},
                  {"outputs", {"y"}}};
      tr::BuildOptions o;
      o.chip = chip;
      o.libraries = test::sample_ops_libraries(chip);
      const tr::BuildResult built = tr::build_model(tr::parse_net(net, "math.json"), o, "math.json");
      const tr::RunResult ran = tr::run_model(built.model, {{"x", to_array(kFp32, shape, values)}}, "math model");
      std::vector<double> want;
      for (double v : values) want.push_back(round_to(kFp32, f(v)));
      expect_same(from_array(kFp32, ran.outputs.at("y")), want, op);
    }
}

// int32 -> int8 keeps the low byte (numpy's astype, two's complement); the
// int32 input is given as int64 (narrowed at run, each value checked).
TEST(BuiltinOps, IntegerCastWrapsAndWideInputsAreNarrowed) {
  REQUIRE_SAMPLE_OPS();
  const std::vector<int64_t> values = {300, -129, 127, -1, 2147483647, -2147483648};
  const std::vector<int8_t> want = {44, 127, 127, -1, -1, 0};  // the low byte of each, by hand
  tr::npz::Array wide{"<i8", {2, 3}, std::vector<uint8_t>(values.size() * 8)};
  std::memcpy(wide.data.data(), values.data(), wide.data.size());
  Json net = {{"name", "narrow"},
              {"inputs", {{{"name", "x"}, {"shape", {2, 3}}, {"dtype", "int32"}}}},
              {"layers", {{{"op", "builtin.cast"}, {"params", {{"to", "int8"}}}, {"inputs", {"x"}}, {"outputs", {"y"}}}}},
              {"outputs", {"y"}}};
  for (const char *chip : kChips) {
    SCOPED_TRACE(chip);
    tr::BuildOptions o;
    o.chip = chip;
    o.libraries = test::sample_ops_libraries(chip);
    const tr::BuildResult built = tr::build_model(tr::parse_net(net, "narrow.json"), o, "narrow.json");
    const tr::RunResult ran = tr::run_model(built.model, {{"x", wide}}, "narrow model");
    const tr::npz::Array &y = ran.outputs.at("y");
    ASSERT_EQ(y.dtype, "|i1");
    EXPECT_EQ(std::vector<int8_t>(y.data.begin(), y.data.end()), want);
    tr::npz::Array beyond = wide;
    const int64_t too_big = int64_t(1) << 31;
    std::memcpy(beyond.data.data() + 8, &too_big, 8);
    try {
      tr::run_model(built.model, {{"x", beyond}}, "narrow model");
      ADD_FAILURE() << "an int64 beyond int32 was taken";
    } catch (const tr::Error &e) {
      EXPECT_NE(std::string(e.what()).find("array 'x' (int64) for input 'x': element 1 is 2147483648, which int32 "
                                           "cannot hold"),
                std::string::npos)
          << e.what();
    }
  }
}

void expect_build_error(const std::string &layers, const std::string &inputs, std::initializer_list<std::string> parts) {
  const std::string text = R"({"inputs": )" + inputs + R"(, "layers": )" + layers + R"(, "outputs": ["y"]})";
  tr::BuildOptions o;
  o.chip = "bm1684x";
  o.libraries = test::sample_ops_libraries("bm1684x");
  try {
    tr::build_model(tr::parse_net(Json::parse(text), "bad.json"), o, "bad.json");
    ADD_FAILURE() << "no error for " << layers;
  } catch (const tr::Error &e) {
    for (const std::string &p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << "message: " << e.what() << "\nmissing: " << p;
  }
}

TEST(BuiltinOps, Refusals) {
  REQUIRE_SAMPLE_OPS();
  const std::string two = R"([{"name": "a", "shape": [2, 3], "dtype": "fp32"}, {"name": "b", "shape": [4, 3], "dtype": "fp32"}])";
  const std::string mixed = R"([{"name": "a", "shape": [2, 3], "dtype": "fp32"}, {"name": "b", "shape": [2, 3], "dtype": "fp16"}])";
  const std::string one = R"([{"name": "a", "shape": [2, 3], "dtype": "fp32"}])";
  const std::string int8 = R"([{"name": "a", "shape": [2, 3], "dtype": "int8"}])";
  auto layer = [](const std::string &op, const std::string &params, const std::string &ins) {
    return R"([{"op": ")" + op + R"(", "params": )" + params + R"(, "inputs": )" + ins + R"(, "outputs": ["y"]}])";
  };
  expect_build_error(layer("builtin.add", "{}", R"(["a", "b"])"), two,
                     {"bad.json: layer 0", "builtin.add: shapes [2,3] and [4,3] do not broadcast"});
  expect_build_error(layer("builtin.mul", "{}", R"(["a", "b"])"), mixed, {"input 1 is fp16 but input 0 is fp32"});
  expect_build_error(layer("builtin.relu", "{}", R"(["a"])"), int8, {"input dtype int8", "fp32, fp16 or bf16"});
  expect_build_error(layer("builtin.pow", "{}", R"(["a"])"), one, {"unknown built-in op 'builtin.pow'", "builtin.concat"});
  expect_build_error(layer("builtin.add", "{}", R"(["a"])"), one, {"builtin.add: it takes two inputs"});
  expect_build_error(layer("builtin.add", R"({"scalar": 1.0})", R"(["a", "a"])"), one, {"it takes one input"});
  expect_build_error(layer("builtin.add", R"({"scalar": [1.0, 2.0]})", R"(["a"])"), one, {"'scalar' must be a number"});
  expect_build_error(layer("builtin.sub", R"({"scalar_first": 1})", R"(["a", "a"])"), one,
                     {"'scalar_first' needs the parameter 'scalar'"});
  expect_build_error(layer("builtin.relu", R"({"alpha": 0.1})", R"(["a"])"), one, {"unknown parameter 'alpha'"});
  expect_build_error(layer("builtin.concat", R"({"axis": 2})", R"(["a", "a"])"), one,
                     {"axis 2 is out of range for 2-d inputs (use -2..1)"});
  expect_build_error(layer("builtin.concat", R"({"axis": 1})", R"(["a", "b"])"), two,
                     {"input 1 has the shape [4,3], input 0 [2,3]; along axis 1 only"});
  expect_build_error(layer("builtin.transpose", R"({"perm": [0, 0]})", R"(["a"])"), one,
                     {"builtin.transpose: perm [0,0] is not a permutation of 0..1"});
  expect_build_error(layer("builtin.slice", R"({"starts": [0, 2], "ends": [2, 4]})", R"(["a"])"), one,
                     {"builtin.slice: dim 1 of [2,3]: start 2, end 4, step 1; it needs 0 <= start <= end <= 3"});
  expect_build_error(layer("builtin.broadcast", R"({"shape": [4, 3]})", R"(["a"])"), one,
                     {"builtin.broadcast: the input [2,3] does not broadcast to [4,3] (dim 0: 2 to 4)"});
  expect_build_error(layer("builtin.cast", "{}", R"(["a"])"), one,
                     {"builtin.cast: parameter 'to' (a dtype: fp32, int32, ...) is missing"});
  expect_build_error(layer("builtin.gather", R"({"axis": 0})", R"(["a", "a"])"), one,
                     {"builtin.gather: the indices are fp32; they must be int32"});
  expect_build_error(layer("builtin.gather", R"({"axis": 2})", R"(["a", "i"])"),
                     R"([{"name": "a", "shape": [2, 3], "dtype": "fp32"}, {"name": "i", "shape": [4], "dtype": "int32"}])",
                     {"builtin.gather: axis 2 is not a dim of [2,3]"});
  expect_build_error(layer("builtin.gather", R"({"axis": 1.5})", R"(["a", "i"])"),
                     R"([{"name": "a", "shape": [2, 3], "dtype": "fp32"}, {"name": "i", "shape": [4], "dtype": "int32"}])",
                     {"builtin.gather: parameter 'axis' must be an integer, not 1.5"});
  const std::string pow_inputs = R"([{"name": "x", "shape": [2, 3], "dtype": "int32"},
                                      {"name": "e", "shape": [2, 3], "dtype": "int8"},
                                      {"name": "r", "shape": [3], "dtype": "int32"}])";
  expect_build_error(layer("builtin.int_pow", "{}", R"(["a", "a"])"), one,
                     {"builtin.int_pow: the base is fp32; it takes int32"});
  expect_build_error(layer("builtin.int_pow", "{}", R"(["x", "e"])"), pow_inputs,
                     {"builtin.int_pow: the exponent is int8; it takes int32 or uint32"});
  expect_build_error(layer("builtin.int_pow", "{}", R"(["x", "r"])"), pow_inputs,
                     {"builtin.int_pow: the base [2,3] and the exponent [3] differ in shape (broadcast them first)"});
  expect_build_error(layer("builtin.int_pow", R"({"k": 1})", R"(["x", "x"])"), pow_inputs,
                     {"builtin.int_pow: unknown parameter 'k'"});
  expect_build_error(layer("builtin.int_mod", "{}", R"(["a", "a"])"), one,
                     {"builtin.int_mod: the dividend is fp32; it takes int32 or uint32"});
  expect_build_error(layer("builtin.int_mod", R"({"fmod": 2})", R"(["x", "x"])"), pow_inputs,
                     {"builtin.int_mod: parameter 'fmod' is 2; it is 0 or 1"});
  expect_build_error(layer("builtin.int_mod", "{}", R"(["x", "r"])"), pow_inputs,
                     {"builtin.int_mod: the dividend [2,3] and the divisor [3] differ in shape"});
  expect_build_error(layer("builtin.sin", "{}", R"(["b"])"), mixed,
                     {"builtin.sin: the input is fp16; it takes fp32 (cast fp16 / bf16 first)"});
  expect_build_error(layer("builtin.cos", R"({"fn": 1})", R"(["a"])"), one, {"builtin.cos: unknown parameter 'fn'"});
  expect_build_error(layer("builtin.acos", "{}", R"(["a", "a"])"), one, {"builtin.acos: it takes one tensor, not 2"});
  expect_build_error(R"([{"op": "builtin.relu", "inputs": ["a"], "outputs": ["y"], "out_dtypes": ["fp16"]}])", one,
                     {"out_dtypes says fp16, but builtin.relu gives fp32"});
}

}  // namespace
