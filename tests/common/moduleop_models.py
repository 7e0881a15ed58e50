"""Models with module operators (moduleop=): YOLOv5's Focus stem, a parameterless Shuffle with
two results, and a moduleop nested in another. Shared by the converter and ncnn tests."""
import torch
import torch.nn as nn


class Focus(nn.Module):
    """YOLOv5's stem: four strided slices, a cat, conv + bn + silu, times a buffer."""

    def __init__(self, c1, c2):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(c1 * 4, c2, 3, 1, 1, bias=False), nn.BatchNorm2d(c2), nn.SiLU())
        self.register_buffer("gain", torch.linspace(0.5, 1.5, c2).reshape(1, c2, 1, 1))

    def forward(self, x):
        x = torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)
        return self.conv(x) * self.gain


class Shuffle(nn.Module):
    """No parameters; two tensor arguments (one by keyword) and two results."""

    def forward(self, x, skip=None):
        b, c, h, w = x.shape
        y = x.view(b, 2, c // 2, h, w).transpose(1, 2).reshape(b, c, h, w)
        return y, y + skip


class Outer(nn.Module):
    """A moduleop with another moduleop inside."""

    def __init__(self):
        super().__init__()
        self.inner = Focus(3, 4)
        self.head = nn.Conv2d(4, 2, 1)

    def forward(self, x):
        return self.head(self.inner(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.focus = Focus(3, 8)
        self.shuffle = Shuffle()
        self.post = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8))

    def forward(self, x):
        y, z = self.shuffle(self.focus(x), skip=x[:, :1, ::2, ::2])
        return self.post(y) + z


MODULEOP = ["Focus", "Shuffle", "Outer"]


def moduleop_of(model) -> list[str]:
    """The MODULEOP entries this model has a class for (the converter refuses an entry that
    names no module class of the model)."""
    names = {type(m).__name__ for m in model.modules()}
    return [name for name in MODULEOP if name in names]


def build_model(cls=Net):
    """The model with seeded weights and batch-norm statistics far from the identity."""
    torch.manual_seed(0)
    model = cls().eval()
    for bn in (m for m in model.modules() if isinstance(m, nn.BatchNorm2d)):
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.data.uniform_(0.5, 1.5)
    return model
