// run_ap_topk.cc: the AP library envsetup.sh built from a vendor-layout
// project, run through the installed runtime (scripts/vendor_layout_check.sh
// compiles this against the installed SDK): top-k of a fixed vector, then
// the compile-time side through the installed plugin.
//   run_ap_topk <libcustomcpuop.so> <libplugin_custom.so>
// Prints "values 9 6 5 indices 5 7 4 shapes [1,3]" and exits 0, or the error.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tpu_runtime/error.h"
#include "tpu_runtime/host_op.h"

using namespace tpu_runtime;

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  try {
    const std::vector<float> x = {3, 1, 4, 1, 5, 9, 2, 6};
    HostTensor in{Dtype::fp32, {1, 8}, std::vector<std::uint8_t>(x.size() * 4)};
    std::memcpy(in.bytes.data(), x.data(), in.bytes.size());
    const auto params = pack_ap_params(nlohmann::json::array({{{"axis", 1}}, {{"K", 3}}}));
    auto lib = HostOpLibrary::open(argv[1], HostOpKind::vendor_ap);
    const HostOpRun run = run_host_op(*lib, "ap.topk", params, {in},
                                      {{Dtype::fp32, {1, 3}, {}}, {Dtype::int32, {1, 3}, {}}}, "layer topk");
    float values[3];
    std::int32_t indices[3];
    std::memcpy(values, run.outputs[0].bytes.data(), sizeof values);
    std::memcpy(indices, run.outputs[1].bytes.data(), sizeof indices);
    const std::vector<Shape> shapes = infer_ap_output_shapes(argv[2], "ap.topk", params, {{1, 8}});
    std::printf("values %g %g %g indices %d %d %d shapes [%d,%d]\n", values[0], values[1], values[2], indices[0],
                indices[1], indices[2], shapes.at(0).at(0), shapes.at(0).at(1));
    return 0;
  } catch (const Error &e) {
    std::printf("%s\n", e.what());
    return 1;
  }
}
