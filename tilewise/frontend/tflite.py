"""TFLite flatbuffer -> ir.Graph. Reads the model with the `tflite` schema package (no hand parser).

Three phases:
1. `read_flatbuffer` walks the flatbuffer into plain frozen records (`TfliteModel`): tensors (name,
   shape, type, buffer data, affine quantization), operators (builtin code, inputs, outputs, options as
   a dict). Any failure of that walk on a truncated or corrupt file becomes one ModelFormatError
   sentence. Schema quirks handled here: the operator code is max(builtin_code,
   deprecated_builtin_code) (old files carry only the int8 deprecated field, new ones put codes above
   127 in the int32 field); buffer 0 and empty/missing buffers mean "no data"; buffers stored outside
   the flatbuffer (offset/size, >2 GB models) are sliced from the file; an absent quantized_dimension
   reads as 0; a 1-D tensor with one scale per element and a quantized_dimension it does not have
   (TFLite Micro's person_detect writes 3 on its per-channel biases) is quantized along axis 0, its
   only axis — any other per-channel tensor whose dimension is out of range is refused, naming it
   (tflite_repair.py gives LiteRT the same reading on a copy).
2. `tflite_fold.fold_constants` folds the constant shape arithmetic (SHAPE / STRIDED_SLICE / PACK /
   ... of static shapes and int32/int64 constants, as Keras writes a TRANSPOSE_CONV's output shape)
   into constant tensors.
3. `tflite_ops.Converter` maps each operator onto the IR catalogue (ir/ops.py) and computes
   the fixed-point parameters exactly as the operator's Prepare in LiteRT does.

IR tensor names are the TFLite tensor names (made unique with '#index' when a file repeats or omits a
name); Graph.meta["tflite_tensor_index"] maps IR name -> TFLite tensor index so that tools can compare
every intermediate with the interpreter's tensors. The input TRANSPOSE of an NCHW model is folded
into the input layout (tflite_layout.py; meta["input_perm"], ir/layout.py).
"""

from __future__ import annotations

import importlib
import inspect
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ModelFormatError, TilewiseError
from ..ir.graph import STATE_TENSORS, Graph
from ..ir.layout import INPUT_PERM
from ..ir.tensor import QuantParams, Tensor

#: TFLite TensorType -> IR dtype (types the IR does not know map to None and are rejected when used)
TENSOR_TYPES: dict[int, str] = {0: "float32", 2: "int32", 3: "uint8", 4: "int64", 6: "bool", 7: "int16", 9: "int8"}
TYPE_NAMES: dict[int, str] = {
    0: "float32", 1: "float16", 2: "int32", 3: "uint8", 4: "int64", 5: "string", 6: "bool", 7: "int16",
    8: "complex64", 9: "int8", 10: "float64", 11: "complex128", 12: "uint64", 13: "resource", 14: "variant",
    15: "uint32", 16: "uint16", 17: "int4", 18: "bfloat16",
}


def _schema(name: str) -> Any:
    """The generated module tflite.<name> (the package re-exports classes under the same names)."""
    return importlib.import_module(f"tflite.{name}")


_BUILTIN_NAMES: dict[int, str] = {
    v: k for k, v in vars(_schema("BuiltinOperator").BuiltinOperator).items() if not k.startswith("_")
}
_OPTION_NAMES: dict[int, str] = {
    v: k for k, v in vars(_schema("BuiltinOptions").BuiltinOptions).items() if not k.startswith("_")
}


@dataclass(frozen=True)
class TfliteTensor:
    index: int
    name: str
    shape: tuple[int, ...]
    type_code: int
    data: np.ndarray | None = field(repr=False)
    scale: tuple[float, ...] = ()
    zero_point: tuple[int, ...] = ()
    quantized_dimension: int = 0
    #: the file's shape_signature (-1 marks a dynamic dimension; () when the file has none)
    shape_signature: tuple[int, ...] = ()

    @property
    def dtype(self) -> str | None:
        return TENSOR_TYPES.get(self.type_code)

    @property
    def type_name(self) -> str:
        return TYPE_NAMES.get(self.type_code, f"type {self.type_code}")

    @property
    def quantized(self) -> bool:
        return len(self.scale) > 0


