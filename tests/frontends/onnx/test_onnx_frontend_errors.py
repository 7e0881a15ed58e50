"""Bad ONNX input: one error line naming the file and the problem, a non-zero exit, no files."""
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from onnx_models import FLOAT, INT64, graph_model
from pnnx_reference import api
from pnnx_reference.cli import main
from pnnx_reference.errors import ConversionError
from pnnx_reference.errors import ConstantInputsNeeded


def relu_model(opset=17, dims=(1, 3, 4, 4)):
    return graph_model([helper.make_node("Relu", ["x"], ["y"])], [("x", FLOAT, list(dims))], [("y", FLOAT, None)],
                       opset=opset)


def run_cli(args, capsys):
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    return code, err


def only(folder: Path, *names) -> bool:
    return sorted(p.name for p in folder.iterdir()) == sorted(names)


def test_missing_file(tmp_path, capsys):
    code, err = run_cli([tmp_path / "absent.onnx"], capsys)
    assert code != 0 and err.count("\n") == 1 and "absent.onnx: no such file" in err


def test_corrupt_file(tmp_path, capsys):
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"\x08\x07garbage that is not a protobuf message \xff\xff")
    code, err = run_cli([path], capsys)
    assert code != 0 and err.count("\n") == 1 and "bad.onnx: not a readable ONNX model" in err
    assert only(tmp_path, "bad.onnx")


def test_missing_external_data(tmp_path, capsys):
    model = graph_model([helper.make_node("Add", ["x", "w"], ["y"])], [("x", FLOAT, [4, 300])], [("y", FLOAT, None)],
                        {"w": np.ones((4, 300), np.float32)})
    path = tmp_path / "ext.onnx"
    onnx.save(model, str(path), save_as_external_data=True, location="ext.weights", size_threshold=0)
    (tmp_path / "ext.weights").unlink()
    code, err = run_cli([path], capsys)
    assert code != 0 and err.count("\n") == 1
    assert "external data file 'ext.weights' of tensor 'w' is missing" in err
    assert only(tmp_path, "ext.onnx")


def test_external_data_outside_the_folder_is_refused(tmp_path, capsys):
    model = graph_model([helper.make_node("Add", ["x", "w"], ["y"])], [("x", FLOAT, [2, 300])], [("y", FLOAT, None)],
                        {"w": np.ones((2, 300), np.float32)})
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub" / "m.onnx"
    onnx.save(model, str(path), save_as_external_data=True, location="w.bin", size_threshold=0)
    loaded = onnx.load(str(path), load_external_data=False)
    for entry in loaded.graph.initializer[0].external_data:
        if entry.key == "location":
            entry.value = "../../etc/passwd"
    onnx.save(loaded, str(path))
    code, err = run_cli([path], capsys)
    assert code != 0 and "names external data outside the model's folder" in err


def test_every_unmapped_node_in_one_line_and_no_files(tmp_path, capsys):
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="first_relu"),
             helper.make_node("Unique", ["a"], ["b"], name="where_unique"),
             helper.make_node("Custom", ["x"], ["c"], name="vendor_op", domain="com.vendor"),
             helper.make_node("Sigmoid", ["x"], ["y"])]
    model = graph_model(nodes, [("x", FLOAT, [2, 3])], [("y", FLOAT, None), ("b", FLOAT, None), ("c", FLOAT, None)])
    model.opset_import.append(helper.make_opsetid("com.vendor", 1))
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    code, err = run_cli([path], capsys)
    assert code != 0 and err.count("\n") == 1
    assert "2 ONNX nodes cannot be mapped to PyTorch" in err
    assert "where_unique (Unique): no rule" in err and "vendor_op (com.vendor:Custom): no rule" in err
    assert only(tmp_path, "m.onnx")


def test_rule_refusals_are_gathered_past_the_first(tmp_path):
    """A refusal at run time (an attribute PyTorch has no form for) does not hide the next one:
    the checking run goes on through onnx's reference evaluator."""
    nodes = [helper.make_node("MaxPool", ["x"], ["a", "i"], kernel_shape=[3, 3], storage_order=1, name="colmajor"),
             helper.make_node("Resize", ["a", "", "s"], ["y"], coordinate_transformation_mode="tf_crop_and_resize",
                              mode="linear", name="crop")]
    model = graph_model(nodes, [("x", FLOAT, [1, 1, 9, 9])], [("y", FLOAT, None), ("i", INT64, None)],
                        {"s": np.array([1, 1, 2, 2], np.float32)}, opset=19)
    with pytest.raises(ConversionError) as info:
        api.export_onnx(model, tmp_path, "m")
    text = str(info.value)
    assert "2 ONNX nodes" in text and "colmajor (MaxPool)" in text and "crop (Resize)" in text
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("opset, message", [(1, "older than 6 and onnx's version converter cannot upgrade it"),
                                            (29, "newer than the newest")])
