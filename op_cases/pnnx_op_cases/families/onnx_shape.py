"""ONNX table, the `shape` family (frontends/onnx/rules/shape.py): Concat, DepthToSpace, Flatten,
Reshape, Split, Squeeze, Transpose, Unsqueeze,
including the shape-computing subgraphs torch.onnx writes (`Shape -> Gather -> Unsqueeze -> Concat ->
Reshape`) with a symbolic batch dim."""
from __future__ import annotations

from ..builders import rand
from ..onnx_builders import node, onnx_case
from ..registry import family


@family("onnx.Reshape")
def reshape():
    op = "onnx.Reshape"
    yield onnx_case(op, "const_shape", node("Reshape", ["x0", "s"]), [rand(2, 3, 4)], consts={"s": [6, -1]},
                    smoke=True)
    yield onnx_case(op, "zero_copies", node("Reshape", ["x0", "s"]), [rand(2, 3, 4)], consts={"s": [0, 0, 2, 2]},
                    opset=11)
    yield onnx_case(op, "allowzero", node("Reshape", ["x0", "s"], allowzero=1), [rand(2, 3, 4)],
                    consts={"s": [4, 6]}, opset=14)
    # x.view(x.size(0), -1) as the TorchScript exporter writes it, batch symbolic
    subgraph = [node("Shape", ["x0"], "shape"), node("Gather", ["shape", "zero"], "n", axis=0),
                node("Unsqueeze", ["n", "axes"], "n1"), node("Concat", ["n1", "minus_one"], "target", axis=0),
                node("Reshape", ["x0", "target"])]
    yield onnx_case(op, "shape_subgraph_dynamic", subgraph, [rand(2, 3, 4, 5)],
                    consts={"zero": 0, "axes": [0], "minus_one": [-1]}, dims={0: {0: "N"}})
    yield onnx_case(op, "shape_subgraph_static", subgraph, [rand(2, 3, 4, 5)],
                    consts={"zero": 0, "axes": [0], "minus_one": [-1]}, opset=21)


@family("onnx.Flatten")
def flatten():
    op = "onnx.Flatten"
    yield onnx_case(op, "axis1", node("Flatten", ["x0"]), [rand(2, 3, 4, 5)], smoke=True)
    yield onnx_case(op, "axis2", node("Flatten", ["x0"], axis=2), [rand(2, 3, 4, 5)], opset=11)
    yield onnx_case(op, "axis0", node("Flatten", ["x0"], axis=0), [rand(2, 3, 4)])
    yield onnx_case(op, "axis_m1", node("Flatten", ["x0"], axis=-1), [rand(2, 3, 4)], opset=21)


@family("onnx.Transpose")
def transpose():
    op = "onnx.Transpose"
    yield onnx_case(op, "perm", node("Transpose", ["x0"], perm=[0, 2, 3, 1]), [rand(1, 3, 4, 5)], smoke=True)
    yield onnx_case(op, "default_reverse", node("Transpose", ["x0"]), [rand(2, 3, 4)], opset=11)


@family("onnx.Squeeze")
def squeeze():
    op = "onnx.Squeeze"
    yield onnx_case(op, "axes_input", node("Squeeze", ["x0", "axes"]), [rand(1, 3, 1, 5)], consts={"axes": [0, 2]},
                    smoke=True)
    yield onnx_case(op, "axes_attr_opset11", node("Squeeze", ["x0"], axes=[-2]), [rand(3, 1, 5)], opset=11)
    yield onnx_case(op, "all", node("Squeeze", ["x0"]), [rand(1, 3, 1, 5)])


@family("onnx.Unsqueeze")
def unsqueeze():
    op = "onnx.Unsqueeze"
    yield onnx_case(op, "axes_input", node("Unsqueeze", ["x0", "axes"]), [rand(3, 5)], consts={"axes": [0, 3]},
                    smoke=True)
    yield onnx_case(op, "axes_attr_opset11", node("Unsqueeze", ["x0"], axes=[1]), [rand(3, 5)], opset=11)
    yield onnx_case(op, "negative", node("Unsqueeze", ["x0", "axes"]), [rand(3, 5)], consts={"axes": [-1]})


@family("onnx.Concat")
def concat():
    op = "onnx.Concat"
    yield onnx_case(op, "axis1", node("Concat", ["x0", "x1"], axis=1), [rand(1, 2, 4), rand(1, 3, 4)], smoke=True)
    yield onnx_case(op, "three_neg_axis", node("Concat", ["x0", "x1", "x2"], axis=-1),
                    [rand(2, 3), rand(2, 1), rand(2, 2)], opset=11)
    yield onnx_case(op, "with_constant", node("Concat", ["x0", "c"], axis=0), [rand(2, 3)], params={"c": (1, 3)})


@family("onnx.Split")
def split():
    op = "onnx.Split"
    yield onnx_case(op, "sizes_input", node("Split", ["x0", "s"], ["y0", "y1"], axis=1), [rand(2, 6, 3)],
                    consts={"s": [2, 4]}, outputs=("y0", "y1"), smoke=True)
    yield onnx_case(op, "sizes_attr_opset11", node("Split", ["x0"], ["y0", "y1", "y2"], axis=-1, split=[1, 2, 3]),
                    [rand(2, 6)], outputs=("y0", "y1", "y2"), opset=11)
    yield onnx_case(op, "equal", node("Split", ["x0"], ["y0", "y1", "y2"], axis=0), [rand(6, 2)],
                    outputs=("y0", "y1", "y2"))
    yield onnx_case(op, "num_outputs_uneven", node("Split", ["x0"], ["y0", "y1", "y2"], axis=1, num_outputs=3),
                    [rand(2, 7)], outputs=("y0", "y1", "y2"), opset=18)


@family("onnx.DepthToSpace")
def depth_to_space():
    op = "onnx.DepthToSpace"
    yield onnx_case(op, "dcr", node("DepthToSpace", ["x0"], blocksize=2), [rand(1, 8, 3, 4)], smoke=True)
    yield onnx_case(op, "crd", node("DepthToSpace", ["x0"], blocksize=2, mode="CRD"), [rand(2, 8, 3, 3)], opset=11)
