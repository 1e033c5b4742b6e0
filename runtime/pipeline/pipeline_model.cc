// pipeline_model.cc: AutoPipe on model files (pipeline.h): a model's layers
// as planner figures, tpu_model build --pipeline (the plan and the
// micro-batch model stored in the file), reading the plan back.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "io/arrays.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/pipeline.h"

namespace tpu_runtime {

using Json = nlohmann::json;

namespace {

// The build-time estimate of a layer outside a group: its global run's
// total_us ("profile" of its metadata entry); 0 when it has none (a host
// layer, whose time is measured only when it runs).
double layer_estimate_us(const ModelFile &model, std::size_t i) {
  const Json &layers = model.metadata.at("layers");
  const Json &l = layers.at(i);
  if (!l.contains("profile") || !l["profile"].is_object()) return 0;
  const Json &p = l["profile"];
  return p.contains("total_us") && p["total_us"].is_number() ? p["total_us"].get<double>() : 0;
}

// A tensor's memory: itself, or the one it updates in place (followed to
// the end of the chain).
std::size_t memory_root(const ModelDescription &d, std::size_t t) {
  for (std::size_t hops = 0; hops <= d.tensors.size() && !d.tensors[t].in_place_of.empty(); ++hops) {
    const ModelTensor *source = d.find_tensor(d.tensors[t].in_place_of);
    if (!source) break;
    t = std::size_t(source - d.tensors.data());
  }
  return t;
}

struct Interval {
  int start = -1, end = -1;
  void cover(int i) {
    start = start < 0 ? i : std::min(start, i);
    end = std::max(end, i);
  }
};

// From the first layer touching each activation (its producer, or for a
// model input its first reader) to the last, per memory root.
std::map<std::size_t, Interval> activation_intervals(const ModelDescription &d) {
  std::map<std::size_t, Interval> live;
  for (std::size_t i = 0; i < d.layers.size(); ++i)
    for (const std::vector<std::size_t> *list : {&d.layers[i].inputs, &d.layers[i].outputs})
      for (std::size_t t : *list)
        if (d.tensors[t].role != TensorRole::weight) live[memory_root(d, t)].cover(int(i));
  return live;
}

Json link_json(const PipelineLink &link) {
  return {{"name", link.name}, {"latency_us", link.latency_us}, {"bytes_per_us", link.bytes_per_us},
          {"why", link.why}};
}

Json stage_json(const PipelineStage &s) {
  return {{"first", s.first},
          {"last", s.last},
          {"compute_us", s.compute_us},
          {"transfer_in_us", s.transfer_in_us},
          {"transfer_out_us", s.transfer_out_us},
          {"time_us", s.time_us},
          {"bytes_in", s.bytes_in},
          {"bytes_out", s.bytes_out},
          {"weight_bytes", s.weight_bytes},
          {"activation_bytes", s.activation_bytes},
          {"memory_bytes", s.memory_bytes()}};
}

// Reads the stored entry, with a message naming the key for anything off.
class Reader {
 public:
  explicit Reader(std::string where) : where_(std::move(where)) {}
  const Json &member(const Json &j, const std::string &path, const char *key) const {
    if (!j.is_object() || !j.contains(key)) fail(path + "." + key, "is missing");
    return j[key];
  }
  double number(const Json &j, const std::string &path, const char *key) const {
    const Json &v = member(j, path, key);
    if (!v.is_number() || v.get<double>() < 0) fail(path + "." + key, "must be a number >= 0");
    return v.get<double>();
  }
  uint64_t count(const Json &j, const std::string &path, const char *key) const {
    const Json &v = member(j, path, key);
    // Signed in a model built in this process, unsigned once read back.
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      fail(path + "." + key, "must be an integer >= 0");
    return v.get<uint64_t>();
  }
  std::string text(const Json &j, const std::string &path, const char *key) const {
    const Json &v = member(j, path, key);
    if (!v.is_string()) fail(path + "." + key, "must be a string");
    return v.get<std::string>();
  }
  [[noreturn]] void fail(const std::string &path, const std::string &problem) const {
    throw Error(fmt::format("{}: {}: {}", where_, path, problem));
  }

