// caller_arrays.cc: see caller_arrays.h.
#include "model/caller_arrays.h"

#include <fmt/format.h>

#include "io/number_text.h"

namespace tpu_runtime::detail {

TensorDecl input_decl(const ModelTensor &t) { return {t.name, t.shape, t.dtype, t.text, t.scalar}; }

npz::Arrays outputs_for_caller(const ModelDescription &d, npz::Arrays outputs) {
  for (std::size_t i : d.outputs) {
    const ModelTensor &t = d.tensors[i];
    const auto it = outputs.find(t.name);
    if (it == outputs.end()) continue;
    if (t.text) it->second = text_of_numbers(it->second, t.dtype, fmt::format("output '{}'", t.name));
    if (t.scalar) it->second.shape.clear();
  }
  return outputs;
}

npz::Array output_numbers(const ModelTensor &t, const npz::Array &array, std::string_view where) {
  npz::Array numbers = npz::is_text_dtype(array.dtype) ? numbers_of_text(array, t.dtype, where) : array;
  if (t.scalar && numbers.shape.empty()) numbers.shape = npz_shape(t.shape);
  return numbers;
}

}  // namespace tpu_runtime::detail
