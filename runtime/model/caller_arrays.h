// caller_arrays.h (private): a model's text and scalar inputs and outputs
// (net.h, "Text inputs and outputs", "Scalar inputs and outputs") where a
// run takes and gives its arrays.
#pragma once

#include <string_view>

#include "io/arrays.h"
#include "tpu_runtime/model_description.h"
#include "tpu_runtime/npz.h"

namespace tpu_runtime::detail {

// What a run asks of the array for input `t`.
TensorDecl input_decl(const ModelTensor &t);

// `outputs` (in their storage dtypes, in the net's shapes) as the caller
// gets them: each text output of `d` as text, each scalar output rank 0.
npz::Arrays outputs_for_caller(const ModelDescription &d, npz::Arrays outputs);

// The numbers of output `t` in `array`, in t's shape: a text array read
// back as numbers of t's dtype, a scalar's rank-0 array as [1], any other
// array as it is (for comparisons).
npz::Array output_numbers(const ModelTensor &t, const npz::Array &array, std::string_view where);

}  // namespace tpu_runtime::detail
