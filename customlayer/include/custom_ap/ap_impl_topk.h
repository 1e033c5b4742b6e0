// ap_impl_topk.h: top-k as an AP op (runs on the host CPU): the k largest
// values along an axis, sorted in descending order, and their indices.
//
// Parameters, in order: axis (int), K (int). Inputs: 0 = the data (fp32);
// optional 1 = k as an int32 tensor (its first element replaces K).
// Outputs: 0 = values (fp32), 1 = indices along the axis (int32), when given.
// Edge cases (the vendor leaves them open; this op defines them):
//   - axis -1 is the last axis; any other negative axis, or an axis >= rank,
//     is refused;
//   - k > n (the axis's length) is refused, naming k and n, at shape
//     inference and in forward; k < 0 is refused; k = 0 gives empty outputs;
//   - equal values keep their order: the lower index comes first;
//   - NaN ranks above every number (numpy's descending order: sort, then
//     flip); NaNs among themselves by index, the lower first.
// A refusal throws std::invalid_argument with the reason.
#ifndef TPU_SDK_AP_IMPL_TOPK_H
#define TPU_SDK_AP_IMPL_TOPK_H

#include "cpu_layer.h"

namespace bmcpu {

class cpu_topklayer final : public cpu_layer {
 public:
  cpu_topklayer() {}
  ~cpu_topklayer() {}

  int forward(void *param, int param_size) override;
  int get_param(void *param, int param_size) override;
  int shepe_infer(void *param, int param_size, const vector<vector<int>> &input_shapes,
                  vector<vector<int>> &output_shapes) override;
  int dtype_infer(const void *param, size_t param_size, const vector<int> &input_dtypes,
                  vector<int> &output_dtypes) override;
  virtual string get_layer_name() const { return "TOPK"; }

 private:
  int axis_ = 0;
  int K_ = 0;
};

}  // namespace bmcpu

#define ap_topklayer cpu_topklayer

#endif  // TPU_SDK_AP_IMPL_TOPK_H
