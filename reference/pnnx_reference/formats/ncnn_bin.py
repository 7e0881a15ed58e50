"""ncnn.bin: every layer's weights concatenated in layer order.

A weight blob is `[u32 tag when the layer reads it tagged][data][padding to 4 bytes]`.
Tag 0x01306B47 means fp16 data (converted as upstream does, see fp16_round_half_away), tag 0
means fp32. Biases, BatchNorm/LayerNorm/PReLU tables and MemoryData carry no tag.
`walk_bin` checks a file against a layer list for the layer types it knows.
"""
from __future__ import annotations

import struct
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import FormatError
from .ncnn_param import NcnnLayer

FP16_TAG = 0x01306B47
FP32_TAG = 0x00000000
FP16_PAD = 0x2283  # upstream's fixed filler for odd fp16 counts ("model hash consistency")


CHUNK_ELEMENTS = 1 << 20  # a weight is converted and written this many elements at a time
BLOCK_ELEMENTS = 1 << 18  # and fp16-packed this many at a time (1 MB: the passes stay in cache)


def fp16_round_half_away(array) -> np.ndarray:
    """float32 -> float16 bits exactly as the upstream pnnx binary (20261020) writes them.

    Measured on its output (tests/formats/test_formats_upstream.py): the mantissa is
    rounded half away from zero (add half an fp16 ulp, then drop 13 bits; a carry moves
    into the exponent, so 65520 becomes inf); values below the fp16 normal range become
    +-0 (no fp16 subnormals, decided before rounding); overflow gives +-inf; NaN gives
    the quiet NaN 0x7e00 with its sign. The design notes call it truncating; the bytes
    say otherwise, and the bytes win. Works a chunk at a time in 32-bit integers."""
    bits = np.ascontiguousarray(array, dtype=np.float32).reshape(-1).view(np.uint32)
    out = np.empty(bits.shape, np.uint16)
    for start in range(0, bits.size, BLOCK_ELEMENTS):
        out[start:start + BLOCK_ELEMENTS] = _half_bits_fast(bits[start:start + BLOCK_ELEMENTS])
    return out.reshape(np.shape(array))


def _half_bits_fast(bits: np.ndarray) -> np.ndarray:
    """numpy's IEEE conversion (round half to even, subnormals), which gives upstream's bits
    for every float32 whose fp16 exponent is in the normal range and whose dropped 13 bits
    are not exactly half an ulp; the others (ties, tiny, huge, inf, NaN: rare in weights)
    go through the exact rule. Several times faster than the rule on every element."""
    out = _ieee_half_bits(bits)
    outside = ((bits >> 23) & 0xFF) - np.uint32(113) > np.uint32(142 - 113)  # fp16 exponent not 1..30
    rare = np.flatnonzero(outside | ((bits & 0x1FFF) == 0x1000))
    out[rare] = _half_bits(bits[rare])
    return out


def _ieee_half_bits(bits: np.ndarray) -> np.ndarray:
    """float32 bits -> float16 bits, IEEE round half to even. Through torch's vectorised cast
    when the process has torch loaded (the converter does), about twice numpy's speed; the
    same bits for every value but a NaN (which the exact rule redoes anyway)."""
    torch = sys.modules.get("torch")
    if torch is None:
        with np.errstate(over="ignore", invalid="ignore"):
            return bits.view(np.float32).astype(np.float16).view(np.uint16)
    with warnings.catch_warnings():  # a read-only weight: only read here
        warnings.simplefilter("ignore", UserWarning)
        source = torch.from_numpy(bits.view(np.float32))
    return source.to(torch.float16).view(torch.int16).numpy().view(np.uint16)


def _half_bits(bits: np.ndarray) -> np.ndarray:
    significand = bits & 0x7FFFFF
    exponent = ((bits >> 23) & 0xFF).view(np.int32)
    unbiased = exponent - (127 - 15)             # the fp16 exponent field, before clamping
    magnitude = (significand + 0x1000) >> 13     # half an fp16 ulp added, 13 bits dropped
    magnitude += np.clip(unbiased, 0, 31).view(np.uint32) << 10
    np.minimum(magnitude, 0x7C00, out=magnitude)  # overflow and infinities: inf
    magnitude[unbiased <= 0] = 0                 # below the normal range (and zero): 0
    magnitude[(exponent == 0xFF) & (significand != 0)] = 0x7E00  # NaN: the quiet NaN
    magnitude |= (bits >> 16) & 0x8000
    return magnitude


def _raw_bytes(array: np.ndarray) -> bytes:
    if array.dtype == np.int64:  # upstream narrows i64 with saturation
        array = array.clip(np.iinfo(np.int32).min, np.iinfo(np.int32).max).astype(np.int32)
    return array.astype(array.dtype.newbyteorder("<")).tobytes()


