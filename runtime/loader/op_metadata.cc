// op_metadata.cc: checking, storing and showing an op's declared metadata
// (op_metadata.h).
#include "tpu_runtime/op_metadata.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "tpu_runtime/error.h"

namespace tpu_runtime {
namespace {

bool power_of_two(int v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

bool OpMetadata::operator==(const OpMetadata &o) const {
  if (declared != o.declared || inplace_inputs != o.inplace_inputs || elementwise != o.elementwise ||
      stateless != o.stateless || multi_core != o.multi_core || input_layouts.size() != o.input_layouts.size())
    return false;
  for (std::size_t i = 0; i < input_layouts.size(); ++i) {
    const InputLayout &a = input_layouts[i], &b = o.input_layouts[i];
    if (a.input != b.input || a.alignment != b.alignment || a.innermost_multiple != b.innermost_multiple) return false;
  }
  return true;
}

void check_op_metadata(const OpMetadata &m, const std::string &op, int num_inputs, const std::string &who) {
  const auto refuse = [&](const std::string &field, const std::string &problem) {
    return Error(fmt::format("{}: op '{}' metadata: {} {}", who, op, field, problem));
  };
  if (m.inplace_inputs < 0)
    throw refuse("num_inplace_inputs", fmt::format("is {}; it counts inputs, 0 or more", m.inplace_inputs));
  if (num_inputs >= 0 && m.inplace_inputs > num_inputs)
    throw refuse("num_inplace_inputs", fmt::format("is {}, but the layer has only {} input{}", m.inplace_inputs,
                                                   num_inputs, num_inputs == 1 ? "" : "s"));
  std::set<int> seen;
  for (std::size_t k = 0; k < m.input_layouts.size(); ++k) {
    const InputLayout &l = m.input_layouts[k];
    const std::string field = fmt::format("input_layouts[{}]", k);
    if (l.input < 0 || (num_inputs >= 0 && l.input >= num_inputs))
      throw refuse(field + ".input", fmt::format("is {}, not an input of the layer (0..{})", l.input,
                                                 num_inputs >= 0 ? num_inputs - 1 : 0));
    if (!seen.insert(l.input).second)
      throw refuse(field + ".input", fmt::format("is {}, which an earlier entry already lists", l.input));
    if (l.alignment != 0 && (!power_of_two(l.alignment) || l.alignment > kMaxInputAlignment))
      throw refuse(field + ".alignment",
                   fmt::format("is {}; it must be 0 (none) or a power of two up to {}", l.alignment, kMaxInputAlignment));
    if (l.innermost_multiple < 0 || l.innermost_multiple > kMaxInnermostMultiple)
      throw refuse(field + ".innermost_multiple", fmt::format("is {}; it must be 0 (none) to {} elements",
                                                              l.innermost_multiple, kMaxInnermostMultiple));
  }
}

nlohmann::ordered_json metadata_json(const OpMetadata &m) {
  nlohmann::ordered_json layouts = nlohmann::ordered_json::array();
  for (const InputLayout &l : m.input_layouts)
    layouts.push_back({{"input", l.input}, {"alignment", l.alignment}, {"innermost_multiple", l.innermost_multiple}});
  return {{"inplace_inputs", m.inplace_inputs},
          {"elementwise", m.elementwise},
          {"stateless", m.stateless},
          {"input_layouts", std::move(layouts)},
          {"multi_core", m.multi_core}};
}

OpMetadata metadata_from_json(const nlohmann::json &j, const std::string &op, int num_inputs,
                              const std::string &where) {
  const auto fail = [&](const std::string &problem) { return Error(fmt::format("{}: {}", where, problem)); };
  if (!j.is_object()) throw fail("must be an object");
  const auto integer = [&](const nlohmann::json &o, const char *key) {
    if (!o.contains(key) || !o[key].is_number_integer()) throw fail(fmt::format("'{}' must be an integer", key));
    const std::int64_t v = o[key].get<std::int64_t>();
    if (v < INT32_MIN || v > INT32_MAX) throw fail(fmt::format("'{}' is {}, out of range", key, v));
    return int(v);
  };
  const auto flag = [&](const char *key) {
    if (!j.contains(key) || !j[key].is_boolean()) throw fail(fmt::format("'{}' must be true or false", key));
    return j[key].get<bool>();
  };
  OpMetadata m;
  m.declared = true;
  m.inplace_inputs = integer(j, "inplace_inputs");
  m.elementwise = flag("elementwise");
  m.stateless = flag("stateless");
  m.multi_core = j.contains("multi_core") && flag("multi_core");
  if (!j.contains("input_layouts") || !j["input_layouts"].is_array()) throw fail("'input_layouts' must be an array");
  for (const nlohmann::json &l : j["input_layouts"]) {
    if (!l.is_object()) throw fail("each of 'input_layouts' must be an object");
    m.input_layouts.push_back({integer(l, "input"), integer(l, "alignment"), integer(l, "innermost_multiple")});
  }
  check_op_metadata(m, op, num_inputs, where);
  return m;
}

std::string metadata_text(const OpMetadata &m) {
  if (!m.declared) return "none declared (no metadata hook: the defaults apply)";
  std::string text = fmt::format("{}, {}, in-place inputs {}", m.elementwise ? "element-wise" : "not element-wise",
                                 m.stateless ? "stateless" : "stateful", m.inplace_inputs);
  for (const InputLayout &l : m.input_layouts) {
    std::vector<std::string> wants;
    if (l.alignment != 0) wants.push_back(fmt::format("{}-byte aligned", l.alignment));
    if (l.innermost_multiple != 0)
      wants.push_back(fmt::format("innermost dim padded to a multiple of {}", l.innermost_multiple));
    if (wants.empty()) wants.push_back("default");
    text += fmt::format(", input {} layout: {}", l.input, fmt::join(wants, " and "));
  }
  if (m.multi_core) text += ", multi-core";
  return text;
}

}  // namespace tpu_runtime
