// static_layers.cc: static layers, executed through the firmware entry until
// the emulator can record command streams (see static_layers.h).
#include "static_layers.h"

#include <fmt/format.h>

#include "tpu_runtime/error.h"

namespace tpu_runtime::detail {
namespace {

// The only execution this SDK writes and replays so far.
constexpr const char *kFirmwareEntry = "firmware_entry";

}  // namespace

StaticLayerRecord record_static_layer(const Backend &backend, const std::string &chip, const LayerCall &call,
                                      uint64_t plan_base) {
  // TODO(record mode): record backend_api_<call.op>_global here.
  (void)backend;
  (void)chip;
  (void)call;
  (void)plan_base;
  StaticLayerRecord record;
  record.metadata = {{"execution", kFirmwareEntry}};
  return record;
}

void check_static_layer(const ModelFile &model, const ModelLayer &layer) {
  (void)model;
  const nlohmann::json &record = layer.static_record;
  const std::string execution =
      record.is_object() && record.contains("execution") && record["execution"].is_string()
          ? record["execution"].get<std::string>()
          : std::string();
  if (execution != kFirmwareEntry)
    throw Error(fmt::format("static layer '{}': execution \"{}\" is not supported by this SDK (it runs static "
                            "layers through the firmware entry: \"{}\"); use the SDK that built the model",
                            layer.name, execution, kFirmwareEntry));
}

void replay_static_layer(const ModelFile &model, const ModelLayer &layer, const Firmware *firmware, LayerCall &call,
                         uint64_t plan_base) {
  (void)plan_base;
  check_static_layer(model, layer);
  if (!firmware)
    throw Error(fmt::format("static layer '{}': the model has no kernel module to run it with", layer.name));
  firmware->run_global(call.op, call.params, call.inputs, call.outputs);
}

bool static_layers_need_firmware() { return true; }

}  // namespace tpu_runtime::detail
