// shared_library.cc: the dlopen wrapper behind Plugin, Backend and Firmware.
#include "loader/shared_library.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <vector>

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

// dlopen searches LD_LIBRARY_PATH and the system directories for a name
// without '/'; an absolute path makes it load exactly this file. Throws
// when `path` is empty or names no file.
std::string absolute_library_path(const std::string &path) {
  if (path.empty()) throw Error("cannot open a shared library: the path is empty");
  std::error_code error;
  std::string absolute = std::filesystem::absolute(path, error).string();
  if (error) absolute = path;
  if (!std::filesystem::exists(absolute, error)) throw Error(fmt::format("{}: no such file", path));
  return absolute;
}

// Which file `absolute` is now: device, inode, size and modification time
// in nanoseconds. A rebuilt or replaced library differs in one of them
// (hashing the bytes instead cost more than the load it saved: fixture
// libraries with debug information are megabytes).
std::string file_identity(const std::string &absolute) {
  struct stat st {};
  if (::stat(absolute.c_str(), &st) != 0) return "";
  return fmt::format("{}:{}:{}:{}.{:09}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

// The libraries open_shared opened last, most recent first, by the path
// as given (path() answers it) and the file's identity.
struct LibraryCache {
  static constexpr std::size_t kept = 16;
  struct Entry {
    std::string path, absolute, identity;
    std::shared_ptr<SharedLibrary> library;
  };
  std::mutex mutex;
  std::vector<Entry> entries;
};

LibraryCache &library_cache() {
  static LibraryCache *cache = new LibraryCache;  // never destroyed: no dlclose during exit
  return *cache;
}

}  // namespace

SharedLibrary::SharedLibrary(const std::string &path) : SharedLibrary(path, absolute_library_path(path), {}) {}

SharedLibrary::SharedLibrary(const std::string &path, const std::string &absolute, const std::vector<uint8_t> &bytes)
    : path_(path) {
  check_elf_shared_object(bytes.empty() ? read_file(absolute) : bytes, path);
  dlerror();  // forget any earlier message
  handle_ = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw Error(fmt::format("{}: cannot load: {}", path, loader_message(absolute)));
}

std::shared_ptr<SharedLibrary> SharedLibrary::open_shared(const std::string &path) {
  const std::string absolute = absolute_library_path(path);
  const std::string identity = file_identity(absolute);
  LibraryCache &cache = library_cache();
  const std::lock_guard<std::mutex> lock(cache.mutex);
  std::vector<LibraryCache::Entry> &entries = cache.entries;
  const auto same_file = [&](const LibraryCache::Entry &e) { return e.path == path && e.absolute == absolute; };
  if (auto hit = std::find_if(entries.begin(), entries.end(), same_file); hit != entries.end()) {
    if (!identity.empty() && hit->identity == identity) {
      std::rotate(entries.begin(), hit, hit + 1);  // the most recent first
      return entries.front().library;
    }
    entries.erase(hit);  // the file changed: let the old library go before loading the new one
  }
  std::shared_ptr<SharedLibrary> library(new SharedLibrary(path, absolute, read_file(absolute)));
  entries.insert(entries.begin(), {path, absolute, identity, library});
  if (entries.size() > LibraryCache::kept) entries.pop_back();
  return library;
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
