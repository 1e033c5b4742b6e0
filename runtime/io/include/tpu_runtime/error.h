// error.h: the one exception type of the runtime.
//
// Everything the runtime refuses (a library that does not load, a missing
// symbol, a bad parameter, a malformed model file, a kernel that failed on
// the cmodel) throws tpu_runtime::Error with a message that names what was
// wrong and where. Command-line tools print it and exit non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace tpu_runtime {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tpu_runtime
