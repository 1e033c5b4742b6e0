/*
 * cmodel_host.h: the host side of the emulator.
 *
 * A host program (a standalone kernel test, the op tester, the model
 * runtime) opens an emulated chip, puts data in its global memory, runs a
 * kernel on it and reads the results back. Functions returning int give 0
 * on success and -1 on failure; cmodel_last_error() then says what went
 * wrong and where. No call aborts the process.
 */
#ifndef TPU_SDK_CMODEL_HOST_H
#define TPU_SDK_CMODEL_HOST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens a fresh emulator of "bm1684x" or "bm1688" (replacing any open one). */
int cmodel_open(const char *chip);
/* Closes the emulator; its memories are gone. Safe to call when none is open. */
void cmodel_close(void);
/* Name of the open chip, or "" when none is open. */
const char *cmodel_chip(void);

/* A device address of `bytes` bytes of global memory (512-byte aligned), 0 on failure. */
uint64_t cmodel_global_alloc(uint64_t bytes);
/* The same with the address a multiple of `alignment` (a power of two; below 512 means 512). The buffer
 * still occupies only `bytes` rounded up to 512; the alignment may leave a gap before it. */
uint64_t cmodel_global_alloc_aligned(uint64_t bytes, uint64_t alignment);
/* Bytes of global memory of the open emulator (the chip's default or TPU_SDK_GLOBAL_MEM_SIZE /
 * CMODEL_GLOBAL_MEM_SIZE, read at cmodel_open), 0 when none is open. */
uint64_t cmodel_global_size(void);
/* Sets the size of global memory (a positive multiple of 512 bytes up to 32 GiB; 0 = back to
 * TPU_SDK_GLOBAL_MEM_SIZE / CMODEL_GLOBAL_MEM_SIZE or the chip's default) for the open emulator and
 * those opened later; it takes precedence over the environment. The open emulator's memory changes
 * only while it is unused: with a buffer allocated (or a host copy made outside the buffers) the call
 * fails, naming what is there, and nothing changes. The new memory is empty. */
int cmodel_set_global_mem_size(uint64_t bytes);
void cmodel_global_free(uint64_t addr);
/* Copies between host memory and system memory (an allocated global buffer or L2 SRAM).
 * A write marks the bytes as written (see "uninitialized_reads" below). A range of global
 * memory outside the buffers is refused, the message naming the nearest buffers below and
 * above, unless the option "unallocated_copies" is "allow" (as on a board: any range inside
 * global memory; kernels stay bound to the buffers). */
int cmodel_global_write(uint64_t addr, const void *src, uint64_t bytes);
int cmodel_global_read(void *dst, uint64_t addr, uint64_t bytes);
/* Device to device: `bytes` from src to dst (overlapping ranges copy as if the source was read
 * first), and `bytes` at addr filled with the `pattern_bytes` bytes at `pattern` repeated (the
 * last repetition cut short when bytes is not a multiple). Both ranges are checked as for
 * cmodel_global_write before anything is written; no host copy of the data is made. */
int cmodel_global_copy(uint64_t dst, uint64_t src, uint64_t bytes);
int cmodel_global_fill(uint64_t addr, const void *pattern, uint64_t pattern_bytes, uint64_t bytes);
/* Bytes of global memory the live buffers of the open emulator asked for (0 when none is open). */
uint64_t cmodel_global_allocated(void);

/* Which bytes were written. A freshly allocated global buffer is unwritten,
 * and local memory is unwritten when the emulator opens; commands, host
 * writes and host pointers (tpu_global_mem_addr, tpu_local_mem_addr...,
 * which mark their whole buffer or the rest of their NPU) write. A command
 * reading a byte still unwritten is an uninitialised read (option
 * "uninitialized_reads"). Local memory keeps its bytes and their state from
 * one run to the next, as a host that loads in one run and computes in the
 * next needs; a host that runs unrelated kernels (the op tester, between
 * its cases) poisons it in between:
 *   cmodel_local_poison(fill): all of local memory unwritten again; with
 *   fill != 0 also filled with 0xFF bytes (NaN in every float format).
 *   cmodel_global_poison(addr, bytes): system bytes filled with 0xFF and
 *   unwritten again (an output that must be written by the kernel).
 *   cmodel_local_read(dst, npu, offset, bytes): copies bytes of one NPU's
 *   local memory to the host without marking anything (a host pointer
 *   would mark the rest of the NPU written). It reads the current core:
 *   outside a kernel that is core 0 (also after a multi-core run, and after
 *   a single-core run launched on another core with cmodel_set_core, which
 *   uses core 0's memories); inside a kernel, the core running it.
 *   cmodel_local_read_core(dst, core, npu, offset, bytes): the same from
 *   the local memory of core `core` (0 .. cmodel_core_count() - 1), e.g.
 *   what each core of a cmodel_run_cores run left there; a core that never
 *   ran reads as freshly opened memory.
 * Each core of a multi-core run has its own local memory; cmodel_local_poison
 * poisons all of them. */
