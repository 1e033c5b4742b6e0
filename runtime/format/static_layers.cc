// static_layers.cc: static layers as recorded command streams (see
// static_layers.h; the recorder is cmodel_host.h's "Recording and replay").
#include "format/static_layers.h"

#include <fmt/format.h>

#include "cmodel_host.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime::detail {
namespace {

constexpr const char *kCommands = "commands";

std::string section_name(const std::string &layer) { return layer + ".commands"; }


}  // namespace

const Section &commands_section(const ModelFile &model, const ModelLayer &layer) {
  const nlohmann::json &record = layer.static_record;
  const auto text = [&](const char *key) {
    return record.is_object() && record.contains(key) && record[key].is_string() ? record[key].get<std::string>()
                                                                                  : std::string();
  };
  const std::string execution = text("execution");
  if (execution != kCommands)
    throw Error(fmt::format("static layer '{}': execution \"{}\" is not supported by this SDK (it replays recorded "
                            "command streams: \"{}\"); rebuild the model with this SDK's tpu_model build",
                            layer.name, execution, kCommands));
  const std::string name = text("section");
  const Section *s = model.find_section(name);
  if (!s) throw Error(fmt::format("static layer '{}': its command section '{}' is missing", layer.name, name));
  if (s->kind != kCommands)
    throw Error(fmt::format("static layer '{}': section '{}' is of kind '{}', not '{}'", layer.name, name, s->kind,
                            kCommands));
  return *s;
}

Recording::Recording(const std::string &origin) {
  if (cmodel_record_begin(origin.c_str()) != 0)
    throw Error(fmt::format("cannot start recording: {}", cmodel_last_error()));
}

Recording::~Recording() {
  if (!open_) return;
  void *stream = nullptr;
  uint64_t size = 0;
  if (cmodel_record_end(&stream, &size) == 0) cmodel_record_free(stream);
}

std::vector<uint8_t> Recording::end() {
  open_ = false;
  void *stream = nullptr;
  uint64_t size = 0;
  if (cmodel_record_end(&stream, &size) != 0) throw Error(cmodel_last_error());
  const auto *bytes = static_cast<const uint8_t *>(stream);
  std::vector<uint8_t> copy(bytes, bytes + size);
  cmodel_record_free(stream);
  return copy;
}

nlohmann::json stream_info(const std::vector<uint8_t> &stream) {
  const char *info = cmodel_stream_info(stream.data(), stream.size());
  if (!info) throw Error(cmodel_last_error());
  return nlohmann::json::parse(info);
}

void check_buffers_in_plan(const nlohmann::json &info, PlanRange plan) {
  for (const nlohmann::json &b : info.at("buffers")) {
    const uint64_t addr = b.at("addr").get<uint64_t>(), bytes = b.at("bytes").get<uint64_t>();
    if (addr < plan.base || addr - plan.base > plan.size || bytes > plan.size - (addr - plan.base))
      throw Error(fmt::format("the commands use the global buffer [{:#x}, {:#x}), outside the model's memory plan "
                              "[{:#x}, {:#x}); a static layer may only use its tensors and its planned scratch",
                              addr, addr + bytes, plan.base, plan.base + plan.size));
  }
}

StaticLayerRecord record_static_layer(const Backend &backend, const LayerCall &call, PlanRange plan) {
  return record_static_commands(call.layer, call.op, plan, [&] {
    std::vector<tensor_spec_t> outputs = call.outputs;
    backend.run_global_planned(call.op, call.params, call.inputs, outputs);
  });
}

StaticLayerRecord record_static_commands(const std::string &layer, const std::string &op, PlanRange plan,
                                         const std::function<void()> &run) {
  Recording recording(fmt::format("layer '{}' (op {})", layer, op));
  run();
  std::vector<uint8_t> stream = recording.end();

  // The recording is bound to the open emulator's chip, the model's.
  const nlohmann::json info = stream_info(stream);
  check_buffers_in_plan(info, plan);

  StaticLayerRecord record;
  record.metadata = {{"execution", kCommands},
                     {"section", section_name(layer)},
                     {"commands", info.at("commands").get<uint64_t>()}};
  record.sections.push_back({section_name(layer), kCommands, std::move(stream)});
  return record;
}

void check_static_layer(const ModelFile &model, const ModelDescription &d, const ModelLayer &layer) {
  const Section &s = commands_section(model, layer);
  nlohmann::json info;
  try {
    info = stream_info(s.data);
    if (info.at("chip").get<std::string>() != d.chip)
      throw Error(fmt::format("it was recorded on {}, but the model is for {}", info.at("chip").get<std::string>(),
                              d.chip));
    check_buffers_in_plan(info, {d.memory_base, d.memory_size});
  } catch (const Error &e) {
    throw Error(fmt::format("static layer '{}': section '{}': {}", layer.name, s.name, e.what()));
  }
}

void replay_static_layer(const ModelFile &model, const ModelLayer &layer) {
  const Section &s = commands_section(model, layer);
  if (cmodel_replay(s.data.data(), s.data.size()) != 0) throw Error(cmodel_last_error());
}

}  // namespace tpu_runtime::detail
