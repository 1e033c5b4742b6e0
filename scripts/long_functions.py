#!/usr/bin/env python3
"""long_functions.py: the function bodies longer than a limit in C/C++ files.

    scripts/long_functions.py [--max N] PATH...

PATH is a file or a directory (searched for .c .cc .cpp .cxx .h .hh .hpp
.inl). Prints one line per function whose body is longer than N lines
(default 120), longest first per file:

    runtime/model/model_build.cc:212: build_model: 348 lines

The line is where the function's declaration starts; the length counts the
lines from its opening brace to its closing one, both included. A lambda,
a local class or a nested block is part of its enclosing function; a
lambda at namespace scope counts as a function of its own. Exits 1 if
any body is longer than N, 0 otherwise.

The reading is brace counting, not parsing: comments, string and character
literals (raw strings and digit separators too) and preprocessor lines are
blanked first, then each '{' at namespace or class scope is classified by
the text before it (since the last ';', '{' or '}'): a namespace, class,
struct, union, enum or extern "C" opens a scope read the same way; a
header ending in ')' (or in a qualifier, a trailing return type, a
constructor's initialiser list) opens a function body; anything else (an
initialiser) is skipped whole. Braces inside parentheses (default
arguments) and a constructor's member initialisers belong to the header.
"""
import argparse
import pathlib
import re
import sys

SUFFIXES = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".inl"}
RAW_PREFIXES = {"R", "u8R", "uR", "UR", "LR"}
QUALIFIERS = {"const", "volatile", "noexcept", "override", "final", "mutable", "try", "&", "&&"}
SCOPE_KEYWORDS = {"namespace", "class", "struct", "union", "enum"}


def blank(text: str) -> str:
    """The text with comments, literals' contents and preprocessor lines as
    spaces (newlines kept, so offsets and line numbers stay)."""
    out = list(text)
    n = len(text)
    i = 0
    line_start = True  # only whitespace so far on this line

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if line_start and c == "#":  # a directive, with its continuation lines
            j = i
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                if text.startswith("/*", j):  # a block comment may span lines
                    end = text.find("*/", j + 2)
                    j = n if end < 0 else end + 2
                    continue
                j += 1
            wipe(i, j)
            i = j
            continue
        line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            j = n if end < 0 else end + 2
            wipe(i, j)
            i = j
            continue
        if c == '"' or c == "'":
            # The identifier-ish run just before: a raw string's prefix, or
            # the number a digit separator sits in.
            k = i
            while k > 0 and (text[k - 1].isalnum() or text[k - 1] in "_."):
                k -= 1
            run = text[k:i]
            if c == "'" and run[:1].isdigit():
                i += 1  # 1'000'000
                continue
            if c == '"' and run in RAW_PREFIXES:
                open_paren = text.find("(", i + 1)
                if open_paren >= 0:
                    delim = text[i + 1:open_paren]
                    end = text.find(")" + delim + '"', open_paren + 1)
                    j = n if end < 0 else end + len(delim) + 2
                    wipe(i + 1, j - 1)
                    i = j
                    continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            wipe(i + 1, j - 1)
            i = j
            continue
        i += 1
    return "".join(out)


