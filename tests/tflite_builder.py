"""A small builder of TFLite flatbuffers for tests: single-op and few-op models with chosen quant params.

Uses the flatbuffers builder functions of the `tflite` schema package (TensorFlow is not available).
Typical use:

    b = ModelBuilder()
    x = b.input("x", (1, 8, 8, 4), "int8", scale=0.05, zero_point=-3)
    w = b.const("w", wdata, "int8", scale=wscales, quantized_dimension=0)
    y = b.tensor("y", (1, 8, 8, 6), "int8", scale=0.1, zero_point=2)
    b.op("CONV_2D", [x, w, -1], [y], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1)
    b.output(y)
    path = b.save(tmp_path / "conv.tflite")

`old_schema=True` writes what converters wrote before the 2.4-era schema changes: operator codes carry
only `deprecated_builtin_code` (the int32 `builtin_code` field is left absent, i.e. 0) and quantization
tables omit `quantized_dimension` (so it reads as 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import importlib

import flatbuffers
import numpy as np
import tflite
from tflite.BuiltinOperator import BuiltinOperator
from tflite.BuiltinOptions import BuiltinOptions
from tflite.TensorType import TensorType

SAME = 0
VALID = 1
_M = {m: importlib.import_module(f"tflite.{m}") for m in (
    "Buffer", "QuantizationParameters", "Tensor", "Operator", "OperatorCode", "SubGraph", "Model")}
ACT = {
    "NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3,
}
_TYPES = {
    "float32": (TensorType.FLOAT32, np.float32),
    "int32": (TensorType.INT32, np.int32),
    "uint8": (TensorType.UINT8, np.uint8),
    "int64": (TensorType.INT64, np.int64),
    "int16": (TensorType.INT16, np.int16),
    "int8": (TensorType.INT8, np.int8),
}


@dataclass
class _Tensor:
    name: str
    shape: tuple[int, ...]
    dtype: str
    buffer: int
    scale: tuple[float, ...] | None
    zero_point: tuple[int, ...] | None
    quantized_dimension: int


@dataclass
class _Op:
    code: int
    inputs: list[int]
    outputs: list[int]
    options_name: str | None
    options: dict[str, Any] = field(default_factory=dict)


class ModelBuilder:
    """Collects tensors, buffers and operators; `build()` writes one flatbuffer (a single subgraph)."""

    def __init__(self, old_schema: bool = False, empty_buffer_zero: bool = True) -> None:
        self.old_schema = old_schema
        self.tensors: list[_Tensor] = []
        self.buffers: list[bytes | None] = [b""] if empty_buffer_zero else []
        self.ops: list[_Op] = []
        self.inputs: list[int] = []
        self.outputs: list[int] = []
        #: operator version by builtin name (default 1), e.g. to make a file LiteRT refuses
        self.op_versions: dict[str, int] = {}

    # -- tensors -----------------------------------------------------------------------------
    def tensor(
        self,
        name: str,
        shape: Sequence[int],
        dtype: str = "int8",
        scale: float | Sequence[float] | None = None,
        zero_point: int | Sequence[int] | None = None,
        data: np.ndarray | None = None,
        quantized_dimension: int = 0,
    ) -> int:
        if data is not None:
            arr = np.ascontiguousarray(np.asarray(data, dtype=_TYPES[dtype][1]).reshape(tuple(shape)))
            self.buffers.append(arr.tobytes())
            buf = len(self.buffers) - 1
        else:
            buf = 0
            if not self.buffers:  # no sentinel buffer: activations point at an empty buffer of their own
                self.buffers.append(None)
                buf = len(self.buffers) - 1
        sc = None if scale is None else tuple(float(s) for s in np.atleast_1d(scale))
        if sc is not None and zero_point is None:
            zero_point = 0
        zp = None if zero_point is None else tuple(int(z) for z in np.atleast_1d(zero_point))
        if sc is not None and zp is not None and len(zp) == 1 and len(sc) > 1:
            zp = zp * len(sc)
        self.tensors.append(_Tensor(name, tuple(int(d) for d in shape), dtype, buf, sc, zp, quantized_dimension))
        return len(self.tensors) - 1

    def input(self, name: str, shape: Sequence[int], dtype: str = "int8", **quant: Any) -> int:
        idx = self.tensor(name, shape, dtype, **quant)
        self.inputs.append(idx)
        return idx

    def const(self, name: str, data: np.ndarray, dtype: str, **quant: Any) -> int:
        data = np.asarray(data)
        return self.tensor(name, data.shape, dtype, data=data, **quant)

    def output(self, idx: int) -> None:
        self.outputs.append(idx)

    # -- operators ---------------------------------------------------------------------------
    def op(self, name: str, inputs: Sequence[int], outputs: Sequence[int], options_name: str | None = None,
           **options: Any) -> None:
        self.ops.append(_Op(getattr(BuiltinOperator, name), list(inputs), list(outputs), options_name, options))

    # -- serialization -----------------------------------------------------------------------
    def build(self) -> bytes:
        b = flatbuffers.Builder(1024)
        codes = sorted({o.code for o in self.ops})
        code_index = {c: i for i, c in enumerate(codes)}

        buffer_offs = []
        for data in self.buffers:
            vec = b.CreateNumpyVector(np.frombuffer(data, dtype=np.uint8)) if data else None
            _M['Buffer'].BufferStart(b)
            if vec is not None:
                _M['Buffer'].BufferAddData(b, vec)
            buffer_offs.append(_M['Buffer'].BufferEnd(b))

        tensor_offs = []
        for t in self.tensors:
            name = b.CreateString(t.name)
            shape = b.CreateNumpyVector(np.asarray(t.shape, dtype=np.int32))
            quant = None
            if t.scale is not None:
                sc = b.CreateNumpyVector(np.asarray(t.scale, dtype=np.float32))
                zp = b.CreateNumpyVector(np.asarray(t.zero_point, dtype=np.int64))
                _M['QuantizationParameters'].QuantizationParametersStart(b)
                _M['QuantizationParameters'].QuantizationParametersAddScale(b, sc)
                _M['QuantizationParameters'].QuantizationParametersAddZeroPoint(b, zp)
                if not self.old_schema:
                    _M['QuantizationParameters'].QuantizationParametersAddQuantizedDimension(b, t.quantized_dimension)
                quant = _M['QuantizationParameters'].QuantizationParametersEnd(b)
            _M['Tensor'].TensorStart(b)
            _M['Tensor'].TensorAddShape(b, shape)
            _M['Tensor'].TensorAddType(b, _TYPES[t.dtype][0])
            _M['Tensor'].TensorAddBuffer(b, t.buffer)
            _M['Tensor'].TensorAddName(b, name)
            if quant is not None:
                _M['Tensor'].TensorAddQuantization(b, quant)
            tensor_offs.append(_M['Tensor'].TensorEnd(b))

        op_offs = []
        for o in self.ops:
            opts = self._options(b, o) if o.options_name else None
            ins = b.CreateNumpyVector(np.asarray(o.inputs, dtype=np.int32))
            outs = b.CreateNumpyVector(np.asarray(o.outputs, dtype=np.int32))
            _M['Operator'].OperatorStart(b)
            _M['Operator'].OperatorAddOpcodeIndex(b, code_index[o.code])
            _M['Operator'].OperatorAddInputs(b, ins)
            _M['Operator'].OperatorAddOutputs(b, outs)
            if opts is not None:
                _M['Operator'].OperatorAddBuiltinOptionsType(b, getattr(BuiltinOptions, o.options_name))
                _M['Operator'].OperatorAddBuiltinOptions(b, opts)
            op_offs.append(_M['Operator'].OperatorEnd(b))

        code_offs = []
        for c in codes:
            _M['OperatorCode'].OperatorCodeStart(b)
            _M['OperatorCode'].OperatorCodeAddDeprecatedBuiltinCode(b, min(c, 127))
            if not self.old_schema:
                _M['OperatorCode'].OperatorCodeAddBuiltinCode(b, c)
            version = {getattr(BuiltinOperator, k): v for k, v in self.op_versions.items()}.get(c, 1)
            _M['OperatorCode'].OperatorCodeAddVersion(b, version)
            code_offs.append(_M['OperatorCode'].OperatorCodeEnd(b))

        def vec_of(offsets: list[int]) -> int:
            b.StartVector(4, len(offsets), 4)
            for off in reversed(offsets):
                b.PrependUOffsetTRelative(off)
            return b.EndVector()

        tensors_v = vec_of(tensor_offs)
        ops_v = vec_of(op_offs)
        ins_v = b.CreateNumpyVector(np.asarray(self.inputs, dtype=np.int32))
        outs_v = b.CreateNumpyVector(np.asarray(self.outputs, dtype=np.int32))
        sg_name = b.CreateString("main")
        _M['SubGraph'].SubGraphStart(b)
        _M['SubGraph'].SubGraphAddTensors(b, tensors_v)
        _M['SubGraph'].SubGraphAddInputs(b, ins_v)
        _M['SubGraph'].SubGraphAddOutputs(b, outs_v)
        _M['SubGraph'].SubGraphAddOperators(b, ops_v)
        _M['SubGraph'].SubGraphAddName(b, sg_name)
        sg = _M['SubGraph'].SubGraphEnd(b)

        codes_v = vec_of(code_offs)
        sgs_v = vec_of([sg])
        bufs_v = vec_of(buffer_offs)
        desc = b.CreateString("tilewise test model")
        _M['Model'].ModelStart(b)
        _M['Model'].ModelAddVersion(b, 3)
        _M['Model'].ModelAddOperatorCodes(b, codes_v)
        _M['Model'].ModelAddSubgraphs(b, sgs_v)
        _M['Model'].ModelAddDescription(b, desc)
        _M['Model'].ModelAddBuffers(b, bufs_v)
        model = _M['Model'].ModelEnd(b)
        b.Finish(model, file_identifier=b"TFL3")
        return bytes(b.Output())

    @staticmethod
    def _options(b: flatbuffers.Builder, o: _Op) -> int:
        """Write an options table: scalar fields by their schema name, lists as int32 vectors."""
        mod = importlib.import_module(f"tflite.{o.options_name}")
        cls = o.options_name
        vectors = {}
        for key, value in o.options.items():
            if isinstance(value, (list, tuple)):
                vectors[key] = b.CreateNumpyVector(np.asarray(value, dtype=np.int32))
        getattr(mod, f"{cls}Start")(b)
        for key, value in o.options.items():
            adder = getattr(mod, f"{cls}Add{key}")
            adder(b, vectors[key] if key in vectors else value)
        return getattr(mod, f"{cls}End")(b)

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_bytes(self.build())
        return p


def litert_interpreter(path: str | Path, all_tensors: bool = False) -> Any:
    """A LiteRT interpreter with the reference kernels (BUILTIN_REF), tensors allocated."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=str(path), experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                     experimental_preserve_all_tensors=all_tensors)
    it.allocate_tensors()
    return it


