// record_api.cc: command-stream recording and replay (cmodel_host.h,
// "Recording and replay"; the recorder's hooks are in record.h).
//
// The recording policy and the replay table are generated from
// api_functions.def (kernel/api/tpu_kernel.api): every function of the tpu-kernel API is either
//   recorded - it issues or orders engine work; its calls are appended to
//              the stream with their arguments and replay calls it again,
//   ignored  - a query or bookkeeping whose result already sits in the
//              recorded arguments (chip figures, strides, casts, id nodes),
//   refused  - what it does cannot be captured faithfully; calling it while
//              recording fails the run.
// A recorded function is replayed through a thunk instantiated from its
// declaration (decltype(&fn)), which reads the argument bytes back with the
// same codecs the recorder wrote them with.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "api_guard.h"
#include "cmodel/context.h"
#include "cmodel_host.h"
#include "host_call.h"
#include "multicore.h"
#include "record.h"
#include "session.h"
#include "tpu_kernel.h"

static_assert(std::endian::native == std::endian::little, "command streams are little-endian");

namespace cmodel::record {

bool g_active = false;

namespace {

// ---- the recording policy -------------------------------------------------
//
// Decided per function in kernel/api/tpu_kernel.api (tags query, engine,
// refused:<reason>; an engine function whose parameters cannot be recorded
// by value is refused with that reason) and carried by api_functions.def.
// Support functions (the assertion and log macros' targets) are ignored.

enum class Policy : uint8_t { ignored, recorded, refused };

constexpr Policy policy_recorded = Policy::recorded;
constexpr Policy policy_ignored = Policy::ignored;
constexpr Policy policy_refused = Policy::refused;
constexpr Policy policy_support = Policy::ignored;

struct Refusal {
  std::string_view name, reason;
};

constexpr Refusal refusals[] = {
#define TPU_API_FUNCTION(family, fn, policy)
#define TPU_API_REFUSAL(fn, reason) {#fn, reason},
#include "api_functions.def"
#undef TPU_API_REFUSAL
#undef TPU_API_FUNCTION
};

constexpr std::string_view refusal_reason(std::string_view name) {
  for (const Refusal &r : refusals)
    if (r.name == name) return r.reason;
  return {};
}

// ---- the replay table ------------------------------------------------------

struct Entry {
  std::string_view name;
  Policy policy;
  std::string_view reason;  // refused only
  const void *tag;          // recorded only: the function type TPU_ARGS must match
  bool (*check)(const uint8_t *p, const uint8_t *end);
  void (*invoke)(const uint8_t *args);  // only after check() accepted the bytes
};

template <typename F, F Fn>
struct Thunk;
template <typename R, typename... P, R (*Fn)(P...)>
struct Thunk<R (*)(P...), Fn> {
  static bool check(const uint8_t *p, const uint8_t *end) { return (Codec<P>::check(p, end) && ...) && p == end; }
  // Runs inside the replay kernel, which a failing command leaves by
  // longjmp: everything here is trivially destructible.
  static void invoke(const uint8_t *p) {
    (void)p;
    std::tuple<typename Codec<P>::Holder...> held{Codec<P>::read(p)...};  // braces: read left to right
    std::apply([](const auto &...h) { Fn(h.get()...); }, held);
  }
};

template <Policy policy, typename F, F Fn>
constexpr Entry make_entry(std::string_view name) {
  if constexpr (policy == Policy::recorded)
    return {name, policy, {}, &type_tag<F>, &Thunk<F, Fn>::check, &Thunk<F, Fn>::invoke};
  else
    return {name, policy, refusal_reason(name), nullptr, nullptr, nullptr};
}

constexpr Entry api_entries[] = {
#define TPU_API_FUNCTION(family, fn, policy) make_entry<policy_##policy, decltype(&fn), &fn>(#fn),
#include "api_functions.def"
#undef TPU_API_FUNCTION
};

// The seam between two recorded cmodel_run calls: the first run's end
// (every engine waits) and the second's start (tpu_initialize).
void run_boundary(const uint8_t *) {
  api::run("cmodel_run", TPU_CALLER(), [] {
    Context &ctx = api::context();
    ctx.timeline.sync();
    ctx.hazards.clear();
  });
  tpu_initialize();
}
bool no_arguments(const uint8_t *p, const uint8_t *end) { return p == end; }
constexpr Entry boundary_entry = {"cmodel_run", Policy::recorded, {}, nullptr, &no_arguments, &run_boundary};

const Entry *find_entry(std::string_view name) {
  static const std::unordered_map<std::string_view, const Entry *> table = [] {
    std::unordered_map<std::string_view, const Entry *> t;
    for (const Entry &e : api_entries) t.emplace(e.name, &e);
    t.emplace(boundary_entry.name, &boundary_entry);
    return t;
  }();
  const auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

// ---- the recorder ------------------------------------------------------------

struct Recorder {
  bool open = false;
  std::string chip, origin;
  std::string failure;  // why the recording cannot become a stream
  std::vector<const Entry *> names;
  std::unordered_map<const Entry *, uint32_t> name_index;
  std::unordered_map<const char *, const Entry *> by_api;  // __func__ pointer -> entry
  std::vector<uint8_t> commands;                            // serialized commands
  uint64_t command_count = 0;
  std::size_t size_field = 0;  // where the current command's size goes
  bool boundary_pending = false;
  uint64_t run_commands = 0;                 // of the current run
  std::set<std::string_view> run_functions;  // recorded during the current run
  std::map<uint64_t, uint64_t> buffers;      // live during runs that recorded commands
};

Recorder &recorder() {
  static Recorder r;
  return r;
}

const Entry *lookup(Recorder &r, const char *api) {
  auto [it, fresh] = r.by_api.try_emplace(api, nullptr);
  if (fresh) it->second = find_entry(api);
  return it->second;
}

template <typename T>
void put(std::vector<uint8_t> &out, T value) {
  const auto *bytes = reinterpret_cast<const uint8_t *>(&value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

void put_string(std::vector<uint8_t> &out, std::string_view s) {
  put(out, uint32_t(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

void start_command(Recorder &r, const Entry *e) {
  auto [it, fresh] = r.name_index.try_emplace(e, uint32_t(r.names.size()));
  if (fresh) r.names.push_back(e);
  put(r.commands, it->second);
  r.size_field = r.commands.size();
  put(r.commands, uint32_t(0));
  ++r.command_count;
}

}  // namespace

std::vector<uint8_t> &begin_command(const char *api, const void *tag) {
  Recorder &r = recorder();
  const Entry *e = lookup(r, api);
  if (!e || e->policy != Policy::recorded)
    fail(ErrorKind::unsupported,
         "{} passed its arguments to the recorder, but the recording policy does not record it (a bug in this SDK); "
         "mark the layer dynamic",
         api);
  if (e->tag != tag)
    fail(ErrorKind::unsupported,
         "the arguments {} passed to the recorder do not match its declaration in tpu_kernel.h (a bug in this SDK); "
         "mark the layer dynamic",
         api);
  if (r.boundary_pending) {
    r.boundary_pending = false;
    start_command(r, &boundary_entry);
  }
  start_command(r, e);
  r.run_functions.insert(e->name);
  ++r.run_commands;
  return r.commands;
}

void end_command() {
  Recorder &r = recorder();
  const std::size_t bytes = r.commands.size() - r.size_field - sizeof(uint32_t);
  const uint32_t size = uint32_t(bytes);
  std::memcpy(r.commands.data() + r.size_field, &size, sizeof size);
}

void note_call(const char *api) {
  const Entry *e = lookup(recorder(), api);
  if (!e)
    fail(ErrorKind::unsupported,
         "{} cannot be recorded for a static layer (it is not in this SDK's list of API functions); mark the layer "
         "dynamic",
         api);
  switch (e->policy) {
    case Policy::ignored:
      return;
    case Policy::refused:
      fail(ErrorKind::unsupported, "{} cannot be recorded for a static layer ({}); mark the layer dynamic", api,
           e->reason);
    case Policy::recorded:
      fail(ErrorKind::unsupported,
           "{} cannot be recorded for a static layer: this SDK does not capture its arguments yet; mark the layer "
           "dynamic",
           api);
  }
}

void run_started(Context &context, bool continuing) {
  Recorder &r = recorder();
  // A recorded run's data is not the model's (a static layer is recorded on
  // a memory plan whose inputs were never written): its reads are checked
  // when the stream is replayed, not now.
  context.hazards.recording = r.open;
  if (!r.open || !r.failure.empty()) return;
  if (r.chip != context.chip.name) {
    r.failure = fmt::format("the recording began on a {} emulator, but a later run used a {} one", r.chip,
                            context.chip.name);
    return;
  }
  // The statistics of a batch cover all its runs, so the functions seen do too.
  if (!continuing) {
    r.run_commands = 0;
    r.run_functions.clear();
  }
  r.boundary_pending = !continuing && r.command_count > 0;
  g_active = true;
}

bool run_finished(Context &context, bool kernel_finished) {
  const bool was_active = g_active;
  g_active = false;
  if (!was_active) return true;
  Recorder &r = recorder();
  r.boundary_pending = false;
  if (!kernel_finished) {
    // The run reports its own error; the recording keeps it as its reason.
    r.failure = fmt::format("a recorded run failed: {}", session::last_error());
    return true;
  }
  // Every command the engines counted must have come through the recorder.
  for (const auto &[name, count] : context.stats.commands())
    if (!r.run_functions.contains(name)) {
      r.failure = fmt::format(
          "{} issued {} engine command(s) that were not recorded (a bug in this SDK); mark the layer dynamic", name,
          count);
      session::last_error() = "cmodel_run: " + r.failure;
      return false;
    }
  if (r.run_commands > 0)
    for (const auto &[addr, bytes] : context.memory.global().allocations()) {
      uint64_t &kept = r.buffers[addr];
      kept = std::max(kept, bytes);
    }
  return true;
}

const char *policy_name(const char *name) {
  const Entry *e = name ? find_entry(name) : nullptr;
  if (!e || e == &boundary_entry) return nullptr;
  return e->policy == Policy::recorded ? "recorded" : e->policy == Policy::refused ? "refused" : "ignored";
}

uint64_t recorded_commands() { return recorder().command_count; }

namespace {

// ---- the stream format -------------------------------------------------------
//
// Little-endian. A 32-byte header:
//   0  char[8]  magic "TPUCMDS" + NUL
//   8  u32      version (1)
//  12  u32      header bytes (32)
//  16  u64      body bytes
//  24  u32      CRC-32 (IEEE) of the body
//  28  u32      reserved, 0
// then the body:
//   str chip, str origin                 (str = u32 length + bytes, no NUL)
//   u32 n, then n function names (str)   the string table
//   u32 m, then m x (u64 addr, u64 bytes) global buffers live while recording
//   u64 k, then k commands: u32 name index, u32 argument bytes, the bytes

constexpr char stream_magic[8] = {'T', 'P', 'U', 'C', 'M', 'D', 'S', '\0'};
constexpr uint32_t stream_version = 1;
constexpr uint32_t header_bytes = 32;
constexpr uint32_t max_chip_bytes = 64, max_origin_bytes = 4096, max_name_bytes = 256;

// zlib's CRC-32 (IEEE), fed in pieces: a body may exceed uInt.
uint32_t crc32_of(const uint8_t *p, uint64_t n) {
  uLong c = ::crc32(0L, Z_NULL, 0);
  while (n > 0) {
    const uInt piece = uInt(std::min<uint64_t>(n, 1u << 30));
    c = ::crc32(c, p, piece);
    p += piece;
    n -= piece;
  }
  return uint32_t(c);
}

std::vector<uint8_t> serialize(const Recorder &r) {
  std::vector<uint8_t> body;
  put_string(body, r.chip);
  put_string(body, r.origin);
  put(body, uint32_t(r.names.size()));
  for (const Entry *e : r.names) put_string(body, e->name);
  put(body, uint32_t(r.buffers.size()));
  for (const auto &[addr, bytes] : r.buffers) {
    put(body, addr);
    put(body, bytes);
  }
  put(body, r.command_count);
  body.insert(body.end(), r.commands.begin(), r.commands.end());

  std::vector<uint8_t> stream(stream_magic, stream_magic + sizeof stream_magic);
  put(stream, stream_version);
  put(stream, header_bytes);
  put(stream, uint64_t(body.size()));
  put(stream, crc32_of(body.data(), body.size()));
  put(stream, uint32_t(0));
  stream.insert(stream.end(), body.begin(), body.end());
  return stream;
}

struct Command {
  const Entry *entry;
  const uint8_t *args;  // inside the caller's stream buffer
  uint32_t size;
};

struct Stream {
  std::string chip, origin;
  std::vector<const Entry *> names;
  std::vector<std::pair<uint64_t, uint64_t>> buffers;
  std::vector<Command> commands;
};

template <typename... Args>
[[noreturn]] void invalid(fmt::format_string<Args...> format, Args &&...args) {
  throw Error(ErrorKind::config,
              "invalid command stream: " + fmt::format(format, std::forward<Args>(args)...));
}

// Bounds-checked reading of the body.
class Reader {
 public:
  Reader(const uint8_t *p, const uint8_t *end) : begin_(p), p_(p), end_(end) {}

  template <typename T>
  T get(std::string_view what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, p_, sizeof value);
    p_ += sizeof value;
    return value;
  }
  std::string_view string(std::string_view what, uint32_t limit) {
    const uint32_t n = get<uint32_t>(what);
    if (n > limit) invalid("{} is {} bytes long, more than the {} allowed (corrupted?)", what, n, limit);
    need(n, what);
    const std::string_view s(reinterpret_cast<const char *>(p_), n);
    p_ += n;
    return s;
  }
  const uint8_t *bytes(uint64_t n, std::string_view what) {
    need(n, what);
    const uint8_t *at = p_;
    p_ += n;
    return at;
  }
  uint64_t left() const { return uint64_t(end_ - p_); }
  uint64_t offset() const { return uint64_t(p_ - begin_) + header_bytes; }

 private:
  void need(uint64_t n, std::string_view what) {
    if (left() < n)
      invalid("truncated: {} needs {} bytes at offset {}, only {} are left", what, n, offset(), left());
  }
  const uint8_t *begin_, *p_, *end_;
};

Stream parse(const void *data, uint64_t size) {
  if (!data && size) invalid("the stream pointer is null");
  const auto *bytes = static_cast<const uint8_t *>(data);
  if (size < header_bytes) invalid("it is {} bytes, shorter than the {}-byte header (truncated?)", size, header_bytes);
  if (std::memcmp(bytes, stream_magic, sizeof stream_magic) != 0)
    invalid("it does not start with the magic \"TPUCMDS\" (not a command stream)");
  uint32_t version, header, crc;
  uint64_t body_bytes;
  std::memcpy(&version, bytes + 8, 4);
  std::memcpy(&header, bytes + 12, 4);
  std::memcpy(&body_bytes, bytes + 16, 8);
  std::memcpy(&crc, bytes + 24, 4);
  if (version != stream_version)
    invalid("it is version {}; this SDK reads version {}", version, stream_version);
  if (header != header_bytes) invalid("its header is {} bytes; version 1 has {}", header, header_bytes);
  if (body_bytes > size - header_bytes)
    invalid("truncated: the header announces {} bytes after it, {} are present", body_bytes, size - header_bytes);
  if (body_bytes < size - header_bytes)
    invalid("{} bytes follow the end of the stream", size - header_bytes - body_bytes);
  const uint8_t *body = bytes + header_bytes;
  if (const uint32_t actual = crc32_of(body, body_bytes); actual != crc)
    invalid("checksum mismatch (stored {:#010x}, computed {:#010x}): the stream is corrupted", crc, actual);

  Stream s;
  Reader in(body, body + body_bytes);
  s.chip = in.string("the chip name", max_chip_bytes);
  s.origin = in.string("the origin", max_origin_bytes);
  const uint32_t name_count = in.get<uint32_t>("the function count");
  for (uint32_t i = 0; i < name_count; ++i) {
    const std::string_view name = in.string("a function name", max_name_bytes);
    const Entry *e = find_entry(name);
    if (!e)
      invalid("unknown function \"{}\" (a stream from a newer SDK, or corrupted)", name);
    if (e->policy != Policy::recorded)
      invalid("function \"{}\" never appears in a command stream (it is not recorded)", name);
    if (std::find(s.names.begin(), s.names.end(), e) != s.names.end())
      invalid("function \"{}\" appears twice in the string table", name);
    s.names.push_back(e);
  }
  const uint32_t buffer_count = in.get<uint32_t>("the buffer count");
  for (uint32_t i = 0; i < buffer_count; ++i) {
    const uint64_t addr = in.get<uint64_t>("a buffer address"), n = in.get<uint64_t>("a buffer size");
    if (n == 0 || addr + n < addr) invalid("global buffer {} at {:#x} has an invalid size {}", i, addr, n);
    s.buffers.emplace_back(addr, n);
  }
  const uint64_t command_count = in.get<uint64_t>("the command count");
  // Each command takes at least 8 bytes: a corrupted count cannot make this reserve huge.
  s.commands.reserve(std::min<uint64_t>(command_count, in.left() / 8));
  for (uint64_t i = 0; i < command_count; ++i) {
    const uint32_t index = in.get<uint32_t>("a command's function index");
    if (index >= s.names.size())
      invalid("command {} names function {}, but the string table has {}", i + 1, index, s.names.size());
    const Entry *e = s.names[index];
    const uint32_t n = in.get<uint32_t>("a command's argument size");
    const uint8_t *args = in.bytes(n, fmt::format("the arguments of command {} ({})", i + 1, e->name));
    if (!e->check(args, args + n))
      invalid("command {} ({}): its {} argument bytes do not match the function's parameters", i + 1, e->name, n);
    s.commands.push_back({e, args, n});
  }
  if (in.left()) invalid("{} unexpected bytes follow the last command", in.left());
  return s;
}

// ---- replay ------------------------------------------------------------------

struct ReplayRun {
  const Command *commands;
  uint64_t count;
  const char *origin;
};

void replay_kernel(const void *arg) {
  const auto *run = static_cast<const ReplayRun *>(arg);
  CallInfo &call = current_call();
  call.replay_origin = run->origin;
  for (uint64_t i = 0; i < run->count; ++i) {
    call.replay_command = i + 1;
    run->commands[i].entry->invoke(run->commands[i].args);
  }
}

// Every buffer live while the stream was recorded lies inside one buffer
// allocated here.
void check_buffers(const Stream &s, Context &context) {
  const auto &live = context.memory.global().allocations();
  for (const auto &[addr, bytes] : s.buffers) {
    auto it = live.upper_bound(addr);
    if (it != live.begin()) {
      --it;
      if (addr - it->first <= it->second && bytes <= it->second - (addr - it->first)) continue;
    }
    fail(ErrorKind::memory_fault,
         "the stream uses global memory [{:#x}, {:#x}) ({}, a buffer live when it was recorded), which no "
         "buffer allocated here holds; allocate the same memory plan first (the same cmodel_global_alloc calls in "
         "the same order on a fresh emulator, or cmodel_global_alloc_at({:#x}, {}))",
         addr, addr + bytes, Bytes{bytes}, addr, bytes);
  }
}

}  // namespace
}  // namespace cmodel::record

using namespace cmodel;
using namespace cmodel::record;
using cmodel::host::host_only_call;
using cmodel::host::refused_in_kernel;
using cmodel::host::host_call;
using cmodel::host::open_context;

extern "C" {

int cmodel_record_begin(const char *origin) {
  return host_only_call(__func__, [&] {
    const Context &context = open_context(__func__);
    Recorder &r = recorder();
    if (r.open)
      fail(ErrorKind::config, "a recording (from \"{}\") is already open; end it with cmodel_record_end() first",
           r.origin);
    const std::string_view label = origin ? origin : "";
    if (label.size() > max_origin_bytes)
      fail(ErrorKind::config, "the origin is {} bytes long; at most {} are kept", label.size(), max_origin_bytes);
    r = Recorder{};
    r.open = true;
    r.chip = context.chip.name;
    r.origin = label;
  });
}

int cmodel_record_end(void **stream, uint64_t *size) {
  return host_only_call(__func__, [&] {
    if (!stream || !size) fail(ErrorKind::config, "stream and size must not be null");
    *stream = nullptr;
    *size = 0;
    Recorder &r = recorder();
    if (!r.open) fail(ErrorKind::config, "no recording is open; call cmodel_record_begin() first");
    r.open = false;
    if (Context *context = current_context()) context->hazards.recording = false;
    if (!r.failure.empty()) fail(ErrorKind::unsupported, "no stream was made: {}", r.failure);
    const std::vector<uint8_t> bytes = serialize(r);
    r = Recorder{};
    void *copy = std::malloc(bytes.size());
    if (!copy) fail(ErrorKind::config, "cannot allocate {} bytes for the stream", bytes.size());
    std::memcpy(copy, bytes.data(), bytes.size());
    *stream = copy;
    *size = bytes.size();
  });
}

void cmodel_record_free(void *stream) { std::free(stream); }

int cmodel_recording(void) { return recorder().open ? 1 : 0; }

int cmodel_replay(const void *stream, uint64_t size) {
  const std::lock_guard<std::recursive_mutex> lock(session::emulator_mutex());
  Context *context = nullptr;
  Stream parsed;
  const int status = host_only_call(__func__, [&] {
    context = &open_context(__func__);
    if (recorder().open)
      fail(ErrorKind::config, "a recording is open; end it with cmodel_record_end() before replaying a stream");
    if (cmodel::host::batch_open())
      fail(ErrorKind::config, "a batch is open; a replay is a run of its own: end the batch with cmodel_batch_end() "
                              "first");
    parsed = parse(stream, size);
    if (parsed.chip != context->chip.name)
      fail(ErrorKind::config, "the stream was recorded on {}, but the open emulator is {}", parsed.chip,
           context->chip.name);
    check_buffers(parsed, *context);
    context->begin_run();
    tpu_initialize();  // as cmodel_run does
  });
  if (status != 0) return status;
  // Race records keep a pointer to the origin; they are cleared by the next
  // run's begin_run, so the text lives until the next replay.
  static std::string origin;
  origin = parsed.origin;
  const ReplayRun run{parsed.commands.data(), parsed.commands.size(), origin.c_str()};
  const bool finished = session::run_kernel(replay_kernel, &run);
  CallInfo &call = current_call();
  call.replay_origin = nullptr;
  call.replay_command = 0;
  cmodel::host::finish_run(*context);
  if (!finished) return -1;
  session::last_error().clear();
  return 0;
}

}  // extern "C"

// A stream parsed once on the host for cmodel_stream_replay_here: its own
// copy of the bytes, which the parsed commands point into.
struct cmodel_stream {
  std::vector<uint8_t> bytes;
  Stream parsed;
};

extern "C" {

cmodel_stream *cmodel_stream_open(const void *stream, uint64_t size) {
  std::unique_ptr<cmodel_stream> handle;
  host_only_call(__func__, [&] {
    const Context &context = open_context(__func__);
    if (!stream) fail(ErrorKind::config, "stream is a null pointer");
    auto made = std::make_unique<cmodel_stream>();
    const auto *first = static_cast<const uint8_t *>(stream);
    made->bytes.assign(first, first + size);
    made->parsed = parse(made->bytes.data(), made->bytes.size());
    if (made->parsed.chip != context.chip.name)
      fail(ErrorKind::config, "the stream was recorded on {}, but the open emulator is {}", made->parsed.chip,
           context.chip.name);
    handle = std::move(made);
  });
  return handle.release();
}

void cmodel_stream_close(cmodel_stream *stream) { delete stream; }

int cmodel_stream_replay_here(const cmodel_stream *stream) {
  if (!session::kernel_running_here() || !stream)
    return host_call(__func__, [&] {
      if (!stream) fail(ErrorKind::config, "stream is a null pointer");
      fail(ErrorKind::config, "it replays inside a running kernel, on the calling core; no kernel runs on this "
                              "thread (cmodel_replay replays a stream as a run of its own)");
    });
  // The buffers are checked here, not at open: the host may free one in
  // between.
  api::run(__func__, TPU_CALLER(), [&] { check_buffers(stream->parsed, api::context()); });
  CallInfo &call = current_call();
  const char *const origin_before = call.replay_origin;
  const uint64_t command_before = call.replay_command;
  // The recorded barriers and messages were a lone core's: they wait for
  // this core's engines only, not for the other cores of the run. A failing
  // command leaves by the run's jump; the next run clears the flag.
  cmodel::multicore::set_solo(true);
  call.replay_origin = stream->parsed.origin.c_str();
  for (uint64_t i = 0; i < stream->parsed.commands.size(); ++i) {
    call.replay_command = i + 1;
    stream->parsed.commands[i].entry->invoke(stream->parsed.commands[i].args);
  }
  cmodel::multicore::set_solo(false);
  call.replay_origin = origin_before;
  call.replay_command = command_before;
  return 0;
}

double cmodel_core_time_us(void) {
  if (!session::kernel_running_here()) return -1;
  return api::context().timeline.now_ns() / 1000.0;
}

const char *cmodel_stream_info(const void *stream, uint64_t size) {
  static std::string report;
  const int status = host_call(__func__, [&] {
    const Stream s = parse(stream, size);
    nlohmann::ordered_json j;
    j["version"] = stream_version;
    j["bytes"] = size;
    j["chip"] = s.chip;
    j["origin"] = s.origin;
    j["commands"] = s.commands.size();
    std::map<std::string_view, uint64_t> counts;
    for (const Command &c : s.commands) ++counts[c.entry->name];
    j["functions"] = nlohmann::ordered_json::object();
    for (const auto &[name, count] : counts) j["functions"][std::string(name)] = count;
    j["buffers"] = nlohmann::ordered_json::array();
    for (const auto &[addr, bytes] : s.buffers) j["buffers"].push_back({{"addr", addr}, {"bytes", bytes}});
    report = j.dump();
  });
  return status == 0 ? report.c_str() : nullptr;
}

uint64_t cmodel_global_alloc_at(uint64_t addr, uint64_t bytes) {
  uint64_t result = 0;
  host_only_call(__func__, [&] {
    Context &context = open_context(__func__);
    GlobalMemory &global = context.memory.global();
    if (bytes == 0) fail(ErrorKind::config, "cannot allocate 0 bytes");
    if (addr % 512 != 0) fail(ErrorKind::config, "{:#x} is not 512-byte aligned", addr);
    const uint64_t start = global.start(), end = start + global.size();
    if (addr < start || addr >= end || bytes > end - addr)
      fail(ErrorKind::memory_fault, "[{:#x}, {:#x}) is not inside global memory [{:#x}, {:#x})", addr, addr + bytes,
           start, end);
    if (!global.allocate_at(addr, bytes)) {
      std::string holder;
      for (const auto &[a, n] : global.allocations())
        if (a < addr + bytes && addr < a + ((n + 511) / 512 * 512)) {
          holder = fmt::format("; the live buffer [{:#x}, {:#x}) overlaps it", a, a + n);
          break;
        }
      fail(ErrorKind::memory_fault, "cannot allocate [{:#x}, {:#x}){}", addr, addr + bytes, holder);
    }
    result = addr;
  });
  return result;
}

}  // extern "C"
