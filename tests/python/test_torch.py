"""test_torch.py - real PyTorch training (tests/python/train.py) recorded
through prof and prof.torch, then the profile read back with the real
tools: dump_events always, prof analyze --format json where it exists."""
import os
import subprocess
import sys
import unittest

from support import (B, HERE, PROF, Profile, TempDirTest, analyze, analyze_available, info,
                     run_python, script_env, train)

STEPS = 30
MB = 1 << 20


def ops(report):
    return {op["name"]: op for op in report["operations"]}


def rules(report, rule):
    return [b for b in report["bottlenecks"] if b["rule"] == rule]


class Training(TempDirTest):
    def trained(self, mode, steps=STEPS, status=0, extra_env=None):
        out = self.path(mode + ".prof")
        r = train(mode, out, steps, extra_env=extra_env)
        self.assertRan(r, status)
        p = Profile(out)
        self.assertTrue(p.clean, "not closed cleanly: %s" % p.status)
        self.assertIn("closed cleanly", info(out))
        return out, p

    def test_clean_run(self):
        out, p = self.trained("clean")
        names = p.names()
        for name in ("forward", "backward", "optimizer.step", "data_loading",
                     "0.0.forward", "0.0.backward", "2.forward", "2.backward"):
            self.assertEqual(names.count(name), STEPS if name != "data_loading" else STEPS + 1,
                             name)
        self.assertEqual(len(p.steps), STEPS + 1)  # the last one closed by stop()
        self.assertEqual(len(p.series("host.rss")), STEPS + 1)
        self.assertEqual([c for c, _ in p.counters], ["loss"] * STEPS)
        losses = [v for _, v in p.counters]
        self.assertLess(sum(losses[-5:]), sum(losses[:5]) / 2)  # it really trains
        by = {}
        for r in p.regions:
            by.setdefault(r["name"], set()).add(r["depth"])
        # nested as the modules nest: model, Sequential, layer
        self.assertEqual(by["forward"], {0})
        self.assertEqual(by["0.forward"], {1})
        self.assertEqual(by["0.2.forward"], {2})
        self.assertEqual(by["backward"], {0})
        self.assertEqual(by["0.backward"], {1})
        self.assertEqual(by["0.2.backward"], {2})
        self.assertEqual(by["optimizer.step"], {0})
        self.assertEqual(set(p.names("data")), {"data_loading"})
        # each backward region lies inside its parent's
        outer = [r for r in p.regions if r["name"] == "backward"]
        inner = [r for r in p.regions if r["name"] == "0.2.backward"]
        for o, i in zip(outer, inner):
            self.assertTrue(o["start"] <= i["start"] and
                            i["start"] + i["dur"] <= o["start"] + o["dur"])
        if analyze_available():
            rep = analyze(out)
            o = ops(rep)
            for name in ("forward", "backward", "optimizer.step"):
                self.assertEqual(o[name]["calls"], STEPS, name)
                self.assertTrue(0 < o[name]["incl_share"] <= 1, o[name])
            shares = sum(op["self_share"] for op in rep["operations"])
            self.assertLessEqual(shares, 1.0 + 1e-6)
            self.assertGreater(o["forward"]["incl_share"] + o["backward"]["incl_share"], 0.2)
            self.assertEqual(rules(rep, "memory_leak"), [])

    def test_module_classes_are_recorded(self):
        out, p = self.trained("clean")
        want = {"forward": "torch.nn.Sequential", "backward": "torch.nn.Sequential",
                "0.forward": "torch.nn.Sequential", "0.0.forward": "torch.nn.Linear",
                "0.0.backward": "torch.nn.Linear", "0.1.forward": "torch.nn.ReLU",
                "1.forward": "__main__.Flaky", "2.backward": "torch.nn.Linear",
                "optimizer.step": "torch.optim.SGD"}
        for name, cls in want.items():
            self.assertEqual(p.classes.get(name), cls, name)
        self.assertNotIn("data_loading", p.classes, "a generator has no class worth saying")
        if analyze_available():
            rep = analyze(out, "--hot-threshold", "1")
            o = ops(rep)
            self.assertEqual(o["0.0.forward"]["module_class"], "torch.nn.Linear")
            self.assertEqual(o["optimizer.step"]["module_class"], "torch.optim.SGD")
            self.assertNotIn("module_class", o["data_loading"])
            for b in rules(rep, "hot_operation"):
                cls = b["evidence"].get("module_class", "")
                if cls == "torch.nn.Linear":
                    self.assertIn("single library layer (torch.nn.Linear)", b["recommendation"])
                    self.assertNotIn("profile inside it", b["recommendation"])

    def test_dataloader_and_classes_set_before_start(self):
        code = r"""
import sys, torch, prof, prof.torch
from torch import nn
m = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
prof.torch.instrument(m)  # before start: the classes still reach the file
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 4)),
                                     batch_size=2)
assert prof.class_name(loader) == "torch.utils.data.DataLoader"
assert prof.class_name(nn.Linear) == "torch.nn.Linear"
prof.start(sys.argv[1])
for (x,) in prof.data(loader):
    m(x).sum().backward()
    prof.torch.step()
prof.stop()
"""
        out = self.path("c.prof")
        self.assertRan(run_python(["-c", code, out]))
        p = Profile(out)
        self.assertEqual(p.classes.get("0.forward"), "torch.nn.Linear")
        self.assertEqual(p.classes.get("forward"), "torch.nn.Sequential")
        self.assertEqual(p.classes.get("data_loading"), "torch.utils.data.DataLoader")

    def test_leak_is_found_on_host_rss(self):
        out, p = self.trained("leak", steps=20)
        rss = p.series("host.rss")
        self.assertGreater((rss[-1] - rss[2]) / (len(rss) - 3), 10 * MB)
        if analyze_available():
            leaks = rules(analyze(out), "memory_leak")
            self.assertEqual([b["subject"] for b in leaks], ["host.rss"])

    def test_clean_run_does_not_grow(self):
        out, p = self.trained("clean")
        rss = p.series("host.rss")
        self.assertLess(abs(rss[-1] - rss[5]) / (len(rss) - 6), 1 * MB)

    def test_reads_of_cpu_tensors_are_not_syncs(self):
        # .item() on the loss every step and Adam's own .item() per
        # parameter: on the CPU none of them waits for a device.
        out, p = self.trained("syncs")
        self.assertEqual([r for r in p.regions if r["kind"] == "sync"], [])
        self.assertEqual(p.names().count("optimizer.step"), STEPS)
        if analyze_available():
            rep = analyze(out)
            self.assertEqual(rep["summary"]["sync"]["count"], 0)
            self.assertNotIn("Tensor.item", ops(rep))
            self.assertEqual(rules(rep, "cpu_gpu_sync"), [])

    def test_exception_in_a_region_leaves_a_valid_file(self):
        out, p = self.trained("raise", status=1)
        ev = [r for r in p.regions if r["name"] == "evaluate"]
        self.assertEqual(len(ev), 1)
        self.assertEqual(ev[0]["depth"], 0)
        # the forward that raised in step 2 was closed: later ones are still outermost
        self.assertEqual({r["depth"] for r in p.regions if r["name"] == "forward"}, {0})
        self.assertEqual(p.names().count("forward"), STEPS)
        self.assertEqual(p.names().count("backward"), STEPS - 1)
        if analyze_available():
            analyze(out)

    def test_script_without_stop_leaves_a_valid_file(self):
        out, p = self.trained("nostop")
        self.assertEqual(len(p.steps), STEPS + 1)

    def test_prof_output_starts_recording(self):
        out = self.path("auto.prof")
        r = train("autostart", "-", STEPS, extra_env={"PROF_OUTPUT": out})
        self.assertRan(r)
        p = Profile(out)
        self.assertTrue(p.clean)
        self.assertEqual(p.names().count("optimizer.step"), STEPS)

    def test_dataloader_with_two_workers(self):
        out, p = self.trained("dataloader")
        self.assertEqual(p.names().count("optimizer.step"), STEPS)
        self.assertEqual(p.names("data").count("data_loading"), STEPS + 1)
        # the workers recorded into nothing: no region of theirs, one process
        self.assertNotIn("dataset.getitem", p.names())
        self.assertEqual(len(p.threads), 1)

    def test_prof_record_runs_python(self):
        help_ = subprocess.run([PROF, "record", "--help"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        if help_.returncode != 0:
            self.skipTest("prof record is not built yet")
        out = self.path("record.prof")
        r = subprocess.run([PROF, "record", "-o", out, "--", sys.executable,
                            os.path.join(HERE, "train.py"), "autostart", "-", "10"],
                           env=script_env({"PROF_LIBRARY": os.path.join(B, "libprof.so")}),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=300)
        self.assertRan(r)
        p = Profile(out)
        self.assertTrue(p.clean)
        self.assertEqual(p.names().count("optimizer.step"), 10)


# A loop that keeps every loss with its graph (losses.append(loss) where
# loss.item() was meant), on a process holding ~500 MiB: host.rss grows about
# 0.2 MiB a step, far under the 10 MiB/step the memory_leak rule once
# required; the same loop keeping floats does not grow.
KEEP_LOSSES = r"""
import sys, torch, prof
from torch import nn
mode, out, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.manual_seed(0); torch.set_num_threads(1)
ballast = torch.ones(64 << 20)  # 256 MiB the process holds all along
model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
assert prof.start(out)
losses = []
for step in range(steps):
    loss = nn.functional.mse_loss(model(torch.randn(32, 256)), torch.randn(32, 1))
    opt.zero_grad(); loss.backward(retain_graph=mode == "leak"); opt.step()
    losses.append(loss if mode == "leak" else loss.item())
    prof.step()
prof.stop()
"""


class SlowLeak(TempDirTest):
    def recorded(self, mode):
        out = self.path(mode + ".prof")
        self.assertRan(run_python(["-c", KEEP_LOSSES, mode, out, "300"]))
        return analyze(out)

    def test_losses_kept_with_their_graphs_are_a_leak(self):
        if not analyze_available():
            self.skipTest("prof analyze is not built yet")
        rep = self.recorded("leak")
        leaks = rules(rep, "memory_leak")
        self.assertEqual([b["subject"] for b in leaks], ["host.rss"])
        slope = leaks[0]["evidence"]["slope_bytes_per_step"]
        self.assertTrue(0.05 * MB < slope < 1 * MB, slope)  # about 0.2 MiB/step
        self.assertIn("MiB/step", leaks[0]["title"])

    def test_losses_kept_as_floats_are_not(self):
        if not analyze_available():
            self.skipTest("prof analyze is not built yet")
        rep = self.recorded("clean")
        self.assertEqual(rules(rep, "memory_leak"), [])
        rss = [m for m in rep["memory"] if m["series"] == "host.rss"][0]
        self.assertFalse(rss["fit"]["leak"])


class Instrument(TempDirTest):
    def test_uninstrument_and_untrack_restore_everything(self):
        code = r"""
import sys, torch, prof, prof.torch
from torch import nn
class OnDevice(torch.Tensor):  # reads as a tensor of an asynchronous device would
    is_cpu = property(lambda self: False)
    __torch_function__ = torch._C._disabled_torch_function_impl
m = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
opt = torch.optim.SGD(m.parameters(), lr=0.1)
item = torch.Tensor.item
sync = torch.cuda.synchronize
assert prof.start(sys.argv[1])
prof.torch.instrument(m); prof.torch.instrument(opt)
with prof.torch.track_syncs():
    assert torch.Tensor.item is not item
    m(torch.randn(2, 4)).sum().backward(); opt.step(); torch.ones(1).as_subclass(OnDevice).item()
prof.torch.step()
assert torch.Tensor.item is item and torch.cuda.synchronize is sync
prof.torch.uninstrument(m); prof.torch.uninstrument(opt)
assert not m._forward_hooks and not m._forward_pre_hooks and "step" not in vars(opt)
m(torch.randn(2, 4)).sum().backward(); opt.step(); torch.ones(1).as_subclass(OnDevice).item()
prof.torch.step()
prof.stop()
"""
        out = self.path("u.prof")
        self.assertRan(run_python(["-c", code, out]))
        p = Profile(out)
        self.assertEqual(p.names().count("forward"), 1)
        self.assertEqual(p.names().count("optimizer.step"), 1)
        self.assertEqual(p.names("sync"), ["Tensor.item"])

    def test_which_reads_wait_for_a_device(self):
        # No GPU here: tensor-like objects stand for the devices' tensors.
        code = r"""
import types, torch, prof.torch as pt
dev = lambda cpu=False, meta=False: types.SimpleNamespace(is_cpu=cpu, is_meta=meta)
assert pt.tensor_waits(dev())                       # cuda, xpu, mps, xla, ...
assert not pt.tensor_waits(dev(cpu=True))
assert not pt.tensor_waits(dev(meta=True))
assert not pt.tensor_waits(torch.ones(2))
assert not pt.tensor_waits(torch.ones(2, 2).to_sparse())
assert not pt.tensor_waits(torch.empty(2, device="meta"))  # no data: nothing to wait for
assert pt.cuda_waits() == torch.cuda.is_initialized()
"""
        self.assertRan(run_python(code))

    def test_reads_of_device_tensors_are_syncs(self):
        # A CPU tensor that says it is not on the CPU goes the way a CUDA
        # tensor goes; synchronize counts once CUDA is (said to be) initialized.
        # No GPU is visible to it: on a machine with one, the first
        # synchronize initializes CUDA and the three after it wait (4 counted).
        code = r"""
import sys, torch, prof, prof.torch
class OnDevice(torch.Tensor):
    is_cpu = property(lambda self: False)
    __torch_function__ = torch._C._disabled_torch_function_impl  # one call, one read
prof.start(sys.argv[1])
prof.torch.track_syncs()
for i in range(4):
    x = torch.arange(3.0) * i
    d = x.as_subclass(OnDevice)
    x.sum().as_subclass(OnDevice).item(); d.tolist(); d.cpu(); d.numpy()
    x.sum().item(); x.tolist(); x.cpu(); x.numpy()
    try:
        torch.cuda.synchronize()  # CUDA not initialized: no wait (raises without CUDA)
    except (AssertionError, RuntimeError):
        pass
    prof.torch.step()
torch.cuda.is_initialized = lambda: True
try:
    torch.cuda.synchronize()
except Exception:  # no CUDA here; the region is recorded all the same
    pass
prof.stop()
"""
        out = self.path("s.prof")
        self.assertRan(run_python(["-c", code, out], extra_env={"CUDA_VISIBLE_DEVICES": ""}))
        p = Profile(out)
        syncs = [r["name"] for r in p.regions if r["kind"] == "sync"]
        for name in ("Tensor.item", "Tensor.tolist", "Tensor.cpu", "Tensor.numpy"):
            self.assertEqual(syncs.count(name), 4, name)
        self.assertEqual(syncs.count("cuda.synchronize"), 1)
        self.assertEqual(len(syncs), 17)
        if analyze_available():
            sync = analyze(out)["summary"]["sync"]
            self.assertEqual(sync["count"], 17)

    def test_depth_and_forward_only(self):
        code = r"""
import sys, torch, prof, prof.torch
from torch import nn
m = nn.Sequential(nn.Sequential(nn.Linear(4, 4), nn.ReLU()), nn.Linear(4, 1))
prof.start(sys.argv[1])
prof.torch.instrument(m, depth=1, backward=False, name="net")
m(torch.randn(2, 4)).sum().backward()
prof.torch.step()
"""
        out = self.path("d.prof")
        self.assertRan(run_python(["-c", code, out]))
        self.assertEqual(sorted(Profile(out).names()),
                         ["net.0.forward", "net.1.forward", "net.forward"])

    def test_shared_module_and_no_grad_inputs(self):
        # A module used twice, a forward under no_grad (no backward), and
        # an input that needs its gradient.
        code = r"""
import sys, torch, prof, prof.torch
from torch import nn
lin = nn.Linear(8, 8)
class Twice(nn.Module):
    def __init__(self):
        super().__init__(); self.lin = lin
    def forward(self, x):
        return self.lin(torch.relu(self.lin(x)))
m = Twice()
prof.start(sys.argv[1])
prof.torch.instrument(m)
for i in range(3):
    with torch.no_grad():
        m(torch.randn(2, 8))
    x = torch.randn(2, 8, requires_grad=True)
    m(x).sum().backward()
    prof.torch.step()
prof.stop()
"""
        out = self.path("t.prof")
        self.assertRan(run_python(["-c", code, out]))
        p = Profile(out)
        names = p.names()
        self.assertEqual(names.count("forward"), 6)
        self.assertEqual(names.count("lin.forward"), 12)
        self.assertEqual(names.count("backward"), 3)
        self.assertEqual(names.count("lin.backward"), 6)
        for r in p.regions:
            self.assertEqual(r["depth"], 0 if "." not in r["name"] else 1, r)


if __name__ == "__main__":
    unittest.main()
