// bmodel_test: tpu_model on vendor .bmodel files: reading what the test
// writer wrote, kernel_update round trips (replace and append modes, longer
// and shorter modules, renames, both chips), every refusal with the original
// untouched, an update killed mid-write, random damage, and the binary.
//
// Device modules are real ELF shared objects assembled here with Debian's
// cross binutils (binutils-aarch64-linux-gnu, binutils-riscv64-linux-gnu;
// scripts/setup.sh installs them). A test that needs a missing tool is
// skipped, naming it. The round trip is checked against flatc's own reading
// of the FlatBuffer (JSON), not only against our reader.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "support/bmodel_writer.h"
#include "support/killed_write.h"
#include "support/test_support.h"
#include "tpu_runtime/bmodel.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/model.h"

namespace {

namespace fs = std::filesystem;
namespace bm = tpu_runtime::bmodel;
namespace bw = bmodel_writer;
using bw::Bytes;
using nlohmann::json;

Bytes read_bytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string &path, const Bytes &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}

std::string digest_hex(const Bytes &bytes, const EVP_MD *md) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), out, &n, md, nullptr);
  std::string hex;
  for (unsigned int i = 0; i < n; ++i) {
    static const char digits[] = "0123456789abcdef";
    hex += digits[out[i] >> 4];
    hex += digits[out[i] & 15];
  }
  return hex;
}

bool have_program(const std::string &name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

int run(const std::string &command) { return std::system(command.c_str()); }

// Assembles a tiny shared object defining `symbols` with `prefix`-as/ld
// (prefix "" for the host). Empty string when the tools are missing.
std::string build_module(const std::string &dir, const std::string &name, const std::string &prefix,
                         const std::vector<std::string> &symbols, int padding_words = 0) {
  if (!have_program(prefix + "as") || !have_program(prefix + "ld")) return "";
  const std::string base = dir + "/" + name;
  {
    std::ofstream s(base + ".s");
    s << "  .text\n";
    for (const std::string &sym : symbols)
      s << "  .globl " << sym << "\n  .type " << sym << ", %function\n" << sym << ":\n  nop\n  nop\n";
    if (padding_words) s << "  .fill " << padding_words << ", 4, 0x13\n";
  }
  const std::string extra = prefix == "aarch64-linux-gnu-" ? " -z max-page-size=4096" : "";
  if (run(prefix + "as " + base + ".s -o " + base + ".o") != 0 ||
      run(prefix + "ld -shared" + extra + " " + base + ".o -o " + base + ".so") != 0)
    return "";
  return base + ".so";
}

const std::vector<std::string> kEntries = {"sg_api_multi_fullnet", "sg_api_dynamic_fullnet", "sg_api_set_profile"};

// Every refusal names its file and its rule; the model stays byte-identical.
struct Snapshot {
  Bytes bytes;
  struct stat st {};
};

Snapshot snapshot(const std::string &path) {
  Snapshot s{read_bytes(path)};
  ::stat(path.c_str(), &s.st);
  return s;
}

void expect_untouched(const std::string &path, const Snapshot &before) {
  struct stat now {};
  ::stat(path.c_str(), &now);
  EXPECT_EQ(read_bytes(path), before.bytes) << path;
  EXPECT_EQ(now.st_mtim.tv_sec, before.st.st_mtim.tv_sec) << path;
  EXPECT_EQ(now.st_mtim.tv_nsec, before.st.st_mtim.tv_nsec) << path;
  EXPECT_EQ(now.st_ino, before.st.st_ino) << path << ": replaced";
}

void expect_error(const std::function<void()> &f, const std::vector<std::string> &parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << parts.at(0) << "'";
  } catch (const tpu_runtime::Error &e) {
    const std::string what = e.what();
    for (const std::string &p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
  }
}

class BmodelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/bmodel_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string &name) const { return dir_ + "/" + name; }

  std::string module(const std::string &name, const std::string &prefix, const std::vector<std::string> &symbols,
                     int padding = 0) {
    return build_module(dir_, name, prefix, symbols, padding);
  }
  std::string aarch64(int padding = 0, const std::string &name = "libbm1684x_custom.so_") {
    return module(name, "aarch64-linux-gnu-", kEntries, padding);
  }
  std::string riscv(int padding = 0) { return module("libbm1688_custom", "riscv64-linux-gnu-", kEntries, padding); }

  std::string save(const std::string &name, const bw::Model &m) {
    write_bytes(path(name), bw::write(m));
    return path(name);
  }

  // flatc's reading of the FlatBuffer of `file` as JSON, every Binary
  // replaced by the SHA-256 of its payload and kernel_module dropped: what
  // an update must leave unchanged. Independent of our reader.
  json normalized(const std::string &file) {
    const Bytes bytes = read_bytes(file);
    uint32_t f = 0;
    std::memcpy(&f, bytes.data() + 8, 4);
    const std::string raw = path("fb.bin"), out = path("json");
    write_bytes(raw, Bytes(bytes.begin() + 64, bytes.begin() + 64 + f));
    fs::create_directories(out);
    EXPECT_EQ(run(std::string(FLATC) + " --json --strict-json --defaults-json --raw-binary -o " + out + " " +
                  BMODEL_SCHEMA + " -- " + raw),
              0);
    json j = json::parse(std::ifstream(out + "/fb.json"));
    const Bytes section(bytes.begin() + 64 + f, bytes.end());
    std::function<void(json &)> visit = [&](json &node) {
      if (node.is_object() && node.size() == 2 && node.contains("start") && node.contains("size")) {
        const uint64_t start = node["start"], size = node["size"];
        node = size == 0 ? json("empty")
                         : json(digest_hex(Bytes(section.begin() + std::ptrdiff_t(start),
                                                 section.begin() + std::ptrdiff_t(start + size)),
                                           EVP_sha256()));
        return;
      }
      if (node.is_structured())
        for (auto &child : node) visit(child);
    };
    visit(j);
    j.erase("kernel_module");
    return j;
  }

  std::string dir_;
};

