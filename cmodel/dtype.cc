#include "dtype.h"

namespace cmodel {

const char *dtype_name(data_type_t t) {
  switch (t) {
    case DT_INT8: return "DT_INT8";
    case DT_UINT8: return "DT_UINT8";
    case DT_INT16: return "DT_INT16";
    case DT_UINT16: return "DT_UINT16";
    case DT_INT32: return "DT_INT32";
    case DT_UINT32: return "DT_UINT32";
    case DT_FP16: return "DT_FP16";
    case DT_BFP16: return "DT_BFP16";
    case DT_FP32: return "DT_FP32";
    case DT_INT4: return "DT_INT4";
    case DT_UINT4: return "DT_UINT4";
    case DT_FP8E5M2: return "DT_FP8E5M2";
    case DT_FP8E4M3: return "DT_FP8E4M3";
    case DT_FP20: return "DT_FP20";
    case DT_TF32: return "DT_TF32";
  }
  return "(invalid dtype)";
}

}  // namespace cmodel
