"""torch_train.py - a short PyTorch training loop on CUDA for
tests/gpu/device-check.sh, run three ways:

    python3 torch_train.py STEPS [--timing FILE]          under `prof record
        [--cuda]`: the binding records by itself (the script calls neither
        prof.start nor prof.stop); the model and optimizer are instrumented
        with prof.torch and steps marked with prof.torch.step
    python3 torch_train.py STEPS --kineto TRACE.json [--timing FILE]
        under torch.profiler (CPU and CUDA activity) from before the model
        is made to the last step, each step marked, written as a Kineto
        trace: the same work as the first way, for `prof import`
    python3 torch_train.py STEPS --plain [--timing FILE]
        neither: the loop alone, for the overhead

NVTX ranges mark each step's phases and loss.item() makes the CPU wait for
the GPU every step. --timing FILE gets {"steps": N, "ms_per_step": X}: the
mean over the steps after the first WARMUP, timed with the GPU drained.
"""
import argparse
import json
import sys
import time

import torch
from torch import nn

WARMUP = 5


def train(steps, on_step, instrument):
    dev = torch.device("cuda")
    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                          nn.Linear(4096, 1024)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    instrument(model, opt)
    x = torch.randn(512, 1024, device=dev)
    y = torch.randn(512, 1024, device=dev)
    t0 = None
    for s in range(steps):
        if s == min(WARMUP, steps - 1):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        torch.cuda.nvtx.range_push("train_step")
        torch.cuda.nvtx.range_push("forward_backward")
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        torch.cuda.nvtx.range_pop()
        opt.step()
        torch.cuda.nvtx.range_push("loss.item")
        loss.item()
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_pop()
        on_step()
    torch.cuda.synchronize()
    timed = steps - min(WARMUP, steps - 1)
    return (time.perf_counter() - t0) * 1e3 / timed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("steps", type=int)
    how = ap.add_mutually_exclusive_group()
    how.add_argument("--kineto", metavar="TRACE.json")
    how.add_argument("--plain", action="store_true")
    ap.add_argument("--timing", metavar="FILE")
    a = ap.parse_args()
    if a.steps < 1:
        ap.error("STEPS must be 1 or more")
    if not torch.cuda.is_available():
        sys.exit("torch_train.py: CUDA is not available to torch")

    if a.kineto:
        # One cycle of the schedule, recording from the start: the profiler
        # then marks each step (ProfilerStep#N), which it does only with a
        # schedule, and writes the trace at the last step.
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        every_step = torch.profiler.schedule(wait=0, warmup=0, active=a.steps, repeat=1)
        with torch.profiler.profile(activities=acts, schedule=every_step,
                                    on_trace_ready=lambda p: p.export_chrome_trace(a.kineto)) as p:
            ms = train(a.steps, p.step, lambda m, o: None)
    elif a.plain:
        ms = train(a.steps, lambda: None, lambda m, o: None)
    else:
        import prof
        import prof.torch

        def instrument(model, opt):
            prof.torch.instrument(model)
            prof.torch.instrument(opt)

        ms = train(a.steps, prof.torch.step, instrument)
    if a.timing:
        with open(a.timing, "w") as f:
            json.dump({"steps": a.steps, "ms_per_step": ms}, f)
    print("torch_train.py: %d steps, %.3f ms/step" % (a.steps, ms))


if __name__ == "__main__":
    main()
