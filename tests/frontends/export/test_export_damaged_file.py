"""A damaged `.pt2` (issue 33 item 9): torch.export.load's own message is "Please check the
warnings above", with the warnings silenced; the line names the cause torch logged."""
import zipfile

import torch
import torch.nn as nn

from pnnx_reference.cli import main as pnnxref


def test_a_pt2_missing_records_names_the_cause(tmp_path, capsys):
    torch.export.save(torch.export.export(nn.Linear(8, 4).eval(), (torch.rand(2, 8),)), tmp_path / "good.pt2")
    with zipfile.ZipFile(tmp_path / "good.pt2") as good, zipfile.ZipFile(tmp_path / "bad.pt2", "w") as bad:
        for info in good.infolist():
            if not info.filename.endswith("version"):
                bad.writestr(info.filename, good.read(info))
    (tmp_path / "good.pt2").unlink()
    assert pnnxref([str(tmp_path / "bad.pt2")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'bad.pt2'}: not a loadable torch.export (.pt2) file: RuntimeError: ")
    assert "version" in err and "warnings above" not in err and len(err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.pt2"]
