"""Where the batch axis goes: the forms of upstream's own ncnn batch-layout test (a batch axis moved
to the middle by permute/reshape/unflatten and back, two inputs whose batch axes differ, binary
ops and cat/stack/split across such layouts, reshapes that reuse a dynamic batch), written here
as small modules. Each is captured, lowered to ncnn and run on the CPU against torch. Side by
side with upstream pnnx 20261020 on the same traced files, both pass all of them; a rank-5
result, which upstream writes as a file ncnn cannot hand back ("elemsize 0"), is refused by ours
in one line."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from conformance_runs import assert_close, run_ncnn
from fn_modules import Fn
from ncnn_export_helpers import FP32, lowered, torch_outputs
from pnnx_reference.errors import UnsupportedOperator


def _pool(t):
    return F.max_pool2d(t, 3, stride=1, padding=1)


def _x(*shape, seed=0):
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed + sum(shape)))


def _cat_stack_split(x, y):
    x, y = F.max_pool1d(x, 1).permute(1, 0, 2), F.max_pool1d(y, 1).permute(1, 0, 2)
    a, b = torch.split(x, [1, 2], dim=0)
    c, d = torch.chunk(y, 2, dim=2)
    e, f = torch.tensor_split(x, (1,), dim=0)
    return (torch.cat((x, y), 0), torch.stack((x, y), 0), a, b, c, d, e, f, *torch.unbind(x, 0))


def _axis_ops(x):
    x = F.max_pool2d(x, 1).permute(1, 0, 2, 3)
    return F.softmax(x, dim=0), x.sum(0), torch.cumsum(x, 3), torch.flip(x, [2]), x[:, :, 1:4, 2:6]


def _binary(x, y, z):
    q, r = F.max_pool2d(x, 1).permute(1, 0, 2, 3), F.max_pool2d(y, 1).permute(1, 0, 2, 3)
    return q + r, q + z.unsqueeze(1), F.max_pool2d(x, 1) + z


FORMS = {
    "unflatten_to_middle": (lambda x: _pool(x.unflatten(0, (3, 2)).permute(1, 0, 2, 3)), [(6, 5, 7)]),
    "reshape_to_middle": (lambda x: _pool(x.reshape(3, 2, 5, 7).permute(1, 0, 2, 3)), [(6, 5, 7)]),
    "ordinary_permute": (lambda x: _pool(x.reshape(3, 2, 5, 7).permute(1, 2, 0, 3)), [(6, 5, 7)]),
    "batch_to_middle_out": (lambda x: _pool(x).permute(1, 0, 2, 3), [(2, 3, 5, 7)]),
    "batch_to_middle_same_dim": (lambda x: _pool(x).permute(1, 0, 2, 3), [(2, 2, 5, 7)]),
    "fold_ambiguous": (lambda x: F.relu(_pool(x).permute(1, 0, 2, 3)).reshape(2, 105), [(2, 3, 5, 7)]),
    "round_trip": (lambda x: _pool(x.permute(1, 0, 2, 3).permute(1, 0, 2, 3)), [(2, 3, 5, 7)]),
    "flatten_round_trip": (lambda x: _pool(torch.flatten(x, 0, 1).reshape(2, 3, 5, 7)), [(2, 3, 5, 7)]),
    "flatten_backward": (lambda x: F.max_pool1d(torch.flatten(x, 0, 1).permute(1, 0, 2), 1), [(3, 5, 2, 7)]),
    "flatten_fold": (lambda x: torch.flatten(F.max_pool2d(x, 1).permute(1, 0, 2, 3).unsqueeze(1), 1, 2),
                     [(2, 3, 5, 7)]),
    "unflatten_fold": (lambda x: F.max_pool2d(x, 1).permute(1, 0, 2, 3).reshape(3, 2, 35).unflatten(1, (1, 2)),
                       [(2, 3, 5, 7)]),
    "two_inputs_two_reshapes": (lambda x, y: (_pool(x.reshape(3, 2, 5, 7).permute(1, 0, 2, 3)),
                                              _pool(y.reshape(4, 2, 3, 5).permute(1, 0, 2, 3))),
                                [(6, 5, 7), (8, 3, 5)]),
    "two_inputs_two_axes": (lambda x, y: (_pool(x.reshape(3, 2, 5, 7).permute(1, 0, 2, 3)),
                                          _pool(y.reshape(4, 3, 2, 5).permute(2, 0, 1, 3))),
                            [(6, 5, 7), (12, 2, 5)]),
    "compute_barrier": (lambda x: _pool(F.relu(x.reshape(3, 2, 5, 7)).permute(1, 0, 2, 3)), [(6, 5, 7)]),
    "branch_layouts": (lambda x: (_pool(x.reshape(3, 2, 5, 7).permute(1, 0, 2, 3)), x.reshape(3, 2, 35)),
                       [(6, 5, 7)]),
    "axis_sensitive_ops": (_axis_ops, [(2, 3, 5, 7)]),
    "binary_layouts": (_binary, [(2, 3, 5, 7), (2, 3, 5, 7), (3, 1, 1)]),
    "same_input_twice": (lambda x: (lambda t: t + t)(F.max_pool2d(x, 1).permute(1, 0, 2, 3)), [(2, 3, 5, 7)]),
    "cat_stack_split": (_cat_stack_split, [(2, 3, 8), (2, 3, 8)]),
    "unbind_moved_batch": (lambda x: torch.unbind(F.max_pool2d(x, 1).permute(1, 0, 2, 3), 0), [(2, 3, 5, 7)]),
    "select_two_axes": (lambda x: F.max_pool2d(x, 1).permute(1, 0, 2, 3)[:, :, 1, 2], [(2, 3, 5, 7)]),
    "reshape_reuses_batch": (lambda x: F.max_pool1d(F.max_pool2d(x, 1).reshape(x.size(0), x.size(0), -1), 1),
                             [(2, 2, 5, 7)]),
    "unflatten_after_batch": (lambda x: F.max_pool2d(x.unflatten(1, (3, 4)), 1), [(2, 12, 7)]),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_layout_matches_torch_on_ncnn_cpu(tmp_path, name):
    fn, shapes = FORMS[name]
    inputs = [_x(*s, seed=i) for i, s in enumerate(shapes)]
    model = Fn(fn)
    expected = torch_outputs(model.eval(), [t.clone() for t in inputs])
    got = run_ncnn(lowered(tmp_path, model, inputs), inputs, "fp32")
    assert_close(got, expected, FP32, name)


def test_a_rank5_result_is_refused_in_one_line(tmp_path):
    with pytest.raises(UnsupportedOperator, match="at most 4 dims"):
        lowered(tmp_path, Fn(lambda x: x.reshape(2, 3, 4, 5, 6)), [_x(720)])
