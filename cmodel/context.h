// context.h: one emulated chip with its memories, timelines and run state.
#pragma once

#include <memory>
#include <string>

#include "chip_spec.h"
#include "memory.h"
#include "timeline.h"

namespace cmodel {

class Context {
 public:
  explicit Context(const ChipSpec &chip) : chip(chip), memory(chip), timeline(chip) {}

  // Clears the timelines and statistics before a run.
  void begin_run() {
    timeline.reset();
    stats.reset();
  }
  // Counts one command issued through `api`.
  void count(const char *api) { ++stats.commands[api]; }

  const ChipSpec &chip;
  Memory memory;
  Timeline timeline;
  RunStats stats;
  std::string stats_report;  // JSON of the last finished run
};

// The emulator opened by cmodel_open(), or nullptr.
Context *current_context();
void set_current_context(std::unique_ptr<Context> context);

}  // namespace cmodel
