"""Issue 33 item 2: the param ids (and their kinds) each layer of the pinned ncnn reads
(formats/ncnn_layer_params.tsv), checked by pnnx-validate: an id the layer does not read is a
warning (an error with --strict), a value of the wrong kind an error. The table against the
registry and the binding's own reading, a hand-written bad param, and the ids our emitter writes."""
import tempfile
from pathlib import Path

import ncnn  # pinned in requirements/runtime.txt: a missing binding is a failure, not a skip
import numpy as np
import pytest

from pnnx_op_cases.registry import get_case, select
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import PnnxError
from pnnx_reference.formats import ncnn_layer_params, ncnn_layers, ncnn_param
from pnnx_reference.validate import main, validate

# op cases that, in a sweep of the full tier, were the first to write some (layer, id, kind):
# together they write every id our emitter writes over the op cases
SAMPLE = [
    'F.adaptive_avg_pool1d/o1_global', 'F.adaptive_avg_pool1d/o2_b2_c13', 'F.adaptive_avg_pool2d/o1_global',
    'F.adaptive_avg_pool2d/o2_b2_c13', 'F.adaptive_avg_pool3d/o1_global', 'F.adaptive_avg_pool3d/o2_b2_c13',
    'F.affine_grid/r4_ac_b2', 'F.affine_grid/r4_b2_then_sample', 'F.affine_grid/r4_b3',
    'F.alpha_dropout/eval_inplace', 'F.avg_pool1d/k2', 'F.avg_pool2d/k2', 'F.avg_pool3d/k2', 'F.batch_norm/c1',
    'F.batch_norm/r4_c3', 'F.bilinear/out1', 'F.bilinear/r1', 'F.bilinear/r2', 'F.celu/alpha0p5',
    'F.celu/r4_c3', 'F.celu/r4_noncontig', 'F.conv1d/c12_same', 'F.conv1d/c16_g4', 'F.conv1d/c3_k3',
    'F.conv1d/noncontig_channel_stride', 'F.conv2d/c12_same', 'F.conv2d/c13_k3_d2_nobias', 'F.conv2d/c16_g4',
    'F.conv2d/c3_k3', 'F.conv2d/weight_input', 'F.conv3d/c12_same', 'F.conv3d/c13_k3_d2_nobias',
    'F.conv3d/c16_g4', 'F.conv3d/c3_k3', 'F.conv3d/noncontig_channel_stride', 'F.conv_transpose1d/c12_k2_s2',
    'F.conv_transpose1d/c16_g4_s2', 'F.conv_transpose1d/c3_k3', 'F.conv_transpose2d/c12_k2_s2',
    'F.conv_transpose2d/c16_g4_s2', 'F.conv_transpose2d/c3_k3', 'F.conv_transpose3d/c12_k2_s2',
    'F.conv_transpose3d/c16_g4_s2', 'F.conv_transpose3d/c3_k3', 'F.cosine_similarity/bcast',
    'F.cosine_similarity/d1_r4', 'F.elu/alpha0p3', 'F.elu/r4_c3', 'F.embedding/max_norm', 'F.embedding/r2_idx',
    'F.fold/c13_k1', 'F.fold/o8_k3', 'F.gelu/tanh', 'F.glu/d0_r1', 'F.glu/dneg1',
    'F.grid_sample/bilinear_zeros', 'F.group_norm/g13_c13_noaffine', 'F.group_norm/g2_c8_r4',
    'F.hardshrink/lambd0p2', 'F.hardshrink/r4_c3', 'F.hardsigmoid/r0_scalar', 'F.hardsigmoid/r4_c3',
    'F.hardswish/r0_scalar', 'F.hardswish/r4_c3', 'F.hardtanh/0_6', 'F.hardtanh/r4_c3',
    'F.instance_norm/c8_eps1e-3', 'F.instance_norm/r4_c3', 'F.interpolate/bicubic_s2',
    'F.interpolate/bicubic_size_ac', 'F.interpolate/nearest_s2_r4', 'F.layer_norm/all3',
    'F.layer_norm/last_c16', 'F.leaky_relu/r0_scalar', 'F.leaky_relu/r4_c3', 'F.local_response_norm/size1_c3',
    'F.local_response_norm/size3_r4', 'F.local_response_norm/size3_r4-nobatch', 'F.log_softmax/d0_r1',
    'F.log_softmax/d1_c13', 'F.normalize/cosine_window_attention_b2', 'F.normalize/default_dim1',
    'F.pad/constant_negative', 'F.pad/constant_r4', 'F.pad/constant_value_r4_all',
    'F.pixel_shuffle/r1_identity', 'F.pixel_shuffle/r2_c12', 'F.pixel_unshuffle/r1_identity',
    'F.pixel_unshuffle/r2_c3', 'F.prelu/c13_r3', 'F.prelu/c1_shared', 'F.rms_norm/all3', 'F.rms_norm/last_c16',
    'F.selu/r0_scalar', 'F.selu/r4_c3', 'F.softmax/d0_r1', 'F.softmax/d1_c13', 'F.softplus/beta0p5_thr1',
    'F.threshold/r4_c3', 'F.unfold/c1_k1', 'F.unfold/k3', 'Tensor.argmax/all', 'Tensor.argmax/d1',
    'Tensor.chunk/c1', 'Tensor.chunk/c2_d1', 'Tensor.copy/broadcast_src', 'Tensor.copy/into_slice',
    'Tensor.cumsum/bool', 'Tensor.cumsum/d1', 'Tensor.expand/c_to_hw', 'Tensor.fill/scalar',
    'Tensor.fill/scalar-batch3', 'Tensor.flip/d1', 'Tensor.to/f32_to_f16',
    'Tensor.view/channel_shuffle_pattern', 'nn.AdaptiveAvgPool2d/o3', 'nn.ChannelShuffle/g2',
    'nn.ConstantPad2d/p2', 'nn.ConstantPad3d/p2', 'nn.Conv1d/k3_p1_leaky_relu', 'nn.Conv1d/k3_p2_reflect',
    'nn.Conv2d/k1_relu6', 'nn.Conv2d/k3_after_zero_pad', 'nn.Conv2d/k3_dw_relu', 'nn.Conv2d/k3_g2',
    'nn.Conv2d/k3_p2_reflect', 'nn.Conv3d/k3_p2_reflect', 'nn.ConvTranspose2d/k3_g2',
    'nn.EmbeddingBag/mean_offsets', 'nn.GRU/batch_first', 'nn.GRUCell/default', 'nn.LSTM/batch_first',
    'nn.Linear/b1_relu', 'nn.MultiheadAttention/cross_kdim_vdim_bf_b1', 'nn.RNN/batch_first',
    'nn.Transformer/l1', 'nn.Transformer/l1_tgt_mask', 'torch.diag/int', 'torch.diag/vec_to_mat',
    'torch.einsum/attn_scores', 'torch.einsum/matmul', 'torch.istft/from_complex_input', 'torch.istft/length',
    'torch.istft/roundtrip_n16_h4', 'torch.slice_scatter/d0', 'torch.std/all', 'torch.std/d1',
]


