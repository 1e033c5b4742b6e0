// fuzz_seeds.h: the --write-seeds=DIR option of every fuzz target
// (scripts/fuzz.sh writes a corpus with it before fuzzing).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fuzz_seeds {

// Writes seeds as DIR/seed-0, seed-1, ...; a write that fails stops the
// program (a corpus with a missing seed would fuzz less than it says).
class Writer {
 public:
  explicit Writer(std::string dir) : dir_(std::move(dir)) { std::filesystem::create_directories(dir_); }
  ~Writer() { std::printf("wrote %d seeds to %s\n", count_, dir_.c_str()); }

  void add(const std::vector<uint8_t> &bytes) {
    const std::string path = dir_ + "/seed-" + std::to_string(count_++);
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      std::exit(1);
    }
  }

 private:
  std::string dir_;
  int count_ = 0;
};

// LLVMFuzzerInitialize's part: with --write-seeds=DIR, writes the seeds
// and exits; otherwise the fuzzer runs.
inline void handle_option(int argc, char **argv, void (*write_seeds)(Writer &)) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--write-seeds=", 14) == 0) {
      {
        Writer writer(argv[i] + 14);
        write_seeds(writer);
      }
      std::exit(0);
    }
}

}  // namespace fuzz_seeds
