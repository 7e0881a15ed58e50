"""Rules beyond the ONNX table, each against onnxruntime on a small graph: control flow known at
conversion time, sequences, quantized graphs, attention, the spec's own resampling, old opsets."""
import numpy as np
import pytest
import torch
from onnx import TensorProto, helper

from onnx_models import FLOAT, INT64, graph_model, op_types, run_generated, run_ort
from pnnx_reference import api
from pnnx_reference.errors import ConversionError

RNG = np.random.default_rng(0)


def converts_like_ort(tmp_path, model, inputs, rtol=1e-5, atol=1e-5):
    result = api.export_onnx(model, tmp_path, "m", inputs=[torch.from_numpy(np.array(x)) for x in inputs])
    got = run_generated(result.paths["pnnxpy"], inputs)
    for g, w in zip(got, run_ort(model, inputs)):
        assert g.shape == w.shape and g.numpy().dtype == w.dtype
        np.testing.assert_allclose(g.numpy(), w, rtol=rtol, atol=atol)
    return result


def branch(name, nodes, outputs):
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(n, FLOAT, None) for n in outputs])


def test_if_with_a_condition_known_from_shapes_runs_one_branch(tmp_path):
    then = branch("then", [helper.make_node("Relu", ["x"], ["r"])], ["r"])
    other = branch("else", [helper.make_node("Neg", ["x"], ["r"])], ["r"])
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Size", ["s"], ["rank"]),
             helper.make_node("Greater", ["rank", "two"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    model = graph_model(nodes, [("x", FLOAT, [2, 3, 4])], [("y", FLOAT, None)], {"two": np.array(2)})
    result = converts_like_ort(tmp_path, model, [RNG.standard_normal((2, 3, 4), dtype=np.float32)])
    assert op_types(result.paths["pnnxparam"]) == ["pnnx.Input", "F.relu", "pnnx.Output"]


def test_if_on_the_input_data_is_refused(tmp_path):
    then = branch("then", [helper.make_node("Relu", ["x"], ["r"])], ["r"])
    other = branch("else", [helper.make_node("Neg", ["x"], ["r"])], ["r"])
    nodes = [helper.make_node("ReduceSum", ["x"], ["t"], keepdims=0), helper.make_node("Greater", ["t", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    model = graph_model(nodes, [("x", FLOAT, [4])], [("y", FLOAT, None)], {"zero": np.array(0.0, np.float32)}, opset=11)
    with pytest.raises(ConversionError, match="If.*cond.*must be known at conversion time"):
        api.export_onnx(model, tmp_path, "m")


def test_loop_with_a_known_trip_count_unrolls(tmp_path):
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "x"], ["acc_out"]),
         helper.make_node("Mul", ["acc_out", "half"], ["scan"])], "body",
        [helper.make_tensor_value_info("i", INT64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", FLOAT, [3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", FLOAT, [3]), helper.make_tensor_value_info("scan", FLOAT, [3])])
    nodes = [helper.make_node("Loop", ["trips", "go", "zeros"], ["acc", "scans"], body=body)]
    model = graph_model(nodes, [("x", FLOAT, [3])], [("acc", FLOAT, None), ("scans", FLOAT, None)],
                        {"trips": np.array(4), "go": np.array(True), "zeros": np.zeros(3, np.float32),
                         "half": np.array(0.5, np.float32)}, opset=13)
    converts_like_ort(tmp_path, model, [RNG.standard_normal(3, dtype=np.float32)])


def test_sequences_are_lists_of_tensors(tmp_path):
    nodes = [helper.make_node("SplitToSequence", ["x", "parts"], ["seq"], axis=1),
             helper.make_node("SequenceAt", ["seq", "last"], ["tail"]),
             helper.make_node("ConcatFromSequence", ["seq"], ["back"], axis=1),
             helper.make_node("ReduceSum", ["back"], ["s"], keepdims=1),
             helper.make_node("Add", ["tail", "s"], ["y"])]
    model = graph_model(nodes, [("x", FLOAT, [2, 6])], [("y", FLOAT, None)],
                        {"parts": np.array([2, 4]), "last": np.array(-1)}, opset=11)
    converts_like_ort(tmp_path, model, [RNG.standard_normal((2, 6), dtype=np.float32)])


def test_qdq_weights_fold_into_a_float_convolution(tmp_path):
    w = RNG.integers(-100, 100, (4, 3, 3, 3), dtype=np.int8)
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws"], ["wd"], axis=0),
             helper.make_node("Conv", ["xd", "wd"], ["y"], pads=[1, 1, 1, 1])]
    model = graph_model(nodes, [("x", FLOAT, [1, 3, 6, 6])], [("y", FLOAT, None)],
                        {"xs": np.array(0.02, np.float32), "xz": np.array(128, np.uint8), "w": w,
                         "ws": np.array([0.01, 0.02, 0.03, 0.04], np.float32)}, opset=13)
    result = converts_like_ort(tmp_path, model, [RNG.random((1, 3, 6, 6), dtype=np.float32)], rtol=1e-4, atol=1e-4)
    assert "nn.Conv2d" in op_types(result.paths["pnnxparam"])  # the dequantized weight is a constant


