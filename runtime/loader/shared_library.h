// shared_library.h (private): a dlopen'ed library, opened by explicit path.
#pragma once

#include <memory>
#include <string>

namespace tpu_runtime {

class SharedLibrary {
 public:
  // dlopen(RTLD_NOW | RTLD_LOCAL) of `path`; a path without a directory is
  // taken relative to the current directory, never searched for. Throws
  // Error with the path and dlerror() when the file does not load.
  explicit SharedLibrary(const std::string &path);
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

  std::string path_;
  void *handle_ = nullptr;
};

}  // namespace tpu_runtime
