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
# How long the slow forward's wasted products run, in time, not in work: a
# fixed number of them (eight) cost 10 ms here but 0.4 ms where the BLAS is
# faster (MKL, AVX-512), under the noise between runs there. Time spent is
# exact in every process, while the forward's own work is not: a process's
# speed varies (the same forward took 12.4 ms in one run of the slow side
# and 15.8 ms in the next), and with three runs a side the slow side's
# spread leaves Welch's test about 2 degrees of freedom. With 6 ms, about
# one forward pass, the slowdown's p was 0.017 to 0.07 in 3 of 4 tries
# (significant below 0.01); with 25 ms, about four, 3e-5 to 1e-4 in 3 of 3,
# one of them beside a busy loop on the other core.
WASTE_SECONDS = 0.025
# The heavier forward's extra products: a fixed amount of work, so that it
# costs more where the machine is slower, as a real change to the code does.
# Twenty-two 64x64 products and tanh took 2.0 ms here (91 us each, one
# thread), about 30% of the forward pass's 6.6 ms and 11% of the step.
EXTRA_SIZE = 64
EXTRA_PRODUCTS = 22


class Net(nn.Module):
    """slow=True: the forward pass does dense products (not
    convolutions: running those again mostly hits caches and costs little)
    for WASTE_SECONDS more, about four times its own time, the regression
    the comparison tests look for: large enough to show through the 2x
    run-to-run variation some shared machines have."""

    def __init__(self, slow=False, heavier=False):
        super().__init__()
        self.slow = slow
        self.heavier = heavier
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(16 * 7 * 7, 64), nn.ReLU(),
                                  nn.Linear(64, 10))
        # drawn after the layers, so that both models start from the same weights
        self.register_buffer("waste", torch.randn(WASTE_SIZE, WASTE_SIZE) / WASTE_SIZE ** 0.5)
        self.register_buffer("extra", torch.randn(EXTRA_SIZE, EXTRA_SIZE) / EXTRA_SIZE ** 0.5)

    def forward(self, x):
        if self.slow:  # wasted work
            with torch.no_grad():
                z = self.waste
                end = time.perf_counter() + WASTE_SECONDS
                while time.perf_counter() < end:
                    z = torch.tanh(z @ self.waste)
        if self.heavier:  # a fixed amount of extra work (EXTRA_PRODUCTS)
            with torch.no_grad():
                z = self.extra
                for _ in range(EXTRA_PRODUCTS):
                    z = torch.tanh(z @ self.extra)
        return self.head(self.features(x))