def test_qlinear_matmul_requantizes(tmp_path):
    a = RNG.integers(0, 255, (2, 4), dtype=np.uint8)
    b = RNG.integers(0, 255, (4, 3), dtype=np.uint8)
    nodes = [helper.make_node("QLinearMatMul", ["a", "a_s", "a_z", "b", "b_s", "b_z", "y_s", "y_z"], ["y"])]
    model = graph_model(nodes, [("a", TensorProto.UINT8, [2, 4])], [("y", TensorProto.UINT8, None)],
                        {"a_s": np.array(0.05, np.float32), "a_z": np.array(120, np.uint8), "b": b,
                         "b_s": np.array(0.03, np.float32), "b_z": np.array(130, np.uint8),
                         "y_s": np.array(0.2, np.float32), "y_z": np.array(100, np.uint8)}, opset=13)
    converts_like_ort(tmp_path, model, [a], rtol=0, atol=1)  # one unit of requantization rounding


@pytest.mark.parametrize("causal, past", [(False, False), (True, False), (True, True)],
                         ids=["plain", "causal", "causal_with_past"])
def test_attention(tmp_path, causal, past):
    q, k, v = (RNG.standard_normal((1, 2, 3, 8), dtype=np.float32) for _ in range(3))
    inputs = ["q", "k", "v", "", "pk", "pv"] if past else ["q", "k", "v"]
    outs = ["y", "present_k", "present_v"] if past else ["y"]
    nodes = [helper.make_node("Attention", inputs, outs, is_causal=int(causal))]
    shape = [1, 2, 3, 8]
    extra = [("pk", FLOAT, [1, 2, 4, 8]), ("pv", FLOAT, [1, 2, 4, 8])] if past else []
    model = graph_model(nodes, [("q", FLOAT, shape), ("k", FLOAT, shape), ("v", FLOAT, shape)] + extra,
                        [(o, FLOAT, None) for o in outs], opset=23)
    data = [q, k, v] + ([RNG.standard_normal((1, 2, 4, 8), dtype=np.float32) for _ in range(2)] if past else [])
    result = converts_like_ort(tmp_path, model, data, rtol=1e-4, atol=1e-5)
    if not past:
        assert "F.scaled_dot_product_attention" in op_types(result.paths["pnnxparam"])


@pytest.mark.parametrize("attrs", [
    {"mode": "linear", "coordinate_transformation_mode": "asymmetric"},
    {"mode": "nearest", "coordinate_transformation_mode": "tf_half_pixel_for_nn", "nearest_mode": "ceil"},
    {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1},
    {"mode": "linear", "antialias": 1},
], ids=["linear_asymmetric", "nearest_tf_ceil", "cubic_tf", "linear_antialias"])
def test_resize_modes_pytorch_lacks_follow_the_spec(tmp_path, attrs):
    scales = np.array([1, 1, 0.6, 1.7], np.float32)
    model = graph_model([helper.make_node("Resize", ["x", "", "scales"], ["y"], **attrs)], [("x", FLOAT, [1, 2, 5, 6])],
                        [("y", FLOAT, None)], {"scales": scales}, opset=19)
    converts_like_ort(tmp_path, model, [RNG.random((1, 2, 5, 6), dtype=np.float32)], rtol=1e-4, atol=1e-5)


