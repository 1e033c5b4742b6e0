// source_site.h: the user source a front end issues commands for.
//
// A front end whose commands come from library code on behalf of user
// source (the PPL headers, docs/ppl.md) sets the user's file, line and
// function here while it issues them; resolve_call (call_site.h) then names
// that place instead of the caller's address. Kept apart from call_site.h,
// which most of the emulator includes.
#pragma once

#include <string>

namespace cmodel {

struct SourceSite {
  const char *file = nullptr;  // nullptr: no override
  int line = 0;
  std::string function;  // owned: a core of a multi-core run keeps its own while another runs
};
SourceSite &source_site();

}  // namespace cmodel
