// swapchannel: out[:, c] = in[:, order[c]] for three channels.
#include "op_test_support.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"

namespace {

using op_test::expect_pass;
using tpu_runtime::Shape;

class SwapChannel : public op_test::OpTest {};

// [2, 0, 1] is not its own inverse: writing out[order[c]] = in[c] instead
// (the vendor plugin's mistake) would not match.
TEST_P(SwapChannel, Rotation) {
  expect_pass(tester("swapchannel").input_shape({4, 3, 36, 36}).params(R"({"order": [2, 0, 1]})").seed(21));
}

TEST_P(SwapChannel, OddShapeAndRepeatedChannel) {
  expect_pass(tester("swapchannel").input_shape({3, 3, 7, 13}).params(R"({"order": [1, 1, 0]})").seed(22));
}

TEST_P(SwapChannel, LargeTensor) {
  expect_pass(tester("swapchannel").input_shape({2, 3, 1024, 1500}).params(R"({"order": [1, 2, 0]})").seed(23));
}

TEST_P(SwapChannel, RejectsBadOrderAndChannelCount) {
  std::string message =
      op_test::expect_error(tester("swapchannel").input_shape({1, 3, 4, 4}).params(R"({"order": [0, 3, 1]})"));
  EXPECT_NE(message.find("order[1] = 3, but every order value must be 0, 1 or 2"), std::string::npos) << message;
  message = op_test::expect_error(tester("swapchannel").input_shape({1, 4, 4, 4}).params(R"({"order": [0, 1, 2]})"));
  EXPECT_NE(message.find("needs exactly 3 channels (dim 1); the input has 4"), std::string::npos) << message;
  EXPECT_NE(message.find("tpu_impl_swapchannel.c:"), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(Chips, SwapChannel, op_test::chip_dtype_values(), op_test::chip_dtype_name);

TEST(SwapChannelPlugin, OutputChannelCTakesInputChannelOrderC) {
  const auto paths = tpu_runtime::default_library_paths(op_test::chips_under_test()[0]);
  const auto plugin = tpu_runtime::Plugin::open(paths.plugin);
  const auto params = tpu_runtime::PackedParams::from_json_text(R"({"order": [1, 2, 0]})");
  // Two images of three 2-element channels; value = 100 * n + 10 * c + i.
  float in[12], out[12] = {};
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 2; ++i) in[n * 6 + c * 2 + i] = float(100 * n + 10 * c + i);
  plugin.inference("swapchannel", params, {Shape{2, 3, 1, 2}}, {in}, {out});
  const int order[3] = {1, 2, 0};
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 2; ++i)
        EXPECT_EQ(out[n * 6 + c * 2 + i], float(100 * n + 10 * order[c] + i)) << n << c << i;
}

}  // namespace
