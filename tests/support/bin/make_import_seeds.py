#!/usr/bin/env python3
"""make_import_seeds.py - seed inputs of the importers' fuzz targets that
broken syntax alone does not reach: many threads, many distinct names, a
name longer than the format keeps (PF_STRING_MAX, 64 KiB), regions nested
past the sink's stack and JSON nested past the parser's depth. Each file
stays under the 64 KiB that `make fuzz` lets an input have (-max_len):
Kineto's through gzip, which is how a 200 KiB name fits; Nsight's as small
pages of SQLite, with a name of 16 KiB on hundreds of rows.

    make_import_seeds.py KINETO_DIR NSYS_DIR

writes them into tests/fuzz/corpus-import_kineto and corpus-import_nsys.
Deterministic: running it again gives the same bytes (gzip's mtime is 0).
"""
import gzip
import json
import os
import sqlite3
import sys

GLOBAL_PID = (4242 << 24) | (1 << 48)  # Nsight's globalPid of pid 4242


def write_gz(path, text):
    with open(path, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
            f.write(text.encode())


def kineto(events, **top):
    doc = {"schemaVersion": 1, "traceEvents": events}
    doc.update(top)
    return json.dumps(doc, separators=(",", ":"))


def x(name, tid, ts, dur, cat="cpu_op", pid=1, args=None):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def kineto_seeds(d):
    # 2,000 threads, each named, each with a region and a runtime call
    ev = []
    for t in range(1, 2001):
        ev.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": t,
                   "args": {"name": "worker-%d" % t}})
        ev.append(x("aten::mm", t, 1000 + t, 5))
        ev.append(x("cudaLaunchKernel", t, 1001 + t, 2, cat="cuda_runtime",
                    args={"correlation": t}))
    write_gz(os.path.join(d, "many-threads.json.gz"), kineto(ev))

    # 6,000 distinct names on one thread, one after another
    ev = [x("op_%05d::%s" % (i, "x" * (i % 17)), 1, 1000 + 3 * i, 2) for i in range(6000)]
    write_gz(os.path.join(d, "many-names.json.gz"), kineto(ev))

    # a 200 KiB name (cut at 64 KiB) on regions, a kernel and a thread; a
    # long category and process name; the same name inside args
    big = "L" * (200 << 10)
    ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": big}},
          {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": big}}]
    ev += [x(big, 1, 1000 + 10 * i, 5) for i in range(50)]
    ev.append(x(big, 7, 1200, 4, cat="kernel", pid=0,
                args={"device": 0, "stream": 7, "correlation": 1}))
    ev.append(x("aten::add", 1, 2000, 5, cat=big[:4096]))
    write_gz(os.path.join(d, "long-name.json.gz"), kineto(ev))

    # regions nested 300 deep, past the sink's stack of 256
    ev = [x("level_%d" % i, 1, 1000 + i, 1000 - 2 * i) for i in range(300)]
    with open(os.path.join(d, "deep-regions.json"), "w") as f:
        f.write(kineto(ev))

    # args nested 300 deep, past the parser's depth of 256, then events
    # after it that are not read (the trace is damaged there)
    deep = "[" * 300 + "]" * 300
    text = ('{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,'
            '"ts":1,"dur":1},{"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,'
            '"ts":2,"dur":1,"args":{"deep":' + deep + '}},{"ph":"X","cat":"cpu_op",'
            '"name":"c","pid":1,"tid":1,"ts":3,"dur":1}]}')
    with open(os.path.join(d, "deep-args.json"), "w") as f:
        f.write(text)


NSYS_SCHEMA = """
PRAGMA page_size = 512;
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
    shortName INTEGER NOT NULL, mangledName INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
    eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
    nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
    rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
    endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
"""


def nsys_db(path):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript(NSYS_SCHEMA)
    return db


def nsys_seeds(d):
    # 500 threads of one process, each named, each with a call and a range
    db = nsys_db(os.path.join(d, "many-threads.sqlite"))
    db.execute("INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000')")
    n = 500
    for i in range(n):
        tid = GLOBAL_PID | (100 + i)
        db.execute("INSERT INTO StringIds VALUES (?, ?)", (10 + i, "w%d" % i))
        db.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (10 + i, tid))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 1, 0, NULL)",
                   (1000 + 10 * i, 1005 + 10 * i, tid, i + 1))
        db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, text) "
                   "VALUES (?, ?, 59, ?, 'r')", (1000 + 10 * i, 1008 + 10 * i, tid))
    db.commit()
    db.close()

    # one 16 KiB name on 250 kernels (out of start order), 250 ranges and a
    # thread's name; ids that StringIds lacks, and ids that are not integers
    db = nsys_db(os.path.join(d, "long-name.sqlite"))
    db.execute("INSERT INTO StringIds VALUES (1, ?)", ("K" * (16 << 10),))
    db.execute("INSERT INTO StringIds VALUES (2, 'cudaLaunchKernel_v7000')")
    tid = GLOBAL_PID | 7
    db.execute("INSERT INTO ThreadNames VALUES (1, 0, ?)", (tid,))
    for i in range(250):
        start = 100000 - 100 * i
        name = 1 if i % 50 else (999 if i % 100 else "x")
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 1, 7, ?, ?, ?, 1, NULL)",
                   (start, start + 50, i + 1, GLOBAL_PID, name))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 2, 0, NULL)",
                   (start - 10, start - 5, tid, i + 1))
        db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId) "
                   "VALUES (?, ?, 59, ?, 1)", (start - 20, start - 1, tid))
    db.commit()
    db.close()


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make_import_seeds.py KINETO_DIR NSYS_DIR")
    kineto_seeds(sys.argv[1])
    nsys_seeds(sys.argv[2])
    for d in sys.argv[1:]:
        for f in sorted(os.listdir(d)):
            size = os.path.getsize(os.path.join(d, f))
            if size > 65536:
                sys.exit("make_import_seeds: %s/%s is %d bytes, past -max_len" % (d, f, size))


if __name__ == "__main__":
    main()
