"""ncnn on the CPU and on Vulkan, from ncnn.param + ncnn.bin.

An ncnn Mat holds up to 4 dims plus a batch count: each input is fed, and each output read,
with the torch dim the converter's generated `_ncnn.py` declares as the batch
(`ncnn.Mat(x, batch_index=B)`, `out.numpy(batch_index=B)`; 233: no batch axis, every dim in
the blob), as upstream's generator writes it. Where a converter declares nothing, dim 0 of an
input of rank >= 2 is its batch (upstream's convention before the 2026-07 batch work) and the
outputs are read whole (a batch of 1 put back in front). Integer inputs are fed as int32 (Embed
reads its indices so) unless the `_ncnn.py` feeds them as float values (`in0_values = in0.float()`,
the reference converter's form for integers that ncnn layers compute on), bool inputs as float32
0/1 (the converters' comparison and logic lowerings read them so). Outputs are read as floats
and compared by value (an integer or bool oracle exactly).
"""
from __future__ import annotations

import re

import numpy as np

from ..errors import RuntimeFailed
from .base import Backend

NO_BATCH = 233  # upstream's "this blob has no batch axis" batch index
_INPUT_BATCH = re.compile(r'ex\.input\("(in\d+)",.*batch_index=(\d+)')
_OUTPUT_BATCH = re.compile(r'\b(out\d+)\.numpy\([^)]*batch_index=(\d+)')
_VALUE_FEED = re.compile(r'\b(in\d+)_values = in\d+\.float\(\)')


def declared_batch_indices(ncnn_py) -> dict[str, int]:
    """in<i> / out<i> -> the batch index the converter's `_ncnn.py` feeds or reads that blob with."""
    try:
        text = open(ncnn_py).read()
    except (OSError, TypeError):
        return {}
    found = {m.group(1): int(m.group(2)) for m in _INPUT_BATCH.finditer(text)}
    found.update({m.group(1): int(m.group(2)) for m in _OUTPUT_BATCH.finditer(text)})
    return found


def declared_value_feeds(ncnn_py) -> set[str]:
    """in<i> that the converter's `_ncnn.py` feeds as float values (`in<i>_values = in<i>.float()`)."""
    try:
        return set(_VALUE_FEED.findall(open(ncnn_py).read()))
    except (OSError, TypeError):
        return set()


_COMPLEX_ANNOTATION = re.compile(r"#([^=\s]+)=\([^)]*\)c\d+")


def complex_outputs(pnnx_param) -> set[int]:
    """Positions of the graph outputs that pnnx.param types complex: ncnn carries those as real
    blobs with a trailing (real, imaginary) axis of 2."""
    try:
        lines = open(pnnx_param).read().splitlines()
    except (OSError, TypeError):
        return set()
    names = []
    for line in lines:
        parts = line.split()
        if parts and parts[0] == "pnnx.Output":
            complex_names = set(_COMPLEX_ANNOTATION.findall(line))
            names += [n in complex_names for n in parts[4:4 + int(parts[2])]]
    return {i for i, is_complex in enumerate(names) if is_complex}


# a layer line's type, then its name and the blanks after it (which pad names to a column);
# ncnn reads a name with %255s, so a longer one is left as written
_LAYER_NAME = re.compile(rb"^([ \t]*\S+[ \t]+)\S{1,255}[ \t]+", re.MULTILINE)


def unnamed_layers(ncnn_param) -> bytes | None:
    """ncnn.param's bytes with every layer's name (and the blanks after it) replaced by "- ":
    ncnn computes nothing from a layer's name (blobs, by which inputs and outputs are looked
    up, keep theirs). None when there is no file."""
    try:
        data = open(ncnn_param, "rb").read()
    except (OSError, TypeError):
        return None
    head, _, layers = data.partition(b"\n")          # the magic number
    counts, _, layers = layers.partition(b"\n")      # layer and blob counts
    return b"\n".join([head, counts, _LAYER_NAME.sub(rb"\1- ", layers)])


_IO_BLOB = re.compile(rb"(in|out)\d+")


def canonical_network(ncnn_param) -> bytes | None:
    """`unnamed_layers` with every blob but in<i> / out<i> renamed by its first appearance
    (#0, #1, ...): ncnn joins layers by blob names and looks up only the inputs and outputs by
    name, so two files with one canonical form make the same graph. A file whose inputs or
    outputs are not all so named (the harness orders those by name) or with a token ncnn would
    split (over 255 bytes) keeps its blob names. None when there is no file."""
    data = unnamed_layers(ncnn_param)
    if data is None:
        return None
    head, counts, *layers = data.split(b"\n")
    renamed, names, inputs_named, has_output = [], {}, True, False
    for line in layers:
        parts = line.split()
        if len(parts) < 4 or not parts[2].isdigit() or not parts[3].isdigit():
            renamed.append(line)
            continue
        n_in, n_out = int(parts[2]), int(parts[3])
        blobs = parts[4:4 + n_in + n_out]
        if parts[0] == b"Input":
            inputs_named &= all(_IO_BLOB.fullmatch(b) for b in blobs)
        has_output |= any(b.startswith(b"out") and _IO_BLOB.fullmatch(b) for b in blobs)
        if any(len(b) > 255 for b in blobs):
            return data
        blobs = [b if _IO_BLOB.fullmatch(b) else names.setdefault(b, b"#%d" % len(names)) for b in blobs]
        renamed.append(b" ".join(parts[:4] + blobs + parts[4 + n_in + n_out:]))
    if not (inputs_named and has_output):
        return data
    return b"\n".join([head, counts, *renamed])


