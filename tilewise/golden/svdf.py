"""The golden SVDF: LiteRT's integer SVDF with its int16 state (SvdfParams, ir/params.py).

Source: LiteRT's kernels/svdf.cc (Prepare: the two QuantizeMultiplier scales, RELU required and the
int32 scratch / output_temp) and reference_ops::EvalIntegerSVDF (kernels/internal/reference/svdf.h):

1. the state [N, F·M] moves one value left (a flat copy; the value that crosses into the previous
   filter's newest slot is overwritten in step 2);
2. feature matmul: state[b, f·M + M − 1] = clamp_int16(MBQM(Σ_c w_f[f, c]·(x[b, c] − zp_x), m1, s1))
   (the state is symmetric: no zero point);
3. time: scratch[b, f] = Σ_m w_t[f, m]·state[b, f·M + m] (int32);
4. acc[b, u] = bias[u] + Σ_r scratch[b, u·rank + r] (int32), then
   y = clamp_int8(MBQM(acc, m2, s2) + zp_y). The op's fused activation (LiteRT accepts only RELU)
   is not applied by the integer path.

MBQM is the double-rounding MultiplyByQuantizedMultiplier (fixedpoint.py). The int32 sums wrap as
C's int32 arithmetic does on the targets (fixedpoint.wrap32).

The state persists across inferences (ir/graph.py "state tensors"): `svdf_step` returns the
output and the new state; the registered kernel gives the output, and the runners
(golden/run.py, golden/layers.py) keep the new state for the next inference (`STATEFUL`).
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.ops import Op
from ..ir.params import SvdfParams
from .fixedpoint import multiply_by_quantized_multiplier, wrap32
from .registry import kernel


def svdf_step(p: SvdfParams, x: np.ndarray, w_feature: np.ndarray, w_time: np.ndarray,
              bias: np.ndarray | None, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One invocation: (y int8 [N, U], the new int16 state [N, F·M]) from x [N, C] and the state."""
    n = x.shape[0]
    f, m = w_time.shape
    units = f // p.rank
    s = np.asarray(state, dtype=np.int64).reshape(n, f * m)
    new = np.empty_like(s)
    new[:, :-1] = s[:, 1:]
    xs = np.asarray(x, dtype=np.int64).reshape(n, -1) - p.input_zero_point
    acc = wrap32(xs @ np.asarray(w_feature, dtype=np.int64).T)                     # [N, F]
    newest = multiply_by_quantized_multiplier(acc, p.feature_multiplier, p.feature_shift)
    new = new.reshape(n, f, m)
    new[:, :, m - 1] = np.clip(newest, -32768, 32767)
    scratch = wrap32((new * np.asarray(w_time, dtype=np.int64)[None]).sum(axis=2))  # [N, F]
    out = scratch.reshape(n, units, p.rank).sum(axis=2)
    if bias is not None:
        out = out + np.asarray(bias, dtype=np.int64).reshape(1, units)
    y = multiply_by_quantized_multiplier(wrap32(out), p.output_multiplier, p.output_shift)
    y = np.clip(y + p.output_zero_point, -128, 127)
    return y.astype(np.int8), new.reshape(n, f * m).astype(np.int16)


def _step(node: Node, args: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    p = node.params
    assert isinstance(p, SvdfParams)
    x, wf, wt, b, state = args
    return svdf_step(p, x, wf, wt, b, state)


@kernel(Op.SVDF, mode="tflite")
def svdf(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    return _step(node, args)[0]


#: the stateful ops: fn(node, args) -> (output, the new value of the node's last input, its state)
STATEFUL = {Op.SVDF: _step}


def initial_states(tensors: dict, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Zero state tensors, as LiteRT's AllocateTensors leaves its variable tensors."""
    return {n: np.zeros(tensors[n].shape, dtype=np.int16) for n in names}


def carried_states(tensors: dict, names: tuple[str, ...],
                   states: dict[str, np.ndarray] | None) -> dict[str, np.ndarray]:
    """The state values an inference starts from: `states` itself (updated in place by the run,
    for the next inference), each state it lacks set to zero (`initial_states`); a new dict
    when None (a first inference)."""
    states = {} if states is None else states
    for name, v in initial_states(tensors, names).items():
        states.setdefault(name, v)
    return states
