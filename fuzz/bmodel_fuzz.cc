// bmodel_fuzz: libFuzzer target for the .bmodel reader (header, flatbuffers
// verifier, Binary walk and bounds, the description and its warnings) and
// for the device-module ELF check of kernel_update.
//
// Any input may be rejected, but only with tpu_runtime::Error. Anything else
// is a finding: a crash, a sanitizer report, another exception, a timeout,
// or an accepted model whose description breaks an invariant the reader
// promises (every non-empty payload inside the binary section).
//
//   bmodel_fuzz --write-seeds=DIR   writes a seed corpus of valid files (the
//                                   test writer's fixtures) and exits
//   bmodel_fuzz [libFuzzer flags] CORPUS...
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bmodel/bmodel_elf.h"
#include "fuzz_seeds.h"
#include "support/bmodel_writer.h"
#include "tpu_runtime/bmodel.h"
#include "tpu_runtime/error.h"

namespace {

namespace bm = tpu_runtime::bmodel;
namespace bw = bmodel_writer;

void write_seeds(fuzz_seeds::Writer &seeds) {
  const std::vector<bw::Model> models = {bw::m2_stages(bw::pattern(200, 1)), bw::m347_mixed(bw::pattern(100, 2)),
                                         bw::m6_cascade(bw::pattern(100, 3)), bw::m8_none(),
                                         bw::m9_legacy(bw::pattern(50, 4))};
  for (bw::Model m : models) {
    // Small coefficients: the seeds must fit scripts/fuzz.sh's -max_len.
    for (bw::Net &n : m.nets)
      for (bw::Stage &s : n.stages)
        if (!s.coeff.empty()) s.coeff = bw::pattern(600, 5);
    seeds.add(bw::write(m));
  }
}

void check_accepted(const bm::ModelInfo &info) {
  for (const bm::ModuleInfo *m : {&info.kernel, &info.cpuop})
    if (m->binary.size > 0 &&
        (m->binary.start > info.section_size || m->binary.size > info.section_size - m->binary.start)) {
      std::fprintf(stderr, "an accepted model has a module outside its binary section\n");
      std::abort();
    }
  if (info.referenced_bytes > info.section_size || info.nets.empty()) {
    std::fprintf(stderr, "an accepted model breaks the reader's invariants\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fuzz_seeds::handle_option(*argc, *argv, write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  try {
    if (size >= 4 && std::memcmp(data, "\x7f" "ELF", 4) == 0) {
      bm::check_device_module(bytes, "fuzz-input", 183, "BM1684X");
      return 0;
    }
    const bm::ModelInfo info = bm::parse(bytes, "fuzz-input");
    check_accepted(info);
    (void)bm::info_text(info, "fuzz-input");
  } catch (const tpu_runtime::Error &) {
    return 0;  // a clean rejection
  }
  return 0;
}
