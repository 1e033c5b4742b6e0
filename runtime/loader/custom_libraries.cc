// custom_libraries.cc: checks shared by the three custom-layer libraries.
// Plugin, Backend and Firmware themselves live in plugin.cc, backend.cc and
// firmware.cc.
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "loader/loader_internal.h"
#include "tpu_custom_abi.h"

namespace tpu_runtime::loader {
namespace {

bool env_set(const char *name) {
  const char *value = std::getenv(name);
  return value && *value;
}

}  // namespace

std::shared_ptr<SharedLibrary> open_library(const std::string &path, const std::string &file_name,
                                            bool firmware) {
  if (path.empty()) {
    if (firmware && !env_set("TPUC_ROOT") && !env_set("TPUKERNEL_CUSTOM_FIRMWARE_PATH"))
      throw Error(fmt::format("no path for {}: neither TPUKERNEL_CUSTOM_FIRMWARE_PATH nor TPUC_ROOT is set "
                              "(source envsetup.sh) and no path was given",
                              file_name));
    if (!env_set("TPUC_ROOT"))
      throw Error(fmt::format("no path for {}: TPUC_ROOT is not set (source envsetup.sh) and no path was given",
                              file_name));
    throw Error(fmt::format("no path for {} was given (default_library_paths() gives the default one)", file_name));
  }
  return SharedLibrary::open_shared(path);
}

void check_api_level(const SharedLibrary &lib) {
  const auto *level = static_cast<const int *>(lib.find("tpu_custom_api_level"));
  if (!level)
    throw Error(fmt::format("{}: no tpu_custom_api_level symbol: the library was not built by this SDK's "
                            "TpuCustomLayer.cmake (rebuild it with tpu_custom_layer() or envsetup.sh)",
                            lib.path()));
  if (*level != TPU_SDK_CUSTOM_API_LEVEL)
    throw Error(fmt::format("{}: built for custom-layer API level {}, but this SDK is at level {}; rebuild the "
                            "library with this SDK",
                            lib.path(), *level, TPU_SDK_CUSTOM_API_LEVEL));
}

BuildIdentity read_build_identity(const SharedLibrary &lib) {
  BuildIdentity identity;
  // Generated strings of a few dozen bytes; bound the read all the same.
  constexpr std::size_t kMaxLength = 4096;
  if (const auto *id = static_cast<const char *>(lib.find("tpu_custom_build_id")))
    identity.id.assign(id, strnlen(id, kMaxLength));
  if (const auto *info = static_cast<const char *>(lib.find("tpu_custom_build_info")))
    identity.info.assign(info, strnlen(info, kMaxLength));
  return identity;
}

std::vector<std::string> read_name_list(const SharedLibrary &lib, const char *symbol) {
  if (lib.is_none()) return {};  // no library registers no op
  const auto *names = static_cast<const char *const *>(lib.require(symbol, "the list of registered ops that "
                                                                          "TpuCustomLayer.cmake generates"));
  // The generator writes at most a few hundred names; a list without its
  // NULL terminator would otherwise run through memory.
  constexpr int kMaxNames = 100000;
  std::vector<std::string> result;
  for (int i = 0; names[i]; ++i) {
    if (i == kMaxNames) throw Error(fmt::format("{}: {} has no NULL terminator", lib.path(), symbol));
    result.emplace_back(names[i]);
  }
  return result;
}

std::shared_ptr<SharedLibrary> no_library(const std::string &file_name) {
  return SharedLibrary::none(fmt::format("(no {}: the model has built-in layers only)", file_name));
}

}  // namespace tpu_runtime::loader

