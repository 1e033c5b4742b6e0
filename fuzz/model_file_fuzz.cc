// model_file_fuzz: libFuzzer target for the model file reader.
//
// Any input may be rejected, but only with tpu_runtime::Error. Anything else
// is a finding: a crash, a sanitizer report, another exception, a timeout,
// an allocation above -rss_limit_mb, or an accepted input that does not
// survive write -> read unchanged.
//
// The fuzz build defines FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, which makes
// the reader compute but not enforce its CRCs, so that mutated inputs reach
// the checks behind them.
//
//   model_file_fuzz --write-seeds=DIR   writes a seed corpus of valid files and exits
//   model_file_fuzz [libFuzzer flags] CORPUS...
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_seeds.h"
#include "tpu_runtime/model_file.h"

namespace {

using tpu_runtime::ModelFile;
using tpu_runtime::Section;

std::vector<uint8_t> pattern(size_t n, unsigned seed) {
  std::vector<uint8_t> out(n);
  uint32_t x = seed * 2654435761u + 1;
  for (uint8_t &b : out) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = uint8_t(seed % 2 ? x : x % 4);  // odd seeds: noisy, even: compressible
  }
  return out;
}

std::vector<ModelFile> seed_models() {
  std::vector<ModelFile> models;
  models.emplace_back();  // no sections, empty metadata
  ModelFile one;
  one.metadata = {{"chip", "bm1684x"}};
  one.sections.push_back({"kernel_module", "kernel_module", pattern(300, 1)});
  models.push_back(one);
  ModelFile many;
  many.metadata = {{"chip", "bm1688"},
                   {"inputs", {{{"name", "in0"}, {"shape", {1, 3, 8, 8}}, {"dtype", "f32"}}}},
                   {"layers", {{{"op", "absadd"}, {"params", {1.5, -2, true, nullptr}}}}},
                   {"note", "\xc3\xa9\\\"[{"}};
  many.sections.push_back({"kernel_module", "kernel_module", pattern(200, 3)});
  many.sections.push_back({"layer0.commands", "commands", pattern(1500, 4)});
  many.sections.push_back({"empty", "coefficients", {}});
  many.sections.push_back({"coeff", "coefficients", pattern(64, 5)});
  models.push_back(many);
  return models;
}

void write_seeds(fuzz_seeds::Writer &seeds) {
  for (const ModelFile &m : seed_models())
    for (int level : {0, 6}) seeds.add(tpu_runtime::serialize_model_file(m, level));
}

bool same(const ModelFile &a, const ModelFile &b) {
  if (a.metadata != b.metadata || a.sections.size() != b.sections.size()) return false;
  for (size_t i = 0; i < a.sections.size(); ++i)
    if (a.sections[i].name != b.sections[i].name || a.sections[i].kind != b.sections[i].kind ||
        a.sections[i].data != b.sections[i].data)
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fuzz_seeds::handle_option(*argc, *argv, write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ModelFile model;
  try {
    model = tpu_runtime::parse_model_file({data, size}, "fuzz-input");
  } catch (const tpu_runtime::Error &) {
    return 0;  // a clean rejection
  }
  // Accepted: writing it and reading it back must work and give the same model.
  const std::vector<uint8_t> again = tpu_runtime::serialize_model_file(model, 1);
  if (!same(tpu_runtime::parse_model_file(again, "rewritten"), model)) {
    std::fprintf(stderr, "an accepted model changed through write -> read\n");
    std::abort();
  }
  return 0;
}
