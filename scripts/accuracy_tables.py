#!/usr/bin/env python3
"""Brings what the published rows' test checks up to date with what the model now predicts.

After a model or catalog change, the published-rows test (tests/sim/predict_published_test.cpp)
fails until six things agree with the new predictions: each row's recorded bound, the held-back
counts inside their ranges, the profiles' stored ranges (sim/cost/frameworks/*.json
"residuals"), and docs/ACCURACY.md's row tables, headline table, constant-MFU table and Ranges
table. This runs the
test once, reads what it prints (each row's error, each held-back row's residual and verdict,
each group's interval) and says what is stale; with --write it rewrites those figures in place,
and nothing else: the prose that explains a change stays the author's to write.

    scripts/accuracy_tables.py [--write] [--tight] [BUILD_DIR]     # default: build

A row's bound becomes floor(|error|) + 1 percent where the row now exceeds it (or everywhere
with --tight). The held-back verdicts depend on the ranges the profiles store, and the test reads
the build's copy of the profiles, so --write rebuilds the test (cmake --build BUILD_DIR --target
sim_tests) and runs it again until nothing more changes. Exit status: 0 when everything already
agrees, 1 when something is stale (after --write: when something was rewritten), 2 on a usage
error.
"""
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST = os.path.join(ROOT, "tests", "sim", "predict_published_test.cpp")
DOC = os.path.join(ROOT, "docs", "ACCURACY.md")
PROFILES = os.path.join(ROOT, "sim", "cost", "frameworks")

ROW = re.compile(r"^(\S+)\.json\s+\S+\s+\S+\s+predicted step .*?error ([+-][0-9.]+)%$")
HELD = re.compile(r"^(\S+)\.json\s+residual ([+-][0-9.]+)%, range .*?: (inside|outside)"
                  r"(, beyond the range's longest sequence)?$")
GROUP = re.compile(r"^  (\S+) on (\S+): (\d+) rows, low (-?[0-9.]+), high (-?[0-9.]+)$")
CONSTANT = re.compile(r"^(development|held back): model ([0-9.]+)%, constant 50% MFU ([0-9.]+)%, "
                      r"best constant ([0-9.]+)% MFU ([0-9.]+)%$")


def run_test(build):
    exe = os.path.join(build, "tests", "sim_tests")
    if not os.path.isfile(exe):
        sys.exit(f"accuracy_tables.py: no {exe}: build it first "
                 "(cmake --build build -j2 --target sim_tests) or name the build directory")
    out = subprocess.run([exe, "--gtest_filter=PredictPublished.*"], cwd=ROOT,
                         capture_output=True, text=True).stdout
    errors, held, groups, constant = {}, {}, {}, {}
    for line in out.splitlines():
        if m := ROW.match(line):
            errors[m[1]] = float(m[2])
        elif m := HELD.match(line):
            held[m[1]] = (float(m[2]), m[3] == "inside", bool(m[4]))
        elif m := GROUP.match(line):
            groups[(m[1], m[2])] = (int(m[3]), float(m[4]), float(m[5]))
        elif m := CONSTANT.match(line):
            constant[m[1]] = (m[2], m[3], m[5], m[4])  # model, 50%, best, its constant
    if not errors or not held or not groups or len(constant) != 2:
        sys.exit("accuracy_tables.py: the test printed no rows, held-back verdicts, ranges or "
                 "constant-MFU comparison; "
                 "its output:\n" + out[-2000:])
    return errors, held, groups, constant


def percent(x):
    """A percentage to the tenth as docs/ACCURACY.md writes it ("−3.9%", "+5.4%")."""
    v = round(x, 1) or 0.0
    return ("−" if v < 0 else "+") + f"{abs(v):.1f}%"


class File:
    def __init__(self, path):
        self.path, self.text = path, open(path, encoding="utf-8").read()
        self.original = self.text

    def changed(self):
        return self.text != self.original

    def save(self):
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(self.text)


def update_test(test, errors, held, tight):
    def bound(m):
        name, old = m[1][:-len(".json")], float(m[3])
        e = abs(errors.get(name, 0))
        want = (math.floor(e) + 1) / 100
        new = want if tight or e > 100 * old else old
        return m[0] if new == old else m[0][:m.start(3) - m.start(0)] + f"{new:.2f}"
    test.text = re.sub(r'\{"([^"]+\.json)", Metric::k\w+, ([0-9.]+), \s*([0-9.]+)', bound,
                       test.text)
    inside = sum(v[1] for v in held.values())
    beyond_inside = sum(v[1] and v[2] for v in held.values())
    for name, value in (("kHeldBackInsideTheirRange", inside),
                        ("kHeldBackBeyondAndInside", beyond_inside),
                        ("kHeldBackBeyondTheirLongestSequence", sum(v[2] for v in held.values()))):
        test.text = re.sub(rf"(constexpr int {name} = )\d+;", rf"\g<1>{value};", test.text)