def matching(text: str, i: int) -> int:
    """Offset of the '}' closing the '{' at i (len(text) if unbalanced)."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text)


def top_level(header: str) -> str:
    """The header with the insides of (), [] and {} dropped: 'f(int a) : b{1}'
    -> 'f() : b{}'."""
    out = []
    depth = 0
    for c in header:
        if c in "([{":
            if depth == 0:
                out.append(c)
            depth += 1
        elif c in ")]}":
            depth = max(depth - 1, 0)
            if depth == 0:
                out.append(c)
        elif depth == 0:
            out.append(c)
    return "".join(out)


LEADING_NOISE = re.compile(r"^\s*(?:(?:public|private|protected)\s*:(?!:)|template\s*<[^;{}]*?>(?=\s*[A-Za-z_])"
                           r"|\[\[\]\]|typedef\b|export\b|inline\b|alignas\(\)|__attribute__\(\))\s*")
TOKEN = re.compile(r"[A-Za-z_]\w*|&&|->|::|\S")


def strip_leading(top: str) -> str:
    while True:
        stripped = LEADING_NOISE.sub("", top, count=1)
        if stripped == top:
            return top.strip()
        top = stripped


def is_scope(top: str) -> bool:
    """A namespace, a class-like body or extern "C" { ... }."""
    # At the end: a macro call without ';' may come before.
    if re.search(r'(?:^|[^\w:])namespace(?:\s+[\w:]+)?\s*$', top) or re.search(r'\bextern\s*"\s*"\s*$', top):
        return True
    words = TOKEN.findall(top)
    if not words or words[0] not in SCOPE_KEYWORDS:
        return False
    # 'struct foo *make(void) {' (C) is a function returning a struct.
    return re.match(r'\w+\s+\w+[\s*&]+\w+\s*\(', top) is None


def in_initialiser_list(top: str) -> bool:
    return re.search(r"\)\s*(?:noexcept(?:\(\))?\s*)?:(?!:)", top) is not None


def is_function(top: str) -> bool:
    tokens = TOKEN.findall(top)
    if "(" not in tokens or not tokens:
        return False
    last = tokens[-1]
    if last in (")", "}") or last in QUALIFIERS:
        return True
    after = top[top.rfind(")") + 1:]
    return "->" in after or re.search(r"\brequires\b", after) is not None


def name_of(top: str) -> str:
    """Best effort: the identifier before the first '(' (the variable for a
    lambda at namespace scope)."""
    head = top[:top.find("(")] if "(" in top else top
    if "=" in head and not re.search(r"\boperator\s*\S*=", head):
        head = head[:head.find("=")]
    match = re.search(r"(operator\s*[^\s(]+|~?[A-Za-z_][\w:~<>]*)\s*\[?\]?\s*$", head.strip())
    return match.group(1) if match else "?"


def functions(text: str):
    """(declaration offset, name, '{' offset, '}' offset) of each function."""
    found = []

    def scope(i: int) -> int:
        """Reads a namespace or class scope from i; returns the offset of its '}'."""
        header = i
        depth = 0  # parentheses in the current header
        while i < len(text):
            c = text[i]
            if c == "(":
                depth += 1
            elif c == ")":
                depth = max(depth - 1, 0)
            elif c == ";" and depth == 0:
                header = i + 1
            elif c == "}":
                return i
            elif c == "{":
                if depth > 0:  # f(Options o = {}) or a braced argument
                    i = matching(text, i) + 1
                    continue
                top = strip_leading(top_level(text[header:i]))
                tokens = TOKEN.findall(top)
                if is_scope(top):
                    i = scope(i + 1) + 1
                    header = i
                    continue
                if in_initialiser_list(top) and tokens and (tokens[-1] == ">" or re.match(r"\w", tokens[-1])):
                    i = matching(text, i) + 1  # Foo() : member_{...}
                    continue
                end = matching(text, i)
                if is_function(top):
                    start = header + (len(text[header:i]) - len(text[header:i].lstrip()))
                    found.append((start, name_of(top), i, end))
                i = end + 1
                header = i
                continue
            i += 1
        return i

    scope(0)
    return found


def long_functions(path: pathlib.Path, limit: int):
    text = path.read_text(errors="replace")
    clean = blank(text)
    result = []
    for start, name, open_brace, close_brace in functions(clean):
        length = clean.count("\n", open_brace, close_brace) + 1
        if length > limit:
            result.append((clean.count("\n", 0, start) + 1, name, length))
    return sorted(result, key=lambda r: (-r[2], r[0]))


def sources(paths):
    for p in paths:
        p = pathlib.Path(p)
        if p.is_dir():
            yield from sorted(f for f in p.rglob("*") if f.suffix in SUFFIXES and f.is_file())
        else:
            yield p


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=120, help="longest body allowed, in lines (default 120)")
    parser.add_argument("paths", nargs="+", help="C/C++ files or directories")
    args = parser.parse_args()
    any_long = False
    for path in sources(args.paths):
        for line, name, length in long_functions(path, args.max):
            print(f"{path}:{line}: {name}: {length} lines")
            any_long = True
    return 1 if any_long else 0


if __name__ == "__main__":
    sys.exit(main())
