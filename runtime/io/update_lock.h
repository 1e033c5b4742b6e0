// update_lock.h (internal): an exclusive advisory lock on a file that is
// read, changed and written back (tpu_model kernel_update, .bmodel updates).
//
// Two updaters that read the same old file and each rename their own new one
// over it would lose the first update. An updater therefore locks the file
// (flock) before reading it and keeps the lock until its replacement is
// renamed into place; a writer that only replaces the file (AtomicFile
// without an update lock) takes the same lock around its rename. A waiter
// that gets the lock after the file was replaced finds the path now names
// another file and locks that one instead, so it reads the newest content.
// Writers that do not lock (another program, a `cp`) are caught by
// check_still_current() just before the rename: the path must still name the
// locked file, unchanged in size and modification time.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <string>

namespace tpu_runtime::detail {

class UpdateLock {
 public:
  // Locks the existing file `path` names (through symlinks), waiting at most
  // `wait_seconds` for another holder. Throws Error naming the file.
  explicit UpdateLock(const std::string &path, int wait_seconds = 300);
  ~UpdateLock();
  UpdateLock(const UpdateLock &) = delete;
  UpdateLock &operator=(const UpdateLock &) = delete;

  // The locked file's real path (symlinks resolved): read and write this.
  const std::string &path() const { return path_; }

  // Throws Error when the path no longer names the locked file as it was
  // when locked (replaced, or written in place, by someone who did not lock).
  void check_still_current() const;

  // The lock this thread holds on `real_path`, or nullptr.
  static const UpdateLock *held_by_this_thread(const std::string &real_path);

 private:
  std::string path_;
  int fd_ = -1;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  off_t size_ = 0;
  timespec mtime_{};
  const UpdateLock *outer_ = nullptr;  // the lock this thread held before (a stack)
};

// `path` with symlinks resolved when it names an existing file, else as given.
std::string real_file_path(const std::string &path);

}  // namespace tpu_runtime::detail
