"""torchvision's registered operators recorded as the `torchvision.ops` call that makes them.

`torchvision.ops.deform_conv2d(input, offset, weight, bias, stride, padding, dilation, mask)`
calls `torchvision::deform_conv2d(input, weight, offset, mask, bias, stride_h, stride_w, pad_h,
pad_w, dilation_h, dilation_w, groups, offset_groups, use_mask)`: the groups and offset groups
follow from the weight's and the offset's shapes, and the call fills a missing mask (use_mask
false) and a missing bias (zeros) in. The operator is written as the Python call, as upstream's
`torchvision.ops.deform_conv2d`, without those fillers."""
from __future__ import annotations

import torch

DEFORM_CONV2D = "pnnx.custom_op.torchvision.deform_conv2d"


def deform_conv2d(args: dict, constant) -> tuple[str, list[tuple[str, torch.Tensor]], dict]:
    """(op type, named tensor inputs, params) of one torchvision::deform_conv2d call. `constant`
    tells whether a tensor is known at conversion (a zero bias computed from the inputs stays)."""
    inputs = [("input", args["input"]), ("offset", args["offset"]), ("weight", args["weight"])]
    bias = args["bias"]
    if not (constant(bias) and not bool(bias.detach().any())):
        inputs.append(("bias", bias))
    if args["use_mask"]:
        inputs.append(("mask", args["mask"]))
    params = {"stride": [int(args["stride_h"]), int(args["stride_w"])],
              "padding": [int(args["pad_h"]), int(args["pad_w"])],
              "dilation": [int(args["dilation_h"]), int(args["dilation_w"])]}
    return "torchvision.ops.deform_conv2d", inputs, params


RECORDED = {DEFORM_CONV2D: deform_conv2d}
PRODUCES = ("torchvision.ops.deform_conv2d",)  # the types RECORDED writes
