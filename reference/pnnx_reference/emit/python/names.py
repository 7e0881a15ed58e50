"""Turning names read from a param file into safe Python identifiers, and checking operator
types against the PyTorch API, so nothing read from a file can become executable code."""
from __future__ import annotations

import keyword
import re

from pnnx_reference.errors import InvalidGraph


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NOT_IDENT_CHAR = re.compile(r"[^A-Za-z0-9_]")

# attribute names a generated `Model` already has (nn.Module API, our helpers)
_RESERVED: frozenset[str] | None = None


def _reserved() -> frozenset[str]:
    global _RESERVED
    if _RESERVED is None:
        import torch.nn as nn

        _RESERVED = frozenset(dir(nn.Module)) | {"load_pnnx_bin_as_parameter", "load_pnnx_bin_as_tensor"}
    return _RESERVED


def sanitize(name: str) -> str:
    """`layer1.0.conv` -> `layer1_0_conv`; anything but [A-Za-z0-9_] becomes `_`."""
    return _NOT_IDENT_CHAR.sub("_", str(name)) or "_"


def is_identifier(name: str) -> bool:
    return bool(_IDENT.match(name)) and not keyword.iskeyword(name)


def check_keyword_name(name: str, what: str, op_name: str) -> str:
    """A name used verbatim as a Python keyword argument or attribute; refuse anything else."""
    if not isinstance(name, str) or not is_identifier(name) or name.startswith("__"):
        raise InvalidGraph(f"{op_name!r}: {what} {name!r} is not a valid Python name")
    return name


class Namer:
    """Maps file names to unique identifiers: `prefix + sanitize(name)`, de-duplicated,
    never a keyword and never shadowing an nn.Module attribute."""

    def __init__(self, prefix: str = "", avoid_module_attrs: bool = False) -> None:
        self.prefix = prefix
        self.avoid = avoid_module_attrs
        self.taken: set[str] = set()
        self.by_key: dict[object, str] = {}

    def __call__(self, key, name: str | None = None) -> str:
        if key in self.by_key:
            return self.by_key[key]
        base = self.prefix + sanitize(key if name is None else name)
        if base[0].isdigit() or keyword.iskeyword(base) or (self.avoid and base in _reserved()):
            base = "m_" + base
        ident, n = base, 1
        while ident in self.taken:
            ident, n = f"{base}_{n}", n + 1
        self.taken.add(ident)
        self.by_key[key] = ident
        return ident
