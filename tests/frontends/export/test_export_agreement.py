"""Issue 16, item 5: every smoke op case that torch.export exports gives the same pnnx.param
through the `.pt2` door (torch.export.export, save, load, our export frontend) and the
Python-API door, up to operator names. A disagreement fails with the first differing line of
each door. Known differences are listed, with their category, in known_differences.tsv;
they are strict xfails, so a case that starts agreeing must be taken off the list."""
from pathlib import Path

import pytest

from param_lines import assert_doors_agree, expect_known, known_cases
from export_agreement import NoDoor, both_doors
from pnnx_op_cases.case import TAG_ONNX
from pnnx_op_cases.registry import select

pytestmark = pytest.mark.op_case_sweep  # coverage on a sample of the cases (coverage_sample.py)

# ONNX-table cases are ONNX graphs run by onnxruntime: there is no PyTorch model to trace or export
CASES = [c for c in select(tier="smoke") if TAG_ONNX not in c.tags]

CATEGORY_REASONS = {
    "namespace": "meta['torch_fn'] says `function.split`, which names both torch.split and Tensor.split "
                 "(Python functions of one name); the .pt2 door writes the rule table's choice",
    "params": "the program holds scale factors and LPPool's norm_type as floats (the model wrote "
              "scale_factor=2, nn.LPPool2d(2, ...))",
    "decomposed": "torch.export decomposed the call into several aten calls that no fold rebuilds "
                  "exactly (its arguments are not all readable from the nodes)",
    "module": "a standard module whose constructor arguments the program does not pin down "
              "(nn.Transformer, MaxUnpool's kernel_size, EmbeddingBag with offsets): its inner calls "
              "are written; or one rebuilt with an argument its input cannot show (batch_first of an "
              "unbatched encoder layer: the default is written, which computes the same)",
    "call": "a module outside torch.nn (torchvision.ops.DeformConv2d) is not rebuilt from the program: the .pt2 door writes its call, torchvision.ops.deform_conv2d, with the same weights and arguments",
    "random": "a random operator: the program draws its noise with aten calls of its own",
}


KNOWN = known_cases(Path(__file__).with_name("known_differences.tsv"))


def test_known_differences_name_real_cases_and_categories():
    ids = {c.id for c in CASES}
    assert set(KNOWN) <= ids, sorted(set(KNOWN) - ids)
    assert set(KNOWN.values()) <= set(CATEGORY_REASONS), sorted(set(KNOWN.values()) - set(CATEGORY_REASONS))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_pt2_door_matches_python_door(case, request):
    expect_known(request, case.id, KNOWN, CATEGORY_REASONS)
    try:
        python_lines, pt2_lines = both_doors(case)
    except NoDoor as why:
        pytest.skip(str(why))
    assert_doors_agree(python_lines, pt2_lines, ".pt2")
