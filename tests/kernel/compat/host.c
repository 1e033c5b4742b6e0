/* The compatibility kit's host program: loads the vendor-style kernel
 * library with dlopen (its kernels register themselves), then on each chip
 * runs every kernel by name through cmodel_run_registered and checks the
 * results against references computed here. Exits non-zero and names every
 * failed check. Usage: host <path of libcompat_kernels.so> */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmodel_host.h"
#include "compat_kernels.h"
#include "fp16.h"
#include "tpu_kernel.h"

static int failures = 0;
#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fputc('\n', stderr);                                            \
      failures++;                                                     \
    }                                                                 \
  } while (0)

static const char *chip;

static int contains(const char *text, const char *part) { return strstr(text, part) != NULL; }

static uint64_t put(const void *data, uint64_t bytes) {
  const uint64_t addr = cmodel_global_alloc(bytes);
  CHECK(addr != 0, "%s", cmodel_last_error());
  if (data) CHECK(cmodel_global_write(addr, data, bytes) == 0, "%s", cmodel_last_error());
  return addr;
}

static void get(void *data, uint64_t addr, uint64_t bytes) {
  CHECK(cmodel_global_read(data, addr, bytes) == 0, "%s", cmodel_last_error());
}

static int run(const char *name, const void *args, uint64_t size) { return cmodel_run_registered(name, args, size); }

/* §5 items 3 and 5: every kernel of both files is registered by name. */
static void check_registry(void) {
  static const char *const names[] = {"add_one_kernel",  "fill_kernel",       "sized_kernel",
                                      "error_kernel",    "fp8_kernel",        "defaults_kernel",
                                      "table_math_kernel", "matmul_kernel", "print_kernel",
                                      "assert_macro_kernel", "hang_kernel"};
  const char *listed = cmodel_registered_kernels();
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    CHECK(contains(listed, names[i]), "%s is not registered; registered: %s", names[i], listed);
  CHECK(run("no_such_kernel", NULL, 0) != 0, "an unknown kernel ran");
  CHECK(contains(cmodel_last_error(), "no_such_kernel") && contains(cmodel_last_error(), "add_one_kernel"),
        "unknown-name error: %s", cmodel_last_error());
}

/* §5 item 1: an int-returning FUNC_TYPE_1 kernel; its return value is ignored. */
static void check_add_one(void) {
  enum { n = 100 };
  float in[n], out[n];
  for (int i = 0; i < n; i++) in[i] = (float)i * 0.37f - 11.0f;
  add_one_args_t a = {put(in, sizeof in), put(NULL, sizeof out), n};
  CHECK(run("add_one_kernel", &a, sizeof a) == 0, "%s", cmodel_last_error());
  get(out, a.out, sizeof out);
  for (int i = 0, shown = failures; i < n && failures < shown + 3; i++)
    CHECK(out[i] == in[i] + 1.0f, "out[%d] = %g, expected %g", i, out[i], in[i] + 1.0f);
}

/* §5 item 20: gdma_system_set writes exactly count elements. */
static void check_fill(data_type_t dtype, int dsize) {
  enum { guard = 16, count = 37 };
  unsigned char before[2 * guard + count * 4], after[sizeof before];
  memset(before, 0xab, sizeof before);
  const uint64_t base = put(before, sizeof before);
  fill_args_t a = {base + guard, 0x12345678u, count, (int)dtype};
  CHECK(run("fill_kernel", &a, sizeof a) == 0, "%s", cmodel_last_error());
  get(after, base, sizeof after);
  const uint32_t value = 0x12345678u;
  const int shown = failures;
  for (size_t i = 0; i < sizeof after && failures < shown + 3; i++) {
    const size_t rel = i - guard;
    const int inside = i >= guard && rel < (size_t)count * (size_t)dsize;
    const unsigned char expected = inside ? (unsigned char)(value >> (8 * (rel % (size_t)dsize))) : 0xab;
    CHECK(after[i] == expected, "dtype %d byte %zu = 0x%02x, expected 0x%02x", (int)dtype, i, after[i], expected);
  }
}

/* §5 item 4: a FUNC_TYPE_2 kernel gets a copy of the blob and its size. */
static void check_sized(void) {
  fill_args_t a = {put(NULL, 4), 7u, 0, 0};
  CHECK(run("sized_kernel", &a, sizeof a) == 0, "%s", cmodel_last_error());
  int32_t seen = 0;
  get(&seen, a.dst, 4);
  CHECK(seen == (int32_t)sizeof a, "the kernel saw size %d, expected %zu", seen, sizeof a);
  CHECK(a.value == 7u, "the kernel wrote into the caller's blob (value %u)", a.value);
}

