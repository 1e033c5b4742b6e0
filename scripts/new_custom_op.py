#!/usr/bin/env python3
"""new_custom_op.py: writes a new custom op into an op project in this SDK's
layout, ready to build and pass on both chips (envsetup.sh's new_custom_op
runs it on $CUSTOM_LAYER_PATH).

    python3 scripts/new_custom_op.py [--project DIR] NAME

The op is element-wise, y = x * scale + bias with two float parameters, in
global and local versions (the smallest op that shows parameters, both
kernels and a scratch buffer); its files are meant to be edited into the
op you want. Written from the templates in scripts/op_template/:

    plugin/plugin_NAME.c                     host hooks: the reference, param types
    customlayer/src/tpu_impl_NAME.c          the global and local kernels
    customlayer/src/interface_NAME.c         api_NAME_global, _local, _local_bfsz
    customlayer/unittest/NAME_test.cc        GoogleTest unit test (run_custom_unittest)
    customlayer/test_if/unittest/test_NAME.py  the vendor-style TpuLang test

and added to the shared files: register_ops.cmake, the parameter struct and
parser (customlayer/include/backend_custom_param.h, param_parser.h), the
kernels' declarations (tpu_impl_custom_ops.h), a case in
customlayer/op_cases.json and a class in customlayer/python/my_tpulang_layer.py.

Everything is checked before anything is written: a name that is not a C
identifier, is a C or Python keyword, is longer than the 20 characters a
model record holds, or is already used by the project (registered, a file
or a symbol of that name) is refused, with the reason, and nothing changes.
Exit status: 0 written, 1 refused, 2 usage error.
"""
import argparse
import ast
import builtins
import json
import keyword
import os
import pathlib
import re
import sys
import tempfile

TEMPLATES = pathlib.Path(__file__).resolve().parent / "op_template"
SDK_ROOT = pathlib.Path(__file__).resolve().parent.parent

# Keywords of C23 and earlier: an op name becomes part of C identifiers, and
# a keyword would read as one in the generated code and in messages.
C_KEYWORDS = frozenset("""
    alignas alignof auto bool break case char const constexpr continue default do double else enum
    extern false float for goto if inline int long nullptr register restrict return short signed
    sizeof static static_assert struct switch thread_local true typedef typeof typeof_unqual union
    unsigned void volatile while _Alignas _Alignof _Atomic _BitInt _Bool _Complex _Decimal128
    _Decimal32 _Decimal64 _Generic _Imaginary _Noreturn _Static_assert _Thread_local
    """.split())

# A model record holds the name in 20 bytes (TpuCustomLayer.cmake refuses
# longer names too).
MAX_NAME_LENGTH = 20

REGISTRATION = re.compile(r"^\s*(register_custom_\w+)\s*\(\s*([^)\s]*)\s*\)")


class Refusal(Exception):
    """Why the op cannot be written; nothing was changed."""


def camel_case(name):
    """scale_bias -> ScaleBias: the op's C++ fixture and Python test class."""
    camel = "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)
    if not camel or camel[0].isdigit():
        camel = "Op" + camel
    return camel


def check_name(name):
    """Refuses a name that cannot be an op name at all, whatever the project."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise Refusal(f"'{name}' is not a C identifier (letters, digits and _, not starting with a digit)")
    if len(name) > MAX_NAME_LENGTH:
        raise Refusal(f"'{name}' is {len(name)} characters; a model record holds at most {MAX_NAME_LENGTH}")
    if name in C_KEYWORDS:
        raise Refusal(f"'{name}' is a C keyword")
    # The op is also a class of my_tpulang_layer.py: a keyword would not
    # parse and a builtin's name would hide the builtin from that module.
    if keyword.iskeyword(name) or hasattr(builtins, name):
        raise Refusal(f"'{name}' is a Python keyword or builtin, and the op becomes a class of my_tpulang_layer.py")
    # The vendor's compiler takes every op whose name starts with "ap" for
    # an AP (host CPU) op: such an op would not run on the TPU there.
    if name.startswith("ap"):
        raise Refusal(f"'{name}' starts with 'ap', which the vendor's compiler reserves for AP (host CPU) ops")


class Project:
    """The paths of an op project in this SDK's layout."""

    def __init__(self, root):
        self.root = root
        self.registry = root / "register_ops.cmake"
        self.include = root / "customlayer" / "include"
        self.src = root / "customlayer" / "src"
        self.plugin = root / "plugin"
        self.unittest = root / "customlayer" / "unittest"
        self.python = root / "customlayer" / "python"
        self.python_tests = root / "customlayer" / "test_if" / "unittest"
        self.cases = root / "customlayer" / "op_cases.json"

    def relative(self, path):
        return path.relative_to(self.root).as_posix()

    def check_layout(self):
        if not self.registry.is_file():
            raise Refusal(f"{self.root} is not an op project: it has no register_ops.cmake")
        if not self.src.is_dir():
            if (self.root / "src").is_dir():
                raise Refusal(f"{self.root} is a vendor customlayer directory; new_custom_op writes ops in this SDK's "
                              "layout (customlayer/src, customlayer/include, plugin/), whose kernels share "
                              "customlayer/src/tpu_impl_common.c: follow docs/write-your-first-op.md there instead")
            raise Refusal(f"{self.root} has no customlayer/src/")
        # The generated kernels and tests stand on these.
        needed = [self.src / "tpu_impl_common.c", self.include / "tpu_impl_custom_ops.h",
                  self.include / "backend_custom_param.h", self.include / "param_parser.h",
                  self.unittest / "op_test_support.h"]
        missing = [self.relative(p) for p in needed if not p.is_file()]
        if missing:
            raise Refusal(f"{self.root} lacks {', '.join(missing)}, which the new op's code uses")


