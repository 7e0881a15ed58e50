"""Write a case out for reproduction by hand: a standalone `.py`, a traced `.pt`, and `.npy`
inputs and expected outputs.

Files for case `nn.Conv2d/k3` in OUT (named by `Case.safe_name`):
    nn.Conv2d__k3.py          the case source plus a `__main__` that rebuilds the inputs the
                              way the suite does, runs the model and compares with the .npy
    nn.Conv2d__k3.pt          TorchScript traced from it (absent for cases tagged no-trace)
    onnx.Conv__k3_p1.onnx     an ONNX-table case's graph (instead of the .pt)
    nn.Conv2d__k3.in0.npy     inputs, in forward-argument order
    nn.Conv2d__k3.out0.npy    torch eager outputs (the oracle)
"""
from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path

from .case import TAG_NO_TRACE, TAG_ONNX, Case
from .dtypes import torch_dtype


def input_expr(spec) -> str:
    """The exact expression `Case.make_inputs` evaluates for one input (bit-identical)."""
    shape = tuple(spec.shape)
    dt = torch_dtype(spec.dtype)
    if spec.dtype == "bool":
        return f"torch.randint(0, 2, {shape}).bool()"
    if dt.is_floating_point or dt.is_complex:
        expr = f"torch.rand({shape}, dtype=torch.float) * {spec.high - spec.low!r} + {spec.low!r}"
        return expr if spec.dtype == "f32" else f"({expr}).to({dt})"
    return f"torch.randint({int(spec.low)}, {int(spec.high)}, {shape}, dtype={dt})"


MAIN = '''

def make_inputs():
    torch.manual_seed(0)
    return [
{inputs}
    ]


def main():
    """Run the case as the conformance suite does; compare with the saved outputs if present."""
    import os
    import numpy as np

    torch.manual_seed({seed})     # the case's weight seed
    model = Model().eval()
    with torch.no_grad():
        out = model(*make_inputs())
    outs = out if isinstance(out, (tuple, list)) else (out,)
    stem = os.path.splitext(os.path.abspath(__file__))[0]
    for i, o in enumerate(outs):
        line = f"out{{i}} {{tuple(o.shape)}} {{o.dtype}}"
        if os.path.exists(f"{{stem}}.out{{i}}.npy"):
            same = np.array_equal(np.load(f"{{stem}}.out{{i}}.npy"), o.numpy(), equal_nan=True)
            line += " matches saved output" if same else " DIFFERS from saved output"
        print(line)


if __name__ == "__main__":
    main()
'''


def standalone_source(case: Case) -> str:
    inputs = "\n".join(f"        {input_expr(s)}," for s in case.inputs)
    header = f'"""pnnx op case {case.id} (table row {case.op})."""\n'
    return header + case.source + MAIN.format(inputs=inputs, seed=case.weight_seed)


def _npy_bytes(tensor) -> bytes:
    import numpy as np

    buf = io.BytesIO()
    np.save(buf, tensor.detach().cpu().numpy())
    return buf.getvalue()


def _traced_bytes(case: Case) -> bytes:
    import warnings

    import torch

    from pnnx_reference.errors import ConversionError

    model = case.make_model()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(model, tuple(case.make_inputs()), check_trace=False)
    except Exception as err:     # a case that should trace but does not: say which, briefly
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ConversionError(f"{case.id}: torch.jit.trace failed: {first}") from err
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.save(traced, buf)
    return buf.getvalue()


def case_files(case: Case) -> dict[str, bytes]:
    """Every file `write_case` writes, by name, built in memory first."""
    name = case.safe_name
    files = {f"{name}.py": standalone_source(case).encode()}
    if TAG_ONNX in case.tags:  # the graph itself instead of a trace
        files[f"{name}.onnx"] = case.make_model().onnx_model().SerializeToString()
    elif TAG_NO_TRACE not in case.tags:
        files[f"{name}.pt"] = _traced_bytes(case)
    for i, t in enumerate(case.make_inputs()):
        files[f"{name}.in{i}.npy"] = _npy_bytes(t)
    for i, t in enumerate(case.run_eager()):
        files[f"{name}.out{i}.npy"] = _npy_bytes(t)
    return files


def write_case(case: Case, out_dir: str | os.PathLike) -> list[Path]:
    """Write the case's files into out_dir (created); each lands via a temp name + rename, with
    the mode any new file of the user gets."""
    return write_files(case_files(case), out_dir)


def write_files(files: dict[str, bytes], out_dir: str | os.PathLike) -> list[Path]:
    """`case_files`' output written into out_dir as `write_case` writes it (for callers that
    write one case's files into several folders and build them once)."""
    from pnnx_reference.files import new_file_mode

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in files.items():
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=out)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, new_file_mode())  # mkstemp's 0600 -> what any new file of the user gets
            os.replace(tmp, out / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        written.append(out / name)
    return written
