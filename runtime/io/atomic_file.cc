// atomic_file.cc: temporary file + fsync + rename + directory fsync.
#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "tpu_runtime/error.h"
#include "io/update_lock.h"

namespace tpu_runtime::detail {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

std::string parent_directory(const std::string &path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

AtomicFile::AtomicFile(std::string target) : target_(std::move(target)) {
  namespace fs = std::filesystem;
  if (target_.empty()) throw Error("cannot write a file with an empty path");
  // A symlink is written through: the file it names is replaced and the
  // link stays a link.
  struct stat link {};
  if (::lstat(target_.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    const std::string real = real_file_path(target_);
    if (real == target_)
      throw Error(fmt::format("{}: a symbolic link to a file that does not exist (or a loop); refusing to replace "
                              "the link with a regular file",
                              target_));
    target_ = real;
  }
  const fs::path target_path(target_);
  if (target_path.filename().empty())
    throw Error(fmt::format("{}: not a file name (it ends with a '/')", target_));

  struct stat existing {};
  const bool exists = ::stat(target_.c_str(), &existing) == 0;
  if (exists && S_ISDIR(existing.st_mode))
    throw Error(fmt::format("{}: is a directory", target_));

  std::random_device entropy;
  std::mt19937_64 rng((uint64_t(entropy()) << 32) ^ entropy() ^ uint64_t(::getpid()));
  const std::string dir = parent_directory(target_);
  const std::string base = target_path.filename().string();
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string candidate = (fs::path(dir) / fmt::format(".{}.tmp-{:012x}", base,
                                                           rng() & 0xffffffffffffULL)).string();
    int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      fd_ = fd;
      temp_ = std::move(candidate);
      break;
    }
    if (errno != EEXIST)
      throw Error(fmt::format("{}: cannot create a temporary file in {}: {}", target_, dir,
                              errno_text(errno)));
  }
  if (fd_ < 0)
    throw Error(fmt::format("{}: cannot find a free temporary file name in {}", target_, dir));
  if (exists) keep_owner_and_mode(existing);
}

// The replacement gets the replaced file's owner, group and mode (in that
// order: chown may clear set-id bits). A file we could not give back to its
// owner is not replaced.
void AtomicFile::keep_owner_and_mode(const struct stat &existing) {
  const char *what = nullptr;
  if ((existing.st_uid != ::geteuid() || existing.st_gid != ::getegid()) &&
      ::fchown(fd_, existing.st_uid, existing.st_gid) != 0)
    what = "owner and group";
  else if (::fchmod(fd_, existing.st_mode & 07777) != 0)
    what = "mode";
  if (!what) return;
  const int err = errno;
  ::close(fd_);
  fd_ = -1;
  ::unlink(temp_.c_str());
  throw Error(fmt::format("{}: cannot give its replacement the file's {} (uid {}, gid {}, mode {:o}): {}; the file "
                          "was not changed",
                          target_, what, existing.st_uid, existing.st_gid, existing.st_mode & 07777, errno_text(err)));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

void AtomicFile::write(std::span<const uint8_t> bytes) {
  const uint8_t *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const size_t chunk = std::min<size_t>(left, size_t(1) << 30);
    const ssize_t n = ::write(fd_, p, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("{}: write to {} failed: {}", target_, temp_, errno_text(errno)));
    }
    p += n;
    left -= size_t(n);
  }
}

void AtomicFile::write_at(uint64_t offset, std::span<const uint8_t> bytes) {
  const uint8_t *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const size_t chunk = std::min<size_t>(left, size_t(1) << 30);
    const ssize_t n = ::pwrite(fd_, p, chunk, off_t(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("{}: write to {} failed: {}", target_, temp_, errno_text(errno)));
    }
    p += n;
    offset += uint64_t(n);
    left -= size_t(n);
  }
}

// An updater that locked the target (UpdateLock) checks the file is still
// the one it read; any other writer takes the lock for the rename, so it
// waits for an update in progress instead of being overwritten by it.
void AtomicFile::rename_into_place() {
  auto rename = [&] {
    if (::rename(temp_.c_str(), target_.c_str()) != 0)
      throw Error(fmt::format("{}: cannot rename {} over it: {}", target_, temp_, errno_text(errno)));
  };
  struct stat st {};
  if (::stat(target_.c_str(), &st) != 0) return rename();
  if (const UpdateLock *held = UpdateLock::held_by_this_thread(target_)) {
    held->check_still_current();
    return rename();
  }
  const UpdateLock lock(target_);
  rename();
}

void AtomicFile::commit() {
  if (committed_ || fd_ < 0) throw Error(fmt::format("{}: file already committed", target_));
  if (::fsync(fd_) != 0)
    throw Error(fmt::format("{}: fsync of {} failed: {}", target_, temp_, errno_text(errno)));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0)
    throw Error(fmt::format("{}: closing {} failed: {}", target_, temp_, errno_text(errno)));
  rename_into_place();
  committed_ = true;
  // Make the rename itself durable.
  const std::string dir = parent_directory(target_);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0)
    throw Error(fmt::format("{}: written, but cannot open directory {} to fsync it: {}",
                            target_, dir, errno_text(errno)));
  const int rc = ::fsync(dir_fd);
  const int err = errno;
  ::close(dir_fd);
  if (rc != 0)
    throw Error(fmt::format("{}: written, but fsync of directory {} failed: {}", target_, dir,
                            errno_text(err)));
}

}  // namespace tpu_runtime::detail
