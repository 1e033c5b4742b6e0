// shared_library.h (private): a dlopen'ed library, opened by explicit path.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tpu_runtime {

class SharedLibrary {
 public:
  // dlopen(RTLD_NOW | RTLD_LOCAL) of `path`; a path without a directory is
  // taken relative to the current directory, never searched for. Throws
  // Error with the path and dlerror() when the file does not load.
  explicit SharedLibrary(const std::string &path);
  // The same, shared with earlier opens of `path` while its file is the
  // same one (device, inode, size and modification time): the process keeps
  // the libraries opened last loaded (a run_op or op-tester call opens
  // three, and loading them was most of its time). A changed file is loaded
  // anew: the stale entry is dropped first, so that dlopen does not hand
  // back the old mapping when nothing else holds it. A library's globals
  // therefore live on between the calls that share it, as a device keeps
  // its firmware loaded.
  static std::shared_ptr<SharedLibrary> open_shared(const std::string &path);
  // No library at all: find() answers nullptr for every name and require()
  // throws naming `description` (what stands in for the path in messages)
  // and the symbol. A model of built-in layers only is built with these.
  static std::shared_ptr<SharedLibrary> none(const std::string &description);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary &) = delete;
  SharedLibrary &operator=(const SharedLibrary &) = delete;

  const std::string &path() const { return path_; }
  bool is_none() const { return handle_ == nullptr; }
  // The symbol's address, nullptr when the library does not define it.
  void *find(const std::string &name) const;
  // The symbol's address; throws Error naming the symbol and `why` when absent.
  void *require(const std::string &name, const std::string &why) const;

  template <typename Fn>
  Fn find_function(const std::string &name) const {
    return reinterpret_cast<Fn>(find(name));
  }
  template <typename Fn>
  Fn require_function(const std::string &name, const std::string &why) const {
    return reinterpret_cast<Fn>(require(name, why));
  }

 private:
  SharedLibrary() = default;
  // dlopen of `absolute` once its bytes (`bytes`) passed the ELF check;
  // messages name `path`.
  SharedLibrary(const std::string &path, const std::string &absolute, const std::vector<uint8_t> &bytes);

  std::string path_;
  void *handle_ = nullptr;
};

}  // namespace tpu_runtime
