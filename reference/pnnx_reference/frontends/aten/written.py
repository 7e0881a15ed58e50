"""Arguments in the form models write them. aten spells an int-or-tuple size out per dim
(`kernel_size=[2, 2]`) and a default stride as `[]`; `F.max_pool2d(x, 2)` is what models write
and what the Python door records, so the rules pass `2` and `None` (the same call: the F.*
function repeats one size over every dim)."""
from __future__ import annotations

# Arguments that take one size for every dim (`kernel_size=2` is (2, 2) in 2-d).
REPEATED = ("kernel_size", "stride", "padding", "dilation", "scale_factor", "output_padding")


def short(value):
    """[2, 2] -> 2; [2.0, 2.0] -> 2.0; other values (and lists of different sizes) as they are."""
    if isinstance(value, (list, tuple)) and value and len(set(value)) == 1 \
            and isinstance(value[0], (int, float)) and not isinstance(value[0], bool):
        return value[0]
    return value


def stride(value):
    """aten's `stride=[]` is F's `stride=None` (the kernel size)."""
    return None if value is None or (isinstance(value, (list, tuple)) and not value) else short(value)


def sizes(arguments: dict, also: tuple = ()) -> dict:
    """`arguments` with every REPEATED one (and those of `also`) in its short form."""
    out = dict(arguments)
    for name in REPEATED + also:
        if name in out:
            out[name] = stride(out[name]) if name == "stride" else short(out[name])
    return out


def without_defaults(op, kwargs: dict) -> dict:
    """The arguments after the first that differ from the aten schema's defaults: what a builtin
    F.* call (F.avg_pool2d) is given, so that the capture fills the defaults as it does for the
    model's own call."""
    out = {}
    for argument in op._schema.arguments[1:]:
        if argument.name not in kwargs:
            continue
        value = kwargs[argument.name]
        if argument.has_default_value() and short(value) == short(argument.default_value):
            continue
        out[argument.name] = value
    return out
