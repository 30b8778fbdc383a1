#!/usr/bin/python3
"""dask_ranks.py - the ranks of a large job analysed on a Dask cluster.

Each rank's profile is reduced to its summary where a worker can read it
(`prof analyze --summary`), and the summaries, tens of KB each, are
merged on this machine into the job's report: the same report as
`prof analyze DIR` of the profiles themselves (formats/rank-summary.md).

Here the cluster is a LocalCluster of processes on this machine; point
Client at a scheduler's address to run the same map over many machines
that see the profiles (a shared file system).

usage: dask_ranks.py PROFILE_DIR SUMMARY_DIR [prof analyze options...]
       PROF=path/to/prof dask_ranks.py ...   (default: prof on PATH)
"""
import os
import shutil
import subprocess
import sys

from distributed import Client, LocalCluster


def summarise(prof, profile, out_dir):
    """One rank, on a worker: its summary file's path."""
    name = os.path.basename(profile).split(".")[0] + ".summary.json"
    out = os.path.join(out_dir, name)
    done = subprocess.run([prof, "analyze", "--summary", profile, "-o", out],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or "prof exited with %d" % done.returncode)
    return out


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__.split("\n\n")[-1])
    profiles, out_dir, options = argv[1], argv[2], argv[3:]
    prof = os.environ.get("PROF") or shutil.which("prof") or sys.exit("prof not found: set PROF")
    os.makedirs(out_dir, exist_ok=True)
    ranks = sorted(os.path.join(profiles, f) for f in os.listdir(profiles)
                   if not f.startswith(".") and os.path.isfile(os.path.join(profiles, f)))
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    with cluster, Client(cluster) as client:
        futures = client.map(summarise, [prof] * len(ranks), ranks, [out_dir] * len(ranks))
        written = client.gather(futures)
    print("%d rank summaries in %s" % (len(written), out_dir), file=sys.stderr)
    # the merge: summary files given to prof analyze as profiles would be
    sys.exit(subprocess.run([prof, "analyze", out_dir] + options).returncode)


if __name__ == "__main__":
    main(sys.argv)
