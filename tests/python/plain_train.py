"""plain_train.py - an ordinary PyTorch training script that knows nothing
of prof: a small CNN on generated 28x28 images, a DataLoader with 2 worker
processes, Adam, the loss logged with .item(). The tests record it with
`prof record` (or the environment `prof record` sets up) unchanged.

usage: plain_train.py clean|leak [STEPS] [--spawn] [--exit N] [--raise]
  clean     keeps each loss as a float
  leak      keeps each loss tensor with its graph (the bug prof should find)
  --spawn   the DataLoader's workers are started by spawn, not fork
  --exit N  ends with sys.exit(N) after training
  --raise   raises an exception in the middle of training
"""
import sys

import torch
from torch import nn

from digits import Images, Net

BATCH = 32


def main(argv):
    mode = argv[1]
    steps = int(argv[2]) if len(argv) > 2 and argv[2].isdigit() else 40
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    loader = torch.utils.data.DataLoader(
        Images(BATCH * steps), batch_size=BATCH, num_workers=2,
        multiprocessing_context="spawn" if "--spawn" in argv else None)
    losses = []
    for i, (x, y) in enumerate(loader):
        if "--raise" in argv and i == steps // 2:
            raise RuntimeError("plain_train.py: raised in the middle of training")
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward(retain_graph=mode == "leak")
        opt.step()
        losses.append(loss if mode == "leak" else loss.item())
        if i % 10 == 0:
            print("step %d loss %.3f" % (i, loss.item()))
    if "--exit" in argv:
        sys.exit(int(argv[argv.index("--exit") + 1]))
    return losses


if __name__ == "__main__":
    kept = main(sys.argv)  # as a script at the top level would keep them: to the end