/* §5 items 8 and 18: a kernel stopped by TPUKERNEL_ERR or by an FP8 call
 * never reaches the marker, and the host survives. */
static void check_stops(const char *kernel, const char *part1, const char *part2) {
  int32_t zero = 0, marker = 0;
  marker_args_t a = {put(&zero, 4)};
  CHECK(run(kernel, &a, sizeof a) != 0, "%s was not stopped", kernel);
  const char *error = cmodel_last_error();
  CHECK(contains(error, part1) && contains(error, part2), "%s: error \"%s\"", kernel, error);
  get(&marker, a.marker, 4);
  CHECK(marker == 0, "%s went on after the call that must stop it", kernel);
}

/* §5 item 19: single-chip answers. */
static void check_defaults(void) {
  defaults_args_t a = {put(NULL, 7 * 4)};
  CHECK(run("defaults_kernel", &a, sizeof a) == 0, "%s", cmodel_last_error());
  int32_t v[7];
  get(v, a.out, sizeof v);
  const int32_t expected[7] = {1, 0, 1, 0, 1, 0, 1};
  for (int i = 0; i < 7; i++) CHECK(v[i] == expected[i], "query %d gave %d, expected %d", i, v[i], expected[i]);
}

/* Values as the kernel's dtype holds them. */
static float to_dtype(float x, data_type_t dtype) {
  if (dtype == DT_FP16) return fp16_ieee_to_fp32_value(fp16_ieee_from_fp32_value(x));
  if (dtype == DT_BFP16) {
    uint32_t bits = fp32_to_bits(x);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return fp32_from_bits(bits & 0xffff0000u);
  }
  return x;
}

static void store_as(void *dst, const float *src, int n, data_type_t dtype) {
  for (int i = 0; i < n; i++) {
    if (dtype == DT_FP32) ((float *)dst)[i] = src[i];
    else if (dtype == DT_FP16) ((uint16_t *)dst)[i] = fp16_ieee_from_fp32_value(src[i]);
    else ((uint16_t *)dst)[i] = (uint16_t)(fp32_to_bits(src[i]) >> 16); /* src is already bf16-exact */
  }
}

static float load_as(const void *src, int i, data_type_t dtype) {
  if (dtype == DT_FP32) return ((const float *)src)[i];
  if (dtype == DT_FP16) return fp16_ieee_to_fp32_value(((const uint16_t *)src)[i]);
  return fp32_from_bits((uint32_t)((const uint16_t *)src)[i] << 16);
}

static double reference(int op, double x) {
  switch (op) {
    case 0: return exp(x);
    case 1: return log(x);
    case 2: return expm1(x);
    case 3: return erf(x);
    default: return erfc(x);
  }
}

/* §5 item 17: the coefficient-table pattern, per dtype, over several tiles. */
static void check_table_math(int op, data_type_t dtype) {
  static const char *const names[] = {"exp", "log", "expm1", "erf", "erfc"};
  static const float low[] = {-10.0f, 0.01f, -2.0f, -3.0f, -3.0f}, high[] = {10.0f, 100.0f, 2.0f, 3.0f, 3.0f};
  const int n = (3 * tpu_npu_num() + 5) * 32;
  const int dsize = dtype == DT_FP32 ? 4 : 2;
  float *x = (float *)malloc(sizeof(float) * (size_t)n);
  unsigned char *raw = (unsigned char *)malloc((size_t)n * 4);
  if (!x || !raw) exit(3);
  for (int i = 0; i < n; i++) x[i] = to_dtype(low[op] + (high[op] - low[op]) * ((float)i + 0.5f) / (float)n, dtype);
  store_as(raw, x, n, dtype);
  math_args_t a = {put(raw, (uint64_t)n * (uint64_t)dsize), put(NULL, (uint64_t)n * (uint64_t)dsize), n, (int)dtype, op};
  CHECK(run("table_math_kernel", &a, sizeof a) == 0, "%s %s: %s", names[op], dtype == DT_FP32 ? "fp32" : "16-bit",
        cmodel_last_error());
  get(raw, a.dst, (uint64_t)n * (uint64_t)dsize);
  /* Two units in the last place of the dtype, relative. */
  const double tolerance = dtype == DT_FP32 ? 2.4e-7 : dtype == DT_FP16 ? 2.0e-3 : 1.6e-2;
  const int shown = failures;
  for (int i = 0; i < n && failures < shown + 3; i++) {
    const double expected = reference(op, (double)x[i]), got = (double)load_as(raw, i, dtype);
    const double allowed = tolerance * fabs(expected) + (dtype == DT_FP32 ? 1e-37 : 1e-7);
    CHECK(fabs(got - expected) <= allowed, "%s dtype %d: f(%.9g) = %.9g, expected %.9g", names[op], (int)dtype,
          (double)x[i], got, expected);
  }
  free(x);
  free(raw);
}

