"""Where each member of a generated module lives: a dotted operator name (`m.layers.0`, the
module path capture named it after) becomes that same path of containers, so the generated
model's module and parameter paths are the original's and converting it again names every
operator as before (a fixed point). `self.m.layers['0']`: the containers are nn.ModuleDict,
whose keys may be digits. A name that cannot be such a path stays one flat sanitised member
(`self.m_layers_0`)."""
from __future__ import annotations

import keyword

from pnnx_reference.emit.python.names import is_identifier
from pnnx_reference.ir import NULL_DTYPE, Graph

_CONTAINER_ATTRS: frozenset[str] | None = None


def _container_attrs() -> frozenset[str]:
    """Names an attribute of `Model` or of an nn.ModuleDict already has (`forward`, `keys`,
    `training`)."""
    global _CONTAINER_ATTRS
    if _CONTAINER_ATTRS is None:
        import torch.nn as nn

        instance = vars(nn.ModuleDict())  # `training`: set per instance, not in the class
        _CONTAINER_ATTRS = frozenset(dir(nn.ModuleDict)) | frozenset(instance) | {
            "load_pnnx_bin_as_parameter", "load_pnnx_bin_as_tensor"}
    return _CONTAINER_ATTRS


def _safe_attribute(part: str) -> bool:
    return is_identifier(part) and not part.startswith("_") and not keyword.iskeyword(part) \
        and part not in _container_attrs()


def _path_parts(name: str, tensor: bool) -> tuple[str, ...] | None:
    """The parts of a dotted name usable as a container path; None when it is not one. A
    tensor must be an attribute (an nn.ModuleDict key holds modules only)."""
    parts = tuple(name.split("."))
    if len(parts) < 2 or not _safe_attribute(parts[0]):
        return None
    for k, part in enumerate(parts[1:], 1):
        last = k == len(parts) - 1
        if not (_safe_attribute(part) or (part.isdigit() and part.isascii() and not (last and tensor))):
            return None
    return parts


def member_names(graph: Graph) -> list[tuple[str, bool]]:
    """(member name, is a tensor) for every member the generated module will have."""
    from pnnx_reference.emit.python.forward import is_module_type

    names = []
    for op in graph.ops:
        if op.subgraph is not None or is_module_type(op.type):
            names.append((op.name, False))
        elif op.type == "pnnx.Attribute":
            names += [(op.name if key == "data" else f"{op.name}_{key}", True)
                      for key, attr in op.attrs.items() if attr.dtype != NULL_DTYPE]
    return names


def plan_paths(graph: Graph) -> dict[str, tuple[str, ...]]:
    """name -> container path for each member that can keep its dotted name: used once, and
    no shorter prefix of it is itself a member (it would have to be both)."""
    names = member_names(graph)
    counts: dict[str, int] = {}
    for name, _ in names:
        counts[name] = counts.get(name, 0) + 1
    paths = {}
    for name, tensor in names:
        parts = _path_parts(name, tensor)
        if parts is None or counts[name] != 1:
            continue
        if any(".".join(parts[:k]) in counts for k in range(1, len(parts))):
            continue
        paths[name] = parts
    return paths


def render_path(parts: tuple[str, ...]) -> str:
    """`('m', 'layers', '0')` -> `m.layers['0']` (after `self.`)."""
    return parts[0] + "".join(f"[{p!r}]" if p.isdigit() else f".{p}" for p in parts[1:])


def container_lines(paths: dict[str, tuple[str, ...]]) -> list[str]:
    """`self.m = nn.ModuleDict()`, ... for every container of the planned paths, outer first."""
    seen: dict[tuple[str, ...], None] = {}
    for parts in paths.values():
        for k in range(1, len(parts)):
            seen.setdefault(parts[:k], None)
    return [f"self.{render_path(c)} = nn.ModuleDict()" for c in seen]
