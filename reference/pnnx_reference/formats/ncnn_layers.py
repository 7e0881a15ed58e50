"""The layer types the pinned ncnn (requirements/runtime.txt) can create, as its loader does:
`Net.load_param` refuses a type its registry lacks, or names but was built without (ArgMax,
SPP: "not exists or registered").

The installed `ncnn` binding answers when it can be imported (`ncnn.create_layer(type)`);
otherwise the committed table `ncnn_layers.tsv` (type, registry index) of the pinned version,
which `python -m pnnx_reference.formats.ncnn_layers --write` regenerates from the binding.
The binding cannot list its registry, so the candidates are the identifiers in its library
plus the table's own; the registry indices being 0..N-1 shows none was missed."""
from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

TABLE = Path(__file__).with_name("ncnn_layers.tsv")
_IDENTIFIER = re.compile(rb"[A-Z][A-Za-z0-9]{1,40}")


@functools.lru_cache(maxsize=1)
def table() -> dict[str, int]:
    """type -> registry index, from the committed table."""
    rows = [line.split("\t") for line in TABLE.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]
    return {name: int(index) for name, index in rows}


@functools.lru_cache(maxsize=None)
def exists(layer_type: str) -> bool:
    """Whether the pinned ncnn's loader can create a layer of `layer_type`."""
    binding = _binding()
    if binding is None:
        return layer_type in table()
    return binding.create_layer(layer_type) is not None


def _binding():
    try:
        import ncnn
    except ImportError:
        return None
    return ncnn if hasattr(ncnn, "create_layer") else None


def from_binding(ncnn) -> dict[str, int]:
    """type -> registry index of every layer the binding creates (raises if an index in
    0..max is unaccounted for: a registered type the candidates missed)."""
    candidates = set(table())
    for library in Path(ncnn.__file__).parent.rglob("*.so*"):
        candidates |= {m.decode() for m in _IDENTIFIER.findall(library.read_bytes())}
    registered = {name: ncnn.layer_to_index(name) for name in candidates}
    registered = {name: index for name, index in registered.items() if index >= 0}
    missing = set(range(max(registered.values()) + 1)) - set(registered.values())
    if missing:
        raise RuntimeError(f"registry indices {sorted(missing)} have no known type name; add them to {TABLE.name}")
    return {name: index for name, index in sorted(registered.items(), key=lambda item: item[1])
            if ncnn.create_layer(name) is not None}


def render(layers: dict[str, int], version: str) -> str:
    return (f"# layer types ncnn {version} creates (type, registry index); "
            "regenerate: python -m pnnx_reference.formats.ncnn_layers --write\n"
            + "".join(f"{name}\t{index}\n" for name, index in layers.items()))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    import ncnn

    text = render(from_binding(ncnn), ncnn.__version__)
    if argv == ["--write"]:
        TABLE.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