 private:
  std::string where_;
};

PipelineStage read_stage(const Reader &r, const Json &j, const std::string &p) {
  PipelineStage s;
  s.first = int(r.count(j, p, "first"));
  s.last = int(r.count(j, p, "last"));
  s.compute_us = r.number(j, p, "compute_us");
  s.transfer_in_us = r.number(j, p, "transfer_in_us");
  s.transfer_out_us = r.number(j, p, "transfer_out_us");
  s.time_us = r.number(j, p, "time_us");
  s.bytes_in = r.count(j, p, "bytes_in");
  s.bytes_out = r.count(j, p, "bytes_out");
  s.weight_bytes = r.count(j, p, "weight_bytes");
  s.activation_bytes = r.count(j, p, "activation_bytes");
  return s;
}

PipelinePlan read_plan(const Reader &r, const Json &j, std::size_t layer_count) {
  PipelinePlan plan;
  const Json &stages = r.member(j, "pipeline", "stages");
  if (!stages.is_array() || stages.empty()) r.fail("pipeline.stages", "must be a non-empty array");
  int next = 0;
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const std::string p = fmt::format("pipeline.stages[{}]", k);
    plan.stages.push_back(read_stage(r, stages[k], p));
    const PipelineStage &s = plan.stages.back();
    if (s.first != next || s.last < s.first)
      r.fail(p, fmt::format("layers {}..{}: the stages must cover the layers in order from layer {}", s.first, s.last,
                            next));
    next = s.last + 1;
  }
  if (std::size_t(next) != layer_count)
    r.fail("pipeline.stages", fmt::format("end at layer {}, but the model has {} layers", next - 1, layer_count));
  const Json &boundaries = r.member(j, "pipeline", "boundaries");
  if (!boundaries.is_array() || boundaries.size() + 1 != stages.size())
    r.fail("pipeline.boundaries", "must be an array of one entry per boundary between stages");
  for (std::size_t b = 0; b < boundaries.size(); ++b) {
    const std::string p = fmt::format("pipeline.boundaries[{}]", b);
    plan.boundaries.push_back({int(r.count(boundaries[b], p, "after")), r.text(boundaries[b], p, "reason")});
    if (plan.boundaries.back().after != plan.stages[b].last)
      r.fail(p + ".after", fmt::format("{} is not the last layer of stage {} ({})", plan.boundaries.back().after, b,
                                       plan.stages[b].last));
  }
  plan.bottleneck = int(r.count(j, "pipeline", "bottleneck"));
  if (std::size_t(plan.bottleneck) >= plan.stages.size()) r.fail("pipeline.bottleneck", "is not a stage");
  plan.slowest_us = r.number(j, "pipeline", "slowest_us");
  plan.memory_limit = r.count(j, "pipeline", "memory_limit");
  const Json &link = r.member(j, "pipeline", "link");
  plan.link = {r.text(link, "pipeline.link", "name"), r.number(link, "pipeline.link", "latency_us"),
               r.number(link, "pipeline.link", "bytes_per_us"), r.text(link, "pipeline.link", "why")};
  if (!(plan.link.bytes_per_us > 0)) r.fail("pipeline.link.bytes_per_us", "must be above 0");
  return plan;
}

// The net with every input's batch (axis 0) divided by `m`.
NetDescription micro_batch_net(const NetDescription &net, int m, std::string_view source) {
  NetDescription micro = net;
  for (NetInput &in : micro.inputs) {
    if (in.shape.empty())
      throw Error(fmt::format("{}: input '{}' is a scalar: it has no batch axis (axis 0) to split into {} "
                              "micro-batches",
                              source, in.name, m));
    if (in.shape[0] % m != 0)
      throw Error(fmt::format("{}: input '{}' has batch {} (axis 0 of {}), which {} micro-batches do not divide; "
                              "choose a --micro-batches that divides it",
                              source, in.name, in.shape[0], detail::shape_text(in.shape), m));
    in.shape[0] /= m;
  }
  for (std::size_t i = 0; i < micro.layers.size(); ++i)
    for (Shape &s : micro.layers[i].out_shapes) {
      if (s.empty() || s[0] % m != 0)
        throw Error(fmt::format("{}: {} declares the output shape {}, whose axis 0 {} micro-batches do not divide",
                                source, net.layer_label(i), detail::shape_text(s), m));
      s[0] /= m;
    }
  return micro;
}

// The micro-batch model's outputs must be the model's split along axis 0,
// and its layers the model's: the plan's layer ranges apply to both.
void check_micro_model(const ModelDescription &full, const ModelDescription &micro, int m, std::string_view source) {
  for (std::size_t o = 0; o < full.outputs.size(); ++o) {
    const ModelTensor &f = full.tensors[full.outputs[o]], &s = micro.tensors[micro.outputs[o]];
    Shape expected = f.shape;
    if (!expected.empty()) expected[0] /= m;
    if (f.shape.empty() || f.shape[0] % m != 0 || s.shape != expected)
      throw Error(fmt::format("{}: output '{}' is {} for the whole batch but {} for a micro-batch (1/{} of it): it "
                              "does not keep the batch along axis 0, so micro-batches cannot be joined",
                              source, f.name, detail::shape_text(f.shape), detail::shape_text(s.shape), m));
  }
  if (full.layers.size() != micro.layers.size())
    throw Error(fmt::format("{}: the micro-batch model has {} layers, the model {}", source, micro.layers.size(),
                            full.layers.size()));
  for (std::size_t i = 0; i < full.layers.size(); ++i)
    if (full.layers[i].name != micro.layers[i].name)
      throw Error(fmt::format("{}: layer {} is '{}' in the model but '{}' in the micro-batch model", source, i,
                              full.layers[i].name, micro.layers[i].name));
}

}  // namespace

