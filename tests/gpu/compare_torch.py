"""compare_torch.py - one PyTorch loop seen twice, for tests/gpu/device-check.sh:
recorded by `prof record --cuda` and traced by torch.profiler then read with
`prof import`. The recorder and the importer must agree.

    python3 compare_torch.py RECORDED.json IMPORTED.json STEPS MD [RECORDED.jsonl]

Both files are `prof analyze --format json --top 0` reports of STEPS steps
of tests/gpu/torch_train.py. Two runs of one program launch the same
kernels; their durations differ from run to run (clocks, caches), so:
kernel counts must be equal within 1%, every kernel name of one run must be
in the other, each of the five longest kernels by GPU time of one must be
among the ten longest of the other, and GPU kernel time must agree within
25%. With RECORDED.jsonl (`prof export --format json` of the recording),
every CUDA sync must be on the thread of the call that waited, none on the
unknown thread (os_tid 0), and the recording's sync count must be the
one counted from the export (rules.md 4.3). Prints "ok NAME (detail)" or "not ok NAME - detail" per check, writes
a Markdown table of both to MD. Exit status: 0 all passed, 1 not.
"""
import json
import sys

failed = 0


def check(name, good, detail):
    global failed
    print(("ok %s (%s)" if good else "not ok %s - %s") % (name, detail))
    failed += 0 if good else 1


def gpu(report):
    g = report["summary"]["gpu"]
    return g[0] if g else {"kernels": 0, "kernel_ns": 0, "busy_ns": 0, "memcpy_count": 0, "memset_count": 0}


def check_syncs(path, report):
    """Every CUDA sync on the thread of the call that waited, and the
    report's count of syncs counted here: SYNC regions (not inside another)
    and the records outside them (rules.md 4.3)."""
    unknown, syncs, waits = set(), [], []
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            if o["type"] == "thread" and not o["os_tid"]:
                unknown.add(o["thread"])
            elif o["type"] == "sync" and o["sync_kind"] != "stream_wait":
                syncs.append(o)
            elif o["type"] == "region" and o["kind"] == "sync":
                waits.append(o)
    lost = sum(1 for x in syncs if x["thread"] in unknown)
    check("syncs-on-their-threads", syncs and not lost, "%d of %d CUDA syncs on the unknown thread" % (
        lost, len(syncs)))

    def inside(x, outer):
        return any(w is not x and w["thread"] == x["thread"] and w["start_ns"] <= x["start_ns"] and
                   x["start_ns"] + x["dur_ns"] <= w["start_ns"] + w["dur_ns"] for w in outer)

    want = sum(1 for w in waits if not inside(w, waits)) + sum(1 for x in syncs if not inside(x, waits))
    got = report["summary"]["sync"]["count"]
    check("sync-count", got == want, "report %d, counted here %d (%d SYNC regions, %d CUDA records)" % (
        got, want, len(waits), len(syncs)))


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit("usage: compare_torch.py RECORDED.json IMPORTED.json STEPS MD [RECORDED.jsonl]")
    rec, imp = (json.load(open(p)) for p in sys.argv[1:3])
    steps = int(sys.argv[3])
    gr, gi = gpu(rec), gpu(imp)
    check("one-gpu", len(rec["summary"]["gpu"]) == 1 and len(imp["summary"]["gpu"]) == 1,
          "devices: recorded %d, imported %d" % (len(rec["summary"]["gpu"]), len(imp["summary"]["gpu"])))
    for r, label in ((rec, "recorded"), (imp, "imported")):
        n = r["summary"]["steps"]
        check("steps-" + label, steps - 1 <= n <= steps + 1, "%d steps, %d run" % (n, steps))
    a, b = gr["kernels"], gi["kernels"]
    check("kernel-count", a > 0 and abs(a - b) <= max(2, 0.01 * max(a, b)), "recorded %d, imported %d" % (a, b))
    calls_r = {k["name"]: k["calls"] for k in rec["kernels"]}
    calls_i = {k["name"]: k["calls"] for k in imp["kernels"]}
    only_r = sorted(set(calls_r) - set(calls_i))
    only_i = sorted(set(calls_i) - set(calls_r))
    check("kernel-names", not only_r and not only_i,
          "%d kernels named alike; only recorded: %s; only imported: %s" % (
              len(set(calls_r) & set(calls_i)), only_r[:3], only_i[:3]))
    differ = [n for n in set(calls_r) & set(calls_i) if calls_r[n] != calls_i[n]]
    check("kernel-calls", not differ, "%d kernels called as often in both; differ: %s" % (
        len(set(calls_r) & set(calls_i)) - len(differ), [(n[:60], calls_r[n], calls_i[n]) for n in differ[:3]]))
    top_r = [k["name"] for k in rec["kernels"]]
    top_i = [k["name"] for k in imp["kernels"]]
    missing = [n for n in top_r[:5] if n not in top_i[:10]] + [n for n in top_i[:5] if n not in top_r[:10]]
    check("top-kernels", not missing, "of the five longest of each, not among the ten longest of the other: %s" % [
        n[:60] for n in missing])
    ratio = gr["kernel_ns"] / gi["kernel_ns"] if gi["kernel_ns"] else float("inf")
    check("kernel-time", 0.8 <= ratio <= 1.25, "recorded %.3f ms, imported %.3f ms (%.2fx)" % (
        gr["kernel_ns"] / 1e6, gi["kernel_ns"] / 1e6, ratio))
    ratio = gr["busy_ns"] / gi["busy_ns"] if gi["busy_ns"] else float("inf")
    check("busy-time", 0.8 <= ratio <= 1.25, "recorded %.3f ms, imported %.3f ms (%.2fx)" % (
        gr["busy_ns"] / 1e6, gi["busy_ns"] / 1e6, ratio))
    if len(sys.argv) == 6:
        check_syncs(sys.argv[5], rec)
    with open(sys.argv[4], "w") as f:
        f.write("| figure | prof record --cuda | torch.profiler, prof import |\n|---|---|---|\n")
        for label, key, scale in (("steps", None, 1), ("kernels", "kernels", 1), ("kernel time / ms", "kernel_ns", 1e6),
                                  ("GPU busy / ms", "busy_ns", 1e6), ("copies", "memcpy_count", 1),
                                  ("memsets", "memset_count", 1)):
            if key is None:
                x, y = rec["summary"]["steps"], imp["summary"]["steps"]
            elif scale == 1:
                x, y = gr[key], gi[key]
            else:
                x, y = "%.3f" % (gr[key] / scale), "%.3f" % (gi[key] / scale)
            f.write("| %s | %s | %s |\n" % (label, x, y))
        f.write("\n| the five longest kernels, recorded | calls | ms | imported | calls | ms |\n|---|---|---|---|---|---|\n")
        for kr, ki in zip(rec["kernels"][:5], imp["kernels"][:5]):
            f.write("| `%s` | %d | %.3f | `%s` | %d | %.3f |\n" % (
                kr["name"][:80].replace("|", "\\|"), kr["calls"], kr["gpu_ns"] / 1e6,
                ki["name"][:80].replace("|", "\\|"), ki["calls"], ki["gpu_ns"] / 1e6))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
