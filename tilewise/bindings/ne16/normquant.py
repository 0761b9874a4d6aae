"""When NE16 itself requantizes a layer (norm-quant), and with which words.

NE16's norm-quant (arith.norm_quant: t = wrap32(acc·scale) + bias saturated, ReLU, t >> shift,
saturated to int8) is exactly the layer's shift-mode requantization out = clamp(floor((k·a + λ) /
2^d) + zp, qmin, qmax) (golden/requant.py; a the layer's accumulator) when, as the output is
stored (int8, uint8 biased):
- the mode is shift with one d for every channel, d ≤ 31 (NE16 has one shift per layer);
- the clamp is int8's [−128, 127], or [0, 127] (ReLU: max(floor(t / 2^d), 0) = floor(max(t, 0) /
  2^d));
- nothing wraps or saturates: NE16's accumulator is a' = a − bias'' + ... — precisely, the job
  computes a_u = Σ w·u on u = x + 128, a = a_u + b' with b' the kernel bias − 128·Σw
  (constants.py); then scale = k, bias = k·b' + λ + zp·2^d make t = k·a + λ + zp·2^d, whose floor
  shift is the golden value + zp exactly; |k|·max|a_u| and |t| must stay within int32, and bias
  must fit int32 (checked per channel against the accumulator bounds; bindings/pulp/constants.py
  acc_bound for a, 255·Σ|w| for a_u).
The shift-mode layers that pass run with `norm_quant` bindings (no int32 output, no cluster
requantization); the others keep the cluster's.
"""

from __future__ import annotations

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ..portable.common import u8_offset
from ..portable.weighted import stored_clamp
from ..pulp import constants as pulp
from .constants import job_bias

INT32 = 2**31 - 1


def _terms(layer: Layer, lg: LayerGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """Per channel the multiplier k, the job bias b' and λ + zp·2^d (int64); d and the stored
    output zero point's clamp floor qmin."""
    rq = layer.requant
    assert rq is not None
    k = layer.nest.K
    zp, qmin, _ = stored_clamp(layer, u8_offset(lg, layer.output))
    d = int(np.broadcast_to(np.asarray(rq.shift, np.int64), (k,))[0])
    m = np.broadcast_to(np.asarray(rq.multiplier, np.int64), (k,))
    lam = np.broadcast_to(np.asarray(0 if rq.bias is None else rq.bias, np.int64), (k,))
    return m, job_bias(layer, lg), lam + (zp << d), d, qmin


def words(layer: Layer, lg: LayerGraph) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """(scale, bias) per channel as int64, the shift and ReLU of NE16's norm-quant for the layer
    (`reason` is None)."""
    m, b, rest, d, qmin = _terms(layer, lg)
    return m, m * b + rest, d, qmin == 0


def reason(layer: Layer, lg: LayerGraph) -> str | None:
    """None when NE16's norm-quant computes the layer's requantization exactly (module doc)."""
    rq = layer.requant
    if rq is None or rq.mode != "shift":
        return "a requantization other than shift mode (NE16's norm-quant is a floor shift)"
    k = layer.nest.K
    d = np.broadcast_to(np.asarray(rq.shift, np.int64), (k,))
    if d.min() != d.max() or not 0 <= int(d[0]) <= 31:
        return "per-channel right shifts (NE16 has one shift per layer, 0..31)"
    _, qmin, qmax = stored_clamp(layer, u8_offset(lg, layer.output))
    if (qmin, qmax) not in ((-128, 127), (0, 127)):
        return f"an output clamp of [{qmin}, {qmax}] as stored (NE16 saturates to int8, ReLU)"
    m, b, rest, _, _ = _terms(layer, lg)
    a_u = 255 * np.abs(np.asarray(layer.weights, np.int64).reshape(k, -1)).sum(axis=1)
    t = np.abs(m) * pulp.acc_bound(layer, lg) + np.abs(rest)
    if (np.abs(m) * a_u > INT32).any() or (t > INT32).any() or (np.abs(m * b + rest) > INT32).any():
        return "a requantization whose products can leave int32 (NE16 wraps and saturates)"
    return None
