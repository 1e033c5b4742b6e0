# TpuSdkConfig.cmake: find_package(TpuSdk) for custom-op projects.
#
#   find_package(TpuSdk CONFIG REQUIRED PATHS $ENV{TPUC_ROOT})
#   tpu_custom_layer(REGISTRY register_ops.cmake KERNEL_SOURCES ... PLUGIN_SOURCES ...)
#
# Targets: TpuSdk::cmodel (the emulator and the tpu-kernel API; kernels link
# it), TpuSdk::runtime (loader, op tester, model files; host programs and
# tests link it), TpuSdk::bmlib (bmlib_runtime.h: device programs that open
# a device, allocate device memory and launch kernel modules). Functions:
# tpu_custom_layer and the register_custom_* macros (TpuCustomLayer.cmake),
# tpu_kernel_module (a kernel module for device programs,
# TpuKernelModule.cmake), tpu_ap_op_library / tpu_ap_plugin_sources /
# tpu_host_op_library (host-CPU op libraries, TpuHostOps.cmake),
# tpu_ppl_library / tpu_ppl_test / tpu_ppl_backend (PPL kernel files,
# TpuPpl.cmake, included by TpuCustomLayer.cmake; docs/ppl.md).
include(CMakeFindDependencyMacro)
# The runtime's headers use nlohmann::json (parameters, model metadata).
find_dependency(nlohmann_json 3)
include("${CMAKE_CURRENT_LIST_DIR}/TpuSdkTargets.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/TpuCustomLayer.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/TpuKernelModule.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/TpuHostOps.cmake")
# TPU_SDK_PYTHON_EXECUTABLE, when the SDK was built with its Python front end.
include("${CMAKE_CURRENT_LIST_DIR}/TpuSdkPython.cmake" OPTIONAL)
