// multicore.cc: multi-core runs.
//
// Each core runs the kernel on a thread of its own, but only the core
// holding the turn runs: a mutex and a condition variable pass the turn, so
// the emulator's state (the current context, the call being served, the
// fault trap's thread) always belongs to exactly one core, and a run is
// reproducible. The turn moves at every point of synchronisation (a
// barrier, a message sent or waited for): in the "in_order" schedule to the
// next core in index order that can continue (core k+1, k+2, ..., wrapping
// round, the core itself last); in the "random:SEED" schedule to one of
// those picked by a generator seeded with SEED. A core whose wait cannot
// pass yet hands the turn on; when no core can continue, the run stops
// with a deadlock naming every core's wait and call site.
#include "multicore.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "api_guard.h"
#include "cmodel/context.h"
#include "cmodel/cores.h"
#include "cmodel/run_totals.h"
#include "cmodel/source_site.h"
#include "cmodel_host.h"
#include "host_call.h"
#include "kernel_faults.h"
#include "record.h"
#include "session.h"
#include "tpu_kernel.h"

namespace cmodel::multicore {
namespace {

constexpr int max_cores = 64;

struct Options {
  int cores = 0;         // 0: the chip's own count
  bool random = false;   // the schedule
  uint64_t seed = 0;
};

int parse_cores(const std::string &value) {
  char *end = nullptr;
  const long n = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end || n < 0 || n > max_cores)
    fail(ErrorKind::config, "option cores = \"{}\"; expected a core count 1 .. {} (0: the chip's own)", value,
         max_cores);
  return int(n);
}

void parse_schedule(const std::string &value, Options &o) {
  if (value == "in_order") {
    o.random = false;
    return;
  }
  if (value.starts_with("random:")) {
    const std::string digits = value.substr(7);
    char *end = nullptr;
    const unsigned long long seed = std::strtoull(digits.c_str(), &end, 10);
    if (!digits.empty() && !*end && digits[0] != '-') {
      o.random = true;
      o.seed = seed;
      return;
    }
  }
  fail(ErrorKind::config, "option core_schedule = \"{}\"; expected \"in_order\" or \"random:SEED\" (SEED a number)",
       value);
}

// The options as the environment sets them (TPU_SDK_CORES,
// TPU_SDK_CORE_SCHEDULE), read once: what every emulator starts with.
const Options &environment_options() {
  static const Options initial = [] {
    Options o;
    // An unknown value is refused by the first run (config error), not silently ignored.
    try {
      if (const char *cores = std::getenv("TPU_SDK_CORES")) o.cores = parse_cores(cores);
      if (const char *schedule = std::getenv("TPU_SDK_CORE_SCHEDULE")) parse_schedule(schedule, o);
    } catch (const Error &) {
      o.cores = -1;
    }
    return o;
  }();
  return initial;
}

Options &options() {
  static Options o = environment_options();
  return o;
}

enum class State { ready, waiting, finished, failed };

struct Core {
  State state = State::ready;
  std::function<bool()> can_continue;  // while waiting
  std::function<std::string()> waits_for;  // "all 2 cores to reach tpu_sync_all (1 arrived)"
  CallInfo wait_call;
  // What the core had while another held the turn.
  CallInfo call;
  cmodel::SourceSite source;
  int api_depth = 0;
  bool stopped = false;  // stopped because another core failed
  session::ErrorTexts error;
  std::thread thread;
};

class Run {
 public:
  // Core k runs kernels[k](args[k]).
  Run(std::vector<void (*)(const void *)> kernels, std::vector<const void *> args)
      : kernels_(std::move(kernels)), args_(std::move(args)), cores_(kernels_.size()), sync_(int(kernels_.size())),
        rng_(options().seed), random_(options().random) {}

  int size() const { return int(cores_.size()); }
  int current() const { return turn_; }
  CoreSync &sync() { return sync_; }
  void start();
  // The failed core's error (prefixed with its index), or none.
  int failed_core() const;
  const Core &core(int k) const { return cores_[size_t(k)]; }

  // ---- on the thread of the core holding the turn ----
  void block(std::function<bool()> can_continue, std::function<std::string()> waits_for);
  void switch_point();

