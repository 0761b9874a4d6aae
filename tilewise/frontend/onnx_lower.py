"""QOperator-form ONNX graph -> IR Graph: tensors, NCHW -> NHWC layout, graph edges, data-movement ops.

Layout. Every 4-D activation of the IR is NHWC while ONNX's are NCHW. Each IR activation remembers
the permutation `perm` with ir_array = onnx_array.transpose(perm): (0, 2, 3, 1) for 4-D tensors,
the identity otherwise. Constants are transposed at import (conv weights OIHW -> OHWI, broadcast
operands of adds). Ops that index elements (Reshape, Flatten, Transpose, Concat/Softmax axes) are
rewritten so that the IR computes the element order ONNX means:
- a Reshape/Flatten reads its input in ONNX order: an IR transpose NHWC -> NCHW is inserted unless the
  permutation does not move data in memory (e.g. H = W = 1), where a reshape suffices;
- except a Flatten/Reshape of an N×C×H×W tensor to N×(C·H·W) whose every reader is a Gemm/MatMul: it
  becomes a plain reshape of the NHWC data and those readers' weight columns are permuted from CHW
  to HWC order (no transpose at run time), recorded in `flat`;
- a 4-D reshape result is brought back to NHWC (transpose, or reshape when trivial).

Graph edges. A float graph input quantized by QuantizeLinear becomes an integer IR input; a graph
output produced by DequantizeLinear becomes its integer source. graph.meta records, per ONNX input
and output, the IR tensor, the permutation and the edge quantization (onnx_io.py uses them):
meta["onnx_inputs"] / meta["onnx_outputs"] = [{"onnx", "ir", "to_ir_perm", "onnx_shape",
"onnx_dtype", "scale", "zero_point"}]; scale/zero_point are None when the ONNX tensor is already
integer. meta["source_layout"] = "NCHW". An integer export's edges carry raw codes (scale 1, zero
point 0); the real values its metadata states for them (onnx_stated.py) go to meta["io_quant"]
(ir/io_quant.py).

The arithmetic ops are lowered by onnx_qop.py (QLinear*) and onnx_nemo.py (integer NEMO graphs),
which register their handlers in HANDLERS.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.io_quant import IO_QUANT
from ..ir.ops import Op
from ..ir.params import MaxPoolParams, OpParams, ReshapeParams, TransposeParams
from ..ir.shapes import infer_shape
from ..ir.tensor import QuantParams, Tensor, dtype_range
from .onnx_model import OnnxGraph, ONode, unsupported
from .onnx_stated import stated_quant

NHWC = (0, 2, 3, 1)
FC_READERS = ("QGemm", "QLinearMatMul", "IntGemm")
#: ONNX input containers wider than their codes in integer exports, and the IR dtypes such an
#: input may be given (Lowering.container_dtype)
WIDE_CONTAINERS = ("int16", "int32", "int64")
CONTAINER_DTYPES = ("int8", "uint8", "int16", "int32")
#: ops whose outputs hold only their inputs' values (a proven bound carries over)
MOVES_VALUES = (Op.RESHAPE, Op.TRANSPOSE, Op.SLICE, Op.MAX_POOL, Op.CONCAT)
#: styles whose tensors are integers carried in float32, without quantization operators
INTEGER_STYLES = ("nemo", "quantlab")
Handler = Callable[["Lowering", ONode], None]
HANDLERS: dict[str, Handler] = {}


def handler(*op_types: str) -> Callable[[Handler], Handler]:
    def reg(fn: Handler) -> Handler:
        for op in op_types:
            HANDLERS[op] = fn
        return fn

    return reg


def canonical_perm(rank: int) -> tuple[int, ...]:
    return NHWC if rank == 4 else tuple(range(rank))


def inverse(p: tuple[int, ...]) -> tuple[int, ...]:
    inv = [0] * len(p)
    for i, v in enumerate(p):
        inv[v] = i
    return tuple(inv)


def moves_data(shape: tuple[int, ...], perm: tuple[int, ...]) -> bool:
    """Whether x.transpose(perm) changes the memory order of x (size-1 axes do not count)."""
    order = [perm[i] for i in range(len(perm)) if shape[perm[i]] != 1]
    return order != sorted(order)


class Lowering:
    """Accumulates IR tensors and nodes while walking the ONNX nodes in order."""

    def __init__(self, g: OnnxGraph, style: str, input_dtypes: Mapping[str, str] | None = None) -> None:
        self.g = g
        self.style = style
        self.input_dtypes = dict(input_dtypes or {})
        #: the graph inputs held in an int32 / int64 container whose code type nobody gave
        self.wide_inputs: set[str] = set()
        #: proven value ranges of IR activations narrower than their types (an int32 accumulator
        #: output: Σ|w|·max|x| + |b|), which the integer ops' output types follow (onnx_int.py)
        self.bounds: dict[str, tuple[int, int]] = {}
        #: the largest |value| onnxruntime computes in float32 running an integer export as
        #: written (the NEMO chains' κ·acc + λ, every proven bound): exact below 2^24
        self.float_max = 0
        self.tensors: dict[str, Tensor] = {}
        self.nodes: list[Node] = []
        self.ir: dict[str, str] = {}  # ONNX tensor -> IR tensor
        self.perm: dict[str, tuple[int, ...]] = {}  # IR tensor -> perm (ir = onnx.transpose(perm))
        self.flat: dict[str, tuple[int, int, int]] = {}  # IR tensor holding an HWC-flattened CHW tensor
        self.cons = g.consumers()
        self.prod = g.producers()
        self.names: set[str] = set()
        self.inputs: list[dict[str, Any]] = []
        self.outputs: list[dict[str, Any]] = []
        self.ir_inputs: list[str] = []
        #: integer exports: the (scale, zero point) the model states for the codes of its inputs
        #: and outputs (onnx_stated.py), by ONNX name; those of the network's edges, by IR name,
        #: become graph.meta["io_quant"] (ir/io_quant.py)
        self.stated = stated_quant(g) if style in INTEGER_STYLES else {}
        self.io_quant: dict[str, tuple[float, int]] = {}

    # -- constants ------------------------------------------------------------------------------
    def const(self, node: ONode, name: str, what: str) -> np.ndarray:
        if name not in self.g.consts:
            raise unsupported(self.g, node, f"takes its {what} '{name}' from a computed tensor",
                              f"make the {what} a constant initializer")
        return np.asarray(self.g.consts[name])

    def ints(self, node: ONode, name: str, what: str) -> list[int]:
        """The constant `name` as Python integers (shapes, pads, axes): a value that is not a
        finite whole number is one sentence naming the node."""
        v = self.const(node, name, what).reshape(-1)
        if v.dtype.kind not in "fiub":
            raise unsupported(self.g, node, f"has {what} of type {v.dtype}, not integers", "the model is malformed")
        bad = [x for x in v.tolist() if not (math.isfinite(x) and x == round(x))]
        if bad:
            raise unsupported(self.g, node, f"has {bad[0]} in its {what}, which must hold integers",
                              "the model is malformed")
        return [int(x) for x in v.tolist()]

    def scalar(self, node: ONode, name: str, what: str) -> float | int:
        v = self.const(node, name, what).reshape(-1)
        if v.size != 1:
            raise unsupported(self.g, node, f"has {v.size} values for its {what}",
                              "quantize activations per tensor (one scale and zero point)")
        return v[0].item()

    def qparams(self, node: ONode, scale: str, zp: str, what: str, data: str = "") -> tuple[float, int, str]:
        """(float32 scale, zero point, dtype) of a per-tensor quantized operand; without a zero point the
        dtype is the operand `data`'s (uint8 for outputs, as ONNX defaults)."""
        s = float(np.float32(self.scalar(node, scale, f"{what} scale")))
        if zp:
            z_arr = self.const(node, zp, f"{what} zero point")
            z = int(self.scalar(node, zp, f"{what} zero point"))
            dt = str(z_arr.dtype)
        else:
            z = 0
            dt = self.tensors[self.ir[data]].dtype if data in self.ir else "uint8"
        if dt in ("int4", "int2"):
            raise unsupported(self.g, node, f"quantizes its {what} to signed {dt}",
                              f"sub-byte activations are unsigned (use u{dt}; docs/subbyte.md)")
        if dt not in ("int8", "uint8", "uint4", "uint2"):
            raise unsupported(self.g, node, f"quantizes its {what} to {dt}",
                              "use int8, uint8, uint4 or uint2 activations")
        if not s > 0:
            raise unsupported(self.g, node, f"has the non-positive {what} scale {s}", "the model is malformed")
        return s, z, dt

    # -- tensors --------------------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        name = base
        i = 1
        while name in self.tensors or name in self.names:
            name = f"{base}_{i}"
            i += 1
        self.names.add(name)
        return name

    def node_name(self, base: str) -> str:
        return self.fresh(base or "node")

    def add_tensor(self, name: str, shape: tuple[int, ...], dtype: str, quant: QuantParams | None,
                   data: np.ndarray | None = None, perm: tuple[int, ...] | None = None) -> str:
        self.tensors[name] = Tensor(name, tuple(int(d) for d in shape), dtype, quant, data)
        self.names.add(name)
        self.perm[name] = perm if perm is not None else tuple(range(len(shape)))
        return name

    def add_const(self, base: str, data: np.ndarray, dtype: str, quant: QuantParams | None = None) -> str:
        name = self.fresh(base)
        return self.add_tensor(name, data.shape, dtype, quant, np.ascontiguousarray(data))

    def emit(self, onode: ONode | None, op: Op, inputs: list[str], output: str, expect: tuple[int, ...] | None,
             dtype: str, quant: QuantParams | None, params: OpParams, layout: tuple[int, ...] | None = None,
             suffix: str = "") -> str:
        """Append an IR node; its output shape comes from IR shape inference (checked if given).

        `layout` is the output's perm (ir = onnx.transpose(layout)), the identity by default.
        """
        name = self.node_name((onode.name if onode else op) + suffix)
        node = Node(name, op, tuple(inputs), (output,), params)
        try:
            inferred = infer_shape(Graph("tmp", self.tensors, (), (), ()), node)
        except ValueError as e:     # the IR's shape rules refuse the inputs' shapes
            shapes = ", ".join(str(self.onnx_shape(i) if i in self.perm else self.tensors[i].shape)
                               for i in inputs if i in self.tensors)
            raise unsupported(self.g, onode, f"has inputs of shapes {shapes} that {op.value} cannot take ({e})",
                              "the model is malformed") from None
        if any(d < 1 for d in inferred):
            raise unsupported(self.g, onode, f"gives an output of shape {tuple(inferred)} (a window larger than its "
                              "padded input, or an empty tensor)", "the model is malformed")
        if expect is not None and tuple(expect) != tuple(inferred):
            raise unsupported(self.g, onode, f"produces shape {tuple(expect)} where its inputs give {tuple(inferred)}",
                              "the model is malformed")
        self.add_tensor(output, inferred, dtype, quant, perm=layout)
        self.nodes.append(node)
        if op in MOVES_VALUES and all(i in self.bounds for i in inputs if i in self.tensors
                                      and not self.tensors[i].is_const):
            ranges = [self.bounds[i] for i in inputs if i in self.bounds]
            if ranges:
                self.bounds[output] = (min(r[0] for r in ranges), max(r[1] for r in ranges))
        return output

    def t(self, ir_name: str) -> Tensor:
        return self.tensors[ir_name]

    def float_bound(self) -> int:
        """`float_max` with every proven value bound (onnx.py: meta["onnx_value_bound"])."""
        spans = [max(abs(lo), abs(hi)) for lo, hi in self.bounds.values()]
        return max([self.float_max, *spans])

    def bound(self, ir_name: str) -> tuple[int, int]:
        """[lo, hi] of an IR activation's values: a proven bound, else its type's range."""
        return self.bounds.get(ir_name, dtype_range(self.tensors[ir_name].dtype))

    def onnx_shape(self, ir_name: str) -> tuple[int, ...]:
        shape = self.tensors[ir_name].shape
        p = self.perm[ir_name]
        out = [0] * len(shape)
        for i, d in enumerate(shape):
            out[p[i]] = d
        return tuple(out)

    def act(self, node: ONode, onnx_name: str, scale: float | None = None, zp: int | None = None,
            dtype: str | None = None) -> str:
        """IR name of an integer activation read by `node`, its quantization checked against the node's."""
        if onnx_name not in self.ir:
            if onnx_name in self.g.consts:
                raise unsupported(self.g, node, f"reads the constant '{onnx_name}' where it expects an activation",
                                  "tilewise needs activations computed by the graph")
            raise unsupported(self.g, node, f"reads '{onnx_name}', a float tensor that no quantized operator produces",
                              "quantize the whole model (QDQ or QOperator) so that every operator works on integers")
        name = self.ir[onnx_name]
        t = self.tensors[name]
        if scale is not None:
            if dtype is not None and t.dtype != dtype:
                raise unsupported(self.g, node, f"reads '{onnx_name}' as {dtype} but it is {t.dtype}",
                                  "the model is malformed")
            if t.quant is None:
                self.tensors[name] = Tensor(t.name, t.shape, t.dtype, QuantParams((scale,), (int(zp or 0),)), t.data)
            elif (np.float32(t.quant.scale[0]) != np.float32(scale) or t.quant.zp != int(zp or 0)):
                raise unsupported(self.g, node, f"reads '{onnx_name}' with scale {scale} and zero point {zp}, but it "
                                  f"was produced with scale {t.quant.scale[0]} and zero point {t.quant.zp}",
                                  "give producer and consumer the same quantization parameters")
        return name

    def alias(self, onnx_out: str, ir_name: str) -> None:
        self.ir[onnx_out] = ir_name

    def out_name(self, onnx_name: str) -> str:
        name = self.fresh(onnx_name)
        self.ir[onnx_name] = name
        return name

    # -- layout ---------------------------------------------------------------------------------
    def in_onnx_order(self, node: ONode, ir_name: str) -> str:
        """An IR tensor holding `ir_name`'s data in ONNX element order (transposing when needed)."""
        if ir_name in self.flat:
            raise unsupported(self.g, node, "reads a flattened tensor in an unsupported way", "report this model")
        p = self.perm[ir_name]
        if p == tuple(range(len(p))):
            return ir_name
        t = self.tensors[ir_name]
        q = inverse(p)
        oshape = self.onnx_shape(ir_name)
        out = self.fresh(f"{ir_name}__onnx_order")
        if moves_data(t.shape, q):
            return self.emit(node, Op.TRANSPOSE, [ir_name], out, oshape, t.dtype, t.quant, TransposeParams(perm=q),
                             suffix="_to_nchw")
        return self.emit(node, Op.RESHAPE, [ir_name], out, oshape, t.dtype, t.quant, ReshapeParams(shape=oshape),
                         suffix="_to_nchw")

    def from_onnx_order(self, node: ONode, ir_name: str, onnx_out: str) -> str:
        """Bring an ONNX-ordered result to its canonical IR layout and bind it to `onnx_out`."""
        t = self.tensors[ir_name]
        p = canonical_perm(len(t.shape))
        if p == tuple(range(len(p))):
            self.alias(onnx_out, ir_name)
            return ir_name
        out = self.out_name(onnx_out)
        shape = tuple(t.shape[i] for i in p)
        if moves_data(t.shape, p):
            self.emit(node, Op.TRANSPOSE, [ir_name], out, shape, t.dtype, t.quant, TransposeParams(perm=p), layout=p,
                      suffix="_to_nhwc")
        else:
            self.emit(node, Op.RESHAPE, [ir_name], out, shape, t.dtype, t.quant, ReshapeParams(shape=shape), layout=p,
                      suffix="_to_nhwc")
        return out

    def const_like(self, node: ONode, name: str, data: np.ndarray, rank: int, perm: tuple[int, ...], dtype: str,
                   quant: QuantParams | None) -> str:
        """A broadcast operand constant aligned to `rank` dims and permuted like its partner."""
        arr = np.asarray(data)
        if arr.ndim > rank:
            raise unsupported(self.g, node, f"broadcasts a {arr.ndim}-D constant against a {rank}-D tensor",
                              "the model is malformed")
        arr = arr.reshape((1,) * (rank - arr.ndim) + arr.shape).transpose(perm)
        cname = self.fresh(name)
        return self.add_tensor(cname, arr.shape, dtype, quant, np.ascontiguousarray(arr), perm=perm)

    # -- edges ----------------------------------------------------------------------------------
    def lower_inputs(self) -> None:
        for name, (dtype, shape) in self.g.inputs.items():
            perm = canonical_perm(len(shape))
            ir_shape = tuple(shape[i] for i in perm)
            readers = self.cons.get(name, [])
            qs = [n for n in readers if n.op_type == "QuantizeLinear"]
            if dtype == "float32" and self.style not in INTEGER_STYLES:
                if not readers or len(qs) != len(readers):
                    other = next((n for n in readers if n.op_type != "QuantizeLinear"), None)
                    raise unsupported(self.g, other, f"reads the float graph input '{name}' directly",
                                      "quantize the model so that its input goes through a QuantizeLinear")
                params = {(self.qparams(q, q.input(1), q.input(2), "output")) for q in qs}
                if len(params) != 1:
                    raise unsupported(self.g, qs[1],
                                      f"quantizes the graph input '{name}' differently from '{qs[0].name}'",
                                      "quantize a graph input once")
                s, z, dt = params.pop()
                ir_name = self.fresh(qs[0].outputs[0])
                self.add_tensor(ir_name, ir_shape, dt, QuantParams((s,), (z,)), perm=perm)
                for q in qs:
                    self.alias(q.outputs[0], ir_name)
                edge = (s, z)
            elif dtype == "float32" or (dtype in WIDE_CONTAINERS and self.style in INTEGER_STYLES):
                # integer codes carried in float32 (NEMO, QuantLab, Deeploy) or in a wide integer
                # container: their type is the option's or the container's default
                ir_name = self.fresh(name)
                self.add_tensor(ir_name, ir_shape, self.container_dtype(name, dtype), QuantParams((1.0,), (0,)),
                                perm=perm)
                self.alias(name, ir_name)
                edge = (1.0, 0)
                self.state_edge(name, ir_name)
            elif dtype in ("int8", "uint8", "uint4", "uint2"):
                ir_name = self.fresh(name)
                self.add_tensor(ir_name, ir_shape, dtype, None, perm=perm)
                self.alias(name, ir_name)
                edge = None
            else:
                raise unsupported(self.g, None, f"has the {dtype} input '{name}'", "use float32, int8 or uint8 inputs")
            self.ir_inputs.append(ir_name)
            self.inputs.append({"onnx": name, "ir": ir_name, "to_ir_perm": perm, "onnx_shape": tuple(shape),
                                "onnx_dtype": dtype, "scale": None if edge is None else edge[0],
                                "zero_point": None if edge is None else edge[1]})

    def state_edge(self, onnx_name: str, ir_name: str) -> None:
        """Record the quantization the model states for the codes of the network edge `onnx_name`
        (an integer export's input or output), refused when its zero point lies outside the
        codes' type."""
        if onnx_name not in self.stated:
            return
        scale, zp = self.stated[onnx_name]
        dtype = self.tensors[ir_name].dtype
        lo, hi = dtype_range(dtype)
        if not lo <= zp <= hi:
            raise unsupported(self.g, None, f"states zero point {zp} for '{onnx_name}', outside the "
                              f"[{lo}, {hi}] of its {dtype} codes",
                              "give that input the code type of its zero point with --input-dtype")
        self.io_quant[ir_name] = (scale, zp)

    def container_dtype(self, name: str, container: str) -> str:
        """The IR dtype of input `name` whose ONNX `container` (float32, int16, int32, int64) holds
        integer codes: the `input_dtypes` entry for it or for "*", else uint8 for float32 (DORY's
        images) and the container's own width for integers (int64 as int32)."""
        given = self.input_dtypes.get(name, self.input_dtypes.get("*"))
        if given is None and container in ("int32", "int64"):
            self.wide_inputs.add(name)
        if given is not None:
            if given not in CONTAINER_DTYPES:
                raise unsupported(self.g, None, f"gets the input dtype '{given}' for its input '{name}'",
                                  f"give one of {', '.join(CONTAINER_DTYPES)}")
            return given
        return {"float32": "uint8", "int16": "int16"}.get(container, "int32")

    def lower_outputs(self) -> list[str]:
        names = []
        for name in self.g.outputs:
            p = self.prod.get(name)
            if p is not None and p.op_type == "DequantizeLinear" and p.inputs[0] in self.ir:
                src = self.act(p, p.inputs[0])
                s, z, _ = self.qparams(p, p.input(1), p.input(2), "input", p.inputs[0])
                t = self.tensors[src]
                if t.quant is not None and (np.float32(t.quant.scale[0]) != np.float32(s) or t.quant.zp != z):
                    raise unsupported(self.g, p,
                                      "dequantizes the graph output with parameters its producer does not use",
                                      "give producer and DequantizeLinear the same quantization parameters")
                edge: tuple[float, int] | None = (s, z)
                dtype = "float32"
            elif name in self.ir:
                src = self.ir[name]
                self.state_edge(name, src)
                edge = (1.0, 0) if self.style in INTEGER_STYLES else None
                dtype = "float32" if self.style in INTEGER_STYLES else self.tensors[src].dtype
            else:
                raise unsupported(self.g, p, f"produces the graph output '{name}' in float",
                                  "quantize the model up to its outputs")
            if src in self.flat:
                raise unsupported(self.g, p, f"outputs the flattened tensor '{name}'", "report this model")
            names.append(src)
            self.outputs.append({"onnx": name, "ir": src, "to_ir_perm": self.perm[src],
                                 "onnx_shape": self.onnx_shape(src),
                                 "onnx_dtype": dtype, "scale": None if edge is None else edge[0],
                                 "zero_point": None if edge is None else edge[1]})
        return names

    # -- walking --------------------------------------------------------------------------------
    def lower_nodes(self) -> None:
        for node in self.g.nodes:
            if node.op_type == "QuantizeLinear" and node.inputs[0] in self.g.inputs:
                continue  # input edge, handled by lower_inputs
            if node.op_type == "DequantizeLinear" and all(o in self.g.outputs and len(self.cons.get(o, [])) == 0
                                                          for o in node.outputs):
                continue  # output edge
            fn = HANDLERS.get(node.op_type)
            if fn is None:
                raise self.no_handler(node)
            fn(self, node)

    def no_handler(self, node: ONode) -> Exception:
        from .onnx import SUPPORTED_OPS  # local: avoid an import cycle
        from .onnx_qdq import CLIP_OPS, MOVE_OPS, REQUANT_OPS

        if node.op_type == "DequantizeLinear":
            reader = next(iter(self.cons.get(node.outputs[0], [])), None)
            if reader is not None and reader.op_type not in REQUANT_OPS + MOVE_OPS + CLIP_OPS + ("QuantizeLinear",):
                return unsupported(self.g, reader, "is not supported by tilewise",
                                   f"supported ONNX operators are {', '.join(SUPPORTED_OPS)}")
            if reader is not None:
                return unsupported(self.g, reader, "computes in float on a dequantized tensor (it is not part of a "
                                   "DequantizeLinear -> op -> QuantizeLinear group tilewise can run on integers)",
                                   "quantize this operator too, or remove it")
        from .onnx_quantlab import DEPLOYED_OPS, QUANTLAB_OPS

        if node.op_type in QUANTLAB_OPS and node.op_type not in DEPLOYED_OPS:
            return unsupported(self.g, node, "is one of Deeploy's integer transformer operators that tilewise does "
                               "not deploy yet (attention's ITAMax, IntegerMean)",
                               "deploy the network's convolutional or dense parts on their own, or run it with Deeploy")
        if node.op_type == "QuantizeLinear":
            return unsupported(self.g, node, "quantizes a float tensor computed inside the graph",
                               "quantize every operator before it (the model still computes in float there)")
        return unsupported(self.g, node, "is not supported by tilewise",
                           f"supported ONNX operators are {', '.join(SUPPORTED_OPS)} (quantized)")

    def tensor_map(self, tensors: Mapping[str, Tensor]) -> list[dict[str, Any]]:
        """Every ONNX tensor that has an IR activation, in the order the lowering met them (the
        model's execution order): {"onnx", "ir", "to_ir_perm", "onnx_shape"} — the IR array is
        the ONNX one transposed by to_ir_perm (a Flatten folded into a dense layer's weights,
        `flat`, keeps its NHWC data and is left out). Validation matches an exporter's per-layer
        golden data to IR tensors through it."""
        out = []
        for onnx_name, ir_name in self.ir.items():
            t = tensors.get(ir_name)
            if t is None or t.is_const or ir_name in self.flat:
                continue
            out.append({"onnx": onnx_name, "ir": ir_name, "to_ir_perm": tuple(self.perm[ir_name]),
                        "onnx_shape": self.onnx_shape(ir_name)})
        return out

    def finish(self, graph_name: str, meta: dict[str, Any]) -> Graph:
        outs = self.lower_outputs()
        used = {i for n in self.nodes for i in n.inputs} | set(outs) | set(self.ir_inputs)
        tensors = {k: v for k, v in self.tensors.items() if k in used or any(k in n.outputs for n in self.nodes)}
        meta = dict(meta)
        meta.update({"source_layout": "NCHW", "onnx_inputs": self.inputs, "onnx_outputs": self.outputs,
                     "onnx_tensors": self.tensor_map(tensors)})
        if self.io_quant:
            meta[IO_QUANT] = dict(self.io_quant)
        return Graph(graph_name, tensors, tuple(self.nodes), tuple(self.ir_inputs), tuple(outs),
                     source=self.g.source, meta=meta)