def test_opset_range(tmp_path, capsys, opset, message):
    model = relu_model()
    model.opset_import[0].version = opset
    model.graph.node[0].op_type = "Split"  # onnx's converter has no adapter for Split from opset 1
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    code, err = run_cli([path], capsys)
    assert code != 0 and message in err


def test_symbolic_dims_need_inputshape(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(relu_model(dims=("batch", 3, 4, 4)), str(path))
    code, err = run_cli([path], capsys)
    assert code != 0 and "need inputshape=" in err and "x['batch', 3, 4, 4]" in err


def test_inputshape_must_agree_with_fixed_dims(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(relu_model(), str(path))
    code, err = run_cli([path, "inputshape=[1,4,4,4]"], capsys)
    assert code != 0 and "dimension 1 is fixed to 3" in err
    code, err = run_cli([path, "inputshape=[1,3,4,4]i64"], capsys)
    assert code != 0 and "type i64, the model says f32" in err


def test_options_that_do_not_apply(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(relu_model(), str(path))
    code, err = run_cli([path, "moduleop=a.B"], capsys)
    assert code != 0 and "moduleop= does not apply to an ONNX model" in err


def reshape_by_input():
    return graph_model([helper.make_node("Reshape", ["x", "shape"], ["y"])],
                       [("x", FLOAT, [2, 6]), ("shape", INT64, [2])], [("y", FLOAT, None)])


def test_a_shape_read_from_an_input_names_the_input(tmp_path):
    with pytest.raises(ConstantInputsNeeded) as info:
        api.export_onnx(reshape_by_input(), tmp_path, "m")
    assert info.value.inputs == ["shape"] and "must be known at conversion time" in str(info.value)


def test_constant_inputs_make_it_a_constant(tmp_path):
    result = api.export_onnx(reshape_by_input(), tmp_path, "m", constant_inputs={"shape": np.array([3, 4])})
    assert "pnnxpy" in result.paths
    assert "shape=(3,4)" in Path(result.paths["pnnxparam"]).read_text()


def test_options_the_onnx_door_cannot_use_are_refused_not_ignored(tmp_path, capsys):
    """Issue 33 item 8: input= of a missing file exited 0; input2= was ignored."""
    path = tmp_path / "m.onnx"
    onnx.save(relu_model(), str(path))
    code, err = run_cli([path, f"input={tmp_path / 'doesnotexist.npy'}"], capsys)
    assert (code, err) == (2, f"error: {tmp_path / 'doesnotexist.npy'}: no such file\n")
    np.save(tmp_path / "x.npy", np.ones((1, 3, 4, 4), np.float32))
    code, err = run_cli([path, f"input2={tmp_path / 'x.npy'}"], capsys)
    assert (code, err) == (2, "error: input2= does not apply to an ONNX model (give inputshape2)\n")
    code, err = run_cli([path, f"input={tmp_path / 'x.npy'}", "inputshape=[1,3,4,5]"], capsys)
    assert (code, err) == (2, "error: inputshape and input disagree (give one of them)\n")
    assert only(tmp_path, "m.onnx", "x.npy")


def test_the_onnx_door_prints_what_the_others_print(tmp_path, capsys):
    """Issue 33 item 8: the statistics and the self-check line, and input= / selfcheck= used."""
    path = tmp_path / "m.onnx"
    onnx.save(relu_model(), str(path))
    np.save(tmp_path / "x.npy", np.full((1, 3, 4, 4), -1.0, np.float32))
    code, err = run_cli([path, f"input={tmp_path / 'x.npy'}"], capsys)
    assert code == 0, err
    lines = err.splitlines()
    assert lines[:3] == ["model inputshape = [1,3,4,4]f32", "FLOPS = 48", "memory OPS = 96"]
    assert lines[-1].startswith("selfcheck: passed: 1 output(s) on 1 input set(s)")
    code, err = run_cli([path, "selfcheck=0"], capsys)
    assert code == 0 and err.splitlines()[-1] == "selfcheck: off"


@pytest.mark.parametrize("op_type", ["CumSum", "CumProd"])
def test_a_cumulative_op_of_bools_is_refused_not_converted_to_another_type(tmp_path, capsys, op_type):
    """ONNX defines CumSum/CumProd on numbers only (its output has the input's type); torch.onnx
    writes `bools.cumsum(1)` as one anyway, which torch computes in int64: no reading is right."""
    model = graph_model([helper.make_node(op_type, ["x", "axis"], ["y"])], [("x", onnx.TensorProto.BOOL, [2, 6])],
                        [("y", onnx.TensorProto.BOOL, None)], {"axis": np.array(1, np.int64)})
    path = tmp_path / "cum.onnx"
    onnx.save(model, str(path))
    code, err = run_cli([path], capsys)
    assert code != 0 and err.count("\n") == 1
    assert f"{op_type} of a bool tensor" in err
    assert only(tmp_path, "cum.onnx")
