// ppl_test_runner.cc: the host side of PPL __TEST__ programs
// (ppl/ppl_test_host.h, docs/ppl.md "__TEST__ programs"): buffers the
// tests allocate, random data, the vendor-style dumps around each kernel
// call, and the program's main loop over the tests.
#include "ppl/ppl_test_host.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cmodel_host.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/npz.h"
#include "ppl_test_state.h"

namespace ppl_test_host {

runner &state() {
  static runner r;
  return r;
}

std::optional<tpu_runtime::Dtype> host_dtype(int ppl_dtype) {
  using tpu_runtime::Dtype;
  switch (ppl_dtype) {
    case 1: return Dtype::fp32;
    case 2: return Dtype::fp16;
    case 3: return Dtype::bf16;
    case 8: return Dtype::int32;
    case 9: return Dtype::uint32;
    case 10: return Dtype::int16;
    case 11: return Dtype::uint16;
    case 12: return Dtype::int8;
    case 13: return Dtype::uint8;
    default: return std::nullopt;
  }
}

}  // namespace ppl_test_host

namespace {

using namespace ppl_test_host;
using tpu_runtime::Dtype;

// The element count of `shape`, or nullopt (after saying why) when a
// dimension is not positive.
std::optional<uint64_t> element_count(const int shape[4], const char *what, const char *where) {
  uint64_t count = 1;
  for (int i = 0; i < 4; ++i) {
    if (shape[i] <= 0) {
      std::fprintf(stderr, "%s: %s: shape [%d, %d, %d, %d] has a dimension that is not positive\n", where, what,
                   shape[0], shape[1], shape[2], shape[3]);
      return std::nullopt;
    }
    count *= static_cast<uint64_t>(shape[i]);
  }
  return count;
}

std::string npz_dtype(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32: return "<f4";
    case Dtype::fp16: return "<f2";
    case Dtype::bf16: return std::string(tpu_runtime::npz::dtype_bf16);
    case Dtype::int32: return "<i4";
    case Dtype::uint32: return "<u4";
    case Dtype::int16: return "<i2";
    case Dtype::uint16: return "<u2";
    case Dtype::int8: return "|i1";
    case Dtype::uint8: return "|u1";
  }
  return "|u1";
}

// Writes the buffers the pointers start, keyed by pointer index.
void dump(const char *kernel, const uint64_t *pointers, int count, const char *suffix) {
  runner &r = state();
  tpu_runtime::npz::Arrays arrays;
  for (int i = 0; i < count; ++i) {
    const auto found = r.buffers.find(pointers[i]);
    if (found == r.buffers.end()) {
      if (suffix[0] == 'i')
        std::fprintf(stderr, "%s: pointer argument %d (%#llx) is no buffer of ppl::malloc / ppl::rand: not dumped\n",
                     kernel, i, static_cast<unsigned long long>(pointers[i]));
      continue;
    }
    tpu_runtime::npz::Array a;
    a.dtype = npz_dtype(found->second.dtype);
    a.shape = found->second.shape;
    a.data.resize(found->second.bytes);
    if (cmodel_global_read(a.data.data(), pointers[i], found->second.bytes) != 0)
      throw tpu_runtime::Error(fmt::format("{}: reading argument {} back: {}", kernel, i, cmodel_last_error()));
    arrays[std::to_string(i)] = std::move(a);
  }
  const std::string prefix = r.calls == 0 ? r.stem : fmt::format("{}_{}", r.stem, r.calls);
  std::filesystem::create_directories(r.data_dir);
  tpu_runtime::npz::write_npz(fmt::format("{}/{}_{}.npz", r.data_dir, prefix, suffix), arrays);
}

}  // namespace

