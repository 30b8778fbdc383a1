"""support.py - what the Python binding's tests share: running a script
under the built package, and reading the profile it wrote with the real
tools (prof info, the dump_events helper, prof analyze where it exists).

Environment, as tests/suite.sh sets it: PROF (the prof binary), TEST_BIN (the
helper binaries), B (the build directory: the package is in $B/python).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
B = os.path.join(ROOT, os.environ.get("B", "build"))
PROF = os.path.join(ROOT, os.environ.get("PROF", os.path.join(B, "prof")))
TEST_BIN = os.path.join(ROOT, os.environ.get("TEST_BIN", os.path.join(B, "rel/tests/bin")))
PACKAGE = os.path.join(B, "python")
HERE = os.path.dirname(os.path.abspath(__file__))


def script_env(extra=None, pythonpath=PACKAGE):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PROF_") and k not in ("LD_PRELOAD", "RANK", "WORLD_SIZE")}
    env["PYTHONPATH"] = pythonpath
    env["OMP_NUM_THREADS"] = "1"
    env.update(extra or {})
    return env


def run_python(args, extra_env=None, pythonpath=PACKAGE, timeout=300):
    """Runs this interpreter on args (a list; a str is code for -c)."""
    argv = [sys.executable] + (["-c", args] if isinstance(args, str) else list(args))
    return subprocess.run(argv, env=script_env(extra_env, pythonpath), cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout)


def train(mode, output, *args, extra_env=None):
    """Runs tests/python/train.py MODE OUTPUT ARGS..."""
    return run_python([os.path.join(HERE, "train.py"), mode, output] + [str(a) for a in args],
                      extra_env=extra_env)


def info(path):
    """prof info's stdout; fails the test when prof cannot read the file."""
    r = subprocess.run([PROF, "info", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode != 0:
        raise AssertionError("prof info %s: status %d: %s" % (path, r.returncode, r.stderr))
    return r.stdout


class Profile:
    """The events of a profile, as dump_events prints them."""

    def __init__(self, path):
        r = subprocess.run([os.path.join(TEST_BIN, "dump_events"), path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise AssertionError("dump_events %s: status %d: %s" % (path, r.returncode, r.stderr))
        self.regions, self.steps, self.memory, self.counters = [], [], [], []
        self.marks, self.threads, self.status = [], [], {}
        self.classes = {}  # name -> class, the last name attribute of each
        for line in r.stdout.splitlines():
            f = line.split("\t")
            if f[0] == "region":
                self.regions.append({"thread": int(f[1]), "name": f[2], "kind": f[3],
                                     "depth": int(f[4]), "start": int(f[5]), "dur": int(f[6])})
            elif f[0] == "step":
                self.steps.append({"number": int(f[2]), "flags": int(f[3]),
                                   "start": int(f[4]), "dur": int(f[5])})
            elif f[0] == "memory":
                self.memory.append((f[2], int(f[3]), int(f[4])))
            elif f[0] == "counter":
                self.counters.append((f[2], float(f[3])))
            elif f[0] == "mark":
                self.marks.append(f[2])
            elif f[0] == "thread":
                self.threads.append((int(f[1]), f[2], int(f[3])))
            elif f[0] == "attr" and f[2] == "1":  # PROF_ATTR_CLASS
                self.classes[f[1]] = f[3]
            elif f[0] == "status":
                self.status = dict(kv.split("=") for kv in f[1:])

    @property
    def clean(self):
        return self.status.get("clean") == "1"

    def names(self, kind=None):
        return [r["name"] for r in self.regions if kind is None or r["kind"] == kind]

    def series(self, name):
        return [v for s, v, _ in self.memory if s == name]


def analyze_available():
    try:
        r = subprocess.run([PROF, "analyze", "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    except OSError:
        return False
    return r.returncode == 0


def analyze(path, *options):
    """prof analyze --format json --top 0 (every operation), parsed. Status
    0 or 1 (findings) are fine."""
    r = subprocess.run([PROF, "analyze", "--format", "json", "--top", "0"] + list(options)
                       + [path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode not in (0, 1):
        raise AssertionError("prof analyze %s: status %d: %s" % (path, r.returncode, r.stderr))
    return json.loads(r.stdout)


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="prof-python-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)

    def assertRan(self, result, status=0):
        self.assertEqual(result.returncode, status,
                         "status %d, want %d; stderr: %s" % (result.returncode, status,
                                                              result.stderr[-2000:]))
