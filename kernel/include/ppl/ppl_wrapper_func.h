// ppl_wrapper_func.h: the vendor's composite functions. None is implemented
// yet: they are declared deleted in ppl_unimplemented.h (docs/ppl.md).
#pragma once

#include "ppl.h"
