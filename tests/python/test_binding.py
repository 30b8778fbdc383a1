"""test_binding.py - the prof package on its own (no PyTorch): every call
recorded into a real profile and read back, the ctypes path without the
extension, loading errors, never raising, fork, threads, autostart and a
preloaded libprof."""
import math
import os
import shutil

from support import B, PACKAGE, Profile, TempDirTest, run_python

API = r"""
import sys, threading, prof
out = sys.argv[1]
assert prof.start(out, tags={"model": "mlp"}), "start"
assert prof.recording()
r = prof.region("outer")
@prof.region("decorated", kind="io")
def work(x):
    return x + 1
for i in range(3):
    with r:
        with prof.region("inner", kind=prof.SYNC):
            pass
        assert work(i) == i + 1
    prof.begin("manual", kind="comm"); prof.end()
    prof.memory("gpu.allocated", 1000 * (i + 1))
    prof.counter("loss", 1.0 / (i + 1))
    prof.mark("checkpoint")
    prof.step()
try:
    with prof.region("raises"):
        raise KeyError("x")
except KeyError:
    pass
with prof.region("after"):
    pass
assert [x for x in prof.data([1, 2])] == [1, 2]
def other():
    prof.thread_name("worker")
    with prof.region("in-thread"):
        pass
t = threading.Thread(target=other); t.start(); t.join()
print(prof._native is not None, repr(r))
assert prof.stop() and not prof.recording()
assert prof.stop()  # idempotent
"""


def ctypes_only_package(tmp):
    """The package without its extension, under tmp (made once): what a
    Python the extension was not built for loads. The PYTHONPATH for it."""
    root = os.path.join(tmp, "py")
    pkg = os.path.join(root, "prof")
    if not os.path.isdir(pkg):
        os.makedirs(pkg)
        for f in ("__init__.py", "torch.py", "_torch_base.py", "_torch_auto.py", "libprof.so"):
            shutil.copy(os.path.join(PACKAGE, "prof", f), pkg)
    return root


def both_paths(tmp):
    """(how, PYTHONPATH) of the package with its extension and without."""
    return (("extension", PACKAGE), ("ctypes", ctypes_only_package(tmp)))


class Api(TempDirTest):
    def check_api_profile(self, out):
        p = Profile(out)
        self.assertTrue(p.clean)
        names = p.names()
        self.assertEqual(names.count("outer"), 3)
        kinds = {r["name"]: (r["kind"], r["depth"]) for r in p.regions}
        self.assertEqual(kinds["outer"], ("compute", 0))
        self.assertEqual(kinds["inner"], ("sync", 1))
        self.assertEqual(kinds["decorated"], ("io", 1))
        self.assertEqual(kinds["manual"], ("comm", 0))
        self.assertEqual(kinds["raises"], ("compute", 0))
        self.assertEqual(kinds["after"], ("compute", 0))  # "raises" was closed
        self.assertEqual(kinds["data_loading"], ("data", 0))
        self.assertEqual(names.count("data_loading"), 3)  # two items and the end
        self.assertEqual(p.series("gpu.allocated"), [1000, 2000, 3000])
        self.assertEqual(p.counters, [("loss", 1.0), ("loss", 0.5), ("loss", 1.0 / 3)])
        self.assertEqual(p.marks, ["checkpoint"] * 3)
        self.assertEqual(len(p.steps), 4)
        self.assertEqual(sorted(t[1] for t in p.threads), ["python3", "worker"])
        thread = [r["thread"] for r in p.regions if r["name"] == "in-thread"]
        self.assertEqual(len(thread), 1)
        main = {r["thread"] for r in p.regions if r["name"] == "outer"}
        self.assertEqual(len(main), 1)
        self.assertNotIn(thread[0], main)
        return p

    def test_every_call_recorded_with_the_extension(self):
        out = self.path("api.prof")
        r = run_python(["-c", API, out])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("True prof.region('outer', kind='compute')"),
                        r.stdout)
        self.check_api_profile(out)
        self.assertEqual(r.stderr, "")

    def test_every_call_recorded_through_ctypes(self):
        out = self.path("api.prof")
        r = run_python(["-c", API, out], pythonpath=ctypes_only_package(self.tmp))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("False prof.region('outer', kind='compute')"),
                        r.stdout)
        self.check_api_profile(out)

    def test_profiler_object(self):
        code = r"""
import sys, prof
with prof.Profiler(sys.argv[1], sample_rate=1.0) as p:
    for i in range(2):
        with p.region("forward"):
            pass
        p.step()
assert not prof.recording()
"""
        out = self.path("p.prof")
        self.assertRan(run_python(["-c", code, out]))
        p = Profile(out)
        self.assertTrue(p.clean)
        self.assertEqual(p.names(), ["forward", "forward"])

    def test_schedule_keeps_only_active_steps(self):
        code = r"""
import sys, prof
prof.start(sys.argv[1], schedule="1:0:2:1")
for i in range(5):
    with prof.region("s%d" % i):
        pass
    prof.step()
"""
        out = self.path("s.prof")
        self.assertRan(run_python(["-c", code, out]))
        p = Profile(out)
        self.assertEqual(p.names(), ["s1", "s2"])
        self.assertEqual(len(p.steps), 6)  # steps are always kept


