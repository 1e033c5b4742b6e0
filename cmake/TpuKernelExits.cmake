# TpuKernelExits.cmake: tpu_kernel_wrap_exits(<target>), for kernel
# libraries (custom-op firmware, bmlib kernel modules).
#
# Kernel code that calls exit(), _exit(), _Exit(), quick_exit(), abort() or
# fails an assert() would end the host process, with exit(0) even reporting
# success. Linked with --wrap, those calls reach the emulator's __wrap_*
# functions (libcmodel, kernel/src/kernel_exits.cc), which during a run turn
# them into the run's error naming the call and its source line and stop
# only the kernel. Outside a run they behave as the originals.
include_guard(GLOBAL)

function(tpu_kernel_wrap_exits target)
  set(wrapped exit _exit _Exit quick_exit abort __assert_fail)
  list(TRANSFORM wrapped PREPEND "LINKER:--wrap=")
  target_link_options(${target} PRIVATE ${wrapped})
endfunction()
