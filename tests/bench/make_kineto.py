#!/usr/bin/env python3
"""make_kineto.py TEMPLATE OUT MB: a torch.profiler (Kineto) trace of about
MB megabytes made by repeating TEMPLATE's events, each copy shifted in time
by the template's span (and its correlation and External ids by their
range), with TEMPLATE's other keys kept. Streams: holds one copy of the
template's events, never the output. TEMPLATE may be gzip. For the import
benchmark (tests/bench/import.sh)."""
import gzip
import json
import sys


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def main():
    template, out, mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    doc = load(template)
    events = doc.pop("traceEvents")
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
