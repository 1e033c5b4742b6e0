// ap_params.cc: pack_ap_params and ap_upper_name (host_op.h), the
// compiler's packing of an AP op's parameters.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>

#include "tpu_runtime/error.h"
#include "tpu_runtime/host_op.h"

namespace tpu_runtime {
namespace {

// custom_param_t of cpu_layer.h: 64 bytes, an int, a float or 16 of either.
union ApParam {
  int int_t;
  float float_t;
  int int_arr_t[16];
  float float_arr_t[16];
};
static_assert(sizeof(ApParam) == 64);
constexpr std::size_t kMaxArray = 16;

int packed_int(const nlohmann::json &value, const std::string &name) {
  if (value.is_boolean()) return value.get<bool>() ? 1 : 0;
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<int>::max()))
    throw Error(fmt::format("AP op parameter '{}': {} does not fit an int (int_t is 32 bits)", name, value.dump()));
  const std::int64_t v = value.get<std::int64_t>();
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    throw Error(fmt::format("AP op parameter '{}': {} does not fit an int (int_t is 32 bits)", name, v));
  return int(v);
}

float packed_float(const nlohmann::json &value, const std::string &name) {
  const double v = value.get<double>();
  if (!std::isfinite(v) || std::fabs(v) > double(std::numeric_limits<float>::max()))
    throw Error(fmt::format("AP op parameter '{}': {} does not fit a float", name, value.dump()));
  return float(v);
}

bool is_integer(const nlohmann::json &value) { return value.is_number_integer() || value.is_boolean(); }

ApParam pack_list(const nlohmann::json &list, const std::string &name) {
  if (list.empty() || list.size() > kMaxArray)
    throw Error(fmt::format("AP op parameter '{}': a list of {} values; custom_param_t holds 1 to {}", name,
                            list.size(), kMaxArray));
  bool all_integers = true;
  for (const auto &v : list) {
    if (!v.is_number() && !v.is_boolean())
      throw Error(fmt::format("AP op parameter '{}': the list holds {}, which is not a number", name, v.dump()));
    all_integers = all_integers && is_integer(v);
  }
  ApParam p{};
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (all_integers)
      p.int_arr_t[i] = packed_int(list[i], name);
    else
      p.float_arr_t[i] = packed_float(list[i], name);
  }
  return p;
}

ApParam pack_one(const nlohmann::json &value, const std::string &name) {
  ApParam p{};
  if (is_integer(value))
    p.int_t = packed_int(value, name);
  else if (value.is_number_float())
    p.float_t = packed_float(value, name);
  else if (value.is_array())
    p = pack_list(value, name);
  else
    throw Error(fmt::format("AP op parameter '{}': {} is not an int, a float, a bool or a list of numbers", name,
                            value.dump()));
  return p;
}

// The (name, value) pairs of the accepted forms, in order.
std::vector<std::pair<std::string, nlohmann::json>> pairs_of(const nlohmann::json &params) {
  std::vector<std::pair<std::string, nlohmann::json>> pairs;
  if (params.is_null()) return pairs;
  if (params.is_object()) {
    if (params.size() > 1)
      throw Error("AP op parameters: a JSON object of several keys loses their order; give a list of one-key "
                  "objects ([{\"axis\": 1}, {\"K\": 10}]) or of [name, value] pairs");
    for (auto it = params.begin(); it != params.end(); ++it) pairs.emplace_back(it.key(), it.value());
    return pairs;
  }
  if (!params.is_array()) throw Error(fmt::format("AP op parameters: expected a list, not {}", params.dump()));
  for (const auto &item : params) {
    if (item.is_object() && item.size() == 1)
      pairs.emplace_back(item.begin().key(), item.begin().value());
    else if (item.is_array() && item.size() == 2 && item[0].is_string())
      pairs.emplace_back(item[0].get<std::string>(), item[1]);
    else
      throw Error(fmt::format("AP op parameters: {} is neither a one-key object nor a [name, value] pair",
                              item.dump()));
  }
  return pairs;
}

}  // namespace

std::vector<std::uint8_t> pack_ap_params(const nlohmann::json &params_in_order) {
  const auto pairs = pairs_of(params_in_order);
  std::vector<std::uint8_t> bytes((1 + pairs.size()) * sizeof(ApParam), 0);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const ApParam p = pack_one(pairs[i].second, pairs[i].first);
    std::memcpy(bytes.data() + (1 + i) * sizeof(ApParam), &p, sizeof p);
  }
  return bytes;
}

std::string ap_upper_name(const std::string &op) {
  std::string name;
  for (char c : op) name += char(std::toupper(static_cast<unsigned char>(c)));
  // The compiler deletes the first "AP." (C1).
  if (const std::size_t at = name.find("AP."); at != std::string::npos) name.erase(at, 3);
  return name;
}

}  // namespace tpu_runtime
