#!/usr/bin/env python3
"""check_gpu_join.py - compares prof's join of GPU work to the code that
launched it (rules.md §3.2), in a report of `prof analyze --format json
--top 0`, with what tests/support/gpu_join.py found in the same trace.

Usage: check_gpu_join.py [--self-only] REPORT.json JOIN.json
--self-only leaves the total time and kernels out: for the recorder's
files that time NVTX ranges beside its own regions, two nestings on one
thread whose totals the call tree places by depth (rules.md §3.2).
Prints one line per mismatch and exits 1 if there is any, else 0:
  - every CPU operation's gpu_self_ns and gpu_ns within 0.5% of the join's
    self and total time, gpu_kernels equal to its total kernels (an
    operation the join has no launch in has 0), and no operation of the
    join missing from the report;
  - summary.launches: records, joined, outside_ns and the short kernels
    equal;
  - summary.launches.all against the join's HTA launch statistics: count,
    cpu_over_cutoff and delay_over_cutoff equal, each mean within 0.01%,
    min and max equal, the quartiles and p95 within 2% (the model's
    quantiles come from a 1% sketch)."""
import json
import sys


def near(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-9


def check(rep, join, self_only=False):
    bad = []
    ops = {o["name"]: o for o in rep["operations"] if o["kind"] != "gpu"}
    for name, o in ops.items():
        want = join["ops"].get(name, [0, 0, 0, 0])
        got = (o.get("gpu_self_ns", 0), o.get("gpu_ns", 0), o.get("gpu_kernels", 0))
        if not near(got[0], want[0], .005):
            bad.append(f"{name}: gpu_self_ns {got[0]}, join {want[0]}")
        if not self_only and not near(got[1], want[1], .005):
            bad.append(f"{name}: gpu_ns {got[1]}, join {want[1]}")
        if not self_only and got[2] != want[3]:
            bad.append(f"{name}: gpu_kernels {got[2]}, join {want[3]}")
    bad += [f"{name}: in the join {v}, not among the report's operations"
            for name, v in join["ops"].items() if name not in ops and any(v)]
    launches = rep["summary"]["launches"]
    for k in ("records", "joined", "joined_ns", "outside_ns", "short_kernels", "short_kernel_ns"):
        if launches[k] != join[k]:
            bad.append(f"launches.{k} {launches[k]}, join {join[k]}")
    got, want = launches["all"], join["launch"]
    for k in ("count", "cpu_over_cutoff", "delay_over_cutoff"):
        if got[k] != want[k]:
            bad.append(f"launches.all.{k} {got[k]}, join {want[k]}")
    for d in ("cpu", "gpu_time", "delay"):
        for k, rel in (("mean_ns", 1e-4), ("min_ns", 0), ("max_ns", 0), ("p25_ns", .02),
                       ("p50_ns", .02), ("p75_ns", .02), ("p95_ns", .02)):
            if not near(got[d][k], want[d][k], rel):
                bad.append(f"launches.all.{d}.{k} {got[d][k]}, join {want[d][k]}")
    return bad


def main():
    args = [a for a in sys.argv[1:] if a != "--self-only"]
    with open(args[0]) as f:
        rep = json.load(f)
    with open(args[1]) as f:
        join = json.load(f)
    bad = check(rep, join, "--self-only" in sys.argv)
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
