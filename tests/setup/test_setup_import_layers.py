"""The import structure is one-way (issue 30 item 2): no module of the converter or the harness
imports, directly or through others, a module that imports it back, and none imports a layer
above its own. The layers, bottom first, are the ones docs/ARCHITECTURE.md ("Layers") writes
down. Every `import` counts, at module level or inside a function; the imports inside a
function that may go up are listed in ALLOWED with the reason.

    python -m pytest tests/setup/test_setup_import_layers.py   # prints every offending import
"""
from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the distributions' import packages, bottom first: a package imports only those before it
PACKAGES = {"pnnx_reference": ROOT / "reference", "pnnx_op_cases": ROOT / "op_cases",
            "pnnx_conformance": ROOT / "conformance", "pnnx_model_zoo": ROOT / "model_zoo"}
CHECKED = ("pnnx_reference", "pnnx_conformance")  # layer by layer, and for circles; the others by package
# each checked package's layers, bottom first: a layer is a list of modules or subpackages
# (relative to the package; "" is the package's own __init__); a module is in the layer of
# its longest listed prefix
LAYERS = {
    "pnnx_reference": [
        ("foundation", ["", "errors", "registry", "tolerances", "optional", "version_action", "input_sizes",
                        "files", "fast_exit"]),
        ("ir", ["ir", "random_ops"]),
        ("formats", ["formats"]),
        ("expression", ["expression"]),
        ("passes", ["passes", "stat"]),
        ("emitters", ["emit"]),
        ("self-check", ["selfcheck"]),
        ("frontends", ["frontends"]),
        ("api", ["api", "example_inputs"]),
        ("commands", ["cli", "validate", "__main__"]),
    ],
    "pnnx_conformance": [
        ("foundation", ["", "errors", "tolerances", "results", "units", "stages", "environment", "tiers",
                        "artefacts", "compare", "cases", "oracle", "waivers", "runinfo", "junit", "progress"]),
        ("plug-ins", ["converters", "backends", "onnx_backend"]),
        ("checks", ["checks", "worker", "freeze", "shards", "merge", "pool"]),
        ("reports", ["report"]),
        ("runs", ["runner", "runtimes"]),
        ("commands", ["certify", "cli", "pytest_plugin", "suite", "onnx_backend.__main__"]),
    ],
}
# (importer, imported) -> why an import inside a function may go against the order
ALLOWED: dict[tuple[str, str], str] = {}


