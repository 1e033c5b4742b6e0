// ppl_test.h: the host utilities of PPL __TEST__ functions (spec §1.8, §3.3;
// docs/ppl.md "__TEST__ programs"): global buffers and random data for the
// kernels a test calls. Included by the generated <stem>_test.cpp of a
// __TEST__ program (cmake/ppl_interface.py --test); the work is done by
// libtpu_runtime (ppl_test_host.h).
//
// The vendor's read_npy / read_npz / read_bin / read_file are not
// implemented: calling one does not compile ("use of deleted function").
#pragma once

#include "ppl.h"
#include "ppl_test_host.h"

namespace ppl {
namespace test {

inline void shape_of(const dim4 *shape, int out[4]) {
  out[0] = shape->n;
  out[1] = shape->c;
  out[2] = shape->h;
  out[3] = shape->w;
}

// "file:line" of `where`, for the runtime's messages.
struct place {
  char text[512];
  explicit place(const rt::site &where) {
    const char *file = where.file_name();
    int i = 0;
    for (; file[i] != '\0' && i < 480; ++i) text[i] = file[i];
    unsigned line = static_cast<unsigned>(where.line());
    char digits[16];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + line % 10);
      line /= 10;
    } while (line != 0);
    text[i++] = ':';
    while (n > 0) text[i++] = digits[--n];
    text[i] = '\0';
  }
};

}  // namespace test

// A zero-filled continuous global buffer of `shape` (spec §3.3); its pointer
// is a global address, which kernels take as their pointer parameters.
template <typename T>
T *malloc(dim4 *shape, const rt::site &where = rt::site::current()) {
  int dims[4];
  test::shape_of(shape, dims);
  const uint64_t address = ppl_test_alloc(element<T>::dtype, get_data_size<T>(), dims, test::place(where).text);
  return reinterpret_cast<T *>(static_cast<uintptr_t>(address));
}

// Fills `shape` elements from p with uniform values in [lo, hi).
template <typename T0, typename T1>
void rand(T0 *p, dim4 *shape, T1 lo, T1 hi, const rt::site &where = rt::site::current()) {
  static_assert(!std::is_same_v<T1, fp16> && !std::is_same_v<T1, bf16>,
                "PPL: rand's bounds may not be fp16 or bf16 (spec §3.3)");
  int dims[4];
  test::shape_of(shape, dims);
  ppl_test_fill_random(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)), element<T0>::dtype, dims,
                       static_cast<double>(lo), static_cast<double>(hi), test::place(where).text);
}

// A new buffer of `shape` filled as above.
template <typename T0, typename T1>
T0 *rand(dim4 *shape, T1 lo, T1 hi, const rt::site &where = rt::site::current()) {
  T0 *p = malloc<T0>(shape, where);
  if (p != nullptr) rand(p, shape, lo, hi, where);
  return p;
}

template <typename T>
T *rand(dim4 *shape, const rt::site &where = rt::site::current()) {
  return malloc<T>(shape, where);
}

template <typename... A> void read_npy(A...) = delete;
template <typename... A> void read_npz(A...) = delete;
template <typename... A> void read_bin(A...) = delete;
template <typename... A> void read_file(A...) = delete;

}  // namespace ppl