def weight_chunks(array, tagged: bool, fp16: bool, dtype=None):
    """One weight blob as a few bytes-like pieces, converted a chunk at a time (never a whole
    copy of a large weight; each chunk first cast to `dtype` when given). `fp16` applies only
    to tagged blobs (untagged data is raw)."""
    flat = np.asarray(array).reshape(-1)
    chunks = (flat[start:start + CHUNK_ELEMENTS].astype(dtype or flat.dtype, copy=False)
              for start in range(0, flat.size, CHUNK_ELEMENTS))
    if not tagged:
        size = 0
        for chunk in chunks:
            data = _raw_bytes(chunk)
            size += len(data)
            yield data
        yield b"\0" * (-size % 4)
    elif not fp16:
        yield struct.pack("<I", FP32_TAG)
        for chunk in chunks:
            yield np.ascontiguousarray(chunk, "<f4").data.cast("B")
    else:
        yield struct.pack("<I", FP16_TAG)
        for chunk in chunks:
            yield fp16_round_half_away(chunk).astype("<u2", copy=False).data.cast("B")
        if flat.size % 2:
            yield struct.pack("<H", FP16_PAD)


def pack_weight(array, tagged: bool, fp16: bool) -> bytes:
    """One weight blob: `[u32 tag][data][padding]` (see weight_chunks)."""
    return b"".join(weight_chunks(array, tagged, fp16))


# --- walking a file against its layers -----------------------------------------------
@dataclass(frozen=True)
class Blob:
    tagged: bool
    count: int  # elements (fp32 when untagged)


def _i(layer: NcnnLayer, pid: int, default: int = 0) -> int:
    value = layer.params.get(pid, default)
    return value if isinstance(value, int) else default


def _conv(layer):  # Convolution*, Deconvolution*: 0=num_output 5=bias_term 6=weight_data_size
    # dynamic weight (supplied as an input blob): 19 for convolutions; deconvolutions use 19
    # for output_pad_bottom and 28 for the flag
    if _i(layer, 28 if layer.type.startswith("Deconvolution") else 19):
        return []
    blobs = [Blob(True, _i(layer, 6))]
    return blobs + ([Blob(False, _i(layer, 0))] if _i(layer, 5) else [])


def _innerproduct(layer):  # 0=num_output 1=bias_term 2=weight_data_size
    return [Blob(True, _i(layer, 2))] + ([Blob(False, _i(layer, 0))] if _i(layer, 1) else [])


def _embed(layer):  # 0=num_output 2=bias_term 3=weight_data_size
    return [Blob(True, _i(layer, 3))] + ([Blob(False, _i(layer, 0))] if _i(layer, 2) else [])


def _batchnorm(layer):
    return [Blob(False, _i(layer, 0))] * 4


def _layernorm(layer):  # 0=affine_size 2=affine
    return [Blob(False, _i(layer, 0))] * 2 if _i(layer, 2) else []


def _groupnorm(layer):  # 1=channels 3=affine
    return [Blob(False, _i(layer, 1))] * 2 if _i(layer, 3) else []


def _prelu(layer):
    return [Blob(False, _i(layer, 0))]


def _normalize(layer):  # 3=scale_data_size, read even when 1=channel_shared
    return [Blob(False, _i(layer, 3))]


def _rmsnorm(layer):  # 0=affine_size 2=affine (default 1)
    return [Blob(False, _i(layer, 0))] if _i(layer, 2, 1) else []


def _scale(layer):  # 0=scale_data_size (-233: scale is an input blob) 1=bias_term
    size = _i(layer, 0)
    return ([Blob(False, size)] if size != -233 else []) + ([Blob(False, size)] if _i(layer, 1) else [])


def _bias(layer):  # 0=bias_data_size
    return [Blob(False, _i(layer, 0))]


def _memorydata(layer):
    return [Blob(False, _i(layer, 0, 1) * _i(layer, 1, 1) * _i(layer, 11, 1) * _i(layer, 2, 1))]


def _gemm(layer):  # 4/5/6 constant A/B/C, 7/8/9 M/N/K, 10 broadcast type of C
    m, n, k = _i(layer, 7), _i(layer, 8), _i(layer, 9)
    blobs = [Blob(True, m * k)] if _i(layer, 4) else []
    blobs += [Blob(True, n * k)] if _i(layer, 5) else []
    c_type = _i(layer, 10)
    if _i(layer, 6) and c_type != -1:  # C is tagged too (measured on upstream output)
        blobs.append(Blob(True, {0: 1, 1: m, 2: m, 3: m * n, 4: n}.get(c_type, 0)))
    return blobs