int cmodel_local_poison(int fill);
int cmodel_global_poison(uint64_t addr, uint64_t bytes);
int cmodel_local_read(void *dst, int npu, uint64_t offset, uint64_t bytes);
int cmodel_local_read_core(void *dst, int core, int npu, uint64_t offset, uint64_t bytes);

/* Runs kernel(arg) the way the firmware does: tpu_initialize, the kernel,
 * tpu_poll. 0 = ok; non-zero = the kernel hit an error and was stopped at
 * its first bad command (see cmodel_last_error). */
int cmodel_run(void (*kernel)(const void *), const void *arg);

/* Runs kernel(arg) on `core_num` cores at once (1 <= core_num <=
 * cmodel_core_count()), as a multi-core launch does: each core has its own
 * local memory, engines and timelines, global memory and L2 SRAM are
 * shared; tpu_core_index() tells the cores apart. The cores take turns at
 * every synchronisation point (tpu_sync_all*, tpu_core_barrier, engine
 * messages) in the documented schedule (option "core_schedule"); a
 * deadlock, a wait no core is left to satisfy, a message never consumed
 * and two cores touching the same global or L2 bytes without
 * synchronisation (one writing) fail the run with a "core synchronisation"
 * error naming the cores' call sites. A failure of one core stops the
 * others; the error is prefixed "core K of N: ". core_num 1 is cmodel_run
 * on core 0 of 1. Not inside a batch or a recording. */
int cmodel_run_cores(void (*kernel)(const void *), const void *arg, int core_num);

/* The same with a kernel and an argument per core: core k runs
 * kernels[k](args[k]) (a device runtime's launch of one entry per core). */
int cmodel_run_group(void (*const *kernels)(const void *), const void *const *args, int core_num);

/* The cores a multi-core run may use: the chip's (bm1688 2, bm1684x 1), or
 * what the option "cores" says to emulate; 0 when no emulator is open. */
int cmodel_core_count(void);

/* The option "cores" as it stands (0: the chip's own count; -1 when
 * TPU_SDK_CORES or TPU_SDK_CORE_SCHEDULE is malformed), so a host that
 * raises it for a part of an emulator's life (the op tester's multi-core
 * case on bm1684x) can put it back exactly with cmodel_set_option("cores",
 * ...). Closing the emulator puts it back by itself (cmodel_set_option). */
int cmodel_cores_option(void);

/* Runs the kernel registered under `name` (TPUKERNEL_FUNC_REGISTER or
 * TPUKERNEL_FUNC2_REGISTER in a kernel library that is linked in or loaded
 * with dlopen) as cmodel_run does: a FUNC_TYPE_1 kernel gets `args`, a
 * FUNC_TYPE_2 kernel a copy of the `size` bytes at `args` and `size`. What
 * the kernel returns is ignored, as on the device. An unknown name is an
 * error that lists the registered ones. */
int cmodel_run_registered(const char *name, const void *args, uint64_t size);

/* The names of the registered kernels, one per line (valid until the next
 * call). */
const char *cmodel_registered_kernels(void);

/* Looks up the kernel registered under `name` in the process-wide table:
 * 0 and its entry point and FUNC_TYPE (0 = FUNC_TYPE_1, 1 = FUNC_TYPE_2)
 * in *func / *type, or -1 (unknown name, or its library was unloaded). */
int cmodel_find_registered(const char *name, void **func, int *type);

