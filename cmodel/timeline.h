// timeline.h: the cost model (ARCHITECTURE.md "Time").
//
// GDMA, BDC, SDMA and HAU (the sort engine) have a timeline each. Outside a parallel region every
// command waits for all earlier ones; inside tpu_parallel_start/end, GDMA
// and BDC run side by side and the region ends when both are idle. Times
// are kept in nanoseconds because the engines run at different clocks.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "chip_spec.h"

namespace cmodel {

enum class Engine { gdma, bdc, sdma, hau };
inline constexpr int engine_count = 4;
const char *engine_name(Engine e);

struct Interval {
  double start_ns, end_ns;
};

struct EngineStats {
  double cycles = 0;
  double busy_ns = 0;
  uint64_t commands = 0;
};

class Timeline {
 public:
  explicit Timeline(const ChipSpec &chip) : chip_(chip) {}

  void reset();
  // Books one command of `cycles` engine cycles; returns when it runs.
  Interval issue(Engine engine, double cycles);
  // Cycles of a GDMA transfer of `bytes` in direction `dir`.
  double gdma_cycles(Direction dir, uint64_t bytes) const;

  void parallel_start();
  void parallel_end();
  bool in_parallel() const { return in_parallel_; }
  // Waits for every engine (tpu_poll).
  void sync();
  // Waits for every engine and then until `ns` (a cross-core barrier or
  // message: the core waits for another core's engines).
  void wait_until(double ns);
  // Several cores of a multi-core run stream at once: DMA transfers are
  // costed at the chip's shared bandwidth. Kept until the next reset().
  void set_cores_streaming(bool on) { cores_streaming_ = on; }

  double now_ns() const { return now_ns_; }
  // Time during which the GDMA and the BDC were both busy, from their
  // commands' intervals (exact, not busy time minus run time).
  double concurrent_ns() const { return concurrent_ns_; }
  // When `e` has finished every command issued to it so far.
  double idle_ns(Engine e) const { return free_ns_[int(e)]; }
  const EngineStats &stats(Engine e) const { return engines_[int(e)]; }

 private:
  double clock_mhz(Engine e) const;
  void add_concurrency(Engine engine, Interval time);
  void forget_ended();

  const ChipSpec &chip_;
  bool in_parallel_ = false;
  bool cores_streaming_ = false;
  double now_ns_ = 0;  // everything issued outside a region is done by then
  std::array<double, engine_count> free_ns_{};  // when each engine is idle again
  std::array<EngineStats, engine_count> engines_{};
  // The GDMA's [0] and the BDC's [1] intervals that a later command of the
  // other engine may still overlap, in issue order (an engine's commands
  // never overlap each other, so they are sorted by start and by end).
  std::array<std::deque<Interval>, 2> open_;
  double concurrent_ns_ = 0;
};

// What the DMA commands of one engine moved in one direction.
struct Transfers {
  uint64_t bytes = 0;
  double busy_ns = 0;
  uint64_t commands = 0;
};

// What one run did, reported by cmodel_last_run_stats().
struct RunStats {
  std::array<uint64_t, direction_count> gdma_bytes{};  // GDMA and SDMA together
  // Per DMA engine (0: GDMA, 1: SDMA) and direction.
  std::array<std::array<Transfers, direction_count>, 2> transfers{};
  // BDC commands two of whose local operands share a bank (bdc::book_cycles).
  uint64_t bdc_bank_conflicts = 0;

  // Books a DMA command of `engine` (GDMA or SDMA) that moved `bytes` in
  // `dir` during `busy_ns`.
  void transfer(Engine engine, Direction dir, uint64_t bytes, double busy_ns) {
    Transfers &t = transfers[engine == Engine::sdma ? 1 : 0][int(dir)];
    t.bytes += bytes;
    t.busy_ns += busy_ns;
    ++t.commands;
  }

  // Counts one command issued through `api`, a name that outlives the run
  // (the API function's __func__). Every command is counted, so the count
  // is found by the name's address, the last one first: no string is built
  // or compared.
  void count(const char *api) {
    if (last_ < counts_.size() && counts_[last_].first == api) {
      ++counts_[last_].second;
      return;
    }
    count_other(api);
  }
  // API name -> count.
  std::map<std::string, uint64_t> commands() const;
  // Adds another run's bytes and counts (cmodel_total_stats).
  void add(const RunStats &other);

  void reset() {
    gdma_bytes = {};
    transfers = {};
    bdc_bank_conflicts = 0;
    counts_.clear();  // keeps its capacity: the next run counts without allocating
    last_ = 0;
  }

 private:
  void count_other(const char *api);

  std::vector<std::pair<const char *, uint64_t>> counts_;  // by address of the name
  size_t last_ = 0;                                       // the entry counted last
};

// The JSON report: chip, total_us, per-engine cycles/busy_us/commands,
// overlap_us, bytes per direction, command counts, warnings; then
// gdma_bdc_concurrent_us, per DMA engine and direction the bytes, busy_us
// and commands ("transfers"), and bdc_bank_conflicts.
std::string stats_json(const ChipSpec &chip, const Timeline &timeline, const RunStats &stats,
                       const std::vector<std::string> &warnings = {});

}  // namespace cmodel
