/* unresolved.c: calls a function no library defines, so RTLD_NOW refuses it. */
void fx_function_nobody_defines(void);

void fx_unresolved_caller(void) { fx_function_nobody_defines(); }
