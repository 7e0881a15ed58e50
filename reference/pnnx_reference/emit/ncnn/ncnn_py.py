"""`<base>_ncnn.py`: runs the exported model with the ncnn Python package, like upstream's."""
from __future__ import annotations

from pathlib import Path

from ...ir import DTYPES

NO_BATCH = 233


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
           output_ranks: list[int], batchless: bool = False) -> str:
    """`inputs`: torch shape and dtype per in<i>; `output_ranks`: torch rank per out<i>;
    batchless: the blobs carry every torch dim (no batch axis to add or drop)."""
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
    for i, (shape, _) in enumerate(inputs):
        b = 0 if len(shape) >= 2 and not batchless else NO_BATCH
        data = f"in{i}.numpy()" if shape else f"in{i}.reshape(1).numpy()"  # 0-d: a 1-element blob
        lines.append(f'            ex.input("in{i}", ncnn.Mat({data}, batch_index={b}).clone())')
    lines.append("")
    for i, rank in enumerate(output_ranks):
        b = 0 if rank >= 2 and not batchless else NO_BATCH
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
