// temp_dir.h: a private directory for one test, removed with everything in
// it when the test ends.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace test {

class TempDir {
 public:
  explicit TempDir(const std::string &prefix = "tpu_sdk_test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::filesystem::path &path() const { return path_; }
  std::string file(const std::string &name) const { return (path_ / name).string(); }
  // Names of the entries, in directory order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto &e : std::filesystem::directory_iterator(path_)) out.push_back(e.path().filename());
    return out;
  }
  size_t entries() const { return names().size(); }

 private:
  std::filesystem::path path_;
};

}  // namespace test
