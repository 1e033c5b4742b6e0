// npy_fuzz: libFuzzer target for the .npy parser (tpu_runtime::npz::parse_npy).
//
// Rejections must be tpu_runtime::Error; an accepted array must format and
// parse back unchanged.
//   npy_fuzz --write-seeds=DIR   writes a seed corpus and exits
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_seeds.h"
#include "tpu_runtime/npz.h"

namespace {

using tpu_runtime::npz::Array;

void write_seeds(fuzz_seeds::Writer &seeds) {
  std::vector<Array> arrays = {
      Array::from<float>({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6}),
      Array::from<int8_t>({}, std::vector<int8_t>{-1}),
      Array::from<uint16_t>({4}, std::vector<uint16_t>{0x3f80, 0, 1, 0xffff}),
      Array::from<int32_t>({1, 0, 2}, std::vector<int32_t>{}),
      Array::from<double>({1}, std::vector<double>{0.5}),
  };
  Array flags;
  flags.dtype = "|b1";
  flags.shape = {3};
  flags.data = {1, 0, 1};
  arrays.push_back(flags);
  for (const Array &a : arrays) seeds.add(tpu_runtime::npz::format_npy(a));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fuzz_seeds::handle_option(*argc, *argv, write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Array a;
  try {
    a = tpu_runtime::npz::parse_npy({data, size}, "fuzz-input");
  } catch (const tpu_runtime::Error &) {
    return 0;
  }
  const Array b = tpu_runtime::npz::parse_npy(tpu_runtime::npz::format_npy(a), "formatted");
  if (a.dtype != b.dtype || a.shape != b.shape || a.data != b.data) {
    std::fprintf(stderr, "an accepted array changed through format -> parse\n");
    std::abort();
  }
  return 0;
}
