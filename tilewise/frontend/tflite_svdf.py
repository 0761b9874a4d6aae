"""TFLite SVDF -> one svdf node with its int16 state tensor (SvdfParams, ir/params.py).

Inputs as LiteRT's kernels/svdf.cc numbers them: 0 input [N, C] int8, 1 weights_feature [F, C]
int8, 2 weights_time [F, M] int16, 3 bias [U] int32 (optional), 4 the state [N, F·M] int16 — a
variable tensor (is_variable, no buffer) that the op updates in place and LiteRT keeps from one
Invoke to the next. The node reads the state tensor; the graph lists it as a state tensor
(Converter.state_names, Graph.meta[ir.graph.STATE_TENSORS]) so that the golden model and the
generated C keep it across inferences.

Parameters as svdf.cc's Prepare computes them for the full-integer path: QuantizeMultiplier of
double(s_x)·double(s_wf)/double(s_state) and double(s_state)·double(s_wt)/double(s_y), the input
and output zero points. LiteRT's integer path requires the fused activation RELU (and does not
apply it); the hybrid (float input, int8 weights) and float paths are refused, as are a state or
weights with a zero point (the reference kernel assumes symmetric ones).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir.ops import Op
from ..ir.params import SvdfParams
from ..ir.requant import quantize_multiplier
from ..ir.tensor import Tensor
from .tflite import TfliteOperator, quant_params

if TYPE_CHECKING:
    from .tflite_ops import Converter


def _symmetric(cv: Converter, op: TfliteOperator, t, what: str, dtype: str) -> None:
    if t.dtype != dtype:
        raise cv.fail(op, f"has a {t.type_name} {what} '{t.name}'", f"LiteRT's integer SVDF takes a {dtype} {what}")
    if not t.quantized or len(t.scale) != 1 or not t.scale[0] > 0:
        raise cv.fail(op, f"has a {what} '{t.name}' without one positive per-tensor scale",
                      "re-export the model with per-tensor quantization of the SVDF")
    if t.zero_point[0] != 0:
        raise cv.fail(op, f"has a {what} '{t.name}' with zero point {t.zero_point[0]}",
                      "LiteRT's integer SVDF assumes a symmetric one; re-quantize it symmetrically")


def svdf(cv: Converter, op: TfliteOperator) -> None:
    x = cv.need(op, 0, "input")
    wf, wt = cv.need(op, 1, "weights_feature"), cv.need(op, 2, "weights_time")
    state = cv.need(op, 4, "state")
    y = cv.t(op.outputs[0])
    if x.dtype == "float32":
        raise cv.fail(op, "is a float or hybrid SVDF (float input)",
                      "tilewise compiles LiteRT's full-integer SVDF: quantize the model to int8 with an int16 state")
    cv.check_int(op, x, ("int8",))
    cv.check_int(op, y, ("int8",))
    _symmetric(cv, op, wf, "weights_feature", "int8")
    _symmetric(cv, op, wt, "weights_time", "int16")
    _symmetric(cv, op, state, "state", "int16")
    cv.const(op, wf, "weights_feature")
    cv.const(op, wt, "weights_time")
    if state.data is not None:
        raise cv.fail(op, f"has a constant state '{state.name}'",
                      "the state must be a variable tensor (no buffer), as TensorFlow writes it")
    rank = int(op.options.get("Rank", 0))
    if len(x.shape) != 2 or len(wf.shape) != 2 or len(wt.shape) != 2:
        raise cv.fail(op, f"has an input {list(x.shape)}, weights_feature {list(wf.shape)} and weights_time "
                          f"{list(wt.shape)}", "SVDF needs a 2-D input [batch, features] and 2-D weights")
    n, c = x.shape
    f, m = wt.shape
    if rank < 1 or wf.shape[0] != f or f % rank or wf.shape[1] != c or m < 1:
        raise cv.fail(op, f"has rank {rank}, weights_feature {list(wf.shape)} and weights_time {list(wt.shape)} "
                          f"for an input of {c} features", "the model is malformed; re-export it")
    if tuple(state.shape) != (n, f * m):
        raise cv.fail(op, f"has a state of shape {list(state.shape)} where LiteRT needs {[n, f * m]}",
                      "the model is malformed; re-export it")
    units = f // rank
    if tuple(y.shape) != (n, units):
        raise cv.fail(op, f"declares the output shape {list(y.shape)} where LiteRT gives {[n, units]}",
                      "the model is malformed; re-export it")
    from .tflite_ops import ACT_NAMES

    act = int(op.options.get("FusedActivationFunction", 0))
    if act != 1:
        raise cv.fail(op, f"has the fused activation {ACT_NAMES.get(act, act)}",
                      "LiteRT's integer SVDF runs only with RELU (svdf.cc); re-export it with RELU")
    bias = cv.inp(op, 3)
    bias_name = ""
    if bias is not None:
        data = cv.const(op, bias, "bias")
        if bias.dtype != "int32" or data.size != units:
            raise cv.fail(op, f"has a {bias.type_name} bias of {data.size} values for {units} units",
                          "LiteRT's integer SVDF takes an int32 bias, one value per unit")
        bias_name = cv.name(bias.index)
    m1, s1 = quantize_multiplier(float(x.scale[0]) * float(wf.scale[0]) / float(state.scale[0]))
    m2, s2 = quantize_multiplier(float(state.scale[0]) * float(wt.scale[0]) / float(y.scale[0]))
    sname = cv.name(state.index)
    cv.tensors[sname] = Tensor(sname, tuple(state.shape), "int16", quant_params(state), None)
    cv.state_names.append(sname)
    params = SvdfParams(rank=rank, memory=m, feature_multiplier=m1, feature_shift=s1, output_multiplier=m2,
                        output_shift=s2, input_zero_point=int(x.zero_point[0]),
                        output_zero_point=int(y.zero_point[0]))
    cv.emit(op, Op.SVDF, [cv.name(x.index), cv.name(wf.index), cv.name(wt.index), bias_name, sname],
            cv.name(y.index), params)


__all__ = ["svdf"]
