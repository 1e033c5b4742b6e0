#include "call_site.h"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

namespace cmodel {
namespace {

std::string demangle(const char *name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> plain(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && plain ? std::string(plain.get()) : std::string(name);
}

}  // namespace

std::string base_name(const char *path) {
  std::string s = path ? path : "?";
  const auto slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

CallInfo &current_call() {
  static CallInfo call;
  return call;
}

std::string describe_call_site(const void *return_address) {
  if (!return_address) return "an unknown location";
  // The return address points after the call; step back into it so the
  // line is the call's, not the next statement's.
  const Dwarf_Addr pc = reinterpret_cast<uintptr_t>(return_address) - 1;

  static char *debuginfo_path = nullptr;
  static const Dwfl_Callbacks callbacks = {
      .find_elf = dwfl_linux_proc_find_elf,
      .find_debuginfo = dwfl_standard_find_debuginfo,
      .section_address = nullptr,
      .debuginfo_path = &debuginfo_path,
  };
  // A fresh session each time: libraries may have been loaded since the
  // last error, and errors are rare enough for the cost not to matter.
  std::unique_ptr<Dwfl, decltype(&dwfl_end)> dwfl(dwfl_begin(&callbacks), &dwfl_end);
  if (!dwfl || dwfl_linux_proc_report(dwfl.get(), getpid()) != 0 ||
      dwfl_report_end(dwfl.get(), nullptr, nullptr) != 0)
    return fmt::format("address {}", return_address);

  Dwfl_Module *module = dwfl_addrmodule(dwfl.get(), pc);
  if (!module) return fmt::format("address {}", return_address);
  const char *module_name = dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);

  GElf_Off offset = 0;
  GElf_Sym symbol;
  const char *function = dwfl_module_addrinfo(module, pc, &offset, &symbol, nullptr, nullptr, nullptr);
  std::string where = function ? demangle(function) : fmt::format("address {}", return_address);

  int line = 0;
  const char *file = nullptr;
  if (Dwfl_Line *info = dwfl_module_getsrc(module, pc))
    file = dwfl_lineinfo(info, nullptr, &line, nullptr, nullptr, nullptr);
  if (file && line > 0) return fmt::format("{} ({}:{})", where, base_name(file), line);
  return fmt::format("{}+{:#x} in {}", where, offset, base_name(module_name));
}

std::string describe_call(const CallInfo &call) {
  if (!call.replay_origin) return describe_call_site(call.caller);
  return fmt::format("replayed command {} ({}) of the stream recorded from {}", call.replay_command,
                     call.api ? call.api : "?", *call.replay_origin ? call.replay_origin : "an unnamed recording");
}

}  // namespace cmodel
