"""The operator catalogue of the integer IR.

All activations are NHWC. Attribute conventions (every frontend produces exactly these):

| op | inputs | attrs |
|---|---|---|
| conv2d | x, w[K,FY,FX,C/groups], bias? int32[K] | stride (sy,sx), dilation (dy,dx), pads (top,left,bottom,right), groups, requant |
| fully_connected | x[..., C], w[K,C], bias? | requant; output [N,K] with N = size(x)/C |
| add, sub, mul | a, b (broadcastable) | mode + mode-specific params (see golden/elementwise.py) |
| avg_pool, max_pool | x | kernel (ky,kx), stride, pads, qmin, qmax (+ mode params when rescaling) |
| mean | x | axes, keepdims, mode params (TFLite MEAN rescale) |
| pad | x | pads ((before, after) per dim), value |
| reshape | x | shape |
| concat | inputs... | axis (+ mode params when inputs are rescaled) |
| transpose | x | perm |
| softmax, logistic | x | mode + mode params |
| quantize | x | requant-like params from input to output quantization (int->int or float->int) |
| dequantize | x | (output float32) |
| clamp | x | qmin, qmax |

Shape inference is ir/shapes.py.
"""

from __future__ import annotations

OPS = (
    "conv2d", "fully_connected", "add", "sub", "mul", "avg_pool", "max_pool", "mean", "pad",
    "reshape", "concat", "transpose", "softmax", "logistic", "quantize", "dequantize", "clamp",
)
