"""train.py - real training of a small network on generated data, recorded
with prof; the tests run it in a fresh interpreter, one mode at a time.

usage: train.py MODE OUTPUT [STEPS]
  clean       an MLP regression: instrumented model and optimizer, user
              regions, a loss counter, prof.stop() at the end
  leak        as clean with bigger batches, keeping every loss with its
              graph (backward(retain_graph=True)) in a list: ~14 MB a step
  syncs       .item() on the loss every step under prof.torch.track_syncs(),
              with Adam (which reads its step count with .item() per
              parameter): on CPU tensors, none of them a sync
  raise       a module raises in one step (caught, training goes on), then
              an exception inside a region ends the script
  nostop      never calls prof.stop()
  autostart   calls neither start nor stop: PROF_OUTPUT starts it
  dataloader  a DataLoader with 2 worker processes; the dataset records a
              region in the workers, which must not reach the file
  plain       no prof at all (a baseline for timing)
"""
import sys

import torch
from torch import nn

MODE, OUTPUT = sys.argv[1], sys.argv[2]
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 30

if MODE != "plain":
    import prof
    import prof.torch

torch.manual_seed(0)
torch.set_num_threads(1)


class Flaky(nn.Module):
    """Raises in its forward when told to."""
    fail = False

    def forward(self, x):
        if self.fail:
            raise RuntimeError("flaky module")
        return x


def mlp(width, depth, inputs=64):
    layers = [nn.Linear(inputs, width), nn.ReLU()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(nn.Sequential(*layers), Flaky(), nn.Linear(width, 1))


def batches(n, batch):
    g = torch.Generator().manual_seed(1)
    w = torch.randn(64, 1, generator=g)
    for _ in range(n):
        x = torch.randn(batch, 64, generator=g)
        yield x, x @ w / 8 + 0.1 * torch.randn(batch, 1, generator=g)


class Generated(torch.utils.data.Dataset):
    def __len__(self):
        return 16 * STEPS

    def __getitem__(self, i):
        with prof.region("dataset.getitem", kind=prof.DATA):  # in a worker: not recorded
            g = torch.Generator().manual_seed(i)
            x = torch.randn(64, generator=g)
            return x, x[:1] * 2


def main():
    big = MODE == "leak"
    model = mlp(128, 3)
    if MODE == "syncs":
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if MODE not in ("plain", "autostart") and not prof.start(OUTPUT):
        sys.exit("train.py: prof.start failed")
    if MODE != "plain":
        prof.torch.instrument(model)
        prof.torch.instrument(opt)
    if MODE == "syncs":
        prof.torch.track_syncs()
    kept = []
    if MODE == "dataloader":
        loader = torch.utils.data.DataLoader(Generated(), batch_size=16, num_workers=2)
        data = prof.data(loader)
    elif MODE == "plain":
        data = batches(STEPS, 64)
    else:
        data = prof.data(batches(STEPS, 4096 if big else 64))
    for step, (x, y) in enumerate(data):
        if MODE == "raise":
            model[1].fail = step == 2
        try:
            loss = nn.functional.mse_loss(model(x), y)
        except RuntimeError:
            assert MODE == "raise"
            prof.torch.step()
            continue
        opt.zero_grad()
        loss.backward(retain_graph=big)
        opt.step()
        if big:
            kept.append(loss)  # the bug: every graph stays alive
        if MODE == "syncs":
            print(loss.item(), file=sys.stderr) if step == 0 else loss.item()
        elif MODE != "plain":
            prof.counter("loss", float(loss.detach()))
        if MODE == "plain":
            continue
        prof.torch.step()
    if MODE == "raise":
        with prof.region("evaluate"):
            raise RuntimeError("raised inside a region")
    if MODE in ("clean", "leak", "syncs", "dataloader"):
        if not prof.stop():
            sys.exit("train.py: prof.stop failed")


main()
