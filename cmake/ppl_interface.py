#!/usr/bin/env python3
"""ppl_interface.py: the generated interface of a PPL kernel file.

    ppl_interface.py FILE.pl OUT_DIR
    ppl_interface.py --test FILE.pl OUT_DIR

reads the `__KERNEL__` functions of FILE.pl and writes, for its stem:

  OUT_DIR/<stem>.h        one `int k(...)` per kernel, C linkage, parameters
                          mapped as the vendor's Descriptor mode maps them
                          (pointers -> unsigned long long global addresses,
                          scalars as they are), and the PplErrorCode_t values;
  OUT_DIR/<stem>_ppl.pl   the .pl without its __TEST__ and __AUTOTUNE__
                          functions (host code
                          that only a test program builds), lines kept and
                          named after the .pl through #line;
  OUT_DIR/<stem>_ppl.cpp  that file compiled as C++ inside its own namespace
                          plus the entries, each calling ppl::rt::launch.

With --test, it writes the host program of the file's __TEST__ and
__AUTOTUNE__ functions instead (docs/ppl.md, "__TEST__ programs"):

  OUT_DIR/<stem>_test.pl   the .pl with each kernel k renamed ppl_kernel_k
                           on its own line (so errors keep their .pl lines,
                           through #line) and declared as `int k(...)`,
                           which a test calls: it launches the kernel
                           (plan, local memory, run) between the dumps;
  OUT_DIR/<stem>_test.cpp  that file in its namespace, and main() running
                           every __TEST__ and __AUTOTUNE__ function
                           (ppl/ppl_test_host.h).

A parameter the mapping does not know is an error naming the file, line
and parameter (docs/ppl.md, "The generated interface").
"""
import pathlib
import re
import sys

KERNEL = re.compile(r"__KERNEL__\s+void\s+(\w+)\s*\(([^)]*)\)", re.S)
SCALARS = {
    "int": "int", "int32": "int", "int32_t": "int", "unsigned": "unsigned", "unsigned int": "unsigned",
    "uint32": "uint32_t", "uint32_t": "uint32_t", "float": "float", "fp32": "float", "bool": "bool",
    "double": "double", "char": "char", "int64": "long long", "int64_t": "long long",
}
ERROR_CODES = [
    ("PplLocalAddrAssignErr", 0x11), ("FileErr", 0x12), ("LlvmFeErr", 0x13), ("PplFeErr", 0x14),
    ("PplOpt1Err", 0x15), ("PplOpt2Err", 0x16), ("PplFinalErr", 0x17), ("PplTransErr", 0x18), ("EnvErr", 0x19),
    ("PplL2AddrAssignErr", 0x1A), ("PplShapeInferErr", 0x1B), ("PplSetMemRefShapeErr", 0x1C), ("ToPplErr", 0x1D),
    ("PplTensorConvErr", 0x1E), ("PplDynBlockErr", 0x1F), ("CacheOpenKernelSoErr", 0x20),
    ("CacheGetKernelFunErr", 0x21), ("PplJitSetChipErr", 0x22), ("LocalMemSetErr", 0x23),
]


# The host chip helpers of the vendor's host utilities (spec §4.2 item 3),
# for tiling code that sizes blocks before calling a kernel: the chip is the
# open emulator's, else $CHIP (kernel/src/ppl_host.cc). Host EU_NUM is in
# bytes, as the vendor's; each macro gives way to an earlier definition
# (tpu_kernel.h's EU_NUM counts fp32 elements, ppl.h's LANE_NUM is the same
# lane count).
HOST_HELPERS = [
    "#ifndef PPL_HOST_HELPERS_DEFINED", "#define PPL_HOST_HELPERS_DEFINED",
    "int ppl_host_lane_num(void);", "int ppl_host_eu_bytes(void);", "const char *ppl_host_chip(void);",
    "int ppl_host_core_num(void);",
    "#ifndef LANE_NUM", "#define LANE_NUM (ppl_host_lane_num())", "#endif",
    "#ifndef EU_NUM", "#define EU_NUM (ppl_host_eu_bytes())", "#endif",
    "static inline int align_up(int x, int a) { return (x + a - 1) / a * a; }",
    "/* \"bm1684x\" or \"bm1688\": the open emulator's chip, else $CHIP. */",
    "static inline const char *get_chip(void) { return ppl_host_chip(); }",
    "/* CORE_NUM, 1 when it is unset (kernels run on one core here). */",
    "static inline int get_core_num(void) { return ppl_host_core_num(); }",
    "#endif", ""]


class InterfaceError(Exception):
    pass


def strip_comments(text):
    """Comments blanked with their newlines kept, so offsets give lines."""
    def blank(match):
        return re.sub(r"[^\n]", " ", match.group(0))
    return re.sub(r"//[^\n]*|/\*.*?\*/", blank, text, flags=re.S)


