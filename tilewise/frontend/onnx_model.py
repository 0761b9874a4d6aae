"""ONNX protobuf -> a small, format-neutral view of the graph the ONNX frontend works on.

Owns: decoding the model (a corrupt or non-model protobuf is one ModelFormatError sentence),
constants (initializers and Constant nodes as numpy arrays), node attributes as plain Python values,
static graph-input shapes (a symbolic leading batch dimension is taken as 1), producer/consumer maps,
and the one-sentence UnsupportedOpError every ONNX frontend module raises.

`ONode` is a mutable-free stand-in for onnx.NodeProto that the QDQ and NEMO rewrites
(onnx_qdq.py, onnx_nemo.py) can create: op_type, inputs, outputs, attrs. Internal ops that those
rewrites produce carry the domain "tilewise".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import ModelFormatError, UnsupportedOpError
from .onnx_check import check_nodes

TW_DOMAIN = "tilewise"

#: ONNX TensorProto element types the frontend understands -> IR dtype names
ELEM_DTYPES = {
    onnx.TensorProto.FLOAT: "float32",
    onnx.TensorProto.INT8: "int8",
    onnx.TensorProto.UINT8: "uint8",
    onnx.TensorProto.INT16: "int16",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.INT64: "int64",
    # packed sub-byte activations (docs/subbyte.md), integer model inputs
    onnx.TensorProto.UINT4: "uint4",
    onnx.TensorProto.UINT2: "uint2",
}


@dataclass(frozen=True, eq=False)
class ONode:
    op_type: str
    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    domain: str = ""

    def attr(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    def input(self, i: int) -> str:
        """Name of input i, '' when absent (optional inputs)."""
        return self.inputs[i] if i < len(self.inputs) else ""


@dataclass(frozen=True, eq=False)
class OnnxGraph:
    source: str
    name: str
    nodes: tuple[ONode, ...]
    consts: dict[str, np.ndarray]
    #: graph inputs (not initializers): name -> (IR dtype, static shape)
    inputs: dict[str, tuple[str, tuple[int, ...]]]
    outputs: tuple[str, ...]
    opset: int
    notes: tuple[str, ...] = ()
    #: the model's metadata_props (key -> value): e.g. tilewise quantize's `tilewise.w_bits.<node>`
    metadata: dict[str, str] = field(default_factory=dict)
    #: static shapes of intermediate tensors where ONNX shape inference knows them (onnx_fold.py
    #: folds a Shape of such a tensor)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def producers(self) -> dict[str, ONode]:
        return {o: n for n in self.nodes for o in n.outputs if o}

    def consumers(self) -> dict[str, list[ONode]]:
        out: dict[str, list[ONode]] = {}
        for n in self.nodes:
            for i in n.inputs:
                if i:
                    out.setdefault(i, []).append(n)
        return out

    def with_nodes(self, nodes: list[ONode], consts: dict[str, np.ndarray] | None = None) -> OnnxGraph:
        return OnnxGraph(self.source, self.name, tuple(nodes), consts if consts is not None else self.consts,
                         self.inputs, self.outputs, self.opset, self.notes, self.metadata, self.shapes)


def unsupported(g: OnnxGraph | str, node: ONode | None, what: str, hint: str) -> UnsupportedOpError:
    """One sentence: file, node name and op type, what is wrong, what to do."""
    src = g if isinstance(g, str) else g.source
    where = f"node '{node.name}' ({node.op_type})" if node is not None else "the graph"
    return UnsupportedOpError(f"{src}: {where} {what}; {hint}")


def _text(v: str | bytes) -> str:
    """A protobuf string field as text (the python runtime hands over bytes that are not UTF-8)."""
    return v.decode("utf-8", errors="replace") if isinstance(v, bytes) else v


def _attrs(node: onnx.NodeProto) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8", errors="replace")
        elif isinstance(v, onnx.TensorProto):
            v = numpy_helper.to_array(v)
        elif isinstance(v, list):
            v = [x.decode("utf-8", errors="replace") if isinstance(x, bytes) else x for x in v]
        out[a.name] = v
    return out


def _static_shape(source: str, vi: onnx.ValueInfoProto) -> tuple[int, ...]:
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        raise ModelFormatError(f"{source}: graph input '{vi.name}' has no shape; "
                               "export the model with static input shapes")
    dims = []
    for i, d in enumerate(tt.shape.dim):
        if d.HasField("dim_value") and d.dim_value > 0:
            dims.append(int(d.dim_value))
        elif i == 0:
            dims.append(1)  # symbolic batch: one sample at a time on the device
        else:
            raise ModelFormatError(
                f"{source}: graph input '{vi.name}' has a symbolic dimension {i} ('{d.dim_param}'); "
                "export the model with static input shapes"
            )
    return tuple(dims)


def decode_model(data: bytes, source: str) -> onnx.ModelProto:
    """Parse the protobuf; anything that is not a readable ONNX model is a ModelFormatError."""
    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:  # protobuf DecodeError and friends
        raise ModelFormatError(
            f"{source}: not a readable ONNX model ({type(exc).__name__}); the file is corrupt or truncated"
        ) from None
    if model.ir_version <= 0 or not model.HasField("graph") or len(model.graph.node) == 0:
        raise ModelFormatError(f"{source}: the protobuf holds no ONNX graph; the file is corrupt or not an ONNX model")
    for t in model.graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            raise ModelFormatError(f"{source}: initializer '{t.name}' is stored as external data; "
                                   "save the model with all tensors inside the .onnx file")
    return model


def read_graph(data: bytes, source: str) -> OnnxGraph:
    """Decode `data` into an OnnxGraph (constants folded out of Constant nodes)."""
    model = decode_model(data, source)
    g = model.graph
    opset = 0
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            opset = int(imp.version)
    check_nodes(source, g, opset)
    consts: dict[str, np.ndarray] = {}
    for t in g.initializer:
        try:
            consts[t.name] = numpy_helper.to_array(t)
        except Exception:
            raise ModelFormatError(f"{source}: initializer '{t.name}' cannot be decoded; the file is corrupt") from None
    nodes: list[ONode] = []
    for i, n in enumerate(g.node):
        name = n.name or f"{n.op_type}_{i}"
        try:
            attrs = _attrs(n)
        except Exception:   # onnx's decoders raise what the bytes make them (ValueError, TypeError, …)
            raise ModelFormatError(f"{source}: node '{name}' ({n.op_type}) has an attribute that cannot be "
                                   "decoded; the file is corrupt") from None
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
            if "value" not in attrs or len(n.output) != 1:
                raise unsupported(source, ONode(n.op_type, name, (), ()), "holds a non-tensor constant",
                                  "replace it by a tensor initializer")
            consts[n.output[0]] = np.asarray(attrs["value"])
            continue
        nodes.append(ONode(n.op_type, name, tuple(n.input), tuple(n.output), attrs, n.domain))
    inputs: dict[str, tuple[str, tuple[int, ...]]] = {}
    for vi in g.input:
        if vi.name in consts:
            continue
        et = vi.type.tensor_type.elem_type
        if et not in ELEM_DTYPES:
            known = et in onnx.TensorProto.DataType.values()
            raise ModelFormatError(f"{source}: graph input '{vi.name}' has element type "
                                   f"{onnx.TensorProto.DataType.Name(et) if known else et}; "
                                   "tilewise takes float32, int8, uint8, uint4 or uint2 model inputs")
        inputs[vi.name] = (ELEM_DTYPES[et], _static_shape(source, vi))
    if not inputs:
        raise ModelFormatError(f"{source}: the graph has no inputs")
    outputs = tuple(o.name for o in g.output)
    nodes = _topological(source, nodes, set(inputs) | set(consts))
    return OnnxGraph(source, g.name or "onnx_model", tuple(nodes), consts, inputs, outputs, opset,
                     metadata={_text(e.key): _text(e.value) for e in model.metadata_props},
                     shapes=_inferred_shapes(model))


def _inferred_shapes(model: onnx.ModelProto) -> dict[str, tuple[int, ...]]:
    """The static shapes ONNX shape inference gives the model's intermediate tensors (none where
    it fails, e.g. past a custom operator)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:   # noqa: BLE001 — shape inference is a help, never a requirement
        return {}
    out = {}
    for vi in (*inferred.graph.value_info, *inferred.graph.output):
        tt = vi.type.tensor_type
        if tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
            out[vi.name] = tuple(int(d.dim_value) for d in tt.shape.dim)
    return out


def _topological(source: str, nodes: list[ONode], available: set[str]) -> list[ONode]:
    """`nodes` in an execution order (their own where it is one: exporters such as Deeploy's
    write graphs whose nodes are out of order, which ONNX forbids but onnxruntime accepts); a
    tensor no node produces, or a cycle, is one ModelFormatError sentence."""
    have = set(available)
    producers = {o for n in nodes for o in n.outputs if o}
    for n in nodes:
        for i in n.inputs:
            if i and i not in have and i not in producers:
                raise ModelFormatError(
                    f"{source}: node '{n.name}' ({n.op_type}) reads '{i}', which no node, initializer or "
                    "graph input provides; the model is incomplete"
                )
    order: list[ONode] = []
    pending = list(nodes)
    while pending:
        # the first node (in the file's order) whose inputs are all there: a sorted graph keeps
        # its order exactly
        i = next((j for j, n in enumerate(pending) if all(not x or x in have for x in n.inputs)), None)
        if i is None:
            n = pending[0]
            raise ModelFormatError(f"{source}: node '{n.name}' ({n.op_type}) is part of a cycle; the graph is "
                                   "not a DAG")
        n = pending.pop(i)
        order.append(n)
        have.update(o for o in n.outputs if o)
    return order
