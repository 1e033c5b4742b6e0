// text_tensors.cc: see text_tensors.h.
#include "model/text_tensors.h"

#include <fmt/format.h>

#include "io/number_text.h"

namespace tpu_runtime::detail {

TensorDecl input_decl(const ModelTensor &t) { return {t.name, t.shape, t.dtype, t.text}; }

npz::Arrays outputs_as_text(const ModelDescription &d, npz::Arrays outputs) {
  for (std::size_t i : d.outputs) {
    const ModelTensor &t = d.tensors[i];
    const auto it = outputs.find(t.name);
    if (t.text && it != outputs.end())
      it->second = text_of_numbers(it->second, t.dtype, fmt::format("output '{}'", t.name));
  }
  return outputs;
}

npz::Array output_numbers(const ModelTensor &t, const npz::Array &array, std::string_view where) {
  if (!npz::is_text_dtype(array.dtype)) return array;
  return numbers_of_text(array, t.dtype, where);
}

}  // namespace tpu_runtime::detail
