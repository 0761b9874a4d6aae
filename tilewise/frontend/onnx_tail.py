"""Float tails after the integer body of a NEMO graph: cut, and said so.

NEMO exports often end in float operators after the last integer layer (notes/integer-onnx.md):
Gather / Unsqueeze / Squeeze to split one output into several, Sigmoid, Softmax, LogSoftmax (and a
Mul by a non-integer scalar read only by those: the codes' dequantization, `_dequantizes`).
tilewise deploys the integer body; the tail is not compiled. `cut_float_tail` removes every node
whose operator is in FLOAT_TAIL and whose results reach only graph outputs through such nodes,
and makes the tensors they read from the body the graph's outputs. It never changes an output
silently: graph.meta["notes"] gets one sentence naming the dropped nodes, the model outputs they
computed and the tensor compared instead, which `analyze`, `generate` and `validate` print, and
graph.meta["onnx_cut"] = {"outputs", "dropped", "model_outputs"} lets the reference
(frontend/onnx_io.py `reference_model`) run onnxruntime up to that same tensor.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .onnx_model import OnnxGraph, ONode

FLOAT_TAIL = ("Gather", "Unsqueeze", "Squeeze", "Sigmoid", "Softmax", "LogSoftmax")
#: ops that join the tail only when every input they read comes from the tail (QuantLab's
#: Dronet ends Gather → Sigmoid / Unsqueeze → Concat)
JOINS = ("Concat",)


def _dequantizes(g: OnnxGraph, n: ONode) -> bool:
    """A Mul of the body's codes by a non-integer constant (their scale: tilewise quantize's shift
    models feed the real logits to their Softmax this way); no requantization chain holds one."""
    c = g.consts.get(n.input(1)) if n.op_type == "Mul" and len(n.inputs) == 2 else None
    return c is not None and np.asarray(c).size == 1 and float(np.asarray(c).reshape(-1)[0]) % 1.0 != 0.0


def cut_float_tail(g: OnnxGraph) -> tuple[OnnxGraph, dict | None]:
    """(the graph without its float tail, the cut's description) or (g, None) without a tail."""
    cons = g.consumers()
    prod = g.producers()
    excluded: set[int] = set()
    while True:
        tail: set[int] = set()
        for n in reversed(g.nodes):
            if id(n) in excluded or (n.op_type not in FLOAT_TAIL + JOINS and not _dequantizes(g, n)):
                continue
            readers = [c for o in n.outputs if o for c in cons.get(o, [])]
            if all(id(c) in tail for c in readers) and (readers or any(o in g.outputs for o in n.outputs)):
                tail.add(id(n))
        joins = [n for n in g.nodes if n.op_type in JOINS and id(n) in tail
                 and not all(i in g.consts or (i in prod and id(prod[i]) in tail) for i in n.inputs if i)]
        if not joins:
            break
        excluded.update(id(n) for n in joins)
    if not tail:
        return g, None
    kept = [n for n in g.nodes if id(n) not in tail]
    produced = {o for n in kept for o in n.outputs} | set(g.inputs)
    cut: list[str] = [o for o in g.outputs if o in produced]
    for n in g.nodes:
        if id(n) in tail:
            cut += [i for i in n.inputs if i in produced and i not in g.consts and i not in cut]
    dropped = [n for n in g.nodes if id(n) in tail]
    info = {"outputs": cut, "dropped": [n.name for n in dropped], "model_outputs": list(g.outputs)}
    ops = ", ".join(sorted({n.op_type for n in dropped}))
    note = (f"{g.source}: the float tail after the integer body ({len(dropped)} node(s): {ops}) is not compiled; "
            f"the network ends at {', '.join(repr(c) for c in cut)}, which validate compares with onnxruntime's "
            f"value of the same tensor, and the model's output(s) {', '.join(repr(o) for o in g.outputs)} are "
            "computed from it by the application")
    return replace(g, nodes=tuple(kept), outputs=tuple(cut), notes=g.notes + (note,)), info