def host_parameter(param, where):
    """(host type, name, is_pointer) of one .pl parameter."""
    text = " ".join(param.split())
    match = re.fullmatch(r"(.*?)(\**)\s*(\w+)", text.replace(" *", "*").replace("* ", "*"))
    if not match or "[" in text:
        raise InterfaceError(f"{where}: parameter '{text}' has no host mapping (arrays and unnamed parameters are "
                             "not supported)")
    base = " ".join(w for w in match.group(1).split() if w not in ("const", "volatile"))
    name = match.group(3)
    if match.group(2):
        return "unsigned long long", name, True
    if base not in SCALARS:
        raise InterfaceError(f"{where}: parameter '{text}' of type '{base}' has no host mapping")
    return SCALARS[base], name, False


def kernel_matches(path, source):
    """(match, mapped parameters, parameter texts) of each __KERNEL__."""
    found = []
    for match in KERNEL.finditer(source):
        line = source.count("\n", 0, match.start()) + 1
        where = f"{path}:{line}"
        params = [p for p in match.group(2).split(",") if p.strip() and p.strip() != "void"]
        found.append((match, [host_parameter(p, where) for p in params], [" ".join(p.split()) for p in params]))
    if not found:
        raise InterfaceError(f"{path}: no __KERNEL__ function")
    return found


def kernels(path):
    return [(m.group(1), mapped) for m, mapped, _ in kernel_matches(path, strip_comments(path.read_text()))]


# Host functions: group 1 the kind (TEST or AUTOTUNE), 2 the return type,
# 3 the name, 4 the parameters.
TEST = re.compile(r"__(TEST|AUTOTUNE)__\s+(\w+)\s+(\w+)\s*\(([^)]*)\)", re.S)


def without_tests(text, source):
    """`text` with each __TEST__ function blanked out, newlines kept."""
    spans = []
    for match in TEST.finditer(source):
        depth, at = 0, source.find("{", match.end())
        for at in range(at, len(source)):
            depth += {"{": 1, "}": -1}.get(source[at], 0)
            if depth == 0:
                break
        spans.append((match.start(), at + 1))
    for start, end in reversed(spans):
        text = text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]
    return text


def test_program(stem, pl, out):
    """<stem>_test.pl and <stem>_test.cpp (see the module's text)."""
    text = pl.read_text()
    source = strip_comments(text)
    found = kernel_matches(pl, source)
    tests = []
    for match in TEST.finditer(source):
        line = source.count("\n", 0, match.start()) + 1
        if match.group(4).strip() not in ("", "void"):
            raise InterfaceError(f"{pl}:{line}: __{match.group(1)}__ function '{match.group(3)}' takes parameters; a "
                                 "test program calls it with none")
        tests.append((match.group(3), match.group(2), match.group(1) == "AUTOTUNE"))
    if not tests:
        raise InterfaceError(f"{pl}: no __TEST__ or __AUTOTUNE__ function")
    # Renamed from the last kernel back, so earlier offsets stay valid.
    for match, _, texts in reversed(found):
        name = match.group(1)
        declaration = f"int {name}({', '.join(texts) or 'void'}); "
        text = (text[:match.start()] + declaration + text[match.start():match.start(1)] + "ppl_kernel_" + name +
                text[match.end(1):])
    wrappers = []
    for match, mapped, texts in found:
        name = match.group(1)
        pointers = [n for _, n, ptr in mapped if ptr]
        scalars = [n for _, n, ptr in mapped if not ptr]
        listed = ", ".join(f"static_cast<uint64_t>(reinterpret_cast<uintptr_t>({n}))" for n in pointers)
        args = ", ".join(n for _, n, _ in mapped)
        # In an __AUTOTUNE__ function a null pointer becomes a scratch buffer.
        substitutes = [f"  {n} = reinterpret_cast<decltype({n})>(static_cast<uintptr_t>(ppl_test_pointer("
                       f"static_cast<uint64_t>(reinterpret_cast<uintptr_t>({n})), {i})));"
                       for i, n in enumerate(pointers)]
        names = ", ".join(f'"{n}"' for n in scalars)
        values = ", ".join(f"static_cast<double>({n})" for n in scalars)
        wrappers += [f"int {name}({', '.join(texts) or 'void'}) {{", *substitutes,
                     f"  static const char *const scalar_names[] = {{{names or 'nullptr'}}};",
                     f"  const double scalar_values[] = {{{values or '0'}}};",
                     f"  ppl_test_arguments(scalar_names, scalar_values, {len(scalars)});",
                     f"  const uint64_t pointers[] = {{{listed or '0'}}};",
                     f"  auto body = [&]() {{ ppl_kernel_{name}({args}); }};",
                     f'  ppl_test_before_call("{name}", pointers, {len(pointers)});',
                     "  const int status = ::ppl::rt::launch([](void *p) { (*static_cast<decltype(body) *>(p))(); }, "
                     "&body);",
                     f'  return ppl_test_after_call("{name}", status, pointers, {len(pointers)});', "}"]
    (out / f"{stem}_test.pl").write_text(f'#line 1 "{pl}"\n' + text + "\n" + "\n".join(wrappers) + "\n")
    space = "ppl_pl_" + re.sub(r"\W", "_", stem)
    calls = []
    for name, returns, _ in tests:
        if returns == "void":
            calls.append(f"[]() {{ {space}::{name}(); return 0; }}")
        else:
            calls.append(f"[]() {{ return static_cast<int>({space}::{name}()); }}")
    lines = [f"// {stem}_test.cpp: generated by ppl_interface.py --test from {pl.name}; do not edit.",
             "#include <cstdint>", '#include "ppl.h"', '#include "ppl_wrapper_func.h"', '#include "ppl_test.h"', "",
             f"namespace {space} {{", f'#include "{stem}_test.pl"', f"}}  // namespace {space}", "",
             "int main(int argc, char **argv) {",
             f"  static const char *const names[] = {{{', '.join(f'{chr(34)}{n}{chr(34)}' for n, _, _ in tests)}}};",
             f"  static const ppl_test_function tests[] = {{{', '.join(calls)}}};",
             f"  static const int autotune[] = {{{', '.join('1' if a else '0' for _, _, a in tests)}}};",
             f'  return ppl_test_main(argc, argv, "{stem}", names, tests, autotune, {len(tests)});', "}", ""]
    (out / f"{stem}_test.cpp").write_text("\n".join(lines))