def test_opset_6_legacy_broadcast(tmp_path):
    nodes = [helper.make_node("Add", ["x", "b"], ["y"], broadcast=1, axis=1)]
    model = graph_model(nodes, [("x", FLOAT, [2, 3, 4])], [("y", FLOAT, None)],
                        {"b": np.array([1.0, 2.0, 3.0], np.float32)}, opset=6)
    result = api.export_onnx(model, tmp_path, "m")
    x = RNG.random((2, 3, 4), dtype=np.float32)
    np.testing.assert_allclose(run_generated(result.paths["pnnxpy"], [x])[0].numpy(), x + np.array([1, 2, 3])[:, None],
                               rtol=1e-6)


def test_an_opset_older_than_6_is_upgraded_by_onnx(tmp_path):
    nodes = [helper.make_node("Not", ["x"], ["y"])]
    model = graph_model(nodes, [("x", TensorProto.BOOL, [3, 4])], [("y", TensorProto.BOOL, None)], opset=1)
    x = RNG.random((3, 4)) > 0.5
    result = api.export_onnx(model, tmp_path, "m")
    np.testing.assert_array_equal(run_generated(result.paths["pnnxpy"], [x])[0].numpy(), ~x)


@pytest.mark.parametrize("op, keepdims, dtype", [("ReduceMax", 1, FLOAT), ("ReduceMin", 0, FLOAT),
                                                 ("ReduceMax", 1, TensorProto.BOOL), ("ReduceMin", 1, INT64)])
def test_max_and_min_over_an_empty_dim_are_the_extreme_of_the_type(tmp_path, op, keepdims, dtype):
    nodes = [helper.make_node(op, ["x", "ax"], ["y"], keepdims=keepdims)]
    model = graph_model(nodes, [("x", dtype, [2, 0, 4])], [("y", dtype, None)], {"ax": np.array([1])}, opset=18)
    x = np.zeros((2, 0, 4), helper.tensor_dtype_to_np_dtype(dtype))
    result = api.export_onnx(model, tmp_path, "m")
    got = run_generated(result.paths["pnnxpy"], [x])[0].detach().numpy()
    expected = run_ort(model, [x])[0] if dtype != TensorProto.BOOL else np.zeros((2, 1, 4), bool)
    np.testing.assert_array_equal(got, expected)


def test_a_mean_over_an_empty_dim_is_zero_as_onnxruntime_gives_it(tmp_path):
    """The spec leaves it undefined; torch.onnx exports EmbeddingBag(mode="mean") relying on 0 for an
    empty bag (onnxruntime's answer), where torch.mean would give NaN."""
    nodes = [helper.make_node("ReduceMean", ["x", "ax"], ["y"], keepdims=0)]
    model = graph_model(nodes, [("x", FLOAT, [0, 4])], [("y", FLOAT, None)], {"ax": np.array([0])}, opset=18)
    x = np.zeros((0, 4), np.float32)
    result = api.export_onnx(model, tmp_path, "m")
    got = run_generated(result.paths["pnnxpy"], [x])[0].detach().numpy()
    np.testing.assert_array_equal(got, run_ort(model, [x])[0])
    np.testing.assert_array_equal(got, np.zeros(4, np.float32))


@pytest.mark.parametrize("attrs, last", [({}, 2), ({"onesided": 1}, 1), ({"inverse": 1, "onesided": 1}, 2)],
                         ids=["complex", "rfft", "irfft"])
def test_dft_over_real_imaginary_pairs(tmp_path, attrs, last):
    nodes = [helper.make_node("DFT", ["x", "", "ax"], ["y"], **attrs)]
    model = graph_model(nodes, [("x", FLOAT, [2, 8, last])], [("y", FLOAT, None)], {"ax": np.array(1)}, opset=20)
    result = converts_like_ort(tmp_path, model, [RNG.standard_normal((2, 8, last), dtype=np.float32)], rtol=1e-4,
                               atol=1e-4)
    assert any(t.startswith("torch.fft.") for t in op_types(result.paths["pnnxparam"]))


