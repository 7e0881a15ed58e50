"""The emitters' layout: one registry per rule table, capabilities declared as traits, the same
family file name for the same operator in ncnn and ONNX, no drawer modules, and no import
circle anywhere in pnnx_reference."""
import ast
from pathlib import Path

import pytest

from pnnx_reference.emit.ncnn import lower as _ncnn  # noqa: F401  (registers every ncnn lowering)
from pnnx_reference.emit.ncnn.registry import LOWERINGS as NCNN
from pnnx_reference.emit.onnx import lower as _onnx  # noqa: F401  (registers every ONNX lowering)
from pnnx_reference.emit.onnx.registry import COMPLEX_LOWERINGS as ONNX_COMPLEX
from pnnx_reference.emit.onnx.registry import LOWERINGS as ONNX
from pnnx_reference.emit.python.forward import RENDERERS
from pnnx_reference.registry import REGISTRIES

PACKAGE = Path(__file__).resolve().parents[2] / "reference" / "pnnx_reference"
FAMILIES = {"ncnn": PACKAGE / "emit" / "ncnn" / "families", "onnx": PACKAGE / "emit" / "onnx" / "families"}
DRAWER_WORDS = ("misc", "extra", "composite", "other", "util", "helper", "common", "general", "stuff")

# the ncnn lowerings that need an (N=1, C, ...) layout, i.e. every one NOT registered with
# batchless=True: the set lower.BATCHLESS_FAMILIES derived from file names before the traits
NEEDS_BATCH_AXIS = {
    "F.adaptive_avg_pool1d", "F.adaptive_avg_pool2d", "F.adaptive_avg_pool3d", "F.adaptive_max_pool1d",
    "F.adaptive_max_pool2d", "F.adaptive_max_pool3d", "F.avg_pool1d", "F.avg_pool2d", "F.avg_pool3d",
    "F.channel_shuffle", "F.conv1d", "F.conv2d", "F.conv3d", "F.conv_transpose1d", "F.conv_transpose2d",
    "F.conv_transpose3d", "F.grid_sample", "F.interpolate", "F.max_pool1d", "F.max_pool2d", "F.max_pool3d",
    "F.normalize", "F.pad", "F.pixel_shuffle", "F.pixel_unshuffle", "F.upsample", "F.upsample_bilinear",
    "F.upsample_nearest", "nn.AdaptiveAvgPool1d", "nn.AdaptiveAvgPool2d", "nn.AdaptiveAvgPool3d",
    "nn.AdaptiveMaxPool1d", "nn.AdaptiveMaxPool2d", "nn.AdaptiveMaxPool3d", "nn.AvgPool1d", "nn.AvgPool2d",
    "nn.AvgPool3d", "nn.ChannelShuffle", "nn.ConstantPad1d", "nn.ConstantPad2d", "nn.ConstantPad3d",
    "nn.Conv1d", "nn.Conv2d", "nn.Conv3d", "nn.ConvTranspose1d", "nn.ConvTranspose2d", "nn.ConvTranspose3d",
    "nn.MaxPool1d", "nn.MaxPool2d", "nn.MaxPool3d", "nn.MultiheadAttention", "nn.PixelShuffle",
    "nn.PixelUnshuffle", "nn.ReflectionPad1d", "nn.ReflectionPad2d", "nn.ReplicationPad1d",
    "nn.ReplicationPad2d", "nn.ReplicationPad3d", "nn.TransformerEncoderLayer", "nn.Upsample",
    "nn.UpsamplingBilinear2d", "nn.UpsamplingNearest2d", "nn.ZeroPad1d", "nn.ZeroPad2d", "nn.ZeroPad3d",
    "torch.channel_shuffle",
}
# the ncnn lowerings that read bool operands as float 0/1 blobs (bool_operands=True)
BOOL_OPERANDS = {
    *(f"{table}.{name}" for table in ("torch", "Tensor") for name in (
        "eq", "ne", "not_equal", "gt", "greater", "ge", "greater_equal", "lt", "less", "le", "less_equal",
        "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_not", "all", "any", "where")),
    "Tensor.masked_fill", "Tensor.masked_fill_", "Tensor.float", "Tensor.double", "Tensor.half",
    "Tensor.bool", "Tensor.long", "Tensor.int", "Tensor.to", "Tensor.type_as",
}


def _traited(registry, trait: str) -> set[str]:
    return {key for key in registry if registry.lookup(key).traits.get(trait)}


def test_batchless_lowerings_are_the_declared_ones():
    assert set(NCNN) - _traited(NCNN, "batchless") == NEEDS_BATCH_AXIS
    assert len(_traited(NCNN, "batchless")) == 391


def test_bool_operand_lowerings_are_the_declared_ones():
    assert _traited(NCNN, "bool_operands") == BOOL_OPERANDS


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
