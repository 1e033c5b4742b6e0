// layout_api.cc: tpu-kernel family C utilities: local-memory layout
// (strides, sizes, NPU and bank of an address), dtype facts and bank
// ranges. Scalar casts live in scalar_cast.cc.
#include "api_guard.h"
#include "cmodel/context.h"
#include "cmodel/dtype.h"
#include "cmodel/tensor.h"
#include "tpu_kernel.h"

using namespace cmodel;

namespace {

const ChipSpec &chip() { return api::context().chip; }

void check_dtype(data_type_t dtype) {
  if (!dtype_is_known(dtype)) fail(ErrorKind::illegal_command, "dtype {} is not a data type", int(dtype));
}

}  // namespace

extern "C" {

int tpu_npu_index(local_addr_t addr) {
  return api::run(__func__, TPU_CALLER(), [&] { return int(addr / chip().local_mem_bytes); });
}

int tpu_bank_index(local_addr_t addr) {
  return api::run(__func__, TPU_CALLER(), [&] { return int(addr % chip().local_mem_bytes / chip().bank_bytes()); });
}

int tpu_channle_num_per_npu(int start_idx, int num_channels) {
  return api::run(__func__, TPU_CALLER(), [&] { return DIV_UP(start_idx + num_channels, chip().npu_num); });
}

u64 tpu_aligned_feature_size(int h, int w, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(), [&] {
    check_dtype(dtype);
    const u64 elements = u64(int64_t(h) * w);
    return ALIGN(elements, u64(eu_num(chip(), dtype))) * u64(dtype_bytes(dtype));
  });
}

void tpu_aligned_stride(dim4 *stride, int start_idx, const dim4 *shape, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(), [&] {
    check_dtype(dtype);
    api::deref("stride", stride) = aligned_stride(chip(), start_idx, api::deref("shape", shape), dtype);
  });
}

void tpu_compact_stride(dim4 *stride, int start_idx, const dim4 *shape) {
  return api::run(__func__, TPU_CALLER(), [&] {
    api::deref("stride", stride) = compact_stride(chip(), start_idx, api::deref("shape", shape));
  });
}

void tpu_line_aligned_stride(dim4 *stride, int start_idx, const dim4 *shape, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(), [&] {
    check_dtype(dtype);
    api::deref("stride", stride) = line_aligned_stride(chip(), start_idx, api::deref("shape", shape), dtype);
  });
}

void tpu_continuous_stride(dim4 *stride, const dim4 *shape) {
  return api::run(__func__, TPU_CALLER(),
                  [&] { api::deref("stride", stride) = continuous_stride(api::deref("shape", shape)); });
}

int tpu_get_local_cstride(int h, int w, bool align, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(), [&] {
    check_dtype(dtype);
    return align ? ALIGN(h * w, eu_num(chip(), dtype)) : h * w;
  });
}

int tpu_get_local_nstride(int c_stride, int c, int start_idx) {
  return api::run(__func__, TPU_CALLER(), [&] { return c_stride * DIV_UP(start_idx + c, chip().npu_num); });
}

int tpu_get_local_size(const dim4 *shape, data_type_t dtype, int start_idx, bool align) {
  return api::run(__func__, TPU_CALLER(), [&] {
    check_dtype(dtype);
    const dim4 &s = api::deref("shape", shape);
    const dim4 stride = align ? aligned_stride(chip(), start_idx, s, dtype) : compact_stride(chip(), start_idx, s);
    return s.n * stride.n * dtype_bytes(dtype);
  });
}

// ---- dtype facts (bit 0: signed or float; bits 1..4: precision) ------------
bool tpu_is_data_type_signed(data_type_t dtype) { return dtype_is_signed(dtype); }
bool tpu_is_data_type_fp(data_type_t dtype) { return dtype_is_float(dtype); }
bool tpu_is_data_type_int(data_type_t dtype) { return dtype_is_int(dtype); }
bool tpu_is_data_type_int4(data_type_t dtype) { return dtype == DT_INT4 || dtype == DT_UINT4; }
bool tpu_is_data_type_int8(data_type_t dtype) { return dtype == DT_INT8 || dtype == DT_UINT8; }
bool tpu_is_data_type_int16(data_type_t dtype) { return dtype == DT_INT16 || dtype == DT_UINT16; }
bool tpu_is_data_type_int32(data_type_t dtype) { return dtype == DT_INT32 || dtype == DT_UINT32; }
bool tpu_is_data_type_signed_int(data_type_t dtype) { return dtype_is_int(dtype) && dtype_is_signed(dtype); }
bool tpu_is_data_type_unsigned_int(data_type_t dtype) { return dtype_is_int(dtype) && !dtype_is_signed(dtype); }

int tpu_data_type_size(data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(), [&] {
    check_dtype(dtype);
    if (dtype_bits(dtype) == 4)
      fail(ErrorKind::illegal_command, "{} has no whole-byte size; use tpu_data_type_bits()", dtype_name(dtype));
    return dtype_bytes(dtype);
  });
}

int tpu_data_type_bits(data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(), [&] {
    check_dtype(dtype);
    return dtype_bits(dtype);
  });
}

void tpu_local_shape_5d_to_4d(const dim5 *shape_5d, dim4 *shape_4d) {
  return api::run(__func__, TPU_CALLER(), [&] {
    const dim5 &s = api::deref("shape_5d", shape_5d);
    api::deref("shape_4d", shape_4d) = {s.n * s.d, s.c, s.h, s.w};
  });
}

// ---- bank ranges (half-open: banks start .. end-1) --------------------------
range_t tpu_bank_range(local_addr_t addr, int size) {
  return api::run(__func__, TPU_CALLER(), [&] {
    if (size <= 0) fail(ErrorKind::illegal_command, "size = {}; it must be positive", size);
    const uint32_t bank = chip().bank_bytes();
    const uint32_t offset = addr % chip().local_mem_bytes;
    return range_t{int(offset / bank), int((offset + uint32_t(size) - 1) / bank) + 1};
  });
}

bool tpu_range_overlapped(const range_t *r0, const range_t *r1) {
  return api::run(__func__, TPU_CALLER(), [&] {
    const range_t &a = api::deref("r0", r0), &b = api::deref("r1", r1);
    return a.start < b.end && b.start < a.end;
  });
}

bool tpu_any_range_overlapped(const range_t *ranges, int num) {
  return api::run(__func__, TPU_CALLER(), [&] {
    if (num > 0) api::deref("ranges", ranges);
    for (int i = 0; i < num; ++i)
      for (int j = i + 1; j < num; ++j)
        if (ranges[i].start < ranges[j].end && ranges[j].start < ranges[i].end) return true;
    return false;
  });
}

int tpu_npu_c_offset(int c, int c_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(), [&] {
    check_dtype(dtype);
    return c / chip().npu_num * c_stride * dtype_bytes(dtype);
  });
}

int tpu_unified_c_offset(int c, int c_stride, data_type_t dtype) {
  return api::run(__func__, TPU_CALLER(), [&] {
    check_dtype(dtype);
    return int(c % chip().npu_num * chip().local_mem_bytes) + c / chip().npu_num * c_stride * dtype_bytes(dtype);
  });
}

}  // extern "C"
