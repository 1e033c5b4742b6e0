#!/usr/bin/env python3
"""Generates the SDK's API artefacts from kernel/api/tpu_kernel.api.

One list, several outputs (see the list's header for its syntax):

  header   <list> <template> <out>     tpu_kernel.h: the template with its
                                       @TPU_KERNEL_FUNCTIONS@ line replaced by
                                       the declarations
  def      <list> <out>                api_functions.def (X-macros)
  wrappers <list> <out.cc> <out.h>     the generated C boundaries and the
                                       declarations of their C++ bodies
  coverage <list> <libcmodel.so> <out> docs/api-coverage.md
  prototypes <vendor list> <out.c>     the compatibility check: every vendor
                                       prototype assigned to a pointer of its
                                       exact type (a drift does not compile)

Only the Python standard library is used; the build runs it with Debian's
python3.
"""
import re
import subprocess
import sys
from dataclasses import dataclass, field

# Families whose functions are queries unless tagged `engine`.
QUERY_FAMILIES = {"A", "C", "U", "Z"}

# Parameter types the command-stream recorder stores by value
# (kernel/src/record.h: arithmetic types, enums and the plain structs).
VALUE_TYPES = {
    "int", "unsigned int", "unsigned", "short", "unsigned short", "char", "signed char", "unsigned char",
    "bool", "float", "double", "long long", "unsigned long long", "u8", "u16", "u32", "u64", "size_t",
    "local_addr_t", "static_addr_t", "l2_sram_addr_t", "system_addr_t", "global_addr_t", "addr_t",
    "data_type_t", "rounding_mode_t", "reduce_method_t", "func_type_t", "var_type_t",
    "all_reduce_psum_t", "all_reduce_opcode_t",
}
PLAIN_STRUCTS = {"dim4", "dim5", "dim2", "padding_t", "range_t", "scalar_t", "variable_t", "var_context_t"}

GENERATED_NOTE = "generated from kernel/api/tpu_kernel.api by kernel/api/generate.py; do not edit"


class ListError(Exception):
    pass


@dataclass
class Param:
    type: str
    name: str

    def recordable(self):
        t = re.sub(r"^const\s+", "", self.type).strip()
        if t in VALUE_TYPES or t in PLAIN_STRUCTS:
            return True
        m = re.fullmatch(r"const\s+(\w+)\s*\*", self.type)
        return bool(m and m.group(1) in PLAIN_STRUCTS)


@dataclass
class Function:
    family: str
    ret: str
    name: str
    params: list
    variadic: bool
    tags: set
    prototype: str
    policy: str = ""
    reason: str = ""

    def declaration(self):
        return self.prototype


@dataclass
class ApiList:
    families: list = field(default_factory=list)  # (letter, title)
    functions: list = field(default_factory=list)
    reasons: dict = field(default_factory=dict)


KNOWN_TAGS = {"query", "engine", "support", "wrap", "used", "a-only", "deprecated"}


def split_params(text, names_required=True):
    text = text.strip()
    if text in ("", "void"):
        return [], False
    params, variadic = [], False
    for raw in text.split(","):
        raw = raw.strip()
        if raw == "...":
            variadic = True
            continue
        m = re.fullmatch(r"(.*?)(\w+)", raw)
        if not m or not m.group(1).strip() or m.group(1).strip() in ("const", "unsigned", "signed"):
            if names_required:
                raise ListError(f"parameter '{raw}' has no name")
            params.append(Param(raw, ""))
            continue
        params.append(Param(re.sub(r"\s+", " ", m.group(1).strip()), m.group(2)))
    return params, variadic


def parse_prototype(line, names_required=True):
    m = re.fullmatch(r"\s*(.*?)\b(\w+)\((.*)\);\s*(.*)", line)
    if not m:
        raise ListError("not a prototype ('<type> <name>(<parameters>);')")
    ret, name, params_text, tag_text = m.groups()
    params, variadic = split_params(params_text, names_required)
    prototype = f"{ret}{name}({params_text});"
    return ret.strip(), name, params, variadic, prototype, tag_text.split()


def parse_list(path):
    api = ApiList()
    family = None
    names = set()
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            where = f"{path}:{number}"
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                if line.startswith("reason "):
                    key, _, text = line[len("reason "):].partition(":")
                    api.reasons[key.strip()] = text.strip()
                    continue
                if line.startswith("family "):
                    letter, _, title = line[len("family "):].partition(":")
                    family = letter.strip()
                    api.families.append((family, title.strip()))
                    continue
                if family is None:
                    raise ListError("a function before the first 'family' line")
                ret, name, params, variadic, prototype, tags = parse_prototype(line)
                if name in names:
                    raise ListError(f"{name} is listed twice")
                names.add(name)
                for tag in tags:
                    if tag not in KNOWN_TAGS and not tag.startswith("refused:"):
                        raise ListError(f"unknown tag '{tag}'")
                api.functions.append(Function(family, ret, name, params, variadic, set(tags), prototype))
            except ListError as e:
                raise ListError(f"{where}: {e}") from None
    for fn in api.functions:
        decide_policy(fn, api.reasons)
    return api


