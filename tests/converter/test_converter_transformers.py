"""Models built with `transformers` (tiny configs, random weights) through the Python API at
fp16=0, on every backend that takes them."""
from __future__ import annotations

import re
import warnings

import ncnn
import pytest
import torch

pytest.importorskip("transformers", reason="the transformers models need the optional transformers package")

import transformers_models as tm  # noqa: E402
from conformance_runs import NCNN_MODES, assert_close, run_ncnn, run_onnx  # noqa: E402
from pnnx_reference import api  # noqa: E402
from pnnx_reference.cli import main  # noqa: E402
from pnnx_reference.tolerances import OP_OVERRIDES  # noqa: E402

CLOSE = {"atol": 1e-5, "rtol": 1e-5}


def _expected(model, ids):
    with torch.no_grad():
        return [model(ids)]


def test_gpt2_converts_to_all_seven_artefacts_and_matches_on_onnxruntime_and_ncnn(tmp_path):
    """Its empty key/value past (`torch.cat` of a 1-d empty tensor onto rank-4 keys) failed the
    ONNX checker, and that took every artefact down."""
    model, ids = tm.gpt2(), tm.token_ids()
    result = api.export(model, (ids,), tmp_path, "gpt2", fp16=False)
    assert sorted(result.paths) == sorted(api.ARTEFACTS) and not result.unsupported
    expected = _expected(model, ids)
    assert_close(run_onnx(tmp_path / "gpt2.pnnx.onnx", [ids]), expected, CLOSE, "onnxruntime")
    assert_close(run_ncnn(tmp_path / "gpt2", [ids]), expected, CLOSE, "ncnn")


@pytest.mark.parametrize("use_cache", [True, False])
def test_llama_writes_no_zero_size_blob_and_matches_on_ncnn(tmp_path, use_cache):
    """With the cache on, its empty past was a `MemoryData 0=0` that corrupted ncnn's heap."""
    model, ids = tm.llama(use_cache=use_cache), tm.token_ids()
    api.export(model, (ids,), tmp_path, "llama", fp16=False)
    param = (tmp_path / "llama.ncnn.param").read_text()
    assert not re.search(r"^MemoryData +\S+ +0 1 \S+ +0=0$", param, re.M)
    assert_close(run_ncnn(tmp_path / "llama", [ids]), _expected(model, ids), CLOSE, "ncnn")


def test_hubert_with_a_weight_normed_convolution_matches_on_every_backend(tmp_path):
    """`parametrizations.weight_norm` on its positional convolution: "unknown operator type
    'nn.ParametrizedConv1d'" before; now an nn.Conv1d with the computed weight."""
    model, audio = tm.hubert(), torch.rand(1, 400, generator=torch.Generator().manual_seed(0))
    result = api.export(model, (audio,), tmp_path, "hubert", fp16=False)
    assert sorted(result.paths) == sorted(api.ARTEFACTS) and not result.unsupported
    assert "nn.Conv1d" in {op.type for op in result.graph.ops}
    expected = _expected(model, audio)
    assert_close(run_onnx(tmp_path / "hubert.pnnx.onnx", [audio]), expected, CLOSE, "onnxruntime")
    assert_close(run_ncnn(tmp_path / "hubert", [audio]), expected, CLOSE, "ncnn")


def test_a_logging_only_branch_on_the_token_ids_is_accepted_with_a_note(tmp_path):
    """transformers' `if pad_token_id in input_ids[:, [-1, 0]]: logger.warning_once(...)` was
    refused as value-dependent; both outcomes record the same graph."""
    model, ids = tm.roformer(), tm.token_ids()
    result = api.export(model, (ids,), tmp_path, "roformer", fp16=False)
    assert [note.split(": ", 2)[-1] for note in result.value_dependent] == [
        "`in` of a tensor computed from the inputs: accepted, a branch whose every outcome records the same graph"]
    assert sorted(result.paths) == sorted(api.ARTEFACTS) and not result.unsupported
    assert_close(run_ncnn(tmp_path / "roformer", [ids]), _expected(model, ids), CLOSE, "ncnn")


def test_roberta_position_ids_from_the_token_ids_are_exact_on_ncnn(tmp_path):
    """"torch.ne: operand 0 is fed as int32 bits for Embed ..." before: ncnn declined."""
    model = tm.roberta()
    ids = torch.cat([tm.token_ids(6), torch.ones(1, 2, dtype=torch.long)], dim=1)  # padded at the end
    result = api.export(model, (ids,), tmp_path, "roberta", fp16=False)
    assert sorted(result.paths) == sorted(api.ARTEFACTS) and not result.unsupported
    expected = _expected(model, ids)
    assert_close(run_ncnn(tmp_path / "roberta", [ids]), expected, CLOSE, "ncnn")
    assert_close(run_onnx(tmp_path / "roberta.pnnx.onnx", [ids]), expected, CLOSE, "onnxruntime")