namespace tpu_runtime {

const std::string &CustomLibrary::path() const { return lib_->path(); }

BuildIdentity CustomLibrary::build_identity() const { return loader::read_build_identity(*lib_); }

std::vector<std::string> KernelLibrary::registered_ops() const {
  return loader::read_name_list(*lib_, "tpu_custom_registered_ops");
}

std::vector<std::string> KernelLibrary::registered_local_ops() const {
  return loader::read_name_list(*lib_, "tpu_custom_registered_local_ops");
}

std::vector<GradientDeclaration> KernelLibrary::gradients() const {
  std::vector<GradientDeclaration> result;
  const std::vector<std::string> texts = loader::read_optional_name_list(*lib_, "tpu_custom_registered_gradients");
  for (std::size_t i = 0; i < texts.size(); ++i)
    result.push_back(parse_gradient_declaration(
        texts[i], fmt::format("{}: tpu_custom_registered_gradients[{}] \"{}\"", path(), i, texts[i])));
  return result;
}

std::optional<GradientDeclaration> KernelLibrary::gradient_of(const std::string &op) const {
  for (GradientDeclaration &g : gradients())
    if (g.op == op) return std::move(g);
  return std::nullopt;
}

std::size_t edit_distance(const std::string &a, const std::string &b) {
  const auto lower = [](char c) { return char(std::tolower(static_cast<unsigned char>(c))); };
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string unknown_op_hint(const std::string &op, const std::vector<std::string> &registered) {
  std::string hint;
  // A suggestion is a name at most a third of the longer name away (at
  // least 2 edits for short names), never as far as the name is long.
  std::size_t best = std::string::npos;
  std::vector<std::string> closest;
  for (const std::string &name : registered) {
    if (name == op) continue;
    const std::size_t d = edit_distance(op, name);
    const std::size_t limit = std::max<std::size_t>(2, std::max(op.size(), name.size()) / 3);
    if (d > limit || d >= op.size() || d > best) continue;
    if (d < best) closest.clear();
    best = d;
    closest.push_back(name);
  }
  if (!closest.empty()) {
    std::vector<std::string> quoted;
    for (const std::string &name : closest) quoted.push_back("'" + name + "'");
    hint += fmt::format("; did you mean {}?", fmt::format("{}", fmt::join(quoted, " or ")));
  }
  return hint;
}

}  // namespace tpu_runtime

namespace tpu_runtime::loader {

std::vector<std::string> read_optional_name_list(const SharedLibrary &lib, const char *symbol) {
  return lib.find(symbol) ? read_name_list(lib, symbol) : std::vector<std::string>{};
}

std::string join_names(const std::vector<std::string> &names) {
  if (names.empty()) return "none";
  std::string text;
  for (const std::string &name : names) {
    if (!text.empty()) text += ", ";
    text += name;
  }
  return text;
}

bool contains(const std::vector<std::string> &names, const std::string &name) {
  for (const std::string &candidate : names)
    if (candidate == name) return true;
  return false;
}

void check_specs(const SharedLibrary &lib, const std::string &op, const char *role, const tensor_spec_t *specs,
                 std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    if (specs[i].dims < 0 || specs[i].dims > MAX_SHAPE_DIMS)
      throw Error(fmt::format("{}: op '{}': {} {} has dims = {}; a tensor_spec_t holds 0 to {} dims", lib.path(), op,
                              role, i, specs[i].dims, MAX_SHAPE_DIMS));
  }
}

int checked_count(const SharedLibrary &lib, const std::string &op, const char *role, std::size_t count) {
  constexpr std::size_t kMax = 1 << 20;
  if (count > kMax) throw Error(fmt::format("{}: op '{}': {} {} (more than {})", lib.path(), op, count, role, kMax));
  return int(count);
}

}  // namespace tpu_runtime::loader

namespace tpu_runtime {
namespace {

struct Member {
  std::string path;
  BuildIdentity identity;
  bool may_lack_identity;
};

std::string describe_build(const Member &m) {
  if (m.identity.id.empty()) return fmt::format("{} (no build identity: built by an earlier SDK or outside it)", m.path);
  return fmt::format("{} (build {}, {})", m.path, m.identity.id, m.identity.info);
}

}  // namespace

void check_same_build(const Plugin *plugin, const Backend *backend, const Firmware *firmware) {
  std::vector<Member> members;
  if (plugin) members.push_back({plugin->path(), plugin->build_identity(), true});
  if (backend) members.push_back({backend->path(), backend->build_identity(), false});
  if (firmware) members.push_back({firmware->path(), firmware->build_identity(), false});
  const Member *reference = nullptr;
  for (const Member &m : members)
    if (!m.identity.id.empty()) reference = reference ? reference : &m;
  if (!reference) return;  // nothing to compare: all built outside this flow
  for (const Member &m : members) {
    if (m.identity.id == reference->identity.id || (m.identity.id.empty() && m.may_lack_identity)) continue;
    throw Error(fmt::format("the custom-layer libraries come from different builds of the op project: {} but {}. "
                            "A failed or partial rebuild leaves such a mix; rebuild all three "
                            "(rebuild_custom_lib_cmodel <chip>) and try again",
                            describe_build(*reference), describe_build(m)));
  }
}

}  // namespace tpu_runtime
