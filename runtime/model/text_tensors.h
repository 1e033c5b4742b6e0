// text_tensors.h (private): a model's text inputs and outputs (net.h, "Text
// inputs and outputs") where a run takes and gives its arrays.
#pragma once

#include <string_view>

#include "io/arrays.h"
#include "tpu_runtime/model_description.h"
#include "tpu_runtime/npz.h"

namespace tpu_runtime::detail {

// What a run asks of the array for input `t`.
TensorDecl input_decl(const ModelTensor &t);

// `outputs` (in their storage dtypes) with each text output of `d` as text.
npz::Arrays outputs_as_text(const ModelDescription &d, npz::Arrays outputs);

// The numbers of output `t` in `array`: a text array read back as numbers
// of t's dtype, any other array as it is (for comparisons).
npz::Array output_numbers(const ModelTensor &t, const npz::Array &array, std::string_view where);

}  // namespace tpu_runtime::detail
