"""Certificates for the tests: fixed Ed25519 keys (no randomness) and a builder of format-3
certificates from fake parity records, without a run."""
from __future__ import annotations

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pnnx_conformance.report.certificate import fingerprint, make_certificate, precision_modes
from pnnx_conformance.results import Metrics, Result

VENDOR = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
MALLORY = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
SUITE = {"name": "pnnx-conformance", "version": "0.2.0", "commit": "c0ffee"}


def fp(key) -> str:
    return fingerprint(key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))


def public_pem(key, path):
    path.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo))
    return path


def rec(case, status, precision="fp32", waiver="", backend="vendor-x", error=""):
    op = case.split("/")[0]
    return Result(case=case, op=op, table=op.split(".")[0], converter="reference", check="parity", status=status,
                  backend=backend, precision=precision, metrics=Metrics(max_abs=0.0), waiver=waiver, error=error)


def certificate(records, *, key=VENDOR, name="vendor-x", modes=None, case_hash="abc", provider=None, ops=(),
                plugin=None, runtime=None) -> dict:
    """A certificate of `records` (one per case and mode) on a selection of their cases."""
    modes = modes or {"fp32": None}
    selection = {"tier": "smoke", "converter": "reference", "ops": list(ops), "tables": [], "pattern": None,
                 "max_cases": None, "cases_provider": provider, "case_count": len({r.case for r in records}),
                 "case_set_hash": case_hash}
    return make_certificate(records, backend={"name": name, "plugin": plugin, "runtime": runtime, "device": "",
                                              "described": {"name": name}},
                            precisions=precision_modes(modes, {m: r or "fp32" for m, r in modes.items()}),
                            selection=selection, environment={"os": "test"}, suite=SUITE, key=key)