@pytest.mark.parametrize("build", [tm.bert, tm.gpt2, tm.llama, tm.t5_encoder], ids=["bert", "gpt2", "llama", "t5-encoder"])
def test_at_two_lengths_every_artefact_matches_at_any_length(tmp_path, build):
    """inputshape2 makes the length follow the input. BERT's token-type expand to (batch, length)
    was declined by ncnn ("list expressions are not lowered") and ONNX ("dynamic expand
    target"); GPT-2's and LLaMA's is_causal mask over the length took the whole conversion down
    ("negative dimensions are not allowed"), and their position ids arange(length) had no ncnn
    lowering. T5's relative position bias was declined by ncnn (full_like, reshapes with two
    sizes that follow the input), and its -inf bucket on the diagonal made NaN of the rest."""
    model, ids = build(), tm.token_ids()
    result = api.export(model, (ids,), tmp_path, "m", inputs2=(tm.token_ids(16),), fp16=False)
    assert sorted(result.paths) == sorted(api.ARTEFACTS) and not result.unsupported
    for length in (8, 16, 5):
        ids = tm.token_ids(length)
        expected = _expected(model, ids)
        assert_close(run_onnx(tmp_path / "m.pnnx.onnx", [ids]), expected, CLOSE, f"onnxruntime at {length}")
        assert_close(run_ncnn(tmp_path / "m", [ids]), expected, CLOSE, f"ncnn at {length}")



@pytest.mark.parametrize("mode", ["default", "vulkan"])
def test_t5_encoder_at_two_lengths_is_finite_in_fp16_storage(tmp_path, mode):
    """The bucket diagonal's log(0) = -inf, cast to int64 (-2^63: -inf in fp16 storage) and left
    out by where(), made NaN of the whole output on Vulkan's default fp16 (a 0/1 blend)."""
    if mode == "vulkan" and not ncnn.get_gpu_count():
        pytest.skip("no Vulkan device")
    model = tm.t5_encoder()
    result = api.export(model, (tm.token_ids(),), tmp_path, "m", inputs2=(tm.token_ids(16),), fp16=False)
    assert not result.unsupported, result.unsupported
    network = OP_OVERRIDES[("models.*", *NCNN_MODES[mode])]  # relative L2 per output, as the zoo's
    for length in (8, 16, 5):
        ids = tm.token_ids(length)
        assert_close(run_ncnn(tmp_path / "m", [ids], mode), _expected(model, ids), network, f"{mode} at {length}")


def test_t5_at_two_encoder_and_decoder_lengths_matches_on_onnxruntime_and_ncnn(tmp_path):
    """_pnnx.py wrote the decoder mask's finfo(float32).min as -3.4028235e+38, past float32's
    range ("cannot be converted to type float without overflow"); the cross-attention bias of
    zeros over both lengths had no ncnn or ONNX form."""
    model = tm.t5()
    pairs = [(tm.token_ids(8), tm.token_ids(4)), (tm.token_ids(13), tm.token_ids(6)), (tm.token_ids(5), tm.token_ids(9))]
    result = api.export(model, pairs[0], tmp_path, "m", inputs2=pairs[1], fp16=False)
    assert not result.unsupported, result.unsupported
    for ids, decoder_ids in pairs:
        with torch.no_grad():
            expected = [model(ids, decoder_ids)]
        where = f"at {ids.shape[1]} and {decoder_ids.shape[1]}"
        assert_close(run_onnx(tmp_path / "m.pnnx.onnx", [ids, decoder_ids]), expected, CLOSE, f"onnxruntime {where}")
        assert_close(run_ncnn(tmp_path / "m", [ids, decoder_ids]), expected, CLOSE, f"ncnn {where}")


def _traced(model, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.trace(model, tm.token_ids(), strict=False, check_trace=False).save(str(path))
    return path


def test_a_traced_gpt2_lm_head_converts_at_two_lengths_through_the_pt_door(tmp_path, capsys):
    """"the model runs different operators for inputshape and inputshape2" before: its head,
    tied to the token embedding, was rebuilt at its first call and recorded a detach() there."""
    model = tm.gpt2_lm_head()
    pt = _traced(model, tmp_path / "lm.pt")
    assert main([str(pt), "inputshape=[1,8]i64", "inputshape2=[1,16]i64", "fp16=0"]) == 0, capsys.readouterr().err
    assert "unsupported" not in capsys.readouterr().err
    for length in (16, 5):
        ids = tm.token_ids(length)
        expected = _expected(model, ids)
        assert_close(run_onnx(tmp_path / "lm.pnnx.onnx", [ids]), expected, CLOSE, f"onnxruntime at {length}")
        assert_close(run_ncnn(tmp_path / "lm", [ids]), expected, CLOSE, f"ncnn at {length}")


@pytest.mark.parametrize("build", [tm.gpt2_lm_head, tm.llama], ids=["gpt2-lm-head", "llama"])
def test_traced_without_the_cache_the_mask_construction_runs_on_onnx_at_any_length(tmp_path, capsys, build):
    """Traced with use_cache=False, transformers builds the mask in Python: torch.diff of the
    position ids (its packed-sequence check) and position_ids[batch, q] index tensors over the
    length. ONNX declined both ("no ONNX lowering", "needs static index shape")."""
    model = build(use_cache=False)
    pt = _traced(model, tmp_path / "m.pt")
    assert main([str(pt), "inputshape=[1,8]i64", "inputshape2=[1,16]i64", "fp16=0"]) == 0, capsys.readouterr().err
    assert "onnx: unsupported" not in capsys.readouterr().err
    for length in (8, 16, 5):
        ids = tm.token_ids(length)
        assert_close(run_onnx(tmp_path / "m.pnnx.onnx", [ids]), _expected(model, ids), CLOSE, f"onnxruntime at {length}")
