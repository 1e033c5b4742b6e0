// ap_impl_cpuop.cpp: the template AP op (include/custom_ap/ap_impl_mycpuop.h).
#include "ap_impl_mycpuop.h"

#include "cpu_layer_factory.h"
#include "customap_common.h"

namespace bmcpu {

int cpu_mycpuoplayer::get_param(void *, int) { return 0; }

int cpu_mycpuoplayer::shepe_infer(void *, int, const vector<vector<int>> &, vector<vector<int>> &) { return 0; }

int cpu_mycpuoplayer::dtype_infer(const void *, size_t, const vector<int> &, vector<int> &output_dtypes) {
  output_dtypes = {CPU_DTYPE_FP32};
  return 0;
}

int cpu_mycpuoplayer::forward(void *, int) { return 0; }

REGISTER_APLAYER_CLASS(AP_CUSTOM, ap_mycpuop)

}  // namespace bmcpu
