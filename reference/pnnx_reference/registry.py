"""The one registry kit behind every table of rules in the converter: the ncnn and ONNX
lowerings, the `_pnnx.py` renderers, the frontends' aten and ONNX rules.

    LOWERINGS = Registry("ncnn")

    @LOWERINGS.register("nn.Conv2d", "F.conv2d", batch=FIRST, unbatched_rank=3)
    def conv(ctx, op): ...

    rule = LOWERINGS.lookup("nn.Conv2d")    # Rule(key, fn, traits, file, line) or None
    rule.fn(ctx, op); rule.traits["batch"]; rule.where  # "reference/.../conv.py:12"

A capability is a keyword on `register` (stored in `Rule.traits`), never derived from the
file a rule lives in. Keys are exact; `register_prefix("torch.")` adds a rule for every key
with that prefix, found when no exact rule is (longest prefix first). Registering one key
twice in one registry is an error. Every registry is listed in `REGISTRIES` by its name, so
tools (`pnnx-cases where`) can ask each one where an operator is handled. A frontend's table
names the doors it serves (`Registry("aten", doors=(".pt", ".pt2"))`) and its rules the PyTorch
operators they write (`produces=("nn.Conv2d", ...)`); an emitter's table serves no door.

A registry never imports the modules that fill it: the package that uses it imports them at
its top (see each emitter's `families/__init__.py`), which keeps the import graph acyclic."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

REGISTRIES: dict[str, "Registry"] = {}
_ROOT = Path(__file__).resolve().parents[2]  # the repository root, for short file names


@dataclass(frozen=True)
class Rule:
    key: str
    fn: Callable
    registry: str
    traits: dict = field(default_factory=dict, compare=False, hash=False)
    prefix: bool = False

    @property
    def where(self) -> str:
        """`file:line` of the rule's function, relative to the repository when inside it."""
        return where_defined(self.fn)


def where_defined(fn: Callable) -> str:
    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
    if code is None:
        return repr(fn)
    path = Path(code.co_filename)
    try:
        path = path.resolve().relative_to(_ROOT)
    except ValueError:
        pass
    return f"{path}:{code.co_firstlineno}"


class Registry:
    def __init__(self, name: str, doc: str = "", doors: tuple[str, ...] = ()) -> None:
        if name in REGISTRIES:
            raise ValueError(f"registry {name!r} exists already")
        self.name, self.doc, self.doors = name, doc, doors
        self._exact: dict[str, Rule] = {}
        self._prefixes: dict[str, Rule] = {}
        REGISTRIES[name] = self

    def register(self, *keys: str, **traits) -> Callable[[Callable], Callable]:
        """Decorator: `fn` handles every key in `keys`, with these capability traits."""
        def decorate(fn: Callable) -> Callable:
            for key in keys:
                self.add(key, fn, **traits)
            return fn
        return decorate

    def register_prefix(self, *prefixes: str, **traits) -> Callable[[Callable], Callable]:
        def decorate(fn: Callable) -> Callable:
            for prefix in prefixes:
                self._put(self._prefixes, Rule(prefix, fn, self.name, dict(traits), prefix=True))
            return fn
        return decorate

    def add(self, key: str, fn: Callable, **traits) -> Rule:
        return self._put(self._exact, Rule(key, fn, self.name, dict(traits)))

    def _put(self, table: dict[str, Rule], rule: Rule) -> Rule:
        if rule.key in table:
            raise ValueError(f"{self.name}: {rule.key!r} registered twice "
                             f"({table[rule.key].where} and {rule.where})")
        table[rule.key] = rule
        return rule

    def lookup(self, key: str) -> Rule | None:
        rule = self._exact.get(key)
        if rule is not None:
            return rule
        for prefix in sorted(self._prefixes, key=len, reverse=True):
            if key.startswith(prefix):
                return self._prefixes[prefix]
        return None

    def __contains__(self, key: str) -> bool:
        return key in self._exact

    def __iter__(self) -> Iterator[str]:
        return iter(self._exact)

    def __len__(self) -> int:
        return len(self._exact)

    def rules(self) -> list[Rule]:
        return [*self._exact.values(), *self._prefixes.values()]

    def where(self, key: str) -> str | None:
        rule = self.lookup(key)
        return rule.where if rule is not None else None

    def __repr__(self) -> str:
        return f"Registry({self.name!r}, {len(self._exact)} rules, {len(self._prefixes)} prefixes)"
