/* Every header the SDK shares a name with the vendor's, in one file, used a
 * little. run.sh compiles it with a user's copy of each header in turn
 * (its include guard renamed, as a vendor copy's would differ) earlier on
 * the include path: the copy must replace the SDK's header, never sit
 * beside it (a vendor api_common.h once clashed with GROUP_NORMAL in our
 * common_def.h). */
#include "api_common.h"
#include "api_utils.h"
#include "backend_helper.h"
#include "bitcasts.h"
#include "common.h"
#include "common_def.h"
#include "fp16.h"
#include "macros.h"
#include "print_trace.h"
#include "tpu_defs.h"
#include "tpu_kernel.h"
#include "tpu_utils.h"

int all_sdk_headers_use(const tensor_spec_t *spec, group_type_t group);
int all_sdk_headers_use(const tensor_spec_t *spec, group_type_t group) {
  local_sec_info_t sec;
  sec.group_type = group == GROUP_3D ? GROUP_3D : GROUP_NORMAL;
  const data_type_t dtype = tpu_type_convert((sg_data_type_t)spec->dtype);
  const float one = fp16_ieee_to_fp32_value(0x3c00);
  return sec.group_type + (int)dtype + (int)one + sg_max(1, 2) + (int)ALIGN(3, 4) + SG_TRIM_UP;
}
