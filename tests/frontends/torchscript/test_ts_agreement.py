"""Issue 5, item 4: every smoke op case that traces gives the same pnnx.param through the
`.pt` door (torch.jit.trace, save, load, our TorchScript frontend) and the Python-API door,
up to operator names. A disagreement fails with the first differing line of each door.

Known disagreements are listed, with their category, in known_disagreements.tsv; they are
strict xfails, so a case that starts agreeing must be taken off the list."""
from pathlib import Path

import pytest

from param_lines import assert_doors_agree, expect_known, known_cases
from pnnx_op_cases.case import TAG_ONNX
from pnnx_op_cases.registry import select
from ts_agreement import both_doors

pytestmark = pytest.mark.op_case_sweep  # coverage on a sample of the cases (coverage_sample.py)

# ONNX-table cases are ONNX graphs run by onnxruntime: there is no PyTorch model to trace or export
CASES = [c for c in select(tier="smoke") if TAG_ONNX not in c.tags]

CATEGORY_REASONS = {
    "namespace": "torch.X and Tensor.X (and x[i] beside x.select, x.float() beside x.to(torch.float)) are one "
                 "builtin aten:: call that leaves no Python frame in the trace to tell them apart; the .pt door "
                 "writes upstream's name for the same operator with the same arguments",
    "params": "the trace holds a value as the call converted it (scale_factor=2 as 2.0, LPPool's "
              "float(norm_type)); how the model spelled it is not recorded, the value is the same",
    "call": "a module outside torch.nn (torchvision.ops.DeformConv2d) is not rebuilt from the trace: the .pt door writes its call, torchvision.ops.deform_conv2d, with the same weights and arguments",
    "unbatched": "a trace of an unbatched input does not show the module's batch layout (batch_first changes "
                 "nothing without a batch axis); the .pt door writes the default",
}


KNOWN = known_cases(Path(__file__).with_name("known_disagreements.tsv"))


def test_known_disagreements_name_real_cases_and_categories():
    ids = {c.id for c in CASES}
    assert set(KNOWN) <= ids, sorted(set(KNOWN) - ids)
    assert set(KNOWN.values()) <= set(CATEGORY_REASONS), sorted(set(KNOWN.values()) - set(CATEGORY_REASONS))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_pt_door_matches_python_door(case, request):
    expect_known(request, case.id, KNOWN, CATEGORY_REASONS)
    doors = both_doors(case)
    if doors is None:
        pytest.skip("torch.jit.trace refuses the case")
    python_lines, pt_lines = doors
    assert_doors_agree(python_lines, pt_lines, ".pt")
