"""Legality of the portable kernels: the reason a kernel cannot run a layer, or None.

Every refusal the portable C could make is here, asked by partition before anything is scheduled,
so `analyze` and `generate` give the same answer. A check returns a noun phrase ("an output clamp
of [-200, 127]"); partition wraps it into one sentence naming the layer, module and kernel.
The emission code (weighted.py, elementwise.py, pool.py, untiled.py, s16.py) may assume its
check passed: it asserts what it relies on, so a refusal that reaches emission is a bug.
"""

from __future__ import annotations

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ...ir.ops import Op
from ...ir.params import OnnxMeanParams, OnnxSoftmaxParams, TableAddParams
from ...ir.tensor import dtype_range
from . import constants
from .common import batch_one, first, u8_offset

INT32_MAX = 2**31 - 1


def _in8(v: int) -> bool:
    return -128 <= v <= 127


def _dtypes(layer: Layer, lg: LayerGraph) -> set[str]:
    return {lg.tensors[t].dtype for t in (*layer.inputs, layer.output) if t in lg.tensors}


def _offsets_agree(layer: Layer, tensors, names: tuple[str, ...]) -> str | None:
    """int8 and uint8 (stored biased) operands do not mix in one elementwise kernel."""
    offs = {128 if tensors[t].dtype == "uint8" else 0 for t in (*names, layer.output)}
    if offs != {0} and offs != {128}:
        return f"{layer.op} mixing int8 and uint8 tensors"
    return None


def _no_int16(layer: Layer, tensors, names: tuple[str, ...]) -> str | None:
    """The int8 elementwise kernels read every operand as 8-bit (the binding key only names the
    first input and the output)."""
    if any(tensors[t].dtype == "int16" for t in names):
        return f"an int16 operand of an 8-bit {layer.op}"
    return None


# --- int8 conv2d / depthwise / fully_connected -------------------------------------------------

def weighted_s8(layer: Layer, lg: LayerGraph) -> str | None:
    """conv2d (im2col + 4x2 or 1x1), depthwise (multiplier 1) and dense on int8/uint8."""
    rq = layer.requant
    if rq is None:
        return "a layer without requantization"
    x_off, y_off = u8_offset(lg, layer.inputs[0]), u8_offset(lg, layer.output)
    if rq.wide:
        return "the 16x8 (int64 accumulator) requantization on 8-bit activations"
    pad = int(layer.pad_value) - x_off
    if not _in8(pad):
        return f"an input zero point of {pad + x_off}"
    if not (_in8(int(rq.qmin) - y_off) and _in8(int(rq.qmax) - y_off) and rq.qmin <= rq.qmax):
        return f"an output clamp of [{rq.qmin}, {rq.qmax}]"
    if layer.op == Op.DEPTHWISE and layer.nest.K != layer.nest.C:
        return f"a depth multiplier of {layer.nest.K // max(layer.nest.C, 1)}"
    return batch_one(layer)


# --- 16x8 ---------------------------------------------------------------------------------------

def acc_bound(layer: Layer) -> int:
    """max over output channels of |bias| + 32768·Σ|w|: a bound on every partial sum."""
    k = layer.nest.K
    w = np.abs(np.asarray(layer.weights, dtype=np.int64)).reshape(k, -1).sum(axis=1)
    b = np.zeros(k, np.int64) if layer.bias is None else np.abs(np.asarray(layer.bias, dtype=np.int64))
    return int((b + 32768 * w).max(initial=0))


def weighted_s16(layer: Layer, lg: LayerGraph) -> str | None:
    """16x8 conv2d and dense (int64 accumulation, TFLite's int64 requant)."""
    if _dtypes(layer, lg) != {"int16"}:
        return "mixing int16 with other activation types"
    rq = layer.requant
    if rq is None or rq.mode != "tflite" or not rq.wide:
        return "the int32-bias (non-wide) 16x8 form"
    if int(layer.pad_value) != 0:
        return "a non-zero int16 input zero point"
    if not -32768 <= int(rq.qmin) <= int(rq.qmax) <= 32767:
        return f"an output clamp of [{rq.qmin}, {rq.qmax}]"
    if np.max(np.atleast_1d(rq.shift)) > 14:
        return "a requant left shift above 14"
    return batch_one(layer)


