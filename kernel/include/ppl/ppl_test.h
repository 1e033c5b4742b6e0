// ppl_test.h: the host utilities of PPL __TEST__ functions (spec §1.8, §3.3;
// docs/ppl.md "__TEST__ programs"): global buffers, random data (also
// through strides) and data read from .npy / .npz / raw files for the
// kernels a test or an __AUTOTUNE__ function calls. Included by the generated <stem>_test.cpp of a
// __TEST__ program (cmake/ppl_interface.py --test); the work is done by
// libtpu_runtime (ppl_test_host.h).
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

// The stride / offset forms: the elements (offset + i) . stride of p for
// every position i of `shape`; the others keep their values.
template <typename T0, typename T1>
void rand(T0 *p, dim4 *shape, dim4 *stride, dim4 *offset, T1 lo, T1 hi,
          const rt::site &where = rt::site::current()) {
  static_assert(!std::is_same_v<T1, fp16> && !std::is_same_v<T1, bf16>,
                "PPL: rand's bounds may not be fp16 or bf16 (spec §3.3)");
  int dims[4], strides[4], offsets[4];
  test::shape_of(shape, dims);
  test::shape_of(stride, strides);
  test::shape_of(offset, offsets);
  ppl_test_fill_random_strided(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)), element<T0>::dtype, dims,
                               strides, offsets, static_cast<double>(lo), static_cast<double>(hi),
                               test::place(where).text);
}
template <typename T0, typename T1>
void rand(T0 *p, dim4 *shape, dim4 *stride, T1 lo, T1 hi, const rt::site &where = rt::site::current()) {
  dim4 zero = {0, 0, 0, 0};
  rand(p, shape, stride, &zero, lo, hi, where);
}
// A new zero-filled buffer just long enough for those elements, filled as
// above; it is dumped as one row [1, 1, 1, length].
template <typename T0, typename T1>
T0 *rand(dim4 *shape, dim4 *stride, dim4 *offset, T1 lo, T1 hi, const rt::site &where = rt::site::current()) {
  long long last = 0;
  const int s[4] = {shape->n, shape->c, shape->h, shape->w}, st[4] = {stride->n, stride->c, stride->h, stride->w},
            o[4] = {offset->n, offset->c, offset->h, offset->w};
  for (int i = 0; i < 4; ++i) last += static_cast<long long>(o[i] + s[i] - 1) * st[i];
  dim4 row = {1, 1, 1, last >= 0 && last < 0x7fffffff ? static_cast<int>(last + 1) : -1};
  T0 *p = malloc<T0>(&row, where);
  if (p != nullptr) rand(p, shape, stride, offset, lo, hi, where);
  return p;
}
template <typename T0, typename T1>
T0 *rand(dim4 *shape, dim4 *stride, T1 lo, T1 hi, const rt::site &where = rt::site::current()) {
  dim4 zero = {0, 0, 0, 0};
  return rand<T0>(shape, stride, &zero, lo, hi, where);
}

// Files into a buffer of malloc / rand (from dst to its end), converted to
// its element type: read_npy an .npy file, read_npz an array of an .npz
// (no name: its only array), read_bin<FileT> raw FileT elements; read_file
// the common form (mode 0 bin, 1 npy, 2 npz). A failure fails the test.
template <typename T>
void read_file(T *dst, const char *path, int mode, data_type_t file_dtype, const char *name,
               const rt::site &where = rt::site::current()) {
  ppl_test_read_file(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(dst)), element<T>::dtype, path, mode,
                     file_dtype, name, test::place(where).text);
}
template <typename T>
void read_npy(T *dst, const char *path, const rt::site &where = rt::site::current()) {
  read_file(dst, path, 1, element<T>::dtype, nullptr, where);
}
template <typename T>
void read_npz(T *dst, const char *path, const char *name = nullptr, const rt::site &where = rt::site::current()) {
  read_file(dst, path, 2, element<T>::dtype, name, where);
}
template <typename FileT, typename T>
void read_bin(T *dst, const char *path, const rt::site &where = rt::site::current()) {
  read_file(dst, path, 0, element<FileT>::dtype, nullptr, where);
}

}  // namespace ppl