class NeverRaises(TempDirTest):
    def test_missing_library_is_a_clear_message(self):
        code = r"""
import prof
try:
    prof.library_path()
except prof.LibraryNotFound as e:
    print("raised:", e)
assert prof.start("x.prof") is False
with prof.region("r"):
    prof.step(); prof.memory("m", 1); prof.counter("c", 1); prof.mark("k")
assert prof.start("x.prof") is False
prof.stop()
"""
        missing = os.path.join(self.tmp, "nowhere", "libprof.so")
        r = run_python(code, extra_env={"PROF_LIBRARY": missing})
        self.assertRan(r)
        self.assertIn("raised: prof: cannot load libprof (%s" % missing, r.stdout)
        self.assertIn("set PROF_LIBRARY", r.stdout)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)  # once
        self.assertIn("cannot load libprof", lines[0])
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "x.prof")))

    def test_library_from_prof_library(self):
        r = run_python("import prof; print(prof.library_path())",
                       extra_env={"PROF_LIBRARY": os.path.join(B, "libprof.so")})
        self.assertRan(r)
        self.assertEqual(r.stdout.strip(), os.path.join(B, "libprof.so"))

    def test_unwritable_output_and_bad_values(self):
        code = r"""
import sys, prof
assert prof.start(sys.argv[1]) is False
assert prof.start(sys.argv[1]) is False
assert prof.start(sample_rate=5) is False
assert prof.start(schedule="1:2") is False
assert prof.start(sys.argv[2])
prof.memory("m", -5); prof.memory("m", "lots"); prof.memory(3, 1)
prof.counter("c", "abc"); prof.mark(None)
prof.memory("m", 1.5e3)
prof.stop()
print("went on")
"""
        # the same through the extension and through ctypes alone
        for how, path in both_paths(self.tmp):
            with self.subTest(how):
                out = self.path("ok-%s.prof" % how)
                r = run_python(["-c", code, os.path.join(self.tmp, "no", "dir", "x.prof"), out],
                               pythonpath=path)
                self.assertRan(r)
                self.assertEqual(r.stdout, "went on\n")
                self.assertIn("prof: start: cannot record into '%s': No such file or directory"
                              % os.path.join(self.tmp, "no", "dir", "x.prof"), r.stderr)
                self.assertIn("sample_rate must be in (0, 1]", r.stderr)
                self.assertIn("schedule is wait:warmup:active:repeat", r.stderr)
                self.assertEqual(r.stderr.count("cannot record into"), 1)
                self.assertEqual(r.stderr.count("dropped (reported once)"), 1, r.stderr)
                self.assertEqual(Profile(out).series("m"), [1500])

    def test_reports_go_through_the_prof_logger_either_way(self):
        # one voice: what the extension drops is said through the "prof"
        # logger as the ctypes path says it, so a program's logging
        # configuration formats (or silences) both alike
        code = r"""
import logging, sys, prof
logging.basicConfig(format="LOG %(name)s %(levelname)s %(message)s")
assert prof.start(sys.argv[1])
prof.memory("m", "x")
prof.counter("c", "y")
prof.stop()
logging.getLogger("prof").setLevel(logging.ERROR)
"""
        for how, path in both_paths(self.tmp):
            with self.subTest(how):
                r = run_python(["-c", code, self.path("log-%s.prof" % how)], pythonpath=path)
                self.assertRan(r)
                lines = [l for l in r.stderr.splitlines() if "dropped" in l]
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertTrue(lines[0].startswith("LOG prof WARNING prof: "), r.stderr)

    def test_odd_values_alike_through_the_extension_and_ctypes(self):
        # what is recorded, dropped or made 0 is the same either way, and
        # nothing raises (ctypes once recorded -5 as 0 and raised on 10**400)
        code = r"""
import sys, prof
assert prof.start(sys.argv[1])
class F:
    def __float__(self): return 2.5
for v in (-5, 2**64, float("nan"), float("inf"), -1.5, 7.9, 3, "x", None, True):
    prof.memory("m", v)
for v in (float("nan"), 10**400, "4", b"4", None, F(), 3, True, [1]):
    prof.counter("c", v)
prof.stop()
"""
        for how, path in both_paths(self.tmp):
            with self.subTest(how):
                out = self.path("odd-%s.prof" % how)
                r = run_python(["-c", code, out], pythonpath=path)
                self.assertRan(r)
                self.assertEqual(r.stderr.count("dropped (reported once)"), 1, r.stderr)
                p = Profile(out)
                self.assertEqual(p.series("m"), [0, 0, 0, 7, 3, 1])
                values = [v for name, v in p.counters if name == "c"]
                self.assertTrue(math.isnan(values[0]), values)
                self.assertEqual(values[1:], [2.5, 3.0, 1.0])

    def test_prof_enable_0_records_nothing_silently(self):
        out = self.path("off.prof")
        r = run_python(["-c", "import sys, prof; assert prof.start(sys.argv[1]) is False", out],
                       extra_env={"PROF_ENABLE": "0"})
        self.assertRan(r)
        self.assertEqual(r.stderr, "")
        self.assertFalse(os.path.exists(out))


