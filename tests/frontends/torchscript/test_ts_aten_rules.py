"""Issue 19, item 2 (and the .pt door's share of item 6): each model of ts_models.py, traced
and saved, converts through the .pt door and the generated _pnnx.py computes what the traced
model computes; the same model through the Python-API door computes the same."""
import contextlib
import importlib.util
import io
import warnings

import pytest
import torch

from pnnx_reference.api import export
from pnnx_reference.frontends.torchscript import rebuild
from pnnx_reference.formats import pnnx_param
from ts_models import FOLDED, MODELS, NO_GRAD


def flat(value) -> list:
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flat(v)]
    return [value]


def traced(name: str, model, inputs):
    buffer = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad() if name in NO_GRAD else contextlib.nullcontext():
        warnings.simplefilter("ignore")
        torch.jit.save(torch.jit.trace(model, inputs, check_trace=False), buffer)
        buffer.seek(0)
        return torch.jit.load(buffer)


def generated_outputs(folder, inputs) -> list:
    spec = importlib.util.spec_from_file_location(f"gen_{folder.name}", folder / "m_pnnx.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with torch.no_grad():
        return flat(module.Model().eval()(*[t.clone() for t in inputs]))


def assert_same(got: list, expected: list) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_pt_door_converts_and_matches(tmp_path, name):
    make, make_inputs = MODELS[name]
    torch.manual_seed(0)
    model, inputs = make().eval(), make_inputs()
    with torch.no_grad():
        expected = flat(model(*[t.clone() for t in inputs]))
    export(rebuild(traced(name, model, inputs)), inputs, tmp_path, "m")
    assert_same(generated_outputs(tmp_path, inputs), expected)


@pytest.mark.parametrize("name", ["index_tensor", "index_mask", "relative_bias", "class_token", "copy_into_slice",
                                  "computed_slice", "shifts", "stft_center_reflect", "list_unpack"])
def test_python_door_matches_too(tmp_path, name):
    make, make_inputs = MODELS[name]
    torch.manual_seed(0)
    model, inputs = make().eval(), make_inputs()
    with torch.no_grad():
        expected = flat(model(*[t.clone() for t in inputs]))
    export(model, inputs, tmp_path, "m")
    assert_same(generated_outputs(tmp_path, inputs), expected)


@pytest.mark.parametrize("name", sorted(FOLDED))
def test_lowered_calls_fold_back_to_one_operator(tmp_path, name):
    """Upstream writes F.local_response_norm and F.lp_poolNd whole; so does the .pt door."""
    make, make_inputs = MODELS[name]
    model, inputs = make().eval(), make_inputs()
    export(rebuild(traced(name, model, inputs)), inputs, tmp_path, "m")
    types = [op.type for op in pnnx_param.load_text(tmp_path / "m.pnnx.param").ops]
    assert types == ["pnnx.Input", FOLDED[name], "pnnx.Output"], types


def test_an_unmappable_aten_call_names_its_argument_types():
    """ssdlite's traced .pt stacks image sizes the trace kept symbolic: the one error line says so
    (list[SymInt]) instead of only that aten::stack has no mapping."""
    from pnnx_reference.errors import ConversionError
    from pnnx_reference.frontends.aten import _generic

    with pytest.raises(ConversionError, match=r"aten::stack has no Python API mapping for its arguments "
                                              r"\(tensors=list\[int\], dim=int\)$"):
        _generic("stack", {"tensors": [3, 4], "dim": 0})
