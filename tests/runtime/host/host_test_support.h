// host_test_support.h: helpers of runtime_host_test.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tpu_runtime/error.h"
#include "tpu_runtime/host_op.h"

#include "support/test_support.h"

namespace host_test {

using tpu_runtime::Dtype;
using tpu_runtime::HostTensor;
using tpu_runtime::Shape;

inline HostTensor floats(const Shape &shape, const std::vector<float> &values) {
  HostTensor t{Dtype::fp32, shape, std::vector<std::uint8_t>(values.size() * 4)};
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

inline HostTensor spec(Dtype dtype, const Shape &shape) { return {dtype, shape, {}}; }

template <typename T>
std::vector<T> values_of(const HostTensor &t) {
  std::vector<T> v(t.bytes.size() / sizeof(T));
  std::memcpy(v.data(), t.bytes.data(), v.size() * sizeof(T));
  return v;
}

// The message of the Error `fn` throws; a failure when it throws none.
template <typename Fn>
std::string error_of(Fn &&fn) {
  try {
    fn();
  } catch (const tpu_runtime::Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "no tpu_runtime::Error was thrown";
  return "";
}

}  // namespace host_test