 private:
  void core_main(int k);
  void take_turn(int k);
  void hand_turn(int from, int to);
  void leave(int k);
  int pick_next(int from);
  bool can_run(int k) const;
  [[noreturn]] void deadlock(int k);
  void report_deadlock(int k);
  void stop_if_failed(int k);

  std::vector<void (*)(const void *)> kernels_;
  std::vector<const void *> args_;
  std::vector<Core> cores_;
  CoreSync sync_;
  std::mt19937_64 rng_;
  bool random_;
  bool stopping_ = false;
  std::mutex mutex_;
  std::condition_variable turn_changed_;
  int turn_ = 0;     // the core that may run; -1 when all are done
};

Run *g_run = nullptr;
bool g_solo = false;  // set_solo

bool Run::can_run(int k) const {
  const Core &c = cores_[size_t(k)];
  if (c.state == State::ready) return true;
  return c.state == State::waiting && (stopping_ || c.can_continue());
}

// The next core to run after `from`, or -1 when none can.
int Run::pick_next(int from) {
  std::vector<int> candidates;
  for (int step = 1; step <= size(); ++step) {
    const int k = (from + step) % size();
    if (can_run(k)) candidates.push_back(k);
  }
  if (candidates.empty()) return -1;
  if (!random_) return candidates.front();
  return candidates[std::uniform_int_distribution<size_t>(0, candidates.size() - 1)(rng_)];
}

// Waits for the turn of core `k`, then makes the emulator's state its own.
void Run::take_turn(int k) {
  {
    std::unique_lock lock(mutex_);
    turn_changed_.wait(lock, [&] { return turn_ == k; });
  }
  Core &c = cores_[size_t(k)];
  session::g_kernel_pthread = pthread_self();
  select_core(k);
  faults::adopt_kernel_thread(session::kernel_exit());
  faults::g_api_depth = c.api_depth;
  current_call() = c.call;
  cmodel::source_site() = c.source;
}

void Run::hand_turn(int from, int to) {
  Core &c = cores_[size_t(from)];
  c.api_depth = faults::g_api_depth;
  c.call = current_call();
  c.source = cmodel::source_site();
  {
    const std::lock_guard lock(mutex_);
    turn_ = to;
  }
  turn_changed_.notify_all();
  take_turn(from);
}

void Run::stop_if_failed(int k) {
  if (!stopping_) return;
  cores_[size_t(k)].stopped = true;
  throw session::CoreStopped{};
}

void Run::switch_point() {
  const int k = turn_;
  const int next = pick_next(k);
  if (next >= 0 && next != k) hand_turn(k, next);
  stop_if_failed(k);
}

void Run::block(std::function<bool()> can_continue, std::function<std::string()> waits_for) {
  const int k = turn_;
  Core &c = cores_[size_t(k)];
  c.state = State::waiting;
  c.can_continue = std::move(can_continue);
  c.waits_for = std::move(waits_for);
  c.wait_call = current_call();
  while (!c.can_continue()) {
    const int next = pick_next(k);
    if (next < 0) report_deadlock(k);
    if (next != k) hand_turn(k, next);
    if (stopping_) break;
  }
  c.state = State::ready;
  c.can_continue = nullptr;
  c.waits_for = nullptr;
  stop_if_failed(k);
}

void Run::deadlock(int k) {
  int finished = 0;
  std::string cores;
  for (int i = 0; i < size(); ++i) {
    const Core &c = cores_[size_t(i)];
    if (!cores.empty()) cores += "; ";
    if (c.state == State::finished) {
      ++finished;
      cores += fmt::format("core {} has finished (its kernel returned)", i);
    } else {
      const std::string what = c.waits_for ? c.waits_for() : "?";
      const CallInfo &at = i == k ? current_call() : c.wait_call;
      cores += fmt::format("core {} waits in {} (called from {}) for {}", i, at.api ? at.api : "?",
                           describe_call(at), what);
    }
  }
  if (finished == 0)
    fail(ErrorKind::core_sync, "deadlock: every core of the {}-core run waits and none can continue: {}", size(),
         cores);
  fail(ErrorKind::core_sync,
       "a wait that can never be satisfied: the core(s) it needs finished without reaching it (a missing peer): {}",
       cores);
}

// The deadlock's error, with the core no longer counted as waiting.
void Run::report_deadlock(int k) {
  try {
    deadlock(k);
  } catch (...) {
    cores_[size_t(k)].state = State::ready;
    cores_[size_t(k)].waits_for = nullptr;
    cores_[size_t(k)].can_continue = nullptr;
    throw;
  }
}

void Run::core_main(int k) {
  const faults::ThreadSignalStack stack;
  take_turn(k);
  const bool finished = session::run_core_kernel(kernels_[size_t(k)], args_[size_t(k)]);
  Core &c = cores_[size_t(k)];
  if (finished) {
    c.state = State::finished;
  } else {
    c.state = State::failed;
    if (!c.stopped) c.error = session::error_texts();
    stopping_ = true;
  }
  leave(k);
}

// Core `k` is done: the turn goes to the next core that can run, or (none
// can, but some wait) to a waiting one, which then reports the deadlock.
void Run::leave(int k) {
  int next = pick_next(k);
  for (int i = 0; i < size() && next < 0; ++i)
    if (cores_[size_t(i)].state == State::waiting) next = i;
  {
    const std::lock_guard lock(mutex_);
    turn_ = next;
  }
  turn_changed_.notify_all();
}

void Run::start() {
  for (int k = 0; k < size(); ++k) cores_[size_t(k)].thread = std::thread([this, k] { core_main(k); });
  {
    std::unique_lock lock(mutex_);
    turn_changed_.wait(lock, [&] { return turn_ < 0; });
  }
  for (Core &c : cores_) c.thread.join();
}

int Run::failed_core() const {
  for (int k = 0; k < size(); ++k)
    if (cores_[size_t(k)].state == State::failed && !cores_[size_t(k)].stopped) return k;
  return -1;
}

Run &run() { return *g_run; }

// The core's engines are waited for; the time it arrives.
double arrival_ns() {
  Context &c = api::context();
  c.timeline.sync();
  return c.timeline.now_ns();
}

}  // namespace

