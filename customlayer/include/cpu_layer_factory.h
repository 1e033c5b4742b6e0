// cpu_layer_factory.h: the op-type -> creator registry the run-time library
// uses (bmcpu_init in ap_src/cpu.cpp creates one layer per op type), and
// REGISTER_APLAYER_CLASS, which an op's .cpp uses once to enter itself.
// Written for this SDK with the vendor's names.
#ifndef TPU_SDK_CPU_LAYER_FACTORY_H
#define TPU_SDK_CPU_LAYER_FACTORY_H

#include <memory>

#include "cpu_layer.h"

namespace bmcpu {

class CpuLayerRegistry {
 public:
  typedef std::shared_ptr<cpu_layer> (*Creator)();
  typedef std::map<int, Creator> CreatorRegistry;

  // Function-local, so it exists before the first registration whatever
  // the order of the static initialisers; an object, not a pointer never
  // freed, so that unloading the library frees it (the runtime loads and
  // unloads an AP library for every model build and run).
  static CreatorRegistry &Registry() {
    static CreatorRegistry registry;
    return registry;
  }

  // A second creator for the same type is reported and ignored.
  static void addCreator(int type, Creator creator) {
    CreatorRegistry &registry = Registry();
    if (registry.count(type) != 0) {
      cout << "AP layer type " << type << " is registered twice; the first registration is kept" << endl;
      return;
    }
    registry[type] = creator;
  }

  // exit(-1) for a type nothing registered, as the vendor's.
  static std::shared_ptr<cpu_layer> createlayer(int type) {
    CreatorRegistry &registry = Registry();
    if (registry.count(type) == 0) {
      std::cerr << "AP layer type " << type << " has no registration (REGISTER_APLAYER_CLASS)" << endl;
      std::exit(-1);
    }
    return registry[type]();
  }

 private:
  CpuLayerRegistry() {}
};

class Cpulayerregisterer {
 public:
  Cpulayerregisterer(int type, CpuLayerRegistry::Creator creator) { CpuLayerRegistry::addCreator(type, creator); }
};

}  // namespace bmcpu

// REGISTER_APLAYER_CLASS(AP_CUSTOM_TOPK, ap_topk) enters ap_topklayer under
// that type (`layer` is appended to the second argument). The registrar's
// name is fixed: one registration per translation unit.
#define REGISTER_APLAYER_CLASS(type, name)                                                                 \
  std::shared_ptr<bmcpu::cpu_layer> Creator_##name##layer() {                                              \
    return std::shared_ptr<bmcpu::cpu_layer>(new name##layer());                                           \
  }                                                                                                        \
  static bmcpu::Cpulayerregisterer g_cpu_layer_registerer_(type, Creator_##name##layer);
// The older spelling.
#define REGISTER_CPULAYER_CLASS(type, name) REGISTER_APLAYER_CLASS(type, name)

#endif  // TPU_SDK_CPU_LAYER_FACTORY_H