def add_table(layer: Layer, lg: LayerGraph) -> str | None:
    """An add of two same-shaped 8-bit activations by tables (TableAddParams) into an 8-bit
    output, no sum of two table entries beyond int32."""
    p = layer.params
    if not isinstance(p, TableAddParams):
        return f"an add with {type(p).__name__}"
    names = (*layer.inputs, layer.output)
    if len(layer.inputs) != 2 or any(lg.tensors[t].dtype not in ("int8", "uint8") for t in names):
        return "an add by tables of other than two 8-bit activations into an 8-bit output"
    if len({tuple(lg.tensors[t].shape) for t in names}) != 1:
        return "an add by tables of differently shaped tensors"
    ta, tb = (np.abs(np.asarray(t, np.int64)).max() for t in (p.table_a, p.table_b))
    if not 0 <= p.shift <= 31 or ta + tb + (u8_offset(lg, layer.output) << p.shift) > INT32_MAX:
        return "an add by tables whose sums leave int32"
    return batch_one(layer)


def weighted_s16_int(layer: Layer, lg: LayerGraph) -> str | None:
    """16x8 conv2d, depthwise (multiplier 1) and dense of the integer exports: int16 input, a
    shift or div requantization into int16 or an 8-bit type, constants the portable layout takes."""
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    if x.dtype != "int16" or y.dtype not in ("int16", "int8", "uint8"):
        return f"a {x.dtype} -> {y.dtype} layer (int16 input; int16 or 8-bit output)"
    rq = layer.requant
    if rq is None or rq.mode not in ("shift", "div"):
        return "a 16x8 layer without a shift or div requantization"
    if layer.nest.kind == "dwconv" and layer.nest.K != layer.nest.C:
        return f"a depth multiplier of {layer.nest.K // max(layer.nest.C, 1)}"
    if not -32768 <= int(layer.pad_value) <= 32767:
        return f"a padding value of {layer.pad_value}"
    lo, hi = dtype_range(y.dtype)
    if not lo <= int(rq.qmin) <= int(rq.qmax) <= hi:
        return f"an output clamp of [{rq.qmin}, {rq.qmax}]"
    return first(constants.check(layer, lg), batch_one(layer))


def depthwise_s16(layer: Layer, lg: LayerGraph) -> str | None:
    """16x8 depthwise, channel multiplier 1."""
    if layer.nest.K != layer.nest.C:
        return f"a depth multiplier of {layer.nest.K // max(layer.nest.C, 1)}"
    return weighted_s16(layer, lg)


def pool_s16(layer: Layer, lg: LayerGraph) -> str | None:
    """int16 average (tflite) or max pooling."""
    if _dtypes(layer, lg) != {"int16"}:
        return "mixing int16 with other activation types"
    return batch_one(layer)


def s16_rules(layer: Layer, rules):
    """The int16 kernels keep C-tile partial sums in int32: C is tiled only when every partial sum
    provably fits (|bias| + 32768·Σ|w| ≤ INT32_MAX); otherwise C stays whole."""
    if layer.weights is not None and acc_bound(layer) > INT32_MAX:
        return rules.with_whole("c", why="its int32 partial sums could overflow if C were tiled")
    return rules


def elementwise_s16(layer: Layer, lg: LayerGraph) -> str | None:
    """int16 add / sub / mul of two same-shaped activations (TFLite)."""
    if _dtypes(layer, lg) != {"int16"}:
        return "mixing int16 with other activation types"
    shapes = {tuple(lg.tensors[t].shape) for t in (*layer.inputs, layer.output)}
    if len(layer.inputs) != 2 or len(shapes) != 1:
        return f"an int16 {layer.op} that broadcasts or has a constant operand"
    return batch_one(layer)


def reshape(layer: Layer, lg: LayerGraph) -> str | None:
    """A reshape whose bytes do not change (HWC, same dtype and quantization): a copy."""
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    same_q = (x.quant is None and y.quant is None) or (
        x.quant is not None and y.quant is not None and tuple(x.quant.scale) == tuple(y.quant.scale)
        and tuple(x.quant.zero_point) == tuple(y.quant.zero_point))
    if not (x.nbytes == y.nbytes and x.dtype == y.dtype and same_q):
        return "a reshape that changes the type or quantization"
    return None


# --- elementwise int8 ---------------------------------------------------------------------------

def elementwise_s8(layer: Layer, lg: LayerGraph) -> str | None:
    """add / sub / mul (tflite), add (onnx) on two same-shaped activations, tiled."""
    return first(batch_one(layer), _no_int16(layer, lg.tensors, layer.inputs),
                 _offsets_agree(layer, lg.tensors, layer.inputs))


