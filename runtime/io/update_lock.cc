// update_lock.cc: flock on the file being updated, and the identity check
// before its replacement is renamed in place.
#include "io/update_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "tpu_runtime/error.h"

namespace tpu_runtime::detail {
namespace {

// The innermost lock this thread holds (each lock links to the one before).
thread_local const UpdateLock *t_innermost = nullptr;

bool same_time(const timespec &a, const timespec &b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

}  // namespace

std::string real_file_path(const std::string &path) {
  std::error_code error;
  std::filesystem::path real = std::filesystem::canonical(path, error);
  return error ? path : real.string();
}

UpdateLock::UpdateLock(const std::string &path, int wait_seconds) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(wait_seconds);
  for (;;) {
    path_ = real_file_path(path);
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(fmt::format("{}: cannot open to lock it for the update: {}", path, std::strerror(errno)));
    // Poll rather than block, so a holder that never lets go gives a clear
    // error instead of a hang.
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) {
        const int err = errno;
        ::close(fd);
        throw Error(fmt::format("{}: cannot lock it for the update: {}", path, std::strerror(err)));
      }
      if (Clock::now() > give_up) {
        ::close(fd);
        throw Error(fmt::format("{}: another process has been updating it for {} s (it holds the file's lock); "
                                "try again when it is done",
                                path, wait_seconds));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    struct stat locked {}, named {};
    if (::fstat(fd, &locked) == 0 && ::stat(path_.c_str(), &named) == 0 && locked.st_dev == named.st_dev &&
        locked.st_ino == named.st_ino) {
      fd_ = fd;
      device_ = locked.st_dev;
      inode_ = locked.st_ino;
      size_ = locked.st_size;
      mtime_ = locked.st_mtim;
      break;
    }
    ::close(fd);  // replaced while we waited: lock the new file instead
  }
  outer_ = t_innermost;
  t_innermost = this;
}

UpdateLock::~UpdateLock() {
  if (t_innermost == this) t_innermost = outer_;
  ::close(fd_);  // releases the lock
}

void UpdateLock::check_still_current() const {
  struct stat named {};
  if (::stat(path_.c_str(), &named) != 0)
    throw Error(fmt::format("{}: removed by someone else while it was being updated", path_));
  if (named.st_dev != device_ || named.st_ino != inode_)
    throw Error(fmt::format("{}: replaced by someone else (a writer that does not take the update lock) while it "
                            "was being updated",
                            path_));
  if (named.st_size != size_ || !same_time(named.st_mtim, mtime_))
    throw Error(fmt::format("{}: written by someone else while it was being updated", path_));
}

const UpdateLock *UpdateLock::held_by_this_thread(const std::string &real_path) {
  for (const UpdateLock *lock = t_innermost; lock; lock = lock->outer_)
    if (lock->path_ == real_path) return lock;
  return nullptr;
}

}  // namespace tpu_runtime::detail
