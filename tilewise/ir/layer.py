"""Layers: the lowered, fused units that are scheduled, planned and emitted as C.

A Layer is one kernel call on the target: conv/depthwise/dense fused with bias, zero-point
correction, requantization and activation; an elementwise op; a pooling; a softmax; ... It is
produced from the Graph by `passes/` and carries everything the later stages need: the loop-nest
geometry (`LoopNest`, DESIGN.md "Scheduling"), constants in kernel layout, the requantization,
the op's typed parameters (ir/params.py) and the lowering facts as named fields (`pad_value`,
`node_inputs`, `const_inputs`). The input dtype is not stored: it is the input tensor's
(`LayerGraph.tensors[layer.inputs[0]].dtype`).

Loop-nest naming follows DESIGN.md and seed 002: K output channels, C input channels, OY/OX output
rows/columns, FY/FX kernel, SY/SX stride, IY/IX input rows/columns with halos, N batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .ops import Op
from .params import Mode, OpParams, check_layer_params
from .requant import Requant
from .tensor import Tensor, bits_to_bytes

LayerKind = Literal["conv", "dwconv", "fc", "add", "pool", "gap", "other"]


@dataclass(frozen=True)
class LoopNest:
    """Geometry of a layer as a loop nest (what the tiler reasons about).

    `kind` is the loop-nest geometry class the scheduler and the cost models key on, not an op
    (ops are `Layer.op`, ir/ops.py): several ops share a kind (add / sub / mul of two same-shaped
    activations are all ``add``; avg_pool and max_pool are ``pool``) and one op can have several
    (a mean over H and W is ``gap``, another mean ``other``).

    kind: ``conv`` (dense conv, incl. 1x1), ``dwconv`` (depthwise, K = C·multiplier), ``fc`` (dense;
    OY = OX = FY = FX = 1), ``add`` (elementwise, two inputs of the output's shape, FY = FX = 1),
    ``pool`` (avg/max window, C = K), ``gap`` (global average: FY = IY, FX = IX, OY = OX = 1),
    ``other`` (untiled: softmax, reshape-like ops; runs whole in L2/L1).
    """

    kind: LayerKind
    K: int
    C: int
    OY: int
    OX: int
    FY: int = 1
    FX: int = 1
    SY: int = 1
    SX: int = 1
    #: padding (top, left, bottom, right) in input pixels
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)
    IY: int = 1
    IX: int = 1
    N: int = 1
    #: operand precisions in bits (input, weights, output): 8 or 16 today, packed 4/2-bit ready
    #: (tile sizes in bytes come from ir/operands.py, ⌈elements·bits/8⌉)
    x_bits: int = 8
    w_bits: int = 8
    y_bits: int = 8
    #: the weights' input channels (depthwise: channels) as the binding stores them, padded to a
    #: multiple of this (NE16's 16-channel blocks); 1 = as they are. Set per placement
    #: (Binding.nest_for), so that every size of the weights follows the stored layout
    w_c_block: int = 1
    #: the weights' output channels of every k tile as the binding stores them, padded to a
    #: multiple of this (DIANA's 16-channel blocks); 1 = as they are
    w_k_block: int = 1
    #: stored weight rows per depthwise channel (DIANA pads each channel with 3 zero rows: 4)
    w_rows: int = 1
    #: a second input of the output's geometry (a conv fused with the residual add reading its
    #: output, op conv2d_add: the skip tensor, operand x2 tiled as y; ir/operands.py)
    residual: bool = False

    @property
    def macs(self) -> int:
        """Multiply-accumulates of conv/dwconv/fc (the field's usual count); 0 for other kinds."""
        if self.kind == "dwconv":
            return self.N * self.K * self.OY * self.OX * self.FY * self.FX
        if self.kind in ("conv", "fc"):
            return self.N * self.K * self.C * self.OY * self.OX * self.FY * self.FX
        return 0

    @property
    def elementwise_ops(self) -> int:
        """Element operations of pools (one per window tap) and adds (one per output element)."""
        if self.kind in ("pool", "gap"):
            return self.N * self.K * self.OY * self.OX * self.FY * self.FX
        if self.kind == "add":
            return self.N * self.K * self.OY * self.OX
        return 0

    @property
    def weight_elems(self) -> int:
        if self.kind == "dwconv":
            return self.K * self.FY * self.FX
        if self.kind in ("conv", "fc"):
            return self.K * self.C * self.FY * self.FX
        return 0

    @property
    def input_elems(self) -> int:
        n = self.N * self.IY * self.IX * self.C
        return 2 * n if self.kind == "add" else n

    @property
    def output_elems(self) -> int:
        return self.N * self.OY * self.OX * self.K


@dataclass(frozen=True, eq=False)
class Layer:
    """One fused, schedulable unit of computation.

    op: ``conv2d`` | ``depthwise`` | ``fully_connected`` | ``add`` | ``sub`` | ``mul`` | ``avg_pool``
    | ``max_pool`` | ``global_avg_pool`` | ``softmax`` | ``logistic`` | ``concat`` | ``transpose`` |
    ``quantize`` | ``dequantize`` | ``clamp`` | ``pad`` | ``reshape`` (a reshape that is not a
    layout no-op) — `golden.layers.run_layer` defines each.

    conv2d / depthwise / fully_connected layers compute from weights, bias, requant and pad_value
    and have no params; every other layer has its graph node's params (a mean over H and W, op
    global_avg_pool, keeps the mean's) and no weights, bias or requant.
    """

    name: str
    op: Op
    #: the activations read at run time, in node input order (constants and absent inputs left out)
    inputs: tuple[str, ...]
    output: str
    nest: LoopNest
    #: int8 weights in kernel layout: conv [K,FY,FX,C], depthwise [K,FY,FX] (channel-last in C
    #: code as [FY,FX,K]), dense [K,C]
    weights: np.ndarray | None = field(default=None, repr=False)
    #: int32 bias with the input zero-point correction -zp_x·Σw folded in
    bias: np.ndarray | None = field(default=None, repr=False)
    requant: Requant | None = None
    #: the op's parameters (ir/params.py); None for conv2d / depthwise / fully_connected
    params: OpParams | None = None
    #: conv2d / depthwise / fully_connected: the input zero point, which padded input taps take
    #: (the folded bias cancels them); 0 for other layers
    pad_value: int = 0
    #: the graph node's inputs in order, constants and "" (absent optional input) included; empty
    #: at construction means "the same as `inputs`"
    node_inputs: tuple[str, ...] = ()
    #: constant operands of a non-weighted layer (e.g. an add's per-channel vector), by name
    const_inputs: Mapping[str, Tensor] = field(default_factory=dict, repr=False)
    #: graph nodes fused into this layer (for reports and error messages)
    source_nodes: tuple[str, ...] = ()
    #: conv2d / depthwise / fully_connected: bits of the accumulator register of the module the
    #: layer runs on (targets/base.py `Module.acc_bits`, set by pipeline.schedule_network); below
    #: 32 the accumulator wraps modulo 2^acc_bits (two's complement, seed 002 Fig. 4.6) — golden/layers.py
    #: and the portable C kernels (tw_common.h `tw_acc_wrap`) apply the same wrap
    acc_bits: int = 32

    def __post_init__(self) -> None:
        check_layer_params(self.op, self.params, f"layer '{self.name}'")
        if not self.node_inputs:
            object.__setattr__(self, "node_inputs", tuple(self.inputs))
        stray = [n for n in self.node_inputs if n and n not in self.inputs and n not in self.const_inputs]
        if self.params is not None and stray:
            raise ValueError(f"layer '{self.name}': node inputs {stray} are neither activations nor constants")

    @property
    def mode(self) -> Mode | None:
        """The integer semantics: params.mode, or the requant's for the weighted layers."""
        if self.params is not None:
            return self.params.mode
        return self.requant.mode if self.requant is not None else None

    @property
    def macs(self) -> int:
        """The loop nest's MACs; a MatMul of two activations (nest: heads N·OY, rows OX,
        columns K, reduction C) its N·OY·OX·K·C, a depth-first attention its two MatMuls'
        (N·OY·OX·IX·(C + K): IX keys, passes/fuse_attention.py); an LSTM's and an SVDF's from their params, whose
        weights are constant inputs: the LSTM's 4·H·(I + H) per step and sequence (its four gates'
        input and recurrent products), the SVDF's F·(C + M) per batch row (F = units·rank filters:
        the feature product over C features and the time product over M memory steps)."""
        p, n = self.params, self.nest
        if self.op == Op.MATMUL:
            return n.N * n.OY * n.OX * n.K * n.C
        if self.op == Op.ATTENTION:   # its two MatMuls: q·kᵀ (C = d) and ·v (K = dv) over IX keys
            return n.N * n.OY * n.OX * n.IX * (n.C + n.K)
        if self.op == Op.LSTM and p is not None:
            return int(p.batch * p.steps * 4 * p.n_cell * (p.n_input + p.n_cell))
        if self.op == Op.SVDF:   # lower.py: K units of FY = rank filters, FX = memory steps
            return int(n.N * n.OY * n.OX * n.K * n.FY * (n.C + n.FX))
        return n.macs

    @property
    def weight_bytes(self) -> int:
        """The weights and int32 bias; an LSTM's and an SVDF's constant inputs (their weights,
        folded biases), as their layer's C stores them."""
        if self.op in (Op.LSTM, Op.SVDF):
            return int(sum(np.asarray(t.data).nbytes for t in self.const_inputs.values()))
        w = 0 if self.weights is None else bits_to_bytes(int(self.weights.size), self.nest.w_bits)
        b = 0 if self.bias is None else int(self.bias.size) * 4
        return w + b


@dataclass(frozen=True, eq=False)
class LayerGraph:
    """The lowered network: layers in execution order over named activation tensors."""

    name: str
    layers: tuple[Layer, ...]
    #: activation tensors (no constants) by name: shape, dtype, quant
    tensors: dict[str, Any]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
