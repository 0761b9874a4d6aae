"""Constant folding of an ONNX graph before lowering: every node whose inputs are constants (or
static shapes) computed once, at import.

Exporters write shape arithmetic into graphs whose shapes are all static — `Shape → Gather →
Unsqueeze → Concat → Reshape`, `ConstantOfShape`, a `Cast` of a constant — and integer exports
compute constants in the graph (a `Mul` of two initializers). `fold_constants` evaluates each
such node with ONNX's own reference implementation (onnx.reference: the operator semantics of the
node's opset), replaces its outputs by constants and drops it, until nothing is left to fold; a
`Shape` of an activation folds when its shape is static (a graph input, or ONNX shape inference
knows it: OnnxGraph.shapes). Only standard-domain ops are evaluated; quantization operators stay
(their outputs are what the QDQ frontend reads), and so does any node reading an activation. A
node that fails to evaluate is one UnsupportedOpError sentence naming it.
"""

from __future__ import annotations

import numpy as np
from onnx import helper, numpy_helper

from .onnx_model import OnnxGraph, ONode, unsupported

#: ops never folded: the QDQ and QOperator frontends match on them
KEEP = ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear")


def _shape_of(g: OnnxGraph, name: str) -> tuple[int, ...] | None:
    if name in g.inputs:
        return g.inputs[name][1]
    if name in g.consts:
        return tuple(np.shape(g.consts[name]))
    return g.shapes.get(name)


def _evaluate(g: OnnxGraph, n: ONode, consts: dict[str, np.ndarray]) -> list[np.ndarray]:
    from onnx.reference import ReferenceEvaluator

    attrs = {k: (numpy_helper.from_array(np.asarray(v)) if isinstance(v, np.ndarray) else v)
             for k, v in n.attrs.items()}
    proto = helper.make_node(n.op_type, list(n.inputs), list(n.outputs), name=n.name, **attrs)
    feeds = {i: np.asarray(consts[i]) for i in n.inputs if i}
    try:
        out = ReferenceEvaluator(proto, opsets={"": g.opset or 13}).run(None, feeds)
    except Exception as e:   # noqa: BLE001 — the reference implementation's refusal is the model's fault
        raise unsupported(g, n, f"computes on constants but cannot be evaluated ({type(e).__name__}: "
                          f"{str(e).splitlines()[0][:120] if str(e) else ''})",
                          "check the node's inputs and attributes") from None
    return [np.asarray(v) for v in out]


def fold_constants(g: OnnxGraph) -> OnnxGraph:
    """`g` with every foldable node (module docstring) replaced by constants; `g` itself when
    there is nothing to fold."""
    consts = dict(g.consts)
    kept: list[ONode] = []
    folded = False
    for n in g.nodes:
        if n.domain not in ("", "ai.onnx") or n.op_type in KEEP or not n.outputs:
            kept.append(n)
            continue
        if n.op_type == "Shape" and n.inputs and n.inputs[0] not in consts:
            shape = _shape_of(g, n.inputs[0])
            if shape is None:
                kept.append(n)
                continue
            start, end = int(n.attr("start", 0)), n.attr("end")
            value = np.asarray(shape, dtype=np.int64)[start:None if end is None else int(end)]
            consts[n.outputs[0]] = value
            folded = True
            continue
        if n.inputs and all(not i or i in consts for i in n.inputs) and any(i for i in n.inputs):
            for name, v in zip(n.outputs, _evaluate(g, n, consts)):
                if name:
                    consts[name] = v
            folded = True
            continue
        kept.append(n)
    if not folded:
        return g
    return g.with_nodes(kept, consts)


__all__ = ["fold_constants"]