bool active() { return g_run != nullptr && !g_solo; }
void set_solo(bool on) { g_solo = on; }
int core_index() { return run().current(); }
int core_num() { return run().size(); }

void barrier(const char *api, int msg_id, int participants) {
  Run &r = run();
  if (participants < 1 || participants > r.size())
    fail(ErrorKind::illegal_command, "core_num = {}; this run has {} cores", participants, r.size());
  const int k = r.current();
  const uint64_t generation = r.sync().arrive(k, msg_id, participants, arrival_ns());
  double release_ns = 0;
  CoreSync &sync = r.sync();
  r.block([&sync, msg_id, generation, &release_ns] { return sync.barrier_passed(msg_id, generation, &release_ns); },
          [&sync, msg_id, participants, api] {
            return fmt::format("{} core(s) to reach {} with msg_id {} ({} arrived)", participants, api, msg_id,
                               sync.arrived(msg_id));
          });
  sync.pass_barrier(k, msg_id);
  api::context().timeline.wait_until(release_ns);
  r.switch_point();
}

void sync_all(const char *api) {
  // One key for every all-core barrier: the message id of a
  // tpu_sync_all_with_msg_id only tells the hardware which slot to use.
  constexpr int all_cores_key = -1;
  Run &r = run();
  const int k = r.current();
  CoreSync &sync = r.sync();
  const uint64_t generation = sync.arrive(k, all_cores_key, r.size(), arrival_ns());
  double release_ns = 0;
  r.block([&sync, generation, &release_ns] { return sync.barrier_passed(all_cores_key, generation, &release_ns); },
          [&sync, &r, api] {
            return fmt::format("all {} cores to reach {} or another all-core barrier ({} arrived)", r.size(), api,
                               sync.arrived(all_cores_key));
          });
  sync.pass_barrier(k, all_cores_key);
  api::context().timeline.wait_until(release_ns);
  r.switch_point();
}