def _mha(layer):  # 0=embed_dim 2=weight_data_size 3=kdim 4=vdim
    embed, wds = _i(layer, 0), _i(layer, 2)
    qdim = wds // embed if embed else 0
    return [Blob(True, wds), Blob(False, embed), Blob(True, embed * _i(layer, 3, embed)),
            Blob(False, embed), Blob(True, embed * _i(layer, 4, embed)), Blob(False, embed),
            Blob(True, wds), Blob(False, qdim)]


WEIGHT_LAYOUTS: dict[str, Callable[[NcnnLayer], list[Blob]]] = {
    **{t: _conv for t in ("Convolution", "ConvolutionDepthWise", "Convolution1D",
                          "ConvolutionDepthWise1D", "Convolution3D", "ConvolutionDepthWise3D",
                          "Deconvolution", "DeconvolutionDepthWise", "Deconvolution1D",
                          "DeconvolutionDepthWise1D", "Deconvolution3D", "DeconvolutionDepthWise3D")},
    "InnerProduct": _innerproduct, "Embed": _embed, "BatchNorm": _batchnorm,
    "LayerNorm": _layernorm, "GroupNorm": _groupnorm, "PReLU": _prelu,
    "MemoryData": _memorydata, "Gemm": _gemm, "MultiHeadAttention": _mha,
    "Normalize": _normalize, "RMSNorm": _rmsnorm, "Scale": _scale, "Bias": _bias,
}
# Layers that never read weights (anything else unknown stops the walk).
WEIGHTLESS = frozenset("""Input Split Concat Slice ReLU ReLU6 Clip Sigmoid TanH Swish HardSwish
HardSigmoid Mish GELU ELU SELU Softmax LogSoftmax BinaryOp UnaryOp Eltwise Pooling Pooling1D
Pooling3D Reshape Flatten Permute Crop Interp Padding Dropout Noop Reduction Squeeze ExpandDims
Tile ShuffleChannel Sum Erf Exp Log Power Threshold AbsVal ArgMax Cast Pixelshuffle
PixelShuffle Deconvolution_disabled MVN LRN Packing Requantize Dequantize Quantize
Flip CopyTo Shrink CumulativeSum Fold Unfold GridSample Einsum Spectrogram InverseSpectrogram
Diag CELU Softplus""".split())


@dataclass
class WalkResult:
    problems: list[tuple[NcnnLayer | None, str]]
    consumed: int
    complete: bool  # False when an unknown layer type stopped the walk


class _Walker:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, layer: NcnnLayer, blob: Blob) -> str | None:
        nbytes = 4 * blob.count
        if blob.tagged:
            if self.pos + 4 > len(self.data):
                return self.short(layer, 4)
            tag = struct.unpack_from("<I", self.data, self.pos)[0]
            if tag == FP16_TAG:
                nbytes = 2 * blob.count + 2 * (blob.count % 2)
            elif tag != FP32_TAG:
                return f"layer {layer.name}: unsupported weight tag 0x{tag:08x} at offset {self.pos}"
            nbytes += 4
        if self.pos + nbytes > len(self.data):
            return self.short(layer, nbytes)
        self.pos += nbytes
        return None

    def short(self, layer: NcnnLayer, nbytes: int) -> str:
        return (f"layer {layer.name} needs {nbytes} bytes at offset {self.pos} "
                f"but ncnn.bin has only {len(self.data) - self.pos} left")


def walk_bin(data: bytes, layers: list[NcnnLayer]) -> WalkResult:
    """Check ncnn.bin bytes against the layers' weight layouts, in layer order."""
    walker = _Walker(data)
    for layer in layers:
        if layer.type in WEIGHTLESS:
            continue
        layout = WEIGHT_LAYOUTS.get(layer.type)
        if layout is None:
            return WalkResult([], walker.pos, False)
        for blob in layout(layer):
            problem = walker.take(layer, blob)
            if problem:
                return WalkResult([(layer, problem)], walker.pos, False)
    problems: list[tuple[NcnnLayer | None, str]] = []
    if walker.pos != len(data):
        problems.append((None, f"ncnn.bin has {len(data) - walker.pos} bytes after the last layer's weights"))
    return WalkResult(problems, walker.pos, True)


def read_and_walk(bin_path, layers: list[NcnnLayer]) -> WalkResult:
    try:
        data = Path(bin_path).read_bytes()  # weights are needed whole by ncnn too
    except OSError as err:
        raise FormatError(bin_path, f"cannot read: {err.strerror}") from None
    return walk_bin(data, layers)
