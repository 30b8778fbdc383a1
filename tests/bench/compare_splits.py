#!/usr/bin/env python3
"""compare_splits.py - how often `prof compare` tells identical runs apart on
this machine (formats/rules.md section 6.3): the profiles of DIR are repeated
runs of one program; random sides of RUNS of them each (distinct runs,
directories of symbolic links) are compared SPLITS times with
`prof compare --format json --fail-on-regression 10`, and the share of
comparisons with some operation significant, the step time significant and
the regression check failed is printed, and beside the first, the share
with some operation at p < alpha (what each operation held to alpha alone
would flag, before operations were held together to a false discovery
rate). Nothing differs between the sides but chance, so every one of those
is a false positive.

The runs come from the machine under test, e.g. 31 of the Python tests' loop:
    for i in $(seq 31); do PYTHONPATH=build/python OMP_NUM_THREADS=1 \\
        /usr/bin/python3 tests/python/cnn.py runs/run$i.prof 200; done

usage: compare_splits.py DIR RUNS SPLITS [SEED]   (PROF: the prof binary,
default build/prof)"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

PROF = os.environ.get("PROF", "build/prof")


def side(tmp, name, runs):
    d = os.path.join(tmp, name)
    os.mkdir(d)
    for f in runs:
        os.symlink(f, os.path.join(d, os.path.basename(f)))
    return d


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.rsplit("usage: ", 1)[1])
    runs = sorted(os.path.abspath(os.path.join(sys.argv[1], f)) for f in os.listdir(sys.argv[1])
                  if f.endswith(".prof"))
    k, splits = int(sys.argv[2]), int(sys.argv[3])
    if len(runs) < 2 * k:
        sys.exit("compare_splits: %d profiles in %s, %d needed" % (len(runs), sys.argv[1], 2 * k))
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    some_op = some_p = step = failed = 0
    tmp = tempfile.mkdtemp(prefix="prof-splits-")
    try:
        for i in range(splits):
            drawn = rng.sample(runs, 2 * k)
            before = side(tmp, "b%d" % i, drawn[:k])
            after = side(tmp, "a%d" % i, drawn[k:])
            r = subprocess.run([PROF, "compare", "--format", "json", "--fail-on-regression", "10",
                                before, after], stdout=subprocess.PIPE, text=True, check=False)
            if r.returncode not in (0, 1):
                sys.exit("compare_splits: prof compare exited %d" % r.returncode)
            c = json.loads(r.stdout)
            some_op += any(op["significant"] for op in c["operations"])
            some_p += any(op["p_value"] is not None and op["p_value"] < c["options"]["alpha"]
                          for op in c["operations"])
            step += c["step_time_test"]["significant"]
            failed += c["regression"]["regressed"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d runs, %d a side, %d splits: some operation significant %.1f%% (with p < alpha "
          "%.1f%%), step time %.1f%%, regression check failed %.1f%%"
          % (len(runs), k, splits, 100.0 * some_op / splits, 100.0 * some_p / splits,
             100.0 * step / splits, 100.0 * failed / splits))


if __name__ == "__main__":
    main()
