// gdma_limits_test.cc: GDMA commands at the limits of the rules, against the
// reference model of tests/support/gdma_model.h, on both chips: tensors
// ending on the last byte of an NPU / L2 SRAM / a global buffer, w strides of
// exactly 128 bytes, dims of exactly 65535, long flat copies; and oversized
// commands, which must fail with an error instead of stopping the process.
#include <string>

#include "support/gdma_model.h"

using namespace gdma_model;

namespace {

class GdmaLimits : public GdmaFixture {};

// Tensors that end on the last byte of an NPU, of L2 SRAM and of a global
// buffer, w strides of exactly 128 bytes, dims of exactly 65535 and a long
// flat copy: all legal, so they must run and move the right bytes.
class Edge {
 public:
  explicit Edge(Harness &h) : h_(h) {}

  // A tensor placed so that its last byte is the last byte of `area`.
  Tensor at_end(const Area &area, int start_npu, const dim4 &shape, const dim4 &stride, int sz, bool pass_null) {
    Tensor t;
    t.local = area.local;
    t.shape = shape;
    t.stride = stride;
    t.pass_null = pass_null;
    const uint64_t pos = area.hi - uint64_t(h_.footprint(t, start_npu, sz));
    t.addr = area.local ? uint64_t(start_npu) * h_.chip.lmem + pos : pos;
    return t;
  }

  void move(Op op, const Tensor &dst, const Tensor &src, data_type_t dt) {
    const int sz = dtype_size(dt);
    h_.randomize(src, sz);
    SCOPED_TRACE(std::string(op_name(op)) + " dtype " + dtype_label(dt) + "\n  dst " + h_.where(dst) + "\n  src " +
                 h_.where(src));
    Cmd cmd = make_cmd(op, dst, src, dst.shape, dt);
    cmd.count = unsigned(count(dst.shape));
    ASSERT_TRUE(h_.run(cmd));
    ref_copy(h_, dst, src, sz);
    h_.verify();
  }

