"""Hypothesis strategies and comparison helpers for pnnx graphs (shared by format tests)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from pnnx_reference.ir import DTYPES, Attribute, Graph

_LETTERS = "abcxyzABZ_"
_RESERVED = {"None", "True", "False", "inf", "nan"}


def _word(rest: str, max_size: int):
    return st.builds(lambda a, b: a + b, st.sampled_from(_LETTERS),
                     st.text(alphabet=_LETTERS + rest, max_size=max_size)).filter(lambda s: s not in _RESERVED)


_PREFIX = st.sampled_from(["", "x.", "layer1.0.", "F.relu_", "pnnx_", "a_b"])
_KEY = _word("019", 5)
_STRING = _word("019.:@+*/=-", 8)
_LIST_STRING = _word("019.:", 6)
_INT = st.integers(-(2**31), 2**31 - 1)
_FLOAT = st.floats(width=32, allow_nan=False, allow_infinity=False)
_COMPLEX = st.builds(complex, st.integers(-64, 64).map(lambda i: i / 4), st.integers(-64, 64).map(lambda i: i / 4))

PARAM_VALUES = st.one_of(
    st.none(), st.booleans(), _INT, _FLOAT, _STRING, _COMPLEX,
    st.lists(_INT, max_size=4), st.lists(_FLOAT, min_size=1, max_size=4),
    st.lists(_LIST_STRING, min_size=1, max_size=4), st.lists(_COMPLEX, min_size=1, max_size=3),
)
_DIM = st.one_of(st.integers(0, 4096), st.just(-1))
_DTYPE = st.sampled_from(sorted(DTYPES))
_OP_TYPES = st.sampled_from(["nn.Conv2d", "F.relu", "torch.cat", "Tensor.view", "pnnx.Expression",
                             "pnnx.Attribute", "aten::add", "custom.op"])


_SHAPE = st.one_of(st.none(), st.lists(_DIM, min_size=1, max_size=4))
_PICK = st.integers(0, 2**16)
_SMALL = st.integers(0, 3)
_PARAMS = st.dictionaries(_KEY, PARAM_VALUES, max_size=4)
_ATTR_KEYS = st.lists(_KEY, max_size=2, unique=True)
_ATTR_SHAPE = st.lists(st.integers(0, 5), max_size=3)
_INPUTNAME = st.one_of(_KEY, st.just(""))
_BYTE_SEED = st.integers(0, 255)


@st.composite
def graphs(draw, with_data: bool = False) -> Graph:
    """Random well-formed graphs. Strategies are module constants: building them per
    draw costs hypothesis more than the test itself."""
    graph = Graph()
    op_prefix, operand_prefix = draw(_PREFIX), draw(_PREFIX)
    names = (f"{op_prefix}{i}" for i in range(100))
    operand_names = (f"{operand_prefix}{i}" for i in range(100))

    def new_operand():
        shape = draw(_SHAPE)
        dtype = draw(_DTYPE) if shape is not None else None
        return graph.new_operand(next(operand_names), shape, dtype)

    for _ in range(1 + draw(_SMALL) % 2):
        graph.connect(graph.new_operator("pnnx.Input", next(names)), outputs=[new_operand()])
    for _ in range(draw(_SMALL) * 2):
        op = graph.new_operator(draw(_OP_TYPES), next(names))
        picks = {draw(_PICK) % len(graph.operands) for _ in range(draw(_SMALL))}
        inputs = [graph.operands[i] for i in sorted(picks)]
        graph.connect(op, inputs=inputs, outputs=[new_operand() for _ in range(1 + draw(_SMALL) % 2)])
        op.params = draw(_PARAMS)
        for key in draw(_ATTR_KEYS):
            attr = Attribute(tuple(draw(_ATTR_SHAPE)), draw(_DTYPE))
            if with_data:
                attr.data = bytes((draw(_BYTE_SEED) + i) % 256 for i in range(attr.nbytes_expected))
            op.attrs[key] = attr
        if inputs and draw(_SMALL) % 2:
            op.inputnames = [draw(_INPUTNAME) for _ in inputs]
    out = graph.new_operator("pnnx.Output", next(names))
    graph.connect(out, inputs=[graph.operands[-1]])
    return graph


def _param_equal(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_param_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return float(np.float32(a)) == b
    return type(a) is type(b) and a == b


def assert_graphs_equal(a: Graph, b: Graph, data: bool = False) -> None:
    assert [(o.name, o.shape, o.dtype) for o in a.operands] == [(o.name, o.shape, o.dtype) for o in b.operands]
    assert len(a.ops) == len(b.ops)
    for x, y in zip(a.ops, b.ops):
        assert (x.type, x.name) == (y.type, y.name)
        assert [o.name for o in x.inputs] == [o.name for o in y.inputs]
        assert [o.name for o in x.outputs] == [o.name for o in y.outputs]
        assert x.params.keys() == y.params.keys()
        for key in x.params:
            assert _param_equal(x.params[key], y.params[key]), (key, x.params[key], y.params[key])
        assert {k: (v.shape, v.dtype) for k, v in x.attrs.items()} == {k: (v.shape, v.dtype) for k, v in y.attrs.items()}
        if data:
            assert {k: v.data for k, v in x.attrs.items()} == {k: v.data for k, v in y.attrs.items()}
        expected_names = x.inputnames if any(x.inputnames) else []
        assert (y.inputnames if any(y.inputnames) else []) == expected_names
