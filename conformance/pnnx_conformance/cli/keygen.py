"""`pnnx-conformance keygen`: an Ed25519 key pair for `certify --key`."""
from __future__ import annotations

import sys
from pathlib import Path


def add(sub) -> None:
    k = sub.add_parser("keygen", help="make an Ed25519 key pair for certify --key")
    k.add_argument("--out", required=True, help="private key file (KEY.pem); the public key goes to KEY.pub.pem")
    k.set_defaults(fn=cmd_keygen)


def cmd_keygen(args) -> int:
    from ..certify import keygen

    private, public, fp = keygen(Path(args.out))
    print(f"private key: {private} (keep it secret)\npublic key:  {public}\nfingerprint: {fp}", file=sys.stderr)
    return 0
