/* §5 item 11: tpu_kernel.h defines none of the names of the vendor's
 * companion headers. A kernel that defines them itself compiles, and so
 * does one that includes a vendor-style common.h before or after
 * tpu_kernel.h (COMPAT_COMMON_FIRST picks the order). */
#if defined(COMPAT_OWN_NAMES)
typedef struct cmd_id_node {
  int mine;
} CMD_ID_NODE;
typedef struct {
  int mine;
} INST_PROFILE;
typedef union {
  float fval;
  unsigned bits;
} fp32;
typedef char i8;
typedef int u8;
#include "tpu_kernel.h"
#elif defined(COMPAT_COMMON_FIRST)
#include "common.h"
#include "tpu_kernel.h"
#else
#include "tpu_kernel.h"
#include "common.h"
#endif

int include_isolation_check(void);
int include_isolation_check(void) {
#if defined(COMPAT_OWN_NAMES)
  CMD_ID_NODE node = {1};
  i8 c = 'x';
  u8 wide = 1000;
  return node.mine + c + wide + (int)sizeof(dim4);
#else
  CMD_ID_NODE node;
  fp32 f;
  f.fval = 1.0f;
  node.bd_cmd_id = f.format.exp;
  u8 small = 1;
  return (int)node.bd_cmd_id + small + (int)sizeof(dim4);
#endif
}
