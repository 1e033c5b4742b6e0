// host_call.cc: the parts of host_call.h that are not templates.
#include "host/host_call.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <typeinfo>

#include "cmodel_host.h"

namespace tpu_runtime::host {
namespace {

std::string demangled(const char *name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void *)> text(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && text ? std::string(text.get()) : std::string(name);
}

}  // namespace

std::string current_exception_text() {
  const std::type_info *type = abi::__cxa_current_exception_type();
  const std::string name = type ? demangled(type->name()) : std::string("an unknown type");
  try {
    throw;
  } catch (const std::exception &e) {
    return name + ": " + e.what();
  } catch (...) {
    return name + " (not a std::exception)";
  }
}

std::string last_user_code_error(const std::string &what) {
  std::string text = cmodel_last_error();
  // "<what>: SIGSEGV ..." and "<what> called exit(-1) ...".
  if (text.rfind(what + ": ", 0) == 0) text.erase(0, what.size() + 2);
  else if (text.rfind(what + " ", 0) == 0) text.erase(0, what.size() + 1);
  return text;
}

namespace detail {
int call_user_code(const char *what, void (*thunk)(void *), void *context) {
  return cmodel_call_user_code(what, thunk, context);
}
}  // namespace detail

}  // namespace tpu_runtime::host
