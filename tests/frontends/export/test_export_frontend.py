"""Issue 16: the torch.export frontend end to end: `pnnxref model.pt2` and `api.export(program)`
write the artefacts from the program's own example inputs, dynamic dimensions stay dynamic
and the generated code runs at other sizes, core-ATen programs fold back, and what is not a
program or what torch.export refuses is one error line."""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conformance_runs import assert_close, run_backend, tolerance
from pnnx_reference import api
from pnnx_reference.errors import ConversionError
from pnnx_reference.frontends.export import export_program
from pnnx_reference.frontends.export.refusal import quiet


class Net(nn.Module):
    """Standard modules (one shared), functional calls that export decomposes, shape arithmetic."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 8)
        self.ln = nn.LayerNorm(8)

    def forward(self, x):
        y = F.relu(self.bn(self.conv(x)))
        y = y.mean((2, 3))
        y = self.fc(self.fc(y))
        y = F.normalize(F.gelu(self.ln(y)), dim=-1)
        return torch.softmax(y.view(y.size(0), -1) * 2 + 1, -1)


def _program(dynamic: bool = False, decompose: bool = False):
    x = torch.rand(2, 3, 8, 8)
    shapes = ({0: torch.export.Dim("batch", min=1, max=16)},) if dynamic else None
    program = export_program(Net().eval(), (x,), dynamic_shapes=shapes)
    if decompose:
        with quiet():
            program = program.run_decompositions()
    return program


def _ops(graph) -> list[str]:
    return [op.type for op in graph.ops]


def _param(path) -> str:
    return path.read_text()


# (batchnorm fused into the conv and the static view, a no-op, removed by the passes;
# `y.mean(...)` is Tensor.mean as the model spelled it, from the node's torch_fn)
FOLDED = ["pnnx.Input", "nn.Conv2d", "F.relu", "Tensor.mean", "nn.Linear", "nn.Linear", "nn.LayerNorm",
          "F.gelu", "F.normalize", "pnnx.Expression", "torch.softmax", "pnnx.Output"]
# run_decompositions() leaves aten._softmax, not the torch.softmax the model called: the rule's F.softmax
FOLDED_CORE = [("F.softmax" if t == "torch.softmax" else t) for t in FOLDED]


@pytest.mark.parametrize("decompose", [False, True], ids=["export-ir", "core-aten"])
def test_program_folds_back_to_python_api_operators(decompose):
    graph = api.capture(_program(decompose=decompose))
    types = [t for t in _ops(graph) if t != "pnnx.Attribute"]
    assert types == (FOLDED_CORE if decompose else FOLDED), types


def test_api_export_writes_the_artefacts_and_matches_torch(tmp_path):
    program = _program()
    result = api.export(program, None, tmp_path, "net")
    assert {"pnnxparam", "pnnxbin", "pnnxpy", "pnnxonnx"} <= set(result.paths)
    x = program.example_inputs[0][0]
    expected = program.module()(x)
    got = run_backend("pnnx-python", {"pnnx.param": result.paths["pnnxparam"], "pnnx.bin": result.paths["pnnxbin"],
                                      "pnnx.py": result.paths["pnnxpy"]}, [x])
    assert_close(got, [expected], tolerance(1e-5, 1e-4, "fp32 reference"))


class _Meshgrid(nn.Module):
    def forward(self, x):
        gy, gx = torch.meshgrid(torch.arange(x.shape[2]), torch.arange(x.shape[3]), indexing="ij")
        return x + torch.stack([gx, gy]).float()[None]


def test_meshgrid_of_a_list_of_tensors_is_torch_meshgrid(tmp_path):
    """aten.meshgrid takes its tensors as one list (raft's coordinate grid through the .pt2 door)."""
    x = torch.rand(1, 2, 3, 5)
    program = torch.export.export(_Meshgrid().eval(), (x,))
    result = api.export(program, None, tmp_path, "net")
    got = run_backend("pnnx-python", {"pnnx.param": result.paths["pnnxparam"], "pnnx.bin": result.paths["pnnxbin"],
                                      "pnnx.py": result.paths["pnnxpy"]}, [x])
    assert_close(got, [_Meshgrid()(x)], tolerance(0.0, 0.0, "integer grid added exactly"))


class _OwnBatchNorm(nn.Module):
    """A user module calling F.batch_norm on statistics of its own: no nn.BatchNorm to recover."""

    def __init__(self, features: int):
        super().__init__()
        self.register_buffer("running_mean", torch.rand(features))
        self.register_buffer("running_var", torch.rand(features) + 0.5)
        self.weight = nn.Parameter(torch.rand(features))
        self.bias = nn.Parameter(torch.rand(features))

    def forward(self, x):
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, False, 0.1, 1e-5)


