"""The ncnn backends feed inputs and read outputs the way the converter's `_ncnn.py` declares
(each blob's torch dim held as the ncnn Mat batch, or 233 for none)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pnnx_conformance.artefacts import Artefacts
from pnnx_conformance.backends.ncnn_backend import NcnnCpuBackend, declared_batch_indices
from pnnx_reference.api import export


class Scale(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0


def converted(tmp_path, shape):
    res = export(Scale().eval(), torch.rand(*shape), tmp_path, "m")
    paths = {"ncnn.param": res.paths["ncnnparam"], "ncnn.bin": res.paths["ncnnbin"], "ncnn.py": res.paths["ncnnpy"]}
    return Artefacts("reference", "t", tmp_path, paths)


def test_declared_batch_indices_are_read_from_the_generated_file(tmp_path):
    f = tmp_path / "x_ncnn.py"
    f.write_text('ex.input("in0", ncnn.Mat(in0.numpy(), batch_index=233).clone())\n'
                 'ex.input("in1", ncnn.Mat(in1.numpy(), batch_index=0).clone())\n'
                 'out.append(torch.from_numpy(np.array(out0.numpy(batch_index=1))))\n')
    assert declared_batch_indices(f) == {"in0": 233, "in1": 0, "out0": 1}
    assert declared_batch_indices(tmp_path / "missing.py") == {}


class Pool(torch.nn.Module):
    def forward(self, x, y):
        return torch.nn.functional.max_pool2d(x, 2), y.transpose(0, 1) + 1


@pytest.mark.parametrize("shape", [(1, 3, 4, 5), (2, 3, 4), (16,), (5, 7, 9, 11)])
def test_inputs_are_fed_with_their_declared_batch_index(tmp_path, shape):
    backend = NcnnCpuBackend()
    backend.prepare(converted(tmp_path, shape), "fp32")
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    (y,) = backend.run([x])
    np.testing.assert_allclose(y, np.maximum(x, 0) * 2.0, rtol=1e-6)
    backend.release()


def test_a_batch_above_one_goes_through_the_mat_batch(tmp_path):
    """Batch 3 into a pooling layer (dim 0 the Mat batch) next to a (2, 5) input fed whole."""
    x, y = torch.rand(3, 4, 6, 8), torch.rand(2, 5)
    res = export(Pool().eval(), (x, y), tmp_path, "m")
    paths = {"ncnn.param": res.paths["ncnnparam"], "ncnn.bin": res.paths["ncnnbin"], "ncnn.py": res.paths["ncnnpy"]}
    assert declared_batch_indices(paths["ncnn.py"]) == {"in0": 0, "in1": 233, "out0": 0, "out1": 233}
    backend = NcnnCpuBackend()
    backend.prepare(Artefacts("reference", "t", tmp_path, paths), "fp32")
    got = backend.run([x.numpy(), y.numpy()])
    for g, e in zip(got, Pool()(x, y)):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-6)
    backend.release()


def test_without_a_declaration_dim_0_is_the_batch(tmp_path):
    """A converter that writes no `_ncnn.py`: dim 0 of a >= 2-d input is fed as the Mat batch
    (any size) and a batch of 1 is put back in front of the outputs."""
    artefacts = converted(tmp_path, (1, 3, 4, 5))
    del artefacts.paths["ncnn.py"]
    backend = NcnnCpuBackend()
    backend.prepare(artefacts, "fp32")
    x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 4, 5)).astype(np.float32)
    (y,) = backend.run([x])
    np.testing.assert_allclose(y, np.maximum(x, 0) * 2.0, rtol=1e-6)
    backend.release()


def test_an_emitter_refusal_is_reported_once_as_unsupported(tmp_path):
    """The emitter's message already starts with "unsupported: "; the harness does not say it twice."""
    arts = Artefacts("reference", "t", tmp_path, {}, {"ncnn": "unsupported: F.embedding (op_0): weight is not a constant"})
    assert arts.missing_reason(("ncnn.param",)) == "unsupported: F.embedding (op_0): weight is not a constant"
    arts = Artefacts("reference", "t", tmp_path, {}, {"ncnn": "no lowering"})
    assert arts.missing_reason(("ncnn.param",)) == "unsupported: no lowering"
