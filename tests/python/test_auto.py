"""test_auto.py - prof.torch.auto() on real PyTorch, in a fresh interpreter
each: steps from optimizer steps (one, several, accumulation, GradScaler's
skipped steps), top-level module regions, DataLoader fetches, remove(); then
an unmodified script (plain_train.py) recorded as `prof record` runs it
(through prof record where it injects the binding, else with the same
environment set by hand): steps, operations, leaks, sitecustomize chaining,
exit paths, spawn workers, a program without torch, and two torchrun ranks."""
import glob
import os
import re
import signal
import socket
import subprocess
import sys
import unittest

from support import (B, HERE, PACKAGE, PROF, Profile, TempDirTest, analyze, info, run_python,
                     script_env)

PLAIN = os.path.join(HERE, "plain_train.py")
BOOT = os.path.join(PACKAGE, "prof", "_boot")


def complete(p):
    """The steps a program ended (the last one, closed by stop, is not)."""
    return len(p.steps) - 1


def ops(report):
    return {op["name"]: op for op in report["operations"]}


def leaks(report):
    return [b["subject"] for b in report["bottlenecks"] if b["rule"] == "memory_leak"]


_injects = None


def record_injects():
    """Whether prof record puts the binding on PYTHONPATH itself."""
    global _injects
    if _injects is None:
        r = subprocess.run([PROF, "record", "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        _injects = r.returncode == 0 and "--no-python" in r.stdout
    return _injects


def recorded(out, argv, extra_env=None, pythonpath="", cwd=None, timeout=120, hooks=None):
    """Runs argv as `prof record -o out [--python-hooks hooks] -- argv`
    would, the program unchanged."""
    cmd, env = record_setup(out, argv, extra_env, pythonpath, hooks)
    return subprocess.run(cmd, env=env, cwd=cwd or os.path.dirname(out),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout)


def record_setup(out, argv, extra_env=None, pythonpath="", hooks=None):
    """The command and environment of `prof record -o out -- argv`."""
    env = script_env(extra_env, pythonpath)
    if not pythonpath:
        del env["PYTHONPATH"]
    if record_injects():
        cmd = ([PROF, "record", "-o", out] + (["--python-hooks", hooks] if hooks else [])
               + ["--"] + argv)
        env["PROF_LIBRARY"] = os.path.join(B, "libprof.so")
    else:  # the environment prof record sets up, by hand
        cmd = argv
        env["PYTHONPATH"] = os.pathsep.join([BOOT, PACKAGE] + ([pythonpath] if pythonpath
                                                               else []))
        env.update(LD_PRELOAD=os.path.join(B, "libprof.so"), PROF_OUTPUT=out)
        if hooks:
            env["PROF_PYTHON_HOOKS"] = hooks
    return cmd, env


LOOP = r"""
import sys, torch, prof, prof.torch
from torch import nn
torch.manual_seed(0); torch.set_num_threads(1)
saved = dict(step=torch.optim.SGD.step, item=torch.Tensor.item,
             next=torch.utils.data.dataloader._BaseDataLoaderIter.__next__)
handle = prof.torch.auto()
assert prof.torch.auto() is handle
assert torch.optim.SGD.step is not saved["step"] and torch.Tensor.item is not saved["item"]
prof.start(sys.argv[1])
model = nn.Sequential(nn.Sequential(nn.Linear(8, 16), nn.ReLU()), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.utils.data.TensorDataset(torch.randn(24, 8), torch.randn(24, 1))
def train(loader):
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        loss.item()
train(torch.utils.data.DataLoader(data, batch_size=4))      # 6 steps
handle.remove()
train(torch.utils.data.DataLoader(data, batch_size=12))     # 2, unrecorded
import prof._torch_auto as pa
assert pa._steps is None and prof.step is pa._prof.step
assert "__init_subclass__" not in vars(torch.optim.Optimizer)
assert not torch.nn.modules.module._global_forward_hooks
assert not torch.nn.modules.module._global_forward_pre_hooks
assert torch.utils.data.dataloader._BaseDataLoaderIter.__next__ is saved["next"]
assert torch.Tensor.item is saved["item"] and torch.optim.SGD.step is saved["step"]
assert prof.torch.auto() is not handle  # installs again after remove
prof.torch.auto().remove()
prof.stop()
"""

TWO_OPTIMIZERS = r"""
import sys, torch, prof, prof.torch
from torch import nn
torch.manual_seed(0); torch.set_num_threads(1)
prof.torch.auto()
class Mine(torch.optim.SGD):  # defined after auto(); its step calls SGD's: one step
    def step(self, closure=None):
        return super().step(closure)
prof.start(sys.argv[1])
d, g = nn.Linear(4, 1), nn.Linear(2, 4)
opt_d = torch.optim.Adam(d.parameters(), lr=1e-3)
opt_g = Mine(g.parameters(), lr=1e-2)
for i in range(8):
    fake = g(torch.randn(8, 2))
    loss_d = d(torch.randn(8, 4)).mean() - d(fake.detach()).mean()
    opt_d.zero_grad(); loss_d.backward(); opt_d.step()
    loss_g = -d(g(torch.randn(8, 2))).mean()
    opt_g.zero_grad(); loss_g.backward(); opt_g.step()
prof.stop()
"""

ACCUMULATION = r"""
import sys, torch, prof, prof.torch
from torch import nn
torch.manual_seed(0); torch.set_num_threads(1)
prof.torch.auto("steps,modules")
prof.start(sys.argv[1])
m = nn.Linear(4, 1)
opt = torch.optim.SGD(m.parameters(), lr=0.01)
for i in range(12):  # an optimizer step every 3 micro-batches
    (m(torch.randn(8, 4)).pow(2).mean() / 3).backward()
    if i % 3 == 2:
        opt.step(); opt.zero_grad()
prof.stop()
"""

# No CUDA here, and this torch (1.13) has no torch.amp.GradScaler("cpu"):
# GradScaler is disabled on the CPU and always steps. A stand-in for its
# step, installed before auto() hooks it, skips the optimizer's step the
# way an inf/nan gradient makes the real one skip it.
GRADSCALER = r"""
import sys, torch, prof, prof.torch
from torch import nn
torch.manual_seed(0); torch.set_num_threads(1)
Scaler = getattr(torch.amp, "GradScaler", None) or torch.cuda.amp.GradScaler
skip = {2, 4}
def step(self, optimizer, *args, **kwargs):  # stand-in: inf/nan on the steps in skip
    if it in skip:
        return None
    return optimizer.step(*args, **kwargs)
Scaler.step = step
prof.torch.auto()
prof.start(sys.argv[1])
m = nn.Linear(4, 1)
opt = torch.optim.Adam(m.parameters(), lr=0.01)
scaler = Scaler(enabled=False)
for it in range(6):
    loss = m(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad(); scaler.scale(loss).backward(); scaler.step(opt); scaler.update()
prof.stop()
"""

EXPLICIT = r"""
import sys, torch, prof, prof.torch
from torch import nn
torch.manual_seed(0); torch.set_num_threads(1)
prof.torch.auto()
prof.start(sys.argv[1])
m = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
opt = torch.optim.SGD(m.parameters(), lr=0.01)
prof.torch.instrument(m); prof.torch.instrument(opt)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(20, 4)),
                                     batch_size=4)
for (x,) in prof.data(loader):
    loss = m(x).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    prof.torch.step()
prof.stop()
"""


class Auto(TempDirTest):
    def run_code(self, code):
        out = self.path("a.prof")
        self.assertRan(run_python(["-c", code, out]))
        return Profile(out)

    def test_steps_regions_data_and_remove(self):
        p = self.run_code(LOOP)
        self.assertEqual(complete(p), 6)
        names = p.names()
        self.assertEqual(names.count("Sequential.forward"), 6)
        self.assertEqual(names.count("Sequential.backward"), 6)
        self.assertEqual(names.count("SGD.step"), 6)
        self.assertEqual(p.names("data").count("data_loading"), 7)  # and the one that ends it
        # submodules run inside the top-level forward: not top-level themselves
        self.assertFalse([n for n in names if n.startswith(("Linear.", "ReLU."))], names)
        self.assertEqual({r["depth"] for r in p.regions}, {0})
        self.assertEqual([r for r in p.regions if r["kind"] == "sync"], [])  # CPU: no syncs
        self.assertEqual(p.classes.get("Sequential.forward"), "torch.nn.Sequential")
        self.assertEqual(p.classes.get("SGD.step"), "torch.optim.SGD")
        self.assertEqual(p.classes.get("data_loading"), "torch.utils.data.DataLoader")
        self.assertNotIn("Adam.step", p.classes)  # only the optimizers the program uses

    def test_two_optimizers_give_one_step_an_iteration(self):
        p = self.run_code(TWO_OPTIMIZERS)
        self.assertEqual(complete(p), 8)
        self.assertEqual(p.names().count("Adam.step"), 8)
        self.assertEqual(p.names().count("Mine.step"), 8)
        self.assertNotIn("SGD.step", p.names())  # Mine's super().step() is the same step
        # the cycle is learnt in the first two iterations (step 1 holds the
        # first Mine.step too); from then on each step holds one iteration
        for s in p.steps[2:-1]:
            inside = [r["name"] for r in p.regions if r["name"].endswith(".step")
                      and s["start"] <= r["start"] < s["start"] + s["dur"]]
            self.assertEqual(sorted(inside), ["Adam.step", "Mine.step"], s)

    def test_gradient_accumulation_steps_per_cycle(self):
        p = self.run_code(ACCUMULATION)
        self.assertEqual(complete(p), 4)
        self.assertEqual(p.names().count("Linear.forward"), 12)
        self.assertEqual(p.names("data"), [])

    def test_gradscaler_skipped_step_still_ends_a_step(self):
        p = self.run_code(GRADSCALER)
        self.assertEqual(complete(p), 6)
        self.assertEqual(p.names().count("Adam.step"), 4)
        self.assertEqual(p.marks, ["GradScaler.skipped_step"] * 2)

    def test_explicit_instrumentation_wins(self):
        p = self.run_code(EXPLICIT)
        names = p.names()
        self.assertEqual(complete(p), 5)  # the program's own prof.torch.step(), not twice
        self.assertEqual(names.count("forward"), 5)
        self.assertEqual(names.count("optimizer.step"), 5)
        self.assertNotIn("Sequential.forward", names)
        self.assertNotIn("SGD.step", names)
        self.assertEqual(p.names("data"), ["data_loading"] * 6)  # prof.data's, not twice

    def test_hooks_are_parsed(self):
        code = r"""
import prof._torch_auto as pt
assert pt._parse_hooks(None) == (set(pt.HOOKS), 0) == pt._parse_hooks("all")
assert pt._parse_hooks("steps, data") == ({"steps", "data"}, 0)
assert pt._parse_hooks("none") == (set(), 0)
assert pt._parse_hooks(["modules", "bogus"]) == ({"modules"}, 0)
assert pt._parse_hooks("steps,modules=2,data") == ({"steps", "modules", "data"}, 2)
assert pt._parse_hooks(["modules=0"]) == ({"modules"}, 0)
assert pt._parse_hooks("all,modules=3,modules=1") == (set(pt.HOOKS), 3)
assert pt._parse_hooks("modules=x") == ({"modules"}, 0)
assert pt._parse_hooks("modules=-1,data") == ({"modules", "data"}, 0)
h = pt.auto("steps,modules=2")
assert repr(h) == "prof.torch.auto(hooks='steps,modules=2')", repr(h)
h.remove()
"""
        r = run_python(code)
        self.assertRan(r)
        self.assertIn("unknown hook 'bogus'", r.stderr)
        self.assertIn("bad hook 'modules=x': the depth of modules=N is a whole number", r.stderr)
        self.assertIn("bad hook 'modules=-1'", r.stderr)

    def test_modules_deeper_in_code(self):
        """auto("modules=1"): a submodule called at the top level too keeps
        its one row; another top-level module of the same class and other
        submodules gets rows of its own; instrument() takes over from
        auto()'s hooks; remove() takes every hook off."""
        p = self.run_code(r"""
import sys, torch, prof, prof.torch
from torch import nn
torch.manual_seed(0); torch.set_num_threads(1)
handle = prof.torch.auto("steps,modules=1")
prof.start(sys.argv[1])
model = nn.Sequential(nn.Sequential(nn.Linear(4, 4), nn.ReLU()), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for i in range(4):
    model[0](torch.randn(2, 4)) if i >= 2 else None  # at the top level, after model's first
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
hooked = lambda m: bool(m._forward_pre_hooks) or bool(m._forward_hooks)
assert hooked(model[0]) and hooked(model[1]) and not hooked(model[0][0]) and not hooked(model)
copy = nn.Sequential(nn.Sequential(nn.Linear(4, 4), nn.ReLU()), nn.Linear(4, 1))
copy(torch.randn(2, 4))  # the same submodules: the same rows
other = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.ReLU()))
other(torch.randn(2, 4))
assert hooked(other[1]) and not hooked(other[1][0])
prof.torch.instrument(other[1], name="mine")  # explicit: auto()'s hooks give way
assert len(other[1]._forward_pre_hooks) == 1
handle.remove()
assert not any(hooked(m) for m in model.modules()) and not hooked(other[0])
prof.stop()
""")
        names = p.names()
        self.assertEqual(names.count("Sequential.forward"), 4 + 1)  # and the copy's
        self.assertEqual(names.count("Sequential.0.forward"), 4 + 2 + 1)
        self.assertEqual(names.count("Sequential.1.forward"), 4 + 1)
        self.assertEqual(names.count("Sequential.0.backward"), 4)
        self.assertFalse([n for n in names if n.startswith("Sequential.0.0.")], names)
        self.assertEqual(p.classes.get("Sequential.1.forward"), "torch.nn.Linear")
        for part, cls in (("", "Sequential"), (".0", "Linear"), (".1", "Sequential")):
            self.assertEqual(names.count("Sequential#2%s.forward" % part), 1, names)
            self.assertEqual(p.classes.get("Sequential#2%s.forward" % part), "torch.nn." + cls)


class Unmodified(TempDirTest):
    """plain_train.py, which never imports prof, recorded as prof record runs it."""

    def plain(self, name, *args, status=0, **kw):
        out = self.path(name + ".prof")
        r = recorded(out, [sys.executable, PLAIN] + [str(a) for a in args], **kw)
        self.assertRan(r, status)
        return out, r

    def test_leak_and_clean_variants(self):
        for mode in ("leak", "clean"):
            out, _ = self.plain(mode, mode, 40)
            rep = analyze(out)
            self.assertEqual(rep["summary"]["steps"], 40, mode)
            o = ops(rep)
            for name in ("Net.forward", "Net.backward", "Adam.step", "data_loading",
                         "CrossEntropyLoss.forward"):
                self.assertIn(name, o, mode)
            self.assertEqual(o["Net.forward"]["calls"], 40)
            self.assertEqual(o["Net.forward"]["module_class"], "digits.Net")
            self.assertEqual(leaks(rep), ["host.rss"] if mode == "leak" else [], mode)

    def test_exit_status_and_exceptions_keep_the_profile(self):
        out, _ = self.plain("exit", "clean", 10, "--exit", 3, status=3)
        self.assertEqual(analyze(out)["summary"]["steps"], 10)
        out, r = self.plain("raise", "clean", 10, "--raise", status=1)
        self.assertIn("raised in the middle", r.stderr)
        p = Profile(out)
        self.assertTrue(p.clean)
        self.assertEqual(complete(p), 5)

    def test_ctrl_c_raises_keyboard_interrupt_and_closes_the_profile(self):
        """Ctrl-C reaches the program as KeyboardInterrupt (its finally blocks
        run), and the profile is closed cleanly, not cut by the signal."""
        code = ("import sys, time\n"
                "try:\n"
                "    print('ready', flush=True)\n"
                "    time.sleep(60)\n"
                "except KeyboardInterrupt:\n"
                "    print('interrupted', flush=True)\n"
                "    sys.exit(130)\n")
        out = self.path("int.prof")
        cmd, env = record_setup(out, [sys.executable, "-c", code])
        # As from a terminal: a shell's background job (make check started
        # with &) inherits SIGINT ignored, and Python then never raises
        # KeyboardInterrupt; what is tested is prof record under a Ctrl-C.
        proc = subprocess.Popen(cmd, env=env, cwd=self.tmp, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            self.assertEqual(proc.stdout.readline().strip(), "ready")
            proc.send_signal(signal.SIGINT)
            rest, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertEqual(rest.strip(), "interrupted", err)
        self.assertEqual(proc.returncode, 130, err)
        self.assertTrue(Profile(out).clean, err)

    def test_spawned_workers_neither_record_nor_break(self):
        out, _ = self.plain("spawn", "clean", 6, "--spawn")
        p = Profile(out)
        self.assertEqual(complete(p), 6)
        self.assertEqual(len(p.threads), 1)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["spawn.prof"])

    def test_program_sitecustomize_still_runs_and_torch_is_not_imported(self):
        site = self.path("site")
        os.mkdir(site)
        with open(os.path.join(site, "sitecustomize.py"), "w") as f:
            f.write("import os\nMARK = 'users ' + os.path.basename(__file__)\n")
        code = ("import sys, sitecustomize; print(sitecustomize.MARK); "
                "print('torch' in sys.modules, 'prof' in sys.modules); "
                "print(any(p.endswith('_boot') for p in sys.path))")
        r = recorded(self.path("nt.prof"), [sys.executable, "-c", code], pythonpath=site)
        self.assertRan(r)
        self.assertEqual(r.stdout.split("\n")[:3], ["users sitecustomize.py", "False False",
                                                    "False"])
        self.assertEqual(r.stderr.count("prof: python"), 0, r.stderr)

    def test_a_program_with_its_own_prof_keeps_it(self):
        # prof.py beside the script, or a prof package on the program's
        # PYTHONPATH (behind the binding's entry): the program gets its own
        # module, the PyTorch hooks step aside with one warning, the profile
        # is written
        code = ("import torch\nimport prof\nprint(prof.VALUE, prof.__file__)\n"
                "print(float(torch.ones(3).sum()))\n")
        proj = self.path("proj")
        os.mkdir(proj)
        with open(os.path.join(proj, "prof.py"), "w") as f:
            f.write("VALUE = 42\n")
        with open(os.path.join(proj, "train.py"), "w") as f:
            f.write(code)
        lib = self.path("lib")
        os.makedirs(os.path.join(lib, "prof"))
        with open(os.path.join(lib, "prof", "__init__.py"), "w") as f:
            f.write("VALUE = 7\n")
        with open(self.path("t2.py"), "w") as f:
            f.write(code)
        cases = [("own.prof", [sys.executable, "train.py"], "", proj, "42",
                  os.path.join(proj, "prof.py")),
                 ("lib.prof", [sys.executable, self.path("t2.py")], lib, None, "7",
                  os.path.join(lib, "prof", "__init__.py"))]
        for name, argv, pythonpath, cwd, value, where in cases:
            with self.subTest(name):
                out = self.path(name)
                r = recorded(out, argv, pythonpath=pythonpath, cwd=cwd)
                self.assertRan(r)
                self.assertEqual(r.stdout.split("\n")[:2], [value + " " + where, "3.0"],
                                 r.stdout)
                self.assertEqual(r.stderr.count("its own module named prof (%s)" % where), 1,
                                 r.stderr)
                self.assertEqual(r.stderr.count("prof: python"), 1, r.stderr)
                info(out)

    def test_a_directory_named_prof_is_no_module(self):
        # profiles kept in ./prof/ (no __init__.py): no clash, the hooks run
        code = "import torch, prof\nprint(prof.__file__)\n"
        proj = self.path("proj")
        os.makedirs(os.path.join(proj, "prof"))
        with open(os.path.join(proj, "train.py"), "w") as f:
            f.write(code)
        r = recorded(self.path("dir.prof"), [sys.executable, "train.py"], cwd=proj)
        self.assertRan(r)
        self.assertTrue(r.stdout.strip().endswith(os.path.join("prof", "__init__.py")), r.stdout)
        self.assertNotIn(proj, r.stdout)
        self.assertEqual(r.stderr.count("prof: python"), 0, r.stderr)

    def test_torchrun_two_ranks_one_profile_each(self):
        torchrun = [sys.executable, "-m", "torch.distributed.run"]
        code = self.path("ddp.py")
        with open(code, "w") as f:
            f.write(DDP)
        out = self.path("run.%r.prof")
        # Debian's torch 1.13 on Python 3.11 cannot parse --redirects/--tee 0
        # (the default): redirect stderr, the one the test reads anyway
        # a free port of this machine, not the default 29500 another job may hold
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        r = recorded(out, torchrun + ["--nproc_per_node", "2", "--redirects", "2", "--tee", "2",
                                      "--master_addr", "127.0.0.1", "--master_port", str(port),
                                      code],
                     timeout=120)
        self.assertRan(r)
        files = sorted(os.path.basename(f) for f in glob.glob(self.path("run.*.prof")))
        self.assertEqual(files, ["run.0.prof", "run.1.prof"], r.stderr)
        for rank in (0, 1):
            p = Profile(self.path("run.%d.prof" % rank))
            self.assertEqual(complete(p), 5, rank)
            self.assertEqual(p.names().count("DistributedDataParallel.forward"), 5)
        rep = analyze(self.path("run.0.prof"), self.path("run.1.prof"))
        self.assertIn("DistributedDataParallel.forward", ops(rep))  # both read together


NESTED = r"""
import torch
from torch import nn
torch.manual_seed(0); torch.set_num_threads(1)
model = nn.Sequential(
    nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Sequential(nn.Linear(16, 16), nn.Tanh())),
    nn.Linear(16, 1))
loss_fn = nn.MSELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.utils.data.TensorDataset(torch.randn(24, 8), torch.randn(24, 1))
for x, y in torch.utils.data.DataLoader(data, batch_size=4):
    loss = loss_fn(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
"""

# the modules NESTED's modules=2 records, with their classes: two levels
# below the top-level Sequential, not the innermost Sequential's children
DEEPER = {"Sequential": "torch.nn.Sequential", "Sequential.0": "torch.nn.Sequential",
          "Sequential.1": "torch.nn.Linear", "Sequential.0.0": "torch.nn.Linear",
          "Sequential.0.1": "torch.nn.ReLU", "Sequential.0.2": "torch.nn.Sequential"}


def tree_paths(node, above=()):
    """{path of names from the root's children down: calls} of analyze's call tree."""
    found = {}
    for child in node.get("children", []):
        path = above + (child["name"],)
        found[path] = child["calls"]
        found.update(tree_paths(child, path))
    return found


class Deeper(TempDirTest):
    """prof record --python-hooks modules=N on an unmodified script whose
    model is a Sequential of Sequentials."""

    def record(self, name, hooks):
        script = self.path("nested.py")
        with open(script, "w") as f:
            f.write(NESTED)
        out = self.path(name + ".prof")
        self.assertRan(recorded(out, [sys.executable, script], hooks=hooks))
        return out

    def test_submodules_recorded_nested_with_their_classes(self):
        out = self.record("deep", "steps,modules=2,data")
        p = Profile(out)
        self.assertEqual(complete(p), 6)
        names = p.names()
        for module, cls in DEEPER.items():
            for part in ("forward", "backward"):
                self.assertEqual(names.count(module + "." + part), 6, (module, part, names))
                self.assertEqual(p.classes.get(module + "." + part), cls, module)
        self.assertEqual(names.count("MSELoss.forward"), 6)  # the other top-level module
        self.assertFalse([n for n in names if re.match(r"Sequential\.0\.2\.\d", n)], names)
        # each child inside its parent's region, one level deeper
        regions = [r for r in p.regions if r["name"].startswith("Sequential.")]
        for r in regions:
            parent = r["name"].rsplit(".", 2)[0] + "." + r["name"].rsplit(".", 1)[1]
            if parent == r["name"]:
                continue
            outer = [q for q in regions if q["name"] == parent and q["depth"] == r["depth"] - 1
                     and q["start"] <= r["start"]
                     and r["start"] + r["dur"] <= q["start"] + q["dur"]]
            self.assertEqual(len(outer), 1, (r, parent))
        # the same tree in prof analyze, where a reader sees it
        rep = analyze(out)
        o = ops(rep)
        self.assertEqual(o["Sequential.0.0.forward"]["module_class"], "torch.nn.Linear")
        self.assertEqual(o["Sequential.0.2.backward"]["calls"], 6)
        paths = tree_paths(rep["call_tree"])
        for part in ("forward", "backward"):
            top = [k for k in paths if k[-1] == "Sequential." + part]
            self.assertEqual(len(top), 1, top)
            for module in DEEPER:
                chain = tuple(".".join(module.split(".")[:i]) + "." + part
                              for i in range(1, module.count(".") + 2))
                self.assertEqual(paths.get(top[0][:-1] + chain), 6, (chain, sorted(paths)))

    def test_modules_0_is_plain_modules(self):
        plain = Profile(self.record("plain", "steps,modules,data"))
        zero = Profile(self.record("zero", "steps,modules=0,data"))
        self.assertEqual(sorted(plain.names()), sorted(zero.names()))
        self.assertEqual(sorted(set(plain.names())),
                         ["MSELoss.backward", "MSELoss.forward", "SGD.step",
                          "Sequential.backward",
                          "Sequential.forward", "data_loading"])
        self.assertEqual({r["depth"] for r in zero.regions}, {0})


DDP = r"""
import torch, torch.distributed as dist
from torch import nn
dist.init_process_group("gloo")
torch.manual_seed(0); torch.set_num_threads(1)
model = nn.parallel.DistributedDataParallel(nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(5):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
dist.destroy_process_group()
"""


if __name__ == "__main__":
    unittest.main()