def update_profiles(groups):
    files = {}
    for (framework, hardware), (rows, low, high) in sorted(groups.items()):
        path = os.path.join(PROFILES, framework + ".json")
        f = files.setdefault(path, File(path))
        pattern = re.compile(r'("%s": \{"low": )(-?[0-9.]+)(, "high": )(-?[0-9.]+)(, "rows": )(\d+)'
                             % re.escape(hardware))
        f.text = pattern.sub(lambda m: f"{m[1]}{low!r}{m[3]}{high!r}{m[5]}{rows}", f.text, count=1)
        json.loads(f.text)  # still a profile
    return list(files.values())


def update_doc(doc, errors, held, groups, constant):
    dev = [e for name, e in errors.items() if name not in held]
    back = [errors[name] for name in held]
    lines = doc.text.split("\n")
    for i, line in enumerate(lines):
        if not line.startswith("| "):
            continue
        cells = line[2:-2].split(" | ")
        name = re.sub(r"^\*set \d+:\* ", "", cells[0])
        if name in errors and len(cells) == 6:  # development: the last cell is the error now
            cells[5] = percent(errors[name])
        elif name in errors and len(cells) == 7:  # held back: error now, inside the range?
            residual, inside, _ = held[name]
            cells[5] = percent(errors[name])
            cells[6] = ("yes" if inside else "no") + f" (residual {percent(residual)})"
        elif cells[0] in ("development", "held back") and len(cells) == 5:
            rows = dev if cells[0] == "development" else back
            cells[1] = str(len(rows))
            cells[2] = f"{sum(abs(e) for e in rows) / len(rows):.2f}%"
            cells[3] = str(sum(abs(e) > 10 for e in rows))
            if cells[0] == "held back":
                cells[4] = str(sum(v[1] for v in held.values()))
        elif cells[0] in constant and len(cells) == 6:  # the model beside a constant MFU
            rows = dev if cells[0] == "development" else back
            cells[1] = str(len(rows))
            cells[2:6] = [v + "%" for v in constant[cells[0]]]
        elif len(cells) == 7 and (cells[0], cells[1]) in groups:  # the Ranges table
            rows, low, high = groups[(cells[0], cells[1])]
            cells[2:6] = [str(rows), percent(50 * (low + high)), percent(100 * low),
                          percent(100 * high)]
        else:
            continue
        lines[i] = "| " + " | ".join(cells) + " |"
    doc.text = "\n".join(lines)


def main():
    args = sys.argv[1:]
    if any(a in ("-h", "--help") for a in args):
        print(__doc__.strip())
        return 0
    write, tight = "--write" in args, "--tight" in args
    rest = [a for a in args if a not in ("--write", "--tight")]
    if len(rest) > 1 or any(a.startswith("-") for a in rest):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    build = os.path.abspath(rest[0] if rest else os.path.join(ROOT, "build"))
    rewritten = set()
    for _ in range(4):
        errors, held, groups, constant = run_test(build)
        test, doc = File(TEST), File(DOC)
        update_test(test, errors, held, tight)
        update_doc(doc, errors, held, groups, constant)
        stale = [f for f in [test, doc] + update_profiles(groups) if f.changed()]
        if not stale or not write:
            break
        for f in stale:
            f.save()
            rewritten.add(os.path.relpath(f.path, ROOT))
        # The test reads the build's copy of the profiles and is compiled with its bounds.
        subprocess.run(["cmake", "--build", build, "--target", "sim_tests", "-j",
                        str(os.cpu_count() or 2)], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    else:
        sys.exit("accuracy_tables.py: the figures did not settle after four rebuilds")
    for path in sorted(rewritten):
        print("rewrote " + path)
    for f in ([] if write else stale):
        print("stale: " + os.path.relpath(f.path, ROOT))
    if not rewritten and not stale:
        print("accuracy tables: up to date")
    return 1 if rewritten or stale else 0


if __name__ == "__main__":
    sys.exit(main())
