// file_names.h (private): names the runtime stores and later writes as files.
#pragma once

#include <string_view>

namespace tpu_runtime::detail {

// A name that stays one file in the directory it is written to, and is
// the name that gets written: not empty, not "." or "..", no '/' or '\\'
// (a path on POSIX or Windows), no NUL (the C library would cut the name
// there and write a file other than the one named). Kernel-module names
// stored in model files and .bmodel files must be such names.
inline bool is_plain_file_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string_view("/\\\0", 3)) == std::string_view::npos;
}

}  // namespace tpu_runtime::detail
