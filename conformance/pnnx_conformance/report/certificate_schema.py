"""Reading a certificate file that may be hostile: bounded size and nesting, no duplicate
keys, no NaN or Infinity, and every field of the exact type its format gives it. Nothing
read here is imported or run; a refusal is a ValueError with one line naming the reason.

The schema is data: a type, a tuple of alternatives, a `[spec]` list, a `{key: spec}` object
with exactly those keys, `MapOf(spec)` (any string keys) or `ANY` (free JSON, e.g. the
environment record, which only the nesting bound limits)."""
from __future__ import annotations

import json
from pathlib import Path

MAX_BYTES = 64 * 1024 * 1024   # a full-tier certificate of every mode is a few MB
MAX_DEPTH = 32                 # the deepest a certificate nests is 6; the environment a few more


class MapOf:
    def __init__(self, spec):
        self.spec = spec


ANY = object()
NUMBER = (int, float)
OPT_STR = (str, type(None))
OPT_NUMBER = (int, float, type(None))

COUNTS = {"passed": int, "waived": int, "failed": int, "not_applicable": int, "total": int,
          "pass_rate": OPT_NUMBER}
DISTRIBUTION = ({"distribution": str, "version": str}, type(None))
SIGNATURE = {"algorithm": str, "public_key": str, "fingerprint": str, "value": str}

FORMAT_3 = {
    "format_version": int,
    "created": str,
    "suite": {"name": str, "version": str, "commit": str},
    "backend": {"name": str, "plugin": DISTRIBUTION, "runtime": DISTRIBUTION, "device": str,
                "described": ANY},
    "precisions": MapOf({"rounding": str, "compute": str, "meaning": str}),
    "selection": {"tier": str, "converter": str, "ops": [str], "tables": [str], "pattern": OPT_STR,
                  "max_cases": (int, type(None)), "cases_provider": OPT_STR, "case_count": int,
                  "case_set_hash": str},
    "environment": ANY,
    "summary": MapOf({**COUNTS, "tables": MapOf(COUNTS)}),
    "waivers": [{"case": str, "precision": str, "reason": str}],
    "results": [{"case": str, "table": str, "precision": str, "status": str, "stage": str, "reason": str,
                 "waiver": str, "max_abs": OPT_NUMBER}],
    "signature": SIGNATURE,
    "digest": str,
}
# format 1 (before signatures): the committed device-run certificates; read with --allow-unsigned
FORMAT_1 = {
    "format_version": int, "backend": str, "tier": str, "created": str, "case_set_hash": str,
    "selection": {"tier": str, "ops": [str], "max_cases": (int, type(None)), "cases_provider": OPT_STR},
    "environment": ANY,
    "pass_rates": MapOf({"passed": int, "waived": int, "failed": int, "total": int, "pass_rate": NUMBER}),
    "waivers": [{"case": str, "reason": str}],
    "results": [{"case": str, "converter": str, "precision": OPT_STR, "status": str, "waiver": str,
                 "max_abs": OPT_NUMBER}],
    "digest": str,
}
SCHEMAS = {1: FORMAT_1, 3: FORMAT_3}
OPTIONAL = {1: {"pass_rates": {"waived", "failed", "passed"}}, 3: {"": {"signature"}}}


def _no_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def nesting_depth(value) -> int:
    """How deep arrays and objects nest in parsed JSON (iteratively: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def parse(data: bytes) -> dict:
    """The certificate in `data`, or ValueError naming what is wrong with it."""
    if len(data) > MAX_BYTES:
        raise ValueError(f"larger than {MAX_BYTES:,} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"not UTF-8 text (byte {e.start})") from None
    try:
        cert = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:   # json's scanner counts its depth against the interpreter's limit
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as e:   # a duplicate key, NaN, an integer of 5000 digits
        raise ValueError(f"not a valid certificate: {e}") from None
    if nesting_depth(cert) > MAX_DEPTH:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
    if not isinstance(cert, dict):
        raise ValueError("not a certificate (a JSON object is needed)")
    version = cert.get("format_version")
    if type(version) is not int or version not in SCHEMAS:
        raise ValueError(f"unknown certificate format version {version!r} (this suite reads "
                         f"{', '.join(map(str, SCHEMAS))}; re-issue it with this suite's certify)")
    problem = mismatch(cert, SCHEMAS[version], "", OPTIONAL[version])
    if problem:
        raise ValueError(problem)
    return cert


def read(path: Path) -> dict:
    """The certificate at `path` (at most MAX_BYTES are read), or ValueError."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise ValueError(f"cannot read: {e.strerror or e}") from None
    return parse(data)


def _type_name(spec) -> str:
    if isinstance(spec, tuple):
        return " or ".join(_type_name(s) for s in spec)
    if isinstance(spec, (dict, MapOf)):
        return "an object"
    if isinstance(spec, list):
        return "a list"
    return {str: "a string", int: "an integer", float: "a number", bool: "true/false",
            type(None): "null"}.get(spec, str(spec))


def _is(value, spec) -> bool:
    if spec is ANY:
        return True
    if isinstance(spec, tuple):
        return any(_is(value, s) for s in spec)
    if isinstance(spec, (dict, MapOf)):
        return isinstance(value, dict)
    if isinstance(spec, list):
        return isinstance(value, list)
    if spec is int:
        return type(value) is int          # true/false is not a count
    if spec is float:
        return type(value) in (int, float)
    return type(value) is spec


def mismatch(value, spec, where: str = "", optional: dict | None = None) -> str | None:
    """The first place `value` departs from `spec`, as one line, or None."""
    here = where or "the certificate"
    if not _is(value, spec):
        return f"{here}: {_type_name(spec)} is needed, not {type(value).__name__}"
    if isinstance(spec, tuple):
        spec = next(s for s in spec if _is(value, s))
    if isinstance(spec, list):
        for i, item in enumerate(value):
            found = mismatch(item, spec[0], f"{where}[{i}]", optional)
            if found:
                return found
    elif isinstance(spec, MapOf):
        for key, item in value.items():
            found = mismatch(item, spec.spec, f"{where}.{key}" if where else key, optional)
            if found:
                return found
    elif isinstance(spec, dict):
        may_lack = (optional or {}).get(where.split("[")[0].split(".")[0] if where else "", set())
        extra = sorted(set(value) - set(spec))
        if extra:
            return f"{here}: unexpected field {extra[0]!r}"
        missing = sorted(set(spec) - set(value) - may_lack)
        if missing:
            return f"{here}: missing field {missing[0]!r}"
        for key, item in value.items():
            found = mismatch(item, spec[key], f"{where}.{key}" if where else key, optional)
            if found:
                return found
    return None
