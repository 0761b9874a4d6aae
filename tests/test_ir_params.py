"""The op vocabulary and typed op parameters (ir/ops.py, ir/params.py): wrong, missing or unknown
parameters fail when a Node or Layer is built, and every (op, parameter class) a node can carry has a
golden kernel."""

from __future__ import annotations

from dataclasses import MISSING
from types import SimpleNamespace

import numpy as np
import pytest

from tilewise.errors import GraphError
from tilewise.golden import run_graph
from tilewise.golden.registry import lookup
from tilewise.ir.graph import Graph, Node
from tilewise.ir.layer import Layer, LoopNest
from tilewise.ir.ops import GRAPH_OPS, LAYER_ONLY_OPS, Op
from tilewise.ir.params import (
    PARAMS_OF,
    ClampParams,
    Conv2dParams,
    MaxPoolParams,
    OnnxAddParams,
    PadParams,
    ReshapeParams,
    TfliteAddSubParams,
    TfliteMeanParams,
)
from tilewise.ir.requant import Requant, tflite_requant
from tilewise.ir.tensor import QuantParams, Tensor
from tilewise.ir.verify import verify

RQ = tflite_requant(np.array([0.01]), 0, -128, 127)


def _conv(**changes) -> Conv2dParams:
    args = dict(stride=(1, 1), dilation=(1, 1), pads=(0, 0, 0, 0), groups=1, requant=RQ)
    return Conv2dParams(**{**args, **changes})


def test_op_vocabulary():
    assert LAYER_ONLY_OPS == {Op.DEPTHWISE, Op.GLOBAL_AVG_POOL, Op.ATTENTION, Op.CONV2D_ADD}
    assert GRAPH_OPS | LAYER_ONLY_OPS == set(Op) and not GRAPH_OPS & LAYER_ONLY_OPS
    assert set(PARAMS_OF) == set(Op)
    assert all(PARAMS_OF[op] for op in GRAPH_OPS)
    assert Op.CONV2D == "conv2d" and f"{Op.GLOBAL_AVG_POOL}" == "global_avg_pool"


def test_missing_unknown_or_fixed_fields_fail_at_construction():
    with pytest.raises(TypeError, match="qmax"):
        MaxPoolParams(kernel=(2, 2), stride=(2, 2), pads=(0, 0, 0, 0), qmin=-128)
    with pytest.raises(TypeError, match="value"):
        PadParams(pads=((0, 0),), value=0, value_=1)
    with pytest.raises(TypeError, match="mode"):
        OnnxAddParams(mode="tflite", a_index=0, ratio_a=1.0, ratio_b=1.0, fixed=0.0, qmin=0, qmax=255)
    with pytest.raises(TypeError):
        ReshapeParams((1, 4))                       # keyword-only
    with pytest.raises(ValueError, match="pads"):
        _conv(pads=(1, 1))
    with pytest.raises(ValueError, match="a_index"):
        OnnxAddParams(a_index=2, ratio_a=1.0, ratio_b=1.0, fixed=0.0, qmin=0, qmax=255)


def test_conv_and_dense_take_their_mode_from_the_requant():
    assert _conv().mode == "tflite"
    shift = Requant("shift", multiplier=np.ones(1, np.int64), shift=np.zeros(1, np.int64))
    assert _conv(requant=shift).mode == "shift"
    assert ReshapeParams(shape=(1,)).mode is None and ClampParams(qmin=0, qmax=1).mode is None


def test_node_rejects_a_string_op_or_the_wrong_params_class():
    with pytest.raises(TypeError, match="not an ir.ops.Op"):
        Node("n", "conv2d", ("x",), ("y",), _conv())
    with pytest.raises(TypeError, match="Conv2dParams"):
        Node("n", Op.CONV2D, ("x",), ("y",), ReshapeParams(shape=(1,)))
    with pytest.raises(TypeError, match="TfliteAddSubParams"):
        Node("n", Op.SUB, ("a", "b"), ("y",), OnnxAddParams(a_index=0, ratio_a=1.0, ratio_b=1.0, fixed=0.0,
                                                            qmin=0, qmax=255))


def test_layer_params_follow_the_op():
    nest = LoopNest("conv", K=1, C=1, OY=1, OX=1)
    with pytest.raises(TypeError, match="Layer's fields"):
        Layer("c", Op.CONV2D, ("x",), "y", nest, params=_conv())
    with pytest.raises(TypeError, match="MaxPoolParams"):
        Layer("p", Op.MAX_POOL, ("x",), "y", nest)
    mean = TfliteMeanParams(axes=(1, 2), keepdims=True, multiplier=1 << 30, shift=1)
    gap = Layer("g", Op.GLOBAL_AVG_POOL, ("x",), "y", nest, params=mean)
    assert gap.node_inputs == ("x",) and gap.mode == "tflite"
    with pytest.raises(ValueError, match="neither"):
        Layer("a", Op.ADD, ("x",), "y", nest, node_inputs=("x", "c"), params=TfliteAddSubParams(
            left_shift=20, input_multipliers=(1, 1), input_shifts=(0, 0), output_multiplier=1, output_shift=0,
            qmin=-128, qmax=127))


def _modes(cls: type) -> tuple[str | None, ...]:
    """The modes a parameter class can carry: its fixed one, or every one it may take."""
    f = cls.__dataclass_fields__["mode"]
    if f.init:                                   # ConcatParams: given by the frontend
        return ("tflite", "onnx")
    if f.default is MISSING:                     # conv2d / fully_connected: the requant's
        return ("tflite", "onnx", "shift")
    return (f.default,)


def test_every_node_params_class_has_a_golden_kernel():
    g = Graph("g", {}, (), (), ())
    for op in set(Op) - {Op.ATTENTION, Op.CONV2D_ADD}:   # they run their parts' kernels (golden/layers.py)
        for cls in PARAMS_OF[op]:
            for mode in _modes(cls):
                node = SimpleNamespace(name="n", op=op, params=SimpleNamespace(mode=mode))
                assert lookup(node, g) is not None, (op, cls.__name__, mode)


def test_verify_rejects_layer_only_ops_in_a_graph():
    q = QuantParams((0.1,), (0,))
    t = {"x": Tensor("x", (1, 2, 2, 1), "int8", q), "y": Tensor("y", (1, 1, 1, 1), "int8", q)}
    mean = TfliteMeanParams(axes=(1, 2), keepdims=True, multiplier=1 << 30, shift=1)
    g = Graph("g", t, (Node("m", Op.GLOBAL_AVG_POOL, ("x",), ("y",), mean),), ("x",), ("y",))
    with pytest.raises(GraphError, match="not a graph op"):
        verify(g)
    ok = g.replace(nodes=(Node("m", Op.MEAN, ("x",), ("y",), mean),))
    x = np.arange(4, dtype=np.int8).reshape(1, 2, 2, 1)
    assert run_graph(verify(ok), x)["y"].shape == (1, 1, 1, 1)
