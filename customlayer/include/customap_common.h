// customap_common.h: the AP (host-CPU) ops of this project: their op-type
// numbers, the name -> number table and its lookup, and the CPU dtype
// numbers. Written for this SDK with the vendor's names and values.
//
// Adding an op (see docs/custom-layer-build.md, "Host (AP) ops"):
//   1. an AP_CUSTOM_<NAME> entry before AP_CUSTOM_LAYER_NUM below;
//   2. an AP_CUSTOM_NAME_ENTRY(<NAME>) line in the table below;
//   3. REGISTER_APLAYER_CLASS(AP_CUSTOM_<NAME>, ap_<name>) in its .cpp;
//   4. its creator in ap_src/ap_layer.cpp's factory.
// The SDK's AP build compiles this header into the run-time library, so the
// runtime finds an op's number from its name in *this* table.
#ifndef TPU_SDK_CUSTOMAP_COMMON_H
#define TPU_SDK_CUSTOMAP_COMMON_H

#include <string.h>

typedef enum {
  AP_CUSTOM = 10001,  // the template op (ap_impl_cpuop.cpp)
  AP_CUSTOM_TOPK = 10002,
  AP_CUSTOM_LAYER_NUM,
  AP_CUSTOM_LAYER_UNKNOW = AP_CUSTOM_LAYER_NUM,
} AP_CUSTOM_LAYER_TYPE_T;
#define CPU_CUSTOM_LAYER_TYPE_T AP_CUSTOM_LAYER_TYPE_T

#ifndef _CPU_COMMON_H_
typedef enum {
  CPU_DTYPE_FP32 = 0,
  CPU_DTYPE_FP16 = 1,
  CPU_DTYPE_INT8 = 2,
  CPU_DTYPE_UINT8 = 3,
  CPU_DTYPE_INT16 = 4,
  CPU_DTYPE_UINT16 = 5,
  CPU_DTYPE_INT32 = 6,
  CPU_DTYPE_UINT32 = 7,
  CPU_DTYPE_BFP16 = 8,
  CPU_DTYPE_UNKNOWN = -1,
} CPU_DATA_TYPE_T;
#endif

typedef struct {
  const char *name;  // upper case, without the "ap." prefix
  AP_CUSTOM_LAYER_TYPE_T type;
} ap_custom_layer_name_t;

#define AP_CUSTOM_NAME_ENTRY(NAME) {#NAME, AP_CUSTOM_##NAME}

static const ap_custom_layer_name_t ap_custom_layer_names[] = {
    AP_CUSTOM_NAME_ENTRY(TOPK),
    {0, AP_CUSTOM_LAYER_UNKNOW},
};

// The op type of an upper-case op name; AP_CUSTOM_LAYER_UNKNOW when the
// table has no such name.
static inline AP_CUSTOM_LAYER_TYPE_T GetCustomLayerType(const char *name) {
  for (const ap_custom_layer_name_t *entry = ap_custom_layer_names; entry->name; ++entry)
    if (name && strcmp(entry->name, name) == 0) return entry->type;
  return AP_CUSTOM_LAYER_UNKNOW;
}

#endif  // TPU_SDK_CUSTOMAP_COMMON_H