/* §5 item 16: C's 9-argument fp_mm against a double-precision product. */
static void check_matmul(void) {
  enum { rows = 70, inner = 20, cols = 17 };
  static float left[rows * inner], right[inner * cols], out[rows * cols];
  for (int i = 0; i < rows * inner; i++) left[i] = (float)((i * 37) % 23 - 11) / 8.0f;
  for (int i = 0; i < inner * cols; i++) right[i] = (float)((i * 53) % 19 - 9) / 4.0f;
  mm_args_t a = {put(left, sizeof left), put(right, sizeof right), put(NULL, sizeof out), rows, inner, cols};
  CHECK(run("matmul_kernel", &a, sizeof a) == 0, "%s", cmodel_last_error());
  get(out, a.out, sizeof out);
  const int shown = failures;
  for (int r = 0; r < rows && failures < shown + 3; r++)
    for (int c = 0; c < cols && failures < shown + 3; c++) {
      double sum = 0;
      for (int k = 0; k < inner; k++) sum += (double)left[r * inner + k] * (double)right[k * cols + c];
      CHECK(fabs(out[r * cols + c] - sum) <= 1e-5 * fabs(sum) + 1e-6, "out[%d][%d] = %g, expected %g", r, c,
            (double)out[r * cols + c], sum);
    }
}

/* §5 item 16: 4bank_w_gather picks table[c][index[c][w]]. */
static void check_gather(void) {
  enum { c = 5, table_w = 9, n = 12 };
  static float table[c * table_w], out[c * n];
  static uint16_t index[c * n];
  for (int i = 0; i < c * table_w; i++) table[i] = (float)(i * 3 + 1);
  for (int i = 0; i < c * n; i++) index[i] = (uint16_t)((i * 7 + 2) % table_w);
  gather_args_t a = {put(table, sizeof table), put(index, sizeof index), put(NULL, sizeof out), c, table_w, n};
  CHECK(run("gather_kernel", &a, sizeof a) == 0, "%s", cmodel_last_error());
  get(out, a.out, sizeof out);
  for (int ch = 0; ch < c; ch++)
    for (int w = 0; w < n; w++)
      CHECK(out[ch * n + w] == table[ch * table_w + index[ch * n + w]], "gather out[%d][%d] = %g, expected %g", ch, w,
            (double)out[ch * n + w], (double)table[ch * table_w + index[ch * n + w]]);
}

static void check_print(void) {
  const float values[6] = {1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f};
  print_args_t a = {put(values, sizeof values)};
  CHECK(run("print_kernel", &a, sizeof a) == 0, "%s", cmodel_last_error());
}

static void check_chip(const char *name) {
  chip = name;
  CHECK(cmodel_open(chip) == 0, "%s", cmodel_last_error());
  check_registry();
  check_add_one();
  check_fill(DT_INT8, 1);
  check_fill(DT_FP16, 2);
  check_fill(DT_INT32, 4);
  check_sized();
  check_stops("error_kernel", "bad 1", "kernels_a.c");
  check_stops("fp8_kernel", "tpu_bdc_fp8_add_C", chip);
  check_stops("assert_macro_kernel", "8 is outside [0, 7]", "kernels_b.c");
  check_stops("hang_kernel", "hang(42)", "kernels_b.c");
  check_defaults();
  for (int op = 0; op < 5; op++) {
    check_table_math(op, DT_FP32);
    check_table_math(op, DT_FP16);
    check_table_math(op, DT_BFP16);
  }
  check_matmul();
  check_gather();
  check_print();
  cmodel_close();
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <kernel library>\n", argv[0]);
    return 2;
  }
  void *library = dlopen(argv[1], RTLD_NOW);
  if (!library) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  check_chip("bm1684x");
  check_chip("bm1688");
  fprintf(stderr, failures ? "%d check(s) failed\n" : "compatibility kernels: all checks passed\n", failures);
  return failures != 0;
}
