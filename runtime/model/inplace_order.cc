// inplace_order.cc: the run order of layers that update tensors in place
// (inplace_order.h).
#include "model/inplace_order.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <queue>
#include <set>

#include "tpu_runtime/error.h"

namespace tpu_runtime::detail {
namespace {

// "must run before" edges between layers, each with why.
struct OrderGraph {
  std::vector<std::set<std::size_t>> successors;
  std::map<std::pair<std::size_t, std::size_t>, std::string> why;

  explicit OrderGraph(std::size_t layers) : successors(layers) {}
  void add(std::size_t before, std::size_t after, std::string reason) {
    if (before == after || !successors[before].insert(after).second) return;
    why[{before, after}] = std::move(reason);
  }
};

std::string quoted(std::size_t i, const NetDescription &net) { return fmt::format("'{}'", net.layers[i].name); }

// Refuses an in-place update that would lose values, whatever the order.
void check_inplace_tensor(const NetDescription &net, std::size_t w, std::size_t k,
                          const std::map<std::string, std::size_t> &updater, std::string_view source) {
  const NetLayer &l = net.layers[w];
  const std::string &t = l.inputs[k];
  const auto refuse = [&](const std::string &problem) {
    return Error(fmt::format("{}: {}: op '{}' updates its input {} ('{}') in place (metadata_{}: output {} takes its "
                             "memory), but {}",
                             source, net.layer_label(w), l.op, k, t, l.op, k, problem));
  };
  if (k >= l.outputs.size())
    throw refuse(fmt::format("the layer has only {} output(s); in-place input i needs output i", l.outputs.size()));
  for (const NetWeight &weight : net.weights)
    if (weight.name == t)
      throw refuse("it is a weight, whose values must stay for the next runs; give the layer a copy of it "
                   "(another layer's output) instead");
  if (std::find(net.outputs.begin(), net.outputs.end(), t) != net.outputs.end())
    throw refuse("it is a net output: its values would be overwritten before the run ends");
  for (std::size_t j = 0; j < l.inputs.size(); ++j)
    if (j != k && l.inputs[j] == t)
      throw refuse(fmt::format("the layer also reads it as input {}, which would see it change while it is read", j));
  if (const auto it = updater.find(t); it != updater.end() && it->second != w)
    throw refuse(fmt::format("{} updates it in place too; one layer at most may update a tensor in place",
                             net.layer_label(it->second)));
}

// The edges: producer before consumer, and every other reader of a tensor
// before the layer that updates it in place.
OrderGraph order_graph(const NetDescription &net, const std::vector<int> &inplace_inputs,
                       const std::vector<bool> &stateful, std::string_view source) {
  std::map<std::string, std::size_t> producer, updater;
  std::map<std::string, std::vector<std::size_t>> readers;
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    for (const std::string &t : net.layers[i].inputs) readers[t].push_back(i);
    for (const std::string &t : net.layers[i].outputs) producer[t] = i;
  }
  OrderGraph g(net.layers.size());
  for (std::size_t i = 0; i < net.layers.size(); ++i)
    for (const std::string &t : net.layers[i].inputs)
      if (const auto p = producer.find(t); p != producer.end())
        g.add(p->second, i, fmt::format("{} reads '{}', which {} writes", quoted(i, net), t, quoted(p->second, net)));
  for (std::size_t w = 0; w < net.layers.size(); ++w)
    for (int k = 0; k < inplace_inputs[w]; ++k) {
      check_inplace_tensor(net, w, std::size_t(k), updater, source);
      const std::string &t = net.layers[w].inputs[std::size_t(k)];
      updater[t] = w;
      for (std::size_t r : readers[t])
        g.add(r, w, fmt::format("{} reads '{}' before {} updates it in place", quoted(r, net), t, quoted(w, net)));
    }
  // Stateful layers in the net's order: each before the next.
  std::size_t previous = net.layers.size();
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    if (!stateful[i]) continue;
    if (previous < net.layers.size())
      g.add(previous, i, fmt::format("both keep state: {} comes first in the net", quoted(previous, net)));
    previous = i;
  }
  return g;
}

// A cycle among the layers Kahn's algorithm could not order (each has a
// predecessor among them), as "a must run before b (why), b ...".
std::string describe_cycle(const NetDescription &net, const OrderGraph &g, const std::vector<bool> &done) {
  std::vector<std::vector<std::size_t>> predecessors(g.successors.size());
  for (std::size_t a = 0; a < g.successors.size(); ++a)
    for (std::size_t b : g.successors[a])
      if (!done[a] && !done[b]) predecessors[b].push_back(a);
  std::size_t at = std::size_t(std::find(done.begin(), done.end(), false) - done.begin());
  std::vector<std::size_t> path;
  std::vector<int> seen(g.successors.size(), -1);
  while (seen[at] < 0) {
    seen[at] = int(path.size());
    path.push_back(at);
    at = predecessors[at].front();
  }
  // path[seen[at]..] walked backwards is the cycle; reverse it into run order.
  std::vector<std::size_t> cycle(path.begin() + seen[at], path.end());
  std::reverse(cycle.begin(), cycle.end());
  std::vector<std::string> steps;
  for (std::size_t k = 0; k < cycle.size(); ++k) {
    const std::size_t a = cycle[k], b = cycle[(k + 1) % cycle.size()];
    steps.push_back(fmt::format("{} must run before {} ({})", quoted(a, net), quoted(b, net), g.why.at({a, b})));
  }
  return fmt::format("{}", fmt::join(steps, ", "));
}

}  // namespace

bool InplaceOrder::identity() const {
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] != i) return false;
  return true;
}

InplaceOrder order_for_inplace(const NetDescription &net, const std::vector<int> &inplace_inputs,
                               const std::vector<bool> &stateful, std::string_view source) {
  const OrderGraph g = order_graph(net, inplace_inputs, stateful, source);
  std::vector<int> pending(net.layers.size(), 0);
  for (const auto &succ : g.successors)
    for (std::size_t b : succ) ++pending[b];
  // Kahn's algorithm, the lowest net index first: the net's order where it holds.
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < pending.size(); ++i)
    if (pending[i] == 0) ready.push(i);
  InplaceOrder result;
  std::vector<bool> done(net.layers.size(), false);
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    done[i] = true;
    result.order.push_back(i);
    for (std::size_t b : g.successors[i])
      if (--pending[b] == 0) ready.push(b);
  }
  if (result.order.size() != net.layers.size())
    throw Error(fmt::format("{}: the layers cannot be ordered so that each in-place update runs after every other "
                            "reader of its tensor: {}",
                            source, describe_cycle(net, g, done)));
  for (std::size_t k = 0; k < result.order.size(); ++k)
    if (result.order[k] > k)
      result.moves.push_back(fmt::format("{} runs as layer {}, earlier than in the net: it reads a tensor that a "
                                         "layer before it in the net updates in place",
                                         net.layer_label(result.order[k]), k));
  return result;
}

NetDescription reordered_net(const NetDescription &net, const std::vector<std::size_t> &order) {
  NetDescription out;
  out.name = net.name;
  out.inputs = net.inputs;
  out.weights = net.weights;
  out.outputs = net.outputs;
  for (std::size_t i : order) out.layers.push_back(net.layers[i]);
  return out;
}

}  // namespace tpu_runtime::detail
