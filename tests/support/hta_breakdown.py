#!/usr/bin/python3
"""hta_breakdown.py - HTA's temporal breakdown, kernel-type breakdown and
communication/computation overlap of a Kineto trace, computed from the JSON
alone, independently of prof, with Holistic Trace Analysis's definitions
(formats/rules.md §3.1 states them and where prof differs):

- the records counted are the GPU records (kernel, gpu_memcpy, gpu_memset)
  whose launch call (the CPU event with the same correlation id) started
  before the last ProfilerStep#N started, when there are two such steps or
  more; every GPU record otherwise;
- their window runs from the first one's start to the last one's end;
- idle = window - union of all of them; compute = union of computation
  kernels; non-compute = union - compute;
- kernel types: computation, communication (by name, rules.md §4.10), memory
  (copies and memsets); the time each set of them runs at once;
- overlap = time communication and computation run at once / communication.

    hta_breakdown.py TRACE.json[.gz]         prints JSON, one object per device
    hta_breakdown.py TRACE OUT COPIES ORDER  writes OUT: the trace's steps, launch
                                             calls and GPU records COPIES times, each
                                             copy after the last with its own
                                             correlation ids and step numbers, the GPU
                                             records listed in ORDER (time, stream or
                                             reverse) after the rest, or every event
                                             shuffled (shuffle)

Times are integer nanoseconds, parsed from the text of `ts` and `dur`.
"""
import decimal
import gzip
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_union import dump, is_comm  # noqa: E402  (decimals digit for digit; rules.md §4.10)

# GPU records by category (2022 on, and 2021's names) and their class bit
GPU_CATS = {"kernel": 1, "gpu_memcpy": 4, "gpu_memset": 4, "Kernel": 1, "Memcpy": 4, "Memset": 4}
LAUNCH_CATS = ("cuda_runtime", "cuda_driver", "Runtime")
STEP_CATS = {"cpu_op", "user_annotation", "Operator"}


def ns(v):
    return int((decimal.Decimal(v) * 1000).to_integral_value(decimal.ROUND_HALF_EVEN))


def load(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=decimal.Decimal)["traceEvents"]


def class_of(e):
    cls = GPU_CATS[e["cat"]]
    if cls == 1 and is_comm(e.get("name", "")):
        cls = 2
    return cls


