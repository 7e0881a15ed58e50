"""The self-check after a conversion: the regenerated `_pnnx.py` runs on the example inputs
(and on the `inputshape2` ones) and must give the original model's outputs under the
tolerance table (`tolerances.self_check_tolerance`). The original's outputs, and the value of
every operand, were recorded while tracing (`Capture.values`), so the original does not run
again; the outputs are taken before the passes run (a pass that rewires an output is what is
being checked). On a mismatch the regenerated forward runs once more with its local variables
kept, and the first operator (in graph order) whose output differs from its traced value is
named.

Outputs that depend on a random operator in the traced graph (`torch.rand_like`,
`F.dropout(training=True)`, ...) are not compared, nor are operands downstream of one."""
from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .errors import ConversionError
from .files import no_bytecode
from .ir import Graph, Operand, Operator
from .random_ops import random_operands
from .tolerances import SELF_CHECK_ROUNDING_FACTOR, Tolerance, self_check_tolerance, within

@dataclass
class Run:
    """One set of example inputs: the graph input tensors, in order, the original model's
    outputs on them and the value every operand had then."""
    label: str
    inputs: list
    outputs: list
    values: dict[Operand, object]


def traced_outputs(graph: Graph, values: dict) -> list:
    """The traced value of each graph output, in order (call before the passes)."""
    return [values.get(o) for op in graph.outputs() for o in op.inputs]


def random_outputs(graph: Graph) -> set[int]:
    """The indices of the outputs that depend on a random operator (call before the passes:
    some remove random operators, e.g. dropout)."""
    random = random_operands(graph)
    return {i for i, o in enumerate(o for op in graph.outputs() for o in op.inputs) if o in random}


