"""Hand-written cases for the harness's own tests (independent of the case generator)."""
from __future__ import annotations

from pnnx_op_cases.case import Case, InputSpec

CONV = """
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
    def forward(self, x):
        return self.conv(x)
"""

RELU = """
import torch
import torch.nn as nn
import torch.nn.functional as F
class Model(nn.Module):
    def forward(self, x):
        return F.relu(x)
"""

ADD_BATCH2 = """
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x, y):
        return x + y
"""

DROPOUT = """
import torch
import torch.nn as nn
import torch.nn.functional as F
class Model(nn.Module):
    def forward(self, x):
        return F.dropout(x, 0.5, training=True)
"""


def cases() -> list[Case]:
    return [
        Case("nn.Conv2d/k3_p1", "nn.Conv2d", CONV, (InputSpec((1, 3, 8, 8), low=-1, high=1),),
             tags=frozenset({"smoke"})),
        Case("F.relu/r4", "F.relu", RELU, (InputSpec((1, 3, 4, 5), low=-1, high=1),),
             tags=frozenset({"smoke"})),
        Case("torch.add/batch2", "torch.add", ADD_BATCH2,
             (InputSpec((2, 3, 4)), InputSpec((2, 3, 4))), tags=frozenset({"smoke"})),
        Case("F.dropout/train", "F.dropout", DROPOUT, (InputSpec((1, 16)),),
             tags=frozenset({"random"}), reasons={"random": "dropout in training mode"}),
    ]


PROVIDER = "harness_cases:cases"


IDENTITY = """
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x
"""


def crash_cases() -> list[Case]:
    """The input of harness_fake_backends.EmptyPastNcnnConverter's ncnn model."""
    return [Case("F.scaled_dot_product_attention/empty_past", "F.scaled_dot_product_attention", IDENTITY,
                 (InputSpec((1, 8, 64, 64)),), tags=frozenset({"smoke"}))]
