// record.h: recording a kernel's engine work as a command stream (the
// static layers of a model) and the argument codecs replay shares.
//
// While a recording is open (cmodel_record_begin) and a kernel runs under
// cmodel_run, every API call goes through one of two paths of api::run:
//
//   - a function that issues or orders engine work passes its arguments:
//
//       return api::run(__func__, TPU_CALLER(), TPU_ARGS(tpu_bdc_fp_add, dst_addr, ...), [&] { ... });
//
//     and the call is appended to the stream (function name + argument
//     bytes) before it executes;
//   - any other function is looked up in the recording policy
//     (record_api.cc, generated from api_functions.def): pure queries are
//     ignored, calls that cannot be captured faithfully (host pointers into
//     device memory, data-dependent results) fail the run, and a function the
//     policy says must be recorded but which passes no arguments fails too,
//     so a newly implemented function can never be dropped silently.
//
// When no recording is open, the only cost is one test of g_active in
// api::run, predicted not taken.
//
// Arguments are recorded by value: arithmetic and enum values as their
// bytes, the small plain structs of tpu_kernel.h (dim4, dim2, padding_t,
// variable_t, scalar_t, ...) as theirs, and `const T *` to such a struct as
// a presence byte followed by the struct (null stays null). Anything else
// (non-const pointers, pointers to scalars or void, which may be arrays of
// unknown length or outputs) does not compile in TPU_ARGS: such a function
// belongs to the "refused" policy.
#pragma once

#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tpu_kernel.h"

namespace cmodel {
class Context;
}

namespace cmodel::record {

// True only while a kernel runs under cmodel_run with a recording open.
// Hidden: one load from the library's own data, no GOT indirection.
extern bool g_active __attribute__((visibility("hidden")));

template <typename T, typename... U>
inline constexpr bool is_one_of = (std::is_same_v<T, U> || ...);

// Structs recorded as their bytes: only ints, floats and enums inside, no
// padding, every bit pattern a value (the API checks the values).
template <typename T>
inline constexpr bool plain_struct = is_one_of<T, dim4, dim5, dim2, padding_t, range_t, scalar_t, variable_t, var_context_t>;

// Codec<P>: how one parameter of declared type P is written, checked and
// read back.
template <typename P>
struct Codec {
  static_assert(std::is_arithmetic_v<P> || std::is_enum_v<P> || plain_struct<P>,
                "this parameter type cannot be recorded; give the function the refused policy in record_api.cc");
  static_assert(std::is_trivially_copyable_v<P>);

  static void write(std::vector<uint8_t> &out, const P &value) {
    const auto *bytes = reinterpret_cast<const uint8_t *>(&value);
    out.insert(out.end(), bytes, bytes + sizeof(P));
  }
  // Advances p over one value if [p, end) holds a valid one.
  static bool check(const uint8_t *&p, const uint8_t *end) {
    if (std::size_t(end - p) < sizeof(P)) return false;
    if constexpr (std::is_same_v<P, bool>)
      if (*p > 1) return false;
    p += sizeof(P);
    return true;
  }
  struct Holder {
    P value;
    P get() const { return value; }
  };
  // Only after check() accepted the bytes.
  static Holder read(const uint8_t *&p) {
    Holder h;
    std::memcpy(&h.value, p, sizeof(P));
    p += sizeof(P);
    return h;
  }
};

template <typename T>
struct Codec<const T *> {
  static_assert(plain_struct<T>,
                "only pointers to tpu_kernel.h's plain structs can be recorded (a pointer to a scalar or to void may "
                "be an array); give the function the refused policy in record_api.cc");

  static void write(std::vector<uint8_t> &out, const T *value) {
    out.push_back(value ? 1 : 0);
    if (value) Codec<T>::write(out, *value);
  }
  static bool check(const uint8_t *&p, const uint8_t *end) {
    if (p == end || *p > 1) return false;
    const bool present = *p++;
    return !present || Codec<T>::check(p, end);
  }
  struct Holder {
    bool present;
    T value;
    const T *get() const { return present ? &value : nullptr; }
  };
  static Holder read(const uint8_t *&p) {
    Holder h{};
    h.present = *p++;
    if (h.present) h.value = Codec<T>::read(p).value;
    return h;
  }
};

// One address per function type: ties what TPU_ARGS wrote to the
// declaration replay reads it with.
template <typename F>
inline constexpr char type_tag = 0;

// The arguments of one call of a function of type F, by value.
template <typename F>
struct Args;
template <typename R, typename... P>
struct Args<R (*)(P...)> {
  explicit Args(P... v) : values(v...) {}
  void write(std::vector<uint8_t> &out) const {
    std::apply([&](const P &...v) { (Codec<P>::write(out, v), ...); }, values);
  }
  std::tuple<P...> values;
};

// ---- the slow paths (record_api.cc) ----------------------------------------

// Starts a command of `api` in the stream and returns the buffer its
// argument bytes go to; throws if `api` must not be recorded with arguments
// of this type.
std::vector<uint8_t> &begin_command(const char *api, const void *tag);
void end_command();

template <typename F>
[[gnu::noinline, gnu::cold]] void append(const char *api, const Args<F> &args) {
  std::vector<uint8_t> &out = begin_command(api, &type_tag<F>);
  args.write(out);
  end_command();
}

// A call that passed no arguments: fine for queries, an error for calls the
// policy refuses or expects arguments from.
[[gnu::cold]] void note_call(const char *api);

// cmodel_run brackets each kernel run with these. run_finished() returns
// false, with the message in cmodel_last_error(), when the recording cannot
// represent the run. A run `continuing` a batch (cmodel_batch_begin) gets no
// run boundary: the batch is one run in the stream.
void run_started(Context &context, bool continuing = false);
bool run_finished(Context &context, bool kernel_finished);

// For tests: the recording policy of API function `name` ("recorded",
// "ignored" or "refused"), or nullptr for a name the API does not have; and
// the number of commands in the open recording so far.
const char *policy_name(const char *name);
uint64_t recorded_commands();

}  // namespace cmodel::record

// The arguments of the exported function `fn` (which must be the function
// being defined), in declaration order.
#define TPU_ARGS(fn, ...) ::cmodel::record::Args<decltype(&fn)>(__VA_ARGS__)
