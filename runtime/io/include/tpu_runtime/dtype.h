// dtype.h: the element types the host side moves around, with the SG
// numbering of tensor_spec_t and the .npz spelling, and tensor shapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tpu_runtime {

// A tensor shape, outermost dimension first.
using Shape = std::vector<int>;

enum class Dtype { fp32, fp16, bf16, int8, uint8, int16, uint16, int32, uint32 };

struct DtypeInfo {
  Dtype dtype;
  const char *name;  // "fp32", "fp16", "bf16", "int8", ...
  int sg_dtype;      // sg_data_type_t value (common_def.h)
  std::size_t bytes;
  bool is_float;
};

const DtypeInfo &dtype_info(Dtype dtype);
inline const char *dtype_name(Dtype dtype) { return dtype_info(dtype).name; }
inline std::size_t dtype_size(Dtype dtype) { return dtype_info(dtype).bytes; }
// The emulated global memory (DDR) of both chips, 4 GiB
// (cmodel/chip_spec.cc): no tensor, op case or memory plan can be larger,
// so sizes beyond it are refused before anything is allocated.
inline constexpr std::uint64_t kGlobalMemoryBytes = std::uint64_t(1) << 32;

// The closed range of integers an integer dtype holds (for a float dtype,
// uint32's).
std::pair<double, double> integer_range(Dtype dtype);

// Accepts the names above plus "float32", "float16", "bfloat16". Throws Error.
Dtype parse_dtype(std::string_view name);
// From an SG dtype value; throws Error for values without a host type.
Dtype dtype_from_sg(int sg_dtype);

// Host conversions for the float types, rounding to nearest even (NaN stays
// NaN, overflow goes to infinity), independent of the emulator's own code.
uint16_t float_to_fp16(float value);
float fp16_to_float(uint16_t bits);
uint16_t float_to_bf16(float value);
float bf16_to_float(uint16_t bits);

// `count` fp32 values stored as `dtype` (rounded as above; integer types
// round to nearest even and saturate) and back.
void encode_floats(Dtype dtype, const float *values, std::size_t count, void *out);
void decode_floats(Dtype dtype, const void *in, std::size_t count, float *values);
// The same with doubles, which hold every integer type's values exactly
// (an int32 above 2^24 too); the float types go through fp32 as above.
void encode_values(Dtype dtype, const double *values, std::size_t count, void *out);
void decode_values(Dtype dtype, const void *in, std::size_t count, double *values);

}  // namespace tpu_runtime
