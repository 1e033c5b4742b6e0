// private_library.h (private): the bytes of a library embedded in a model,
// in a file only this process sees, so that dlopen can load them: an
// anonymous memory file (memfd_create, loaded as /proc/self/fd/N) or, where
// memfd is unavailable, a private mkstemp file (mode 0600, in $TMPDIR or
// /tmp) unlinked as soon as the library is loaded. Never a shared path: two
// runs of different models cannot see each other's library.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tpu_runtime::detail {

class PrivateLibraryFile {
 public:
  // `name` names the memfd; `what` names the library in errors.
  PrivateLibraryFile(std::span<const uint8_t> bytes, const std::string &name, const std::string &what);
  ~PrivateLibraryFile();
  PrivateLibraryFile(const PrivateLibraryFile &) = delete;
  PrivateLibraryFile &operator=(const PrivateLibraryFile &) = delete;

  // The path to dlopen.
  const std::string &path() const { return path_; }
  // The library is loaded: a temporary file can go (the mapping stays).
  void loaded();

 private:
  int fd_ = -1;
  std::string path_, temp_path_;
};

}  // namespace tpu_runtime::detail
