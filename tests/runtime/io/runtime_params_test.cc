// runtime_params_test.cc: JSON parameters -> custom_param_t array
// (runtime/io/include/tpu_runtime/params.h).
//
// The expected arrays are built element by element by hand and compared
// byte for byte with what PackedParams produces.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "api_common.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/params.h"

namespace {

using tpu_runtime::Error;
using tpu_runtime::PackedParams;

custom_param_t zero_element() {
  custom_param_t e;
  std::memset(&e, 0, sizeof e);
  return e;
}
custom_param_t int_element(int v) {
  custom_param_t e = zero_element();
  e.int_t = v;
  return e;
}
custom_param_t float_element(float v) {
  custom_param_t e = zero_element();
  e.float_t = v;
  return e;
}
custom_param_t int_array(std::vector<int> values) {
  custom_param_t e = zero_element();
  for (std::size_t i = 0; i < values.size(); ++i) e.int_arr_t[i] = values[i];
  return e;
}
custom_param_t float_array(std::vector<float> values) {
  custom_param_t e = zero_element();
  for (std::size_t i = 0; i < values.size(); ++i) e.float_arr_t[i] = values[i];
  return e;
}

// Byte comparison of the whole packed array with the expected elements
// (element 0 included).
void expect_bytes(const PackedParams &packed, const std::vector<custom_param_t> &expected) {
  ASSERT_EQ(packed.count(), expected.size());
  ASSERT_EQ(packed.size_bytes(), int(64 * expected.size()));
  const auto *got = reinterpret_cast<const unsigned char *>(packed.data());
  const auto *want = reinterpret_cast<const unsigned char *>(expected.data());
  for (std::size_t i = 0; i < 64 * expected.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << "byte " << i << " (element " << i / 64 << ", byte " << i % 64 << ")";
}

// The Error message from packing `text`; fails the test when nothing throws.
std::string error_of(const std::string &text) {
  try {
    PackedParams::from_json_text(text);
  } catch (const Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "no Error for " << text;
  return "";
}

std::string error_of_json(const nlohmann::ordered_json &json) {
  try {
    PackedParams::from_json(json);
  } catch (const Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "no Error for " << json.dump();
  return "";
}

TEST(PackedParams, DefaultHoldsOnlyTheReservedElement) {
  PackedParams p;
  expect_bytes(p, {zero_element()});
  EXPECT_EQ(p.size_bytes(), 64);
}

TEST(PackedParams, EmptyTextAndEmptyObjectGiveOnlyTheReservedElement) {
  for (const char *text : {"", "{}", "  \n", " { } "}) {
    SCOPED_TRACE(text);
    expect_bytes(PackedParams::from_json_text(text), {zero_element()});
  }
}

TEST(PackedParams, PacksEveryKindByteForByte) {
  const auto packed = PackedParams::from_json_text(R"({
    "b": 1.5,
    "n": -7,
    "yes": true,
    "no": false,
    "ints": [1, -2, 3],
    "floats": [0.5, 2, -3.25],
    "max": 2147483647,
    "min": -2147483648,
    "tenth": 0.1,
    "flags": [true, false, 5],
    "negzero": -0.0,
    "fltmax": 3.4028234663852886e38
  })");
  expect_bytes(packed, {zero_element(), float_element(1.5f), int_element(-7), int_element(1), int_element(0),
                        int_array({1, -2, 3}), float_array({0.5f, 2.0f, -3.25f}), int_element(2147483647),
                        int_element(std::numeric_limits<int>::min()), float_element(0.1f), int_array({1, 0, 5}),
                        float_element(-0.0f), float_element(FLT_MAX)});
  EXPECT_EQ(packed.size_bytes(), 13 * 64);
}

TEST(PackedParams, SixteenElementArraysFillTheWholeElement) {
  const auto packed = PackedParams::from_json_text(
      R"({"i": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16], "f": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16.5]})");
  expect_bytes(packed, {zero_element(), int_array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}),
                        float_array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16.5f})});
}

TEST(PackedParams, KeepsTheWrittenKeyOrder) {
  expect_bytes(PackedParams::from_json_text(R"({"zeta": 1, "alpha": 2, "mid": 3, "beta": 4})"),
               {zero_element(), int_element(1), int_element(2), int_element(3), int_element(4)});
  nlohmann::ordered_json built;
  built["z"] = 10;
  built["a"] = 0.25;
  built["k"] = {7, 8};
  expect_bytes(PackedParams::from_json(built),
               {zero_element(), int_element(10), float_element(0.25f), int_array({7, 8})});
}

