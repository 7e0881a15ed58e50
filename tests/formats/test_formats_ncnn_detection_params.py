"""The detection layers' rows of formats/ncnn_layer_params.tsv (Proposal .. Yolov3DetectionOutput)
against the pinned ncnn binding: a file writing every id of a row validates clean and loads; each
id changes what the layer gives (or makes its loader refuse the file), an id past the row does not;
the kinds where ncnn drops an int, converts a float or misreads a float-only-array; and the loader's
value checks the table's header names."""
import ncnn  # pinned in requirements/runtime.txt: a missing binding is a failure, not a skip
import numpy as np
import pytest

from pnnx_reference.formats import ncnn_layer_params
from pnnx_reference.validate import validate

_RNG = np.random.default_rng(0)
FEAT = _RNG.standard_normal((4, 6, 8)).astype(np.float32)
PS_FEAT = _RNG.standard_normal((8, 6, 8)).astype(np.float32)
ROI = np.array([1.0, 1.0, 5.0, 4.0], np.float32)
ROI_FRACTIONAL = np.array([0.3, 0.7, 6.1, 4.9], np.float32)
YOLO = _RNG.standard_normal((14, 3, 3)).astype(np.float32)  # 2 boxes x (4 + 1 + 2 classes)
PRIORS = np.array([[0.1, 0.1, 0.4, 0.4], [0.12, 0.1, 0.42, 0.4], [0.5, 0.5, 0.9, 0.9],
                   [0.52, 0.5, 0.9, 0.92], [0.1, 0.5, 0.4, 0.9], [0.11, 0.52, 0.4, 0.9]], np.float32)
LOC = (_RNG.standard_normal(24) * 0.1).astype(np.float32)
CONF = np.concatenate([np.full((6, 1), 0.05), _RNG.uniform(0, 1, (6, 2))], axis=1).astype(np.float32)
CONF /= CONF.sum(axis=1, keepdims=True)
CAFFE_PRIORS = np.stack([PRIORS.ravel(), np.tile([0.1, 0.1, 0.2, 0.2], 6).astype(np.float32)])
YOLOV3 = {0: 2, 1: 2, 2: 0.01, 3: 0.45, 4: [10.0, 15.0, 20.0, 25.0], 5: [0.0, 1.0], 6: [32.0]}
PRIORBOX = {0: [24.0], 1: [30.0], 2: [2.0], 3: 0.1, 4: 0.1, 5: 0.2, 6: 0.2, 7: 1, 8: 0, 9: -233, 10: -233,
            11: -233.0, 12: -233.0, 13: 0.5, 14: 0, 15: 0}
PRIORBOX_INPUTS = (_RNG.standard_normal((2, 3, 4)).astype(np.float32),
                   _RNG.standard_normal((3, 31, 41)).astype(np.float32))

