"""The transformers tier (pnnx_model_zoo/hf.py): full tier only, selected as `transformers`, and
every model through the Python API on ncnn (CPU) and pnnx.onnx (onnxruntime) within fp32
rounding of torch; LLaMA's ncnn graph uses ncnn's RMSNorm and grouped SDPA layers, its
pnnx.onnx one grouped Attention node per layer."""
from __future__ import annotations

import onnx
import pytest

from conformance_runs import assert_close, run_ncnn, run_onnx
from pnnx_model_zoo import converters, hf, run
from pnnx_model_zoo.zoo import all_cases, zoo_cases
from pnnx_reference.api import capture, export
from pnnx_reference.formats import ncnn_param
from pnnx_reference.passes.empty_operands import CONCATENATIONS, is_empty

TIER = [c for c in all_cases() if c.transformers]
ONE_LENGTH = [c for c in TIER if not c.inputs2]
TWO_LENGTHS = [c for c in TIER if c.inputs2]
FP32 = dict(atol=1e-5, rtol=1e-5)  # fp32 weights: summation order only


def test_the_tier_is_full_tier_selected_by_name_and_kept_out_of_the_default_run():
    names = {c.op.removeprefix("models.") for c in TIER}
    assert {"hf_bert", "hf_gpt2", "hf_llama", "hf_t5_encoder", "hf_t5", "hf_vit", "hf_whisper_encoder",
            "llm_decode_step"} <= names
    assert run.select("transformers") == TIER
    assert not set(TIER) & set(zoo_cases()) and all(c.tier == "full" for c in TIER)


@pytest.mark.parametrize("case", ONE_LENGTH, ids=lambda c: c.op.removeprefix("models."))
def test_model_converts_and_matches_torch_on_ncnn_and_onnx(case, tmp_path):
    pytest.importorskip("transformers", reason="the tier builds transformers models from small configs")
    import torch

    model, inputs = case.make_model(), case.make_inputs()
    with torch.no_grad():
        want = model(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    result = export(model, tuple(inputs), tmp_path, "m", fp16=False)
    assert result.unsupported == {}
    assert_close(run_ncnn(tmp_path / "m", inputs), want, FP32, "ncnn")
    assert_close(run_onnx(tmp_path / "m.pnnx.onnx", inputs), want, FP32, "onnx")
    if case.op == "models.hf_llama":
        layers = [layer.type for layer in ncnn_param.load(tmp_path / "m.ncnn.param").layers]
        assert layers.count("RMSNorm") == 5 and layers.count("SDPA") == 2 and layers.count("RotaryEmbed") == 4
        assert "Reduction" not in layers and "Concat" not in layers
        nodes = [n.op_type for n in onnx.load(tmp_path / "m.pnnx.onnx").graph.node]
        assert nodes.count("Attention") == 2


@pytest.mark.parametrize("op", hf.DECODERS)
def test_decoders_are_called_as_users_call_them_so_their_graph_holds_the_empty_past(op):
    """use_cache at its default: the traced graph concatenates keys/values onto a zero-size past
    (the operand passes/empty_operands.py leaves out on ncnn and ONNX). A decoder switched back
    to use_cache=False would no longer cover that path."""
    pytest.importorskip("transformers", reason="the tier builds transformers models from small configs")
    (case,) = [c for c in ONE_LENGTH if c.op == op]
    graph = capture(case.make_model(), tuple(case.make_inputs()))
    empty_pasts = [op for op in graph.ops if op.type in CONCATENATIONS and any(is_empty(x) for x in op.inputs)]
    assert empty_pasts, f"{case.id}: no concatenation onto an empty past in the traced graph"


def test_models_at_lengths_that_follow_the_input_are_converted_at_both():
    """The two-length cases (the tier's encoders and decoders without their cache, 8 and 13 tokens)
    reach every door with their second shape: inputs2 for the Python API, inputshape2 on the
    command lines (the .pt2 and ONNX routes export the axes that change dynamic)."""
    assert {c.op for c in TWO_LENGTHS} == {"models.hf_bert", "models.hf_gpt2", "models.hf_llama", "models.hf_t5_encoder"}
    case = next(c for c in TWO_LENGTHS if c.op == "models.hf_gpt2")
    assert [x.shape for x in case.inputs2] == [(1, 13)] and [x.shape for x in case.inputs] == [(1, 8)]
    assert converters.ZooReferencePt().argv(case, False) == ["case.pt", "inputshape2=[1,13]i64", "fp16=0"]
    upstream, sent = converters.ZooUpstream(), []
    upstream._extra = []
    upstream.command = lambda exe, argv, workdir, timeout_s: sent.append(argv)
    upstream._run("pnnx", case, None, True)
    assert sent == [["case.pt", "inputshape=[1,8]i64", "inputshape2=[1,13]i64", "fp16=1"]]
    upstream.close()


def test_a_decoder_converted_at_two_lengths_matches_torch_at_both_on_ncnn(tmp_path):
    pytest.importorskip("transformers", reason="the tier builds transformers models from small configs")
    import torch

    case = next(c for c in TWO_LENGTHS if c.op == "models.hf_gpt2")
    arts = converters.ZooReference().convert(case, tmp_path)
    assert "ncnn.param" in arts.paths and not arts.unsupported
    model = case.make_model()
    for inputs in (case.make_inputs(), case.make_inputs2()):
        with torch.no_grad():
            want = model(*inputs)
        assert_close(run_ncnn(tmp_path / "case", inputs), (want,), FP32, f"ncnn at {list(inputs[0].shape)}")
