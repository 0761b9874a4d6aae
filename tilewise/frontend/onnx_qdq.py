"""QDQ -> QOperator: fuse DequantizeLinear -> op -> QuantizeLinear groups into QLinear nodes.

This is the rewrite onnxruntime's QDQ selector/action transformers apply at session creation
(onnxruntime/core/optimizer/qdq_transformer/selectors_actions): with the default session options the
CPU provider then runs the fused QLinear* kernels, whose arithmetic defines the ``onnx`` mode. After
this pass the graph is in QOperator form and onnx_lower.py lowers it.

| QDQ group | becomes |
|---|---|
| DQ(x), DQ(w), DQ(b int32)? -> Conv -> [Relu/Clip] -> Q | QLinearConv (+ tw_clip) |
| DQ(a), DQ(B), DQ(C int32)? -> Gemm -> [Relu/Clip] -> Q | QGemm (com.microsoft) |
| DQ(a), DQ(B) -> MatMul -> [Relu/Clip] -> Q | QLinearMatMul |
| DQ(a), DQ(b) -> Add -> [Relu/Clip] -> Q | QLinearAdd |
| DQ -> AveragePool / GlobalAveragePool / Softmax -> Q | QLinearAveragePool / QLinearGlobalAveragePool / |
|                                                      | QLinearSoftmax                                  |
| DQ... -> Concat -> Q | QLinearConcat |
| DQ -> MaxPool / Reshape / Flatten / Transpose / Identity | the op on the integer tensor, then a requant when the |
| -> Q                                                     | scales differ                                         |
| DQ -> Relu / Clip -> Q, DQ -> Q | tilewise Requant (int -> int, clipped) |

A trailing Relu/Clip is kept as attrs["tw_clip"] = (low, high) in real values (None = unbounded): the
lowering clamps the output to its quantized bounds. Groups whose float result escapes (an op output
read by anything but one QuantizeLinear) are left alone; the lowering reports them as float
computation left in the graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .onnx_model import TW_DOMAIN, OnnxGraph, ONode, unsupported

MS = "com.microsoft"
#: ops whose integer form has its own output quantization (requantizing ops)
REQUANT_OPS = ("Conv", "Gemm", "MatMul", "Add", "AveragePool", "GlobalAveragePool", "Softmax", "Concat")
#: ops that move or select values without arithmetic
MOVE_OPS = ("MaxPool", "Reshape", "Flatten", "Transpose", "Identity")
CLIP_OPS = ("Relu", "Clip")


def _clip_bounds(g: OnnxGraph, n: ONode) -> tuple[float | None, float | None]:
    if n.op_type == "Relu":
        return 0.0, None
    lo = n.attr("min")
    hi = n.attr("max")
    for idx in (1, 2):
        name = n.input(idx)
        if name:
            if name not in g.consts:
                raise unsupported(g, n, f"takes its bound '{name}' from a computed tensor",
                                  "make Clip bounds constants")
            v = float(np.asarray(g.consts[name]).reshape(-1)[0])
            if idx == 1:
                lo = v
            else:
                hi = v
    return (None if lo is None else float(lo)), (None if hi is None else float(hi))


def _merge_clip(a: tuple[float | None, float | None] | None,
                b: tuple[float | None, float | None]) -> tuple[float | None, float | None]:
    if a is None:
        return b
    lo = a[0] if b[0] is None else (b[0] if a[0] is None else max(a[0], b[0]))
    hi = a[1] if b[1] is None else (b[1] if a[1] is None else min(a[1], b[1]))
    return lo, hi


class _Fuser:
    def __init__(self, g: OnnxGraph) -> None:
        self.g = g
        self.consts = dict(g.consts)
        self.prod = g.producers()
        self.cons = g.consumers()
        self.outputs = set(g.outputs)
        self.removed: set[int] = set()  # id() of absorbed nodes
        self.new: dict[int, list[ONode]] = {}  # id(anchor node) -> replacement nodes
        self.counter = 0

    # -- helpers -------------------------------------------------------------------------------
    def dq_of(self, name: str) -> ONode | None:
        p = self.prod.get(name)
        return p if p is not None and p.op_type == "DequantizeLinear" else None

    def only_consumer(self, name: str) -> ONode | None:
        c = self.cons.get(name, [])
        if len(c) != 1 or name in self.outputs:
            return None
        return c[0]

    def zp_name(self, q: ONode, dtype_hint: str) -> str:
        """The zero-point input of a Q/DQ node, synthesized (0) when omitted."""
        if q.input(2):
            return q.input(2)
        name = f"{q.name}__zero_point"
        dt = {"int8": np.int8, "uint8": np.uint8, "int16": np.int16, "int32": np.int32}.get(dtype_hint, np.uint8)
        self.consts[name] = np.zeros((), dtype=dt)
        return name

    def q_dtype(self, q: ONode) -> str:
        if q.input(2) and q.input(2) in self.consts:
            return str(np.asarray(self.consts[q.input(2)]).dtype)
        to = q.attr("output_dtype")
        return {3: "int8", 2: "uint8", 5: "int16"}.get(int(to), "uint8") if to else "uint8"

    def dq_params(self, dq: ONode, role: str, node: ONode) -> tuple[str, str, str]:
        """(int tensor, scale, zero point) read by a DequantizeLinear feeding `node`."""
        if dq.attr("block_size"):
            raise unsupported(self.g, dq, "uses blocked quantization",
                              "tilewise supports per-tensor and per-channel quantization")
        x = dq.inputs[0]
        dtype = str(np.asarray(self.consts[x]).dtype) if x in self.consts else self.act_dtype(x)
        if x not in self.consts and np.size(self.consts.get(dq.inputs[1], 1.0)) > 1:
            raise unsupported(self.g, dq, f"dequantizes the {role} of '{node.name}' per channel",
                              "quantize activations per tensor")
        return x, dq.inputs[1], self.zp_name(dq, dtype)

    def act_dtype(self, x: str) -> str:
        p = self.prod.get(x)
        if p is not None and p.op_type == "QuantizeLinear":
            return self.q_dtype(p)
        if x in self.g.inputs:
            return self.g.inputs[x][0]
        return "int8"

    def find_q(self, node: ONode, allow_clip: bool) -> tuple[ONode | None, list[ONode], Any]:
        """The QuantizeLinear that alone reads node's output, through optional Relu/Clip nodes."""
        chain: list[ONode] = []
        clip = None
        out = node.outputs[0]
        while True:
            c = self.only_consumer(out)
            if c is None:
                return None, [], None
            if c.op_type == "QuantizeLinear":
                if np.size(self.consts.get(c.inputs[1], 1.0)) > 1:
                    raise unsupported(self.g, c, "quantizes an activation per channel",
                                      "quantize activations per tensor")
                return c, chain, clip
            if allow_clip and c.op_type in CLIP_OPS:
                clip = _merge_clip(clip, _clip_bounds(self.g, c))
                chain.append(c)
                out = c.outputs[0]
                continue
            return None, [], None

    def emit(self, anchor: ONode, nodes: list[ONode], absorbed: list[ONode]) -> None:
        self.new[id(anchor)] = nodes
        for n in absorbed:
            self.removed.add(id(n))

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}__tw{self.counter}"

    # -- the pass ------------------------------------------------------------------------------
    def run(self) -> OnnxGraph:
        for node in self.g.nodes:
            if (id(node) in self.removed or node.op_type in ("QuantizeLinear", "DequantizeLinear")
                    or node.domain not in ("", "ai.onnx")):
                continue
            if node.op_type in REQUANT_OPS or node.op_type in MOVE_OPS or node.op_type in CLIP_OPS:
                self.fuse(node)
        # DQ -> Q pairs (requantization written as two nodes; the DQ may have other readers)
        for q in self.g.nodes:
            if q.op_type != "QuantizeLinear" or id(q) in self.removed:
                continue
            dq = self.dq_of(q.inputs[0])
            if dq is not None and dq.inputs[0] not in self.consts:
                x, xs, xz = self.dq_params(dq, "input", q)
                ys, yz = q.inputs[1], self.zp_name(q, self.q_dtype(q))
                self.emit(q, [ONode("Requant", q.name, (x, xs, xz, ys, yz), (q.outputs[0],), {}, TW_DOMAIN)], [])
        nodes: list[ONode] = []
        for node in self.g.nodes:
            if id(node) in self.new:
                nodes.extend(self.new[id(node)])
            elif id(node) not in self.removed:
                nodes.append(node)
        # drop DequantizeLinear nodes nobody reads any more (their readers were fused)
        used = {i for n in nodes for i in n.inputs} | self.outputs
        nodes = [n for n in nodes if not (n.op_type == "DequantizeLinear" and n.outputs[0] not in used)]
        return self.g.with_nodes(nodes, self.consts)

    def fuse(self, node: ONode) -> None:
        op = node.op_type
        data_idx = self.data_inputs(node)
        dqs = []
        for i in data_idx:
            dq = self.dq_of(node.inputs[i])
            if dq is None:
                return  # a float operand that is not dequantized: not a QDQ group
            dqs.append(dq)
        q, chain, clip = self.find_q(node, allow_clip=op in REQUANT_OPS)
        if q is None:
            return
        ys, yz = q.inputs[1], self.zp_name(q, self.q_dtype(q))
        y = q.outputs[0]
        attrs = dict(node.attrs)
        if clip is not None:
            attrs["tw_clip"] = clip
        absorbed = [q, *chain]
        if op == "Conv":
            x, xs, xz = self.dq_params(dqs[0], "input", node)
            w, ws, wz = self.weight_params(dqs[1], node, axis=0)
            ins = [x, xs, xz, w, ws, wz, ys, yz]
            if len(dqs) > 2:
                ins.append(self.bias_param(dqs[2], node))
            self.emit(node, [ONode("QLinearConv", node.name, tuple(ins), (y,), attrs)], absorbed)
        elif op in ("Gemm", "MatMul"):
            a, as_, az = self.dq_params(dqs[0], "input", node)
            trans_b = int(node.attr("transB", 0)) if op == "Gemm" else 0
            b, bs, bz = self.weight_params(dqs[1], node, axis=0 if trans_b else 1)
            if op == "MatMul":
                self.emit(node, [ONode("QLinearMatMul", node.name, (a, as_, az, b, bs, bz, ys, yz), (y,), attrs)],
                          absorbed)
                return
            c = self.bias_param(dqs[2], node) if len(dqs) > 2 else ""
            if c and float(node.attr("beta", 1.0)) != 1.0:
                raise unsupported(self.g, node, f"scales its bias by beta={node.attr('beta')}",
                                  "fold beta into the bias before quantizing")
            attrs.pop("beta", None)
            self.emit(node, [ONode("QGemm", node.name, (a, as_, az, b, bs, bz, c, ys, yz), (y,), attrs, MS)], absorbed)
        elif op == "Add":
            a, as_, az = self.dq_params(dqs[0], "input A", node)
            b, bs, bz = self.dq_params(dqs[1], "input B", node)
            self.emit(node, [ONode("QLinearAdd", node.name, (a, as_, az, b, bs, bz, ys, yz), (y,), attrs, MS)],
                      absorbed)
        elif op in ("AveragePool", "GlobalAveragePool", "Softmax"):
            x, xs, xz = self.dq_params(dqs[0], "input", node)
            if op == "Softmax":
                attrs["opset"] = self.g.opset
            self.emit(node, [ONode("QLinear" + op, node.name, (x, xs, xz, ys, yz), (y,), attrs, MS)], absorbed)
        elif op == "Concat":
            ins = [ys, yz]
            for dq in dqs:
                ins.extend(self.dq_params(dq, "input", node))
            self.emit(node, [ONode("QLinearConcat", node.name, tuple(ins), (y,), attrs, MS)], absorbed)
        elif op in MOVE_OPS:
            x, xs, xz = self.dq_params(dqs[0], "input", node)
            if self.same_params(xs, xz, ys, yz):  # onnxruntime drops such Q/DQ pairs
                self.emit(node, [ONode(op, node.name, (x, *node.inputs[1:]), (y,), attrs)], absorbed)
                return
            mid = self.fresh(node.outputs[0])
            moved = ONode(op, node.name, (x, *node.inputs[1:]), (mid,), attrs)
            req = ONode("Requant", q.name, (mid, xs, xz, ys, yz), (y,), {}, TW_DOMAIN)
            self.emit(node, [moved, req], absorbed)
        elif op in CLIP_OPS:
            x, xs, xz = self.dq_params(dqs[0], "input", node)
            bounds = _clip_bounds(self.g, node)
            self.emit(node, [ONode("Requant", node.name, (x, xs, xz, ys, yz), (y,), {"tw_clip": bounds}, TW_DOMAIN)],
                      absorbed)

    def same_params(self, xs: str, xz: str, ys: str, yz: str) -> bool:
        vals = [self.consts.get(n) for n in (xs, xz, ys, yz)]
        if any(v is None for v in vals):
            return False
        a, b, c, d = (np.asarray(v) for v in vals)
        return a.size == c.size == 1 and np.float32(a.reshape(-1)[0]) == np.float32(c.reshape(-1)[0]) and \
            b.dtype == d.dtype and int(b.reshape(-1)[0]) == int(d.reshape(-1)[0])

    def data_inputs(self, node: ONode) -> list[int]:
        op = node.op_type
        if op in ("Conv", "Gemm"):
            return [i for i in range(3) if node.input(i)]
        if op in ("MatMul", "Add"):
            return [0, 1]
        if op == "Concat":
            return list(range(len(node.inputs)))
        return [0]

    def weight_params(self, dq: ONode, node: ONode, axis: int) -> tuple[str, str, str]:
        w = dq.inputs[0]
        if w not in self.consts:
            raise unsupported(self.g, node, "multiplies two activations", "tilewise needs constant weights")
        scale = np.asarray(self.consts[dq.inputs[1]])
        if scale.size > 1:
            rank = np.asarray(self.consts[w]).ndim
            dq_axis = int(dq.attr("axis", 1)) % rank
            if dq_axis != axis:
                raise unsupported(self.g, node, f"has weights quantized per channel along axis {dq_axis}",
                                  f"quantize the weights per output channel (axis {axis})")
        return w, dq.inputs[1], self.zp_name(dq, str(np.asarray(self.consts[w]).dtype))

    def bias_param(self, dq: ONode, node: ONode) -> str:
        b = dq.inputs[0]
        if b not in self.consts or np.asarray(self.consts[b]).dtype != np.int32:
            raise unsupported(self.g, node, "has a bias that is not a constant int32 tensor",
                              "quantize the bias to int32 (quantize_static does)")
        return b


def fuse_qdq(g: OnnxGraph) -> OnnxGraph:
    """Rewrite every DQ -> op -> Q group of `g` into its QOperator node."""
    return _Fuser(g).run()
