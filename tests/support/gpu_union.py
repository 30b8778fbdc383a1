"""gpu_union.py - GPU busy, idle and communication time of a Kineto trace,
computed apart from prof: every GPU record of a device sorted at once and
its union taken, to check prof's figures to the nanosecond (formats/rules.md,
section 4: busy time, gaps of 1 ms or more, communication kernels by name,
communication overlapped by computation kernels).

    gpu_union.py TRACE.json[.gz]            prints {device: figures} as JSON
    gpu_union.py TRACE OUT COPIES ORDER     writes OUT: TRACE with its GPU records
                                            repeated COPIES times, each copy after the
                                            last, listed in ORDER: time, stream (stream
                                            by stream, as Kineto writes them), reverse
                                            or shuffle

Times are read as Kineto writes them, microseconds with up to three decimals,
and kept as exact integer nanoseconds (decimal, never float)."""
import decimal
import gzip
import json
import random
import re
import sys

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
# what a communication kernel's name holds, in any case (rules.md §4.10)
COMM_WORDS = ("nccl", "rccl", "nvshmem", "mscclpp", "multimem", "all_reduce", "allreduce",
              "all_gather", "allgather", "reduce_scatter", "reducescatter", "all_to_all",
              "alltoall", "cross_device_reduce")


def is_comm(name):
    name = name.lower()
    return any(w in name for w in COMM_WORDS)
IDLE_GAP_NS = 1000000


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=decimal.Decimal)


def ns(us):
    return int((decimal.Decimal(us) * 1000).to_integral_value(decimal.ROUND_HALF_EVEN))


def gpu_records(trace):
    return [e for e in trace["traceEvents"]
            if e.get("ph") == "X" and e.get("cat") in GPU_CATS and "ts" in e]


def union(intervals):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1][1] = b
        else:
            out.append([a, b])
    return out


def intersection(x, y):
    total, i, j = 0, 0, 0
    while i < len(x) and j < len(y):
        a, b = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if b > a:
            total += b - a
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return total


def figures(trace):
    devices = {}
    for e in gpu_records(trace):
        start = ns(e["ts"])
        dur = ns(e.get("dur", 0))
        if dur <= 0:
            continue
        args = e.get("args", {})
        d = devices.setdefault(int(args.get("device", 0)), {"all": [], "comm": [], "compute": []})
        iv = (start, start + dur)
        d["all"].append(iv)
        if e["cat"] == "kernel":
            d["comm" if is_comm(e["name"]) else "compute"].append(iv)
    out = {}
    for dev, d in sorted(devices.items()):
        busy = union(d["all"])
        gaps = [busy[k + 1][0] - busy[k][1] for k in range(len(busy) - 1)]
        idle = [g for g in gaps if g >= IDLE_GAP_NS]
        comm = union(d["comm"])
        out[dev] = {
            "busy_ns": sum(b - a for a, b in busy),
            "idle_gaps": len(idle),
            "idle_gap_ns": sum(idle),
            "longest_gaps": sorted(idle, reverse=True)[:3],
            "comm_ns": sum(b - a for a, b in comm),
            "comm_overlap_ns": intersection(comm, union(d["compute"])),
        }
    return out


def repeat(trace, copies, order):
    """The trace's GPU records COPIES times, copy k shifted by k times the
    span of the GPU records, listed in order; the other events as they
    were. A copy's records keep their correlation ids only in copy 0."""
    gpu = gpu_records(trace)
    first = min(decimal.Decimal(e["ts"]) for e in gpu)
    last = max(decimal.Decimal(e["ts"]) + decimal.Decimal(e.get("dur", 0)) for e in gpu)
    span = last - first + 1000  # a millisecond apart
    records = []
    for k in range(copies):
        for e in gpu:
            c = dict(e)
            c["ts"] = decimal.Decimal(e["ts"]) + k * span
            if k:
                c["args"] = {a: v for a, v in e.get("args", {}).items()
                             if a not in ("correlation", "External id")}
            records.append(c)
    key = lambda e: (e["ts"], e.get("dur", 0))
    if order == "time":
        records.sort(key=key)
    elif order == "stream":
        records.sort(key=lambda e: (e.get("args", {}).get("stream", -1), key(e)))
    elif order == "reverse":
        records.sort(key=key, reverse=True)
    elif order == "shuffle":
        random.Random(1).shuffle(records)
    else:
        raise SystemExit("gpu_union.py: order is time, stream, reverse or shuffle")
    trace = dict(trace)
    moved = set(map(id, gpu))
    trace["traceEvents"] = [e for e in trace["traceEvents"] if id(e) not in moved] + records
    return trace


MARK = "\u0001decimal:"


class Exact(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, decimal.Decimal):
            return MARK + str(o) + MARK
        return super().default(o)


def dump(trace, path):
    """Writes decimals as the digits they have, never through a float."""
    text = json.dumps(trace, cls=Exact)
    mark = json.dumps(MARK)[1:-1]
    text = re.sub('"%s([^"]*)%s"' % (re.escape(mark), re.escape(mark)), r"\1", text)
    with open(path, "w") as f:
        f.write(text)


def main():
    if len(sys.argv) == 2:
        json.dump(figures(load(sys.argv[1])), sys.stdout)
        print()
    elif len(sys.argv) == 5:
        dump(repeat(load(sys.argv[1]), int(sys.argv[3]), sys.argv[4]), sys.argv[2])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