def litert_invoke(it: Any, inputs: Sequence[np.ndarray], all_tensors: bool = False) -> dict[int, np.ndarray]:
    """Run once; returns the output (or every readable) tensor by TFLite tensor index."""
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], np.asarray(x, dtype=d["dtype"]).reshape(d["shape"]))
    it.invoke()
    if all_tensors:
        out = {}
        for d in it.get_tensor_details():
            try:
                out[d["index"]] = it.get_tensor(d["index"]).copy()
            except ValueError:
                pass
        return out
    return {d["index"]: it.get_tensor(d["index"]).copy() for d in it.get_output_details()}


def litert_run(path: str | Path, inputs: Sequence[np.ndarray], all_tensors: bool = False) -> dict[int, np.ndarray]:
    return litert_invoke(litert_interpreter(path, all_tensors), inputs, all_tensors)


def random_inputs(shapes_dtypes: Sequence[tuple[tuple[int, ...], str]], n: int, seed: int = 0,
                  float_range: float = 8.0) -> list[list[np.ndarray]]:
    """n random input sets plus the all-min and all-max sets (integer inputs span their full range)."""
    rng = np.random.RandomState(seed)
    sets: list[list[np.ndarray]] = []
    for k in range(n + 2):
        one = []
        for shape, dtype in shapes_dtypes:
            if dtype == "float32":
                v = rng.uniform(-float_range, float_range, size=shape) if k < n else \
                    np.full(shape, -float_range if k == n else float_range)
                one.append(v.astype(np.float32))
            else:
                info = np.iinfo(np.dtype(dtype))
                v = rng.randint(info.min, int(info.max) + 1, size=shape) if k < n else \
                    np.full(shape, info.min if k == n else info.max)
                one.append(v.astype(dtype))
        sets.append(one)
    return sets


