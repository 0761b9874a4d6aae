"""The operands of a layer's loop nest and the one formula for their sizes in bytes.

Operands moved between L2 and the module's level (DESIGN.md "Scheduling"): x (input; x2 the second
input of an elementwise layer, or the skip tensor of a conv fused with a residual add,
LoopNest.residual, tiled as y), w (weights), b (per-output-channel constants), y (output), and
the L1-only psum (partial sums when input channels are tiled). Each operand's tile depends on a
subset of the tile loops (x: n,c,oy,ox; w: k,c; b: k; y: n,k,oy,ox; depthwise, pool and add have
no c loop — their channels follow k).

Sizes are in bits per element (LoopNest.x_bits / w_bits / y_bits, the binding's psum bits) and a
tile's bytes are ⌈elements · bits / 8⌉: exact for the 8- and 16-bit tensors of today and ready for
packed 4- and 2-bit ones. Every size in tilewise — the cost model (vectorized over candidates),
the L1 buffer plan, the explicit tile walk, the L3 tiler, the memory plan and the constants blob —
comes from `operand_bytes` / `const_bytes` here. The functions take ints or numpy arrays alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .layer import Layer, LoopNest
from .tensor import bits_to_bytes

#: geometries with a separate input-channel loop
REDUCING = ("conv", "fc")
#: geometries with weights
WEIGHTED = ("conv", "fc", "dwconv")


@dataclass(frozen=True)
class Operand:
    """A tensor moved between L2 and the module's level, and the loop dims its tile depends on."""

    name: str            # x, x2, w, b, y
    dims: frozenset[str]
    output: bool = False


def operands(nest: LoopNest, const_bytes_per_channel: int = 12,
             consts_in_place: bool = False) -> tuple[Operand, ...]:
    """The operands of `nest` in load order (inputs, weights, constants, then the output).
    `consts_in_place`: the weights and per-channel constants are read where they are stored (a
    Cortex-M's flash, Memory.in_place) — not moved, so not operands of the tile loop."""
    kind = nest.kind
    ch = "c" if kind in REDUCING else "k"
    x = Operand("x", frozenset({"n", ch, "oy", "ox"}))
    y = Operand("y", frozenset({"n", "k", "oy", "ox"}), output=True)
    if nest.residual:                 # the skip tensor, read at the output tile's box
        ops = [x, Operand("x2", y.dims)] + ([Operand("w", frozenset({"k", "c"}))]
                                             if not consts_in_place else [])
    elif kind in REDUCING and not consts_in_place:
        ops = [x, Operand("w", frozenset({"k", "c"}))]
    elif kind == "dwconv" and not consts_in_place:
        ops = [x, Operand("w", frozenset({"k"}))]
    elif kind == "add":
        ops = [x, Operand("x2", x.dims)]
    else:
        ops = [x]
    if kind in WEIGHTED and const_bytes_per_channel > 0 and not consts_in_place:
        ops.append(Operand("b", frozenset({"k"})))
    ops.append(y)
    return tuple(ops)


def whole_bytes(bits: int) -> int:
    """Bytes per element of a byte-addressed operand (C code that moves whole elements)."""
    if bits % 8:
        raise ValueError(f"{bits}-bit elements are packed, not byte-addressed")
    return bits // 8


def operand_elems(nest: LoopNest, op: str, *, n: Any = 1, k: Any = 1, c: Any = 1, oy: Any = 1,
                  ox: Any = 1, rows: Any = 1, cols: Any = 1) -> Any:
    """Elements of one tile of operand `op` with extents n, k, c, oy, ox (rows, cols: the input
    rows and columns the tile reads, halos included)."""
    if op == "x2" and nest.residual:
        return n * oy * ox * k
    if op in ("x", "x2"):
        return n * rows * cols * (c if nest.kind in REDUCING else k)
    if op == "w":
        b, kb = nest.w_c_block, nest.w_k_block
        kp = -(-k // kb) * kb if kb > 1 else k
        if nest.kind == "dwconv":
            return (-(-kp // b) * b if b > 1 else kp) * (nest.FY * nest.FX) * nest.w_rows
        return kp * (-(-c // b) * b if b > 1 else c) * (nest.FY * nest.FX)
    if op in ("y", "psum"):
        return n * oy * ox * k
    raise KeyError(op)


def operand_bytes(nest: LoopNest, op: str, *, const_bytes: int = 0, psum_bits: int = 32,
                  **ext: Any) -> Any:
    """Bytes of one tile of operand `op` (x, x2, w, b, y, psum) — the one size formula."""
    if op == "b":
        return ext.get("k", 1) * const_bytes
    bits = {"x": nest.x_bits, "x2": nest.x_bits, "w": nest.w_bits, "y": nest.y_bits,
            "psum": psum_bits}[op]
    return bits_to_bytes(operand_elems(nest, op, **ext), bits)


def weights_bytes(nest: LoopNest, k: int | None = None, const_bytes: int = 0) -> int:
    """Bytes of the constants of `k` output channels (all by default): weights plus the
    per-channel blocks of `const_bytes` each; 0 for geometries without weights."""
    if nest.kind not in WEIGHTED:
        return 0
    k = nest.K if k is None else k
    return int(operand_bytes(nest, "w", k=k, c=nest.C) + k * const_bytes)


def const_bytes(layer: Layer, per_channel: int, nest: LoopNest | None = None) -> int:
    """Bytes of a layer's constant blob for a binding storing `per_channel` bytes per output
    channel (the memory plan's weight buffer; 0 for layers without weights); `nest`: the layer's
    nest as the binding stores its weights (Binding.nest_for), default the layer's."""
    if layer.weights is None:
        return 0
    return weights_bytes(layer.nest if nest is None else nest, const_bytes=per_channel)