def load_model(py_path: Path, device: torch.device, graph: Graph | None = None):
    """Import a generated `_pnnx.py` under a private module name and build its Model().

    With `graph` (the graph the file was generated from), the model holds no second copy of
    the weights: each weight the file's own loader reads from pnnx.bin is compared bit for
    bit with the graph's, and the graph's tensor (the memory of the model being converted)
    is used instead (a large one is compared with pnnx.bin a chunk at a time, not read); the modules are built without initialising their weights (the memory
    they allocate is never touched, and freed when the loaded weight replaces it). A weight
    that differs is the one read from the file; a graph whose generated forward writes into
    tensors in place, or a model left holding a tensor that pnnx.bin did not give it, is
    built plainly."""
    name = f"pnnxref_selfcheck_{abs(hash(str(py_path)))}"
    spec = importlib.util.spec_from_file_location(name, py_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with no_bytecode():
            spec.loader.exec_module(module)
        if graph is None or writes_in_place(graph):
            return module.Model().to(device).eval()
        given: set[int] = set()
        _serve_weights(module, _weights_by_entry(graph), given)
        with _uninitialised():
            model = module.Model()
        if not _all_given(model, given):
            model = module.Model()
        return model.to(device).eval()
    finally:
        sys.modules.pop(name, None)


def writes_in_place(graph: Graph) -> bool:
    """Whether the generated forward writes into a tensor (`v[...] = x`, `x.copy_(y)`), which
    could be a weight: Tensor.slice_copy, or a type read from a file that ends with `_`."""
    for op in graph.ops:
        leaf = op.type.rsplit(".", 1)[-1]
        if op.type == "Tensor.slice_copy" or (leaf.endswith("_") and not leaf.startswith("_")):
            return True
        if op.subgraph is not None and writes_in_place(op.subgraph):
            return True
    return False


def _weights_by_entry(graph: Graph) -> dict[str, torch.Tensor]:
    """pnnx.bin entry name -> the graph's tensor, for the weights that view one."""
    return {f"{op.name}.{key}": attr.source for op in graph.ops for key, attr in op.attrs.items()
            if attr.source is not None}


def _serve_weights(module, weights: dict[str, torch.Tensor], given: set[int]) -> None:
    """Wrap `load_pnnx_bin_as_tensor` of every generated class: the file's tensor, replaced by
    the graph's when they are the same bits; `given` collects the storages handed out."""
    for cls in vars(module).values():
        if isinstance(cls, type) and "load_pnnx_bin_as_tensor" in vars(cls):
            cls.load_pnnx_bin_as_tensor = _serving(cls.load_pnnx_bin_as_tensor, weights, given)


def _serving(read, weights: dict[str, torch.Tensor], given: set[int]):
    def load(self, archive, key, shape, dtype):
        mine = weights.get(key)
        if mine is not None and mine.nbytes >= COMPARED_IN_PLACE and _file_holds(archive, key, mine, shape, dtype):
            tensor = mine  # a large weight is never read whole: pnnx.bin is compared with it
        else:
            loaded = read(self, archive, key, shape, dtype)
            tensor = mine if mine is not None and _same_bits(loaded, mine) else loaded
        given.add(tensor.untyped_storage().data_ptr())
        return tensor
    return load


COMPARED_IN_PLACE = 16 << 20  # bytes: a weight this large is checked against pnnx.bin a chunk at a time
_COMPARE_CHUNK = 4 << 20


def _file_holds(archive, key: str, tensor: torch.Tensor, shape, dtype: str) -> bool:
    """Whether pnnx.bin's entry `key` holds exactly `tensor`'s bytes, as the shape and dtype
    the generated file asks for; read a few MB at a time (the zip reader checks the CRC)."""
    if tuple(tensor.shape) != tuple(shape) or str(tensor.dtype) != f"torch.{dtype}" or tensor.device.type != "cpu":
        return False
    raw = tensor.contiguous().reshape(-1).view(torch.uint8).numpy()
    if archive.getinfo(key).file_size != raw.size:
        return False
    done = 0
    with archive.open(key) as f:
        while done < raw.size:
            chunk = f.read(min(_COMPARE_CHUNK, raw.size - done))
            if not chunk or not np.array_equal(raw[done:done + len(chunk)], np.frombuffer(chunk, np.uint8)):
                return False
            done += len(chunk)
    return True


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        return False
    return torch.equal(a.contiguous().reshape(-1).view(torch.uint8), b.contiguous().reshape(-1).view(torch.uint8))


@contextlib.contextmanager
def _uninitialised():
    """torch.nn.init's in-place initialisers do nothing (modules keep torch.empty memory)."""
    saved = {name: fn for name, fn in vars(torch.nn.init).items()
             if callable(fn) and name.endswith("_") and not name.startswith("_")}
    try:
        for name in saved:
            setattr(torch.nn.init, name, _keep)
        yield
    finally:
        for name, fn in saved.items():
            setattr(torch.nn.init, name, fn)


def _keep(tensor, *args, **kwargs):
    return tensor


def _all_given(model, given: set[int]) -> bool:
    """Every parameter and buffer came from pnnx.bin (BatchNorm's num_batches_tracked, never in
    pnnx.bin and unused in eval mode, is given its initial value)."""
    for name, buffer in list(model.named_buffers()):
        if name.rsplit(".", 1)[-1] == "num_batches_tracked" and buffer.untyped_storage().data_ptr() not in given:
            buffer.zero_()
            given.add(buffer.untyped_storage().data_ptr())
    return all(t.untyped_storage().data_ptr() in given for t in [*model.parameters(), *model.buffers()])


def _as_tensor(value) -> torch.Tensor | None:
    return value.detach() if isinstance(value, torch.Tensor) else None


def difference(actual, expected, tol: Tolerance) -> str:
    """'' when `actual` matches `expected` under `tol`; else a short description."""
    a, e = _as_tensor(actual), _as_tensor(expected)
    if a is None or e is None:
        return "" if a is e else f"got {type(actual).__name__}, expected {type(expected).__name__}"
    if a.shape != e.shape:
        return f"shape {list(a.shape)}, expected {list(e.shape)}"
    a, e = a.cpu().resolve_conj(), e.cpu().resolve_conj()
    if not (e.is_floating_point() or e.is_complex()):
        bad = int((a != e).sum())
        return f"{bad}/{e.numel()} elements differ" if bad else ""
    if e.is_complex():
        a, e = torch.view_as_real(a.to(e.dtype)), torch.view_as_real(e)
    a_np, e_np = a.float().numpy() if a.dtype == torch.bfloat16 else a.numpy(), \
        e.float().numpy() if e.dtype == torch.bfloat16 else e.numpy()
    bad, diff, _ = within(np.asarray(a_np), np.asarray(e_np), tol)
    if not bad.any():
        return ""
    return f"{int(bad.sum())}/{bad.size} elements out of tolerance (max abs difference {float(diff.max()):.3g})"


def _forward_locals(model, inputs: list) -> dict:
    """The local variables of the generated `Model.forward` when it returns."""
    target = type(model).forward.__code__
    seen: dict = {}

    def profile(frame, event, arg):
        if event == "return" and frame.f_code is target:
            seen.update(frame.f_locals)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        with torch.no_grad():
            model(*[t.clone() for t in inputs])
    finally:
        sys.setprofile(previous)
    return seen


def _variable_names(graph: Graph) -> dict[Operand, str]:
    """The `_pnnx.py` variable of each operand (`v_` + its sanitised name); an operand whose
    sanitised name collides with another's is left out rather than guessed."""
    from .emit.python.names import sanitize

    names: dict[str, list[Operand]] = {}
    for operand in graph.operands:
        names.setdefault("v_" + sanitize(operand.name), []).append(operand)
    return {ops[0]: name for name, ops in names.items() if len(ops) == 1}


def first_difference(graph: Graph, model, run: Run, tol: Tolerance, skip: set) -> tuple[Operator, str] | None:
    """The first operator whose output in the regenerated forward differs from its traced value."""
    local = _forward_locals(model, run.inputs)
    variables = _variable_names(graph)
    for op in graph.ops:
        if op.type in ("pnnx.Input", "pnnx.Output"):
            continue
        for operand in op.outputs:
            expected = run.values.get(operand)
            name = variables.get(operand)
            if operand in skip or not isinstance(expected, torch.Tensor) or name not in local:
                continue
            why = difference(local[name], expected, tol)
            if why:
                return op, f"output {operand.name}: {why}"
    return None


def lean_forward(model, py_path: Path):
    """`model`'s generated forward as a callable that frees each local variable after its last
    read, as a plain forward's temporaries are: the generated `Model.forward` (as upstream's)
    keeps every activation in a local until it returns. Read from `py_path`'s own text and
    compiled with nothing added but `del` statements; a forward that is not straight-line code
    of plain statements is called as it is (so is the forward the first-difference search
    runs, whose locals it reads)."""
    tree = ast.parse(py_path.read_text(encoding="utf-8"), str(py_path))
    found = [f for c in tree.body if isinstance(c, ast.ClassDef) and c.name == type(model).__name__
             for f in c.body if isinstance(f, ast.FunctionDef) and f.name == "forward"]
    if len(found) != 1 or not _straight_line(found[0]):
        return model
    function = found[0]
    function.body = _with_dels(function)
    function.decorator_list = []
    namespace: dict = {}
    exec(compile(ast.fix_missing_locations(ast.Module([function], [])), str(py_path), "exec"),
         type(model).forward.__globals__, namespace)
    return functools.partial(namespace["forward"], model)


_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)
_SCOPES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Global, ast.Nonlocal)
_INTROSPECTION = {"locals", "vars", "eval", "exec", "super", "globals"}