def registrations(registry):
    """(macro, op, line number) of every registration in register_ops.cmake."""
    found = []
    for number, line in enumerate(registry.read_text().splitlines(), 1):
        match = REGISTRATION.match(line.split("#", 1)[0])
        if match:
            found.append((match.group(1), match.group(2), number))
    return found


def check_registry(project, name):
    for macro, op, number in registrations(project.registry):
        where = f"{project.relative(project.registry)}:{number}"
        if op == name:
            raise Refusal(f"the op '{name}' exists already: {where} registers it ({macro}({op}))")
        if op.lower() == name.lower():
            raise Refusal(f"'{name}' differs only in case from the op '{op}' ({where}); op names are looked up "
                          "ignoring case in suggestions, so the two would be confused")


def new_files(project, name):
    """The files the op gets: path -> (template, what the file is)."""
    return {
        project.plugin / f"plugin_{name}.c": ("plugin.c.in", f"host hooks: the reference inference_{name}, ..."),
        project.src / f"tpu_impl_{name}.c": ("tpu_impl.c.in", "the global and local kernels"),
        project.src / f"interface_{name}.c": ("interface.c.in", f"api_{name}_global, _local, _local_bfsz"),
        project.unittest / f"{name}_test.cc": ("unittest.cc.in", "unit test (run_custom_unittest)"),
        project.python_tests / f"test_{name}.py": ("test_if.py.in", "TpuLang test, the vendor's way"),
    }


def defined_symbols(name):
    """The global C identifiers the op's code defines or declares."""
    return [f"inference_{name}", f"local_gen_support_{name}", f"param_types_{name}", f"{name}_param_t",
            f"{name}_parse_param", f"tpu_impl_{name}_global", f"tpu_impl_{name}_local", f"api_{name}_global",
            f"api_{name}_local", f"api_{name}_local_bfsz", f"{name}_elements", f"{name}_args_t",
            f"{name}_work_bytes", f"{name}_compute", f"{name}_tile"]


def sources_to_search(project):
    """The project's C sources and headers, and the SDK's kernel headers they include."""
    for directory in (project.include, project.src, project.plugin, SDK_ROOT / "kernel" / "include"):
        if directory.is_dir():
            yield from sorted(p for p in directory.rglob("*") if p.suffix in (".c", ".h", ".in", ".cc", ".cpp"))


def check_unused(project, name):
    """Refuses a name whose files or symbols exist already."""
    taken = [p for p in new_files(project, name) if p.exists()]
    if taken:
        raise Refusal(f"{', '.join(project.relative(p) for p in taken)} exist(s) already")
    symbols = re.compile(r"\b(" + "|".join(defined_symbols(name)) + r")\b")
    for path in sources_to_search(project):
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = symbols.search(line)
            if match:
                shown = project.relative(path) if path.is_relative_to(project.root) else str(path)
                raise Refusal(f"the op's code would define {match.group(1)}, which {shown}:{number} already uses")


def fill(template, name):
    """The template's text for this op."""
    text = (TEMPLATES / template).read_text()
    text = text.replace("@pad@", " " * len(name)).replace("@Op@", camel_case(name)).replace("@op@", name)
    # Section rules in headers are padded with dashes to 80 columns, as the
    # sample ops' are.
    lines = []
    for line in text.split("\n"):
        if "@dashes@" in line:
            line = line.replace("@dashes@", "-" * max(4, 80 - len(line) + len("@dashes@")))
        lines.append(line)
    return "\n".join(lines)


def insert_before_extern_end(path, text, what):
    """The header's content with `text` before its closing extern "C" block."""
    content = path.read_text()
    anchor = content.rfind("\n#ifdef __cplusplus\n}")
    if anchor < 0:
        raise Refusal(f"cannot place {what} in {path}: it has no closing '#ifdef __cplusplus' / '}}' block "
                      "to insert before")
    return content[:anchor + 1] + text + content[anchor + 1:]


