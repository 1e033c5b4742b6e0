// number_text.h (private): numbers as text and text as numbers, for a
// model's text inputs and outputs (an ONNX string tensor cast to or from a
// number, docs/onnx.md "String tensors"). The forms are numpy's, which is
// what ONNX's own Cast reference follows.
#pragma once

#include <string>
#include <string_view>

#include "tpu_runtime/dtype.h"
#include "tpu_runtime/npz.h"

namespace tpu_runtime::detail {

// One value as text: a float in the shortest form that reads back to the
// same value of `dtype` (fp32, fp16, bf16), laid out as Python's repr:
// "0.5", "3.0", "1e-07", "1.5e+16", "nan", "inf", "-inf"; an integer in
// decimal.
std::string float_text(float value, Dtype dtype);

// Each element of `array` (in `dtype`'s storage dtype) as text, a "<U<n>"
// array of the same shape.
npz::Array text_of_numbers(const npz::Array &array, Dtype dtype, std::string_view where);

// Each element of a text array read as a number of `dtype`, returned in its
// storage dtype. Floats: decimal or exponent notation, or nan / inf /
// infinity in any case, with an optional sign and surrounding white space,
// rounded to nearest (fp16 and bf16 through fp32). Integers: a decimal
// integer `dtype` holds. Anything else is refused naming `where`, the
// element and its text.
npz::Array numbers_of_text(const npz::Array &array, Dtype dtype, std::string_view where);

}  // namespace tpu_runtime::detail
