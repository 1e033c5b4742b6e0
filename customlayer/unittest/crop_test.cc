// crop: out[..., i, j] = in[..., hoffset + i, woffset + j].
#include "op_test_support.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"

namespace {

using op_test::expect_pass;
using tpu_runtime::Shape;

class Crop : public op_test::OpTest {};

TEST_P(Crop, Window) {
  const auto report = expect_pass(tester("crop")
                                      .input_shape({4, 32, 36, 36})
                                      .params(R"({"hoffset": 1, "woffset": 2, "hnew": 3, "wnew": 4})")
                                      .seed(31));
  EXPECT_EQ(report.output_shapes, std::vector<Shape>({{4, 32, 3, 4}}));
}

TEST_P(Crop, OddShapeToTheEdge) {
  const auto report = expect_pass(tester("crop")
                                      .input_shape({3, 67, 7, 13})
                                      .params(R"({"hoffset": 2, "woffset": 0, "hnew": 5, "wnew": 13})")
                                      .seed(32));
  EXPECT_EQ(report.output_shapes, std::vector<Shape>({{3, 67, 5, 13}}));
}

TEST_P(Crop, LargeTensor) {
  expect_pass(tester("crop")
                  .input_shape({2, 16, 1024, 1100})
                  .params(R"({"hoffset": 100, "woffset": 37, "hnew": 900, "wnew": 1000})")
                  .seed(33));
}

TEST_P(Crop, RejectsWindowPastTheEdge) {
  const std::string message = op_test::expect_error(tester("crop")
                                                       .input_shape({1, 2, 8, 8})
                                                       .params(R"({"hoffset": 4, "woffset": 0, "hnew": 5, "wnew": 8})"));
  // The kernel's own assertion, with the window, the input and its file:line.
  EXPECT_NE(message.find("window rows [4, 9) x columns [0, 8)"), std::string::npos) << message;
  EXPECT_NE(message.find("last two dims 8 x 8"), std::string::npos) << message;
  EXPECT_NE(message.find("tpu_impl_crop.c:"), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(Chips, Crop, op_test::chip_dtype_values(), op_test::chip_dtype_name);

TEST(CropPlugin, ShapeAndValues) {
  const auto paths = tpu_runtime::default_library_paths(op_test::chips_under_test()[0]);
  const auto plugin = tpu_runtime::Plugin::open(paths.plugin);
  const auto params = tpu_runtime::PackedParams::from_json_text(R"({"hoffset": 1, "woffset": 2, "hnew": 2, "wnew": 3})");
  EXPECT_EQ(plugin.shape_inference("crop", params, {Shape{2, 1, 4, 6}}, 1), std::vector<Shape>({{2, 1, 2, 3}}));
  float in[48], out[12] = {};
  for (int i = 0; i < 48; ++i) in[i] = float(i);
  plugin.inference("crop", params, {Shape{2, 1, 4, 6}}, {in}, {out});
  for (int n = 0; n < 2; ++n)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 3; ++w) EXPECT_EQ(out[n * 6 + h * 3 + w], in[n * 24 + (h + 1) * 6 + (w + 2)]);
}

}  // namespace