@dataclass(frozen=True)
class TfliteOperator:
    index: int
    code: int
    custom_code: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options: dict[str, Any]
    #: the operator's intermediate tensors (an integer LSTM's five: quantization parameters only)
    intermediates: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        if self.custom_code:
            return f"custom op '{self.custom_code}'"
        return _BUILTIN_NAMES.get(self.code, f"builtin op {self.code}")


@dataclass(frozen=True)
class TfliteModel:
    tensors: tuple[TfliteTensor, ...]
    operators: tuple[TfliteOperator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    description: str
    subgraphs: int


def _text(raw: bytes | None) -> str:
    return raw.decode("utf-8", errors="replace") if raw else ""


def _read_options(op: Any) -> dict[str, Any]:
    """Every field of the operator's builtin options table as a dict (vectors as lists)."""
    kind = op.BuiltinOptionsType()
    if kind == 0 or op.BuiltinOptions() is None:
        return {}
    name = _OPTION_NAMES.get(kind)
    if name is None:
        return {}
    cls = getattr(_schema(name), name)
    obj = cls()
    table = op.BuiltinOptions()
    obj.Init(table.Bytes, table.Pos)
    out: dict[str, Any] = {}
    for attr, fn in inspect.getmembers(cls, inspect.isfunction):
        if attr.startswith(("_", "Init", "GetRootAs")) or attr.endswith(("BufferHasIdentifier", "Length", "IsNone")):
            continue
        params = inspect.signature(fn).parameters
        if attr.endswith("AsNumpy"):
            vec = getattr(obj, attr)()
            out[attr[: -len("AsNumpy")]] = [] if isinstance(vec, int) else [int(v) for v in vec]
        elif len(params) == 1:
            out[attr] = getattr(obj, attr)()
    return out


def _tensor_data(buf: Any, data: bytes) -> bytes | None:
    if buf is None:
        return None
    if not buf.DataIsNone() and buf.DataLength() > 0:
        return buf.DataAsNumpy().tobytes()
    offset, size = buf.Offset(), buf.Size()
    if offset > 1 and size > 0:
        if offset + size > len(data):
            raise ModelFormatError("buffer outside the file")
        return data[offset: offset + size]
    return None


def _per_channel_axis(source: str, i: int, name: str, shape: tuple[int, ...], scales: int, qdim: int) -> int:
    """The axis of a per-channel tensor: its quantized_dimension, or 0 for a 1-D tensor with one
    scale per element whose dimension is out of range (its only axis); any other out-of-range
    dimension is refused."""
    if 0 <= qdim < len(shape):
        return qdim
    if len(shape) == 1 and scales == shape[0]:
        return 0
    raise ModelFormatError(
        f"{source}: tensor {i} '{name}' has {scales} scales along quantized_dimension {qdim}, which its "
        f"{len(shape)}-D shape {list(shape)} does not have; re-export the model")


def read_flatbuffer(data: bytes, source: str) -> TfliteModel:
    """Walk the flatbuffer into plain records; a truncated or corrupt file raises ModelFormatError."""
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise ModelFormatError(
            f"{source}: not a TFLite flatbuffer (no 'TFL3' identifier at byte 4); give a .tflite model file"
        )
    try:
        model = _schema("Model").Model.GetRootAs(data, 0)
        if model.SubgraphsLength() < 1:
            raise ModelFormatError(f"{source}: the TFLite model has no subgraph; re-export the model")
        codes = []
        for i in range(model.OperatorCodesLength()):
            oc = model.OperatorCodes(i)
            codes.append((max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode())), _text(oc.CustomCode())))
        buffers = [model.Buffers(i) for i in range(model.BuffersLength())]
        sg = model.Subgraphs(0)
        # an operator's intermediates (the integer LSTM's) carry quantization parameters only: the
        # converter writes them with the shape [0]
        carriers = {int(v) for i in range(sg.OperatorsLength())
                    for v in (sg.Operators(i).IntermediatesAsNumpy() if sg.Operators(i).IntermediatesLength() else ())}
        tensors = []
        for i in range(sg.TensorsLength()):
            t = sg.Tensors(i)
            shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() > 0 else ()
            bidx = int(t.Buffer())
            raw = None
            if 0 < bidx < len(buffers):
                raw = _tensor_data(buffers[bidx], data)
            elif bidx >= len(buffers) and bidx != 0:
                raise ModelFormatError(f"tensor {i} refers to buffer {bidx} of {len(buffers)}")
            # -1 belongs in shape_signature, not shape; an empty activation: no network computes on one
            if any(d < 0 for d in shape) or (raw is None and 0 in shape and i not in carriers):
                raise ModelFormatError(f"tensor {i} '{_text(t.Name())}' has the shape {list(shape)}, with a "
                                       f"{'negative' if min(shape) < 0 else 'zero'} dimension")
            q = t.Quantization()
            scale: tuple[float, ...] = ()
            zps: tuple[int, ...] = ()
            qdim = 0
            if q is not None and q.ScaleLength() > 0:
                scale = tuple(float(s) for s in q.ScaleAsNumpy())
                if not all(np.isfinite(scale)):
                    raise ModelFormatError(f"{source}: tensor {i} '{_text(t.Name())}' has a non-finite quantization "
                                           "scale; the model is malformed, re-export it")
                zps = tuple(int(z) for z in q.ZeroPointAsNumpy()) if q.ZeroPointLength() > 0 else (0,) * len(scale)
                qdim = int(q.QuantizedDimension())
                if len(scale) > 1:
                    qdim = _per_channel_axis(source, i, _text(t.Name()), shape, len(scale), qdim)
            signature = tuple(int(d) for d in t.ShapeSignatureAsNumpy()) if t.ShapeSignatureLength() > 0 else ()
            arr = None
            dtype = TENSOR_TYPES.get(int(t.Type()))
            if raw is not None and dtype is not None:
                itemsize = np.dtype(dtype).itemsize
                count = int(np.prod(shape, dtype=np.int64)) if shape else 1
                if len(raw) != count * itemsize:
                    raise ModelFormatError(
                        f"tensor {i} '{_text(t.Name())}' holds {len(raw)} bytes but its shape {shape} "
                        f"needs {count * itemsize}"
                    )
                arr = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
            tensors.append(TfliteTensor(i, _text(t.Name()), shape, int(t.Type()), arr, scale, zps, qdim, signature))
        ops = []
        for i in range(sg.OperatorsLength()):
            op = sg.Operators(i)
            ci = int(op.OpcodeIndex())
            if ci >= len(codes):
                raise ModelFormatError(f"operator {i} uses operator code {ci} of {len(codes)}")
            ins = tuple(int(v) for v in op.InputsAsNumpy()) if op.InputsLength() > 0 else ()
            outs = tuple(int(v) for v in op.OutputsAsNumpy()) if op.OutputsLength() > 0 else ()
            for v in ins + outs:
                if v >= len(tensors) or v < -1:
                    raise ModelFormatError(f"operator {i} refers to tensor {v} of {len(tensors)}")
            mids = tuple(int(v) for v in op.IntermediatesAsNumpy()) if op.IntermediatesLength() > 0 else ()
            for v in mids:
                if not 0 <= v < len(tensors):
                    raise ModelFormatError(f"operator {i} refers to intermediate tensor {v} of {len(tensors)}")
            ops.append(TfliteOperator(i, codes[ci][0], codes[ci][1], ins, outs, _read_options(op), mids))
        inputs = tuple(int(v) for v in sg.InputsAsNumpy()) if sg.InputsLength() > 0 else ()
        outputs = tuple(int(v) for v in sg.OutputsAsNumpy()) if sg.OutputsLength() > 0 else ()
        for v in inputs + outputs:
            if not 0 <= v < len(tensors):
                raise ModelFormatError(f"the subgraph's inputs/outputs refer to tensor {v} of {len(tensors)}")
        return TfliteModel(tuple(tensors), tuple(ops), inputs, outputs, _text(model.Description()),
                           model.SubgraphsLength())
    except TilewiseError as e:
        msg = str(e)
        if msg.startswith(source):
            raise
        raise ModelFormatError(f"{source}: the TFLite flatbuffer is corrupt ({msg}); re-export the model") from None
    except (IndexError, struct.error, ValueError, TypeError, AttributeError, OverflowError, MemoryError) as e:
        raise ModelFormatError(
            f"{source}: the TFLite flatbuffer is truncated or corrupt ({type(e).__name__} while reading it); "
            "re-export or re-download the model"
        ) from None