def _modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in sorted((folder / package).rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _known(name: str) -> str | None:
    """The module of ours `name` is, or lies in (`a.b.func` -> `a.b`)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _base(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
    package = package[:len(package) - node.level + 1]
    return ".".join(package + ([node.module] if node.module else []))


def _imports(module: str) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) for every import of ours in `module`."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            names = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = _base(module, child)
                names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                         for alias in child.names]
            for name in dict.fromkeys(names):
                target = _known(name)
                if target and target != module:
                    found.append((target, child.lineno, in_function))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return found


@cache
def _edges(packages: tuple[str, ...] = CHECKED) -> list[tuple[str, str, int, bool]]:
    return [(m, t, line, lazy) for m in MODULES if m.split(".")[0] in packages for t, line, lazy in _imports(m)]


def _layer(module: str) -> tuple[int, int, str]:
    """(package rank, layer rank, layer name)."""
    package, _, rest = module.partition(".")
    rank = list(PACKAGES).index(package)
    if package not in LAYERS:
        return rank, 0, package
    best = max(((len(p), i, name) for i, (name, prefixes) in enumerate(LAYERS[package]) for p in prefixes
                if rest == p or (p and rest.startswith(p + "."))), default=None)
    assert best is not None, f"{module} is in no layer of {package}: add it to LAYERS and docs/ARCHITECTURE.md"
    return rank, best[1], f"{package} {best[2]}"


def _where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(ROOT)}:{line}"


def test_every_module_is_in_a_layer():
    for module in MODULES:
        if module.split(".")[0] in CHECKED:
            _layer(module)
    missing = [f"{package}.{p}" for package in CHECKED for _, prefixes in LAYERS[package] for p in prefixes
               if p and f"{package}.{p}" not in MODULES]
    assert missing == [], f"LAYERS names modules that do not exist: {missing}"


def test_no_import_goes_up_a_layer():
    wrong = []
    for module, target, line, lazy in _edges(tuple(PACKAGES)):
        if _layer(target)[:2] > _layer(module)[:2] and (module, target) not in ALLOWED:
            wrong.append(f"{_where(module, line)}: {module} ({_layer(module)[2]}) imports {target} "
                         f"({_layer(target)[2]}){' inside a function' if lazy else ''}")
    assert wrong == [], "imports against the layer order:\n" + "\n".join(wrong)


def test_every_allowed_import_is_one_inside_a_function_that_is_still_there():
    lazy = {(m, t) for m, t, _, in_function in _edges(tuple(PACKAGES)) if in_function}
    at_top = {(m, t) for m, t, _, in_function in _edges(tuple(PACKAGES)) if not in_function}
    assert [pair for pair in ALLOWED if pair not in lazy or pair in at_top] == []


def _circles(edges) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    graph = defaultdict(set)
    for module, target, *_ in edges:
        graph[module].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while not part or part[-1] != v:
                part.append(stack.pop())
            if len(part) > 1:
                circles.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return circles


def test_no_import_circle():
    edges = [e for e in _edges() if (e[0], e[1]) not in ALLOWED]
    circles = _circles(edges)
    described = [" <-> ".join(c) + "\n" + "\n".join(f"    {_where(m, line)}: {m} imports {t}"
                                                   for m, t, line, _ in edges if m in c and t in c)
                 for c in circles]
    assert circles == [], "import circles:\n" + "\n".join(described)


def test_no_package_imports_one_it_does_not_contain_back():
    """Within a layer order the subpackages are free, but two subpackages (or a subpackage and
    a module beside it) do not import each other: the structure drawn folder by folder has no
    arrow running both ways."""
    def unit(module: str) -> str:
        parts = module.split(".")
        return ".".join(parts[:2])

    pairs: dict[tuple[str, str], list[str]] = defaultdict(list)
    for module, target, line, _ in _edges():
        if unit(module) != unit(target) and (module, target) not in ALLOWED:
            pairs[unit(module), unit(target)].append(f"{_where(module, line)}: {module} imports {target}")
    both = [f"{a} <-> {b}:\n    " + "\n    ".join(pairs[a, b] + pairs[b, a])
            for a, b in sorted(pairs) if a < b and (b, a) in pairs]
    assert both == [], "packages importing each other:\n" + "\n".join(both)


@pytest.mark.parametrize("package", CHECKED)
def test_the_layers_are_written_down_in_the_architecture(package):
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.partition("## Layers")[2].partition("\n## ")[0]
    assert section, "docs/ARCHITECTURE.md has no '## Layers' section"
    for name, prefixes in LAYERS[package]:
        for prefix in prefixes:
            if prefix and prefix != "__main__":
                assert f"`{prefix.replace('.', '/')}" in section, f"{package} layer {name}: `{prefix}` not in Layers"


def test_the_checks_find_what_they_look_for():
    """The parser and the circle finder on made-up input, so a green run is not an empty one."""
    assert _circles([("a", "b", 1, False), ("b", "c", 1, True), ("c", "a", 1, False), ("c", "d", 1, False)]) \
        == [["a", "b", "c"]]
    lazy = [(t, lazy) for t, _, lazy in _imports("pnnx_conformance.cases")]
    assert lazy and all(t.startswith("pnnx_conformance") for t, _ in lazy)
    assert _layer("pnnx_reference.emit.ncnn.lower")[2] == "pnnx_reference emitters"
    assert _layer("pnnx_reference.ir") < _layer("pnnx_reference.formats.pnnx_param") < _layer("pnnx_conformance")
