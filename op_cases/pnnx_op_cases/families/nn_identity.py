"""nn.*: the `identity` family (emit/*/families/identity.py): AlphaDropout, Dropout, Dropout2d,
Dropout3d."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family


_DROPOUT_WHY = "eval mode makes it the identity; its random mask only exists in training"


_DROPOUTS = {
    "nn.Dropout": [(2, 8), (1, 3, 4, 5)],
    "nn.Dropout2d": [(1, 4, 3, 5), (4, 3, 5)],
    "nn.Dropout3d": [(1, 4, 2, 3, 4), (4, 2, 3, 4)],
    "nn.AlphaDropout": [(2, 8), (1, 3, 4, 5)],
}


@family("nn.Dropout", "nn.Dropout2d", "nn.Dropout3d", "nn.AlphaDropout")
def dropouts():
    why = {"training-only": _DROPOUT_WHY}
    for op, shapes in _DROPOUTS.items():
        yield module_case(op, "p0.5", f"{op}()", [rand(*shapes[0])], reasons=why, smoke=True)
        yield module_case(op, "p0.2_inplace" if op != "nn.AlphaDropout" else "p0.2",
                          f"{op}(0.2{', inplace=True' if op != 'nn.AlphaDropout' else ''})",
                          [rand(*shapes[1])], reasons=why)
        # what an exporter must keep: dropout between two real ops
        yield module_case(op, "between_ops", f"{op}(0.3)", [rand(*shapes[0])], reasons=why,
                          pre="x0 = x0 * 2", call="self.m(x0) + 1")
