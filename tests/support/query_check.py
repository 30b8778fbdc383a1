"""query_check.py - a SQLite file written by `prof export --format sqlite`
read by Python's sqlite3 module answers as `prof query` does over the same
input: every table is there with the same rows, and statements a user
would run (a GROUP BY, one step, a join of GPU work to its launch, the
analysis's tables) give the same results.

usage: query_check.py PROF INPUT FILE.db   (exit 0, or 1 with what differs)
"""
import json
import sqlite3
import subprocess
import sys

TABLES = ["regions", "steps", "kernels", "copies", "memsets", "api_calls", "syncs", "memory",
          "counters", "marks", "threads", "ranks", "metadata", "operations", "bottlenecks",
          "memory_fits"]

STATEMENTS = [
    "SELECT name, COUNT(*), SUM(dur_ns), SUM(self_ns) FROM regions GROUP BY name ORDER BY name",
    "SELECT rank, step, name, start_ns, self_ns FROM regions WHERE step = 7 "
    "ORDER BY rank, start_ns, name, self_ns",
    "SELECT rank, step, dur_ns, sampled, incomplete FROM steps ORDER BY rank, step",
    "SELECT k.name AS kernel, k.op, a.name AS call, a.thread_name, COUNT(*), SUM(k.dur_ns) "
    "FROM kernels k LEFT JOIN api_calls a ON a.rank = k.rank AND a.correlation = k.correlation "
    "GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
    "SELECT rank, name, kind, calls, self_ns, gpu_self_ns FROM operations "
    "ORDER BY rank, name, kind",
    "SELECT rank, rule, subject, severity FROM bottlenecks ORDER BY 1, 2, 3",
    "SELECT rank, series, slope_bytes_per_step, leak FROM memory_fits ORDER BY 1, 2",
    "SELECT rank, key, value FROM metadata ORDER BY rank, key",
    "SELECT rank, thread, name, os_tid, events FROM threads ORDER BY 1, 2",
    "SELECT rank, series, COUNT(*), MAX(bytes) FROM memory GROUP BY 1, 2 ORDER BY 1, 2",
]


def prof_rows(prof, inp, sql):
    r = subprocess.run([prof, "query", inp, sql, "--format", "json"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise SystemExit(f"prof query failed ({r.returncode}): {r.stderr.strip()}")
    return [list(row.values()) for row in json.loads(r.stdout)]


def db_rows(db, sql):
    rows = []
    for row in db.execute(sql).fetchall():
        rows.append([v.hex() if isinstance(v, bytes) else v for v in row])
    return rows


def main():
    prof, inp, path = sys.argv[1:4]
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    have = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = [t for t in TABLES if t not in have]
    if missing:
        raise SystemExit(f"tables missing from {path}: {missing}")
    bad = 0
    for t in TABLES:
        sql = f"SELECT COUNT(*) FROM {t}"
        a, b = prof_rows(prof, inp, sql), db_rows(db, sql)
        if a != b:
            print(f"{t}: prof query counts {a}, the file {b}")
            bad += 1
    for sql in STATEMENTS:
        a, b = prof_rows(prof, inp, sql), db_rows(db, sql)
        if a != b:
            print(f"{sql}\n  prof query: {str(a)[:300]}\n  the file:   {str(b)[:300]}")
            bad += 1
    indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    for want in ("regions_by_rank_step", "regions_by_rank_start_ns", "kernels_by_rank_step"):
        if want not in indexes:
            print(f"index {want} missing")
            bad += 1
    plan = " ".join(str(r) for r in db.execute(
        "EXPLAIN QUERY PLAN SELECT * FROM regions WHERE rank = 0 AND step = 3"))
    if "regions_by_rank_step" not in plan:
        print(f"a one-step query does not use the index: {plan}")
        bad += 1
    sys.exit(1 if bad else 0)


main()
