#!/usr/bin/env python3
"""What one catalog figure would do to the published rows, without changing the catalog.

For each VALUE, copies sim/cost/catalog and sim/cost/frameworks to a temporary folder, sets KEY of
the hardware entry ENTRY to VALUE there, runs the published-rows test against that copy
(MESHSCOPE_CATALOG) and prints the development set's mean absolute error, its rows beyond ±10%
and the held-back rows' mean absolute error. A what-if for a rule's reader (docs/ACCURACY.md item
52), never a search: the catalog is not touched.

    scripts/catalog_whatif.py ENTRY KEY VALUE [VALUE ...] [--build BUILD_DIR]
    scripts/catalog_whatif.py h100-sxm efficiency.sustained 0.80 0.848 0.878

Exit status: 0; 1 when the test printed no rows; 2 on a usage error (an unknown entry or key, a
value that is not a number, no test program).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
def usage_error(message):
    print(f"catalog_whatif.py: {message}", file=sys.stderr)
    sys.exit(2)


ROW = re.compile(r"^(\S+)\.json\s+\S+\s+\S+\s+predicted step .*?error ([+-][0-9.]+)%$")
HELD = re.compile(r"^(\S+)\.json\s+residual ")


def evaluate(exe, entry, key, value):
    with tempfile.TemporaryDirectory(prefix="meshscope-whatif.") as tmp:
        catalog = os.path.join(tmp, "catalog")
        shutil.copytree(os.path.join(ROOT, "sim", "cost", "catalog"), catalog)
        shutil.copytree(os.path.join(ROOT, "sim", "cost", "frameworks"),
                        os.path.join(tmp, "frameworks"))
        path = os.path.join(catalog, entry + ".json")
        if not os.path.isfile(path):
            usage_error(f"no hardware entry '{entry}' in sim/cost/catalog")
        j = json.load(open(path))
        node = j
        *parents, last = key.split(".")
        for p in parents:
            node = node.get(p) if isinstance(node, dict) else None
        if not isinstance(node, dict) or last not in node:
            usage_error(f"{entry} has no key '{key}'")
        node[last] = float(value)
        json.dump(j, open(path, "w"), indent=1)
        out = subprocess.run([exe, "--gtest_filter=PredictPublished.*"], cwd=ROOT,
                             capture_output=True, text=True,
                             env=dict(os.environ, MESHSCOPE_CATALOG=catalog)).stdout
    errors, held = {}, set()
    for line in out.splitlines():
        if m := ROW.match(line):
            errors[m[1]] = float(m[2])
        elif m := HELD.match(line):
            held.add(m[1])
    dev = {k: v for k, v in errors.items() if k not in held}
    back = [v for k, v in errors.items() if k in held]
    if not dev or not back:
        sys.exit("catalog_whatif.py: the test printed no rows (is sim_tests up to date?)")
    beyond = ", ".join(f"{k} {v:+.2f}%" for k, v in sorted(dev.items(), key=lambda kv: kv[1])
                       if abs(v) > 10)
    print(f"{entry} {key} {value}: development {len(dev)} rows, MAE "
          f"{sum(map(abs, dev.values())) / len(dev):.2f}%, beyond ±10%: {beyond or 'none'}; "
          f"held back {len(back)} rows, MAE {sum(map(abs, back)) / len(back):.2f}%")


def main(argv):
    build = os.path.join(ROOT, "build")
    if "--build" in argv:
        i = argv.index("--build")
        if i + 1 >= len(argv):
            usage_error("--build needs a folder")
        build = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 3:
        usage_error("usage: scripts/catalog_whatif.py ENTRY KEY VALUE [VALUE ...] "
                    "[--build BUILD_DIR]")
    exe = os.path.join(build, "tests", "sim_tests")
    if not os.path.isfile(exe):
        usage_error(f"no {exe}: build it first (cmake --build build --target sim_tests)")
    entry, key, values = argv[0], argv[1], argv[2:]
    for v in values:
        try:
            float(v)
        except ValueError:
            usage_error(f"'{v}' is not a number")
        evaluate(exe, entry, key, v)


if __name__ == "__main__":
    main(sys.argv[1:])
