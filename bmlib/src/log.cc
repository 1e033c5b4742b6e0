// log.cc: bmlib_log and its level and callback.
//
// Every error this library reports goes through bmlib_log at
// BMLIB_LOG_ERROR with the public function's name as tag, so a program's
// callback (bmlib_log_set_callback) sees what a device would have logged,
// including the emulator's message for a kernel that faulted.
#include <atomic>
#include <cstdio>

#include "bmlib_internal.h"

namespace {

using Callback = void (*)(const char *, int, const char *, va_list);

std::atomic<int> g_level{BMLIB_LOG_ERROR};
std::atomic<Callback> g_callback{nullptr};

}  // namespace

extern "C" {

void bmlib_log(const char *tag, int level, const char *fmt, ...) {
  if (level > g_level.load() || !fmt) return;
  va_list args;
  va_start(args, fmt);
  if (Callback callback = g_callback.load()) {
    callback(tag ? tag : "", level, fmt, args);
  } else {
    std::fprintf(stderr, "[bmlib %s] ", tag ? tag : "");
    std::vfprintf(stderr, fmt, args);
  }
  va_end(args);
}

int bmlib_log_get_level(void) { return g_level.load(); }

void bmlib_log_set_level(int level) { g_level.store(level); }

void bmlib_log_set_callback(void (*callback)(const char *, int, const char *, va_list args)) {
  g_callback.store(callback);
}

}  // extern "C"

namespace bmlib {

void log_line(int level, const char *tag, const std::string &message) {
  bmlib_log(tag, level, "%s\n", message.c_str());
}

}  // namespace bmlib