namespace {

void check_message(int msg_id, const char *count_name, int count) {
  if (msg_id < 0)
    fail(ErrorKind::illegal_command, "msg_id = {}; message ids are not negative", msg_id);
  if (count < 0 || count >= CoreSync::message_slots)
    fail(ErrorKind::illegal_command, "{} = {}; expected 0 .. {}", count_name, count, CoreSync::message_slots - 1);
}

}  // namespace

void send(const char *api, int msg_id, int wait_count) {
  (void)api;
  check_message(msg_id, "wait_cnt", wait_count);
  Run &r = run();
  Context &c = api::context();
  std::string error;
  if (!r.sync().send(r.current(), msg_id, wait_count, c.timeline.now_ns(), current_call(), &error))
    fail(ErrorKind::core_sync, "{}", error);
  r.switch_point();
}

void wait(const char *api, int msg_id, int send_count) {
  (void)api;
  check_message(msg_id, "send_cnt", send_count);
  Run &r = run();
  CoreSync &sync = r.sync();
  r.block([&sync, msg_id, send_count] { return sync.can_pass_wait(msg_id, send_count); },
          [&sync, msg_id, send_count] {
            return fmt::format("{} send(s) of message {} (slot {}; {} arrived)", send_count, msg_id,
                               unsigned(msg_id) % CoreSync::message_slots, sync.sends(msg_id));
          });
  const double sent_ns = sync.pass_wait(r.current(), msg_id);
  api::context().timeline.wait_until(sent_ns);
  r.switch_point();
}

int chip_cores(int chip_core_num) {
  const int option = options().cores;
  if (option < 0)
    fail(ErrorKind::config, "TPU_SDK_CORES or TPU_SDK_CORE_SCHEDULE has a malformed value (\"{}\", \"{}\")",
         std::getenv("TPU_SDK_CORES") ? std::getenv("TPU_SDK_CORES") : "",
         std::getenv("TPU_SDK_CORE_SCHEDULE") ? std::getenv("TPU_SDK_CORE_SCHEDULE") : "");
  return option > 0 ? option : chip_core_num;
}

void set_cores_option(const std::string &value) { options().cores = parse_cores(value); }
int cores_option() { return options().cores; }
void set_schedule_option(const std::string &value) { parse_schedule(value, options()); }
void reset_options() { options() = environment_options(); }

}  // namespace cmodel::multicore

namespace {

using namespace cmodel;

// Every core's context made and reset for a run of `cores` cores, sharing
// `sync`; while core 0 traces, the others trace on traces of their own.
void begin_cores(int cores, CoreSync &sync) {
  const bool tracing = core_context(0).trace != nullptr;
  tpu_initialize();  // command ids count from 0 again, as for cmodel_run
  for (int k = 0; k < cores; ++k) {
    Context &c = core_context(k);
    c.begin_run();
    c.hazards.cores = &sync;
    c.timeline.set_cores_streaming(cores > 1);
    if (k > 0) c.trace = tracing ? std::make_unique<Trace>() : nullptr;
  }
}

// The other cores' traces join core 0's, whose clock moves past the run.
void finish_traces(int cores, double run_ns) {
  Context &first = core_context(0);
  for (int k = 1; k < cores; ++k) {
    Context &c = core_context(k);
    if (first.trace && c.trace) first.trace->add_core(k, *c.trace);
    c.trace = nullptr;
  }
  if (first.trace) first.trace->run_finished(run_ns);
}

// The cores' statistics as the run's (cmodel_last_run_stats) and into the totals.
void finish_cores(int cores) {
  RunTotals combined;
  std::vector<double> core_ns;
  for (int k = 0; k < cores; ++k) {
    Context &c = core_context(k);
    c.timeline.sync();
    combined.add_core(c.timeline, c.stats, c.hazards.warnings);
    core_ns.push_back(c.timeline.now_ns());
    c.hazards.cores = nullptr;
  }
  Context &first = core_context(0);
  first.stats_report = cores_json(first.chip, combined, core_ns);
  run_totals().add(combined);
  finish_traces(cores, combined.total_ns);
}

// Runs the cores under one fault trap (set up on this thread; each core's
// thread adopts it when its turn comes).
void run_all(multicore::Run &run) {
  session::watch_exits_during_runs();
  const faults::Trap trap(session::kernel_exit());
  session::g_kernel_running = true;
  run.start();
  session::g_kernel_running = false;
  select_core(0);
  current_call() = CallInfo{};
  cmodel::source_site() = cmodel::SourceSite{};
}

// The run's error, if any: the failed core's, or a message left unconsumed.
bool report(multicore::Run &run) {
  const int failed = run.failed_core();
  if (failed >= 0) {
    session::ErrorTexts texts = run.core(failed).error;
    const std::string prefix = fmt::format("core {} of {}: ", failed, run.size());
    texts.line = prefix + texts.line;
    texts.readable = prefix + texts.readable;
    session::set_error_texts(texts);
    return false;
  }
  const std::vector<std::string> left = run.sync().unconsumed();
  if (left.empty()) return true;
  std::string all;
  for (const std::string &one : left) all += (all.empty() ? "" : "; ") + one;
  const std::string line = fmt::format(
      "cmodel_run_cores: the run ended with messages not consumed by the waits they were sent for (a missing peer): "
      "{} [{}]",
      all, error_kind_name(ErrorKind::core_sync));
  session::set_error_texts({line, line});
  return false;
}

}  // namespace