/* Diverts the registrations the calling thread makes (the constructors of a
 * kernel library it dlopens) from the process-wide table to `sink`; NULL
 * restores the table. A device runtime uses it to give each loaded kernel
 * module its own table. */
typedef void (*cmodel_registration_sink)(void *context, const char *name, void *func, int type);
void cmodel_capture_registrations(cmodel_registration_sink sink, void *context);

/* The core the following cmodel_run calls execute on (tpu_core_index) and
 * the number of cores in their launch group (tpu_core_num); core_index <
 * cmodel_core_count(), 1 <= core_num <= cmodel_core_count(). Each such run
 * is one core alone, so a kernel that waits for another core (tpu_sync_all,
 * tpu_core_barrier) with core_num > 1 fails there: run every core of a
 * group together with cmodel_run_cores. cmodel_open starts with core 0 of
 * 1. */
int cmodel_set_core(int core_index, int core_num);

/* Marks the open emulator as held by `owner` (e.g. "bmlib"): cmodel_open
 * and cmodel_close are then refused with a message naming it, so a host
 * program cannot pull the emulator from under a device handle. NULL
 * releases it. */
int cmodel_set_owner(const char *owner);

/* While `on` is nonzero, the kernels that cmodel_run and cmodel_run_cores
 * execute are an op's local entry (api_<op>_local: one layer-group slice,
 * whose tensors the group placed in local memory): a PPL kernel they call
 * may create no automatic local tensor (make_tensor, or a tensor without
 * an address, a wrapper's temporaries too), which would be planned from
 * the start of local memory, over the group's tensors. Such a creation
 * stops the kernel with an error naming its .pl line. The runtime's loader
 * turns it on around every local entry it runs (Backend::run_local,
 * Firmware::run_local); cmodel_close turns it off. Not inside a kernel. */
int cmodel_set_local_entry(int on);

/* Runs fn(context) as code of a user library that is not a kernel (a
 * plugin hook; `what` names it, e.g. "plugin hook inference_absadd"). An
 * exit(), abort() or failed assert() in it (libraries built by the SDK's
 * CMake functions are linked with wrappers for them) and SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL or SIGABRT raised by it end the call instead of the
 * process: -1, and cmodel_last_error() names the hook, what happened and
 * where ("... in <what without its last word> code": "plugin hook", "host
 * op"). 0 when fn returned. An exit() from a library linked without the
 * wrappers cannot be stopped: the process ends with status 70 and a line
 * naming `what`, never with the status the code asked for. */
int cmodel_call_user_code(const char *what, void (*fn)(void *), void *context);

/* Emulator options; 0 on success:
 *   "hazards" = "error" (default) | "warning": what a GDMA/BDC race inside a
 *   parallel region does (a DMA and a BDC command of one region touching the
 *   same local bytes, one writing, whatever their estimated times). As
 *   warnings they go to stderr and into the run statistics instead of
 *   stopping the kernel.
 *   "uninitialized_reads" = "error" (default) | "warning" | "off": what a
 *   command reading bytes never written does (an "uninitialized read" error
 *   naming the operand, the first unwritten byte and the call site; as a
 *   warning it is reported once, the bytes then count as written). The
 *   environment variable TPU_SDK_UNINITIALIZED_READS sets it at start.
 *   "cores" = a count 1 .. 64 ("0": the chip's own): the cores
 *   cmodel_run_cores may use, to emulate kernels written for larger parts
 *   (environment variable TPU_SDK_CORES).
 *   "core_schedule" = "in_order" (default) | "random:SEED": which core runs
 *   next at a synchronisation point of a multi-core run: the next core in
 *   index order that can continue, or one of those picked at random with
 *   the seed, to shake out order dependence (TPU_SDK_CORE_SCHEDULE).
 *   "unallocated_copies" = "error" (default) | "allow" | "" (the
 *   environment's): whether cmodel_global_write/read may address global
 *   memory outside the allocated buffers ("device-like"). The environment
 *   variable TPU_SDK_UNALLOCATED_COPIES ("error" or "allow"; anything else
 *   fails cmodel_open) sets it at each cmodel_open unless the option is set.
 *   "run_timeout" = seconds ("600" by default, "0" = no limit): a kernel
 *   still running after this long is stopped and the run fails with a
 *   "time limit exceeded" error naming where it was. The environment
 *   variable TPU_SDK_RUN_TIMEOUT sets it at start.
 * "cores" and "core_schedule" belong to one emulator: set while one is
 * open they apply to it, set while none is they apply to the next one
 * opened, and cmodel_close (or a cmodel_open replacing an open emulator)
 * puts both back to the environment's values (TPU_SDK_CORES,
 * TPU_SDK_CORE_SCHEDULE; "0" and "in_order" without them), so a later
 * emulator never inherits them. The other options apply to the open
 * emulator and to those opened later; the environment variable
 * TPU_SDK_HAZARDS sets the option hazards at start. */
