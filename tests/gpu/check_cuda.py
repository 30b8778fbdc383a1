"""check_cuda.py - tests/gpu/cuda_train.cu's profile against what the program
did, for tests/gpu/device-check.sh.

    python3 check_cuda.py TRUTH.json EXPORT.jsonl REPORT.json MD

TRUTH.json is what cuda_train wrote (its counts), EXPORT.jsonl the profile
as `prof export --format json` wrote it, REPORT.json `prof analyze --format
json --top 0`. The events of the export are counted here, independently of
the analysis, and checked against the program's counts; the report's
figures are then checked against both. Prints "ok NAME (detail)" or "not ok
NAME - detail" per check and writes a Markdown table of the figures to MD.
Exit status: 0 all passed, 1 a check failed.
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from gpu_union import union  # noqa: E402  the union the Kineto checks take

MIB = 1 << 20


class Checks:
    def __init__(self):
        self.failed = 0
        self.rows = []  # (figure, program, profile, report)

    def check(self, name, good, detail):
        if good:
            print("ok %s (%s)" % (name, detail))
        else:
            print("not ok %s - %s" % (name, detail))
            self.failed += 1

    def row(self, figure, program, export, report):
        self.rows.append((figure, program, export, report))


def load_export(path):
    ev = collections.defaultdict(list)
    end = None
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            if o["type"] == "end":
                end = o
            else:
                ev[o["type"]].append(o)
    return ev, end


def short(name):
    return name.split("(")[0]


def check_kernels(c, truth, ev):
    kernels = ev["gpu_kernel"]
    by_stream = collections.defaultdict(collections.Counter)
    for k in kernels:
        by_stream[k["stream"]][short(k["name"])] += 1
    names = collections.Counter(short(k["name"]) for k in kernels)
    for name, want in truth["kernels"].items():
        c.check("kernel-count-" + name, names[name] == want, "%d recorded, %d launched" % (names[name], want))
    full = {k["name"] for k in kernels}
    c.check("kernel-names-demangled", "scale_kernel(float*, float, int)" in full,
            "names: %s" % ", ".join(sorted(full)))
    # the two streams: one ran scale and reduce, the other shift
    want = {
        "compute": collections.Counter({"scale_kernel": truth["kernels"]["scale_kernel"],
                                        "reduce_kernel": truth["kernels"]["reduce_kernel"]}),
        "data": collections.Counter({"shift_kernel": truth["kernels"]["shift_kernel"]}),
    }
    for label, counts in want.items():
        found = [s for s, got in by_stream.items() if got == counts]
        c.check("stream-" + label, len(found) == 1,
                "streams and their kernels: %s" % {s: dict(v) for s, v in by_stream.items()})
        if found:
            c.row("kernels on stream %s (id %s)" % (label, found[0]), truth["streams"][label]["kernels"],
                  sum(by_stream[found[0]].values()), "")
            ids_match = found[0] == truth["streams"][label]["id"]
            print("# stream %s: CUPTI's id %s, cudaStreamGetId %s (%s)" % (
                label, found[0], truth["streams"][label]["id"], "same" if ids_match else "differ"))
    # each stream runs its work in order: its records never overlap
    worst = 0
    per = collections.defaultdict(list)
    for k in kernels + ev["gpu_memcpy"] + ev["gpu_memset"]:
        per[(k["device"], k["stream"])].append((k["start_ns"], k["start_ns"] + k["dur_ns"]))
    for recs in per.values():
        recs.sort()
        for (_, e0), (s1, _) in zip(recs, recs[1:]):
            worst = max(worst, e0 - s1)
    c.check("streams-in-order", worst <= 0, "largest overlap of two records on one stream: %d ns" % worst)


def check_launches(c, ev):
    """Every kernel, copy and memset joins its runtime call by correlation
    id, and starts after that call began (CUPTI's clock, converted once)."""
    api = {}
    for a in ev["api"]:
        if a.get("correlation"):
            api[a["correlation"]] = a
    work = ev["gpu_kernel"] + ev["gpu_memcpy"] + ev["gpu_memset"]
    unjoined = [w for w in work if w.get("correlation") not in api]
    c.check("launch-join", not unjoined, "%d of %d GPU records without their runtime call" % (len(unjoined), len(work)))
    early = [api[w["correlation"]]["start_ns"] - w["start_ns"] for w in work
             if w.get("correlation") in api and w["start_ns"] < api[w["correlation"]]["start_ns"]]
    c.check("launch-before-work", not early,
            "%d records start before their launch (worst %d ns)" % (len(early), max(early, default=0)))
    launches = sum(1 for a in ev["api"] if a["name"].startswith("cudaLaunchKernel"))
    c.row("cudaLaunchKernel calls", len(ev["gpu_kernel"]), launches, "")


def check_copies(c, truth, ev, gpu):
    by_kind = collections.defaultdict(lambda: [0, 0])
    for m in ev["gpu_memcpy"]:
        by_kind[m["copy_kind"]][0] += 1
        by_kind[m["copy_kind"]][1] += m["bytes"]
    for kind, key in (("HtoD", "htod"), ("DtoH", "dtoh")):
        got, want = by_kind[kind], [truth[key]["count"], truth[key]["bytes"]]
        c.check("copies-" + kind, got == want, "%d copies of %d bytes recorded, %d of %d made" % (
            got[0], got[1], want[0], want[1]))
        c.row("%s copies / MiB" % kind, "%d / %.0f" % (want[0], want[1] / MIB),
              "%d / %.0f" % (got[0], got[1] / MIB), "")
    others = {k: v for k, v in by_kind.items() if k not in ("HtoD", "DtoH")}
    c.check("copies-no-others", not others, "other copies: %s" % others)
    total = sum(v[1] for v in by_kind.values())
    c.check("report-memcpy-bytes", gpu["memcpy_bytes"] == total and gpu["memcpy_count"] == len(ev["gpu_memcpy"]),
            "report %d bytes in %d copies, export %d in %d" % (gpu["memcpy_bytes"], gpu["memcpy_count"], total,
                                                            len(ev["gpu_memcpy"])))
    sets = ev["gpu_memset"]
    got = [len(sets), sum(m["bytes"] for m in sets)]
    want = [truth["memsets"]["count"], truth["memsets"]["bytes"]]
    c.check("memsets", got == want, "%d memsets of %d bytes recorded, %d of %d made" % (got[0], got[1], want[0], want[1]))
    c.check("report-memsets", gpu["memset_count"] == len(sets), "report %d, export %d" % (gpu["memset_count"], len(sets)))
    c.row("memsets", want[0], got[0], gpu["memset_count"])


def check_syncs(c, truth, ev, report):
    kinds = collections.Counter(s["sync_kind"] for s in ev["sync"])
    c.check("syncs-device", kinds["device"] == truth["device_syncs"],
            "%d cudaDeviceSynchronize recorded, %d made" % (kinds["device"], truth["device_syncs"]))
    c.check("syncs-stream", kinds["stream"] == truth["stream_syncs"],
            "%d cudaStreamSynchronize recorded, %d made" % (kinds["stream"], truth["stream_syncs"]))
    blocking = sum(n for k, n in kinds.items() if k != "stream_wait")
    got = report["summary"]["sync"]["count"]
    c.check("report-syncs", got == blocking, "report %d, export %d blocking (%s)" % (got, blocking, dict(kinds)))
    c.row("syncs (device + stream)", truth["device_syncs"] + truth["stream_syncs"], blocking, got)


def check_busy(c, truth, ev, gpu):
    work = ev["gpu_kernel"] + ev["gpu_memcpy"] + ev["gpu_memset"]
    busy = sum(b - a for a, b in union([(w["start_ns"], w["start_ns"] + w["dur_ns"])
                                         for w in work if w["device"] == gpu["device"]]))
    kernel_ns = sum(k["dur_ns"] for k in ev["gpu_kernel"] if k["device"] == gpu["device"])
    c.check("report-busy", gpu["busy_ns"] == busy, "report %d ns, union of the export's records %d ns" % (
        gpu["busy_ns"], busy))
    c.check("report-kernel-ns", gpu["kernel_ns"] == kernel_ns, "report %d ns, export %d ns" % (gpu["kernel_ns"], kernel_ns))
    c.check("report-kernels", gpu["kernels"] == len(ev["gpu_kernel"]), "report %d, export %d" % (
        gpu["kernels"], len(ev["gpu_kernel"])))
    c.row("kernels", sum(truth["kernels"].values()), len(ev["gpu_kernel"]), gpu["kernels"])
    c.row("GPU busy / ms", "", "%.3f" % (busy / 1e6), "%.3f" % (gpu["busy_ns"] / 1e6))


def check_steps(c, truth, ev, report):
    """Steps come from libprof's clock, NVTX ranges and GPU records from
    CUPTI's: each step's NVTX range must lie inside the step."""
    steps = sorted(ev["step"], key=lambda s: s["start_ns"])
    regions = collections.defaultdict(list)
    for r in ev["region"]:
        regions[r["name"]].append(r)
    for name in ("train_step", "forward", "loss.item"):
        c.check("nvtx-" + name, len(regions[name]) == truth["steps"],
                "%d ranges, %d steps run" % (len(regions[name]), truth["steps"]))
    n = report["summary"]["steps"]
    c.check("steps", truth["steps"] - 1 <= n <= truth["steps"] + 1, "report %d steps, program %d" % (n, truth["steps"]))
    c.row("steps", truth["steps"], len(steps), n)
    worst = 0
    for r in regions["train_step"]:
        mid = r["start_ns"] + r["dur_ns"] // 2
        inside = [s for s in steps if s["start_ns"] <= mid < s["start_ns"] + s["dur_ns"]]
        if not inside:
            worst = max(worst, 1 << 62)
            continue
        lo, hi = inside[0]["start_ns"], inside[0]["start_ns"] + inside[0]["dur_ns"]
        worst = max(worst, lo - r["start_ns"], r["start_ns"] + r["dur_ns"] - hi)
    c.check("clocks-agree", worst <= 100000,
            "an NVTX train_step range leaves its step by %d ns at most (CUPTI's clock against libprof's)" % worst)


def check_leak(c, truth, report):
    series = [m for m in report["memory"] if m["series"].startswith("gpu.") and m["series"].endswith(".used")]
    c.check("memory-series", len(series) == 1, "series: %s" % [m["series"] for m in report["memory"]])
    if not series:
        return
    fit = series[0]["fit"] or {}
    slope = fit.get("slope_bytes_per_step") or 0
    want = truth["leak_bytes_per_step"]
    c.check("leak-slope", abs(slope - want) <= 0.05 * want, "%.2f MiB/step fitted, %.2f MiB/step leaked" % (
        slope / MIB, want / MIB))
    c.check("leak-found", bool(fit.get("leak")), "fit says leak: %s" % fit.get("leak"))
    rules = [b for b in report["bottlenecks"] if b["rule"] == "memory_leak" and b["subject"] == series[0]["series"]]
    c.check("leak-rule", len(rules) == 1, "memory_leak findings: %s" % [b["title"] for b in rules])
    c.row("device memory growth / MiB per step", "%.2f" % (want / MIB), "", "%.2f" % (slope / MIB))


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: check_cuda.py TRUTH.json EXPORT.jsonl REPORT.json MD")
    truth = json.load(open(sys.argv[1]))
    ev, end = load_export(sys.argv[2])
    report = json.load(open(sys.argv[3]))
    c = Checks()
    c.check("export-clean", end is not None and end["clean"] and not end["truncated"] and end["dropped_events"] == 0,
            "end line: %s" % end)
    gpus = report["summary"]["gpu"]
    c.check("report-one-gpu", len(gpus) == 1, "%d devices in the report" % len(gpus))
    check_kernels(c, truth, ev)
    check_launches(c, ev)
    if gpus:
        check_copies(c, truth, ev, gpus[0])
        check_busy(c, truth, ev, gpus[0])
    check_syncs(c, truth, ev, report)
    check_steps(c, truth, ev, report)
    check_leak(c, truth, report)
    with open(sys.argv[4], "w") as f:
        f.write("| figure | the program | counted in the export | prof analyze |\n|---|---|---|---|\n")
        for r in c.rows:
            f.write("| %s |\n" % " | ".join(str(x) for x in r))
    sys.exit(1 if c.failed else 0)


if __name__ == "__main__":
    main()
