// private_library.cc: embedded libraries in private files (private_library.h).
#include "model/private_library.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tpu_runtime/error.h"

namespace tpu_runtime::detail {
namespace {

void write_all(int fd, std::span<const uint8_t> bytes, const std::string &what) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(fmt::format("cannot write {}: {}", what, std::strerror(errno)));
    done += std::size_t(n);
  }
}

}  // namespace

PrivateLibraryFile::PrivateLibraryFile(std::span<const uint8_t> bytes, const std::string &name,
                                       const std::string &what) {
  fd_ = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd_ >= 0) {
    write_all(fd_, bytes, what + " (memfd)");
    // dlopen matches an already loaded library by its name first: if a
    // library loaded from an earlier memfd with this descriptor number is
    // still loaded, use another number.
    for (int attempt = 0;; ++attempt) {
      path_ = fmt::format("/proc/self/fd/{}", fd_);
      void *stale = dlopen(path_.c_str(), RTLD_NOW | RTLD_NOLOAD);
      if (!stale) break;
      dlclose(stale);
      const int other = fcntl(fd_, F_DUPFD_CLOEXEC, fd_ + 1);
      if (other < 0 || attempt > 64) {
        ::close(fd_);
        throw Error(fmt::format("{}: cannot find a free descriptor to load it from", what));
      }
      ::close(fd_);
      fd_ = other;
    }
    return;
  }
  // No memfd (old kernel, seccomp): a private temporary file.
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/tpu_model_library-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  fd_ = mkostemp(pattern.data(), O_CLOEXEC);
  if (fd_ < 0) throw Error(fmt::format("{}: cannot create a private temporary file: {}", what, std::strerror(errno)));
  temp_path_ = pattern;
  path_ = temp_path_;
  try {
    write_all(fd_, bytes, what + " (" + temp_path_ + ")");
  } catch (const Error &) {
    ::unlink(temp_path_.c_str());
    ::close(fd_);
    throw;
  }
}

void PrivateLibraryFile::loaded() {
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  temp_path_.clear();
}

PrivateLibraryFile::~PrivateLibraryFile() {
  loaded();
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace tpu_runtime::detail
