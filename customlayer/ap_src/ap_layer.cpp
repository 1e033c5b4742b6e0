// ap_layer.cpp: the name-keyed factory of this project's AP ops, which the
// compiler side calls through createLayerInstance("TOPK") (shape inference
// and reference; runtime/host/ap_plugin.cc in this SDK). A new op adds its
// header, a creator and a line in register_factory_functions().
#include <string>

#include "ap_impl_topk.h"
#include "cpu_layer.h"

namespace bmcpu {
namespace {

typedef cpu_layer *(*LayerCreator)();

// Function-local, so it exists before any static initialiser uses it.
map<string, LayerCreator> &factory() {
  static map<string, LayerCreator> creators;
  return creators;
}

cpu_layer *createTopkLayer() { return new bmap::ap_topklayer(); }

void register_factory_functions() { factory()["TOPK"] = createTopkLayer; }

// Fills the factory when the library is loaded.
__attribute__((constructor)) void register_at_load() { register_factory_functions(); }

}  // namespace
}  // namespace bmcpu

extern "C" bmcpu::cpu_layer *createLayerInstance(const char *name) {
  if (!name) return nullptr;
  auto it = bmcpu::factory().find(name);
  return it == bmcpu::factory().end() ? nullptr : it->second();
}