def _as_complex(y: np.ndarray) -> np.ndarray:
    if y.shape[-1:] != (2,):
        raise RuntimeFailed(f"complex output read as shape {y.shape}, without a trailing (real, imag) axis")
    return (y[..., 0] + 1j * y[..., 1]).astype(np.complex64)


FP16_FLAGS = ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic",
              "use_bf16_packed", "use_bf16_storage")


def _blob_dtype(x: np.ndarray, as_values: bool = False):
    """ncnn layers that take indices (Embed) read the blob's 4-byte words as int32, as the
    converters' `_ncnn.py` feeds them: integer inputs keep their values as int32 bits, unless
    the `_ncnn.py` feeds them as float values (`as_values`). ncnn blobs carry a bool as a float
    0/1, so bool inputs are fed as float32."""
    if x.dtype == np.bool_ or as_values:
        return np.float32
    return np.int32 if np.issubdtype(x.dtype, np.integer) else np.float32


def _blob_order(names: list[str], prefix: str) -> list[str]:
    """in0, in1, ... in numeric order (upstream and reference both name blobs so)."""
    def key(n):
        m = re.fullmatch(rf"{prefix}(\d+)", n)
        return (0, int(m.group(1))) if m else (1, n)
    return sorted(names, key=key)


class _NcnnBackend(Backend):
    consumes = ("ncnn.param", "ncnn.bin")
    runtime = "ncnn"
    pure = True  # one thread, fixed options: the same files give the same outputs
    vulkan = False

    def applicable(self, case):
        for spec in case.inputs:
            if len(spec.shape) > 5:
                return f"unsupported: ncnn blobs have at most 4 dimensions (input rank {len(spec.shape)})"
        return None

    def configure(self, opt, precision: str) -> None:
        raise NotImplementedError

    def content(self, artefacts):
        """What prepare() and run() read: ncnn.param less its layer and inner blob names
        (`canonical_network`), ncnn.bin, what `_ncnn.py` declares (each blob's batch index, the inputs fed as values)
        and the outputs pnnx.param types complex. The routes of a case often write the same
        network with other layer or blob names or another `_ncnn.py` text; it runs once."""
        paths = artefacts.paths
        declared = (sorted(declared_batch_indices(paths.get("ncnn.py")).items()),
                    sorted(declared_value_feeds(paths.get("ncnn.py"))), sorted(complex_outputs(paths.get("pnnx.param"))))
        return [canonical_network(paths.get("ncnn.param")), paths.get("ncnn.bin"), repr(declared).encode()]

    def prepare(self, artefacts, precision):
        import ncnn

        self.net = ncnn.Net()
        self.configure(self.net, precision)
        self.net.opt.num_threads = 1
        if self.net.load_param(str(artefacts.paths["ncnn.param"])) != 0:
            raise RuntimeFailed("ncnn load_param failed")
        if self.net.load_model(str(artefacts.paths["ncnn.bin"])) != 0:
            raise RuntimeFailed("ncnn load_model failed")
        self.in_names = _blob_order(list(self.net.input_names()), "in")
        # ncnn lists every blob nobody consumes as an output, e.g. an input only read for its
        # shape (view_as); the converters name the real outputs out0, out1, ...
        outs = list(self.net.output_names())
        self.out_names = _blob_order([n for n in outs if re.fullmatch(r"out\d+", n)] or outs, "out")
        self.batch_index = declared_batch_indices(artefacts.paths.get("ncnn.py"))
        self.value_feeds = declared_value_feeds(artefacts.paths.get("ncnn.py"))
        self.complex_outputs = complex_outputs(artefacts.paths.get("pnnx.param"))

    def run(self, inputs):
        import ncnn

        if len(inputs) != len(self.in_names):
            raise RuntimeError(f"ncnn.param has {len(self.in_names)} inputs, case gives {len(inputs)}")
        batched = False  # an undeclared input fed with its dim 0 as the batch
        with self.net.create_extractor() as ex:
            for name, x in zip(self.in_names, inputs):
                x = np.asarray(x)
                x = x.reshape(1) if x.ndim == 0 else x
                b = self.batch_index.get(name, 0 if x.ndim >= 2 else NO_BATCH)
                if b != NO_BATCH and not 0 <= b < x.ndim or b != NO_BATCH and x.ndim < 2:
                    raise RuntimeFailed(f"{name}: batch_index={b} for a {x.ndim}-d input")
                batched |= name not in self.batch_index and b == 0 and x.shape[0] == 1
                # a named array: ncnn.Mat only points at it until clone() copies it
                data = np.ascontiguousarray(x, dtype=_blob_dtype(x, name in self.value_feeds))
                ex.input(name, ncnn.Mat(data, batch_index=b).clone())
            outs = []
            for name in self.out_names:
                ret, mat = ex.extract(name)
                if ret != 0:
                    raise RuntimeError(f"ncnn extract {name} returned {ret}")
                if name in self.batch_index:
                    y = np.array(mat.numpy(batch_index=self.batch_index[name]), copy=True)
                else:
                    y = np.array(mat.numpy(), copy=True)
                    y = y[None] if batched else y
                outs.append(_as_complex(y) if len(outs) in self.complex_outputs else y)
        return outs

    def release(self):
        if getattr(self, "net", None) is not None:
            self.net.clear()
        self.net = None

    def describe(self):
        import ncnn

        return {"name": self.name, "version": ncnn.__version__, "device": self.device}