def header(stem, found):
    lines = [f"/* {stem}.h: generated by ppl_interface.py from {stem}.pl; do not edit. */", "#pragma once", "",
             "#include <stdbool.h>", "#include <stdint.h>", "", "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
             "#ifndef PPL_ERROR_CODES_DEFINED", "#define PPL_ERROR_CODES_DEFINED", "typedef enum {"]
    lines += [f"  {name} = {value:#x}," for name, value in ERROR_CODES]
    lines += ["} PplErrorCode_t;", "#endif", ""]
    lines += HOST_HELPERS
    for name, params in found:
        args = ", ".join(f"{t} {n}" for t, n, _ in params) or "void"
        lines.append(f"int {name}({args});")
    lines += ["", "#ifdef __cplusplus", "}", "#endif", ""]
    return "\n".join(lines)


def entry(stem, pl, found):
    space = "ppl_pl_" + re.sub(r"\W", "_", stem)
    lines = [f"// {stem}_ppl.cpp: generated by ppl_interface.py from {pl.name}; do not edit.",
             "#include <type_traits>", "#include <vector>", '#include "ppl.h"', '#include "ppl_wrapper_func.h"',
             "", f"namespace {space} {{", f'#include "{stem}_ppl.pl"', f"}}  // namespace {space}", "",
             f'#include "{stem}.h"', ""]
    for name, params in found:
        args = ", ".join(f"{t} {n}" for t, n, _ in params)
        fields = " ".join(f"{t} {n};" for t, n, _ in params)
        values = ", ".join(n for _, n, _ in params)
        passed = ", ".join(f"ppl::rt::global_address{{a.{n}}}" if ptr else f"a.{n}" for _, n, ptr in params)
        lines += [f'extern "C" int {name}({args or "void"}) {{',
                  f"  struct arguments {{ {fields} }} args{{{values}}};",
                  "  return ppl::rt::launch([](void *p) {",
                  "    [[maybe_unused]] auto &a = *static_cast<arguments *>(p);",
                  f"    {space}::{name}({passed});",
                  "  }, &args);", "}", ""]
    return "\n".join(lines)


def main(argv):
    test = len(argv) > 1 and argv[1] == "--test"
    if test:
        argv = argv[:1] + argv[2:]
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    pl = pathlib.Path(argv[1]).resolve()
    out = pathlib.Path(argv[2])
    stem = pl.stem
    try:
        out.mkdir(parents=True, exist_ok=True)
        if test:
            test_program(stem, pl, out)
            return 0
        found = kernels(pl)
    except (InterfaceError, OSError) as e:
        print(f"ppl_interface.py: {e}", file=sys.stderr)
        return 1
    text = pl.read_text()
    (out / f"{stem}_ppl.pl").write_text(f'#line 1 "{pl}"\n' + without_tests(text, strip_comments(text)))
    (out / f"{stem}.h").write_text(header(stem, found))
    (out / f"{stem}_ppl.cpp").write_text(entry(stem, pl, found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