#define REQUIRE_MODULE(p)                                                                                        \
  if ((p).empty())                                                                                               \
  GTEST_SKIP() << "cross binutils missing (binutils-aarch64-linux-gnu / binutils-riscv64-linux-gnu / host as,ld): " \
                  "scripts/setup.sh installs them"

// ---- reading -----------------------------------------------------------------

TEST_F(BmodelTest, ReadsEveryFieldTheWriterWrote) {
  const Bytes kernel = bw::pattern(3000, 1);
  const bw::Model m = bw::m347_mixed(kernel);
  const std::string file = save("mixed.bin", m);
  const bm::ModelInfo info = bm::read(file);
  EXPECT_EQ(info.type, "B");
  EXPECT_EQ(info.version, m.version);
  EXPECT_EQ(info.time, m.time);
  EXPECT_EQ(info.chip, "BM1684X");
  EXPECT_EQ(info.device_num, 1u);
  EXPECT_EQ(info.bmodel_type, 1u);
  EXPECT_EQ(info.neuron_size, 4u * 65536);
  EXPECT_TRUE(info.kernel.present);
  EXPECT_EQ(info.kernel.file_name, "libbm1684x_kernel_module.so");
  EXPECT_EQ(info.kernel.binary, (bm::BinaryRef{0, 3000}));  // the compiler writes it first
  EXPECT_EQ(info.kernel.sha256, digest_hex(kernel, EVP_sha256()));
  EXPECT_EQ(info.kernel.md5, digest_hex(kernel, EVP_md5()));
  EXPECT_EQ(info.cpuop.file_name, "libcpuop.so");
  EXPECT_EQ(info.cpuop.sha256, digest_hex(m.cpuop, EVP_sha256()));
  ASSERT_TRUE(info.lib_backend);
  EXPECT_EQ(info.lib_backend->size, 96u);
  ASSERT_EQ(info.nets.size(), 3u);
  EXPECT_EQ(info.nets[0].name, "resnet");
  ASSERT_EQ(info.nets[0].stages.size(), 2u);
  for (std::size_t s = 0; s < 2; ++s) {
    const bm::StageInfo &st = info.nets[0].stages[s];
    const bw::Stage &want = m.nets[0].stages[s];
    EXPECT_FALSE(st.dynamic);
    EXPECT_EQ(st.subnets, 1u);
    EXPECT_EQ(st.ctx_size, want.ctx_size);
    EXPECT_EQ(st.coeff_size, 64u * 1024);
    ASSERT_EQ(st.inputs.size(), 1u);
    EXPECT_EQ(st.inputs[0].name, "images");
    EXPECT_EQ(st.inputs[0].data_type, 2u);
    EXPECT_EQ(st.inputs[0].scale, 0.5f);
    EXPECT_EQ(st.inputs[0].zero_point, 3);
    ASSERT_EQ(st.inputs[0].shapes.size(), 1u);
    EXPECT_EQ(st.inputs[0].shapes[0], want.inputs[0].shape);
    EXPECT_EQ(st.outputs[0].shapes[0], want.outputs[0].shape);
  }
  EXPECT_TRUE(info.nets[1].stages[0].dynamic);
  EXPECT_EQ(info.nets[2].stages[0].subnets, 3u);
  EXPECT_TRUE(info.warnings.empty()) << info.warnings.at(0);
  // Dedup: the two stages' 64 KiB of coefficients are one payload.
  const std::string text = bm::info_text(info, file);
  for (const std::string &part : std::vector<std::string>{"chip BM1684X", "net 'resnet': static", "net 'dyn': dynamic", "2 stages",
                                 "images", "i8", "[4,3,16,16]", info.kernel.sha256, info.kernel.md5, "libcpuop.so"})
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
}

TEST_F(BmodelTest, DetectsFromTheMagicNotTheExtension) {
  const std::string file = save("model.tpumodel", bw::m2_stages(bw::pattern(100, 2)));
  EXPECT_TRUE(bm::file_has_bmodel_magic(file));
  write_bytes(path("x.bmodel"), {'T', 'P', 'U', 'M'});
  EXPECT_FALSE(bm::file_has_bmodel_magic(path("x.bmodel")));
}

TEST_F(BmodelTest, BothChipsAndLegacyNetsAreReadable) {
  const bm::ModelInfo mc = bm::read(save("m6", bw::m6_cascade(bw::pattern(500, 3))));
  EXPECT_EQ(mc.chip, "BM1688");
  EXPECT_EQ(mc.device_num, 2u);
  ASSERT_EQ(mc.nets.size(), 2u);
  EXPECT_EQ(mc.nets[1].cascade_device, 1u);
  EXPECT_EQ(mc.nets[1].cascade_main, "main");
  EXPECT_EQ(mc.nets[0].stages[0].core_num, 2u);
  const bm::ModelInfo legacy = bm::read(save("m9", bw::m9_legacy(bw::pattern(500, 3))));
  EXPECT_TRUE(legacy.nets.at(1).legacy);
  const bm::ModelInfo none = bm::read(save("m8", bw::m8_none()));
  EXPECT_TRUE(none.kernel.present);
  EXPECT_EQ(none.kernel.binary.size, 0u);
}