def op_where(source: str, model: TfliteModel, op: TfliteOperator) -> str:
    """How messages name an operator: file, index, op and output tensor."""
    out = model.tensors[op.outputs[0]].name if op.outputs else "?"
    return f"{source}: operator {op.index} ({op.name}, output '{out}')"


def ir_names(model: TfliteModel) -> list[str]:
    """Unique IR tensor names: the TFLite name, or name#index when repeated or empty."""
    seen: set[str] = set()
    names = []
    for t in model.tensors:
        name = t.name or f"tensor#{t.index}"
        if name in seen:
            name = f"{name}#{t.index}"
        seen.add(name)
        names.append(name)
    return names


def quant_params(t: TfliteTensor, axis_map: dict[int, int] | None = None) -> QuantParams | None:
    """IR QuantParams of a TFLite tensor (per-channel keeps its axis, optionally remapped)."""
    if not t.quantized:
        return None
    if len(t.scale) > 1:
        axis = t.quantized_dimension
        if axis_map:
            axis = axis_map.get(axis, axis)
        return QuantParams(t.scale, t.zero_point, axis)
    return QuantParams(t.scale, t.zero_point[:1] or (0,), None)


def read_tflite(data: bytes, source: str) -> Graph:
    """Convert a TFLite model (bytes of a .tflite file) into an IR Graph (not yet verified)."""
    from .tflite_fold import fold_constants
    from .tflite_ops import Converter
    from .tflite_seq import fold_float_moves

    folded = fold_constants(read_flatbuffer(data, source), source)
    model = fold_float_moves(folded)
    names = ir_names(model)
    conv = Converter(model, names, source)
    from .tflite_seq import REFUSED

    for op in model.operators:   # a loop (WHILE) is the reason to name first, before its float ops
        if op.name in REFUSED:
            REFUSED[op.name](conv, op)
    for op in model.operators:
        conv.convert(op)
    for i in model.inputs:
        t = model.tensors[i]
        if t.dtype is None:
            raise ModelFormatError(f"{source}: graph input '{t.name}' has type {t.type_name}, "
                                   "which tilewise does not support")
    from .tflite_layout import fold_input_transpose

    graph_inputs = tuple(names[i] for i in model.inputs)
    graph_outputs = tuple(names[i] for i in model.outputs)
    rank = len(model.tensors[model.inputs[0]].shape) if len(model.inputs) == 1 else 0
    nodes, graph_inputs, perm = fold_input_transpose(conv.nodes, graph_inputs, graph_outputs, rank)
    tensors: dict[str, Tensor] = {}
    used = set(graph_inputs) | set(graph_outputs)
    for n in nodes:
        used.update(i for i in n.inputs if i)
        used.update(n.outputs)
    for name in used:
        tensors[name] = conv.tensors[name]
    # a tensor fold_float_moves retyped (float in the file, codes here) has no twin in LiteRT
    index = {names[t.index]: t.index for t in model.tensors
             if names[t.index] in tensors and t.type_code == folded.tensors[t.index].type_code}
    meta = {"format": "tflite", "source_layout": "NHWC", "tflite_tensor_index": index,
            "description": model.description, "subgraphs": model.subgraphs}
    if perm is not None:
        meta[INPUT_PERM] = perm
    if conv.state_names:
        meta[STATE_TENSORS] = tuple(conv.state_names)
    return Graph(
        name=source.rsplit("/", 1)[-1].rsplit(".", 1)[0] or "model",
        tensors=tensors,
        nodes=tuple(nodes),
        inputs=graph_inputs,
        outputs=graph_outputs,
        source=source,
        meta=meta,
    )


__all__ = ["read_tflite", "read_flatbuffer", "op_where", "TfliteModel", "TfliteOperator", "TfliteTensor"]
