"""digits.py - the small convolutional network and the generated 28x28
images that the real-run tests train (cnn.py, plain_train.py): a
class-dependent blob plus noise, made per item so that DataLoader workers
can build them."""
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


class Net(nn.Module):
    """slow=True: the forward pass does about 60% more work (its
    convolutions run twice), the regression the comparison tests look for."""

    def __init__(self, slow=False):
        super().__init__()
        self.slow = slow
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(16 * 7 * 7, 64), nn.ReLU(),
                                  nn.Linear(64, 10))

    def forward(self, x):
        if self.slow:
            with torch.no_grad():
                self.features(x)  # wasted work
        return self.head(self.features(x))