// ---- the reader's refusals (H, V, B rules) -----------------------------------------

class Damage : public BmodelTest {
 protected:
  void SetUp() override {
    BmodelTest::SetUp();
    good_ = bw::write(bw::m2_stages(bw::pattern(1000, 4)));
  }
  void expect_refused(Bytes bytes, const std::vector<std::string> &parts) {
    write_bytes(path("bad.bmodel"), bytes);
    std::vector<std::string> all = parts;
    all.push_back(path("bad.bmodel"));
    expect_error([&] { bm::read(path("bad.bmodel")); }, all);
    expect_error([&] { bm::dump_kernel(path("bad.bmodel"), path("k.so")); }, all);
    EXPECT_FALSE(fs::exists(path("k.so")));
  }
  uint32_t f() const {
    uint32_t v;
    std::memcpy(&v, good_.data() + 8, 4);
    return v;
  }
  Bytes good_;
};

TEST_F(Damage, HeaderRules) {
  expect_refused(Bytes(good_.begin(), good_.begin() + 40), {"shorter than the 64-byte bmodel header", "rule H1"});
  Bytes b = good_;
  b[0] = 0x11;
  expect_refused(b, {"not a bmodel: magic 0xFF55AA11", "rule H1"});
  b = good_;
  b[0] = 0xFF;
  expect_refused(b, {"0xFF55AAFF", "older bmtap2", "rule H1"});
  b = good_;
  b[4] = 72;  // an encrypted header: 8 + the encrypted tail
  expect_refused(b, {"header_size 72", "encrypted: decrypt with the vendor tool first",
                     "file length " + std::to_string(good_.size()), "rule H2"});
  b = good_;
  b[40] = 1;
  expect_refused(b, {"header byte 40", "rule H2"});
  b = good_;
  std::memset(b.data() + 8, 0, 4);
  expect_refused(b, {"flatbuffers_size 0", "rule H3"});
  expect_refused(Bytes(good_.begin(), good_.begin() + 64 + f() - 8), {"ends past the end of the file", "rule H3"});
  expect_refused(Bytes(good_.begin(), good_.end() - 1), {"binary_size", "truncated", "rule H3"});
}

TEST_F(Damage, VerifierAndBinaryRules) {
  Bytes b = good_;
  for (std::size_t i = 64; i < 64 + 16; ++i) b[i] = 0xEE;  // the root offset and beyond
  expect_refused(b, {"fails the flatbuffers verifier", "damaged or encrypted", "rule V1"});
  bw::Model empty = bw::m2_stages(bw::pattern(10, 5));
  empty.nets.clear();
  expect_refused(bw::write(empty), {"Model.net is empty", "rule V2"});
  // A shorter section whose header says so: the last payload lies outside.
  b = good_;
  uint64_t size;
  std::memcpy(&size, b.data() + 12, 8);
  size -= 100;
  std::memcpy(b.data() + 12, &size, 8);
  b.erase(b.end() - 100, b.end());
  expect_refused(b, {"lies outside the binary section", "rule B1", "net[0].parameter[1].cmd_group[1].binary_bdc"});
}

TEST_F(Damage, TrailingBytesAreReadButNotUpdated) {
  const std::string module = aarch64();
  Bytes b = good_;
  b.insert(b.end(), 10, 0);
  write_bytes(path("t.bmodel"), b);
  const bm::ModelInfo info = bm::read(path("t.bmodel"));
  ASSERT_FALSE(info.warnings.empty());
  EXPECT_NE(info.warnings[0].find("10 bytes after the binary section"), std::string::npos) << info.warnings[0];
  REQUIRE_MODULE(module);
  const Snapshot before = snapshot(path("t.bmodel"));
  expect_error([&] { bm::update_kernel(path("t.bmodel"), module); }, {"bytes after the binary section", "not changed"});
  expect_untouched(path("t.bmodel"), before);
}

