// net_json.h: a layer of a JSON net description (docs/tpu-model.md, "Net
// description"), for tests that write nets inline.
#pragma once

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace test {

inline nlohmann::ordered_json net_layer(const std::string &name, const std::string &op, nlohmann::ordered_json params,
                                        nlohmann::ordered_json inputs, nlohmann::ordered_json outputs) {
  return {{"name", name}, {"op", op}, {"params", std::move(params)}, {"inputs", std::move(inputs)},
          {"outputs", std::move(outputs)}};
}

}  // namespace test
