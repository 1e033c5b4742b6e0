// layer_merging.cc: identical stateless layers computed once (layer_merging.h).
#include "model/layer_merging.h"

#include <algorithm>
#include <map>

namespace tpu_runtime::detail {
namespace {

// Tensors as the merging sees them: every tensor is held by a canonical
// one (itself, or the matching output of the layer it was merged into),
// which the model calls by its display name.
class TensorNames {
 public:
  const std::string &holder(const std::string &name) const {
    const auto it = holder_.find(name);
    return it == holder_.end() ? name : it->second;
  }
  const std::string &display(const std::string &name) const {
    const std::string &h = holder(name);
    const auto it = display_.find(h);
    return it == display_.end() ? h : it->second;
  }
  void hold(const std::string &name, const std::string &by) { holder_[name] = holder(by); }
  void show_as(const std::string &name, const std::string &shown) { display_[holder(name)] = shown; }

 private:
  std::map<std::string, std::string> holder_, display_;
};

// What makes two layers compute the same thing.
struct LayerKey {
  std::string op;
  std::vector<uint8_t> params;
  std::vector<std::string> inputs;  // holders
  std::size_t outputs = 0;
  std::vector<Dtype> out_dtypes;
  bool dynamic = false;
  auto operator<=>(const LayerKey &) const = default;
};

bool is_output(const NetDescription &net, const std::string &t) {
  return std::find(net.outputs.begin(), net.outputs.end(), t) != net.outputs.end();
}

// Layer j's outputs held by layer f's: false (nothing changed) when an
// output of each is a net output.
bool merge_outputs(const NetDescription &net, std::size_t f, std::size_t j, TensorNames &names) {
  const NetLayer &first = net.layers[f], &later = net.layers[j];
  for (std::size_t k = 0; k < later.outputs.size(); ++k)
    if (is_output(net, later.outputs[k]) && is_output(net, names.display(first.outputs[k]))) return false;
  for (std::size_t k = 0; k < later.outputs.size(); ++k) {
    names.hold(later.outputs[k], first.outputs[k]);
    if (is_output(net, later.outputs[k])) names.show_as(first.outputs[k], later.outputs[k]);
  }
  return true;
}

}  // namespace

LayerMerging merge_identical_layers(const NetDescription &net, const std::vector<PackedParams> &packed,
                                    const std::vector<bool> &stateless) {
  LayerMerging result;
  TensorNames names;
  std::map<LayerKey, std::size_t> first_of;
  std::vector<std::pair<std::size_t, std::size_t>> merges;  // (dropped, kept)
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const NetLayer &l = net.layers[i];
    if (!stateless[i]) {
      result.kept.push_back(i);
      continue;
    }
    LayerKey key{l.op, {packed[i].bytes().begin(), packed[i].bytes().end()}, {}, l.outputs.size(), l.out_dtypes,
                 l.dynamic};
    for (const std::string &t : l.inputs) key.inputs.push_back(names.holder(t));
    const auto [it, fresh] = first_of.emplace(std::move(key), i);
    if (!fresh && merge_outputs(net, it->second, i, names)) {
      merges.emplace_back(i, it->second);
      continue;
    }
    result.kept.push_back(i);
  }
  for (const auto &[dropped, kept] : merges) {
    MergedLayer m{net.layers[dropped].name, net.layers[dropped].op, net.layers[kept].name, {}};
    for (const std::string &t : net.layers[dropped].outputs) m.outputs.emplace_back(t, names.display(t));
    result.merged.push_back(std::move(m));
  }
  // Every tensor the kept layers name, by its display name.
  for (std::size_t i : result.kept)
    for (const auto *list : {&net.layers[i].inputs, &net.layers[i].outputs})
      for (const std::string &t : *list)
        if (names.display(t) != t) result.renames.emplace_back(t, names.display(t));
  return result;
}

NetDescription merged_net(const NetDescription &net, const LayerMerging &merging) {
  const std::map<std::string, std::string> rename(merging.renames.begin(), merging.renames.end());
  const auto renamed = [&](const std::string &t) {
    const auto it = rename.find(t);
    return it == rename.end() ? t : it->second;
  };
  NetDescription out;
  out.name = net.name;
  out.inputs = net.inputs;
  out.weights = net.weights;
  out.outputs = net.outputs;
  for (std::size_t i : merging.kept) {
    NetLayer l = net.layers[i];
    for (std::string &t : l.inputs) t = renamed(t);
    for (std::string &t : l.outputs) t = renamed(t);
    out.layers.push_back(std::move(l));
  }
  return out;
}

}  // namespace tpu_runtime::detail
