"""Issue 5, item 4: every smoke op case that traces gives the same pnnx.param through the
`.pt` route (torch.jit.trace, save, load, our TorchScript frontend) and the Python-API route,
up to operator names. A disagreement fails with the first differing line of each route."""
import pytest

from pnnx_op_cases.registry import select
from ts_agreement import both_routes

CASES = select(tier="smoke")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_pt_route_matches_python_route(case):
    routes = both_routes(case)
    if routes is None:
        pytest.skip("the case does not trace or does not capture through the Python API")
    python_lines, pt_lines = routes
    diff = [(a, b) for a, b in zip(python_lines, pt_lines) if a != b]
    assert python_lines == pt_lines, (
        f"first difference (python | .pt):\n  {diff[0][0] if diff else len(python_lines)}\n"
        f"  {diff[0][1] if diff else len(pt_lines)}")