std::vector<PipelineLayer> pipeline_layers(const ModelFile &model, const ModelDescription &d) {
  const std::size_t n = d.layers.size();
  std::vector<PipelineLayer> layers(n);
  for (std::size_t i = 0; i < n; ++i) {
    const ModelLayer &l = d.layers[i];
    PipelineLayer &p = layers[i];
    p.name = l.name;
    if (l.group >= 0) {
      const ModelGroup &g = d.groups[std::size_t(l.group)];
      p.time_us = int(i) == g.first ? g.estimate_us : 0;
      p.cut_after = int(i) >= g.last;
    } else {
      p.time_us = layer_estimate_us(model, i);
    }
    for (std::size_t t : l.inputs)
      if (d.tensors[t].role == TensorRole::weight) p.weight_bytes += d.tensors[t].size;
    p.live_bytes = l.scratch_size;
    for (const ModelLayer::PaddedInput &pad : l.padded_inputs) p.live_bytes += pad.size;
  }
  for (const auto &[t, interval] : activation_intervals(d)) {
    const uint64_t size = d.tensors[t].size;
    for (int i = interval.start; i <= interval.end; ++i) {
      layers[std::size_t(i)].live_bytes += size;
      if (i < interval.end) layers[std::size_t(i)].cut_bytes += size;
    }
  }
  return layers;
}

nlohmann::json pipeline_plan_json(const PipelinePlan &plan) {
  Json stages = Json::array(), boundaries = Json::array();
  for (const PipelineStage &s : plan.stages) stages.push_back(stage_json(s));
  for (const PipelineBoundary &b : plan.boundaries) boundaries.push_back({{"after", b.after}, {"reason", b.reason}});
  return {{"stages", stages},           {"boundaries", boundaries},
          {"bottleneck", plan.bottleneck}, {"slowest_us", plan.slowest_us},
          {"memory_limit", plan.memory_limit}, {"link", link_json(plan.link)}};
}

void add_pipeline(BuildResult &built, const NetDescription &net, const BuildOptions &options,
                  const PipelineOptions &pipeline, std::string_view source) {
  const int m = pipeline.micro_batches;
  if (m < 1) throw Error(fmt::format("{}: --micro-batches {}: at least 1", source, m));
  std::optional<BuildResult> micro;
  if (m > 1) {
    BuildOptions micro_options = options;
    micro_options.reference = false;
    micro_options.embed_reference = false;
    micro_options.reference_inputs.clear();
    micro_options.buffers_apart = pipeline.stages > 1;
    const std::string micro_source = fmt::format("{} (micro-batch of 1/{})", source, m);
    micro = build_model(micro_batch_net(net, m, source), micro_options, micro_source);
    check_micro_model(built.description, micro->description, m, source);
  }
  const BuildResult &planned = micro ? *micro : built;
  const uint64_t limit = pipeline.stage_memory.value_or(default_stage_memory(options.chip, pipeline.stages));
  const PipelinePlan plan = plan_pipeline(pipeline_layers(planned.model, planned.description), pipeline.stages, limit,
                                          default_pipeline_link(options.chip));
  Json entry = pipeline_plan_json(plan);
  entry["micro_batches"] = m;
  entry["planned_on"] = micro ? "micro_batch_model" : "model";
  entry["memory_limit_source"] = pipeline.stage_memory ? "--stage-memory" : "chip default";
  if (micro) {
    entry["micro_batch_model"] = kMicroBatchModelSection;
    built.model.sections.push_back({kMicroBatchModelSection, "model", serialize_model_file(micro->model)});
  }
  built.model.metadata[kPipelineKey] = std::move(entry);
}

std::optional<StoredPipeline> stored_pipeline(const ModelFile &model, std::string_view where) {
  if (!model.metadata.contains(kPipelineKey)) return std::nullopt;
  const Reader r{std::string(where)};
  const Json &j = model.metadata[kPipelineKey];
  if (!j.is_object()) r.fail("pipeline", "must be an object");
  StoredPipeline stored;
  const uint64_t m = r.count(j, "pipeline", "micro_batches");
  if (m < 1 || m > uint64_t(1) << 20) r.fail("pipeline.micro_batches", fmt::format("{} is not in 1..2^20", m));
  stored.micro_batches = int(m);
  if (m > 1 && !model.find_section(kMicroBatchModelSection))
    r.fail("pipeline.micro_batch_model", fmt::format("the section '{}' is missing", kMicroBatchModelSection));
  const Json &layers = model.metadata.contains("layers") ? model.metadata["layers"] : Json();
  if (!layers.is_array()) r.fail("layers", "must be an array");
  for (std::size_t i = 0; i < layers.size(); ++i)
    stored.layer_names.push_back(r.text(layers[i], fmt::format("layers[{}]", i), "name"));
  stored.plan = read_plan(r, j, layers.size());
  return stored;
}

}  // namespace tpu_runtime
