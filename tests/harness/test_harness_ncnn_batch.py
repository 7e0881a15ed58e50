"""The ncnn backends feed inputs the way the converter's `_ncnn.py` declares."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pnnx_conformance.artefacts import Artefacts
from pnnx_conformance.backends.ncnn_backend import NcnnCpuBackend, declared_batch_indices
from pnnx_conformance.errors import NotSupported
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
                 'ex.input("in1", ncnn.Mat(in1.numpy(), batch_index=0).clone())\n')
    assert declared_batch_indices(f) == {"in0": 233, "in1": 0}
    assert declared_batch_indices(tmp_path / "missing.py") == {}


@pytest.mark.parametrize("shape", [(1, 3, 4, 5), (2, 3, 4)])
def test_batch_one_is_squeezed_and_batchless_is_fed_whole(tmp_path, shape):
    backend = NcnnCpuBackend()
    backend.prepare(converted(tmp_path, shape), "fp32")
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    (y,) = backend.run([x])
    np.testing.assert_allclose(y, np.maximum(x, 0) * 2.0, rtol=1e-6)
    backend.release()


def test_batch_above_one_without_a_declaration_is_not_supported(tmp_path):
    artefacts = converted(tmp_path, (1, 3, 4, 5))
    del artefacts.paths["ncnn.py"]
    backend = NcnnCpuBackend()
    backend.prepare(artefacts, "fp32")
    with pytest.raises(NotSupported, match="no batch axis"):
        backend.run([np.zeros((2, 3, 4, 5), np.float32)])
    backend.release()