TEST(PackedParams, UserParametersStartAfterTheReservedElement) {
  const auto packed = PackedParams::from_json_text(R"({"b": 2.5, "k": 4})");
  // What a user's <op>_parse_param sees through PARSE_PARAM.
  const auto *user = static_cast<const custom_param_t *>(get_real_param_ptr(packed.data()));
  EXPECT_EQ(user[0].float_t, 2.5f);
  EXPECT_EQ(user[1].int_t, 4);
}

TEST(PackedParams, ReservedElementSetters) {
  auto p = PackedParams::from_json_text(R"({"k": [5, 6]})");
  p.set_global_buffer(0x123456789abcULL);
  custom_param_t slot0 = zero_element();
  const uint64_t address = 0x123456789abcULL;
  std::memcpy(&slot0, &address, sizeof address);
  expect_bytes(p, {slot0, int_array({5, 6})});
  EXPECT_EQ(get_global_buffer_addr(p.data()), int64_t{0x123456789abc});

  p.set_local_buffer(4096);  // also clears the high half of the address
  expect_bytes(p, {int_element(4096), int_array({5, 6})});
  EXPECT_EQ(get_local_buffer_addr(p.data()), 4096);

  p.clear_reserved();
  expect_bytes(p, {zero_element(), int_array({5, 6})});
}

// The stored form of the array comes back element for element, element 0
// included (a model stores what the kernel is given).
TEST(PackedParams, BytesRoundTripThroughFromBytes) {
  auto p = PackedParams::from_json_text(R"({"b": -1.5, "order": [2, 0, 1], "w": [0.5, 2]})");
  p.set_global_buffer(0x100000200ULL);
  const std::vector<uint8_t> stored(p.bytes().begin(), p.bytes().end());
  ASSERT_EQ(stored.size(), 4 * sizeof(custom_param_t));
  const PackedParams back = PackedParams::from_bytes(stored, "m");
  EXPECT_EQ(back.count(), 4u);
  EXPECT_EQ(std::memcmp(back.data(), p.data(), stored.size()), 0);
  EXPECT_EQ(get_global_buffer_addr(back.data()), int64_t{0x100000200});
  EXPECT_EQ(static_cast<const custom_param_t *>(get_real_param_ptr(back.data()))[0].float_t, -1.5f);
}

TEST(PackedParams, FromBytesRefusesPartialOrHugeArrays) {
  auto refused = [](std::size_t bytes, const char *what) {
    const std::vector<uint8_t> data(bytes, 0);
    try {
      PackedParams::from_bytes(data, "layer 3");
      ADD_FAILURE() << bytes << " bytes accepted";
    } catch (const Error &e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("layer 3: ", 0), 0u) << message;
      EXPECT_NE(message.find(what), std::string::npos) << message;
    }
  };
  refused(0, "0 bytes is not a whole number");
  refused(sizeof(custom_param_t) + 1, "is not a whole number");
  refused((PackedParams::kMaxPackedElements + 1) * sizeof(custom_param_t), "more than this SDK accepts");
  EXPECT_EQ(PackedParams::from_bytes(std::vector<uint8_t>(sizeof(custom_param_t), 0), "x").count(), 1u);
}

// A parser reading parameters that were not given sees zeros past the
// array, which param_size still gives exactly.
TEST(PackedParams, ParametersNotGivenReadAsZero) {
  for (const PackedParams &p : {PackedParams(), PackedParams::from_json_text(R"({"b": 2.5})"),
                                PackedParams::from_bytes(std::vector<uint8_t>(2 * sizeof(custom_param_t), 0xAB), "x")}) {
    const std::size_t given = p.count();
    EXPECT_EQ(std::size_t(p.size_bytes()), given * sizeof(custom_param_t));
    const custom_param_t zero = zero_element();
    for (std::size_t i = given; i < given + 16; ++i)
      EXPECT_EQ(std::memcmp(&p.data()[i], &zero, sizeof zero), 0) << "element " << i << " of " << given;
  }
  // Copies keep the guard.
  const PackedParams original = PackedParams::from_json_text(R"({"k": 7})");
  PackedParams copy = original;
  EXPECT_EQ(copy.data()[2].int_t, 0);
  EXPECT_EQ(copy.data()[17].int_t, 0);
}

