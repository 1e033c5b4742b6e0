#include "call_site.h"

#include "source_site.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <link.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>

#include <fmt/format.h>

namespace cmodel {
namespace {

std::string demangle(const char *name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> plain(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && plain ? std::string(plain.get()) : std::string(name);
}

// The full path of a line's file: a relative name (a compiler cache may
// record one) joined to its compilation unit's directory.
std::string full_source_path(Dwfl_Line *line, const char *file) {
  if (file[0] == '/') return file;
  Dwarf_Die *unit = dwfl_linecu(line);
  Dwarf_Attribute attribute;
  const char *dir = unit ? dwarf_formstring(dwarf_attr(unit, DW_AT_comp_dir, &attribute)) : nullptr;
  if (!dir || !*dir) return file;
  return (std::filesystem::path(dir) / file).lexically_normal().string();
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

SourceSite &source_site() {
  static SourceSite site;
  return site;
}

namespace {

// `path` relative to `base` when it lies inside it, else "".
std::string inside(const std::filesystem::path &path, const char *base) {
  if (!base || !*base) return "";
  std::error_code error;
  const std::filesystem::path root = std::filesystem::weakly_canonical(base, error);
  if (error) return "";
  const std::filesystem::path relative = path.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..") return "";
  return relative.string();
}

// How many objects the dynamic loader has loaded and unloaded so far
// (dl_iterate_phdr's dlpi_adds and dlpi_subs): while both stay the same,
// the process maps the same libraries.
std::pair<unsigned long long, unsigned long long> loader_generation() {
  std::pair<unsigned long long, unsigned long long> counts{0, 0};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t size, void *data) {
        auto *out = static_cast<std::pair<unsigned long long, unsigned long long> *>(data);
        if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
          *out = {info->dlpi_adds, info->dlpi_subs};
        return 1;  // the counters are the same in every entry: the first will do
      },
      &counts);
  return counts;
}

// The libdwfl session of the process's modules, kept between call sites:
// making one reads /proc/self/maps, and its modules sort their line tables
// on the first lookup, which made each resolved error cost milliseconds (a
// test of hundreds of failing API calls spent a quarter of its time here).
// It is made anew when a library was loaded or unloaded since (the loader's
// counters moved). Callers hold `mutex`.
struct DwflSession {
  std::mutex mutex;
  std::unique_ptr<Dwfl, decltype(&dwfl_end)> dwfl{nullptr, &dwfl_end};
  std::pair<unsigned long long, unsigned long long> generation{0, 0};

  Dwfl *current() {
    static char *debuginfo_path = nullptr;
    static const Dwfl_Callbacks callbacks = {
        .find_elf = dwfl_linux_proc_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = nullptr,
        .debuginfo_path = &debuginfo_path,
    };
    const auto now = loader_generation();
    if (dwfl && now == generation) return dwfl.get();
    dwfl.reset(dwfl_begin(&callbacks));
    generation = now;
    if (!dwfl || dwfl_linux_proc_report(dwfl.get(), getpid()) != 0 ||
        dwfl_report_end(dwfl.get(), nullptr, nullptr) != 0) {
      dwfl.reset();
      return nullptr;
    }
    return dwfl.get();
  }
};

DwflSession &dwfl_session() {
  static DwflSession *session = new DwflSession;  // never destroyed: errors may be resolved during exit
  return *session;
}

}  // namespace

std::string display_path(const std::string &path) {
  // A relative path (a compiler cache may record one) is relative to a
  // build directory nobody knows here: shown as it is.
  if (path.empty() || path[0] != '/') return path;
  std::error_code error;
  const std::filesystem::path full = std::filesystem::weakly_canonical(path, error);
  if (error) return path;
  const std::string cwd = std::filesystem::current_path(error).string();
  if (std::string shown = inside(full, error ? nullptr : cwd.c_str()); !shown.empty()) return shown;
  if (std::string shown = inside(full, std::getenv("CUSTOM_LAYER_PATH")); !shown.empty()) return shown;
  return path;
}

CallSite resolve_call_site(const void *return_address) {
  CallSite site;
  if (!return_address) {
    site.text = "an unknown location";
    return site;
  }
  // The return address points after the call; step back into it so the
  // line is the call's, not the next statement's.
  const Dwarf_Addr pc = reinterpret_cast<uintptr_t>(return_address) - 1;
  site.text = fmt::format("address {}", return_address);

  DwflSession &session = dwfl_session();
  const std::lock_guard<std::mutex> lock(session.mutex);
  Dwfl *dwfl = session.current();
  if (!dwfl) return site;

  Dwfl_Module *module = dwfl_addrmodule(dwfl, pc);
  if (!module) return site;
  const char *module_name = dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);

  GElf_Off offset = 0;
  GElf_Sym symbol;
  const char *function = dwfl_module_addrinfo(module, pc, &offset, &symbol, nullptr, nullptr, nullptr);
  if (function) site.function = demangle(function);
  const std::string where = function ? site.function : site.text;

  const char *file = nullptr;
  Dwfl_Line *info = dwfl_module_getsrc(module, pc);
  if (info) file = dwfl_lineinfo(info, nullptr, &site.line, nullptr, nullptr, nullptr);
  if (file && site.line > 0) {
    site.file = full_source_path(info, file);
    site.text = fmt::format("{} ({}:{})", where, base_name(file), site.line);
  } else {
    site.line = 0;
    site.text = fmt::format("{}+{:#x} in {}", where, offset, base_name(module_name));
  }
  return site;
}

std::string readable_call_site(const CallSite &site) {
  if (site.file.empty() || site.line <= 0) return site.text;
  const std::string place = fmt::format("{}:{}", display_path(site.file), site.line);
  return site.function.empty() ? place : fmt::format("{} ({})", place, site.function);
}

std::string describe_call_site(const void *return_address) { return resolve_call_site(return_address).text; }

CallSite resolve_call(const CallInfo &call) {
  if (const SourceSite &source = source_site(); !call.replay_origin && source.file && source.line > 0) {
    CallSite site;
    site.function = source.function;
    site.file = source.file;
    site.line = source.line;
    site.text = fmt::format("{} ({}:{})", site.function.empty() ? "?" : site.function, base_name(source.file),
                            source.line);
    return site;
  }
  if (!call.replay_origin) return resolve_call_site(call.caller);
  CallSite site;
  site.text = fmt::format("replayed command {} ({}) of the stream recorded from {}", call.replay_command,
                          call.api ? call.api : "?", *call.replay_origin ? call.replay_origin : "an unnamed recording");
  return site;
}

std::string describe_call(const CallInfo &call) { return resolve_call(call).text; }

}  // namespace cmodel
