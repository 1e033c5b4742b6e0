// shared_library.cc: the dlopen wrapper behind Plugin, Backend and Firmware.
#include "loader/shared_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>

#include "loader/elf_check.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime {
namespace {

// dlerror() without the "<file>: " prefix it usually starts with (the
// message names the path already), or a fallback when it gave no reason.
std::string loader_message(const std::string &file) {
  const char *message = dlerror();
  if (!message) return "no reason given by the dynamic loader";
  std::string text = message;
  if (text.rfind(file + ": ", 0) == 0) text.erase(0, file.size() + 2);
  return text;
}

}  // namespace

SharedLibrary::SharedLibrary(const std::string &path) : path_(path) {
  if (path.empty()) throw Error("cannot open a shared library: the path is empty");
  // dlopen searches LD_LIBRARY_PATH and the system directories for a name
  // without '/'; an absolute path makes it load exactly this file.
  std::error_code error;
  std::string absolute = std::filesystem::absolute(path, error).string();
  if (error) absolute = path;
  if (!std::filesystem::exists(absolute, error))
    throw Error(fmt::format("{}: no such file", path));
  check_elf_shared_object(read_file(absolute), path);
  dlerror();  // forget any earlier message
  handle_ = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw Error(fmt::format("{}: cannot load: {}", path, loader_message(absolute)));
}

SharedLibrary::~SharedLibrary() {
  if (handle_) dlclose(handle_);
}

std::shared_ptr<SharedLibrary> SharedLibrary::none(const std::string &description) {
  std::shared_ptr<SharedLibrary> library(new SharedLibrary());
  library->path_ = description;
  return library;
}

void *SharedLibrary::find(const std::string &name) const {
  // dlsym(NULL, ...) would search the whole process: no library has no symbol.
  if (!handle_) return nullptr;
  // The custom-layer symbols are never legitimately NULL, so NULL means absent.
  return dlsym(handle_, name.c_str());
}

void *SharedLibrary::require(const std::string &name, const std::string &why) const {
  if (void *address = find(name)) return address;
  if (!handle_)
    throw Error(fmt::format("{}: {} ({}) is needed, but no custom-layer library was given", path_, name, why));
  throw Error(fmt::format("{}: missing symbol {} ({})", path_, name, why));
}

}  // namespace tpu_runtime
