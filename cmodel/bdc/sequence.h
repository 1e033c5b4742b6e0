// sequence.h: arithmetic sequences and copies from static memory (family Q2:
// tpu_bdc_arithmetic_sequence_bcast / _distribute / _distribute_aligned /
// _general, tpu_bdc_generate_arithmetic_sequence,
// tpu_bdc_npu_bcast_from_static, tpu_bdc_npu_distribute_from_static).
//
// Sequences are INT32, or the dtype given (the *_with_dtype forms and
// generate_arithmetic_sequence). Element i is start + i * step computed
// exactly and wrapped to 32 bits (two's complement), so a sequence that
// leaves the int32 range wraps around as the hardware's 32-bit adder
// would; a narrower integer dtype keeps its low bits, a float dtype gets
// that int32 value rounded to nearest-even. Layouts are the same in every
// dtype (the general form's buffer holds one element of dtype per NPU).
//
// Layouts (the commands take no shapes or strides; these are the tensors
// they write, chosen where the vendor documentation is silent):
//   bcast, general: [1, npu_num, 1, num] aligned: the same num values in
//     each of npu_num consecutive NPUs from dst's NPU, so start NPU +
//     npu_num <= NPU_NUM (as tpu_bdc_npu_bcast).
//   distribute: [1, num, 1, 1] compact (c-stride 1): value i in channel i,
//     i.e. NPU (start + i) % NPU_NUM, 4 (start + i) / NPU_NUM bytes past
//     dst's offset. dst must be 4-byte aligned.
//   distribute_aligned: [1, num, 1, 1] aligned (c-stride EU_NUM): value i in
//     channel i at that row's aligned offset.
//   generate: [1, 1, 1, num] aligned on dst's NPU: 0, 1, ..., num - 1
//     converted to dtype; every value must be exact in dtype (integers up to
//     the dtype's maximum, fp16 up to 2048, bf16 up to 256, fp32 up to 2^24).
//   general's buffer: [1, npu_num, 1, 1] INT32 aligned on dst's NPU (4 bytes
//     of scratch per NPU) that must not overlap dst; afterwards it holds the
//     last value, start + (num - 1) * step, in each NPU.
//   bcast_from_static: len elements of dtype read at byte offset src of
//     static memory (a multiple of ALIGN_BYTES), written as
//     [1, npu_num, 1, len] aligned (as bcast).
//   distribute_from_static: len elements read at src (a multiple of
//     ALIGN_BYTES), element i written to channel i of a [1, len, 1, 1]
//     compact tensor on NPU 0 (as distribute: the vendor checker wants dst
//     on NPU 0 and element-aligned only).
// Static memory holds the SDK's coefficient tables at the offsets of
// tables.h (installed before every read) and zeros elsewhere.
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

enum class SequenceLayout { bcast, distribute, distribute_aligned };

// bcast / distribute / distribute_aligned. npu_num is used by bcast only.
void arithmetic_sequence(Context &ctx, const char *api, SequenceLayout layout, local_addr_t dst, int npu_num,
                         int start, int step, int num, data_type_t dtype = DT_INT32);

// tpu_bdc_arithmetic_sequence_general.
void arithmetic_sequence_general(Context &ctx, const char *api, local_addr_t dst, local_addr_t buffer, int npu_num,
                                 int start, int step, int num, data_type_t dtype = DT_INT32);

// tpu_bdc_generate_arithmetic_sequence.
void generate_sequence(Context &ctx, const char *api, local_addr_t dst, int num, data_type_t dtype);

// tpu_bdc_npu_bcast_from_static (distribute false, npu_num used) and
// tpu_bdc_npu_distribute_from_static (distribute true).
void copy_from_static(Context &ctx, const char *api, bool distribute, local_addr_t dst, uint32_t src, int npu_num,
                      int len, data_type_t dtype);

}  // namespace cmodel::bdc