def union(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def pieces(unions):
    """Time by set of classes running (bit mask -> ns) over class unions."""
    ev = []
    for bit, u in unions.items():
        for a, b in u:
            ev.append((a, bit))
            ev.append((b, -bit))
    ev.sort()
    out, running, prev = {}, 0, None
    for t, d in ev:
        if prev is not None and running and t > prev:
            out[running] = out.get(running, 0) + t - prev
        running += d
        prev = t
    return out


def breakdown(events):
    launch = {}
    steps = []
    for e in events:
        args = e.get("args") or {}
        cat = e.get("cat")
        if cat in GPU_CATS or e.get("ph") != "X":
            continue
        name = e.get("name", "")
        if cat in STEP_CATS and name.startswith("ProfilerStep#"):
            steps.append(ns(e["ts"]))
        c = args.get("correlation")
        if isinstance(c, int) and c > 0 and cat in LAUNCH_CATS:
            t = ns(e["ts"])
            launch[c] = min(launch.get(c, t), t)
    final = max(steps) if len(steps) >= 2 else None
    devices = {}
    for e in events:
        if e.get("cat") not in GPU_CATS or e.get("ph") != "X":
            continue
        args = e.get("args") or {}
        start = ns(e["ts"])
        end = start + max(ns(e.get("dur", 0)), 0)
        dev = args.get("device", args.get("inDevice", e.get("pid")))
        d = devices.setdefault(dev, {"kept": [], "left_out": 0, "no_launch": 0})
        if final is not None:
            c = args.get("correlation")
            if c not in launch:
                d["no_launch"] += 1
                continue
            if launch[c] >= final:
                d["left_out"] += 1
                continue
        if end > start:
            d["kept"].append((start, end, class_of(e)))
    result = []
    for dev in sorted(devices):
        d = devices[dev]
        unions = {bit: union([(a, b) for a, b, c in d["kept"] if c == bit]) for bit in (1, 2, 4)}
        p = pieces(unions)
        busy = sum(p.values())
        first = min((a for a, _, _ in d["kept"]), default=0)
        last = max((b for _, b, _ in d["kept"]), default=0)
        window = last - first
        compute = sum(v for m, v in p.items() if m & 1)
        comm = sum(v for m, v in p.items() if m & 2)
        overlap = p.get(3, 0) + p.get(7, 0)
        result.append({
            "device": dev, "window_ns": window, "busy_ns": busy, "idle_ns": window - busy,
            "compute_ns": compute, "non_compute_ns": busy - compute,
            "idle_share": (window - busy) / window if window else 0.0,
            "compute_share": compute / window if window else 0.0,
            "non_compute_share": (busy - compute) / window if window else 0.0,
            "kernel_types": {str(m): p.get(m, 0) for m in range(1, 8)},
            "comm_ns": comm, "comm_overlap_ns": overlap,
            "comm_overlap_share": overlap / comm if comm else 0.0,
            "left_out": d["left_out"], "no_launch": d["no_launch"],
            "final_step_left_out": final is not None,
        })
    return result


def is_step(e):
    return e.get("cat") in STEP_CATS and e.get("name", "").startswith("ProfilerStep#")


def is_launch(e):
    return e.get("cat") in LAUNCH_CATS and "correlation" in (e.get("args") or {})


def repeat(path, out, copies, order):
    doc = {}
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc["traceEvents"]
    keep = [e for e in events if e.get("ph") == "X" and (is_step(e) or is_launch(e) or e.get("cat") in GPU_CATS)]
    first = min(decimal.Decimal(e["ts"]) for e in keep)
    last = max(decimal.Decimal(e["ts"]) + decimal.Decimal(e.get("dur", 0)) for e in keep)
    span = last - first + 1000
    ids = 1 + max(int((e.get("args") or {}).get("correlation", 0)) for e in keep)
    steps = 1 + max(int(e["name"].split("#")[1]) for e in keep if is_step(e))
    cpu, gpu = [], []
    for k in range(copies):
        for e in keep:
            c = dict(e)
            c["ts"] = decimal.Decimal(e["ts"]) + k * span
            args = dict(e.get("args") or {})
            if "correlation" in args:
                args["correlation"] = int(args["correlation"]) + k * ids
            c["args"] = args
            if is_step(e):
                c["name"] = "ProfilerStep#%d" % (int(e["name"].split("#")[1]) + k * steps)
            (gpu if e.get("cat") in GPU_CATS else cpu).append(c)
    key = lambda e: (e["ts"], e.get("dur", 0))
    if order == "time":
        gpu.sort(key=key)
    elif order == "stream":
        gpu.sort(key=lambda e: (e["args"].get("stream", -1), key(e)))
    elif order == "reverse":
        gpu.sort(key=key, reverse=True)
    elif order == "shuffle":
        cpu += gpu
        gpu = []
        random.Random(1).shuffle(cpu)
        # the earliest first: an importer takes its time origin from the
        # first event (kineto-import.md §2), and times before it are clamped
        i = min(range(len(cpu)), key=lambda j: cpu[j]["ts"])
        cpu[0], cpu[i] = cpu[i], cpu[0]
    else:
        raise SystemExit("hta_breakdown.py: order is time, stream, reverse or shuffle")
    doc = {k: v for k, v in doc.items() if k != "traceEvents"}
    doc["traceEvents"] = cpu + gpu
    dump(doc, out)


if __name__ == "__main__":
    if len(sys.argv) == 2:
        json.dump(breakdown(load(sys.argv[1])), sys.stdout, indent=1)
        print()
    elif len(sys.argv) == 5:
        repeat(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        raise SystemExit(__doc__)
