"""The op vocabulary of the integer IR: one `Op` enum for graph nodes and lowered layers.

All activations are NHWC. Every op's parameters are one of the frozen dataclasses of
`ir/params.py` (`params.PARAMS_OF` says which); shape inference is `ir/shapes.py`.

| op | inputs | params (ir/params.py) |
|---|---|---|
| conv2d | x, w[K,FY,FX,C/groups], bias? int32[K] | Conv2dParams (stride, dilation, pads, groups, requant) |
| transpose_conv | x, w[K,FY,FX,C], bias? int32/int64[K] | TransposeConvParams (stride, pads (top, left), output_hw, |
|                |                                       | requant)                                                  |
| fully_connected | x[..., C], w[K,C], bias? | FullyConnectedParams (requant); output [N,K] with N = size(x)/C |
| add, sub, mul | a, b (broadcastable) | TfliteAddSubParams, TfliteMulParams, OnnxAddParams |
| avg_pool, max_pool | x | TfliteAvgPoolParams, OnnxAvgPoolParams, MaxPoolParams |
| mean | x | TfliteMeanParams, OnnxMeanParams (axes, keepdims + rescale) |
| pad | x | PadParams ((before, after) per dim, value) |
| reshape | x | ReshapeParams (shape) |
| concat | inputs... | ConcatParams (axis, input and output quantization) |
| transpose | x | TransposeParams (perm) |
| softmax, logistic | x | TfliteSoftmaxParams, OnnxSoftmaxParams, TfliteLogisticParams |
| tanh | x (8-bit) | TfliteLogisticParams (its table: LiteRT's LUTPopulate of the float tanh) |
| quantize | x | TfliteRequantizeParams (int->int), TfliteAffineQuantizeParams (float->int), OnnxQuantizeParams |
| dequantize | x | TfliteDequantizeParams (output float32) |
| clamp | x | ClampParams (qmin, qmax) |
| add, sub, mul (integer) | a, b (broadcastable; activations or | IntArithParams (qmin, qmax): exact integer |
|                         | constants)                          | arithmetic of integer exports              |
| requant | x (int8 .. int32) | RequantParams (requant: shift / div mode, axis of the per-channel values) |
| matmul | a [..., M, K], b [..., K, N] (both activations, batch dims broadcast) | MatMulParams |
| slice | x | SliceParams (starts, ends, steps per axis) |
| reduce | x | ReduceParams (axes, keepdims, average: the sum or Deeploy's mean) |
| hardswish | x | HardswishParams (three, six, one_over_six: Deeploy's iHardswish) |
| int_softmax | x (8-bit) | IntSoftmaxParams (coeff_a, coeff_b, coeff_c, log2, n_levels, axis: Deeploy's iSoftmax) |
| rms_norm | x (8-bit) | RMSNormParams (weight, log2d, qmin, qmax, axis: Deeploy's iRMSNorm) |
| layer_norm | x (8-bit) | LayerNormParams (weight, bias, log2d, qmin, qmax, axis: Deeploy's iLayerNorm) |
| int_gelu | x (8-bit) | IntGeluParams (b, one: Deeploy's iGELU, I-BERT's integer GELU) |
| ita_max | x (int8) | ItaMaxParams (n_levels, axis: Deeploy's ITAMax, ITA's shift softmax) |
| svdf | x [N, C] int8, w_feature int8 [F, C], w_time int16 [F, M], bias? int32 [U], | SvdfParams (rank, the two |
|      | state int16 [N, F·M] (a state tensor: Graph.meta["state_tensors"])          | requantizations, zero points: |
|      |                                                                              | LiteRT's integer SVDF) |
| lstm | x [B,T,I] or [T,B,I] (int8), w_x int8[4,H,I], w_h int8[4,H,H], | LstmParams (TFLite's integer LSTM: |
|      | b_x int32[4,H], b_h int32[4,H] (gates i, f, c, o; biases with    | per-gate effective scales, cell   |
|      | the zero points folded); form 16x8: x int16, b_x int64, no b_h  | scale and clip, hidden rescale)   |

Layer-only ops (passes/lower.py makes them; no graph node has them):

| op | what | parameters |
|---|---|---|
| depthwise | conv2d with groups = C and channel multiplier 1 | the Layer's weights, bias, requant, pad_value (no |
|           |                                                 | params)                                           |
| global_avg_pool | mean over H and W of an NHWC tensor | the mean's TfliteMeanParams / OnnxMeanParams |
| attention | scores MatMul → row op (int_softmax, ita_max, none) → context MatMul, depth first | AttentionParams |

conv2d and fully_connected layers, like depthwise, carry their arithmetic in the Layer's own
fields (ir/layer.py), not in params.
"""

from __future__ import annotations

import enum


class Op(enum.StrEnum):
    """Every op of the IR. Members compare equal to their lower-case names (StrEnum)."""

    CONV2D = "conv2d"
    FULLY_CONNECTED = "fully_connected"
    TRANSPOSE_CONV = "transpose_conv"
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    AVG_POOL = "avg_pool"
    MAX_POOL = "max_pool"
    MEAN = "mean"
    PAD = "pad"
    RESHAPE = "reshape"
    CONCAT = "concat"
    TRANSPOSE = "transpose"
    SOFTMAX = "softmax"
    LOGISTIC = "logistic"
    TANH = "tanh"
    QUANTIZE = "quantize"
    DEQUANTIZE = "dequantize"
    CLAMP = "clamp"
    #: integer exports' ops (NEMO / QuantLab / Deeploy): exact integer arithmetic on codes
    REQUANT = "requant"
    MATMUL = "matmul"
    SLICE = "slice"
    REDUCE = "reduce"
    HARDSWISH = "hardswish"
    INT_SOFTMAX = "int_softmax"
    RMS_NORM = "rms_norm"
    LAYER_NORM = "layer_norm"
    SVDF = "svdf"
    INT_GELU = "int_gelu"
    ITA_MAX = "ita_max"
    #: TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM, integer (8x8_16) form
    LSTM = "lstm"
    #: layer-only: MatMul → softmax → MatMul computed depth first (passes/fuse_attention.py)
    ATTENTION = "attention"
    #: layer-only: conv2d whose int8 output only a residual add reads, the add applied as the
    #: conv's outputs are requantized (passes/fuse_residual.py)
    CONV2D_ADD = "conv2d_add"
    #: layer-only: conv2d with groups = C, channel multiplier 1
    DEPTHWISE = "depthwise"
    #: layer-only: mean over H and W
    GLOBAL_AVG_POOL = "global_avg_pool"


#: the lowered forms passes/lower.py produces; a Graph never holds them
LAYER_ONLY_OPS: frozenset[Op] = frozenset({Op.DEPTHWISE, Op.GLOBAL_AVG_POOL, Op.ATTENTION,
                                           Op.CONV2D_ADD})

#: the ops a graph node may have (ir/verify.py holds graphs to it)
GRAPH_OPS: frozenset[Op] = frozenset(Op) - LAYER_ONLY_OPS

#: layers whose arithmetic lives in Layer.weights / bias / requant / pad_value (Layer.params is None)
WEIGHTED_LAYER_OPS: frozenset[Op] = frozenset({Op.CONV2D, Op.DEPTHWISE, Op.FULLY_CONNECTED})