def test_batch_norm_statistics_of_nested_modules_register_on_their_submodule(tmp_path):
    """F.batch_norm whose statistics live at dotted member paths (`features.0.2`, as mobilenet_v2's
    were before nn.BatchNorm was recovered): _pnnx.py registers each buffer on its own submodule
    (a dotted buffer name broke every torchvision network with batch norm through .pt2)."""
    torch.manual_seed(0)
    model = nn.Sequential()
    model.features = nn.Sequential(nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), _OwnBatchNorm(8)))
    program = export_program(model.eval(), (torch.rand(1, 3, 32, 32),))
    result = api.export(program, None, tmp_path, "net")  # self-checks the regenerated model
    assert ".register_buffer('running_mean'" in open(result.paths["pnnxpy"]).read()


def test_dynamic_dims_are_written_dynamic_and_run_at_other_sizes(tmp_path):
    program = _program(dynamic=True)
    result = api.export(program, None, tmp_path, "net")
    text = _param(result.paths["pnnxparam"])
    assert "#0=(?,3,8,8)f32" in text.splitlines()[2]  # the pnnx.Input
    assert "expr=[size(@0,0),-1]" in text  # the view keeps the batch symbolic
    paths = {"pnnx.param": result.paths["pnnxparam"], "pnnx.bin": result.paths["pnnxbin"],
             "pnnx.py": result.paths["pnnxpy"]}
    for batch in (1, 5):
        x = torch.rand(batch, 3, 8, 8)
        got = run_backend("pnnx-python", paths, [x])
        assert_close(got, [program.module()(x).detach()], tolerance(1e-5, 1e-4, "fp32 reference"))


class _SharedLength(nn.Module):
    """A key and a value of one length (one dynamic dimension to torch.export), and a view sized
    by the key's length plus one: nn.MultiheadAttention's add_bias_kv with kdim != vdim."""

    def forward(self, k, v):
        y = k * v
        return torch.cat([y, y[:, :1]], 1).view(2, k.size(1) + 1, 2, 2)


@pytest.mark.parametrize("read", [0, 1], ids=["key", "value"])
def test_a_size_two_inputs_share_is_read_from_the_first(read):
    """torch.export reads a size that several inputs share from whichever one keeps the symbol
    (a re-export of the same model may keep another: the .pt2 re-export of
    nn.MultiheadAttention/dyn_bias_kv_kdim_vdim_bf read the value's length, not the key's). The
    converted view reads it from the first input that has it, whichever torch.export read."""
    length = torch.export.Dim("length", min=2)
    inputs = (torch.rand(2, 5, 4), torch.rand(2, 5, 4))
    program = export_program(_SharedLength().eval(), inputs, dynamic_shapes=({1: length}, {1: length}))
    graph = program.graph_module.graph
    users = [n for n in graph.nodes if n.op == "placeholder"]
    sizes = [n for n in graph.nodes if n.target is torch.ops.aten.sym_size.int]
    assert sizes and all(n.args[0] in users for n in sizes)
    for node in sizes:
        node.update_arg(0, users[read])
    from param_lines import normalised_param

    sized = [line for line in normalised_param(api.capture(program)) if "size(" in line]
    assert len(sized) == 1 and sized[0].startswith("pnnx.Expression 1 1 0 ") and "size(@0,1)" in sized[0], sized


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "pnnx_reference.cli", *args], cwd=cwd, text=True,
                          capture_output=True)


