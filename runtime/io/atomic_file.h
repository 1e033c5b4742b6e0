// atomic_file.h (internal): replace a file so that readers see either the old
// content or the complete new one, never a half-written file.
//
// The new content goes to a temporary file in the target's directory
// (".<name>.tmp-XXXXXX", created with O_EXCL). commit() fsyncs it, renames it
// over the target and fsyncs the directory. Without commit() (an exception,
// an early return) the destructor removes the temporary file and the target
// is untouched. A process killed mid-write leaves at worst a stray temporary
// file beside an intact target.
//
// A symlinked target is written through (the file it names is replaced, the
// link stays), the replacement keeps the old file's owner, group and mode,
// and the rename is serialised with updaters through UpdateLock
// (update_lock.h), so no update is lost to a concurrent writer.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <span>
#include <string>

namespace tpu_runtime::detail {

class AtomicFile {
 public:
  // Creates the temporary file. Its owner and mode are the target's when the
  // target exists (so a rewrite keeps them), otherwise ours and 0666 less
  // the umask.
  explicit AtomicFile(std::string target);
  ~AtomicFile();
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;

  const std::string &target() const { return target_; }
  const std::string &temp_path() const { return temp_; }
  int fd() const { return fd_; }

  // Writes all bytes at the current position / at `offset` (retrying short
  // writes and EINTR); throws Error naming the target.
  void write(std::span<const uint8_t> bytes);
  void write_at(uint64_t offset, std::span<const uint8_t> bytes);

  // fsync, close, rename over the target, fsync the directory.
  void commit();

 private:
  void keep_owner_and_mode(const struct stat &existing);
  void rename_into_place();

  std::string target_;
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace tpu_runtime::detail
