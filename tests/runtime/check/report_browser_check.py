#!/usr/bin/env python3
"""report_in_browser: tpu_op_check --report opened in a real browser.

Writes a report of the fixture ops (tests/runtime/loader/fixtures/good: fx_cast
passes through a load, a BDC cast and a store; fx_fault stops with SIGFPE),
then has headless Chromium render it:

  --screenshot  the PNG must not be an empty page: many non-white pixels where
                the case table is, the red of a failure's badge, and the GDMA's
                and the BDC's colours of the timeline pictures over more than a
                legend's few pixels;
  --dump-dom    the page Chromium parsed holds the table's rows and the
                pictures.

Chromium is a test-only package (scripts/setup.sh --tests installs it): when
it is missing the test fails, saying so.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

# The engines' colours in the timeline (runtime/emulator/profile.cc) and a
# failure's badge (runtime/check/html_report.cc).
GDMA = (0x4E, 0x79, 0xA7)
BDC = (0xF2, 0x8E, 0x2B)
FAIL_RED = (0xC0, 0x39, 0x2B)
WIDTH, HEIGHT = 1200, 2000


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    fail("chromium is not installed: the report cannot be checked in a browser. Install the test-only "
         "packages with `sh scripts/setup.sh --tests` (scripts/test.sh does)" +
         (" (CI=true: a missing browser fails the run)" if os.environ.get("CI") == "true" else ""))


def write_report(args, work):
    cases = os.path.join(work, "cases.json")
    with open(cases, "w") as f:
        json.dump({"cases": [
            {"op": "fx_fault", "shapes": [[8]], "dtypes": ["fp32"], "global_only": True},
            {"op": "fx_cast", "shapes": [[4, 16, 8, 8]], "dtypes": ["fp32"], "params": {"to": 1},
             "out_dtypes": ["fp16"], "criterion": "vendor"}]}, f)
    report = os.path.join(work, "report.html")
    if os.path.exists(report):
        os.remove(report)
    run = subprocess.run([args.op_check, "--chip", "bm1684x", "--allow-unchecked", "--lib-dir", args.fixtures,
                          "--cases", cases, "--report", report], capture_output=True, text=True, timeout=300)
    if run.returncode != 1 or not os.path.exists(report):
        fail("tpu_op_check --report: expected exit status 1 (fx_fault fails) and a report, got %d:\n%s%s"
             % (run.returncode, run.stdout, run.stderr))
    return report


def chromium(browser, work, *flags):
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--user-data-dir=" + os.path.join(work, "chromium-profile")] + list(flags)
    run = subprocess.run(command, capture_output=True, text=True, timeout=180)
    if run.returncode != 0:
        fail("%s exited with %d:\n%s" % (" ".join(command), run.returncode, run.stderr[-4000:]))
    return run.stdout


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(data, width, height, bpp):
    """The PNG's scanlines without their filters (PNG spec, section 9)."""
    stride = width * bpp
    rows, prev, pos = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = data[pos], bytearray(data[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + paeth(a, b, c)) & 0xFF
        rows.append(line)
        prev = line
    return rows


def read_png(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        blob = f.read()
    if blob[:8] != b"\x89PNG\r\n\x1a\n":
        fail(path + " is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(blob):
        length, kind = struct.unpack(">I4s", blob[pos:pos + 8])
        body = blob[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        fail("unexpected PNG format: depth %d, colour type %d, interlace %d" % (depth, colour, interlace))
    bpp = 3 if colour == 2 else 4
    rows = unfilter(zlib.decompress(idat), width, height, bpp)
    return width, height, [[tuple(r[x * bpp:x * bpp + 3]) for x in range(width)] for r in rows]


def near(pixel, colour, tolerance=10):
    return all(abs(p - c) <= tolerance for p, c in zip(pixel, colour))


def check_screenshot(path):
    width, height, pixels = read_png(path)
    if (width, height) != (WIDTH, HEIGHT):
        fail("the screenshot is %dx%d, expected %dx%d" % (width, height, WIDTH, HEIGHT))
    # The title, the summary line and the case table fill the top of the page.
    top = [p for row in pixels[80:260] for p in row[:900]]
    ink = sum(1 for p in top if min(p) < 200)
    counts = {name: sum(1 for row in pixels for p in row if near(p, colour))
              for name, colour in (("GDMA", GDMA), ("BDC", BDC), ("failure red", FAIL_RED))}
    print("non-white pixels in the table region: %d of %d; %s" % (ink, len(top), counts))
    if ink < len(top) // 50:
        fail("the table region is (nearly) blank: %d dark pixels of %d" % (ink, len(top)))
    # A legend square is 12 x 12 pixels: the boxes of the commands make many more.
    for name, least in (("GDMA", 1000), ("BDC", 600), ("failure red", 100)):
        if counts[name] < least:
            fail("too few pixels of the %s colour (%d < %d): a picture or badge is missing"
                 % (name, counts[name], least))


def check_dom(dom):
    wanted = ['<table class="cases">', "<td>fx_cast</td>", "<td>fx_fault</td>", "global backend",
              "global firmware", 'class="picture timeline"', "SIGFPE", 'class="histogram"']
    missing = [w for w in wanted if w not in dom]
    if missing:
        fail("the DOM Chromium parsed lacks %s" % missing)
    rows = dom.count('<tr class="passed">') + dom.count('<tr class="failed">')
    if rows != 3:
        fail("expected 3 case rows (fx_fault stopped, fx_cast backend and firmware), found %d" % rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--op-check", required=True)
    parser.add_argument("--fixtures", required=True, help="the good fixture set's library directory")
    parser.add_argument("--work", required=True, help="a scratch directory")
    args = parser.parse_args()
    browser = find_chromium()
    os.makedirs(args.work, exist_ok=True)
    report = write_report(args, args.work)
    url = "file://" + os.path.abspath(report)
    shot = os.path.join(args.work, "report.png")
    if os.path.exists(shot):
        os.remove(shot)
    chromium(browser, args.work, "--screenshot=" + shot, "--window-size=%d,%d" % (WIDTH, HEIGHT), url)
    if not os.path.exists(shot):
        fail("chromium wrote no screenshot")
    check_screenshot(shot)
    check_dom(chromium(browser, args.work, "--dump-dom", url))
    print("PASS: %s renders its table, badges and timelines in %s" % (report, browser))


if __name__ == "__main__":
    main()
