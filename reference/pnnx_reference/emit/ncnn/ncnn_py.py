"""`<base>_ncnn.py`: runs the exported model with the ncnn Python package, like upstream's.

ncnn blobs hold floats: a bool or integer input is made in its torch dtype and fed as its
float values (`in0_values = in0.float()...`, the form the conformance harness reads as "fed
as values"; named, since ncnn.Mat only points at the array until clone() copies it), except
the integer inputs Embed reads, fed as int32 bits as upstream feeds every integer input; a
bool or integer output is read back as its float values and returned in torch's dtype."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from ...ir import DTYPES

from .context import NO_BATCH


class Feed(NamedTuple):
    """One graph input: torch shape, dtype, and whether it is fed as int32 bits (Embed's indices)."""
    shape: list[int]
    dtype: str | None
    bits: bool = False


def _integer(dtype: str | None) -> bool:
    return dtype is not None and DTYPES[dtype].is_integer


def _make_input(name: str, feed: Feed) -> str:
    dims = ", ".join(str(128 if d == -1 else d) for d in feed.shape)
    size = f"({dims},)" if feed.shape else "()"
    if feed.dtype == "bool":
        return f"    {name} = torch.randint(2, {size}).bool()"
    if feed.bits:  # ncnn's Embed reads int32 indices: upstream feeds integer inputs as torch.int
        return f"    {name} = torch.randint(10, {size}, dtype=torch.int)"
    if _integer(feed.dtype):
        return f"    {name} = torch.randint(10, {size}, dtype={DTYPES[feed.dtype].torch})"
    return f"    {name} = torch.rand({dims or '()'}, dtype=torch.float)"


def _feed_lines(name: str, feed: Feed, batch_index: int) -> list[str]:
    data = f"{name}.numpy()" if feed.shape else f"{name}.reshape(1).numpy()"  # 0-d: a 1-element blob
    lines = []
    if _integer(feed.dtype) and not feed.bits:
        lines.append(f"            {name}_values = {data.replace(name, f'{name}.float()', 1)}")
        data = f"{name}_values"
    return lines + [f'            ex.input("{name}", ncnn.Mat({data}, batch_index={batch_index}).clone())']


def _read_back(dtype: str | None) -> str:
    """The conversion of a float blob read back to the output's torch dtype (exact: the blob
    holds that dtype's values)."""
    if dtype == "bool":
        return ".bool()"
    if _integer(dtype):
        return f".to({DTYPES[dtype].torch})"
    return ""


def render(param_path, bin_path, py_path, inputs: list[Feed], input_axes: list[int | None],
           output_axes: list[int | None], output_dtypes: list[str | None] | None = None) -> str:
    """`inputs`: one Feed per in<i>; `input_axes` / `output_axes`: the torch dim each in<i> /
    out<i> blob carries as the ncnn Mat batch (None: none, batch_index=233); `output_dtypes`:
    the torch dtype of each out<i> (None: float)."""
    here = Path(py_path).resolve().parent
    rel_param, rel_bin = _relative(param_path, here), _relative(bin_path, here)
    output_dtypes = output_dtypes or [None] * len(output_axes)
    lines = ["import os", "", "import numpy as np", "import ncnn", "import torch", "",
             "_HERE = os.path.dirname(os.path.abspath(__file__))", "", "",
             "def test_inference():", "    torch.manual_seed(0)"]
    for i, feed in enumerate(inputs):
        lines.append(_make_input(f"in{i}", Feed(*feed)))
    lines += ["    out = []", "", "    with ncnn.Net() as net:",
              f"        net.load_param(os.path.join(_HERE, {str(rel_param)!r}))",
              f"        net.load_model(os.path.join(_HERE, {str(rel_bin)!r}))", "",
              "        with net.create_extractor() as ex:"]
    for i, (feed, axis) in enumerate(zip(inputs, input_axes)):
        lines += _feed_lines(f"in{i}", Feed(*feed), NO_BATCH if axis is None else axis)
    lines.append("")
    for i, (axis, dtype) in enumerate(zip(output_axes, output_dtypes)):
        b = NO_BATCH if axis is None else axis
        lines += [f'            _, out{i} = ex.extract("out{i}")',
                  f"            out.append(torch.from_numpy(np.array(out{i}.numpy(batch_index={b})))"
                  f"{_read_back(dtype)})"]
    lines += ["", "    if len(out) == 1:", "        return out[0]", "    return tuple(out)", "", "",
              'if __name__ == "__main__":', "    print(test_inference())", ""]
    return "\n".join(lines)


def _relative(path, folder: Path) -> Path:
    """`path` relative to the generated file's folder (absolute when it lies elsewhere)."""
    full = Path(path).resolve()
    try:
        return full.relative_to(folder)
    except ValueError:
        return full
