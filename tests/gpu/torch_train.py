"""torch_train.py - a PyTorch training loop on CUDA for tests/gpu/run.sh, run
under `prof record --cuda` (recording starts itself: the script calls neither
prof.start nor prof.stop). The model and optimizer are instrumented with
prof.torch, NVTX ranges mark each step's phases, and loss.item() makes the
CPU wait for the GPU every step.

    python3 torch_train.py [STEPS]     (default 30)
"""
import sys

import torch
from torch import nn

import prof
import prof.torch

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 30


def main():
    if not torch.cuda.is_available():
        sys.exit("torch_train.py: CUDA is not available to torch")
    dev = torch.device("cuda")
    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    prof.torch.instrument(model)
    prof.torch.instrument(opt)
    x = torch.randn(256, 1024, device=dev)
    y = torch.randn(256, 1024, device=dev)
    for _ in range(STEPS):
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
        prof.torch.step()
    print("torch_train.py: %d steps" % STEPS)


if __name__ == "__main__":
    main()
