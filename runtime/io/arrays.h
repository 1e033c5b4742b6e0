// arrays.h (private): tensors as .npy arrays, for every room that reads or
// writes them (model build and run, the op tester, .bmodel info): the
// storage dtype of each SDK dtype, shape checks against what was declared,
// decoding to and encoding from floats, and hex text for packed bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tpu_runtime/dtype.h"
#include "tpu_runtime/npz.h"

namespace tpu_runtime::detail {

// The .npy dtype a tensor of `dtype` is stored as (bf16: "<u2", see npz.h).
std::string storage_dtype(Dtype dtype);

int64_t element_count(const Shape &shape);

// A tensor the caller must provide (a net or model input).
struct TensorDecl {
  std::string name;
  Shape shape;
  Dtype dtype;
  // A text input (ModelTensor::text): the caller may give its values as a
  // text array ("<U<n>"), which narrowed_inputs reads as numbers.
  bool text = false;
  // A scalar input (ModelTensor::scalar): a rank-0 array is taken as the
  // input's one element.
  bool scalar = false;
};

// Every declared tensor present in `arrays` with its shape and storage
// dtype, and no other array; `what` names the .npz ("in.npz").
void check_arrays(const std::vector<TensorDecl> &declared, const npz::Arrays &arrays, std::string_view what);

// The arrays for `declared` inputs, those of a wider type than their input
// converted without loss: int64 for an int32 input, uint64 for a uint32
// one (every value must fit: refused naming the array, the element and the
// value otherwise), bool for a uint8 input (0 / 1). The ONNX importer holds
// int64, uint64 and bool tensors that way, so a caller passes the ONNX
// model's own types. A text array for a text input is read as numbers of
// the input's dtype (number_text.h), refused naming the element that is
// not one. Other arrays (float64 included: rounding it to fp32
// is the caller's explicit choice) are returned as they are, for
// check_arrays to judge.
npz::Arrays narrowed_inputs(const std::vector<TensorDecl> &declared, const npz::Arrays &arrays, std::string_view what);

// The values of `array` (which holds `dtype`'s storage type) as floats.
std::vector<float> decode_array(const npz::Array &array, Dtype dtype);
// `values` stored as `dtype` (rounded to nearest even).
npz::Array encode_array(const Shape &shape, Dtype dtype, std::span<const float> values);
// The same in doubles: exact for every integer type (tpu_runtime/dtype.h).
std::vector<double> decode_values(const npz::Array &array, Dtype dtype);
npz::Array encode_values(const Shape &shape, Dtype dtype, std::span<const double> values);
std::vector<int64_t> npz_shape(const Shape &shape);
std::string shape_text(const Shape &shape);

std::string to_hex(std::span<const uint8_t> bytes);
// Throws Error("<where>: ...") for odd length or a non-hex digit.
std::vector<uint8_t> from_hex(std::string_view text, std::string_view where);

}  // namespace tpu_runtime::detail