// ---- refusals: each names the parameter ----------------------------------

struct Refusal {
  const char *text;
  const char *key;
  const char *what;  // a fragment of the message
};

TEST(PackedParams, RefusesWithTheParameterNameAndTheReason) {
  const Refusal refusals[] = {
      {R"({"a": 1, "name": "abs"})", "name", "string"},
      {R"({"nothing": null})", "nothing", "null"},
      {R"({"obj": {"x": 1}})", "obj", "object"},
      {R"({"nested": [1, [2, 3]]})", "nested", "element 1 is an array"},
      {R"({"empty": []})", "empty", "empty array"},
      {R"({"long": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]})", "long", "17 elements"},
      {R"({"big": 2147483648})", "big", "2147483648 does not fit a 32-bit int"},
      {R"({"low": -2147483649})", "low", "-2147483649 does not fit a 32-bit int"},
      {R"({"u64": 18446744073709551615})", "u64", "does not fit a 32-bit int"},
      {R"({"huge": 1000000000000000000000000000000})", "huge", "does not fit a 32-bit int"},
      {R"({"flt": 1e39})", "flt", "out of float range"},
      {R"({"negflt": -3.5e38})", "negflt", "out of float range"},
      {R"({"tiny": 1e-50})", "tiny", "becomes 0 as a float"},
      {R"({"mixed": [1, "x"]})", "mixed", "element 1 is a string"},
      {R"({"holes": [1, null]})", "holes", "element 1 is null"},
      {R"({"objs": [{"a": 1}]})", "objs", "element 0 is an object"},
      {R"({"arrint": [1, 4294967296]})", "arrint", "element 1 = 4294967296 does not fit a 32-bit int"},
      {R"({"arrflt": [1.5, 1e40]})", "arrflt", "element 1 = 1e+40 is out of float range"},
      {R"({"arrbig": [0.5, 3000000000]})", "arrbig", "element 1 = 3000000000 does not fit a 32-bit int"},
      {R"({"twice": 1, "other": 2, "twice": 3})", "twice", "given twice"},
  };
  for (const Refusal &r : refusals) {
    SCOPED_TRACE(r.text);
    const std::string message = error_of(r.text);
    EXPECT_NE(message.find(std::string("parameter '") + r.key + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(r.what), std::string::npos) << message;
  }
}

TEST(PackedParams, RefusesNonFiniteNumbersBuiltInCode) {
  for (double v : {std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
    nlohmann::ordered_json j;
    j["ok"] = 1;
    j["bad"] = v;
    const std::string message = error_of_json(j);
    EXPECT_NE(message.find("parameter 'bad'"), std::string::npos) << message;
    EXPECT_NE(message.find("not a finite number"), std::string::npos) << message;
  }
  nlohmann::ordered_json j;
  j["arr"] = {1.0, std::numeric_limits<double>::infinity()};
  const std::string message = error_of_json(j);
  EXPECT_NE(message.find("parameter 'arr'"), std::string::npos) << message;
  EXPECT_NE(message.find("element 1"), std::string::npos) << message;
}

TEST(PackedParams, RefusesTextThatIsNotAnObject) {
  for (const char *text : {"[1, 2]", "3", "\"b\"", "null", "true"}) {
    SCOPED_TRACE(text);
    const std::string message = error_of(text);
    EXPECT_NE(message.find("must be a JSON object"), std::string::npos) << message;
  }
  const std::string message = error_of(R"({"b": 1.2,)");
  EXPECT_NE(message.find("not valid JSON"), std::string::npos) << message;
  EXPECT_NE(message.find("parse error"), std::string::npos) << message;  // nlohmann's own text
  EXPECT_NE(error_of("{b: 1}").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"e": 1e400})").find("not valid JSON"), std::string::npos);  // overflows a double
  EXPECT_NE(error_of_json(nlohmann::ordered_json::array({1})).find("must be a JSON object"), std::string::npos);
}

TEST(PackedParams, TheFirstBadParameterIsReportedNotLaterOnes) {
  const std::string message = error_of(R"({"ok": 1, "first": "x", "second": null})");
  EXPECT_NE(message.find("'first'"), std::string::npos) << message;
  EXPECT_EQ(message.find("'second'"), std::string::npos) << message;
}

}  // namespace