int cmodel_set_option(const char *name, const char *value);

/* ---- Recording and replay (static layers) --------------------------------
 *
 * A static layer is compiled once: its kernel runs on the emulator while a
 * recording is open, and every API call that issues or orders engine work
 * (GDMA, SDMA and BDC commands, table loads, parallel regions, polls,
 * barriers and messages) is appended to a command stream with its
 * arguments by value. At run time the stream is replayed on a fresh
 * emulator, without the op's library: the same commands run against the
 * same global addresses, so the memory contents and the run statistics
 * (cycles, bytes, command counts) are those of the recorded run.
 *
 * Not recorded: queries whose results already sit in the recorded
 * arguments (chip figures, strides and sizes, dtype predicates, scalar
 * casts, command-id nodes, logs). Refused: calls whose effect is not an
 * engine command (tpu_global_mem_addr, tpu_local_mem_addr, ... give the
 * kernel host pointers into device memory; tpu_kernel_memcpy/memset) or
 * whose result depends on the data (tpu_gdma_get_filter_num, ...). Calling
 * one while recording fails the run with "<fn> cannot be recorded for a
 * static layer (...); mark the layer dynamic", and so does any function the
 * recorder does not capture yet: a stream never silently misses work.
 *
 * Addresses: the stream holds absolute global (and L2 SRAM / local)
 * addresses. cmodel_global_alloc is deterministic (first fit from the start
 * of global memory): on a fresh emulator the same sequence of
 * cmodel_global_alloc/free calls gives the same addresses, and
 * cmodel_global_alloc_at allocates at an exact address. The stream lists
 * the global buffers that were live while it was recorded; cmodel_replay
 * refuses to start unless each lies inside a buffer allocated in the
 * replaying emulator (see cmodel_stream_info). L2 SRAM and local memory
 * are not part of the stream: a kernel must not rely on what an earlier
 * run left there. */

/* Starts recording: the kernels of the following cmodel_run calls are
 * recorded, each run after the first one that recorded commands separated by
 * a run boundary (replayed as: wait for every engine, tpu_initialize).
 * `origin` (may be NULL) names what is recorded, e.g. "layer conv1 (op
 * absadd)"; replay errors quote it. Needs an open emulator, whose chip the
 * stream is bound to; fails if a recording is already open. Recording is off
 * until this is called; when off it costs one predicted branch per API call.
 * Only kernels running under cmodel_run are recorded, not API calls a host
 * program makes directly. */
int cmodel_record_begin(const char *origin);
/* Ends the recording and returns the stream in *stream (malloc'ed: release
 * it with cmodel_record_free) and its size in *size. Fails (and returns no
 * stream) if a recorded run failed or called a function that cannot be
 * recorded; the recording is closed either way. */
int cmodel_record_end(void **stream, uint64_t *size);
void cmodel_record_free(void *stream);
/* 1 while a recording is open, else 0. */
int cmodel_recording(void);

/* Replays a stream as one run, with cmodel_run's error handling: 0 = ok,
 * non-zero = a command failed (the message names the command's position in
 * the stream and its origin) or the stream was rejected before anything ran:
 * bad magic, version, checksum, truncation, unknown function, argument bytes
 * that do not fit the function, another chip than the open emulator's, or a
 * recorded global buffer that is not allocated here. The statistics are in
 * cmodel_last_run_stats(); with several recorded runs they cover all of
 * them. Fails while a recording is open. */