def format_cases(document):
    """op_cases.json as this SDK writes it: one case a line."""
    lines = ["{"]
    items = list(document.items())
    for index, (key, value) in enumerate(items):
        comma = "," if index + 1 < len(items) else ""
        if key == "cases" and isinstance(value, list):
            lines.append(f"  {json.dumps(key)}: [")
            for case_index, case in enumerate(value):
                case_comma = "," if case_index + 1 < len(value) else ""
                lines.append(f"    {json.dumps(case, ensure_ascii=False)}{case_comma}")
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def cases_with_op(project, name):
    """op_cases.json with a case for the op (created when missing)."""
    document = {"cases": []}
    if project.cases.exists():
        try:
            document = json.loads(project.cases.read_text())
        except json.JSONDecodeError as e:
            raise Refusal(f"{project.relative(project.cases)} is not valid JSON ({e}); fix it first")
        if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
            raise Refusal(f"{project.relative(project.cases)} has no \"cases\" array")
    if any(isinstance(c, dict) and c.get("op") == name for c in document["cases"]):
        raise Refusal(f"{project.relative(project.cases)} has cases for '{name}' already")
    document["cases"].append({"op": name, "shapes": [[4, 32, 36, 36]], "params": {"scale": 0.5, "bias": 1.25}})
    return format_cases(document)


TPULANG_MODULE_HEAD = '''"""The project's ops as TpuLang layers: one class per op, pairing a numpy
reference (native) with the TpuLang builder (tpulang)."""
import numpy as np

import transform.TpuLang as tpul
'''


def tpulang_module_with_op(project, name):
    """my_tpulang_layer.py with a class for the op (created when missing)."""
    path = project.python / "my_tpulang_layer.py"
    content = path.read_text() if path.exists() else TPULANG_MODULE_HEAD
    try:
        tree = ast.parse(content)
    except SyntaxError as e:
        raise Refusal(f"{project.relative(path)} does not parse ({e}); fix it first")
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    if name in names:
        raise Refusal(f"{project.relative(path)} defines '{name}' already")
    return content.rstrip("\n") + "\n" + fill("tpulang_layer.py.in", name)


def planned_changes(project, name):
    """(path, new content, what changed) for every file the op touches."""
    changes = [(path, fill(template, name), f"new: {what}")
               for path, (template, what) in new_files(project, name).items()]
    registry = project.registry.read_text()
    if registry and not registry.endswith("\n"):
        registry += "\n"
    changes.append((project.registry, registry + fill("register_ops.cmake.in", name),
                    "added: register_custom_op, _local_op, _local_bfsz"))
    for header, template, what in [
        ("backend_custom_param.h", "param_struct.h.in", f"{name}_param_t"),
        ("param_parser.h", "param_parser.h.in", f"{name}_parse_param"),
        ("tpu_impl_custom_ops.h", "tpu_impl_decl.h.in", f"tpu_impl_{name}_global, _local"),
    ]:
        path = project.include / header
        changes.append((path, insert_before_extern_end(path, fill(template, name), what), f"added: {what}"))
    changes.append((project.cases, cases_with_op(project, name), "added: a case (shape [4, 32, 36, 36])"))
    changes.append((project.python / "my_tpulang_layer.py", tpulang_module_with_op(project, name),
                    f"added: class {name} (native, tpulang)"))
    return changes


def write_all(changes):
    """Writes every change, or none: a failure restores what was written."""
    done = []  # (path, old content or None)
    try:
        for path, content, _ in changes:
            old = path.read_text() if path.exists() else None
            path.parent.mkdir(parents=True, exist_ok=True)
            # Through a temporary file in the same directory: a file is
            # either untouched or complete, never half written.
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
            with os.fdopen(handle, "w") as out:
                out.write(content)
            if old is not None:
                os.chmod(temporary, path.stat().st_mode & 0o7777)
            else:
                os.chmod(temporary, 0o644)
            os.replace(temporary, path)
            done.append((path, old))
    except OSError:
        for path, old in reversed(done):
            if old is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(old)
        raise


def report(project, name, changes):
    width = max(len(project.relative(path)) for path, _, _ in changes)
    print(f"new_custom_op: wrote the op {name}, y = x * scale + bias (float parameters scale and bias), "
          f"in {project.root}:")
    for path, _, what in changes:
        print(f"  {project.relative(path):<{width}}  {what}")
    print(f"""Build it and check it on both chips:
  rebuild_custom_lib_cmodel && rebuild_custom_firmware_cmodel bm1688
  tpu_op_check --op {name}
  run_custom_unittest
then make it your op: {name}_compute in customlayer/src/tpu_impl_{name}.c and inference_{name} in
plugin/plugin_{name}.c (docs/write-your-first-op.md).""")


def main(argv):
    parser = argparse.ArgumentParser(prog="new_custom_op", description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="the op's name: a C identifier of at most 20 characters")
    parser.add_argument("--project", default=os.environ.get("CUSTOM_LAYER_PATH") or ".",
                        help="the op project (default: $CUSTOM_LAYER_PATH, else the current directory)")
    args = parser.parse_args(argv)
    project = Project(pathlib.Path(args.project).resolve())
    try:
        check_name(args.name)
        project.check_layout()
        check_registry(project, args.name)
        check_unused(project, args.name)
        changes = planned_changes(project, args.name)
    except Refusal as why:
        print(f"new_custom_op: {why}; nothing was changed", file=sys.stderr)
        return 1
    try:
        write_all(changes)
    except OSError as e:
        print(f"new_custom_op: cannot write the op's files ({e}); nothing was changed", file=sys.stderr)
        return 1
    report(project, args.name, changes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