# layer -> [(inputs, base params, {id: a value that changes the outcome})]: the changed ids of a
# layer's probes are its row's ids
PROBES = {
    "StatisticsPooling": [((FEAT,), {0: 0}, {0: 1})],
    "ROIPooling": [((FEAT, ROI), {0: 2, 1: 2, 2: 1.0}, {0: 3, 1: 3, 2: 0.5})],
    "ROIAlign": [((FEAT, ROI_FRACTIONAL), {0: 3, 1: 3, 2: 1.0, 3: 0, 4: 1, 5: 0},
                  {0: 2, 1: 2, 2: 0.5, 3: 1, 4: 0, 5: 1})],
    "PSROIPooling": [((PS_FEAT, ROI), {0: 2, 1: 2, 2: 1.0, 3: 2}, {0: 1, 1: 1, 2: 0.5, 3: 8})],
    "PriorBox": [(PRIORBOX_INPUTS, PRIORBOX,
                  {0: [5.0], 1: [10.0], 2: [3.0], 3: 0.3, 4: 0.3, 5: 0.3, 6: 0.3, 7: 0, 8: 1, 9: 20, 10: 20,
                   11: 7.0, 12: 7.0, 13: 0.25, 14: 1, 15: 1})],
    "DetectionOutput": [((LOC, CONF.ravel(), CAFFE_PRIORS), {0: 3, 1: 0.45, 2: 300, 3: 100, 4: 0.1},
                         {0: 2, 1: 0.99, 2: 1, 3: 2, 4: 0.5}),
                        # mxnet style (num_class -233): the variances come from 5..8, not the priors
                        ((LOC, CONF.T.copy(), PRIORS), {0: -233, 1: 0.45, 4: 0.1, 5: 0.1, 6: 0.1, 7: 0.2, 8: 0.2},
                         {5: 0.5, 6: 0.5, 7: 0.5, 8: 0.5})],
    "Proposal": [((_RNG.uniform(0, 1, (18, 4, 4)).astype(np.float32),
                   (_RNG.standard_normal((36, 4, 4)) * 0.2).astype(np.float32), np.array([64, 64, 1], np.float32)),
                  {0: 16, 1: 16, 2: 6000, 3: 300, 4: 0.7, 5: 16}, {0: 8, 1: 8, 2: 5, 3: 3, 4: 0.3, 5: 40})],
    "YoloDetectionOutput": [((YOLO,), {0: 2, 1: 2, 2: 0.01, 3: 0.45, 4: [1.0, 1.5, 2.0, 2.5]},
                             {0: 1, 1: 1, 2: 0.3, 3: 0.1, 4: [2.0, 1.5, 1.0, 2.5]})],
    "Yolov3DetectionOutput": [((YOLO,), YOLOV3, {0: 1, 1: 1, 2: 0.3, 3: 0.1, 4: [20.0, 15.0, 10.0, 25.0],
                                                 5: [1.0, 0.0], 6: [16.0]})],
}


def _text(pid: int, value) -> str:
    if isinstance(value, list):
        return f"{-23300 - pid}={len(value)}," + ",".join(repr(v) for v in value)
    return f"{pid}={value!r}"


def _write(tmp_path, layer: str, params: dict, n_inputs: int):
    names = [f"in{i}" for i in range(n_inputs)]
    lines = [f"Input {name} 0 1 {name}" for name in names]
    lines.append(f"{layer} l {n_inputs} 1 {' '.join(names)} out0 " + " ".join(_text(k, v) for k, v in params.items()))
    param = tmp_path / "d.ncnn.param"
    param.write_text(f"7767517\n{len(lines)} {n_inputs + 1}\n" + "\n".join(lines) + "\n")
    (tmp_path / "d.ncnn.bin").write_bytes(b"")
    return param


def _outcome(tmp_path, layer: str, params: dict, inputs) -> object:
    """'refused' when the loader refuses the file, else (forward's return, the output rounded)."""
    param = _write(tmp_path, layer, params, len(inputs))
    net = ncnn.Net()
    net.opt.use_vulkan_compute = False
    net.opt.num_threads = 1
    if net.load_param(str(param)) != 0:
        return "refused"
    assert net.load_model(str(tmp_path / "d.ncnn.bin")) == 0
    with net.create_extractor() as ex:
        for i, array in enumerate(inputs):
            ex.input(f"in{i}", ncnn.Mat(np.ascontiguousarray(array)).clone())
        ret, out = ex.extract("out0")
        result = (ret, np.round(np.array(out.numpy(), copy=True), 5).tolist() if ret == 0 else None)
    net.clear()
    return result


@pytest.mark.parametrize("layer", sorted(PROBES))
def test_each_id_of_the_row_is_read_and_the_next_is_not(tmp_path, layer):
    row = ncnn_layer_params.table()[layer]
    assert set().union(*(changes for _, _, changes in PROBES[layer])) == set(row)
    for inputs, base, changes in PROBES[layer]:
        assert validate(_write(tmp_path, layer, base, len(inputs))) == []  # warnings included
        before = _outcome(tmp_path, layer, base, inputs)
        assert before != "refused" and before[0] == 0, before
        for pid, value in changes.items():
            assert _outcome(tmp_path, layer, {**base, pid: value}, inputs) != before, (layer, pid)
        assert _outcome(tmp_path, layer, {**base, max(row) + 1: 1}, inputs) == before