int cmodel_replay(const void *stream, uint64_t size);
/* Checks a stream without running it and describes it as JSON:
 *   {"version": 1, "bytes": 1234, "chip": "bm1684x", "origin": "...",
 *    "commands": 12, "functions": {"tpu_bdc_fp_add": 4, ...},
 *    "buffers": [{"addr": 4294967296, "bytes": 4096}, ...]}
 * "buffers" are the global buffers cmodel_replay needs allocated. NULL if
 * the stream is invalid (see cmodel_last_error). The text stays valid until
 * the next call. */
const char *cmodel_stream_info(const void *stream, uint64_t size);

/* A stream replayed inside a running kernel, on the calling core (a
 * pipelined model run replays each stage's layers on the stage's core of
 * one multi-core run, docs/pipeline.md "Running"):
 *   cmodel_stream_open(stream, size): host only; checks the stream as
 *   cmodel_replay does (format, chip) and keeps a parsed copy; NULL on
 *   failure (cmodel_last_error). Release it with cmodel_stream_close.
 *   cmodel_stream_replay_here(handle): from a kernel; runs the stream's
 *   commands on the calling core, on its timelines and against its local
 *   memory, as if that core ran alone: the recorded barriers and messages
 *   wait for its own engines only (they were recorded on a lone core), while
 *   its global and L2 accesses take part in the run's cross-core race
 *   check. The recorded buffers must be allocated (checked first). A failing
 *   command stops the kernel like any tpu_* call. Returns 0; -1 (and an
 *   error) when called outside a kernel or with NULL.
 *   cmodel_core_time_us(): from a kernel, the calling core's time so far in
 *   its run (us); -1 outside a kernel. */
typedef struct cmodel_stream cmodel_stream;
cmodel_stream *cmodel_stream_open(const void *stream, uint64_t size);
void cmodel_stream_close(cmodel_stream *stream);
int cmodel_stream_replay_here(const cmodel_stream *stream);
double cmodel_core_time_us(void);

/* Allocates the global buffer [addr, addr + bytes) at exactly `addr`
 * (512-byte aligned, inside global memory, not overlapping a live buffer);
 * returns addr, or 0 on failure. Use it to re-create the buffers a stream
 * was recorded against. */
uint64_t cmodel_global_alloc_at(uint64_t addr, uint64_t bytes);

/* ---- Batches ---------------------------------------------------------------
 *
 * Joins the cmodel_run calls up to cmodel_batch_end into one run, so a host
 * can drive a pipeline from several kernels: the first run begins it (clears
 * the timelines, statistics and kernel state, as every run does), the
 * following ones continue it. Between them the engines keep running, a
 * parallel region opened by one run (tpu_parallel_start) stays open for the
 * next, and a recording gets no run boundary (the batch replays as one run).
 * cmodel_batch_end closes an open region, waits for every engine and leaves
 * the statistics of the whole batch in cmodel_last_run_stats. A failing run
 * inside a batch still fails; end the batch all the same. Host calls only;
 * batches do not nest; cmodel_replay is a run of its own. */
int cmodel_batch_begin(void);
int cmodel_batch_end(void);

/* ---- Local-memory watch (the slice check of layer groups) ----------------
 *
 * Arms a watch on the open emulator: until cmodel_unwatch_local, every local
 * operand a command reads must lie, row by row (each n and each channel row
 * of an NPU), inside one of the `read_count` byte ranges [begin, end) given
 * as pairs in `read_ranges`, and every local operand it writes inside one of
 * the write ranges. The ranges are offsets within each NPU and hold for
 * every NPU. The first command outside them fails (a memory fault) and the
 * offending row is kept for cmodel_local_watch_violation. Re-arming replaces
 * the ranges and forgets the violation. The watch applies to replayed
 * streams too. */
int cmodel_watch_local(const int64_t *read_ranges, int read_count, const int64_t *write_ranges, int write_count);
void cmodel_unwatch_local(void);
/* 1 and the offending bytes [*lo, *hi) of each NPU and *write (1: a write)
 * when an access broke the watch since it was armed; else 0. */
int cmodel_local_watch_violation(int64_t *lo, int64_t *hi, int *write);

