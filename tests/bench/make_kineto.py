#!/usr/bin/env python3
"""make_kineto.py [--stacks] TEMPLATE OUT MB: a torch.profiler (Kineto)
trace of about MB megabytes made by repeating TEMPLATE's events, each copy
shifted in time by the template's span (and its correlation and External
ids by their range), with TEMPLATE's other keys kept. Streams: holds one
copy of the template's events, never the output. TEMPLATE may be gzip. For
the import benchmark (tests/bench/import.sh).

With --stacks, the trace is what torch.profiler writes with
record_shapes, profile_memory and with_stack on: each CPU operation gains
the args those add, in their real shapes (Call stack, Module Hierarchy,
Input Dims, Input type, Input Strides, Concrete Inputs), and every third
one a [memory] instant event after it (Addr, Bytes, Total Allocated,
Total Reserved, Device Id, Device Type, Ev Idx). Drawn from a seeded
generator: the same arguments give the same bytes."""
import gzip
import json
import random
import sys

FRAMES = ["train.py(%d): main", "train.py(%d): train_one_epoch", "model.py(%d): forward",
          "torch/nn/modules/module.py(%d): _call_impl",
          "torch/nn/modules/module.py(%d): _wrapped_call_impl",
          "torch/nn/modules/linear.py(%d): forward", "torch/nn/functional.py(%d): layer_norm",
          "transformer.py(%d): attention", "transformer.py(%d): mlp",
          "torch/_tensor.py(%d): backward", "torch/autograd/__init__.py(%d): backward",
          "torch/optim/adam.py(%d): step", "torch/optim/optimizer.py(%d): wrapper"]
DTYPES = ["float", "c10::BFloat16", "c10::Half", "long int", "Scalar", "bool", ""]


def shapes_args(rng):
    """The args record_shapes and with_stack add to a CPU operation."""
    n = rng.randint(1, 5)
    dims = [[rng.choice([1, 8, 64, 128, 512, 1024, 4096]) for _ in range(rng.randint(0, 4))]
            for _ in range(n)]
    strides = [[rng.choice([1, 64, 4096, 262144]) for _ in d] for d in dims]
    depth = rng.randint(6, 18)
    stack = ";".join(rng.choice(FRAMES) % rng.randint(10, 2000) for _ in range(depth))
    return {
        "Input Dims": dims,
        "Input type": [rng.choice(DTYPES) for _ in range(n)],
        "Input Strides": strides,
        "Concrete Inputs": ["" if d else str(rng.choice([0, 1, -1, 1e-5])) for d in dims],
        "Call stack": stack,
        "Module Hierarchy": ".".join(["model", "layers", str(rng.randint(0, 47)),
                                      rng.choice(["attn", "mlp", "norm1", "norm2"])]),
    }


def memory_event(rng, e, index):
    """A [memory] instant event at the end of operation e."""
    size = rng.choice([512, 4096, 262144, 1048576, 16777216]) * rng.choice([1, -1])
    return {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
            "pid": e.get("pid"), "tid": e.get("tid"), "ts": e["ts"] + (e.get("dur") or 0),
            "args": {"Total Reserved": 2147483648, "Total Allocated": rng.randint(1 << 28, 1 << 31),
                     "Bytes": size, "Addr": rng.randint(1 << 40, 1 << 47),
                     "Device Id": rng.choice([0, -1]), "Device Type": rng.choice([1, 0]),
                     "Ev Idx": index}}


def enrich(body):
    """--stacks: shapes, stacks and memory events added, as with_stack,
    record_shapes and profile_memory add them."""
    rng = random.Random(41)
    out = []
    for i, e in enumerate(body):
        if e.get("cat") == "cpu_op" and e.get("ph") == "X":
            e = dict(e)
            e["args"] = dict(e.get("args") or {}, **shapes_args(rng))
            out.append(e)
            if rng.randint(0, 2) == 0:
                out.append(memory_event(rng, e, i))
        else:
            out.append(e)
    return out


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def main():
    args = sys.argv[1:]
    stacks = bool(args) and args[0] == "--stacks"
    if stacks:
        args = args[1:]
    template, out, mb = args[0], args[1], float(args[2])
    doc = load(template)
    events = doc.pop("traceEvents")
    if stacks:
        events = enrich(events)
    timed = [e for e in events if isinstance(e.get("ts"), (int, float)) and e.get("ph") != "M"]
    t0 = min(e["ts"] for e in timed)
    t1 = max(e["ts"] + (e.get("dur") or 0) for e in timed)
    span = (t1 - t0) * 1.01 + 1
    ids = [e.get("args", {}).get(k) for e in events for k in ("correlation", "External id")]
    idspan = max([i for i in ids if isinstance(i, int)] or [0]) + 1
    meta = [json.dumps(e, separators=(",", ":")) for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    limit = int(mb * 1e6)
    written = 0
    with open(out, "w", encoding="utf-8") as f:
        def put(s):
            nonlocal written
            f.write(s)
            written += len(s)
        put('{"schemaVersion":1,"traceEvents":[\n')
        put(",\n".join(meta))
        copy = 0
        while written < limit:
            shift, idshift = copy * span, copy * idspan
            lines = []
            for e in body:
                c = dict(e)
                if isinstance(c.get("ts"), (int, float)):
                    c["ts"] = round(c["ts"] + shift, 3)
                if "args" in c:
                    a = dict(c["args"])
                    for k in ("correlation", "External id"):
                        if isinstance(a.get(k), int):
                            a[k] += idshift
                    c["args"] = a
                if isinstance(c.get("id"), int):
                    c["id"] += idshift
                name = c.get("name")
                if isinstance(name, str) and name.startswith("ProfilerStep#"):
                    c["name"] = "ProfilerStep#%d" % (int(name[13:] or 0) + copy * 1000)
                lines.append(json.dumps(c, separators=(",", ":")))
            put(",\n" + ",\n".join(lines) if (meta or copy) else ",\n".join(lines))
            copy += 1
        rest = {k: v for k, v in doc.items()}
        put("\n]," + json.dumps(rest, separators=(",", ":"))[1:] + "\n" if rest else "\n]}\n")
    print(written)


if __name__ == "__main__":
    main()