def _straight_line(function: ast.FunctionDef) -> bool:
    """Plain statements only: no branch, loop, nested scope or look at its own locals."""
    for statement in function.body:
        if not isinstance(statement, _STATEMENTS):
            return False
        for node in ast.walk(statement):
            if isinstance(node, _SCOPES) or (isinstance(node, ast.Name) and node.id in _INTROSPECTION):
                return False
    return not function.args.vararg and not function.args.kwarg


def _with_dels(function: ast.FunctionDef) -> list:
    """The body with `del name` after the last statement that reads each local (never after
    the return, and never a name the function does not assign or take)."""
    local = {a.arg for a in function.args.args} | {
        n.id for s in function.body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    local.discard("self")
    last: dict[str, int] = {}
    for i, statement in enumerate(function.body):
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and node.id in local:
                last[node.id] = i
    body = []
    for i, statement in enumerate(function.body):
        body.append(statement)
        dead = sorted(name for name, at in last.items() if at == i)
        if dead and not isinstance(statement, ast.Return):
            body.append(ast.copy_location(ast.Delete([ast.Name(n, ast.Del()) for n in dead]), statement))
    return body


def _outputs(result) -> list:
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (list, tuple)):
        return [t for item in result for t in _outputs(item)]
    if isinstance(result, dict):
        return [t for item in result.values() for t in _outputs(item)]
    return [result]


