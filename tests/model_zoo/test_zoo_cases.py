"""Every zoo model builds from its fixed seed and is deterministic in eager mode."""
from __future__ import annotations

import pytest
import torch

from pnnx_model_zoo.zoo import select_models, zoo_cases

FAST = [c for c in zoo_cases() if c.op not in ("models.convnext_tiny", "models.vit_b_16", "models.swin_t")]


def test_zoo_has_the_required_networks():
    ops = {c.op for c in zoo_cases()}
    for name in ("resnet18", "mobilenet_v2", "mobilenet_v3_small", "shufflenet_v2_x1_0", "squeezenet1_1",
                 "efficientnet_b0", "regnet_x_400mf", "convnext_tiny", "vit_b_16", "swin_t",
                 "deeplabv3_mobilenet_v3_large", "transformer_encoder", "lstm_seq", "gru_seq", "yolov5_focus"):
        assert f"models.{name}" in ops
    assert all(c.table == "models" for c in zoo_cases())
    assert {c.op for c in select_models(tier="smoke")} == {
        "models.resnet18", "models.mobilenet_v2", "models.transformer_encoder", "models.yolov5_focus"}


@pytest.mark.parametrize("case", FAST, ids=lambda c: c.id)
def test_zoo_case_is_deterministic(case):
    a, b = case.run_eager(), case.run_eager()
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert torch.equal(x, y)