def test_the_table_covers_every_layer_the_pinned_ncnn_creates():
    table = ncnn_layer_params.table()
    assert sorted(set(ncnn_layers.table()) - set(table)) == []  # a layer with no row goes unchecked
    assert set(table) <= set(ncnn_layers.table())
    assert all(kind in ncnn_layer_params.KINDS for ids in table.values() for kind in ids.values())
    assert all(0 <= pid < 30 for ids in table.values() for pid in ids)  # 30 and 31 are the loader's


def _run(tmp_path, layer_line: str) -> list[float]:
    param = tmp_path / "k.ncnn.param"
    param.write_text(f"7767517\n2 2\nInput in0 0 1 in0\n{layer_line}\n")
    (tmp_path / "k.ncnn.bin").write_bytes(b"")
    net = ncnn.Net()
    net.opt.use_vulkan_compute = False
    assert net.load_param(str(param)) == 0 and net.load_model(str(tmp_path / "k.ncnn.bin")) == 0
    with net.create_extractor() as ex:
        ex.input("in0", ncnn.Mat(np.array([-3, -0.5, 0.5, 3], np.float32)).clone())
        ret, out = ex.extract("out0")
        result = np.array(out.numpy(), copy=True).tolist()
    net.clear()
    assert ret == 0
    return result


