"""`pnnx-conformance backends`: the discovered backends, what each consumes and its precisions."""
from __future__ import annotations


def add(sub) -> None:
    b = sub.add_parser("backends", help="list discovered backends")
    b.set_defaults(fn=cmd_backends)


def cmd_backends(args) -> int:
    from ..backends import discovered, load_backend

    for name, target in sorted(discovered().items()):
        b = load_backend(name)
        print(f"{name:16} {target}  consumes {'+'.join(b.consumes) or 'the case'}; "
              f"precisions {', '.join(b.precisions)}")
    return 0
