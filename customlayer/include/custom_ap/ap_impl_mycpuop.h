// ap_impl_mycpuop.h: the template AP op, a starting point to copy: it
// parses nothing, infers no shapes and computes nothing. It holds the type
// AP_CUSTOM (10001) so that bmcpu_init, which creates a layer for every type
// of customap_common.h's enum, finds a registration for it; it is in neither
// the name table nor the factory, so no model can use it.
#ifndef TPU_SDK_AP_IMPL_MYCPUOP_H
#define TPU_SDK_AP_IMPL_MYCPUOP_H

#include "cpu_layer.h"

namespace bmcpu {

class cpu_mycpuoplayer final : public cpu_layer {
 public:
  cpu_mycpuoplayer() {}
  ~cpu_mycpuoplayer() {}

  int forward(void *param, int param_size) override;
  int get_param(void *param, int param_size) override;
  int shepe_infer(void *param, int param_size, const vector<vector<int>> &input_shapes,
                  vector<vector<int>> &output_shapes) override;
  int dtype_infer(const void *param, size_t param_size, const vector<int> &input_dtypes,
                  vector<int> &output_dtypes) override;
  virtual string get_layer_name() const { return "MYCPUOP"; }
};

}  // namespace bmcpu

#define ap_mycpuoplayer cpu_mycpuoplayer

#endif  // TPU_SDK_AP_IMPL_MYCPUOP_H
