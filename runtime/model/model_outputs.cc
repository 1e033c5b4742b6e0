// model_outputs.cc: the reference arrays a model stores, and the comparison
// of a run's outputs with them (or with any expected arrays).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>

#include "io/arrays.h"
#include "model/caller_arrays.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/model.h"

namespace tpu_runtime {

namespace {

npz::Arrays stored_arrays(const ModelFile &model, std::string_view where, bool inputs) {
  const ModelDescription d = describe_model(model, where);
  npz::Arrays arrays;
  for (const auto &[tensor, section] : inputs ? d.reference_inputs : d.reference_outputs) {
    const Section *s = model.find_section(section);
    arrays[tensor] = npz::parse_npy(s->data, fmt::format("{}: section '{}'", where, section));
  }
  return arrays;
}

}  // namespace

npz::Arrays stored_reference_inputs(const ModelFile &model, std::string_view where) {
  return stored_arrays(model, where, true);
}

npz::Arrays stored_reference_outputs(const ModelFile &model, std::string_view where) {
  return stored_arrays(model, where, false);
}

std::vector<OutputComparison> compare_outputs(const ModelDescription &model, const npz::Arrays &actual,
                                              const npz::Arrays &expected, const std::optional<Tolerance> &tolerance) {
  std::vector<OutputComparison> results;
  for (std::size_t index : model.outputs) {
    const ModelTensor &t = model.tensors[index];
    OutputComparison c;
    c.name = t.name;
    c.dtype = t.dtype;
    c.tolerance = tolerance ? resolved_model_tolerance(*tolerance, t.dtype) : model_output_tolerance(t.dtype);
    // Text (a text output, or a reference given as text) is compared as the numbers it writes.
    std::optional<npz::Array> got, want;
    auto numbers_of = [&](const npz::Arrays &arrays, std::string_view what, std::optional<npz::Array> &out) {
      const auto it = arrays.find(t.name);
      if (it == arrays.end()) return;
      try {
        out = detail::output_numbers(t, it->second, what);
      } catch (const Error &e) {
        c.why = e.what();
      }
    };
    numbers_of(actual, "the output", got);
    numbers_of(expected, "the reference", want);
    if (!c.why.empty()) {
      // a text array whose elements are not numbers
    } else if (!got) {
      c.why = "the run produced no such output";
    } else if (!want) {
      c.why = "the reference has no array of that name";
    } else if (want->shape != detail::npz_shape(t.shape)) {
      c.why = fmt::format("the reference has shape [{}], the output is {}", fmt::join(want->shape, ","),
                          detail::shape_text(t.shape));
    } else if (want->dtype != "<f4" && want->dtype != detail::storage_dtype(t.dtype)) {
      c.why = fmt::format("the reference has dtype {}; expected <f4 or the output's own {}", want->dtype,
                          detail::storage_dtype(t.dtype));
    } else {
      const std::vector<float> a = detail::decode_array(*got, t.dtype);
      const std::vector<float> e =
          detail::decode_array(*want, want->dtype == "<f4" ? Dtype::fp32 : t.dtype);
      c.similarity = compare(a, e, t.dtype);
      c.compared = true;
      c.passed = within(c.similarity, c.tolerance, &c.why);
      // Named before any figure: the run never wrote these elements.
      if (const Unwritten u = find_unwritten(got->data, t.dtype, e); u.count) {
        c.passed = false;
        c.why = fmt::format("{} of {} elements were never written (they still hold the 0xFF poison); the first at "
                            "index {}, where the reference is {}",
                            u.count, a.size(), u.first, e[std::size_t(u.first)]);
      }
    }
    results.push_back(std::move(c));
  }
  return results;
}

}  // namespace tpu_runtime
