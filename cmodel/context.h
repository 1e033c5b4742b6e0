// context.h: one emulated chip with its memories, timelines and run state.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "call_site.h"
#include "chip_spec.h"
#include "hazard.h"
#include "memory.h"
#include "timeline.h"

namespace cmodel {

class Context {
 public:
  explicit Context(const ChipSpec &chip) : chip(chip), memory(chip), timeline(chip) {}

  // Clears the timelines, statistics and hazard records before a run.
  void begin_run() {
    timeline.reset();
    stats.reset();
    hazards.clear();
    hazards.warnings.clear();
    table_warnings.clear();
  }

  // Books one command on `engine` and checks it for races with the other
  // engine (its local operands were noted in `hazards` beforehand).
  Interval issue(Engine engine, double cycles) {
    // Taken before booking: an access that ended by then can meet no later
    // command of either engine (each engine runs its commands in order).
    const double idle = std::min(timeline.idle_ns(Engine::gdma), timeline.idle_ns(Engine::bdc));
    const Interval time = timeline.issue(engine, cycles);
    hazards.commit(engine, time, timeline.in_parallel(), current_call(), idle);
    return time;
  }
  void parallel_start() {
    timeline.parallel_start();
    hazards.clear();
  }
  void parallel_end() {
    timeline.parallel_end();
    hazards.clear();
  }
  // Counts one command issued through `api`.
  void count(const char *api) { ++stats.commands[api]; }

  const ChipSpec &chip;
  Memory memory;
  Timeline timeline;
  HazardTracker hazards;
  RunStats stats;
  std::string stats_report;  // JSON of the last finished run
  // Coefficient tables (cmodel/bdc/tables.h): the table (bdc::Table) each
  // loader call last wrote at a local address, and the addresses whose
  // table of another dtype was already warned about in this run.
  std::map<uint32_t, int> loaded_tables;
  std::set<uint32_t> table_warnings;
};

// The emulator opened by cmodel_open(), or nullptr.
Context *current_context();
void set_current_context(std::unique_ptr<Context> context);

}  // namespace cmodel
