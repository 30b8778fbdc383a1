"""bench_python.py - what the Python binding costs, as ratios measured in
one run (DESIGN section 7): ns per region from Python (a reused region, one
made per use, a decorated function, the plain ctypes path) against
torch.profiler.record_function in the same loop with the profiler active
and recording; and the slowdown of a real training loop with
prof.torch.instrument(model) against the same loop without it (and, for
scale, under torch.profiler), the variants taking turns. Each figure is
the best of several rounds. Last, the cost of prof.torch.auto() (what
`prof record -- python3 train.py` installs) on a CNN with a DataLoader of 2
workers and Adam, against the same loop without it (target: at most 2%).
Run by tests/bench/run.sh with $B/python on PYTHONPATH."""
import ctypes
import os
import sys
import tempfile
import time

import prof

ROUNDS = 5
N = 200000


def best_ns(loop, n):
    best = float("inf")
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        loop(n)
        best = min(best, (time.perf_counter() - t0) * 1e9 / n)
    return best


def empty(n):
    for _ in range(n):
        pass


def reused(n):
    r = prof.region("forward")
    for _ in range(n):
        with r:
            pass


def made_each_time(n):
    region = prof.region
    for _ in range(n):
        with region("forward"):
            pass


@prof.region("decorated")
def decorated():
    pass


def decorated_loop(n):
    for _ in range(n):
        decorated()


def ctypes_loop(n):
    lib = ctypes.CDLL(prof.library_path()) if prof.library_path()[0] == "/" else ctypes.CDLL(None)
    begin, end = lib.prof_region_begin_id, lib.prof_region_end
    begin.argtypes, begin.restype = [ctypes.c_uint32, ctypes.c_int], None
    end.argtypes, end.restype = [], None
    rid = prof.intern("forward")
    for _ in range(n):
        begin(rid, 0)
        end()


def region_costs(torch):
    base = best_ns(empty, N)
    rows = [("with region (reused)", best_ns(reused, N)),
            ("with prof.region(name)", best_ns(made_each_time, N)),
            ("@prof.region function", best_ns(decorated_loop, N)),
            ("ctypes begin+end by id", best_ns(ctypes_loop, N // 4))]
    rf = None
    if torch is not None:
        from torch.profiler import ProfilerActivity, profile, record_function

        def rf_loop(n):
            for _ in range(n):
                with record_function("forward"):
                    pass
        with profile(activities=[ProfilerActivity.CPU]):
            rf = best_ns(rf_loop, N // 20)
        rows.append(("torch record_function (active)", rf))
    print("python: ns per region (best of %d; empty loop %.0f ns subtracted)" % (ROUNDS, base))
    print("  extension: %s" % ("yes" if prof._native is not None else "no (ctypes)"))
    for what, ns in rows:
        print("  %-32s %9.0f" % (what, ns - base))
    if rf is not None:
        reused_ns = rows[0][1] - base
        ratio = (rf - base) / reused_ns
        print("ratios")
        print("  %-32s %8.1fx cheaper than record_function  target >= 10x  %s"
              % ("with region (reused)", ratio, "ok" if ratio >= 10 else "MISSED"))
        made = (rf - base) / (rows[1][1] - base)
        print("  %-32s %8.1fx cheaper than record_function" % ("with prof.region(name)", made))


def training_slowdown(torch, width, batch, steps):
    import prof.torch as ptorch
    from torch import nn
    torch.manual_seed(0)
    torch.set_num_threads(1)
    layers = []
    for _ in range(6):
        layers += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(width, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(batch, width), torch.randint(0, 10, (batch,))
    loss_fn = nn.CrossEntropyLoss()

    def loop(n):
        for _ in range(n):
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            ptorch.step()

    def us_per_step(n):
        t0 = time.perf_counter()
        loop(n)
        return (time.perf_counter() - t0) * 1e6 / n

    # The variants take turns, round after round, so that a machine that
    # slows down or speeds up meanwhile weighs on each alike.
    from torch.profiler import ProfilerActivity, profile
    loop(10)  # warm up
    plain = hooked = tp = float("inf")
    for _ in range(ROUNDS):
        plain = min(plain, us_per_step(steps))
        ptorch.instrument(model)
        ptorch.instrument(opt)
        hooked = min(hooked, us_per_step(steps))
        ptorch.uninstrument(model)
        ptorch.uninstrument(opt)
        with profile(activities=[ProfilerActivity.CPU]):
            tp = min(tp, us_per_step(max(steps // 10, 5)))
    nmod = len(list(model.modules()))
    print("training loop: us per step, MLP of %d modules, width %d, batch %d (best of %d x %d)"
          % (nmod, width, batch, ROUNDS, steps))
    print("  %-32s %9.1f" % ("without instrument", plain))
    print("  %-32s %9.1f  %+.1f%%  (%d regions a step)"
          % ("with instrument(model, opt)", hooked, (hooked / plain - 1) * 100, 2 * nmod + 1))
    print("  %-32s %9.1f  %+.1f%%" % ("under torch.profiler", tp, (tp / plain - 1) * 100))


def auto_slowdown(torch, steps=60, rounds=7):
    """prof.torch.auto() on the loop users profile (tests/python/plain_train.py:
    a CNN on 28x28 images, a DataLoader with 2 workers, Adam, .item() every
    step) against the same loop without it: rounds alternate, each the
    median step time of a fresh loader's epoch (its first step, which
    waits for the workers to start, left out); the figure is the ratio of
    the medians over rounds."""
    import statistics
    import prof.torch as ptorch
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import plain_train
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = plain_train.Net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    images = plain_train.Images(plain_train.BATCH * (steps + 1))

    def epoch():
        loader = torch.utils.data.DataLoader(images, batch_size=plain_train.BATCH,
                                             num_workers=2)
        times, t0 = [], None
        for x, y in loader:
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss.item()
            t = time.perf_counter()
            if t0 is not None:
                times.append(t - t0)
            t0 = t
        return statistics.median(times[1:])

    epoch()  # warm up
    plain, hooked = [], []
    for _ in range(rounds):
        plain.append(epoch())
        handle = ptorch.auto()
        hooked.append(epoch())
        handle.remove()
    p, h = statistics.median(plain), statistics.median(hooked)
    print("prof.torch.auto: ms per step, CNN 28x28, DataLoader 2 workers, Adam "
          "(median of %d alternating rounds x %d steps)" % (rounds, steps))
    print("  %-32s %9.3f" % ("without auto()", p * 1e3))
    print("  %-32s %9.3f  %+.1f%%  target <= +2%%  %s"
          % ("with auto() (all hooks)", h * 1e3, (h / p - 1) * 100,
             "ok" if h / p <= 1.02 else "MISSED"))


def main():
    try:
        import torch
    except ImportError:
        torch = None
        print("python: no PyTorch: record_function and training figures skipped")
    with tempfile.TemporaryDirectory(prefix="prof-bench-") as d:
        if not prof.start(os.path.join(d, "bench.prof")):
            sys.exit("bench_python: cannot start recording")
        region_costs(torch)
        if torch is not None:
            training_slowdown(torch, 64, 32, 200)   # small steps: the worst case for hooks
            training_slowdown(torch, 256, 64, 20)
            auto_slowdown(torch)
        prof.stop()


main()