 private:
  Harness &h_;
};

TEST_P(GdmaLimits, MemoryEdgesAndLimits) {
  test::Seeded seeded;
  h.begin(seeded);
  Edge e(h);
  const int npu = h.chip.npu;
  {  // end of NPU npu-1 (channel 0) and of NPU 0 (channel 1, row 1) <- end of L2 SRAM
    const dim4 shape{2, 2, 3, 7};
    const dim4 ls = aligned_stride(h.chip, npu - 1, shape, 4);
    const Tensor dst = e.at_end(h.local_area(), npu - 1, shape, ls, 4, true);
    const Tensor src = e.at_end(h.system_area(h.l2), 0, shape, continuous_stride(shape), 4, true);
    e.move(Op::cpy_S2L, dst, src, DT_FP32);
  }
  {  // end of the global buffer <- end of NPU 0..npu-1
    const dim4 shape{1, npu, 5, 5};
    const Tensor src = e.at_end(h.local_area(), 0, shape, aligned_stride(h.chip, 0, shape, 2), 2, true);
    const Tensor dst = e.at_end(h.system_area(h.global), 0, shape, continuous_stride(shape), 2, true);
    e.move(Op::cpy_L2S, dst, src, DT_BFP16);
  }
  for (int sz : {1, 2, 4}) {  // w strides of exactly 128 bytes on both ends
    const data_type_t dt = sz == 1 ? DT_INT8 : sz == 2 ? DT_INT16 : DT_INT32;
    const int ws = 128 / sz;
    const dim4 shape{2, 3, 2, 5};
    const dim4 stride{6 * 5 * ws, 2 * 5 * ws, 5 * ws, ws};
    Tensor dst, src;
    ASSERT_TRUE(h.place(dst, shape, sz, h.system_area(h.global, 0, 2), Layout::given, &stride));
    ASSERT_TRUE(h.place(src, shape, sz, h.system_area(h.global, 1, 2), Layout::given, &stride));
    e.move(Op::cpy_S2S, dst, src, dt);
    const dim4 lstride{2 * 5 * ws, 5 * ws, 5 * ws * 2, ws};  // c innermost after w
    ASSERT_TRUE(h.place(dst, shape, sz, h.local_area(0, 2), Layout::given, &stride));
    ASSERT_TRUE(h.place(src, shape, sz, h.local_area(1, 2), Layout::given, &lstride));
    e.move(Op::cpy_L2L, dst, src, dt);
  }
  for (const dim4 &shape : {dim4{1, 1, 1, 65535}, dim4{65535, 1, 1, 1}, dim4{1, 1, 65535, 1}}) {  // shape limit
    Tensor dst, src;
    ASSERT_TRUE(h.place(dst, shape, 1, h.system_area(h.l2), Layout::standard));
    ASSERT_TRUE(h.place(src, shape, 1, h.system_area(h.global), Layout::standard));
    e.move(Op::cpy_S2S, dst, src, DT_UINT8);
    const dim4 dense = continuous_stride(shape);  // one channel: dense in its NPU
    ASSERT_TRUE(h.place(dst, shape, 1, h.local_area(0, 2), Layout::given, &dense));
    ASSERT_TRUE(h.place(src, shape, 1, h.local_area(1, 2), Layout::given, &dense));
    e.move(Op::cpy_L2L, dst, src, DT_UINT8);
  }
  {  // C = 65535 channels spread over every NPU
    const dim4 shape{1, 65535, 1, 1};
    Tensor dst, src;
    ASSERT_TRUE(h.place(dst, shape, 1, h.local_area(), Layout::standard));
    ASSERT_TRUE(h.place(src, shape, 1, h.system_area(h.l2), Layout::standard));
    e.move(Op::cpy_S2L, dst, src, DT_INT8);
  }
  {  // a flat copy longer than one GDMA dim, ending at the end of L2 SRAM
    const int n = 300000;
    const dim4 shape{1, 1, 1, n};
    const Tensor dst = e.at_end(h.system_area(h.l2), 0, shape, continuous_stride(shape), 2, true);
    Tensor src;
    ASSERT_TRUE(h.place(src, shape, 2, h.system_area(h.global), Layout::standard));
    e.move(Op::system_cpy, dst, src, DT_FP16);
  }
}

// A tensor of more than 2^31 elements with default strides fits nowhere, so
// the command is illegal: the run must stop with a memory fault (or an
// illegal-command error if the default stride cannot be represented) that
// describes the tensor's real extent. (The default strides must not be computed in int:
// 65535 * 65535 overflows, which is undefined behaviour - the sanitizer
// build aborts the whole process - and otherwise wraps to a bogus range.)
struct Oversized {
  uint64_t buffer;
  int which;
};

void oversized_kernel(const void *arg) {
  const auto &a = *static_cast<const Oversized *>(arg);
  if (a.which == 0) {
    const dim4 s{1, 1, 65535, 65535};  // aligned local stride: c = ALIGN(h * w, eu)
    tpu_gdma_cpy_S2L(0, a.buffer, &s, nullptr, nullptr, DT_INT8);
  } else {
    const dim4 s{2, 65535, 65535, 1};  // continuous stride: n = c * h * w
    tpu_gdma_cpy_S2S(a.buffer, a.buffer, &s, nullptr, nullptr, DT_INT8);
  }
}

TEST_P(GdmaLimits, OversizedDefaultStridesFailCleanly) {
  for (int which : {0, 1}) {
    const Oversized arg{h.global.addr, which};
    SCOPED_TRACE(which == 0 ? "cpy_S2L [1, 1, 65535, 65535] NULL strides" : "cpy_S2S [2, 65535, 65535, 1] NULL strides");
    EXPECT_NE(cmodel_run(oversized_kernel, &arg), 0);
    const std::string error = cmodel_last_error();
    EXPECT_TRUE(error.find("[memory fault]") != std::string::npos ||
                error.find("[illegal command]") != std::string::npos)
        << error;
    // The S2S tensor starts inside an allocated global buffer and runs past
    // its end; a wrapped stride makes it reach below its base instead.
    EXPECT_EQ(error.find("neither global memory"), std::string::npos) << error;
  }
}

GDMA_INSTANTIATE_CHIPS(GdmaLimits);

}  // namespace