def converts_like_the_spec(tmp_path, model, inputs, rtol=1e-5, atol=1e-5):
    """Operators newer than onnxruntime: onnx's reference evaluator is the oracle."""
    from onnx.reference import ReferenceEvaluator

    result = api.export_onnx(model, tmp_path, "m", inputs=[torch.from_numpy(np.array(x)) for x in inputs])
    got = run_generated(result.paths["pnnxpy"], inputs)
    names = [i.name for i in model.graph.input]
    for g, w in zip(got, ReferenceEvaluator(model).run(None, dict(zip(names, inputs))), strict=True):
        np.testing.assert_allclose(g.detach().numpy(), w, rtol=rtol, atol=atol)
    return result


@pytest.mark.parametrize("activation, past", [("none", False), ("silu", True), ("swish", False)])
def test_causal_conv_with_state(tmp_path, activation, past):
    names = ["x", "w", "b", "s" if past else ""]
    nodes = [helper.make_node("CausalConvWithState", names, ["y", "state"], activation=activation)]
    inputs = [("x", FLOAT, [2, 3, 5])] + ([("s", FLOAT, [2, 3, 2])] if past else [])
    model = graph_model(nodes, inputs, [("y", FLOAT, None), ("state", FLOAT, None)],
                        {"w": RNG.standard_normal((3, 1, 3), dtype=np.float32),
                         "b": RNG.standard_normal(3, dtype=np.float32)}, opset=27)
    values = [RNG.standard_normal((2, 3, 5), dtype=np.float32)] + \
        ([RNG.standard_normal((2, 3, 2), dtype=np.float32)] if past else [])
    converts_like_the_spec(tmp_path, model, values)


@pytest.mark.parametrize("update_rule, heads", [("linear", (2, 2)), ("gated", (2, 2)), ("delta", (2, 1)),
                                                ("gated_delta", (4, 2))])
def test_linear_attention_recurrence_token_by_token(tmp_path, update_rule, heads):
    hq, hkv = heads
    b, t, dk, dv = 2, 3, 4, 5
    names, inputs, values = ["q", "k", "v", "past"], [], []
    shapes = {"q": [b, t, hq * dk], "k": [b, t, hkv * dk], "v": [b, t, hkv * dv], "past": [b, hkv, dk, dv]}
    if update_rule in ("gated", "gated_delta"):
        names.append("g")
        shapes["g"] = [b, t, hkv]
    elif update_rule == "delta":
        names.append("")
    if update_rule in ("delta", "gated_delta"):
        names.append("beta")
        shapes["beta"] = [b, t, hkv]
    for name in filter(None, names):
        inputs.append((name, FLOAT, shapes[name]))
        values.append(RNG.random(shapes[name], dtype=np.float32) * (-0.5 if name == "g" else 1.0))
    nodes = [helper.make_node("LinearAttention", names, ["y", "state"], q_num_heads=hq, kv_num_heads=hkv,
                              update_rule=update_rule)]
    model = graph_model(nodes, inputs, [("y", FLOAT, None), ("state", FLOAT, None)], opset=27)
    converts_like_the_spec(tmp_path, model, values, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op, attrs, mean, std", [("RandomNormalLike", {"mean": 2.0, "scale": 0.5}, 2.0, 0.5),
                                                  ("RandomUniformLike", {"low": -1.0, "high": 3.0}, 1.0, 4 / 12 ** 0.5)])
def test_random_draws_become_torch_draws_with_the_same_distribution(tmp_path, op, attrs, mean, std):
    nodes = [helper.make_node(op, ["x"], ["y"], **attrs)]
    model = graph_model(nodes, [("x", FLOAT, [64, 256])], [("y", FLOAT, None)], {}, opset=18)
    result = api.export_onnx(model, tmp_path, "m")
    torch.manual_seed(0)
    got = run_generated(result.paths["pnnxpy"], [np.zeros((64, 256), np.float32)])[0]
    assert got.shape == (64, 256) and got.dtype == torch.float32
    assert abs(got.mean().item() - mean) < 0.05 and abs(got.std().item() - std) < 0.05