def check(graph: Graph, py_path: Path, runs: list[Run], device: torch.device, random: set[int]) -> str:
    """Run the regenerated model on every run's inputs; returns a one-line summary, raises
    ConversionError naming the first differing operator on a mismatch. `random`: the indices
    of the outputs not to compare (`random_outputs`)."""
    tol = self_check_tolerance()
    skip = random_operands(graph)
    outputs = [o for op in graph.outputs() for o in op.inputs]
    compared = [i for i, o in enumerate(outputs) if o not in skip and i not in random]
    if not compared:
        return "not run: every output depends on a random operator"
    try:
        model = load_model(py_path, device, graph)
    except Exception as err:  # the generated code does not even build: that is the finding
        raise ConversionError(f"self-check: the regenerated {py_path.name} cannot build its model: "
                              f"{type(err).__name__}: {_first_line(err)}") from err
    widened = False
    forward = lean_forward(model, py_path)
    for run in runs:
        try:
            with torch.no_grad():
                got = _outputs(forward(*[t.clone() for t in run.inputs]))
        except Exception as err:
            raise ConversionError(f"self-check on the {run.label} inputs: the regenerated model fails: "
                                  f"{type(err).__name__}: {_first_line(err)}") from err
        problems = [f"output {i}: {why}" for i in compared
                    if (why := _output_difference(got, i, run.outputs[i] if i < len(run.outputs) else None, tol))]
        if problems and not within_own_rounding(model, run.inputs, {i: run.outputs[i] for i in compared
                                                                     if i < len(run.outputs)},
                                                {i: got[i] for i in compared if i < len(got)}, tol):
            raise ConversionError(_mismatch(graph, model, run, tol, skip, problems[0]))
        widened = widened or bool(problems)
    return (f"passed: {len(compared)} output(s) on {len(runs)} input set(s) within "
            f"atol {tol.atol:g} rtol {tol.rtol:g}" + (f" (or {SELF_CHECK_ROUNDING_FACTOR:g}x the network's own fp32 "
                                                      f"rounding, measured in fp64)" if widened else "")
            + (f", {len(outputs) - len(compared)} random output(s) not compared" if len(compared) < len(outputs) else ""))


def all_nan_outputs(runs: list[Run]) -> list[str]:
    """A warning per output the original model computes as NaN in every element (a damaged
    weight, an input outside the model's domain): the self-check cannot tell anything there."""
    found = []
    for run in runs:
        for i, out in enumerate(run.outputs):
            if isinstance(out, torch.Tensor) and out.is_floating_point() and out.numel() and bool(out.isnan().all()):
                found.append(f"output {i} of the original model is NaN in every element on the {run.label} inputs: "
                             "the self-check compares nothing there (check the model's weights and inputs)")
    return found


def within_own_rounding(model, inputs: list, expected: dict[int, torch.Tensor], got: dict[int, torch.Tensor],
                        tol: Tolerance) -> bool:
    """Whether each original output `expected[i]` (fp32) is as close to the regenerated model's
    fp64 result as the regenerated fp32 result `got[i]` is, times SELF_CHECK_ROUNDING_FACTOR, on
    top of `tol` (tolerances.py): a deep network's fp32 rounding, not another computation. The
    model is widened in place for the fp64 run and narrowed back (its fp32 values are exact in
    fp64); a model holding other float precisions gets no second look."""
    if any(t.is_floating_point() and t.dtype != torch.float32 for t in (*model.parameters(), *model.buffers())):
        return False  # narrowing back would change them
    if any(not isinstance(e, torch.Tensor) or e.dtype != torch.float32 for e in expected.values()):
        return False
    try:
        with torch.no_grad():
            wide = _outputs(model.double()(*[t.double() if t.is_floating_point() else t.clone() for t in inputs]))
    except Exception:  # an operator without fp64 (or a dtype the code pins): no second look
        return False
    finally:
        model.float()
    for i, e in expected.items():
        if i >= len(wide) or i not in got or not isinstance(wide[i], torch.Tensor) or wide[i].shape != e.shape:
            return False
        truth = wide[i].detach().cpu()
        rounding = float((got[i].detach().cpu().double() - truth).abs().max())
        widened = Tolerance(tol.atol + SELF_CHECK_ROUNDING_FACTOR * rounding, tol.rtol, tol.reason)
        if difference(e.detach().cpu().double(), truth, widened):
            return False
    return True


def _output_difference(got: list, i: int, expected, tol: Tolerance) -> str:
    if i >= len(got):
        return f"the regenerated model returned {len(got)} output(s)"
    return difference(got[i], expected, tol)


def _mismatch(graph, model, run, tol, skip, output_problem: str) -> str:
    found = first_difference(graph, model, run, tol, skip)
    where = f"first differing operator {found[0].type} {found[0].name} ({found[1]})" if found else output_problem
    return (f"self-check failed on the {run.label} inputs: the regenerated model differs from the original: "
            f"{where}; nothing was written (selfcheck=0, in the API self_check=False, skips the check)")


def _first_line(err: Exception) -> str:
    return (str(err).strip().splitlines() or [""])[0][:200]
