"""`<base>_ncnn.py`: runs the exported model with the ncnn Python package, like upstream's."""
from __future__ import annotations

from pathlib import Path

from ...ir import DTYPES

from .context import NO_BATCH


def _make_input(name: str, shape: list[int], dtype: str | None) -> str:
    dims = ", ".join(str(128 if d == -1 else d) for d in shape) or "()"
    if dtype == "bool":  # ncnn blobs carry a bool as a float 0/1
        size = f"({dims},)" if shape else "()"
        return f"    {name} = torch.randint(2, {size}, dtype=torch.float)"
    if dtype is not None and DTYPES[dtype].is_integer:
        # ncnn has no int64 blobs: upstream feeds integer inputs as torch.int
        return f"    {name} = torch.randint(10, ({dims},), dtype=torch.int)"
    return f"    {name} = torch.rand({dims}, dtype=torch.float)"


def render(param_path, bin_path, py_path, inputs: list[tuple[list[int], str | None]],
           input_axes: list[int | None], output_axes: list[int | None]) -> str:
    """`inputs`: torch shape and dtype per in<i>; `input_axes` / `output_axes`: the torch dim
    each in<i> / out<i> blob carries as the ncnn Mat batch (None: none, batch_index=233)."""
    here = Path(py_path).resolve().parent
    rel_param, rel_bin = _relative(param_path, here), _relative(bin_path, here)
    lines = ["import os", "", "import numpy as np", "import ncnn", "import torch", "",
             "_HERE = os.path.dirname(os.path.abspath(__file__))", "", "",
             "def test_inference():", "    torch.manual_seed(0)"]
    for i, (shape, dtype) in enumerate(inputs):
        lines.append(_make_input(f"in{i}", shape, dtype))
    lines += ["    out = []", "", "    with ncnn.Net() as net:",
              f"        net.load_param(os.path.join(_HERE, {str(rel_param)!r}))",
              f"        net.load_model(os.path.join(_HERE, {str(rel_bin)!r}))", "",
              "        with net.create_extractor() as ex:"]
    for i, ((shape, _), axis) in enumerate(zip(inputs, input_axes)):
        b = NO_BATCH if axis is None else axis
        data = f"in{i}.numpy()" if shape else f"in{i}.reshape(1).numpy()"  # 0-d: a 1-element blob
        lines.append(f'            ex.input("in{i}", ncnn.Mat({data}, batch_index={b}).clone())')
    lines.append("")
    for i, axis in enumerate(output_axes):
        b = NO_BATCH if axis is None else axis
        lines += [f'            _, out{i} = ex.extract("out{i}")',
                  f"            out.append(torch.from_numpy(np.array(out{i}.numpy(batch_index={b}))))"]
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
