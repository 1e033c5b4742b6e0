#include "support/test_support.h"

#include <cstdio>
#include <cstdlib>

#include <sys/wait.h>

namespace test {
namespace {

uint64_t choose_seed() {
  if (const char *fixed = std::getenv("TPU_TEST_SEED")) return std::strtoull(fixed, nullptr, 0);
  std::random_device device;
  return (uint64_t(device()) << 32) | device();
}

std::string replay_hint(uint64_t seed) {
  return "random seed " + std::to_string(seed) + " (replay with TPU_TEST_SEED=" + std::to_string(seed) + ")";
}

}  // namespace

Seeded::Seeded()
    : seed_(choose_seed()), rng_(seed_), trace_(__FILE__, __LINE__, replay_hint(seed_)) {
  const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::printf("[ seed     ] %s.%s: %s\n", info ? info->test_suite_name() : "?", info ? info->name() : "?",
              replay_hint(seed_).c_str());
}

CommandRun run_command(const std::string &command) {
  CommandRun run;
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return run;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) run.output.append(buffer, n);
  const int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  return run;
}

std::string quoted_command(const std::string &program, const std::vector<std::string> &args) {
  std::string command = program;
  for (const std::string &a : args) command += " '" + a + "'";
  return command;
}

}  // namespace test