# ---------------------------------------------------------------------------------------------
# window geometry shared by convolutions and pools
# ---------------------------------------------------------------------------------------------

def window_pads(lw: Lowering, node: ONode, in_hw: tuple[int, int], kernel: tuple[int, int], stride: tuple[int, int],
                dilation: tuple[int, int] = (1, 1)) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) from pads / auto_pad, ceil_mode accepted only where it changes nothing."""
    for what, v in (("kernel", kernel), ("strides", stride), ("dilations", dilation)):
        if len(v) != 2 or min(v) < 1:
            raise unsupported(lw.g, node, f"has {what} {list(v)} for a 2-D window", "give two values of at least 1")
    auto = str(node.attr("auto_pad", "NOTSET"))
    if auto in ("NOTSET", ""):
        p = [int(v) for v in node.attr("pads", [0, 0, 0, 0])]
        if len(p) != 4:
            raise unsupported(lw.g, node, f"has {len(p)} pad values", "tilewise supports 2-D windows")
        pads = (p[0], p[1], p[2], p[3])
        if max(abs(v) for v in pads) > 1 << 16:
            raise unsupported(lw.g, node, f"has pads {p}", "pad by less than 65536; the model is malformed")
    elif auto == "VALID":
        pads = (0, 0, 0, 0)
    elif auto in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for size, k, s, d in zip(in_hw, kernel, stride, dilation):
            o = -(-size // s)
            total = max((o - 1) * s + d * (k - 1) + 1 - size, 0)
            small, big = total // 2, total - total // 2
            out.append((small, big) if auto == "SAME_UPPER" else (big, small))
        pads = (out[0][0], out[1][0], out[0][1], out[1][1])
    else:
        raise unsupported(lw.g, node, f"has auto_pad '{auto}'", "use explicit pads")
    ceil = np.asarray(node.attr("ceil_mode", 0)).reshape(-1)
    if ceil.size != 1:
        raise unsupported(lw.g, node, f"has ceil_mode {ceil.tolist()}", "give one value, 0 or 1")
    if int(ceil[0]):
        for size, k, s, b, e, d in zip(in_hw, kernel, stride, pads[:2], pads[2:], dilation):
            if (size + b + e - (d * (k - 1) + 1)) % s != 0:
                raise unsupported(lw.g, node, "uses ceil_mode where it adds an output row or column",
                                  "export with ceil_mode=0 or pad the input explicitly")
    return pads


def int_range(dtype: str, clip: tuple[int, int] | None = None) -> tuple[int, int]:
    lo, hi = dtype_range(dtype)
    if clip is not None:
        lo, hi = max(lo, clip[0]), min(hi, clip[1])
    return lo, hi


# ---------------------------------------------------------------------------------------------
# data movement on integer tensors (any style)
# ---------------------------------------------------------------------------------------------

@handler("Identity", "Dropout")
def identity(lw: Lowering, node: ONode) -> None:
    lw.alias(node.outputs[0], lw.act(node, node.inputs[0]))


@handler("MaxPool")
def max_pool(lw: Lowering, node: ONode) -> None:
    if len([o for o in node.outputs if o]) > 1:
        raise unsupported(lw.g, node, "also returns indices", "use MaxPool without the Indices output")
    x = lw.act(node, node.inputs[0])
    t = lw.t(x)
    if len(t.shape) == 3 and len(node.attr("kernel_shape", [])) == 1:
        # a 1-D pool: the 2-D one on [N, C, 1, W] (onnx_int.py)
        from .onnx_int import as_4d, node_2d, to_3d

        n2 = node_2d(node)
        x4 = as_4d(lw, node, x)
        t4 = lw.t(x4)
        y4 = _max_pool_2d(lw, n2, x4, t4, lw.fresh(f"{node.outputs[0]}__4d"))
        to_3d(lw, node, y4, node.outputs[0])
        return
    if len(t.shape) != 4:
        raise unsupported(lw.g, node, f"pools a {len(t.shape)}-D tensor", "tilewise supports 1-D and 2-D pooling")
    _max_pool_2d(lw, node, x, t, lw.out_name(node.outputs[0]))


def _max_pool_2d(lw: Lowering, node: ONode, x: str, t: Tensor, out: str) -> str:
    kernel = tuple(int(v) for v in node.attr("kernel_shape"))
    stride = tuple(int(v) for v in node.attr("strides", [1, 1]))
    if tuple(int(v) for v in node.attr("dilations", [1, 1])) != (1, 1):
        raise unsupported(lw.g, node, "has dilations", "use an undilated MaxPool")
    pads = window_pads(lw, node, t.shape[1:3], kernel, stride)
    lo, hi = int_range(t.dtype)
    return lw.emit(node, Op.MAX_POOL, [x], out, None, t.dtype, t.quant,
                   MaxPoolParams(kernel=kernel, stride=stride, pads=pads, qmin=lo, qmax=hi), layout=lw.perm[x])


def _target_shape(lw: Lowering, node: ONode, in_shape: tuple[int, ...]) -> tuple[int, ...]:
    if node.op_type == "Flatten":
        axis = int(node.attr("axis", 1)) % (len(in_shape) + 1) if in_shape else 0
        return (int(np.prod(in_shape[:axis], dtype=np.int64)), int(np.prod(in_shape[axis:], dtype=np.int64)))
    spec = lw.ints(node, node.inputs[1], "shape")
    allow_zero = int(node.attr("allowzero", 0))
    if not allow_zero and any(v == 0 and i >= len(in_shape) for i, v in enumerate(spec)):
        raise unsupported(lw.g, node, f"has shape {spec}, copying a dimension (0) its {len(in_shape)}-D input "
                          "does not have", "the model is malformed")
    out = [in_shape[i] if (v == 0 and not allow_zero) else v for i, v in enumerate(spec)]
    if out.count(-1) > 1:
        raise unsupported(lw.g, node, "has more than one -1 in its shape", "the model is malformed")
    if -1 in out:
        known = int(np.prod([v for v in out if v != -1], dtype=np.int64))
        out[out.index(-1)] = int(np.prod(in_shape, dtype=np.int64)) // max(known, 1)
    if int(np.prod(out, dtype=np.int64)) != int(np.prod(in_shape, dtype=np.int64)):
        raise unsupported(lw.g, node, f"reshapes {in_shape} to {tuple(out)}", "the model is malformed")
    return tuple(out)


def _only_fc_readers(lw: Lowering, onnx_name: str) -> bool:
    readers = lw.cons.get(onnx_name, [])
    return (bool(readers) and onnx_name not in lw.g.outputs
            and all(r.op_type in FC_READERS and r.inputs[0] == onnx_name and onnx_name not in r.inputs[1:]
                    for r in readers))


@handler("Reshape", "Flatten")
def reshape(lw: Lowering, node: ONode) -> None:
    x = lw.act(node, node.inputs[0])
    emit_reshape(lw, node, x, _target_shape(lw, node, lw.onnx_shape(x)), node.outputs[0])


def emit_reshape(lw: Lowering, node: ONode, x: str, target: tuple[int, ...], onnx_out: str) -> None:
    """IR activation `x` as ONNX tensor `onnx_out` of ONNX shape `target` (an alias where nothing
    changes, a reshape of the IR data where the layout allows, else through ONNX order)."""
    t = lw.t(x)
    oshape = lw.onnx_shape(x)
    if target == oshape:
        lw.alias(onnx_out, x)
        return
    if (len(oshape) == 4 and lw.perm[x] == NHWC and len(target) == 2 and target[0] == oshape[0]
            and moves_data(t.shape, inverse(NHWC)) and _only_fc_readers(lw, onnx_out)):
        out = lw.out_name(onnx_out)
        lw.emit(node, Op.RESHAPE, [x], out, target, t.dtype, t.quant, ReshapeParams(shape=target))
        lw.flat[out] = (oshape[1], oshape[2], oshape[3])
        return
    # where the NHWC -> NCHW permutation moves no data (e.g. H = W = 1) the IR data is already in ONNX order
    src = x if not moves_data(t.shape, inverse(lw.perm[x])) else lw.in_onnx_order(node, x)
    if canonical_perm(len(target)) == tuple(range(len(target))):
        lw.emit(node, Op.RESHAPE, [src], lw.out_name(onnx_out), target, t.dtype, t.quant,
                ReshapeParams(shape=target))
        return
    mid = lw.fresh(f"{onnx_out}__onnx_order")
    lw.emit(node, Op.RESHAPE, [src], mid, target, t.dtype, t.quant, ReshapeParams(shape=target))
    lw.from_onnx_order(node, mid, onnx_out)


@handler("Transpose")
def transpose(lw: Lowering, node: ONode) -> None:
    x = lw.act(node, node.inputs[0])
    t = lw.t(x)
    rank = len(t.shape)
    p_onnx = tuple(int(v) for v in node.attr("perm", list(range(rank))[::-1]))
    if sorted(p_onnx) != list(range(rank)):
        raise unsupported(lw.g, node, f"has perm {list(p_onnx)} for a {rank}-D tensor", "the model is malformed")
    py = canonical_perm(rank)
    inv_px = inverse(lw.perm[x])
    q = tuple(inv_px[p_onnx[py[i]]] for i in range(rank))
    if q == tuple(range(rank)):
        lw.alias(node.outputs[0], x)
        return
    shape = tuple(t.shape[i] for i in q)
    out = lw.out_name(node.outputs[0])
    if moves_data(t.shape, q):
        lw.emit(node, Op.TRANSPOSE, [x], out, shape, t.dtype, t.quant, TransposeParams(perm=q), layout=py)
    else:
        lw.emit(node, Op.RESHAPE, [x], out, shape, t.dtype, t.quant, ReshapeParams(shape=shape), layout=py)
