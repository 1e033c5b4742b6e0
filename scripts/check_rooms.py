#!/usr/bin/env python3
"""check_rooms.py: the project's floors and the runtime's rooms only look down.

The floors, bottom-up: cmodel/ (the emulator), kernel/ (the tpu-kernel API
over it), runtime/ (the host side). A file may include headers of its own
floor and of the floors below, never of a floor above. Inside runtime/, the
rooms are ordered the same way (runtime/CMakeLists.txt, TPU_RUNTIME_ROOMS,
passed here with --rooms): a room may include its own headers and those of
the rooms before it.

Each quoted #include is resolved as the compiler would find it: next to
the including file, then under the project's include roots (the project
root, runtime/ for "room/private.h", every <dir>/include). System headers
and generated headers resolve to nothing here and are not judged.

Prints one line per breach ("file:line: includes X, which is in room Y,
above room Z") and exits 1 if there is any.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
FLOORS = ["cmodel", "kernel", "runtime"]


def include_roots(root: pathlib.Path):
    roots = [root, root / "runtime"]
    # Build trees and install prefixes hold copies of the headers: not sources.
    roots += sorted(p for p in root.glob("*/include")
                    if p.is_dir() and not p.parent.name.startswith(("build", "install")))
    roots += sorted(p for p in root.glob("runtime/*/include") if p.is_dir())
    return roots


def resolve(name: str, including: pathlib.Path, roots):
    candidate = including.parent / name
    if candidate.is_file():
        return candidate.resolve()
    for r in roots:
        for candidate in (r / name, r / (name + ".in")):  # .in: a header CMake generates from it
            if candidate.is_file():
                return candidate.resolve()
    return None


def place(path: pathlib.Path, root: pathlib.Path, rooms):
    """(floor index, room index) of a project file, or None outside the floors."""
    parts = path.relative_to(root).parts
    if not parts or parts[0] not in FLOORS:
        return None
    floor = FLOORS.index(parts[0])
    room = rooms.index(parts[1]) if parts[0] == "runtime" and len(parts) > 1 and parts[1] in rooms else -1
    return floor, room


def describe(path: pathlib.Path, root: pathlib.Path, rooms):
    floor, room = place(path, root, rooms)
    return f"room runtime/{rooms[room]}" if room >= 0 else f"floor {FLOORS[floor]}/"


def breaches(root: pathlib.Path, rooms):
    roots = include_roots(root)
    for floor_name in FLOORS:
        for source in sorted((root / floor_name).rglob("*")):
            if source.suffix not in (".h", ".hpp", ".c", ".cc", ".in", ".def") or not source.is_file():
                continue
            here = place(source.resolve(), root, rooms)
            for number, line in enumerate(source.read_text(errors="replace").splitlines(), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = resolve(match.group(1), source, roots)
                there = place(target, root, rooms) if target else None
                if there is None or there[0] < here[0]:
                    continue
                above = there[0] > here[0] or (here[0] == FLOORS.index("runtime") and there[1] > here[1])
                if above:
                    yield (f"{source.relative_to(root)}:{number}: includes \"{match.group(1)}\" "
                           f"({target.relative_to(root)}), which is in {describe(target, root, rooms)}, "
                           f"above {describe(source.resolve(), root, rooms)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent))
    parser.add_argument("--rooms", nargs="+", required=True, help="the runtime's rooms, bottom-up")
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    found = list(breaches(root, args.rooms))
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) reach up a floor or a room (see scripts/check_rooms.py)")
        return 1
    print(f"floors {' < '.join(FLOORS)} and rooms {' < '.join(args.rooms)}: every include looks down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