def test_nonzero_feeding_gather_nd_keeps_a_value_decided_size(tmp_path):
    """torch.onnx's masked_select: NonZero -> Transpose -> GatherND; the count comes from the values."""
    nodes = [helper.make_node("NonZero", ["m"], ["nz"]), helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
             helper.make_node("GatherND", ["x", "idx"], ["y"])]
    model = graph_model(nodes, [("x", FLOAT, [3, 4]), ("m", TensorProto.BOOL, [3, 4])], [("y", FLOAT, None)], {},
                        opset=18)
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    result = api.export_onnx(model, tmp_path, "m", inputs=[torch.from_numpy(x), torch.from_numpy(x > 0)])
    for mask in (x > 0, x > 1):  # another count than the example's
        got = run_generated(result.paths["pnnxpy"], [x, mask])[0]
        np.testing.assert_array_equal(got.numpy(), x[mask])


@pytest.mark.parametrize("op", ["Div", "Mod"])
def test_an_integer_divisor_input_gets_nonzero_example_values(tmp_path, op):
    """Without inputs (the command line), integer inputs are traced as zeros (valid indices); a
    divisor is traced as ones, since torch refuses an integer division by zero."""
    nodes = [helper.make_node(op, ["a", "b"], ["y"])]
    model = graph_model(nodes, [("a", TensorProto.INT32, [2, 6]), ("b", TensorProto.INT32, [2, 6])],
                        [("y", TensorProto.INT32, None)], {}, opset=18)
    result = api.export_onnx(model, tmp_path, "m")
    a = np.array([[-16, 19, -7, -20, -17, -1], [7, 3, -3, -17, 1, 6]], np.int32)
    b = np.array([[1, 4, 5, 3, 1, 1], [3, 4, 3, 6, 6, 3]], np.int32)
    got = run_generated(result.paths["pnnxpy"], [a, b])[0].numpy()
    np.testing.assert_array_equal(got, run_ort(model, [a, b])[0])


def test_zeros_made_from_sizes_stay_sizes(tmp_path):
    """torch.onnx writes F.pad's pads (swin_t's window padding) as Concat(sizes, ConstantOfShape(n));
    the zeros must stay known at conversion time, or the Pad (here the Reshape) reading them is refused."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Slice", ["s", "one", "three"], ["tail"]),  # [3, 4] from the input's sizes
             helper.make_node("Shape", ["tail"], ["n"]),                   # [2]: a size of sizes
             helper.make_node("Sub", ["three", "n"], ["count"]),           # [1]
             helper.make_node("ConstantOfShape", ["count"], ["lead"],
                              value=helper.make_tensor("v", INT64, [1], [-1])),
             helper.make_node("Gather", ["s", "two"], ["last"]),
             helper.make_node("Concat", ["lead", "last"], ["target"], axis=0),  # [-1, 4]
             helper.make_node("Reshape", ["x", "target"], ["y"])]
    model = graph_model(nodes, [("x", FLOAT, [2, 3, 4])], [("y", FLOAT, None)],
                        {"one": np.array([1]), "two": np.array([2]), "three": np.array([3])})
    result = converts_like_ort(tmp_path, model, [RNG.standard_normal((2, 3, 4), dtype=np.float32)])
    assert "Tensor.reshape" in op_types(result.paths["pnnxparam"])


def test_where_with_a_constant_branch_is_one_torch_where(tmp_path):
    """torch.onnx writes F.hardshrink as Where(|x| > l, x, 0): the constant branch is a number and
    nothing else is recorded (a torch.broadcast_tensors, which no emitter lowers, was)."""
    nodes = [helper.make_node("Greater", ["x", "half"], ["c"]), helper.make_node("Where", ["c", "x", "zero"], ["y"])]
    model = graph_model(nodes, [("x", FLOAT, [1, 3, 4, 5])], [("y", FLOAT, None)],
                        {"half": np.array(0.5, np.float32), "zero": np.array(0.0, np.float32)})
    result = converts_like_ort(tmp_path, model, [RNG.standard_normal((1, 3, 4, 5), dtype=np.float32)])
    assert op_types(result.paths["pnnxparam"]) == ["pnnx.Input", "torch.gt", "torch.where", "pnnx.Output"]
    assert not result.unsupported


def test_batch_norm_in_training_mode_normalizes_by_the_batch(tmp_path):
    """torch.onnx writes a BatchNorm with track_running_stats=False as training_mode=1 with its
    running-statistics outputs named but unread: the batch's own statistics, as torch computes."""
    c = 4
    nodes = [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y", "rm", "rv"],
                              training_mode=1, epsilon=1e-5)]
    inits = {"scale": RNG.standard_normal(c).astype(np.float32), "bias": RNG.standard_normal(c).astype(np.float32),
             "mean": np.zeros(c, np.float32), "var": np.ones(c, np.float32)}
    model = graph_model(nodes, [("x", FLOAT, [3, c, 5])], [("y", FLOAT, None)], inits)
    result = converts_like_ort(tmp_path, model, [RNG.standard_normal((3, c, 5), dtype=np.float32)], atol=1e-4)
    assert "nn.BatchNorm1d" in op_types(result.paths["pnnxparam"])
    assert "track_running_stats=False" in open(result.paths["pnnxparam"]).read()


