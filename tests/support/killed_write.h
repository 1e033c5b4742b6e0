// killed_write.h: a process killed in the middle of writing a file, for the
// tests that an update leaves the original intact.
//
// No hook in the SDK is needed: the child runs the write with RLIMIT_FSIZE
// set, so the write stops after `limit` bytes and raises SIGXFSZ in the
// middle of it; the child's handler tells the parent and waits. The parent
// looks at the files while the child is stopped there, then SIGKILLs it.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

namespace test {

class StoppedWriter {
 public:
  // Forks; the child calls write() (which must throw or return only when it
  // did not reach the limit: exit codes 3 and 4) and the parent waits up to
  // a minute for it to reach the limit.
  template <typename Write>
  StoppedWriter(uint64_t limit, Write &&write) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(fds[0]);
      notify_fd() = fds[1];
      struct sigaction sa {};
      sa.sa_handler = [](int) {
        const char byte = 'x';
        (void)!::write(notify_fd(), &byte, 1);
        for (;;) pause();  // until the parent's SIGKILL
      };
      sigaction(SIGXFSZ, &sa, nullptr);
      const rlimit no_core{0, 0};
      setrlimit(RLIMIT_CORE, &no_core);
      const rlimit file_size{limit, limit};
      setrlimit(RLIMIT_FSIZE, &file_size);
      try {
        write();
      } catch (...) {
        _exit(3);
      }
      _exit(4);  // the write was expected to hit the limit
    }
    close(fds[1]);
    pollfd p{fds[0], POLLIN, 0};
    char byte = 0;
    stopped_ = pid_ > 0 && poll(&p, 1, 60000) == 1 && read(fds[0], &byte, 1) == 1;
    close(fds[0]);
  }
  ~StoppedWriter() {
    if (pid_ > 0) kill_and_wait();
  }
  StoppedWriter(const StoppedWriter &) = delete;
  StoppedWriter &operator=(const StoppedWriter &) = delete;

  // True when the child is stopped in the middle of its write.
  bool stopped() const { return stopped_; }
  // SIGKILLs the child; its wait status.
  int kill_and_wait() {
    int status = 0;
    if (pid_ <= 0) return status;
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  static int &notify_fd() {
    static int fd = -1;
    return fd;
  }
  pid_t pid_ = -1;
  bool stopped_ = false;
};

}  // namespace test
