// readable_error.cc: the readable form of the last error
// (cmodel_last_error_readable): a short first line saying what failed and
// where, the details after it, one clause a line.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cmodel_host.h"
#include "session.h"

// Kept out of line and not optimised away, so that a debugger can always
// break on it.
extern "C" __attribute__((noinline)) void cmodel_error_breakpoint(void) { asm volatile(""); }

namespace cmodel::session {
namespace {

// Per thread, as last_error(): the readable form of the last error set with
// its parts, and the one-line message it belongs to (a message recorded
// since without parts replaces it).
struct Readable {
  std::string text;
  std::string line;
};

Readable &readable() {
  thread_local Readable r;
  return r;
}

// The clauses of a message: its parts between "; " outside brackets (a call
// site's "(kernel.c:42)", a range "[0x0, 0x40)" hold no clause breaks).
std::vector<std::string> clauses(std::string_view text) {
  std::vector<std::string> parts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (depth == 0 && c == ';' && i + 1 < text.size() && text[i + 1] == ' ') {
      parts.emplace_back(text.substr(start, i - start));
      start = i + 2;
    }
  }
  if (start < text.size()) parts.emplace_back(text.substr(start));
  return parts;
}

// `first`, then each detail clause indented on a line of its own.
std::string with_details(std::string first, std::string_view details) {
  for (const std::string &clause : clauses(details)) first += "\n  " + clause;
  return first;
}

std::string render(const ErrorParts &parts) {
  std::string first = parts.subject.empty() ? parts.what : fmt::format("{}: {}", parts.subject, parts.what);
  if (!parts.site.text.empty()) first += " at " + readable_call_site(parts.site);
  if (!parts.split_details) return parts.details.empty() ? first : fmt::format("{}\n  {}", first, parts.details);
  return with_details(std::move(first), parts.details);
}

}  // namespace

ErrorTexts error_texts() { return {last_error(), readable_error()}; }

void set_error_texts(const ErrorTexts &texts) {
  readable() = {texts.readable, texts.line};
  last_error() = texts.line;
  cmodel_error_breakpoint();
}

void set_error(std::string line, const ErrorParts &parts) {
  readable() = {render(parts), line};
  last_error() = std::move(line);
  cmodel_error_breakpoint();
}

std::string readable_error() {
  const std::string &line = last_error();
  if (readable().line == line) return readable().text;
  const std::vector<std::string> parts = clauses(line);
  if (parts.empty()) return line;
  return with_details(parts.front(), std::string_view(line).substr(std::min(line.size(), parts.front().size() + 2)));
}

}  // namespace cmodel::session