def decide_policy(fn, reasons):
    refusals = [t for t in fn.tags if t.startswith("refused:")]
    if "support" in fn.tags:
        fn.policy = "support"
    elif refusals:
        key = refusals[0].split(":", 1)[1]
        if key not in reasons:
            raise ListError(f"{fn.name}: no 'reason {key}:' line")
        fn.policy, fn.reason = "refused", reasons[key]
    elif "query" in fn.tags:
        fn.policy = "ignored"
    elif "engine" in fn.tags or fn.family not in QUERY_FAMILIES:
        fn.policy = "recorded"
    else:
        fn.policy = "ignored"
    if fn.policy == "recorded":
        for p in fn.params:
            if not p.recordable():
                fn.policy = "refused"
                fn.reason = f"its parameter {p.name} ({p.type}) cannot be recorded by value"
                break
    if "wrap" in fn.tags and fn.variadic:
        raise ListError(f"{fn.name}: a variadic function cannot have a generated boundary")


def write(path, text):
    # Rewrite only on change, so dependants do not rebuild for nothing.
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def api_functions(api):
    """The API proper: everything but the SDK's own support family X."""
    return [fn for fn in api.functions if fn.family != "X"]


# ---- outputs ---------------------------------------------------------------------------------

def make_header(api, template_path, out_path):
    lines = []
    for letter, title in api.families:
        members = [fn for fn in api.functions if fn.family == letter]
        if letter == "X":
            continue  # declared by hand in the template, with format attributes
        lines.append(f"/* {letter}. {title} ({len(members)}) */")
        lines.extend(fn.declaration() for fn in members)
        lines.append("")
    with open(template_path, encoding="utf-8") as f:
        template = f.read()
    marker = "@TPU_KERNEL_FUNCTIONS@\n"
    if template.count(marker) != 1:
        raise ListError(f"{template_path}: needs exactly one line '@TPU_KERNEL_FUNCTIONS@'")
    write(out_path, template.replace(marker, "\n".join(lines)))


def make_def(api, out_path):
    out = [f"// api_functions.def: {GENERATED_NOTE}.",
           "// TPU_API_FUNCTION(family, name, policy): policy is recorded, ignored, refused or support.",
           "// TPU_API_REFUSAL(name, reason) (only when defined): why a refused function cannot be recorded."]
    out += [f"TPU_API_FUNCTION({fn.family}, {fn.name}, {fn.policy})" for fn in api.functions]
    out.append("#ifdef TPU_API_REFUSAL")
    out += [f'TPU_API_REFUSAL({fn.name}, "{fn.reason}")' for fn in api.functions if fn.policy == "refused"]
    out.append("#endif")
    write(out_path, "\n".join(out) + "\n")


def make_wrappers(api, cc_path, h_path):
    wrapped = [fn for fn in api.functions if "wrap" in fn.tags]
    header = [f"// api_impl.h: {GENERATED_NOTE}.",
              "// The C++ bodies of the functions tagged `wrap`: each is called by its generated",
              "// extern \"C\" boundary (api_wrappers.cc) inside api::run, so it may throw cmodel::Error.",
              "#pragma once", "", '#include "tpu_kernel.h"', "", "namespace cmodel::impl {"]
    for fn in wrapped:
        params = ", ".join(f"{p.type} {p.name}" for p in fn.params)
        header.append(f"{fn.ret} {fn.name}({params});")
    header.append("}  // namespace cmodel::impl")
    source = [f"// api_wrappers.cc: {GENERATED_NOTE}.",
              '#include "api_guard.h"', '#include "api_impl.h"', '#include "record.h"', "",
              "using namespace cmodel;", ""]
    for fn in wrapped:
        params = ", ".join(f"{p.type} {p.name}" for p in fn.params) or "void"
        names = ", ".join(p.name for p in fn.params)
        record = f"TPU_ARGS({fn.name}{', ' if names else ''}{names}), " if fn.policy == "recorded" else ""
        source.append(f'extern "C" {fn.ret} {fn.name}({params}) {{')
        source.append(f"  return api::run(__func__, TPU_CALLER(), {record}[&] {{ return impl::{fn.name}({names}); }});")
        source.append("}")
    write(h_path, "\n".join(header) + "\n")
    write(cc_path, "\n".join(source) + "\n")