def broadcast_s8(layer: Layer, lg: LayerGraph) -> str | None:
    """add / sub / mul with a per-channel vector, scalar or constant operand (untiled)."""
    names = layer.node_inputs
    consts = layer.const_inputs
    y = lg.tensors[layer.output]
    if len(names) != 2 or not y.shape:
        return f"{layer.op} of {len(names)} operands"
    tensors = {**lg.tensors, **consts}
    reason = _no_int16(layer, tensors, names) or _offsets_agree(layer, tensors, names)
    if reason:
        return reason
    chans = int(y.shape[-1])
    for nm in names:
        t = tensors[nm]
        size = int(np.prod(t.shape, dtype=np.int64)) if t.shape else 1
        full = tuple(t.shape) == tuple(y.shape)
        vector = size == chans and (not t.shape or int(t.shape[-1]) == chans)
        if nm in consts and not (full or vector or size == 1):
            return f"a constant operand of shape {list(t.shape)}"
        if nm not in consts and not (full or vector):
            return (f"an operand of shape {list(t.shape)} broadcast to {list(y.shape)} "
                    f"(per-channel vectors only)")
    return None


def const_lookup_s8(layer: Layer, lg: LayerGraph) -> str | None:
    """add / sub / mul (tflite) of an activation and a constant of one value (untiled): the
    output is a function of the activation's byte alone, a 256-entry table (the GRU's 1 − z)."""
    reason = broadcast_s8(layer, lg)
    if reason:
        return reason
    consts = layer.const_inputs
    acts = [nm for nm in layer.node_inputs if nm not in consts]
    if len(acts) != 1 or len(consts) != 1:
        return f"{layer.op} of {len(acts)} activations (one activation and one constant only)"
    (c,) = consts.values()
    if np.unique(np.asarray(c.data)).size != 1:
        return "a constant operand of more than one value"
    if lg.tensors[acts[0]].nbytes != lg.tensors[layer.output].nbytes:
        return "an activation broadcast to the output"
    return None


# --- pooling ------------------------------------------------------------------------------------

def _same_storage(layer: Layer, lg: LayerGraph) -> str | None:
    if u8_offset(lg, layer.inputs[0]) != u8_offset(lg, layer.output):
        return "an output dtype that differs from the input's"
    return batch_one(layer)


def avg_pool_tflite(layer: Layer, lg: LayerGraph) -> str | None:
    if u8_offset(lg, layer.inputs[0]):
        return "tflite average pooling of uint8 tensors"
    return _same_storage(layer, lg)


def avg_pool_onnx(layer: Layer, lg: LayerGraph) -> str | None:
    return _same_storage(layer, lg)


def max_pool(layer: Layer, lg: LayerGraph) -> str | None:
    return _same_storage(layer, lg)


def gap_tflite(layer: Layer, lg: LayerGraph) -> str | None:
    return _same_storage(layer, lg)


def gap_onnx(layer: Layer, lg: LayerGraph) -> str | None:
    a, nest = layer.params, layer.nest
    assert isinstance(a, OnnxMeanParams)
    rq = a.requant
    if rq.mode != "onnx" or int(a.count) != nest.IY * nest.IX or np.size(rq.scale) != 1:
        return "this global average pooling"
    return _same_storage(layer, lg)


# --- untiled ops --------------------------------------------------------------------------------

def softmax_tflite(layer: Layer, lg: LayerGraph) -> str | None:
    y = lg.tensors[layer.output]
    q = y.quant
    if (y.dtype != "int8" or q is None or q.zp != -128
            or not np.isclose(q.scale[0], 1.0 / 256, rtol=0, atol=1e-12)):
        return "a softmax output not quantized with scale 1/256 and zero point -128"
    return None


def softmax_tflite16(layer: Layer, lg: LayerGraph) -> str | None:
    """int16 softmax: rows whose sum of exps fits int32 (tw_softmax_s16)."""
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    if x.dtype != "int16" or y.dtype != "int16":
        return f"a softmax from {x.dtype} to {y.dtype}"
    depth = int(x.shape[-1]) if x.shape else 1
    if depth * 32767 > INT32_MAX:
        return f"a softmax over {depth} values (its int32 sum could overflow)"
    return None


def softmax_onnx(layer: Layer, lg: LayerGraph) -> str | None:
    """QLinearSoftmax over any axis (tw_softmax_onnx_s8 walks the axis with a stride)."""
    a = layer.params
    assert isinstance(a, OnnxSoftmaxParams)
    return None


def logistic(layer: Layer, lg: LayerGraph) -> str | None:
    x, y = lg.tensors[layer.inputs[0]], lg.tensors[layer.output]
    if x.dtype not in ("int8", "uint8") or y.dtype not in ("int8", "uint8"):
        return f"a logistic from {x.dtype} to {y.dtype}"
    return None


def concat_onnx(layer: Layer, lg: LayerGraph) -> str | None:
    if len(layer.inputs) != 2 or layer.const_inputs:
        return f"a concat of {len(layer.node_inputs)} inputs (two activations only)"
    y = lg.tensors[layer.output]
    for t in layer.inputs:
        if lg.tensors[t].dtype != y.dtype:
            return f"a concat of {lg.tensors[t].dtype} into {y.dtype}"
    return None
