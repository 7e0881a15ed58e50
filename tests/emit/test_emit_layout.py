"""The emitters' layout: one registry per rule table, capabilities declared as traits, the same
family file name for the same operator in ncnn and ONNX, no drawer modules, and no import
circle anywhere in pnnx_reference."""
import ast
from pathlib import Path

import pytest

from pnnx_reference.emit.ncnn import lower as _ncnn  # noqa: F401  (registers every ncnn lowering)
from pnnx_reference.emit.ncnn.registry import ANY, FIRST, LEADING, PERMUTE, RESHAPE, SEQUENCE
from pnnx_reference.emit.ncnn.registry import LOWERINGS as NCNN
from pnnx_reference.emit.onnx import lower as _onnx  # noqa: F401  (registers every ONNX lowering)
from pnnx_reference.emit.onnx.registry import COMPLEX_LOWERINGS as ONNX_COMPLEX
from pnnx_reference.emit.onnx.registry import LOWERINGS as ONNX
from pnnx_reference.emit.python.forward import RENDERERS
from pnnx_reference.registry import REGISTRIES

POLICIES = {FIRST, LEADING, ANY, RESHAPE, PERMUTE, SEQUENCE}
PACKAGE = Path(__file__).resolve().parents[2] / "reference" / "pnnx_reference"
FAMILIES = {"ncnn": PACKAGE / "emit" / "ncnn" / "families", "onnx": PACKAGE / "emit" / "onnx" / "families"}
DRAWER_WORDS = ("misc", "extra", "composite", "other", "util", "helper", "common", "general", "stuff")