def test_the_kind_rules_are_the_binding_s(tmp_path):
    """A float where ncnn reads an int is dropped for the default (MUL becomes ADD); an integer
    where it reads a float is read; an array where it reads a scalar is dropped."""
    mul = "BinaryOp b 1 1 in0 out0 0=2 1=1 2=2.000000e+00"
    assert _run(tmp_path, mul) == [-6, -1, 1, 6]
    assert _run(tmp_path, mul.replace("0=2 ", "0=2.0 ")) == [-1, 1.5, 2.5, 5]  # 0=ADD, the default
    assert _run(tmp_path, "ReLU r 1 1 in0 out0 0=1") == [-3, -0.5, 0.5, 3]  # slope 1.0
    assert _run(tmp_path, "Clip c 1 1 in0 out0 -23300=1,0.0 1=1.0") == [-3, -0.5, 0.5, 1]  # min dropped
    for line, kind in ((mul.replace("0=2 ", "0=2.0 "), "int"), ("ReLU r 1 1 in0 out0 0=1", None),
                       ("Clip c 1 1 in0 out0 -23300=1,0.0 1=1.0", "float"),
                       ("Reduction r 1 1 in0 out0 0=0 1=0 -23303=1,0.0 4=1 5=1", "int-array"),
                       ("Reshape r 1 1 in0 out0 6=2", "string")):
        param = tmp_path / "v.ncnn.param"
        param.write_text(f"7767517\n2 2\nInput in0 0 1 in0\n{line}\n")
        messages = [str(p) for p in validate(param)]
        if kind is None:
            assert messages == []
        else:
            assert len(messages) == 1 and f"reads it as {kind}, the file gives" in messages[0], messages


def test_an_id_the_layer_does_not_read_is_a_warning_and_strict_makes_it_an_error(tmp_path, capsys):
    param = tmp_path / "m.ncnn.param"
    param.write_text("7767517\n2 2\nInput in0 0 1 in0 0=4 31=1 -23330=4,1,4,1,1\nSigmoid s 1 1 in0 out0 3=1\n")
    assert ncnn.Net().load_param(str(param)) == 0  # the loader ignores the stray id
    problems = validate(param)
    assert [(p.line, p.warning, p.message) for p in problems] == \
        [(4, True, "layer s: param 3: ncnn's Sigmoid reads no param 3 (its loader ignores it)")]
    assert main([str(param)]) == 0
    out = capsys.readouterr()
    assert out.out == f"{param}: ok\n" and "warning: layer s: param 3" in out.err
    assert main(["--strict", str(param)]) == 1
    assert "ok" not in capsys.readouterr().out


def _written_ids(case_ids, allow_refusal=True) -> dict[tuple[str, int], str]:
    """(layer, id) -> first case id, over what our emitter writes for the cases."""
    folder = Path(tempfile.mkdtemp(prefix="ncnn_ids_"))
    written = {}
    for case_id in case_ids:
        case = get_case(case_id)
        base = folder / case_id.replace("/", "__")
        try:
            write_ncnn(capture(case.make_model(), tuple(case.make_inputs())), f"{base}.ncnn.param",
                       f"{base}.ncnn.bin", f"{base}_ncnn.py")
        except PnnxError:  # a case our capture or the ncnn emitter refuses writes no ncnn file
            if allow_refusal:
                continue
            raise
        problems = validate(f"{base}.ncnn.param")
        assert problems == [], (case_id, [str(p) for p in problems])  # warnings included
        for layer in ncnn_param.load(f"{base}.ncnn.param").layers:
            for pid in layer.params:
                written.setdefault((layer.type, pid), case_id)
    return written


def test_our_emitter_writes_only_ids_ncnn_reads():
    written = _written_ids(SAMPLE, allow_refusal=False)
    assert len({layer for layer, _ in written}) >= 70  # the sample reaches the emitter's layers
    assert ("Convolution", 7) not in written  # the ungrouped convolution of the reflect path


@pytest.mark.slow
def test_our_emitter_writes_only_ids_ncnn_reads_over_the_smoke_tier():
    written = _written_ids([case.id for case in select(tier="smoke")], allow_refusal=True)
    assert len({layer for layer, _ in written}) >= 60  # the smoke tier reaches 65 layer types
