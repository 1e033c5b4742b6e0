#!/usr/bin/env python3
"""Fails when a test of the full suite was skipped for a reason the set-up should have removed.

CTest reports a GoogleTest skip as "not run", and its exit status is still 0:
a fixture library that was not built, an environment variable that was not
set or a tool that was not installed would turn a test into a silent skip.
The test command builds everything and installs every package, so the only
acceptable skips are those about the host's processor (an instruction set
the host lacks). Reads the JUnit file written by `ctest --output-junit`.

usage: check_skipped_tests.py JUNIT.xml
"""
import re
import sys
import xml.etree.ElementTree as ET

# Skip messages that depend on the machine, not on the set-up.
HOST_REASONS = (
    re.compile(r"^this host has no "),
    re.compile(r"^the 8-lane path is x86-only"),
    re.compile(r"^the stack limit is too large"),
)


def skip_message(output):
    """The GoogleTest skip message: the line after '<file>:<line>: Skipped'."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.endswith(": Skipped") and i + 1 < len(lines):
            return lines[i + 1].strip()
    return "(no message)"


def skipped_tests(junit_path):
    root = ET.parse(junit_path).getroot()
    for case in root.iter("testcase"):
        if case.find("skipped") is None:
            continue
        out = case.find("system-out")
        yield case.get("name"), skip_message(out.text if out is not None and out.text else "")


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        skipped = list(skipped_tests(argv[1]))
    except (OSError, ET.ParseError) as e:
        print(f"check_skipped_tests: cannot read {argv[1]}: {e}", file=sys.stderr)
        return 2
    allowed = [(n, m) for n, m in skipped if any(r.match(m) for r in HOST_REASONS)]
    refused = [(n, m) for n, m in skipped if (n, m) not in allowed]
    for name, message in allowed:
        print(f"skipped (host): {name}: {message}")
    for name, message in refused:
        print(f"skipped, not allowed: {name}: {message}", file=sys.stderr)
    if refused:
        print(f"check_skipped_tests: {len(refused)} test(s) skipped for a reason of the set-up, not of the host; "
              "a skipped test is not a pass", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