def test_ones_expanded_to_a_size_stay_sizes(tmp_path):
    """torch.onnx's torch.tile pads the repeats with Expand(ones, rank difference): known sizes."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Size", ["s"], ["rank"]),
             helper.make_node("Sub", ["rank", "two"], ["diff"]),
             helper.make_node("Reshape", ["diff", "flat"], ["count"]),
             helper.make_node("Expand", ["one", "count"], ["ones"]),
             helper.make_node("Concat", ["ones", "s"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["y"])]
    model = graph_model(nodes, [("x", FLOAT, [2, 3, 4])], [("y", FLOAT, None)],
                        {"two": np.array(2), "flat": np.array([1]), "one": np.array([1])})
    result = converts_like_ort(tmp_path, model, [RNG.standard_normal((2, 3, 4), dtype=np.float32)])
    assert "Tensor.reshape" in op_types(result.paths["pnnxparam"])


def test_a_split_into_one_part_is_the_tensor(tmp_path):
    """torch.onnx writes unbind of a size-1 dim as Split (one output) + Squeeze."""
    nodes = [helper.make_node("Split", ["x", "one"], ["part"], axis=0),
             helper.make_node("Squeeze", ["part", "zero"], ["y"])]
    model = graph_model(nodes, [("x", FLOAT, [1, 13])], [("y", FLOAT, None)],
                        {"one": np.array([1]), "zero": np.array([0])})
    result = converts_like_ort(tmp_path, model, [RNG.standard_normal((1, 13), dtype=np.float32)])
    assert op_types(result.paths["pnnxparam"]) == ["pnnx.Input", "torch.squeeze", "pnnx.Output"]


@pytest.mark.parametrize("opset", [15, 18, 21])  # CastLike is from opset 15
def test_a_pad_value_cast_like_the_input_folds(tmp_path, opset):
    """torch.onnx's dynamo exporter types a scalar as CastLike(constant, x): only x's element type
    is read, so the value is known at conversion (it was refused: "constant_value ('const_2_cast')
    must be known at conversion time")."""
    nodes = [helper.make_node("Constant", [], ["const_2"], value=helper.make_tensor("v", TensorProto.DOUBLE, [], [1.3])),
             helper.make_node("CastLike", ["const_2", "x"], ["const_2_cast"]),
             helper.make_node("Pad", ["x", "pads", "const_2_cast"], ["y"], mode="constant")]
    model = graph_model(nodes, [("x", FLOAT, [1, 3, 4, 5])], [("y", FLOAT, None)],
                        {"pads": np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)}, opset=opset)
    result = converts_like_ort(tmp_path, model, [RNG.standard_normal((1, 3, 4, 5), dtype=np.float32)])
    assert op_types(result.paths["pnnxparam"]) == ["pnnx.Input", "F.pad", "pnnx.Output"]