def compare_with_litert(path: str | Path, n: int = 50, seed: int = 0, all_tensors: bool = False,
                        float_range: float = 8.0) -> tuple[int, int]:
    """(differing elements, compared elements) of golden vs LiteRT BUILTIN_REF over n random inputs plus
    the all-min and all-max inputs; with all_tensors every IR tensor that has a TFLite twin is compared."""
    from tilewise.frontend import load_model
    from tilewise.golden import run_graph
    from tilewise.ir.layout import model_input

    graph = load_model(path)
    index = graph.meta["tflite_tensor_index"]
    specs = [(t.shape, t.dtype) for t in graph.input_tensors()]
    it = litert_interpreter(path, all_tensors)
    bad = total = 0
    for inputs in random_inputs(specs, n, seed, float_range):
        ref = litert_invoke(it, [model_input(graph.meta, x) for x in inputs], all_tensors)
        got = run_graph(graph, inputs, keep_all=all_tensors)
        names = [o for nd in graph.nodes for o in nd.outputs if o in index] if all_tensors else list(graph.outputs)
        for name in names:
            r = ref[index[name]]
            g = np.asarray(got[name]).reshape(r.shape)
            if r.dtype.kind == "f":
                diff = int((r.view(np.uint32) != g.astype(np.float32).view(np.uint32)).sum())
            else:
                diff = int((r.astype(np.int64) != g.astype(np.int64)).sum())
            bad += diff
            total += r.size
    return bad, total


def tanh_model(path: Path) -> Path:
    """An int8 TANH model (output tensor 'tanh_out'): an op tilewise refuses."""
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 2), "int8", scale=0.1, zero_point=0)
    z = b.tensor("tanh_out", (1, 4, 4, 2), "int8", scale=1 / 128, zero_point=0)
    b.op("TANH", [x], [z])
    b.output(z)
    return b.save(path)


def float_conv_model(path: Path) -> Path:
    """A valid float32 CONV_2D model (output tensor 'conv_out'): tilewise must reject it."""
    b = ModelBuilder()
    x = b.input("x", (1, 5, 5, 2), "float32")
    w = b.const("w", np.ones((3, 3, 3, 2), dtype=np.float32), "float32")
    bias = b.const("b", np.zeros(3, dtype=np.float32), "float32")
    y = b.tensor("conv_out", (1, 5, 5, 3), "float32")
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         FusedActivationFunction=0, DilationWFactor=1, DilationHFactor=1)
    b.output(y)
    return b.save(path)