// ---- declared types (param_types_<op>) ------------------------------------

namespace typed {

using tpu_runtime::ParamKind;
using tpu_runtime::ParamTypes;
using tpu_runtime::parse_param_types;
using Json = nlohmann::ordered_json;

PackedParams pack(const char *declaration, const Json &params, std::vector<std::string> &warnings) {
  return PackedParams::from_json(params, parse_param_types(declaration, "test"), "myop", warnings);
}

std::string refusal(const char *declaration, const Json &params) {
  std::vector<std::string> warnings;
  try {
    pack(declaration, params, warnings);
  } catch (const Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "no Error for " << params.dump();
  return "";
}

TEST(ParamTypes, ParsesEveryKindAndRefusesBadDeclarations) {
  const ParamTypes t = parse_param_types(" b:float, order : int[] ,n:int,w:float[]", "here");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].name, "b");
  EXPECT_EQ(t[0].kind, ParamKind::float_scalar);
  EXPECT_EQ(t[1].name, "order");
  EXPECT_EQ(t[1].kind, ParamKind::int_array);
  EXPECT_EQ(t[2].kind, ParamKind::int_scalar);
  EXPECT_EQ(t[3].kind, ParamKind::float_array);
  EXPECT_TRUE(parse_param_types("", "here").empty());
  for (const char *bad : {"b:double", "b", "b:float,b:int", ":int", "b:float,"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_param_types(bad, "here"), Error);
  }
}

// The probe's case: "c": 1 for a float slot used to reach the kernel as the
// bits of 1, a float of 1.4e-45. Declared, it becomes 1.0f with a warning.
TEST(ParamTypes, AnIntegerForAFloatSlotBecomesThatFloatWithAWarning) {
  std::vector<std::string> warnings;
  const PackedParams p = pack("c:float", Json{{"c", 1}}, warnings);
  expect_bytes(p, {zero_element(), float_element(1.0f)});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("op 'myop' parameter 'c': the integer 1 is converted to the float"), std::string::npos)
      << warnings[0];
}

TEST(ParamTypes, AWholeFloatForAnIntSlotBecomesTheIntAndAFractionIsRefused) {
  std::vector<std::string> warnings;
  expect_bytes(pack("n:int", Json{{"n", 3.0}}, warnings), {zero_element(), int_element(3)});
  EXPECT_EQ(warnings.size(), 1u);
  const std::string m = refusal("n:int", Json{{"n", 3.5}});
  EXPECT_NE(m.find("op 'myop' parameter 'n' is declared int, but 3.5 is not a whole number"), std::string::npos) << m;
}

TEST(ParamTypes, ArraysConvertEachElementAndFollowTheDeclarationOrder) {
  std::vector<std::string> warnings;
  // Keys in another order than declared: packed in the declared order.
  const PackedParams p = pack("w:float[], order:int[]", Json{{"order", {2, 0, 1}}, {"w", {1, 2.5}}}, warnings);
  expect_bytes(p, {zero_element(), float_array({1.0f, 2.5f}), int_array({2, 0, 1})});
  EXPECT_EQ(warnings.size(), 1u);  // the integer 1 in w
}

TEST(ParamTypes, MissingUnknownAndMisshapenParametersAreRefusedByName) {
  std::string m = refusal("b:float", Json::object());
  EXPECT_NE(m.find("op 'myop' parameter 'b' (float) is missing"), std::string::npos) << m;
  m = refusal("b:float", Json{{"b", 1.0}, {"c", 2}});
  EXPECT_NE(m.find("op 'myop' has no parameter 'c' (its declared parameters: b: float)"), std::string::npos) << m;
  m = refusal("order:int[]", Json{{"order", 2}});
  EXPECT_NE(m.find("parameter 'order' is declared int[], but is a number"), std::string::npos) << m;
  m = refusal("b:float", Json{{"b", {1.0}}});
  EXPECT_NE(m.find("parameter 'b' is declared float, but is an array"), std::string::npos) << m;
  m = refusal("b:float", Json{{"b", true}});
  EXPECT_NE(m.find("declared float, but is a bool"), std::string::npos) << m;
}

}  // namespace typed