def test_cli_converts_a_pt2_without_inputshape(tmp_path):
    with quiet():
        torch.export.save(_program(), str(tmp_path / "my-net.pt2"))
    done = _cli("my-net.pt2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "my-net.pnnx.param").is_file() and (tmp_path / "my-net_pnnx.py").is_file()
    first = [line for line in _param(tmp_path / "my-net.pnnx.param").splitlines() if "pnnx.Input" in line][0]
    assert "#0=(2,3,8,8)f32" in first


def test_cli_inputshape_overrides_the_example_inputs(tmp_path):
    with quiet():
        torch.export.save(_program(dynamic=True), str(tmp_path / "net.pt2"))
    done = _cli("net.pt2", "inputshape=[4,3,8,8]", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "#0=(?,3,8,8)f32" in _param(tmp_path / "net.pnnx.param")


@pytest.mark.parametrize("content", [b"not a zip", b"PK\x03\x04broken"], ids=["text", "truncated-zip"])
def test_cli_refuses_a_bad_pt2_in_one_line(tmp_path, content):
    (tmp_path / "bad.pt2").write_bytes(content)
    done = _cli("bad.pt2", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: bad.pt2: "), done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.pt2"]


def test_a_program_without_example_inputs_needs_inputshape(tmp_path):
    program = _program()
    program._example_inputs = None
    with pytest.raises(ConversionError, match="no example inputs: give inputshape"):
        api.export(program, None, tmp_path, "net")
    assert api.export(program, None, tmp_path, "net", input_shapes=[[2, 3, 8, 8]]).paths


class DataDependent(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # the line the refusal names
            return x * 2
        return x - 1


def test_torch_export_refusal_is_one_line_with_the_source_line():
    with pytest.raises(ConversionError) as info:
        export_program(DataDependent(), (torch.rand(3),))
    message = str(info.value)
    assert "\n" not in message
    assert f"{__file__}:" in message and "if x.sum() > 0:" in message
    assert "torch.export refused the model: Could not guard on data-dependent expression" in message


class ConvBnRelu(nn.Module):
    """torchvision's stem: the in-place ReLU writes into the batch norm's output, so the value
    recorded for that output must be the one it had before (else nn.BatchNorm never matched)."""

    def __init__(self, dims: int = 2):
        super().__init__()
        torch.manual_seed(0)
        conv, bn = {1: (nn.Conv1d, nn.BatchNorm1d), 2: (nn.Conv2d, nn.BatchNorm2d),
                    3: (nn.Conv3d, nn.BatchNorm3d)}[dims]
        self.conv = conv(3, 8, 3, padding=1, bias=False)
        self.bn = bn(8)
        self.relu = nn.ReLU(inplace=True)
        with torch.no_grad():  # statistics of a trained model, so that a missing fold shows in the numbers
            self.bn.running_mean.uniform_(-1, 1)
            self.bn.running_var.uniform_(0.5, 2)
            self.bn.weight.uniform_(0.5, 2)
            self.bn.bias.uniform_(-1, 1)

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_batch_norm_before_an_inplace_relu_is_the_module_as_on_the_python_door(dims):
    model = ConvBnRelu(dims).eval()
    x = torch.rand((2, 3) + (6,) * dims)
    pt2 = api.capture(export_program(model, (x,)))
    python = api.capture(model, (x,))
    assert _ops(pt2) == _ops(python), (_ops(pt2), _ops(python))
    assert f"nn.BatchNorm{dims}d" not in _ops(pt2) and "F.batch_norm" not in _ops(pt2)  # folded into the conv


def test_cli_folds_conv_batch_norm_of_a_saved_pt2_and_matches_torch(tmp_path):
    model, x = ConvBnRelu().eval(), torch.rand(1, 3, 8, 8)
    with quiet():
        torch.export.save(export_program(model, (x,)), str(tmp_path / "net.pt2"))
    done = _cli("net.pt2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    python = api.export(model, (x,), tmp_path / "python", "net")
    types = [line.split()[0] for line in _param(tmp_path / "net.pnnx.param").splitlines()[2:]]
    assert types == [line.split()[0] for line in _param(python.paths["pnnxparam"]).splitlines()[2:]]
    assert types == ["pnnx.Input", "nn.Conv2d", "nn.ReLU", "pnnx.Output"], types
    assert "bias=True" in _param(tmp_path / "net.pnnx.param")  # the batch norm's shift is the conv's bias now
    paths = {"pnnx.param": tmp_path / "net.pnnx.param", "pnnx.bin": tmp_path / "net.pnnx.bin",
             "pnnx.py": tmp_path / "net_pnnx.py"}
    assert_close(run_backend("pnnx-python", paths, [x]), [model(x).detach()], tolerance(1e-5, 1e-4, "fp32 reference"))


class _InPlace(nn.Module):
    def __init__(self, step):
        super().__init__()
        self.step = step

    def forward(self, x, y):
        z = torch.relu(x) + 1
        self.step(z, y)  # writes z, which is returned as it stands afterwards
        return z


_IN_PLACE_STEPS = {"iadd": lambda z, y: z.__iadd__(y), "add_": lambda z, y: z.add_(y),
                   "isub": lambda z, y: z.__isub__(y), "mul_": lambda z, y: z.mul_(y),
                   "itruediv": lambda z, y: z.__itruediv__(y), "div_": lambda z, y: z.div_(y),
                   "ipow": lambda z, y: z.__ipow__(2), "ifloordiv": lambda z, y: z.__ifloordiv__(y),
                   "imod": lambda z, y: z.__imod__(y)}


@pytest.mark.parametrize("step", list(_IN_PLACE_STEPS))
def test_inplace_arithmetic_is_an_expression_as_on_the_python_door(step, tmp_path):
    """`z += y` and `z.add_(y)` are one aten add_ whose torch_fn says `method_descriptor.add_`:
    written, as the Python door writes both, as a pnnx.Expression (torchvision's residual
    `out += identity`), and still a write of `z`."""
    model, x, y = _InPlace(_IN_PLACE_STEPS[step]).eval(), torch.rand(2, 4, 5), torch.rand(2, 4, 5) + 0.5
    program = export_program(model, (x, y))
    assert _ops(api.capture(program)) == _ops(api.capture(model, (x, y))) == \
        ["pnnx.Input", "pnnx.Input", "torch.relu", "pnnx.Expression", "pnnx.Output"]
    result = api.export(program, None, tmp_path, "net")  # self-checks the regenerated model
    got = run_backend("pnnx-python", {"pnnx.param": result.paths["pnnxparam"], "pnnx.bin": result.paths["pnnxbin"],
                                      "pnnx.py": result.paths["pnnxpy"]}, [x, y])
    assert_close(got, [model(x.clone(), y)], tolerance(1e-5, 1e-4, "fp32 reference"))


class _MaskedDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True)

    def forward(self, tgt, memory, mask):
        return self.layer(tgt, memory, tgt_mask=mask)


def test_transformer_layer_is_rebuilt_with_its_masks_by_name(tmp_path):
    """nn.TransformerDecoderLayer back from a .pt2 (its head count and layout tried against the
    example values) and called as the model called it, the mask by name: the same line as the
    Python door, which the ncnn emitter lowers (a mask by position it cannot place)."""
    from param_lines import normalised_param

    model = _MaskedDecoder().eval()
    inputs = (torch.rand(2, 4, 8), torch.rand(2, 5, 8), torch.triu(torch.full((4, 4), float("-inf")), 1))
    program = export_program(model, inputs)
    assert normalised_param(api.capture(program)) == normalised_param(api.capture(model, inputs))
    result = api.export(program, None, tmp_path, "net")  # self-checks the regenerated model
    assert "ncnn" not in result.unsupported, result.unsupported
    got = run_backend("pnnx-python", {"pnnx.param": result.paths["pnnxparam"], "pnnx.bin": result.paths["pnnxbin"],
                                      "pnnx.py": result.paths["pnnxpy"]}, list(inputs))
    assert_close(got, [model(*inputs).detach()], tolerance(1e-5, 1e-4, "fp32 reference"))


def test_split_with_a_list_of_sizes_is_torch_split_as_on_the_python_door(tmp_path):
    """torch.export records torch.split(x, [2, 3]) as aten split_with_sizes; written as
    `torch.split_with_sizes` it had no ncnn or ONNX lowering."""
    import torch

    from pnnx_reference.cli import main
    from pnnx_reference.frontends.export import export_program

    class Split(torch.nn.Module):
        def forward(self, x):
            a, b = torch.split(x, [2, 3], dim=1)
            return a * 2, b + 1

    x = torch.rand(2, 5, 4)
    program = export_program(Split().eval(), (x,))
    torch.export.save(program, str(tmp_path / "split.pt2"))
    assert main([str(tmp_path / "split.pt2"), "fp16=0"]) == 0
    ops = [line.split()[0] for line in (tmp_path / "split.pnnx.param").read_text().splitlines()[2:]]
    assert "torch.split" in ops and "torch.split_with_sizes" not in ops
    assert (tmp_path / "split.ncnn.param").is_file() and (tmp_path / "split.pnnx.onnx").is_file()


class _Attention(nn.Module):
    """Attention calls whose module the .pt2 door must rebuild with the call the model made:
    a mask by name (built in forward, a bool key padding mask or a float mask filled by index),
    need_weights=False (scaled_dot_product_attention rather than the weights' bmm/softmax),
    average_attn_weights=False."""

    def __init__(self, kind):
        super().__init__()
        torch.manual_seed(0)
        self.kind = kind
        if kind.startswith("mha"):
            self.m = nn.MultiheadAttention(8, 2, batch_first=True)
        elif kind == "encoder_key_padding":
            self.m = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        else:
            self.m = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True)

    def forward(self, x, y):
        padding = torch.arange(5).unsqueeze(0) >= torch.tensor([[5], [3]])
        if self.kind == "mha_no_weights":
            return self.m(x, x, x, need_weights=False)[0]
        if self.kind == "mha_per_head_weights":
            return self.m(x, x, x, average_attn_weights=False)
        if self.kind == "mha_key_padding":
            return self.m(x, x, x, key_padding_mask=padding)
        if self.kind == "encoder_key_padding":
            return self.m(x, src_key_padding_mask=padding)
        mask = torch.zeros(5, 5)
        mask[:, -1] = float("-inf")  # written in place after it was made
        return self.m(x, y, memory_mask=mask)


@pytest.mark.parametrize("kind", ["mha_no_weights", "mha_per_head_weights", "mha_key_padding", "encoder_key_padding",
                                  "decoder_memory_mask"])
def test_attention_is_rebuilt_with_the_call_the_model_made(kind, tmp_path):
    """Rebuilt whole, called as the model called it: the Python door's pnnx.param, and the
    regenerated model gives the model's bits (the same kernels: eval attention's fast path)."""
    from param_lines import normalised_param

    model, inputs = _Attention(kind).eval(), (torch.rand(2, 5, 8), torch.rand(2, 5, 8))
    program = export_program(model, inputs)
    assert normalised_param(api.capture(program)) == normalised_param(api.capture(model, inputs))
    result = api.export(program, None, tmp_path, "net")
    got = run_backend("pnnx-python", {"pnnx.param": result.paths["pnnxparam"], "pnnx.bin": result.paths["pnnxbin"],
                                      "pnnx.py": result.paths["pnnxpy"]}, list(inputs))
    with torch.no_grad():
        expected = model(*inputs)
    for a, b in zip(got, expected if isinstance(expected, tuple) else (expected,)):
        assert torch.equal(torch.as_tensor(a), b), kind


@pytest.mark.parametrize("kind, heads", [("mha_no_weights", 2), ("mha_per_head_weights", 2)])
def test_attention_head_count_is_read_from_the_graph_first(kind, heads):
    """nn.MultiheadAttention's head count leaves no trace in its weights: every candidate is a
    module built and run. The graph shows it (scaled_dot_product_attention's query split into
    heads, or the 1/sqrt(head_dim) scaling), so the first candidate is the right one (vit_b_16:
    25 candidates a layer were built and run before, 29 s of its 31)."""
    from pnnx_reference.frontends.export import modules

    program = export_program(_Attention(kind).eval(), (torch.rand(2, 5, 8), torch.rand(2, 5, 8)))
    members = [n for n in program.graph.nodes if n.op == "call_function"
               and any(cls is nn.MultiheadAttention for _, _, cls in modules.stack_entries(n))]
    assert modules._attention_variants(members, {"embed_dim": 8}, ())[0] == {"num_heads": heads, "batch_first": True}


class _MaxNormEmbedding(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.w = nn.Parameter(torch.randn(10, 16) * 2)  # rows longer than max_norm

    def forward(self, x):
        return F.embedding(x, self.w, max_norm=1.0)


def test_embedding_max_norm_keeps_the_weights_and_is_the_python_call(tmp_path):
    """torch.export writes embedding_renorm_ of the weight, then the lookup: folded back to
    F.embedding(max_norm=1.0) with padding_idx None (aten's -1); the conversion's evaluation
    of the program must not renormalise the weights it stores (the regenerated model
    renormalises them as the model does, giving its bits)."""
    from param_lines import normalised_param

    model, x = _MaxNormEmbedding().eval(), torch.tensor([[0, 3, 9, 3], [1, 2, 2, 5]])
    assert normalised_param(api.capture(export_program(model, (x,)))) == \
        normalised_param(api.capture(_MaxNormEmbedding().eval(), (x,)))
    result = api.export(export_program(_MaxNormEmbedding().eval(), (x,)), None, tmp_path, "net")
    from pnnx_conformance.backends.pnnx_python import load_generated_model

    assert torch.equal(load_generated_model(result.paths["pnnxpy"]).w, _MaxNormEmbedding().w)
    got = run_backend("pnnx-python", {"pnnx.param": result.paths["pnnxparam"], "pnnx.bin": result.paths["pnnxbin"],
                                      "pnnx.py": result.paths["pnnxpy"]}, [x])
    with torch.no_grad():
        expected = _MaxNormEmbedding().eval()(x)
    assert torch.equal(torch.as_tensor(got[0]), expected)


class _Gumbel(nn.Module):
    def __init__(self, **options):
        super().__init__()
        self.options = options

    def forward(self, x):
        return F.gumbel_softmax(x, **self.options)


@pytest.mark.parametrize("options", [{}, {"tau": 0.5, "hard": True}, {"hard": True, "dim": 0}])
def test_gumbel_softmax_folds_back_whole_and_stays_random(options):
    """torch.export writes F.gumbel_softmax as its noise (exponential_ of an empty_like), the
    softmax and, hard, the one-hot scatter: folded back to the one call (checked by running
    both from one seed), as on the Python door; the noise is never a constant."""
    from param_lines import normalised_param

    x = torch.rand(4, 8)
    pt2 = api.capture(export_program(_Gumbel(**options).eval(), (x,)))
    assert normalised_param(pt2) == normalised_param(api.capture(_Gumbel(**options).eval(), (x,)))
    assert "F.gumbel_softmax" in _ops(pt2) and "pnnx.Attribute" not in _ops(pt2)


class _WriteBack(nn.Module):
    """An in-place call on a slice, written back as a regenerated _pnnx.py writes it."""

    def forward(self, x):
        y = x + 0.0
        part = y[:, 1:3]
        filled = part.fill_(-1.0)
        y[:, 1:3] = filled  # the same memory: changes nothing
        return y


def test_copy_of_a_slice_onto_itself_is_skipped_as_on_the_python_door():
    """torch.export records the write-back as copy_ into a fresh slice of the same bounds; it is
    no second Tensor.slice_copy (the re-export of a converted in-place slice write is a fixed
    point)."""
    from param_lines import normalised_param

    x = torch.rand(2, 5, 4)
    pt2 = api.capture(export_program(_WriteBack().eval(), (x,)))
    assert normalised_param(pt2) == normalised_param(api.capture(_WriteBack().eval(), (x,)))
    assert _ops(pt2).count("Tensor.slice_copy") == 1, _ops(pt2)


@pytest.mark.parametrize("fn", [torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor])
def test_bitwise_with_a_number_is_an_expression_as_on_the_python_door(fn):
    """aten's bitwise_and.Scalar: the number by position, so the call is `and(@0,2)` (which the
    ONNX writer lowers), not torch.bitwise_and with other=2."""
    from param_lines import normalised_param

    class Bitwise(nn.Module):
        def forward(self, x):
            return fn(x, 2)

    x = torch.randint(0, 200, (4, 13))
    pt2 = api.capture(export_program(Bitwise().eval(), (x,)))
    assert normalised_param(pt2) == normalised_param(api.capture(Bitwise().eval(), (x,)))
    assert _ops(pt2) == ["pnnx.Input", "pnnx.Expression", "pnnx.Output"]


@pytest.mark.parametrize("call", [lambda x: F.lp_pool2d(x, 3.0, 3, stride=2, ceil_mode=True),
                                  lambda x: F.lp_pool2d(x, 2.0, (2, 3)), lambda x: F.lp_pool1d(x.flatten(2), 1.0, 3, 2)])
def test_lp_pool_folds_back_whole_and_gives_torchs_bits(call, tmp_path):
    """torch.export writes F.lp_pool as pow, avg_pool and `** (1 / p)`, whose exponent the
    expression keeps as a float32 literal (0.333333343 for p=3: other bits than torch's):
    folded back to the one call, as on the Python door."""
    from param_lines import normalised_param

    class Pool(nn.Module):
        def forward(self, x):
            return call(x)

    x = torch.rand(1, 4, 9, 11)
    program = export_program(Pool().eval(), (x,))
    assert normalised_param(api.capture(program)) == normalised_param(api.capture(Pool().eval(), (x,)))
    result = api.export(program, None, tmp_path, "net")
    got = run_backend("pnnx-python", {"pnnx.param": result.paths["pnnxparam"], "pnnx.bin": result.paths["pnnxbin"],
                                      "pnnx.py": result.paths["pnnxpy"]}, [x])
    assert torch.equal(torch.as_tensor(got[0]), call(x))


class _SliceAfterDynamicDims(nn.Module):
    def forward(self, x):
        return x[:, :, 2:] + 1


def test_full_slices_of_dynamic_dims_are_skipped_as_on_the_python_door():
    """torch.export writes the `:` of a dynamic dim as slice(0, INT64_MAX) where it skips a
    static one; the chained slice kept it (dims=(1,2)), so the re-export of a converted `.pt2`
    was no fixed point."""
    from param_lines import normalised_param

    x = torch.rand(1, 6, 10)
    dims = ({1: torch.export.Dim.AUTO, 2: torch.export.Dim.AUTO},)
    pt2 = api.capture(export_program(_SliceAfterDynamicDims().eval(), (x,), dims))
    python = api.capture(_SliceAfterDynamicDims().eval(), (x,), inputs2=(torch.rand(1, 8, 14),))
    assert normalised_param(pt2) == normalised_param(python)
    assert any(" dims=(2) " in line for line in normalised_param(pt2)), normalised_param(pt2)
