"""A writer of TFLite flatbuffers: tensors (with quantization parameters), constant buffers and
builtin operators of one subgraph, serialized with the builder functions of the `tflite` schema
package (TensorFlow is not needed). Used by quantize/tflite_out.py (the quantized model) and by the
tests (tests/tflite_builder.py: single-op and few-op models with chosen parameters).

    b = ModelBuilder()
    x = b.input("x", (1, 8, 8, 4), "int8", scale=0.05, zero_point=-3)
    w = b.const("w", wdata, "int8", scale=wscales, quantized_dimension=0)
    y = b.tensor("y", (1, 8, 8, 6), "int8", scale=0.1, zero_point=2)
    b.op("CONV_2D", [x, w, -1], [y], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1)
    b.output(y)
    data = b.build()          # or b.save(path)

Options are given by their schema field names (`Conv2DOptions` fields StrideW, Padding, ...);
`op_versions` sets an operator code's version (default 1). `old_schema=True` writes what converters
wrote before the 2.4-era schema changes: operator codes carry only `deprecated_builtin_code` (the
int32 `builtin_code` field is left absent, i.e. 0) and quantization tables omit
`quantized_dimension` (so it reads as 0). `tensor(..., shape_signature=[-1, ...])` writes the
shape_signature of a dynamic dimension (a Keras export's batch).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import flatbuffers
import numpy as np
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
    shape_signature: tuple[int, ...] | None = None
    #: a variable tensor (LiteRT keeps it across Invoke calls: an SVDF's state)
    variable: bool = False


@dataclass
class _Op:
    code: int
    inputs: list[int]
    outputs: list[int]
    options_name: str | None
    options: dict[str, Any] = field(default_factory=dict)


class ModelBuilder:
    """Collects tensors, buffers and operators; `build()` writes one flatbuffer (a single subgraph)."""

    def __init__(self, old_schema: bool = False, empty_buffer_zero: bool = True,
                 description: str = "tilewise test model") -> None:
        self.old_schema = old_schema
        self.description = description
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
        shape_signature: Sequence[int] | None = None,
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
        sig = None if shape_signature is None else tuple(int(d) for d in shape_signature)
        self.tensors.append(_Tensor(name, tuple(int(d) for d in shape), dtype, buf, sc, zp, quantized_dimension, sig))
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
            sig = None if t.shape_signature is None else b.CreateNumpyVector(np.asarray(t.shape_signature, np.int32))
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
            if sig is not None:
                _M['Tensor'].TensorAddShapeSignature(b, sig)
            _M['Tensor'].TensorAddType(b, _TYPES[t.dtype][0])
            _M['Tensor'].TensorAddBuffer(b, t.buffer)
            _M['Tensor'].TensorAddName(b, name)
            if quant is not None:
                _M['Tensor'].TensorAddQuantization(b, quant)
            if t.variable:
                _M['Tensor'].TensorAddIsVariable(b, True)
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
        desc = b.CreateString(self.description)
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
