"""digits.py - the small convolutional network and the generated 28x28
images that the real-run tests train (cnn.py, plain_train.py): a
class-dependent blob plus noise, made per item so that DataLoader workers
can build them."""
import time

import torch
from torch import nn


class Images(torch.utils.data.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        label = i % 10
        x = 0.3 * torch.randn(1, 28, 28, generator=g)
        x[0, 2 * label:2 * label + 8, 4:24] += 1.0
        return x, label


WASTE_SIZE = 128
# How long the slow forward's wasted products run, on any machine: a fixed
# number of them (eight) cost 10 ms here but 0.4 ms where the BLAS is
# faster (MKL, AVX-512), under the noise between runs there; about twice a
# forward pass's time on both.
WASTE_SECONDS = 0.006


class Net(nn.Module):
    """slow=True: the forward pass does dense products (not
    convolutions: running those again mostly hits caches and costs little)
    for WASTE_SECONDS more, about twice its own time, the regression the
    comparison tests look for: large enough to show through the 2x
    run-to-run variation some shared machines have."""

    def __init__(self, slow=False):
        super().__init__()
        self.slow = slow
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(16 * 7 * 7, 64), nn.ReLU(),
                                  nn.Linear(64, 10))
        # drawn after the layers, so that both models start from the same weights
        self.register_buffer("waste", torch.randn(WASTE_SIZE, WASTE_SIZE) / WASTE_SIZE ** 0.5)

    def forward(self, x):
        if self.slow:  # wasted work
            with torch.no_grad():
                z = self.waste
                end = time.perf_counter() + WASTE_SECONDS
                while time.perf_counter() < end:
                    z = torch.tanh(z @ self.waste)
        return self.head(self.features(x))
