"""Lowering: the LayerGraph computes exactly what the Graph computes, on the real models.

Also checks the lowering's structure: pads folded into convs, reshapes before dense layers gone,
zero-point correction folded into the bias.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilewise.frontend import load_model
from tilewise.golden import run_graph
from tilewise.golden.layers import run_layers
from tilewise.ir.ops import Op
from tilewise.ir.tensor import dtype_range
from tilewise.passes import canonicalize, lower

from .conftest import MLPERF, mlperf_path


def _inputs(graph, rng, n):
    t = graph.input_tensors()[0]
    lo, hi = dtype_range(t.dtype)
    xs = [np.full(t.shape, lo), np.full(t.shape, hi)]
    xs += [rng.integers(lo, hi + 1, size=t.shape) for _ in range(n)]
    return xs


@pytest.mark.parametrize("name", MLPERF)
def test_layers_match_graph_bit_exact(name):
    graph = load_model(mlperf_path(name))
    lg = lower(graph)
    rng = np.random.default_rng(7)
    for x in _inputs(graph, rng, 4):
        want = run_graph(graph, [x], keep_all=True)
        got = run_layers(lg, [x], keep_all=True)
        for layer in lg.layers:
            np.testing.assert_array_equal(got[layer.output], want[layer.output], err_msg=f"{name}: layer {layer.name}")


@pytest.mark.parametrize("name", MLPERF)
def test_lowering_structure(name):
    graph = load_model(mlperf_path(name))
    canon = canonicalize(graph)
    lg = lower(graph)
    assert not any(n.op == Op.PAD and any(c.op == Op.CONV2D for c in canon.consumers().get(n.outputs[0], []))
                   for n in canon.nodes)
    # reshapes feeding dense layers are gone
    for n in canon.nodes:
        if n.op == Op.RESHAPE:
            assert (any(c.op != Op.FULLY_CONNECTED for c in canon.consumers().get(n.outputs[0], []))
                    or n.outputs[0] in canon.outputs)
    for layer in lg.layers:
        if layer.op in (Op.CONV2D, Op.DEPTHWISE, Op.FULLY_CONNECTED):
            assert layer.weights.dtype == np.int8 and layer.bias.dtype in (np.int32, np.int64)
            assert layer.requant is not None and layer.macs > 0


def test_zero_point_folded_into_bias():
    """bias' = bias − zp_x·Σw on a layer with a non-zero input zero point (kws_dscnn's first conv)."""
    graph = load_model(mlperf_path("kws_dscnn"))
    lg = lower(graph)
    first = next(l for l in lg.layers if l.op == Op.CONV2D)
    node = graph.node(first.source_nodes[0])
    zp = graph.tensors[node.inputs[0]].quant.zp
    assert zp != 0
    w = graph.tensors[node.inputs[1]].data.astype(np.int64)
    b = graph.tensors[node.inputs[2]].data.astype(np.int64)
    np.testing.assert_array_equal(first.bias, b - zp * w.reshape(w.shape[0], -1).sum(axis=1))
