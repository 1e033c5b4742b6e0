// bmodel_elf.h (internal): checks of a device-side kernel module before it
// goes into a .bmodel (spec 4.4, K5 and K6). Unlike elf_check.h, which checks
// libraries this host will dlopen, these modules run on the chip's
// controller cores: AArch64 for BM1684X, 64-bit RISC-V for BM1688.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tpu_runtime::bmodel {

// e_machine of the modules `chip` (Model.chip) loads: 183 (AArch64) for
// BM1684X / BM1686, 243 (RISC-V) for BM1688 / CV186X; 0 for chips that load
// no embedded module. Case-insensitive.
uint16_t module_machine_for_chip(const std::string &chip);
std::string machine_name(uint16_t machine);

struct DeviceModuleCheck {
  std::vector<std::string> present, absent;  // the entry symbols of bmodel.h
};

// K5 (ELF64 LE ET_DYN for `machine`, headers and sections inside the file)
// and K6 (the dynamic symbol table defines the required entries); Error
// naming `where` and the rule otherwise.
DeviceModuleCheck check_device_module(std::span<const uint8_t> bytes, const std::string &where, uint16_t machine,
                                      const std::string &chip);

// The CPU-op (AP) library of a .bmodel runs on the host CPU that drives the
// chip: x86-64 (a PCIe card's server) or AArch64 (a SoC). K5 for those
// machines and K6 for the three functions the vendor runtime requires at
// load (bmcpu_init, bmcpu_uninit, customcpu_process); the library is not
// loaded. Returns the machine's name.
std::string check_cpuop_module(std::span<const uint8_t> bytes, const std::string &where);

}  // namespace tpu_runtime::bmodel
