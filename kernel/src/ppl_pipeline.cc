// ppl_pipeline.cc: how PPL operations reach the engines. In the plan pass
// an operation records its operands and its place in a pipelined loop
// (iteration and stage); in the execution pass it is issued at once or,
// inside a pipelined loop, queued and issued in the loop's software-
// pipelined schedule (docs/ppl.md, "Pipelining"). Also the synchronisation
// and message calls, which end a loop's overlap.
#include <algorithm>

#include <fmt/format.h>

#include "ppl_state.h"
#include "tpu_kernel.h"

namespace ppl::rt {
namespace {

std::tuple<std::string, int, int> key_of(const site &where) {
  return {where.file_name(), static_cast<int>(where.line()), static_cast<int>(where.column())};
}

// Slots read or written by one TIU operation together (bank placement).
void record_partners(state &st, std::initializer_list<operand_use> operands) {
  std::vector<int> slots;
  for (const auto &[d, kind] : operands)
    if (d->mode == LOCAL && d->instance >= 0) slots.push_back(st.instances[d->instance].slot);
  for (size_t i = 0; i < slots.size(); ++i)
    for (size_t j = i + 1; j < slots.size(); ++j)
      if (slots[i] != slots[j]) st.partners.insert({std::min(slots[i], slots[j]), std::max(slots[i], slots[j])});
}

// The bytes an operand touches: local, as per-lane offsets (its whole
// buffer, in every lane: a conservative bound); global, from its lowest to
// its highest element. Local operands count as written (the bound again),
// a global one only as the operation's output.
std::tuple<bool, uint64_t, uint64_t, bool> footprint_of(const state &st, const desc &d, bool output) {
  if (d.mode == LOCAL) {
    if (d.instance < 0) return {true, 0, st.lane_bytes, true};  // an explicit address: anywhere
    const instance &in = st.instances[d.instance];
    const slot &s = st.slots[in.slot];
    const uint64_t begin = s.address + uint64_t(in.buffer) * s.bytes;
    return {true, begin, begin + s.bytes, true};
  }
  int64_t low = 0, high = 0;
  const int extents[4] = {d.shape.n, d.shape.c, d.shape.h, d.shape.w};
  const int strides[4] = {d.stride.n, d.stride.c, d.stride.h, d.stride.w};
  for (int i = 0; i < 4; ++i) {
    const int64_t delta = int64_t(extents[i] - 1) * strides[i] * d.element_size;
    (delta < 0 ? low : high) += delta;
  }
  return {false, uint64_t(int64_t(d.address) + low), uint64_t(int64_t(d.address) + high + d.element_size), output};
}

bool conflict(const queued_operation &a, const queued_operation &b) {
  for (const auto &[local_a, begin_a, end_a, written_a] : a.footprint)
    for (const auto &[local_b, begin_b, end_b, written_b] : b.footprint)
      if (local_a == local_b && (written_a || written_b) && begin_a < end_b && begin_b < end_a) return true;
  return false;
}

void issue_one(const queued_operation &q) {
  call_site_scope scope(q.where);
  q.issue();
}

// True when issuing the queue by `step` keeps the order of every two
// operations that touch common bytes (one writing), and puts no such two
// of different engines in one step (a parallel region runs them together).
bool schedule_keeps_order(const std::vector<queued_operation> &queue, const std::vector<int> &step, int stages) {
  for (size_t j = 0; j < queue.size(); ++j)
    for (size_t i = j; i-- > 0;) {
      // Iterations further apart than the stages cannot swap.
      if (queue[i].place.iteration + stages + 1 < queue[j].place.iteration) break;
      if (!conflict(queue[i], queue[j])) continue;
      if (step[i] > step[j] || (step[i] == step[j] && queue[i].kind != queue[j].kind)) return false;
    }
  return true;
}

}  // namespace

pipeline_place place_in_loop(state &st, const site &where, engine kind) {
  loop_tracker &loop = st.loop;
  if (!loop.active) return {};
  const auto key = key_of(where);
  // After the first iteration, a place the body never had is after the loop.
  if (loop.iteration > 0 && !loop.body.count(key)) {
    end_loop(st);
    return {};
  }
  loop.body.insert(key);
  if (kind != loop.last_engine) {
    ++loop.stage;
    loop.last_engine = kind;
  }
  return {loop.id, loop.iteration, loop.stage};
}

// The tensors made inside a pipelined loop stay alive for the whole loop:
// its iterations' stages interleave, so none may share bytes with another.
void end_loop(state &st) {
  loop_tracker &loop = st.loop;
  if (!loop.active) return;
  const uint64_t first = loop.first_operation, last = std::max(first, st.operations);
  for (int index : loop.slots) {
    auto &ranges = st.slots[index].ranges;
    uint64_t end = last;
    while (!ranges.empty() && ranges.back().first >= first) {
      end = std::max(end, ranges.back().second);
      ranges.pop_back();
    }
    ranges.emplace_back(first, end);
  }
  loop = loop_tracker{};
}

void enable_pipeline(const site &where) {
  state &st = current();
  st.pipeline = true;
  if (st.mode != pass::plan) return;
  loop_tracker &loop = st.loop;
  if (loop.active && loop.site == key_of(where)) {
    ++loop.iteration;
    loop.stage = -1;
    loop.last_engine = 0;
    return;
  }
  end_loop(st);
  loop.active = true;
  loop.id = st.loops++;
  loop.site = key_of(where);
  loop.first_operation = st.operations;
}

void submit(const site &where, std::initializer_list<operand_use> operands, std::function<void()> issue) {
  state &st = current();
  const engine kind = operands.size() ? operands.begin()->kind : tiu_engine;
  // No operand without a shape gets here: the operations that can give
  // their output one did (written); the rest are refused.
  const char *role = "dst";
  for (const auto &[d, k] : operands) {
    check_known("a PPL operation", role, *d, where);
    role = "an input";
  }
  if (st.mode == pass::plan) {
    for (const auto &[d, k] : operands) use(*d, k);
    if (kind == tiu_engine) record_partners(st, operands);
    st.places.push_back(place_in_loop(st, where, kind));
    ++st.operations;
    return;
  }
  if (st.mode != pass::execute) return;
  const uint64_t number = st.operations++;
  const pipeline_place place = number < st.places.size() ? st.places[number] : pipeline_place{};
  if (place.loop < 0 || (!st.queue.empty() && st.queue.front().place.loop != place.loop)) flush_pipeline();
  if (place.loop < 0) {
    st.issuing = std::move(issue);  // owned by the state (see ppl_state.h)
    call_site_scope scope(where);
    st.issuing();
    return;
  }
  queued_operation q{place, kind, where, {}, std::move(issue)};
  bool output = true;
  for (const auto &[d, k] : operands) {
    q.footprint.push_back(footprint_of(st, *d, output));
    output = false;
  }
  st.queue.push_back(std::move(q));
}

// Step of an operation: its iteration (from the loop's first) plus its
// stage, so step s runs stage 0 of iteration s beside stage 1 of s - 1 and
// stage 2 of s - 2. Each step holding DMA and TIU operations is a parallel
// region (tpu_parallel_start/end): its engines overlap in the cost
// estimate. A loop whose schedule would reorder dependent operations, or
// with one iteration, is issued in program order. Everything here lives in
// the state, not in this frame: a failing command jumps out of it.
void flush_pipeline() {
  state &st = current();
  if (st.mode != pass::execute || st.queue.empty()) return;
  const std::vector<queued_operation> &queue = st.queue;
  const int first = queue.front().place.iteration;
  int stages = 0, iterations = 0;
  st.step.assign(queue.size(), 0);
  for (size_t i = 0; i < queue.size(); ++i) {
    stages = std::max(stages, queue[i].place.stage + 1);
    iterations = std::max(iterations, queue[i].place.iteration - first + 1);
    st.step[i] = queue[i].place.iteration - first + queue[i].place.stage;
  }
  const std::vector<int> &step = st.step;
  std::vector<size_t> &order = st.order;
  order.resize(queue.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const bool pipelined = iterations > 1 && stages > 1 && schedule_keeps_order(queue, step, stages);
  if (pipelined)
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return step[a] < step[b]; });
  else
    st.step.assign(queue.size(), 0);  // program order: one step, no parallel region
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin;
    unsigned engines = 0;
    while (end < order.size() && step[order[end]] == step[order[begin]]) engines |= queue[order[end++]].kind;
    const bool overlap = pipelined && engines == (dma_engine | tiu_engine);
    if (overlap) tpu_parallel_start();
    for (size_t i = begin; i < end; ++i) issue_one(queue[order[i]]);
    if (overlap) tpu_parallel_end();
    begin = end;
  }
  st.queue.clear();
}

void sync(bool all_cores, const site &where) {
  state &st = current();
  if (st.mode == pass::plan) end_loop(st);
  if (st.mode != pass::execute) return;
  flush_pipeline();
  call_site_scope scope(where);
  if (all_cores)
    tpu_sync_all();
  else
    tpu_sync_core();
}

namespace {

// An engine message: a send for `count` waits, or a wait for `count` sends.
void message(message_engine engine, bool send, int id, int count, const site &where) {
  state &st = current();
  if (st.mode == pass::plan) end_loop(st);
  if (st.mode != pass::execute) return;
  flush_pipeline();
  call_site_scope scope(where);
  if (engine == message_engine::tiu)
    send ? tpu_bdc_send_msg(id, count) : tpu_bdc_wait_msg(id, count);
  else
    send ? tpu_gdma_send_msg(id, count) : tpu_gdma_wait_msg(id, count);
}

}  // namespace

void send_message(message_engine engine, int id, int count, const site &where) {
  message(engine, true, id, count, where);
}

void wait_message(message_engine engine, int id, int count, const site &where) {
  message(engine, false, id, count, where);
}

}  // namespace ppl::rt