extern "C" int cmodel_core_count(void) {
  const Context *c = current_context();
  if (!c) return 0;
  try {
    return multicore::chip_cores(c->chip.core_num);
  } catch (const Error &) {
    return c->chip.core_num;
  }
}

extern "C" int cmodel_cores_option(void) { return multicore::cores_option(); }

namespace {

// The checks of a multi-core launch of `core_num` cores; 0 or -1 (the error recorded).
int check_launch(const char *api, int core_num) {
  return host::host_only_call(api, [&] {
    const Context &first = host::open_context(api);
    const int cores = multicore::chip_cores(first.chip.core_num);
    if (core_num < 1 || core_num > cores)
      fail(ErrorKind::config,
           "core_num = {}; {} has {} core(s) (the option \"cores\" or TPU_SDK_CORES emulates more)", core_num,
           first.chip.name, cores);
    if (host::batch_open()) fail(ErrorKind::config, "a multi-core run cannot be part of a batch");
    if (record::g_active) fail(ErrorKind::config, "a multi-core run cannot be recorded as a command stream");
  });
}

int run_group(std::vector<void (*)(const void *)> kernels, std::vector<const void *> args) {
  if (kernels.size() == 1) {
    cmodel_set_core(0, 1);
    return cmodel_run(kernels[0], args[0]);
  }
  const int core_num = int(kernels.size());
  multicore::Run run(std::move(kernels), std::move(args));
  begin_cores(core_num, run.sync());
  multicore::g_run = &run;
  multicore::g_solo = false;
  run_all(run);
  multicore::g_run = nullptr;
  multicore::g_solo = false;
  finish_cores(core_num);
  if (!report(run)) return -1;
  session::last_error().clear();
  return 0;
}

}  // namespace

extern "C" int cmodel_run_cores(void (*kernel)(const void *), const void *arg, int core_num) {
  const std::lock_guard<std::recursive_mutex> lock(session::emulator_mutex());
  if (const int status = check_launch(__func__, core_num); status != 0) return status;
  if (!kernel)
    return host::host_only_call(__func__, [] { fail(ErrorKind::config, "kernel function pointer is null"); });
  return run_group(std::vector<void (*)(const void *)>(size_t(core_num), kernel),
                   std::vector<const void *>(size_t(core_num), arg));
}

extern "C" int cmodel_run_group(void (*const *kernels)(const void *), const void *const *args, int core_num) {
  const std::lock_guard<std::recursive_mutex> lock(session::emulator_mutex());
  if (const int status = check_launch(__func__, core_num); status != 0) return status;
  if (!kernels || !args)
    return host::host_only_call(__func__, [] { fail(ErrorKind::config, "kernels or args is a null pointer"); });
  for (int k = 0; k < core_num; ++k)
    if (!kernels[k])
      return host::host_only_call(__func__, [k] { fail(ErrorKind::config, "kernels[{}] is a null pointer", k); });
  return run_group(std::vector<void (*)(const void *)>(kernels, kernels + core_num),
                   std::vector<const void *>(args, args + core_num));
}