# the ncnn lowerings of (N, C, ...) operators (trait batch=FIRST): dim 0 of their input is the
# ncnn Mat batch whenever the input has one (upstream's operators "with batch index 0")
BATCH_FIRST = {
    *(f"{t}.{n}" for t in ("F",) for n in (
        "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
        "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "channel_shuffle",
        "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "grid_sample",
        "interpolate", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
        "normalize", "pad", "pixel_shuffle", "pixel_unshuffle", "prelu", "upsample", "upsample_bilinear",
        "upsample_nearest", "fold", "unfold", "affine_grid", "scaled_dot_product_attention")),
    "ncnn.RotaryEmbed",  # the ncnn emitter's own fused rotary embedding (emit/ncnn/fuse_rotary.py)
    *(f"nn.{n}" for n in (
        "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
        "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "ChannelShuffle", "ConstantPad1d",
        "ConstantPad2d", "ConstantPad3d", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
        "ConvTranspose3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "PReLU",
        "PixelShuffle", "PixelUnshuffle", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
        "ReplicationPad2d", "ReplicationPad3d", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d",
        "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "Fold", "Unfold")),
    "torch.channel_shuffle",
    "torchvision.ops.deform_conv2d", "torchvision.ops.DeformConv2d",
}
# FIRST lowerings whose input always has a batch axis (no unbatched_rank)
ALWAYS_BATCHED = {"F.interpolate", "F.upsample", "F.upsample_bilinear", "F.upsample_nearest", "nn.Upsample",
                  "nn.UpsamplingBilinear2d", "nn.UpsamplingNearest2d", "F.grid_sample", "F.channel_shuffle",
                  "nn.ChannelShuffle", "torch.channel_shuffle", "F.affine_grid",
                  "torchvision.ops.deform_conv2d", "torchvision.ops.DeformConv2d"}  # torchvision takes (N, C, H, W) only
# recurrent and attention layers (batch=SEQUENCE): the batch is dim 0 or 1 by batch_first
SEQUENCE_LAYERS = {"nn.RNN", "nn.LSTM", "nn.GRU", "nn.MultiheadAttention", "nn.TransformerEncoderLayer",
                   "nn.TransformerDecoderLayer", "nn.TransformerEncoder", "nn.TransformerDecoder", "nn.Transformer"}
# the ncnn lowerings that read bool operands as float 0/1 blobs (bool_operands=True)
BOOL_LOGIC = {
    *(f"{table}.{name}" for table in ("torch", "Tensor") for name in (
        "eq", "ne", "not_equal", "gt", "greater", "ge", "greater_equal", "lt", "less", "le", "less_equal",
        "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_not", "all", "any", "where")),
    "Tensor.masked_fill", "Tensor.masked_fill_", "Tensor.float", "Tensor.double", "Tensor.half",
    "Tensor.bool", "Tensor.long", "Tensor.int", "Tensor.to", "Tensor.type_as",
}
# bool attention masks (True: masked; SDPA's True: attended) read as 0/1 blobs
BOOL_MASKS = {"nn.MultiheadAttention", "nn.TransformerEncoderLayer", "nn.TransformerDecoderLayer", "nn.Transformer",
              "F.scaled_dot_product_attention"}
# lowerings that only move, select or clamp values (exact on bools and integers alike)
MOVES_VALUES = {
    "torch.reshape", "Tensor.reshape", "Tensor.view", "Tensor.view_as", "Tensor.reshape_as", "torch.flatten",
    "Tensor.flatten", "nn.Flatten", "nn.Unflatten", "torch.unflatten", "Tensor.unflatten", "torch.squeeze",
    "Tensor.squeeze", "torch.unsqueeze", "Tensor.unsqueeze", "torch.ravel",
    *(f"{table}.{name}" for table in ("torch", "Tensor") for name in (
        "permute", "transpose", "swapaxes", "t", "movedim", "moveaxis", "tile", "flip", "roll", "diag", "tril",
        "triu", "clone", "detach", "positive", "relu", "clamp", "clip")),
    "Tensor.expand", "Tensor.expand_as", "Tensor.repeat", "torch.cat", "torch.concat", "torch.concatenate",
    "torch.stack", "torch.meshgrid", "Tensor.fill", "Tensor.fill_", "Tensor.copy", "Tensor.contiguous", "nn.Identity",
    "torch.zeros_like", "torch.ones_like", "torch.full_like",  # a fill of x's shape: Clip(x, v, v) on integers
    "nn.ReLU",
    "F.relu", "F.relu_",
    *(f"{kind}{suffix}" for kind in ("nn.Dropout", "F.dropout") for suffix in ("", "1d", "2d", "3d")),
    "nn.AlphaDropout", "nn.FeatureAlphaDropout", "F.alpha_dropout", "F.feature_alpha_dropout",
    # slicing: Slice, Crop (strided through a reshape), CopyTo
    *(f"{table}.{name}" for table in ("torch", "Tensor") for name in (
        "chunk", "split", "tensor_split", "unbind", "select", "narrow")),
    "Tensor.slice", "torch.slice_copy", "Tensor.slice_copy", "torch.slice_scatter",
}
# arithmetic exact on 0/1 and on integer values below 2^24 (expressions check each function;
# torch.arange over a length that follows the input is a run-time ramp, emit/ncnn/ramps.py)
EXACT_ARITHMETIC = {"pnnx.Expression", "torch.cumsum", "Tensor.cumsum", "torch.amax", "torch.amin", "torch.arange",
                    *(f"{table}.{name}" for table in ("torch", "Tensor") for name in ("sum", "prod", "max", "min"))}
BOOL_OPERANDS = BOOL_LOGIC | BOOL_MASKS | MOVES_VALUES | EXACT_ARITHMETIC
# the ncnn lowerings that compute on integers carried as float values (int_operands=True)
# gather looks a constant line up by the value of its computed index (BERT's token types)
INT_OPERANDS = (BOOL_OPERANDS - BOOL_MASKS) | {f"{t}.{n}" for t in ("torch", "Tensor")
                                               for n in ("argmax", "argmin", "gather")}


def _traited(registry, trait: str) -> set[str]:
    return {key for key in registry if registry.lookup(key).traits.get(trait)}


def _policy(key: str) -> str:
    return NCNN.lookup(key).traits.get("batch")


def test_every_ncnn_lowering_declares_its_batch_policy():
    assert {key for key in NCNN if _policy(key) not in POLICIES} == set()


def test_batch_first_lowerings_are_the_declared_ones():
    assert {key for key in NCNN if _policy(key) == FIRST} == BATCH_FIRST
    no_rank = {key for key in BATCH_FIRST if NCNN.lookup(key).traits.get("unbatched_rank") is None}
    assert no_rank == ALWAYS_BATCHED


def test_sequence_lowerings_say_where_their_batch_is():
    declared = {key for key in NCNN if _policy(key) == SEQUENCE}
    assert declared <= SEQUENCE_LAYERS and {"nn.LSTM", "nn.GRU", "nn.RNN", "nn.MultiheadAttention"} <= declared
    assert all(callable(NCNN.lookup(key).traits.get("sequence_axes")) for key in declared)


def test_bool_operand_lowerings_are_the_declared_ones():
    assert _traited(NCNN, "bool_operands") == BOOL_OPERANDS


def test_integer_operand_lowerings_are_the_declared_ones():
    assert _traited(NCNN, "int_operands") == INT_OPERANDS


def test_every_emitter_table_is_a_registry_of_the_kit():
    for registry in (NCNN, ONNX, ONNX_COMPLEX, RENDERERS):
        assert REGISTRIES[registry.name] is registry


def _family(rule) -> Path:
    return Path(rule.fn.__code__.co_filename)


@pytest.mark.parametrize("emitter, registries", [("ncnn", (NCNN,)), ("onnx", (ONNX, ONNX_COMPLEX))])
def test_every_lowering_lives_in_a_family_module(emitter, registries):
    """A rule's `where` leads to its family, not to a helper that built it."""
    outside = sorted(f"{rule.key}: {rule.where}" for registry in registries for rule in registry.rules()
                     if _family(rule).parent != FAMILIES[emitter])
    assert not outside


def test_an_operator_lowers_in_families_of_the_same_name():
    def onnx_rule(key):
        return ONNX.lookup(key) or ONNX_COMPLEX.lookup(key)

    shared = [key for key in NCNN if key in ONNX or key in ONNX_COMPLEX]
    assert len(shared) > 300
    apart = sorted(f"{key}: ncnn {NCNN.lookup(key).where}, onnx {onnx_rule(key).where}" for key in shared
                   if _family(NCNN.lookup(key)).name != _family(onnx_rule(key)).name)
    assert not apart


@pytest.mark.parametrize("emitter", sorted(FAMILIES))
def test_no_family_is_a_drawer(emitter):
    names = [p.stem for p in FAMILIES[emitter].glob("*.py") if p.stem != "__init__"]
    assert names
    assert not [n for n in names if any(word in n for word in DRAWER_WORDS)]


# --- the import graph -----------------------------------------------------------------------
def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules `name` imports: every import statement, at module level or inside a
    function (a lazy import that breaks a cycle is still a cycle). `from P import x` counts as
    an import of P.x when x is a submodule, else of P."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.add(target if target in modules else base)
    return found & set(modules)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def test_the_package_import_graph_has_no_cycle():
    modules = _modules()
    assert "pnnx_reference.emit.ncnn.families.conv" in modules
    graph = {name: _imports(name, path, modules) - {name} for name, path in modules.items()}
    assert _cycle(graph) is None


@pytest.mark.parametrize("emitter", sorted(FAMILIES))
def test_no_family_imports_another(emitter):
    """What several families share lives in a helper module beside families/."""
    modules = _modules()
    package = f"pnnx_reference.emit.{emitter}.families"
    families = {name for name in modules if name.startswith(package + ".")}
    assert families
    assert not {name: _imports(name, modules[name], modules) & families for name in families
                if _imports(name, modules[name], modules) & families}


def test_the_cycle_check_counts_lazy_imports(tmp_path):
    lazy = tmp_path / "m.py"
    lazy.write_text("def f():\n    from .formats import pnnx_param\n")
    assert _imports("pnnx_reference.m", lazy, _modules()) == {"pnnx_reference.formats.pnnx_param"}
    assert _cycle({"a": {"b"}, "b": set()}) is None
    assert _cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