class Process(TempDirTest):
    def test_fork_child_never_writes_into_the_parent_file(self):
        code = r"""
import os, sys, prof
prof.start(sys.argv[1])
with prof.region("before-fork"):
    pass
for how in ("exit", "_exit"):
    pid = os.fork()
    if pid == 0:
        assert not prof.recording()
        for i in range(1000):
            with prof.region("child"):
                prof.step()
        if how == "exit":
            sys.exit(0)   # runs atexit: prof.stop() in the child
        os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
with prof.region("after-fork"):
    pass
prof.step()
"""
        out = self.path("fork.prof")
        self.assertRan(run_python(["-c", code, out]))
        p = Profile(out)
        self.assertTrue(p.clean)
        self.assertEqual(p.names(), ["before-fork", "after-fork"])
        self.assertEqual(len(p.steps), 2)
        self.assertEqual(len(p.threads), 1)

    def test_autostart_with_prof_output(self):
        out = self.path("auto.prof")
        code = ("import os, prof\nassert prof.recording()\n"
                "assert os.environ['PROF_AUTOSTART_PID'] == str(os.getpid())\n"
                "with prof.region('r'): pass\n")
        self.assertRan(run_python(code, extra_env={"PROF_OUTPUT": out}))
        p = Profile(out)
        self.assertTrue(p.clean)
        self.assertEqual(p.names(), ["r"])

    def test_no_autostart_in_a_child_of_the_recorded_process(self):
        out = self.path("auto.prof")
        code = "import prof\nassert not prof.recording()\n"
        self.assertRan(run_python(code, extra_env={"PROF_OUTPUT": out,
                                                   "PROF_AUTOSTART_PID": "1"}))
        self.assertFalse(os.path.exists(out))

    def test_preloaded_libprof_is_the_one_used(self):
        out = self.path("pre.prof")
        code = ("import prof\nprint(prof.library_path())\nassert prof.recording()\n"
                "with prof.region('r'): prof.step()\n")
        r = run_python(code, extra_env={"PROF_OUTPUT": out,
                                        "LD_PRELOAD": os.path.join(B, "libprof.so")})
        self.assertRan(r)
        self.assertEqual(r.stdout.strip(), "(already loaded in the process)")
        p = Profile(out)
        self.assertTrue(p.clean)
        self.assertEqual(p.names(), ["r"])
        self.assertEqual(len(p.steps), 2)
