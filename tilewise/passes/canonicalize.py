"""Graph-to-graph clean-ups before lowering: pad folding and removal of layout no-op reshapes.

- `fold_pads`: a PAD whose only consumer is a conv2d and whose pad value equals the conv input's
  zero point (zero in real terms), padding only H and W, becomes part of the conv's explicit pads.
  (TFLite exports 'SAME' convs with stride 2 as PAD + VALID conv; DORY and PULP-NN kernels take the
  padding per side, seed 004 §3.)
- `drop_noop_reshapes`: in NHWC a reshape/squeeze never moves bytes; when input and output share
  quantization and every consumer reads it as a flat vector (fully_connected) — or the shapes are
  equal — consumers read the reshape's input directly and the node disappears.
- `fold_clamps`: a CLAMP (a Relu / Clip between equal quantizations, e.g. the b-bit activation
  windows of quantize/narrow_search.py) whose input is written by a node read by nothing else
  that clamps its own output (`Requant.qmin/qmax`, or the params' qmin/qmax of the elementwise
  and rescaling ops) narrows that clamp and disappears:
  clamp(clamp(v, a, b), c, d) = clamp(v, max(a, c), min(b, d)) when the ranges overlap.
All are pure: they return a new Graph.
"""

from __future__ import annotations

from dataclasses import replace

from ..ir.graph import Graph, Node
from ..ir.ops import Op
from ..ir.params import ClampParams, Conv2dParams, PadParams
from ..ir.tensor import Tensor


def _same_quant(a: Tensor, b: Tensor) -> bool:
    if a.dtype != b.dtype:
        return False
    if a.quant is None or b.quant is None:
        return a.quant is None and b.quant is None
    return tuple(a.quant.scale) == tuple(b.quant.scale) and tuple(a.quant.zero_point) == tuple(b.quant.zero_point)


def _rename_inputs(nodes: list[Node], mapping: dict[str, str]) -> list[Node]:
    return [replace(n, inputs=tuple(mapping.get(i, i) for i in n.inputs)) for n in nodes]


def fold_pads(graph: Graph) -> Graph:
    consumers = graph.consumers()
    nodes = list(graph.nodes)
    removed: set[str] = set()
    mapping: dict[str, str] = {}
    changed_conv: dict[str, Node] = {}
    for node in graph.nodes:
        if node.op != Op.PAD:
            continue
        out = node.outputs[0]
        users = consumers.get(out, [])
        if len(users) != 1 or users[0].op != Op.CONV2D or users[0].inputs[0] != out or out in graph.outputs:
            continue
        conv = changed_conv.get(users[0].name, users[0])
        x = graph.tensors[node.inputs[0]]
        pad, cp = node.params, conv.params
        assert isinstance(pad, PadParams) and isinstance(cp, Conv2dParams)
        pads = pad.pads
        if len(pads) != 4 or any(tuple(pads[i]) != (0, 0) for i in (0, 3)):
            continue
        zp = x.quant.zp if x.quant else 0
        if pad.value != zp or not _same_quant(x, graph.tensors[out]):
            continue
        t, l, b, r = cp.pads
        (pt, pb), (pl, pr) = pads[1], pads[2]
        changed_conv[conv.name] = replace(conv, params=replace(cp, pads=(t + pt, l + pl, b + pb, r + pr)))
        removed.add(node.name)
        mapping[out] = node.inputs[0]
    if not removed:
        return graph
    nodes = [changed_conv.get(n.name, n) for n in nodes if n.name not in removed]
    nodes = _rename_inputs(nodes, mapping)
    used = {i for n in nodes for i in n.inputs} | {o for n in nodes for o in n.outputs} | set(graph.inputs)
    tensors = {k: v for k, v in graph.tensors.items() if k in used}
    return graph.replace(nodes=tuple(nodes), tensors=tensors)


#: consumers that read their input as a flat [N, C] vector, whatever its declared shape
_FLAT_READERS = (Op.FULLY_CONNECTED,)


def drop_noop_reshapes(graph: Graph) -> Graph:
    consumers = graph.consumers()
    mapping: dict[str, str] = {}
    kept: list[Node] = []
    for node in graph.nodes:
        if node.op == Op.RESHAPE:
            src = mapping.get(node.inputs[0], node.inputs[0])
            out = node.outputs[0]
            same_view = tuple(graph.tensors[src].shape) == tuple(graph.tensors[out].shape)
            flat_users = all(u.op in _FLAT_READERS for u in consumers.get(out, []))
            if (out not in graph.outputs and _same_quant(graph.tensors[src], graph.tensors[out])
                    and (same_view or flat_users)):
                mapping[out] = src
                continue
        kept.append(node)
    if not mapping:
        return graph
    nodes = _rename_inputs(kept, mapping)
    used = {i for n in nodes for i in n.inputs} | {o for n in nodes for o in n.outputs} | set(graph.inputs)
    tensors = {k: v for k, v in graph.tensors.items() if k in used}
    return graph.replace(nodes=tuple(nodes), tensors=tensors)


def fold_clamps(graph: Graph) -> Graph:
    consumers = graph.consumers()
    producer = {o: n for n in graph.nodes for o in n.outputs}
    changed: dict[str, Node] = {}
    removed: set[str] = set()
    for node in graph.nodes:
        if node.op != Op.CLAMP:
            continue
        cp = node.params
        src = node.inputs[0]
        prod = producer.get(src)
        if prod is None or prod.name in removed or prod.params is None:
            continue
        prod = changed.get(prod.name, prod)
        rq = getattr(prod.params, "requant", None)
        holder = rq if rq is not None else prod.params   # the output clamp: the requant's or the op's own
        if (not hasattr(holder, "qmin") or not hasattr(holder, "qmax") or not isinstance(cp, ClampParams)
                or len(prod.outputs) != 1 or src in graph.outputs or len(consumers.get(src, [])) != 1
                or not _same_quant(graph.tensors[src], graph.tensors[node.outputs[0]])):
            continue
        lo, hi = max(int(holder.qmin), int(cp.qmin)), min(int(holder.qmax), int(cp.qmax))
        if lo > hi:
            continue
        narrowed = replace(holder, qmin=lo, qmax=hi)
        params = replace(prod.params, requant=narrowed) if rq is not None else narrowed
        changed[prod.name] = replace(prod, outputs=node.outputs, params=params)
        removed.add(node.name)
    if not removed:
        return graph
    nodes = tuple(changed.get(n.name, n) for n in graph.nodes if n.name not in removed)
    used = {i for n in nodes for i in n.inputs} | {o for n in nodes for o in n.outputs} | set(graph.inputs)
    return graph.replace(nodes=nodes, tensors={k: v for k, v in graph.tensors.items() if k in used})
