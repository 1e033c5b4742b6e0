// fast_exp.h: e^x for results that are rounded to fp32 (or narrower)
// afterwards, faster than std::exp and interchangeable with it there.
//
// The emulator's exp is "std::exp in double, rounded once into the dtype".
// std::exp on doubles is most of that command's time, yet 29 of its 53 bits
// are thrown away by the rounding. exp_before_float_rounding(x) computes
// e^x to about 2^-50 (a 32-entry table of 2^(j/32) and a degree-6
// polynomial) and checks that the result lies well inside one cell of the
// grid formed by the floats and the midpoints between them: every value in
// such a cell (std::exp's result among them, which is within an ulp of e^x)
// rounds to the same float in every rounding mode, and to the same float
// when rounded to odd (the first step of a narrowing to fp16 / bf16). When
// the check fails (about one argument in 2^18), or x is outside the range
// where exp is finite and normal in fp32, std::exp(x) itself is returned.
// So for any later rounding to at most 24 significant bits, the two agree
// bit for bit (tests/fast_exp_test.cc compares them over every float in a
// sampled range and around every cell boundary it can find).
#pragma once

#include <cstdint>

namespace cmodel::numeric {

double exp_before_float_rounding(double x);
// The same for n values, 4 at a time where the host has AVX2.
void exp_before_float_rounding_n(const float *x, double *y, int64_t n);

}  // namespace cmodel::numeric
