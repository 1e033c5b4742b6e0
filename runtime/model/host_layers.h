// host_layers.h (private): host layers (net.h: ap.<name>, callback.<name>)
// in models: their libraries inspected and embedded at build, loaded from
// the model at run, and one host layer run between TPU layers: its inputs
// read from the emulator's global memory, the op called on the host, its
// outputs written back (docs/tpu-model.md, "Host layers").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "emulator/emulator.h"
#include "model/private_library.h"
#include "tpu_runtime/host_op.h"
#include "tpu_runtime/model.h"

namespace tpu_runtime::detail {

HostOpKind host_kind_of(const std::string &kind_name);  // "vendor_ap" / "callback"
const char *host_kind_name(HostOpKind kind);
HostOpKind host_kind_of_op(const std::string &op);  // by its prefix; the op is a host op

// A host library's identity as a model stores it (HostLibraryInfo without
// its section), after every check HostOpLibrary::open makes; the library is
// opened (its constructors and, for vendor_ap, bmcpu_init run). `bytes`
// receives the file, `opened` (when given) the open library.
HostLibraryInfo inspect_host_library(const std::string &path, HostOpKind kind, std::vector<uint8_t> *bytes,
                                     std::shared_ptr<HostOpLibrary> *opened = nullptr);

// The host libraries a build embeds, one per distinct path.
class BuildHostLibraries {
 public:
  // The index of the library at `path`, opened and checked on first use.
  int add(const std::string &path, HostOpKind kind);
  const HostOpLibrary &library(int index) const { return *entries_[std::size_t(index)].library; }
  const std::string &path(int index) const { return entries_[std::size_t(index)].path; }
  bool empty() const { return entries_.empty(); }
  nlohmann::json metadata() const;  // the "host_libraries" array
  std::vector<Section> take_sections();

 private:
  struct Entry {
    std::string path;
    HostLibraryInfo info;
    std::vector<uint8_t> bytes;
    std::shared_ptr<HostOpLibrary> library;
  };
  std::vector<Entry> entries_;
};

// The embedded host library `index` of a model: its bytes checked against
// the recorded size and SHA-256.
std::span<const uint8_t> host_library_bytes(const ModelFile &model, const ModelDescription &d, std::size_t index,
                                            std::string_view where);

// A model's host libraries, loaded privately for a run (only those a host
// layer uses).
class EmbeddedHostLibraries {
 public:
  EmbeddedHostLibraries(const ModelFile &model, const ModelDescription &d, std::string_view where);
  const HostOpLibrary &at(int index) const;

 private:
  struct Loaded {
    std::unique_ptr<PrivateLibraryFile> file;
    std::shared_ptr<HostOpLibrary> library;  // after file: closed before it
  };
  std::vector<Loaded> loaded_;
};

// What one host layer's run cost.
struct HostLayerFigures {
  double host_us = 0;      // the op's call, measured on this host
  double transfer_us = 0;  // the copies, estimated (kHostTransferBytesPerUs, kHostCopyLatencyUs)
  uint64_t bytes_in = 0, bytes_out = 0;
  int copies = 0;
};

// Runs host layer `i` on the plan at `base`. `actual` holds the run-time
// shapes of tensors that came out smaller than planned (dynamic host
// layers); a smaller output is refused, naming the layer, unless the layer
// allows it and no later layer reads the tensor.
// `label` starts every error ("model: layer 2 ('top', op ap.topk, host)").
HostLayerFigures run_host_layer(EmulatorSession &emulator, const HostOpLibrary &library, const ModelDescription &d,
                                std::size_t i, uint64_t base, std::map<std::size_t, Shape> &actual,
                                const std::string &label);

// The estimated copy time of `bytes` in `copies` copies.
double host_transfer_us(uint64_t bytes, int copies);

}  // namespace tpu_runtime::detail
