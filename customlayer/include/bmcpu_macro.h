// bmcpu_macro.h: the checks and parameter helper AP ops (host-CPU custom
// ops) use, with the vendor's names (docs/custom-layer-build.md, "Host (AP)
// ops"). Written for this SDK; the names and their behaviour are the
// vendor's interface, so AP sources written for the vendor compile as they are.
#ifndef TPU_SDK_BMCPU_MACRO_H
#define TPU_SDK_BMCPU_MACRO_H

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <list>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

// Vendor AP sources write vector, map, string, cout, ... unqualified and rely
// on this header for it.
using std::cout;
using std::endl;
using std::list;
using std::make_pair;
using std::map;
using std::pair;
using std::set;
using std::string;
using std::vector;

// Prints where and what failed, then exit(-1), as the vendor's does. In this
// SDK's runtime the exit ends the host op with an error naming the layer, not
// the process (the AP library is linked with the SDK's exit wrappers).
#define CPU_ASSERT(cond)                                                                                  \
  do {                                                                                                    \
    if (!(cond)) {                                                                                        \
      std::fprintf(stderr, "%s:%s:%d: CPU_ASSERT(%s) failed\n", __FILE__, __func__, __LINE__, #cond); \
      std::exit(-1);                                                                                      \
    }                                                                                                     \
  } while (0)

#define BMCPU_ASSERT_OP_(a, b, op)                                                           \
  do {                                                                                       \
    if (!((a)op(b))) {                                                                       \
      std::cerr << #a " " #op " " #b " does not hold: " << (a) << " vs " << (b) << std::endl; \
      CPU_ASSERT((a)op(b));                                                                  \
    }                                                                                        \
  } while (0)
#define CPU_ASSERT_EQ(a, b) BMCPU_ASSERT_OP_(a, b, ==)
#define CPU_ASSERT_NE(a, b) BMCPU_ASSERT_OP_(a, b, !=)
#define CPU_ASSERT_GT(a, b) BMCPU_ASSERT_OP_(a, b, >)
#define CPU_ASSERT_GE(a, b) BMCPU_ASSERT_OP_(a, b, >=)
#define CPU_ASSERT_LT(a, b) BMCPU_ASSERT_OP_(a, b, <)
#define CPU_ASSERT_LE(a, b) BMCPU_ASSERT_OP_(a, b, <=)

// Declares a zeroed local `type`, points `ptr` at it and copies the raw
// parameter bytes into it (at most sizeof(type): a longer array is not
// copied past the local).
#define BMCPU_DECLARE_AND_UNPACK_PARAM(type, ptr, raw, size)                                            \
  type ptr##_unpacked_;                                                                                 \
  std::memset(static_cast<void *>(&ptr##_unpacked_), 0, sizeof(type));                                 \
  type *ptr = &ptr##_unpacked_;                                                                         \
  std::memcpy(static_cast<void *>(ptr), (raw),                                                          \
              static_cast<std::size_t>(size) < sizeof(type) ? static_cast<std::size_t>(size) : sizeof(type))

#endif  // TPU_SDK_BMCPU_MACRO_H
