/* §5 item 12: the SDK's own common.h, included after tpu_kernel.h, gives a
 * vendor kernel what the vendor companion does. Compile-only. */
#include "tpu_kernel.h"
#include "common.h"

int common_companion_check(void);
int common_companion_check(void) {
  fp16 h;
  h.bits = 0x3c00;
  bf16 b;
  b.bits = 0x3f80;
  fp32 f;
  f.fval = fp16_ieee_to_fp32_value(h.bits);
  tf32 t;
  t.bits = 0;
  fp20 twenty;
  twenty.bits = 0;
  Double d;
  d.double_val = 1.0;
  int4_t i4;
  i4.val = -2;
  uint4_t u4v;
  u4v.val = 3;
  DataUnion any;
  any.f32val = f.fval;
  ROUND_MODE mode = ROUND_HALF_TO_EVEN;
  u8 a8 = 1;
  u16 a16 = 2;
  u32 a32 = 3;
  u64 a64 = 4;
  s8 b8 = -1;
  s16 b16 = -2;
  s32 b32 = -3;
  s64 b64 = -4;
  CMD_ID_NODE node;
  memset(&node, 0, sizeof node);
  ENGINE_ID engine = ENGINE_GDMA;
  const int nan_seen = SG_IS_NAN(0x7fc00000u) && !SG_IS_NAN(f.bits);
  const float root = sqrtf(4.0f);
  return sg_min(a8, 2) + a16 + (int)a32 + (int)a64 + b8 + b16 + b32 + (int)b64 + (int)root + (int)mode +
         (int)engine + nan_seen + (int)node.bd_cmd_id + i4.val + u4v.val + (int)t.bits + (int)twenty.bits +
         (int)d.double_val + (int)any.f32val + b.format.exp;
}