def test_the_kinds_on_the_binding(tmp_path):
    """An int id given a float falls back to its default; a float id or a float-array id takes
    integers; Yolov3DetectionOutput's mask (float-only-array) does not, and pnnx-validate says so."""
    roi = ((FEAT, ROI), {1: 2, 2: 1.0})
    assert _outcome(tmp_path, "ROIPooling", {**roi[1], 0: 3.0}, roi[0]) == \
        _outcome(tmp_path, "ROIPooling", roi[1], roi[0])
    assert _outcome(tmp_path, "PriorBox", {**PRIORBOX, 0: [5], 11: 7}, PRIORBOX_INPUTS) == \
        _outcome(tmp_path, "PriorBox", {**PRIORBOX, 0: [5.0], 11: 7.0}, PRIORBOX_INPUTS)
    assert _outcome(tmp_path, "Yolov3DetectionOutput", {**YOLOV3, 4: [10, 15, 20, 25], 6: [32]}, (YOLO,)) == \
        _outcome(tmp_path, "Yolov3DetectionOutput", YOLOV3, (YOLO,))
    assert _outcome(tmp_path, "Yolov3DetectionOutput", {**YOLOV3, 5: [0, 1]}, (YOLO,)) == "refused"
    messages = [str(p) for p in validate(_write(tmp_path, "Yolov3DetectionOutput", {**YOLOV3, 5: [0, 1]}, 1))]
    assert len(messages) == 1 and "reads it as float-only-array, the file gives int-array" in messages[0], messages


def test_an_array_mixing_integers_and_floats_is_misread_and_fits_no_id(tmp_path):
    """ncnn types an array by its last element: PriorBox's min sizes `2,24,30.0` read 24 as raw bits."""
    mixed = {**PRIORBOX, 0: [24, 30.0], 1: [30.0, 36.0]}
    assert _outcome(tmp_path, "PriorBox", mixed, PRIORBOX_INPUTS) != \
        _outcome(tmp_path, "PriorBox", {**mixed, 0: [24.0, 30.0]}, PRIORBOX_INPUTS)
    assert _outcome(tmp_path, "PriorBox", {**mixed, 0: [24, 30]}, PRIORBOX_INPUTS) == \
        _outcome(tmp_path, "PriorBox", {**mixed, 0: [24.0, 30.0]}, PRIORBOX_INPUTS)
    messages = [str(p) for p in validate(_write(tmp_path, "PriorBox", mixed, 2))]
    assert len(messages) == 1 and "reads it as float-array, the file gives mixed-array [24, 30.0]" in messages[0]


@pytest.mark.parametrize("layer, params, inputs", [
    ("ROIAlign", {0: 2, 1: 2, 5: 2}, (FEAT, ROI)),  # version outside 0..1
    ("ROIAlign", {0: 2}, (FEAT, ROI)),  # no pooled height
    ("PriorBox", {2: [2.0]}, PRIORBOX_INPUTS),  # no min sizes
    ("YoloDetectionOutput", {0: 2, 1: 2, 4: [1.0, 1.0]}, (YOLO,)),  # biases for one box of two
    ("Yolov3DetectionOutput", {**YOLOV3, 5: [0.0, 2.0]}, (YOLO,)),  # mask past the biases
])
def test_the_loader_s_value_checks_named_in_the_table_s_header(tmp_path, layer, params, inputs):
    assert _outcome(tmp_path, layer, params, inputs) == "refused"
    assert "refuses" in ncnn_layer_params.TABLE.read_text(encoding="utf-8").split("\n" + layer)[0]
