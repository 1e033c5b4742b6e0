// kernel_failure.cc: the message of a user library's code that failed on
// the emulator (a kernel, an entry function, a plugin hook).
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "cmodel_host.h"
#include "loader/loader_internal.h"

namespace tpu_runtime::loader {
namespace {

// `path` relative to the directory `base` when it lies inside it, else "".
std::string inside(const std::filesystem::path &path, const char *base) {
  if (!base || !*base) return "";
  std::error_code error;
  const std::filesystem::path root = std::filesystem::weakly_canonical(base, error);
  if (error) return "";
  const std::filesystem::path relative = path.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..") return "";
  return relative.string();
}

}  // namespace

std::string shown_path(const std::string &path) {
  std::error_code error;
  const std::filesystem::path full = std::filesystem::weakly_canonical(path, error);
  if (error) return path;
  const std::string cwd = std::filesystem::current_path(error).string();
  if (std::string shown = inside(full, error ? nullptr : cwd.c_str()); !shown.empty()) return shown;
  if (std::string shown = inside(full, std::getenv("TPUC_ROOT")); !shown.empty()) return "$TPUC_ROOT/" + shown;
  return path;
}

std::string kernel_failure(const SharedLibrary &lib, std::string_view what) {
  const std::string library = shown_path(lib.path());
  const std::string ran = what.empty() ? fmt::format("in {}", library) : fmt::format("in {} of {}", what, library);
  return fmt::format("{}\n  {}", cmodel_last_error_readable(), ran);
}

}  // namespace tpu_runtime::loader
