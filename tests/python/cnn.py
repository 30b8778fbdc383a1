"""cnn.py - a small convolutional network trained on generated 28x28
images, recorded with prof: the loop users profile (DataLoader, Adam, a loss
logged with .item() every step). The comparison tests run it several times
a side, as repeated runs of one program.

usage: cnn.py OUTPUT [STEPS] [--slow-forward]
  --slow-forward  the model's forward does about 30% more work (its
                  convolutions run twice), the regression the tests look for
"""
import sys

import torch
from torch import nn

import prof
import prof.torch

OUTPUT = sys.argv[1]
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 60
SLOW = "--slow-forward" in sys.argv[2:]
BATCH = 32

torch.manual_seed(0)
torch.set_num_threads(1)


class Images(torch.utils.data.Dataset):
    """Generated digits: a class-dependent blob plus noise, made per item."""

    def __len__(self):
        return BATCH * STEPS

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        label = i % 10
        x = 0.3 * torch.randn(1, 28, 28, generator=g)
        x[0, 2 * label:2 * label + 8, 4:24] += 1.0
        return x, label


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(16 * 7 * 7, 64), nn.ReLU(),
                                  nn.Linear(64, 10))

    def forward(self, x):
        if SLOW:
            with torch.no_grad():
                self.features(x)  # wasted work: the regression under test
        return self.head(self.features(x))


def main():
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = torch.utils.data.DataLoader(Images(), batch_size=BATCH, shuffle=False)
    if not prof.start(OUTPUT):
        sys.exit("cnn.py: prof.start failed")
    prof.torch.instrument(model)
    prof.torch.instrument(opt)
    prof.torch.track_syncs()
    for x, y in prof.data(loader):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        prof.counter("loss", loss.item())
        prof.torch.step()
    if not prof.stop():
        sys.exit("cnn.py: prof.stop failed")


main()