/* ---- Profile trace -------------------------------------------------------
 *
 * While a trace is enabled, every engine command the runs book (cmodel_run
 * and cmodel_replay alike) is kept: its engine (GDMA, BDC, SDMA, HAU), start
 * and end, the API function that issued it and what it moved (bytes, for
 * the DMA engines) or computed (the elements of its output, BDC and HAU).
 * Each run's timeline starts at 0; the trace puts the traced runs one after
 * another on a single clock, so the runs of a model follow each other.
 * Hosts mark spans (a layer, a group) on that clock between runs. Off, it
 * costs one predicted branch per command. The trace belongs to the open
 * emulator: cmodel_open and cmodel_close drop it. */

/* 1: records from now on (a paused trace resumes, keeping what it has; the
 * first call starts an empty one at time 0). 0: pauses; the trace stays
 * readable, its clock stops, and the runs until the next resume are not in
 * it (a host leaves its helper runs out this way). */
int cmodel_trace_enable(int on);
/* Drops every command and span recorded so far; the clock restarts at 0. */
int cmodel_trace_clear(void);
/* Starts a span named `name` on the lane `lane` (e.g. "layers") at the
 * trace's clock; spans nest, cmodel_trace_span_end ends the innermost. No-op
 * (0) when no trace is kept; ending with none open fails. */
int cmodel_trace_span_begin(const char *lane, const char *name);
int cmodel_trace_span_end(void);
/* Moves the trace's clock `us` microseconds on (>= 0, finite) with no engine
 * busy: time the device spends waiting for the host, e.g. a layer that runs
 * on the host CPU between two device layers. Spans open now grow by it.
 * No-op (0) when no trace is kept. */
int cmodel_trace_advance(double us);
/* The trace as Chrome trace-event JSON (Perfetto, chrome://tracing):
 * {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}.
 * Lanes ("M" thread_name events, pid 1): one per span lane, then GDMA, BDC,
 * SDMA (and HAU when it ran). Commands and spans are complete ("X") events
 * with ts and dur in microseconds; a command's name is its API function,
 * its args {"bytes": n} or {"elements": n}. Spans still open end at the
 * clock. "otherData" holds the chip, "clock_us" (the end of the last traced
 * run) and per engine "busy_us" and "commands". NULL when no trace is kept
 * (see cmodel_last_error); the text stays valid until the next call. */
const char *cmodel_trace_json(void);

/* The message of the last failure; "" after a successful call. One line,
 * for programs to match: "tpu_bdc_max: <details> [illegal command] [TR-2];
 * called from op_tile (op.c:10)". */
const char *cmodel_last_error(void);
/* The same failure for a person to read: a short first line saying what
 * failed and where in the kernel ("tpu_bdc_max: illegal command [TR-2] at
 * customlayer/src/op.c:10 (op_tile)", the path relative to the working
 * directory or $CUSTOM_LAYER_PATH when inside them), then the details, one
 * clause an indented line. "" after a successful call; the text stays valid
 * until the next call on this thread. */
const char *cmodel_last_error_readable(void);
/* Does nothing; the emulator calls it each time it records a kernel's
 * error (a refused command, a failed TPUKERNEL_ASSERT, exit() or abort()),
 * while the kernel's frames are still on the stack: in gdb,
 * `break cmodel_error_breakpoint` stops there, and `bt` shows the kernel's
 * call (docs/debugging.md). */
void cmodel_error_breakpoint(void);
/* JSON statistics of the last run: chip, total_us, per-engine cycles,
 * busy_us and command counts, overlap_us, GDMA bytes per direction,
 * command counts per API function, warnings; gdma_bdc_concurrent_us (the
 * time GDMA and BDC were both busy), per DMA engine and direction the
 * bytes, busy_us and commands ("transfers"), bdc_bank_conflicts (BDC
 * commands two of whose operands share a local-memory bank). docs/cmodel.md
 * "Time" defines them. */
const char *cmodel_last_run_stats(void);
/* The statistics of every run since cmodel_open or the last
 * cmodel_total_stats_reset, added up (the same JSON: "total_us" is the sum
 * of the runs' times, the engines' figures, bytes, command counts and
 * warnings are summed). A host measuring work that takes several runs (a
 * dynamic layer group: loads, local kernels, stores) resets, runs, reads.
 * "{}" when no emulator is open; the text stays valid until the next call. */
const char *cmodel_total_stats(void);
int cmodel_total_stats_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* TPU_SDK_CMODEL_HOST_H */
