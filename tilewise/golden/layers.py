"""Run a LayerGraph (the lowered network) with the golden arithmetic.

conv2d / depthwise / fully_connected layers compute from their folded form (weights without zero
point, bias' = bias − zp_x·Σw, padding with Layer.pad_value = zp_x, golden/conv.py) — the form the C
kernels implement; every other layer runs the graph-level kernel registered for its op and params
mode (golden/registry.py; global_avg_pool has the mean's kernels) on its node inputs, constants
included. The Graph and its LayerGraph must agree bit for bit (tests/test_passes.py).

Narrow accumulators (`Layer.acc_bits` < 32, a module's `acc_bits`): the exact int64 accumulator
is wrapped to acc_bits two's complement bits (golden/acc_bounds.py `wrap`) before the
requantization. Two's complement addition is addition modulo 2^acc_bits, so wrapping once at the
end equals wrapping after every MAC (seed 002 Fig. 4.6) and after every partial sum spilled between
input-channel tiles — the C kernels wrap where the accumulator leaves the register (requant or
psum store, tw_common.h `tw_acc_wrap`), and tests/test_narrow_acc.py checks the three agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from ..ir.graph import Graph, Node, state_tensors
from ..ir.layer import Layer, LayerGraph
from ..ir.ops import Op
from ..ir.params import AttentionParams, ResidualAddParams
from ..ir.tensor import np_dtype
from .acc_bounds import wrap
from .conv import conv2d_acc, dense_acc
from .registry import lookup
from .requant import apply_requant
from .run import _feeds
from .svdf import STATEFUL, carried_states


def run_layer(layer: Layer, lg: LayerGraph, args: list[np.ndarray],
              states: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """Compute one layer's output from its input arrays (in `layer.inputs` order); a stateful
    layer (svdf) leaves its state's new value in `states` (golden/run.py)."""
    nest = layer.nest
    out_t = lg.tensors[layer.output]
    if layer.op == Op.ATTENTION:
        return _attention(layer, lg, args)
    if layer.op == Op.CONV2D_ADD:
        return _conv_add(layer, lg, args)
    if layer.op in (Op.CONV2D, Op.DEPTHWISE):
        x = args[0].reshape(nest.N, nest.IY, nest.IX, nest.C)
        w = layer.weights if layer.op == Op.CONV2D else layer.weights[..., None]
        groups = 1 if layer.op == Op.CONV2D else nest.C
        acc = conv2d_acc(
            x, w, layer.bias, 0, 0, (nest.SY, nest.SX), nest.pads, groups=groups, pad_value=layer.pad_value,
        )
        y = apply_requant(wrap(acc, layer.acc_bits), layer.requant)
    elif layer.op == Op.FULLY_CONNECTED:
        acc = dense_acc(args[0], layer.weights, layer.bias, 0, 0)
        y = apply_requant(wrap(acc, layer.acc_bits), layer.requant)
    else:
        assert layer.params is not None
        consts = layer.const_inputs
        it = iter(args)
        full_args = [None if not n else (consts[n].data if n in consts else next(it)) for n in layer.node_inputs]
        node = Node(layer.name, layer.op, layer.node_inputs, (layer.output,), layer.params)
        view = Graph(lg.name, {**lg.tensors, **consts}, (node,), lg.inputs, lg.outputs, lg.source)
        if layer.op in STATEFUL:
            y, new = STATEFUL[layer.op](node, full_args)
            if states is not None:
                states[layer.node_inputs[-1]] = new
        else:
            y = lookup(node, view)(node, view, full_args)
        if layer.op == Op.MATMUL and layer.requant is not None:
            # a MatMul fused with the requantization of its sums (passes/fuse_matmul.py): one
            # value per tensor or per column, channels last as apply_requant takes them
            y = apply_requant(np.asarray(y, dtype=np.int64), layer.requant)
    return np.asarray(y).astype(np_dtype(out_t.dtype)).reshape(out_t.shape)


def _conv_add(layer: Layer, lg: LayerGraph, args: list[np.ndarray]) -> np.ndarray:
    """A conv fused with its residual add (passes/fuse_residual.py): the conv's int8 output, then
    the add of it and the skip tensor (args: the conv's input, the skip tensor) — the numbers of
    the two layers."""
    p = layer.params
    assert isinstance(p, ResidualAddParams)
    view = replace(lg, tensors={**lg.tensors, **p.inner})
    values = {p.conv.output: run_layer(p.conv, view, [args[0]]), layer.inputs[1]: args[1]}
    return run_layer(p.add, view, [values[t] for t in p.add.inputs])


def _attention(layer: Layer, lg: LayerGraph, args: list[np.ndarray]) -> np.ndarray:
    """A depth-first attention (passes/fuse_attention.py): its scores, row op and context layers in
    order on (q, k, v) — the numbers of the layers it fuses, whatever order the kernel takes."""
    p = layer.params
    assert isinstance(p, AttentionParams)
    view = replace(lg, tensors={**lg.tensors, **p.inner})
    q, k, v = args
    s = run_layer(p.scores, view, [q, k])
    if p.rows is not None:
        s = run_layer(p.rows, view, [s])
    return run_layer(p.context, view, [s, v])


def run_layers(
    lg: LayerGraph,
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray] | np.ndarray,
    keep_all: bool = False,
    states: dict[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Execute the layers in order; outputs by name (every activation with keep_all). `states`:
    the state tensors' values, updated in place for the next inference (zeros when None: a
    first inference; golden/run.py)."""
    view = Graph(lg.name, lg.tensors, (), lg.inputs, lg.outputs, lg.source)
    values = _feeds(view, inputs)
    names = state_tensors(lg.meta)
    states = carried_states(lg.tensors, names, states)
    values.update({n: states[n] for n in names})
    for layer in lg.layers:
        values[layer.output] = run_layer(layer, lg, [values[i] for i in layer.inputs], states)
    return values if keep_all else {o: values[o] for o in lg.outputs}
