#!/usr/bin/env python3
"""gpu_join.py - GPU time per operation computed independently of prof's
model, for checking it (rules.md §3.2): from a profile's JSON-lines export
(prof export --format json) or from a torch.profiler (Kineto) JSON trace,
plain or gzip.

Each kernel, copy and memset is joined to the runtime call with its
correlation id, that call to the regions of its thread whose interval holds
the call's start; the innermost of them (the shortest, then the latest to
start) gets the record's time as self time, and every operation among them
as total time (once per record, however often it nests).

Usage: gpu_join.py FILE [--names-from-kineto]
Prints one JSON object: {"ops": {name: [self_ns, total_ns, self_kernels,
total_kernels]}, "records": n, "joined": n, "joined_ns": ns, "outside_ns": ns}.
Kineto input uses the events prof import makes regions of: cpu_op and
user_annotation (ProfilerStep#N is a step, not a region), with times in
integer nanoseconds as the importer rounds them."""
import bisect
import decimal
import gzip
import json
import sys


HTA_LAUNCH = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync", "cudaMemsetAsync"}
HTA_QUEUE = HTA_LAUNCH | {"cuLaunchKernel", "cuLaunchKernelEx", "hipLaunchKernel",
                          "hipExtModuleLaunchKernel", "hipMemsetAsync", "hipMemcpyAsync",
                          "hipMemcpyWithStream"}


def from_export(path):
    regions, calls, gpu = {}, {}, []
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            t = e.get("type")
            if t == "region":
                regions.setdefault(e["thread"], []).append(
                    (e["start_ns"], e["start_ns"] + e["dur_ns"], e["name"]))
            elif t == "api":
                calls[e["correlation"]] = (e["thread"], e["start_ns"], e["dur_ns"], e["name"])
            elif t in ("gpu_kernel", "gpu_memcpy", "gpu_memset"):
                gpu.append((e.get("correlation", 0), e["dur_ns"], t == "gpu_kernel",
                            e["start_ns"], e["device"], e["stream"]))
    return regions, calls, gpu


def ns(x):
    """microseconds to integer nanoseconds, exactly: floats are kept as
    their text (epoch microseconds need more digits than a double has)"""
    if isinstance(x, str):
        d = decimal.Decimal(x) * 1000
        return int(d.to_integral_value(rounding=decimal.ROUND_HALF_UP))
    return int(x) * 1000


def from_kineto(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        doc = json.load(f, parse_float=str)
    regions, calls, gpu = {}, {}, []
    for e in doc.get("traceEvents", []):
        if e.get("ph") != "X":
            continue
        cat, args = e.get("cat", ""), e.get("args", {}) or {}
        key = (e.get("pid"), e.get("tid"))
        if cat in ("cpu_op", "user_annotation") and not str(e.get("name", "")).startswith(
                "ProfilerStep#"):
            s = ns(e["ts"])
            regions.setdefault(key, []).append((s, s + ns(e.get("dur", 0)), e["name"]))
        elif cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            calls[args["correlation"]] = (key, ns(e["ts"]), ns(e.get("dur", 0)), e["name"])
        elif cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            gpu.append((args.get("correlation", 0), ns(e.get("dur", 0)), cat == "kernel",
                        ns(e["ts"]), args.get("device", 0), args.get("stream", 0)))
    return regions, calls, gpu


def join(regions, calls, gpu):
    by_thread = {}
    for t, rs in regions.items():
        rs.sort()
        by_thread[t] = (rs, [r[0] for r in rs])
    ops, joined, joined_ns, outside, launch, queue = {}, 0, 0, 0, [], {}
    for corr, dur, is_kernel, start, device, stream in gpu:
        c = calls.get(corr) if corr else None
        if c is None:
            continue
        joined += 1
        joined_ns += dur
        thread, at, call_dur, call_name = c
        if call_name in HTA_LAUNCH:  # HTA's cuda_kernel_launch_stats
            launch.append((call_dur, dur, max(0, start - at - call_dur), device, stream))
        if call_name in HTA_QUEUE:  # HTA's queue length: +1 at the call, -1 at the record
            q = queue.setdefault("%s/%s" % (device, stream), [])
            q.append((at, 1))
            q.append((start, -1))
        rs, starts = by_thread.get(thread, ([], []))
        # regions starting at or before `at`, of which those still open
        around = [r for r in rs[:bisect.bisect_right(starts, at)] if r[1] > at]
        if not around:
            outside += dur
            continue
        inner = min(around, key=lambda r: (r[1] - r[0], -r[0]))
        v = ops.setdefault(inner[2], [0, 0, 0, 0])
        v[0] += dur
        v[2] += is_kernel
        for name in {r[2] for r in around}:
            v = ops.setdefault(name, [0, 0, 0, 0])
            v[1] += dur
            v[3] += is_kernel
    short = [g[1] for g in gpu if g[2] and g[1] < 10000]
    return {"ops": ops, "records": len(gpu), "joined": joined, "joined_ns": joined_ns,
            "outside_ns": outside, "short_kernels": len(short), "short_kernel_ns": sum(short),
            "launch": launch_summary(launch),
            "queue": {k: queue_summary(v) for k, v in queue.items()}}


def queue_summary(events):
    """HTA's get_queue_length_summary (describe() of the length after each
    event) and the time at the largest length, events sorted by time."""
    events.sort(key=lambda e: (e[0], -e[1]))
    lens, n = [], 0
    for _, d in events:
        n += d
        lens.append(n)
    mx = max(lens)
    at_max = sum(events[i + 1][0] - events[i][0] for i in range(len(lens) - 1) if lens[i] == mx)
    full = sum(events[i + 1][0] - events[i][0] for i in range(len(lens) - 1) if lens[i] >= 1024)
    v = sorted(lens)
    mean = sum(v) / len(v)
    var = sum((x - mean) ** 2 for x in v) / (len(v) - 1) if len(v) > 1 else 0
    return {"count": len(v), "mean": mean, "stddev": var ** 0.5, "min": v[0],
            "p25": quantile(v, .25), "p50": quantile(v, .5), "p75": quantile(v, .75),
            "max": mx, "at_max_ns": at_max, "full_ns": full}


def quantile(v, q):
    """pandas' describe(): linear interpolation between closest ranks"""
    if not v:
        return 0
    x = (len(v) - 1) * q
    i = int(x)
    return v[i] + (v[min(i + 1, len(v) - 1)] - v[i]) * (x - i)


def launch_summary(launch):
    out = {"count": len(launch)}
    for k, name in enumerate(("cpu", "gpu_time", "delay")):
        v = sorted(x[k] for x in launch)
        out[name] = {"mean_ns": sum(v) / len(v) if v else 0, "min_ns": v[0] if v else 0,
                     "p25_ns": quantile(v, .25), "p50_ns": quantile(v, .5),
                     "p75_ns": quantile(v, .75), "p95_ns": quantile(v, .95),
                     "max_ns": v[-1] if v else 0}
    out["cpu_over_cutoff"] = sum(1 for x in launch if x[0] > 50000)
    out["delay_over_cutoff"] = sum(1 for x in launch if x[2] > 100000)
    return out


def main():
    path = sys.argv[1]
    kineto = path.endswith(".json.gz") or (path.endswith(".json") and "--export" not in sys.argv)
    src = from_kineto(path) if kineto else from_export(path)
    json.dump(join(*src), sys.stdout)
    print()


if __name__ == "__main__":
    main()