extern "C" {

uint64_t ppl_test_alloc(int ppl_dtype, int element_size, const int shape[4], const char *where) {
  const std::optional<Dtype> dtype = host_dtype(ppl_dtype);
  const std::optional<uint64_t> count = element_count(shape, "ppl::malloc", where);
  if (!count) return 0;
  if (!dtype || static_cast<int>(tpu_runtime::dtype_size(*dtype)) != element_size) {
    std::fprintf(stderr, "%s: ppl::malloc: element type %d has no host type (fp32, fp16, bf16, [u]int8/16/32)\n",
                 where, ppl_dtype);
    return 0;
  }
  const uint64_t bytes = *count * static_cast<uint64_t>(element_size);
  const uint64_t address = cmodel_global_alloc(bytes);
  const uint8_t zero = 0;
  if (address == 0 || cmodel_global_fill(address, &zero, 1, bytes) != 0) {
    std::fprintf(stderr, "%s: ppl::malloc of %llu bytes: %s\n", where, static_cast<unsigned long long>(bytes),
                 cmodel_last_error());
    return 0;
  }
  state().buffers[address] = buffer{*dtype, {shape[0], shape[1], shape[2], shape[3]}, bytes};
  return address;
}

int ppl_test_fill_random(uint64_t address, int ppl_dtype, const int shape[4], double lo, double hi,
                         const char *where) {
  const int stride[4] = {shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1}, offset[4] = {0, 0, 0, 0};
  return ppl_test_fill_random_strided(address, ppl_dtype, shape, stride, offset, lo, hi, where);
}

void ppl_test_before_call(const char *kernel, const uint64_t *pointers, int count) {
  if (!state().autotune) dump(kernel, pointers, count, "input");
}

int ppl_test_after_call(const char *kernel, int status, const uint64_t *pointers, int count) {
  runner &r = state();
  if (r.autotune) {  // a candidate configuration: a row of the table, whatever its status
    record_tuning(kernel, status);
    return status;
  }
  if (status != 0) {
    std::fprintf(stderr, "%s returned %d (%#x): %s\n", kernel, status, static_cast<unsigned>(status),
                 cmodel_last_error());
    ++r.failures;
  } else {
    dump(kernel, pointers, count, "tar");
  }
  ++r.calls;
  return status;
}

int ppl_test_main(int argc, char **argv, const char *stem, const char *const *names, const ppl_test_function *tests,
                  const int *autotune, int count) {
  runner &r = state();
  r.stem = stem;
  const std::string chip = argc > 1 ? argv[1] : "bm1684x";
  if (argc > 2) r.data_dir = argv[2];
  if (argc > 3 || (chip != "bm1684x" && chip != "bm1688")) {
    std::fprintf(stderr, "usage: %s [bm1684x|bm1688] [data directory]  (the __TEST__ functions of %s.pl)\n", argv[0],
                 stem);
    return 2;
  }
  if (cmodel_open(chip.c_str()) != 0) {
    std::fprintf(stderr, "cmodel_open(\"%s\"): %s\n", chip.c_str(), cmodel_last_error());
    return 1;
  }
  int failed = 0;
  for (int i = 0; i < count; ++i) {
    r.failures = 0;
    r.autotune = autotune[i] != 0;
    r.table.clear();
    std::printf("[ RUN      ] %s.pl: %s%s on %s\n", stem, r.autotune ? "__AUTOTUNE__ " : "", names[i], chip.c_str());
    int result = 1;
    try {
      result = tests[i]();
    } catch (const std::exception &e) {
      std::fprintf(stderr, "%s: %s\n", names[i], e.what());
    }
    // An __AUTOTUNE__ function passes when one of its configurations ran.
    if (r.autotune && !report_tuning(names[i])) result = 1;
    const bool passed = result == 0 && r.failures == 0;
    std::printf("[ %s ] %s\n", passed ? "      OK" : " FAILED ", names[i]);
    failed += passed ? 0 : 1;
  }
  cmodel_close();
  std::printf("__TEST__ / __AUTOTUNE__ functions of %s.pl on %s: %d of %d passed\n", stem, chip.c_str(), count - failed, count);
  return failed == 0 ? 0 : 1;
}

}  // extern "C"