def defined_symbols(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True, text=True).stdout
    kinds = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            kinds[parts[2]] = parts[1]
    return kinds


def make_coverage(api, library, out_path):
    kinds = defined_symbols(library)
    functions = api_functions(api)
    missing = [fn.name for fn in functions if fn.name not in kinds]
    if missing:
        raise ListError(f"{library} does not export: {', '.join(missing)}")
    done = {fn.name for fn in functions if kinds[fn.name] == "T"}
    vendor = [fn for fn in functions if fn.family != "Z" and "a-only" not in fn.tags]
    unprefixed = [fn for fn in functions if fn.family == "Z"]
    a_only = [fn for fn in functions if "a-only" in fn.tags]
    used = [fn for fn in functions if "used" in fn.tags]
    out = ["# tpu-kernel API coverage", "",
           "Every function `tpu_kernel.h` declares, by family, and whether this SDK implements it. The",
           "declarations follow the current vendor header (bm1684x/bm1688 TPU1686 `tpu_kernel.h`, \"version C\"",
           "of the spec). A function that is not implemented yet still links; calling it stops the kernel",
           "with \"*name* is not implemented in this SDK\". Generated from `kernel/api/tpu_kernel.api` and the",
           "built library by `kernel/api/generate.py` (`scripts/api_coverage.sh`); the test",
           "`api_coverage_current` fails when this file is out of date.", "",
           f"- **{len(vendor)}** `tpu_*` functions of the current header declared, "
           f"**{sum(fn.name in done for fn in vendor)}** implemented;",
           f"- **{len(unprefixed)}** declarations without the prefix (family Z), "
           f"**{sum(fn.name in done for fn in unprefixed)}** implemented;",
           f"- **{len(a_only)}** functions of the 2023 header only (tagged a-only), "
           f"**{sum(fn.name in done for fn in a_only)}** implemented;",
           f"- of the **{len(used)}** functions public kernels are known to call (tagged used), "
           f"**{sum(fn.name in done for fn in used)}** are implemented.", "",
           "| family | implemented | declared |", "|---|---|---|"]
    for letter, title in api.families:
        members = [fn for fn in functions if fn.family == letter]
        if members:
            out.append(f"| {letter}. {title} | {sum(fn.name in done for fn in members)} | {len(members)} |")
    for letter, title in api.families:
        members = [fn for fn in functions if fn.family == letter]
        if not members:
            continue
        out += ["", f"## {letter}. {title}", "", "| function | status | notes |", "|---|---|---|"]
        for fn in members:
            notes = ", ".join(sorted(t for t in fn.tags if t in {"used", "a-only", "deprecated"}))
            out.append(f"| `{fn.name}` | {'implemented' if fn.name in done else 'not yet'} | {notes} |")
    write(out_path, "\n".join(out) + "\n")


def make_prototype_check(vendor_path, out_path):
    out = [f"/* {GENERATED_NOTE.replace('kernel/api/tpu_kernel.api', vendor_path.split('/')[-1])}. */",
           "/* Every vendor prototype assigned to a pointer of exactly its type: compiled with",
           "   -Werror=incompatible-pointer-types (C) or as C++, any signature drift is an error. */",
           '#include "tpu_kernel.h"', ""]
    count = 0
    with open(vendor_path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                ret, name, params, variadic, _, _ = parse_prototype(line, names_required=False)
            except ListError as e:
                raise ListError(f"{vendor_path}:{number}: {e}") from None
            types = ", ".join(p.type for p in params) + (", ..." if variadic else "")
            out.append(f"{ret} (*const check_{name})({types or 'void'}) = {name};")
            count += 1
    out.append(f"const int vendor_prototype_count = {count};")
    write(out_path, "\n".join(out) + "\n")


def main(argv):
    try:
        command, args = argv[1], argv[2:]
        if command == "header":
            make_header(parse_list(args[0]), args[1], args[2])
        elif command == "def":
            make_def(parse_list(args[0]), args[1])
        elif command == "wrappers":
            make_wrappers(parse_list(args[0]), args[1], args[2])
        elif command == "coverage":
            make_coverage(parse_list(args[0]), args[1], args[2])
        elif command == "prototypes":
            make_prototype_check(args[0], args[1])
        else:
            raise IndexError
    except IndexError:
        sys.exit(__doc__)
    except ListError as e:
        sys.exit(f"generate.py: {e}")


if __name__ == "__main__":
    main(sys.argv)