// Random byte flips and truncations: refused with an Error or read; never
// a crash (the sanitizer build runs this too; fuzz/bmodel_fuzz.cc goes on).
TEST_F(Damage, RandomDamageIsRefusedOrRead) {
  std::mt19937 rng(17);
  const std::vector<Bytes> seeds = {good_, bw::write(bw::m347_mixed(bw::pattern(300, 6))),
                                    bw::write(bw::m6_cascade(bw::pattern(300, 7)))};
  int refused = 0, read = 0;
  for (int i = 0; i < 1500; ++i) {
    Bytes b = seeds[std::size_t(i) % seeds.size()];
    if (i % 5 == 0) {
      b.erase(b.begin() + std::ptrdiff_t(std::uniform_int_distribution<std::size_t>(0, b.size())(rng)), b.end());
    } else {
      const uint32_t f = [&] { uint32_t v; std::memcpy(&v, b.data() + 8, 4); return v; }();
      for (int k = 0; k < 1 + i % 4; ++k) {  // mostly inside the FlatBuffer, where the structure is
        const std::size_t at = std::uniform_int_distribution<std::size_t>(0, 64 + f - 1)(rng);
        b[at] = uint8_t(rng());
      }
    }
    try {
      const bm::ModelInfo info = bm::parse(b, "damaged");
      bm::info_text(info, "damaged");
      ++read;
    } catch (const tpu_runtime::Error &e) {
      EXPECT_NE(std::string(e.what()).find("rule "), std::string::npos) << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 100);
  EXPECT_GT(read, 10);
}

// ---- kernel_update round trips --------------------------------------------------

class Update : public BmodelTest {
 protected:
  // Updates `file` with `module` and checks everything spec 6 lists against
  // flatc's independent reading of before and after.
  bm::UpdateResult update_and_check(const std::string &file, const std::string &module, const std::string &mode,
                                    const bm::UpdateOptions &options = {}) {
    const json before = normalized(file);
    const bm::ModelInfo old = bm::read(file);
    const bm::UpdateResult r = bm::update_kernel(file, module, options);
    const std::string written = options.output.empty() ? file : options.output;
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(r.mode, mode) << r.append_reason;
    EXPECT_EQ(r.written, written);
    const bm::ModelInfo now = bm::read(written);  // passes every rule
    EXPECT_TRUE(now.warnings.empty()) << now.warnings.at(0);
    const Bytes bytes = read_bytes(module);
    const std::string name = options.name.empty() ? fs::path(module).filename().string() : options.name;
    EXPECT_EQ(now.kernel.file_name, name);
    EXPECT_EQ(now.kernel.sha256, digest_hex(bytes, EVP_sha256()));
    EXPECT_EQ(now.kernel.md5, digest_hex(bytes, EVP_md5()));
    EXPECT_EQ(now.kernel.binary.size, bytes.size());
    EXPECT_EQ(normalized(written), before) << "a payload or a field other than the module changed";
    EXPECT_EQ(now.version, old.version);
    EXPECT_EQ(now.time, old.time);
    EXPECT_EQ(now.cpuop.sha256, old.cpuop.sha256);
    EXPECT_EQ(now.cpuop.file_name, old.cpuop.file_name);
    EXPECT_EQ(now.bmodel_type, old.bmodel_type);
    const bm::DumpResult d = bm::dump_kernel(written, path("dumped.so"));
    EXPECT_EQ(read_bytes(path("dumped.so")), bytes);
    EXPECT_EQ(d.sha256, now.kernel.sha256);
    return r;
  }

  // The static subnets' cmd_group still points at the stage's CmdGroup
  // tables (the sharing the compiler makes), read with the generated code.
  static void expect_shared_cmd_groups(const std::string &file) {
    const Bytes b = read_bytes(file);
    uint32_t f;
    std::memcpy(&f, b.data() + 8, 4);
    std::vector<uint64_t> aligned((f + 7) / 8);
    std::memcpy(aligned.data(), b.data() + 64, f);
    const auto *model = bw::fb::GetModel(aligned.data());
    const auto *stage = model->net()->Get(0)->parameter()->Get(0);
    ASSERT_TRUE(stage->cmd_group() && stage->sub_net()->Get(0)->cmd_group());
    ASSERT_EQ(stage->cmd_group()->size(), 2u);
    for (flatbuffers::uoffset_t i = 0; i < 2; ++i)
      EXPECT_EQ(stage->cmd_group()->Get(i), stage->sub_net()->Get(0)->cmd_group()->Get(i));
    // Present and empty stays present and empty.
    const auto *last = model->net()->Get(0)->parameter()->Get(0)->sub_net()->Get(0);
    ASSERT_NE(last->next_subnet_ids(), nullptr);
    EXPECT_EQ(last->next_subnet_ids()->size(), 0u);
  }
};

TEST_F(Update, ReplaceWithALongerModule) {
  const std::string module = aarch64(400);
  REQUIRE_MODULE(module);
  const std::string file = save("m.bmodel", bw::m347_mixed(bw::pattern(3000, 8)));
  ASSERT_GT(fs::file_size(module), 3000u);
  const bm::ModelInfo old = bm::read(file);
  bm::UpdateOptions keep_name;
  keep_name.name = "libbm1684x_kernel_module.so";
  const bm::UpdateResult r = update_and_check(file, module, "replace", keep_name);
  EXPECT_EQ(r.new_module.binary.start, 0u);
  EXPECT_EQ(r.old_module.binary, (bm::BinaryRef{0, 3000}));
  EXPECT_EQ(r.entries_present, (std::vector<std::string>{"sg_api_multi_fullnet", "sg_api_dynamic_fullnet",
                                                         "sg_api_set_profile"}));
  EXPECT_EQ(r.entries_absent, (std::vector<std::string>{"sg_api_get_profile_data", "sg_api_set_engine_profile_param"}));
  expect_shared_cmd_groups(file);
  // The section changed by exactly the size difference: nothing appended,
  // nothing left behind, the FlatBuffer's size kept (same name).
  const bm::ModelInfo now = bm::read(file);
  EXPECT_EQ(now.section_size, old.section_size + fs::file_size(module) - 3000);
  EXPECT_EQ(now.flatbuffers_size, old.flatbuffers_size);
  EXPECT_EQ(now.referenced_bytes, now.section_size);
}

TEST_F(Update, ReplaceWithAShorterModuleThenBack) {
  const std::string module = aarch64();
  REQUIRE_MODULE(module);
  const std::string file = save("m.bmodel", bw::m2_stages(bw::pattern(20000, 9)));
  ASSERT_LT(fs::file_size(module), 20000u);
  update_and_check(file, module, "replace");
  expect_shared_cmd_groups(file);
  const std::string longer = aarch64(3000, "second.so_");
  update_and_check(file, longer, "replace");
}

TEST_F(Update, AppendWhenTheModuleIsEmpty) {
  const std::string module = aarch64();
  REQUIRE_MODULE(module);
  bw::Model m = bw::m2_stages({});
  m.kernel_name = "";
  const std::string file = save("m.bmodel", m);
  const uint64_t section = bm::read(file).section_size;
  const bm::UpdateResult r = update_and_check(file, module, "append");
  EXPECT_EQ(r.new_module.binary.start, section);
  EXPECT_NE(r.append_reason.find("no module bytes"), std::string::npos) << r.append_reason;
}

TEST_F(Update, AppendWhenTheModuleBytesAreShared) {
  const std::string module = aarch64();
  REQUIRE_MODULE(module);
  bw::Model m = bw::m347_mixed(bw::pattern(2000, 10));
  m.cpuop = m.kernel;  // dedup points cpuop_module.binary at the kernel's bytes
  const std::string file = save("m.bmodel", m);
  ASSERT_EQ(bm::read(file).cpuop.binary, (bm::BinaryRef{0, 2000}));
  const bm::UpdateResult r = update_and_check(file, module, "append");
  EXPECT_NE(r.append_reason.find("shared with cpuop_module.binary"), std::string::npos) << r.append_reason;
  EXPECT_EQ(bm::read(file).cpuop.binary, (bm::BinaryRef{0, 2000}));
}

// A field beyond our schema may hold a payload we would not move: it is
// reported, kept byte for byte, and the module is appended.
TEST_F(Update, AppendWhenAFieldIsUnknown) {
  const std::string module = aarch64();
  REQUIRE_MODULE(module);
  bw::Model m = bw::m2_stages(bw::pattern(2000, 19));
  m.unknown_field = true;
  const std::string file = save("m.bmodel", m);
  const bm::ModelInfo info = bm::read(file);
  ASSERT_EQ(info.warnings.size(), 1u);
  EXPECT_NE(info.warnings[0].find("model: field id 11 is not in our schema"), std::string::npos) << info.warnings[0];
  const Bytes old = read_bytes(file);
  const bm::UpdateResult r = bm::update_kernel(file, module);
  EXPECT_EQ(r.mode, "append");
  EXPECT_NE(r.append_reason.find("model: field id 11"), std::string::npos) << r.append_reason;
  EXPECT_EQ(r.new_module.binary.start, info.section_size);
  EXPECT_EQ(bm::read(file).kernel.sha256, digest_hex(read_bytes(module), EVP_sha256()));
  // The old section is kept whole in front of the new module.
  const Bytes now = read_bytes(file);
  uint32_t f_old, f_new;
  std::memcpy(&f_old, old.data() + 8, 4);
  std::memcpy(&f_new, now.data() + 8, 4);
  EXPECT_TRUE(std::equal(old.begin() + 64 + f_old, old.end(), now.begin() + 64 + f_new));
}

// The other direction of the independent check: flatc itself builds the
// FlatBuffer from its JSON reading of ours (its own layout; the shared
// CmdGroup tables become copies), wrapped in our header and section.
TEST_F(Update, AFlatBufferBuiltByFlatc) {
  const std::string module = aarch64();
  REQUIRE_MODULE(module);
  const Bytes original = bw::write(bw::m347_mixed(bw::pattern(2500, 20)));
  uint32_t f;
  std::memcpy(&f, original.data() + 8, 4);
  write_bytes(path("ours.bin"), Bytes(original.begin() + 64, original.begin() + 64 + f));
  const std::string flatc = std::string(FLATC) + " -o " + dir_;
  ASSERT_EQ(run(flatc + " --json --strict-json --raw-binary " + BMODEL_SCHEMA + " -- " + path("ours.bin")), 0);
  ASSERT_EQ(run(flatc + " -b " + BMODEL_SCHEMA + " " + path("ours.json")), 0);
  const Bytes theirs = read_bytes(path("ours.bin"));  // flatc -b wrote ours.bin again, from the JSON
  ASSERT_FALSE(theirs.empty());
  Bytes file(original.begin(), original.begin() + 64);
  const uint32_t f2 = uint32_t(theirs.size());
  std::memcpy(file.data() + 8, &f2, 4);
  file.insert(file.end(), theirs.begin(), theirs.end());
  file.insert(file.end(), original.begin() + 64 + f, original.end());
  write_bytes(path("flatc.bmodel"), file);
  const bm::ModelInfo info = bm::read(path("flatc.bmodel"));
  EXPECT_EQ(info.nets.size(), 3u);
  EXPECT_EQ(info.kernel.binary, (bm::BinaryRef{0, 2500}));
  update_and_check(path("flatc.bmodel"), module, "replace");
}

TEST_F(Update, Bm1688TakesARiscVModule) {
  const std::string module = riscv(50);
  REQUIRE_MODULE(module);
  const std::string file = save("m.bmodel", bw::m6_cascade(bw::pattern(4000, 11)));
  update_and_check(file, module, "replace");
}

TEST_F(Update, RenameOnlyAndIdentity) {
  const std::string module = aarch64();
  REQUIRE_MODULE(module);
  const std::string file = save("m.bmodel", bw::m2_stages(read_bytes(module)));
  // Same bytes and the same name: nothing written (K9).
  bm::UpdateOptions same;
  same.name = "libbm1684x_kernel_module.so";
  Snapshot before = snapshot(file);
  EXPECT_FALSE(bm::update_kernel(file, module, same).changed);
  expect_untouched(file, before);
  // Same bytes, another name: only the file_name offset and a new string.
  const Bytes old = read_bytes(file);
  bm::UpdateOptions rename;
  rename.name = "libbm1684x_kernel_module_custom_soc.so";
  update_and_check(file, module, "replace", rename);
  const Bytes now = read_bytes(file);
  uint32_t f_old, f_new;
  std::memcpy(&f_old, old.data() + 8, 4);
  std::memcpy(&f_new, now.data() + 8, 4);
  // Padded to 4, a u32 length, the name, a NUL, padded to 8.
  EXPECT_EQ(f_new, (f_old + 4 + rename.name.size() + 1 + 7) / 8 * 8);
  std::size_t differing = 0;
  for (std::size_t i = 64; i < 64 + f_old; ++i) differing += old[i] != now[i];
  EXPECT_GE(differing, 1u);
  EXPECT_LE(differing, 4u);  // the file_name offset only
  EXPECT_TRUE(std::equal(old.begin() + 64 + f_old, old.end(), now.begin() + 64 + f_new, now.end()));
}

TEST_F(Update, OutputElsewhereLeavesTheSourceAlone) {
  const std::string module = aarch64();
  REQUIRE_MODULE(module);
  const std::string file = save("m.bmodel", bw::m2_stages(bw::pattern(700, 12)));
  ::chmod(file.c_str(), 0444);
  const Snapshot before = snapshot(file);
  bm::UpdateOptions o;
  o.output = path("out.bmodel");
  update_and_check(file, module, "replace", o);
  expect_untouched(file, before);
}

// ---- kernel_update refusals (K rules) ---------------------------------------------

TEST_F(Update, RefusesEveryBadModuleAndModel) {
  const std::string good = aarch64();
  REQUIRE_MODULE(good);
  const std::string rv = riscv();
  const std::string host = module("host", "", kEntries);
  const std::string nosym = module("nosym", "aarch64-linux-gnu-", {"something_else"});
  REQUIRE_MODULE(rv);
  REQUIRE_MODULE(host);
  REQUIRE_MODULE(nosym);
  Bytes b32 = read_bytes(good);
  b32[4] = 1;  // EI_CLASS 32-bit
  write_bytes(path("elf32.so"), b32);
  const Bytes full = read_bytes(good);
  write_bytes(path("cut.so"), Bytes(full.begin(), full.begin() + std::ptrdiff_t(full.size() - 200)));
  write_bytes(path("text.so"), {'h', 'e', 'l', 'l', 'o', '\n'});
  write_bytes(path("empty.so"), {});
  fs::create_directory(path("dir.so"));

  const std::string model = save("m.bmodel", bw::m2_stages(bw::pattern(900, 13)));
  const std::string m1688 = save("m1688.bmodel", bw::m5_multicore(bw::pattern(900, 14)));
  const std::string legacy = save("legacy.bmodel", bw::m9_legacy(bw::pattern(900, 15)));
  const std::string bm1684 = save("bm1684.bmodel", bw::m8_none());
  bw::Model shared_table = bw::m2_stages(bw::pattern(900, 21));
  shared_table.cpuop_is_kernel_table = true;
  const std::string shared = save("shared.bmodel", shared_table);
  bw::Model no_table = bw::m2_stages({});
  no_table.kernel_table = false;
  const std::string absent = save("absent.bmodel", no_table);

  struct Case {
    std::string model, module;
    std::vector<std::string> parts;
    bm::UpdateOptions options = {};
  };
  const std::vector<Case> cases = {
      {legacy, good, {"legacy form", "rule K2"}},
      {bm1684, good, {"chip 'BM1684' loads no embedded kernel module", "rule K3"}},
      {model, path("empty.so"), {"0 bytes", "rule K4"}},
      {model, path("dir.so"), {"not a regular file", "rule K4"}},
      {model, path("missing.so"), {"no such file", "rule K4"}},
      {model, path("text.so"), {"not an ELF file", "rule K5"}},
      {model, host, {"built for x86-64 (e_machine 62)", "loads AArch64 modules (e_machine 183)", "rule K5"}},
      {model, rv, {"built for RISC-V (e_machine 243)", "rule K5"}},
      {m1688, good, {"built for AArch64 (e_machine 183)", "a BM1688 model loads RISC-V modules", "rule K5"}},
      {model, path("elf32.so"), {"EI_CLASS 1 (32-bit)", "rule K5"}},
      {model, path("cut.so"), {"truncated", "rule K5"}},
      {model, nosym, {"does not define sg_api_multi_fullnet, sg_api_dynamic_fullnet", "rule K6"}},
      {model, good, {"stored module name '..'", "rule K7"}, {"", ".."}},
      {model, good, {"stored module name 'a/b.so'", "rule K7"}, {"", "a/b.so"}},
      {absent, good, {"no kernel_module table"}},
      {shared, good, {"kernel_module.binary is shared with another field"}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.parts[0]);
    const Snapshot before = snapshot(c.model);
    std::vector<std::string> parts = c.parts;
    parts.push_back(c.model + " was not changed");
    expect_error([&] { bm::update_kernel(c.model, c.module, c.options); }, parts);
    expect_untouched(c.model, before);
  }
  // K8: a read-only model (root may write anything: the mode bits decide).
  ::chmod(model.c_str(), 0444);
  const Snapshot before = snapshot(model);
  expect_error([&] { bm::update_kernel(model, good); }, {"read-only", "rule K8", "was not changed"});
  expect_untouched(model, before);
  // No stray temporary file from any refusal.
  for (const auto &entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
}

TEST_F(Update, DumpRefusesWhenThereIsNoModule) {
  const std::string file = save("m8.bmodel", bw::m8_none());
  expect_error([&] { bm::dump_kernel(file, path("k.so")); }, {"no kernel module", file});
  EXPECT_FALSE(fs::exists(path("k.so")));
  bw::Model bad_name = bw::m2_stages(bw::pattern(64, 16));
  bad_name.kernel_name = "../evil.so";
  const std::string f2 = save("bad.bmodel", bad_name);
  expect_error([&] { bm::dump_kernel(f2, dir_ + "/"); }, {"not a plain file name", "-o"});
  const bm::DumpResult r = bm::dump_kernel(f2, path("explicit.so"));
  EXPECT_EQ(read_bytes(r.path), bw::pattern(64, 16));
}

// ---- a kill during the write -----------------------------------------------------

// The write of the temporary file stops after 4096 bytes (support/killed_write.h).
TEST_F(Update, KilledMidWriteLeavesTheModelIntact) {
  const std::string module = aarch64();
  REQUIRE_MODULE(module);
  const std::string file = save("m.bmodel", bw::m2_stages(bw::pattern(3000, 17)));
  const Snapshot before = snapshot(file);
  ASSERT_GT(before.bytes.size(), 3u * 4096);
  test::StoppedWriter child(4096, [&] { bm::update_kernel(file, module); });
  ASSERT_TRUE(child.stopped()) << "the child never reached the file-size limit";
  std::vector<std::string> temps;
  for (const auto &entry : fs::directory_iterator(dir_))
    if (entry.path().filename().string().rfind(".m.bmodel.tmp-", 0) == 0) temps.push_back(entry.path());
  ASSERT_EQ(temps.size(), 1u);
  EXPECT_EQ(fs::file_size(temps[0]), 4096u);
  const int status = child.kill_and_wait();
  ASSERT_TRUE(WIFSIGNALED(status));
  expect_untouched(file, before);
  EXPECT_NO_THROW(bm::read(file));
  EXPECT_THROW(bm::read(temps[0]), tpu_runtime::Error);  // the half-written file is refused
  EXPECT_TRUE(bm::update_kernel(file, module).changed);
  EXPECT_EQ(bm::read(file).kernel.sha256, digest_hex(read_bytes(module), EVP_sha256()));
}

// ---- the tpu_model binary ----------------------------------------------------------

using ToolRun = test::CommandRun;

ToolRun tool(const std::vector<std::string> &args) {
  return test::run_command(test::quoted_command(TPU_MODEL_TOOL, args));
}

TEST_F(BmodelTest, ToolInfoDumpUpdateBothSpellings) {
  const std::string module = aarch64();
  REQUIRE_MODULE(module);
  const Bytes kernel = bw::pattern(1500, 18);
  const std::string file = save("net.model", bw::m347_mixed(kernel));  // no .bmodel extension
  for (const std::string spelling : {"info", "--info"}) {
    const ToolRun r = tool({spelling, file});
    ASSERT_EQ(r.status, 0) << r.output;
    for (const std::string &part : std::vector<std::string>{"chip BM1684X", digest_hex(kernel, EVP_sha256()), digest_hex(kernel, EVP_md5()),
                                   "net 'chain'", "[1,8]"})
      EXPECT_NE(r.output.find(part), std::string::npos) << part << "\n" << r.output;
  }
  for (const std::string spelling : {"kernel_dump", "--kernel_dump"}) {
    fs::remove(path("k.so"));
    const ToolRun r = tool({spelling, file, "-o", path("k.so")});
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(read_bytes(path("k.so")), kernel);
  }
  fs::create_directory(path("d"));
  ASSERT_EQ(tool({"kernel_dump", file, "-o", path("d")}).status, 0);
  EXPECT_EQ(read_bytes(path("d/libbm1684x_kernel_module.so")), kernel);

  const Snapshot before = snapshot(file);
  const ToolRun refused = tool({"--kernel_update", file, path("nothing.so")});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.output.find("rule K4"), std::string::npos) << refused.output;
  expect_untouched(file, before);
  const ToolRun u = tool({"--kernel_update", file, module});
  ASSERT_EQ(u.status, 0) << u.output;
  EXPECT_NE(u.output.find(digest_hex(read_bytes(module), EVP_sha256())), std::string::npos) << u.output;
  EXPECT_NE(u.output.find("replaced in place"), std::string::npos) << u.output;
  const ToolRun again = tool({"kernel_update", file, module});
  EXPECT_EQ(again.status, 0) << again.output;
  EXPECT_NE(again.output.find("unchanged"), std::string::npos) << again.output;
  const ToolRun renamed = tool({"kernel_update", file, module, "--name", "custom.so", "-o", path("o.bmodel")});
  ASSERT_EQ(renamed.status, 0) << renamed.output;
  EXPECT_EQ(bm::read(path("o.bmodel")).kernel.file_name, "custom.so");
  write_bytes(path("enc.bmodel"), [&] {
    Bytes b = read_bytes(file);
    b[4] = 72;
    return b;
  }());
  const ToolRun enc = tool({"info", path("enc.bmodel")});
  EXPECT_EQ(enc.status, 1);
  EXPECT_NE(enc.output.find("encrypted: decrypt with the vendor tool first"), std::string::npos) << enc.output;
}


// ---- custom_ap_update: the cpuop_module (AP ops' host library) -------------------

const std::vector<std::string> kCpuopEntries = {"bmcpu_init", "bmcpu_uninit", "customcpu_process"};

// The CPU-op library goes in with the kernel update's patch: only the
// cpuop_module's Binary and name change, every other payload (the kernel
// module included) keeps its bytes, and the file reads back under every rule.
TEST_F(BmodelTest, CpuopUpdateReplacesOnlyTheHostLibrary) {
  const std::string x86 = module("libcustomcpuop", "", kCpuopEntries, 40);
  const std::string arm = module("libcustomapop_soc", "aarch64-linux-gnu-", kCpuopEntries);
  REQUIRE_MODULE(x86);
  REQUIRE_MODULE(arm);
  const Bytes kernel = bw::pattern(1200, 30);
  const std::string file = save("m.bmodel", bw::m347_mixed(kernel));  // cpuop "libcpuop.so", 500 bytes
  const bm::ModelInfo old = bm::read(file);
  ASSERT_EQ(old.cpuop.binary.size, 500u);
  for (const std::string &lib : {x86, arm}) {
    SCOPED_TRACE(lib);
    const bm::UpdateResult r = bm::update_cpuop(file, lib);
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(r.machine, lib == x86 ? "x86-64" : "AArch64");
    EXPECT_EQ(r.entries_present, kCpuopEntries);
    const bm::ModelInfo now = bm::read(file);
    EXPECT_TRUE(now.warnings.empty()) << now.warnings.at(0);
    const Bytes bytes = read_bytes(lib);
    EXPECT_EQ(now.cpuop.file_name, fs::path(lib).filename().string());
    EXPECT_EQ(now.cpuop.sha256, digest_hex(bytes, EVP_sha256()));
    EXPECT_EQ(now.kernel.sha256, digest_hex(kernel, EVP_sha256()));  // the device module is untouched
    EXPECT_EQ(now.kernel.file_name, old.kernel.file_name);
    EXPECT_EQ(now.nets.size(), old.nets.size());
    EXPECT_EQ(now.version, old.version);
    EXPECT_EQ(now.time, old.time);
  }
  // The same bytes under the same name: nothing written.
  const Snapshot before = snapshot(file);
  EXPECT_FALSE(bm::update_cpuop(file, arm).changed);
  expect_untouched(file, before);
}

// Every refusal names its rule, and the model stays byte-identical.
TEST_F(BmodelTest, CpuopUpdateRefusals) {
  const std::string good = module("libcustomcpuop", "", kCpuopEntries);
  const std::string partial = module("libpartial", "", {"bmcpu_init", "bmcpu_uninit"});
  const std::string rv = module("librv", "riscv64-linux-gnu-", kCpuopEntries);
  REQUIRE_MODULE(good);
  REQUIRE_MODULE(partial);
  REQUIRE_MODULE(rv);
  write_bytes(path("text.so"), {'n', 'o', 't', '\n'});
  const std::string model = save("m.bmodel", bw::m347_mixed(bw::pattern(700, 31)));
  bw::Model shared_table = bw::m2_stages(bw::pattern(900, 32));
  shared_table.cpuop_is_kernel_table = true;  // cpuop_module points at the kernel's table
  const std::string shared = save("shared.bmodel", shared_table);
  const std::string legacy = save("legacy.bmodel", bw::m9_legacy(bw::pattern(900, 33)));
  struct Case {
    std::string model, library;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {model, path("missing.so"), {"no such file", "rule K4"}},
      {model, path("text.so"), {"not an ELF file", "rule K5"}},
      {model, rv, {"built for RISC-V (e_machine 243)", "x86-64 or AArch64", "rule K5"}},
      {model, partial, {"does not define customcpu_process", "rule K6"}},
      {shared, good, {"cpuop_module.binary is shared with another field"}},
      {legacy, good, {"legacy form", "rule K2"}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.parts[0]);
    const Snapshot before = snapshot(c.model);
    std::vector<std::string> parts = c.parts;
    parts.push_back(c.model + " was not changed");
    expect_error([&] { bm::update_cpuop(c.model, c.library); }, parts);
    expect_untouched(c.model, before);
  }
}

TEST_F(BmodelTest, ToolCustomApUpdateBothSpellings) {
  const std::string lib = module("libcustomapop", "", kCpuopEntries);
  REQUIRE_MODULE(lib);
  const std::string file = save("net.bmodel", bw::m347_mixed(bw::pattern(800, 34)));
  const ToolRun u = tool({"--custom_ap_update", file, lib});
  ASSERT_EQ(u.status, 0) << u.output;
  EXPECT_NE(u.output.find("updated the CPU-op module"), std::string::npos) << u.output;
  EXPECT_NE(u.output.find(digest_hex(read_bytes(lib), EVP_sha256())), std::string::npos) << u.output;
  const ToolRun info = tool({"info", file});
  EXPECT_NE(info.output.find("libcustomapop.so"), std::string::npos) << info.output;
  const ToolRun again = tool({"custom_ap_update", file, lib});
  EXPECT_EQ(again.status, 0) << again.output;
  EXPECT_NE(again.output.find("unchanged"), std::string::npos) << again.output;
  const ToolRun replace = tool({"custom_ap_update", file, lib, "--replace", "x.so"});
  EXPECT_EQ(replace.status, 1);
  EXPECT_NE(replace.output.find("--replace applies to TPU SDK model files only"), std::string::npos) << replace.output;
}

}  // namespace