class NcnnCpuBackend(_NcnnBackend):
    name = "ncnn-cpu"
    # ncnn's default Option stores activations in fp16 where the CPU allows it
    precisions = {"fp32": None, "default": "fp16"}
    device = "cpu"

    def configure(self, net, precision):
        net.opt.use_vulkan_compute = False
        if precision == "fp32":
            for flag in FP16_FLAGS:
                setattr(net.opt, flag, False)


_VK = {}  # the Vulkan device and the net holding the pipeline cache, kept for the life of the worker

# a network of one Input layer: loading it makes its net's pipeline cache
_EMPTY_NET = "7767517\n1 1\nInput in0 0 1 in0\n"


def _pipeline_cache_holder(index: int):
    """A net that only holds an ncnn pipeline cache. ncnn makes one per net at load_model and
    deletes it at clear(), so every case would compile its layers' shaders (glslang, then
    lavapipe) afresh; a net whose Option carries another net's cache (`Option.pipeline_cache`,
    which the Python binding copies with the Option without naming it) uses that one, keyed
    by shader, options and specialisation, and leaves it be. The same pipelines, made once."""
    import ncnn

    holder = ncnn.Net()
    holder.opt.use_vulkan_compute = True
    holder.set_vulkan_device(index)
    if holder.load_param_mem(_EMPTY_NET) != 0 or holder.load_model(ncnn.DataReaderFromEmpty()) != 0:
        raise RuntimeFailed("ncnn could not load a one-layer network on the Vulkan device")
    return holder


# layers loaded through one pipeline cache before the next: its pipelines (lavapipe's compiled
# shaders among them) stay in memory (~0.1 MB a layer; an op case has 2-5 layers, a zoo network
# 50-700)
PIPELINE_CACHE_LAYERS = 2000


def vulkan_device():
    import ncnn

    if "device" not in _VK:
        if ncnn.get_gpu_count() == 0:
            raise RuntimeFailed("asked for Vulkan, but ncnn found no Vulkan device")
        index = ncnn.get_default_gpu_index()
        _VK["index"] = index
        _VK["device"] = ncnn.get_gpu_device(index)
        _VK["name"] = ncnn.get_gpu_info(index).device_name()
    return _VK


def shared_pipeline_option(vk: dict):
    """ncnn's default Option carrying the worker's pipeline cache (`_pipeline_cache_holder`),
    a fresh one once PIPELINE_CACHE_LAYERS layers went through it (the caller adds each net's
    to vk["layers"]). Called only while no net holds pipelines (each run releases its net),
    so dropping the old cache frees nothing in use."""
    if vk.get("layers", PIPELINE_CACHE_LAYERS) >= PIPELINE_CACHE_LAYERS:
        if vk.get("holder") is not None:
            vk["holder"].clear()
        vk["holder"], vk["layers"] = _pipeline_cache_holder(vk["index"]), 0
    return vk["holder"].opt


class NcnnVulkanBackend(_NcnnBackend):
    name = "ncnn-vulkan"
    precisions = {"fp32": None, "fp16": "fp16"}
    vulkan = True

    def configure(self, net, precision):
        vk = vulkan_device()
        self.device = vk["name"]
        net.opt = shared_pipeline_option(vk)
        net.opt.use_vulkan_compute = True
        net.set_vulkan_device(vk["index"])
        half = precision == "fp16"
        for flag in ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic"):
            setattr(net.opt, flag, half)
        net.opt.use_bf16_storage = False
        net.opt.use_bf16_packed = False

    def prepare(self, artefacts, precision):
        try:
            super().prepare(artefacts, precision)
        finally:  # the layers whose pipelines went into the shared cache
            if "holder" in _VK and self.net is not None:
                _VK["layers"] += len(self.net.layers())
        # ncnn silently falls back to the CPU when it cannot use the device
        if not self.net.opt.use_vulkan_compute or self.net.vulkan_device() is None:
            raise RuntimeFailed("asked for Vulkan, but ncnn fell back to the CPU")
