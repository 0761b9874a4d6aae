"""The portable family's int8 elementwise kernels: add, sub and mul, tiled (two same-shaped
activations: the `compute()` of a layer of kind "add") or broadcast (untiled: the whole layer
function).

| layer op (mode)                    | kernel                                         | golden                 |
|------------------------------------|------------------------------------------------|------------------------|
| add / sub / mul (tflite)           | tw_add_s8 / tw_sub_s8 / tw_mul_s8              | golden/elementwise.py  |
| add (onnx)                         | tw_add_onnx_exact_s8 (integers), else          | golden/onnx_ops.py add |
|                                    | tw_add_onnx_s8 (uint8: _u8)                    |                        |
| add / sub / mul with a per-channel | the elementwise kernel once per pixel          | as above               |
| vector, scalar or constant operand |                                                |                        |

A broadcast layer runs on one core on the L2 tensors: the kernel once per output pixel on its C
elements, a per-channel vector operand at the same address every time; its constant operands
are arrays of the layer file, emitted as the tensor is stored (uint8: value − 128).
Templates: elementwise_s8.c.j2 (tiled), elementwise_broadcast_s8.c.j2; the kernels' PARAMS:
add_params.j2 (shared with the int16 add and sub, s16.py), mul_params.j2, add_onnx_params.j2.

uint8 (common.py): the tflite kernels compute x − zp in int32, add the output zero point to an
integer and clamp, so they are exact on the biased storage with every zero point and the clamp
lowered by 128. onnx add computes with the uint8 values in float32 (tw_add_onnx_u8 converts the
stored bytes back and clamps in uint8 values). int8 and uint8 operands never mix in one kernel
(checks.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...golden.onnx_ops import f32, fma32
from ...ir.layer import Layer, LayerGraph
from ...ir.params import OnnxAddParams, TableAddParams, TfliteAddSubParams, TfliteMulParams
from ...ir.tensor import dtype_range
from ..base import LayerConstants
from .common import render, u8_offset, zero_point


@dataclass(frozen=True)
class Kernel:
    """One elementwise kernel call: the function, its PARAMS template and data, and which node
    input is the kernel's first operand (onnx add: the full-size one)."""

    name: str
    params: str
    p: dict[str, Any]
    swap: bool = False


def add_sub_params(a: TfliteAddSubParams, zps: tuple[int, int, int], off: int) -> dict[str, Any]:
    """The data of add_params.j2: operand and output zero points `zps` as stored, the clamp
    lowered by `off` (128 for uint8)."""
    (m1, m2), (s1, s2) = a.input_multipliers, a.input_shifts
    return dict(a_zp=zps[0], a_mult=int(m1), a_shift=int(s1), b_zp=zps[1], b_mult=int(m2),
                b_shift=int(s2), left_shift=int(a.left_shift), out_mult=int(a.output_multiplier),
                out_shift=int(a.output_shift), out_zp=zps[2], qmin=int(a.qmin) - off,
                qmax=int(a.qmax) - off)


def _stored(layer: Layer, lg: LayerGraph,
            names: tuple[str, ...]) -> tuple[tuple[int, int, int], int]:
    """The zero points of operands `names` and of the output as stored, and the storage offset
    (all alike, none int16: checks._offsets_agree, checks._no_int16)."""
    offs = {u8_offset(lg, t) for t in (*names, layer.output)}
    assert offs in ({0}, {128}) and all(lg.tensors[t].dtype != "int16" for t in names), \
        f"layer '{layer.name}': operands passed its check"
    z0, z1, zo = (zero_point(lg, t) - u8_offset(lg, t) for t in (*names, layer.output))
    return (z0, z1, zo), offs.pop()


def _add_sub(layer: Layer, lg: LayerGraph, names: tuple[str, ...], name: str) -> Kernel:
    a = layer.params
    assert isinstance(a, TfliteAddSubParams)
    zps, off = _stored(layer, lg, names)
    return Kernel(name, "add_params.j2", add_sub_params(a, zps, off))


def _add_tflite(layer: Layer, lg: LayerGraph, names: tuple[str, ...]) -> Kernel:
    return _add_sub(layer, lg, names, "tw_add_s8")


def _sub_tflite(layer: Layer, lg: LayerGraph, names: tuple[str, ...]) -> Kernel:
    return _add_sub(layer, lg, names, "tw_sub_s8")


def _mul_tflite(layer: Layer, lg: LayerGraph, names: tuple[str, ...]) -> Kernel:
    a = layer.params
    assert isinstance(a, TfliteMulParams)
    (z0, z1, zo), off = _stored(layer, lg, names)
    return Kernel("tw_mul_s8", "mul_params.j2",
                  dict(a_zp=z0, b_zp=z1, out_mult=int(a.output_multiplier),
                       out_shift=int(a.output_shift), out_zp=zo, qmin=int(a.qmin) - off,
                       qmax=int(a.qmax) - off))


def add_onnx_exact(a: OnnxAddParams, off: int, qmin: int, qmax: int) -> dict[str, Any] | None:
    """The integers of tw_add_onnx_exact_s8 (tw_elementwise.h) for QLinearAdd `a` on operands
    stored with offset `off` (uint8: 128), or None where they do not exist within its bounds.

    t(b) = fma32(b, ratio_b, fixed) (golden/onnx_ops.py) takes 256 float32 values and ratio_a is
    one more: each is an integer over a power of two, so with 2^shift their largest denominator
    (and shift >= 33, tw_onnx_rq_round_p_hi's) x = a·ma + tb[b] = (a·ratio_a + t(b))·2^shift is
    an exact integer. Required: |x| < 2^53 for every operand pair, so that X = x / 2^shift is
    exactly a float64 (the golden fma32's sum is then exact: the same single float32 rounding),
    which also bounds |X| < 2^20 (Y within the proof's ±2^22)."""
    ra = float(np.float32(a.ratio_a))
    stored = np.arange(-128, 128)
    tb = fma32(stored + off, a.ratio_b, f32(a.fixed))
    vals = [ra, *(float(v) for v in tb)]
    if not all(np.isfinite(v) for v in vals):
        return None
    shift = max(33, *(v.as_integer_ratio()[1].bit_length() - 1 for v in vals))
    if shift > 62:
        return None

    def scaled(v: float) -> int:
        num, den = v.as_integer_ratio()
        return num * (2 ** shift // den)

    ma = scaled(ra)
    tbi = [scaled(float(v)) + off * ma for v in tb]
    if 128 * abs(ma) + max(abs(v) for v in tbi) >= 2 ** 53:
        return None
    return dict(ma=ma, shift=shift, qmin=qmin, qmax=qmax, out_off=off, tb=tbi)


def _add_onnx(layer: Layer, lg: LayerGraph, names: tuple[str, ...]) -> Kernel:
    a = layer.params
    assert isinstance(a, OnnxAddParams)
    _, off = _stored(layer, lg, names)
    lo, hi = dtype_range(lg.tensors[layer.output].dtype)
    qmin, qmax = max(lo, int(a.qmin)), min(hi, int(a.qmax))
    exact = add_onnx_exact(a, off, qmin, qmax)
    if exact is not None:
        return Kernel("tw_add_onnx_exact_s8", "add_onnx_exact_params.j2", exact,
                      swap=a.a_index == 1)
    p = dict(ratio_a=a.ratio_a, ratio_b=a.ratio_b, fixed=a.fixed, qmin=qmin, qmax=qmax)
    return Kernel("tw_add_onnx_u8" if off else "tw_add_onnx_s8", "add_onnx_params.j2", p,
                  swap=a.a_index == 1)


KernelOf = Callable[[Layer, LayerGraph, tuple[str, ...]], Kernel]

#: the tflite kernel call of each op (the tiled and broadcast emit functions below)
TFLITE: dict[str, KernelOf] = {"add": _add_tflite, "sub": _sub_tflite, "mul": _mul_tflite}


def tiled_call(layer: Layer, lg: LayerGraph, kernel: str) -> str:
    """compute() of a tiled tflite add / sub / mul calling `kernel` instead of the portable one
    (another family's kernel with tw_elementwise.h's contract and parameter structs)."""
    base = TFLITE[str(layer.op)]
    return _tiled(layer, lg, lambda l, g, n: replace(base(l, g, n), name=kernel))


def onnx_add_call(layer: Layer, lg: LayerGraph, exact_kernel: str) -> str:
    """compute() of a tiled onnx add calling `exact_kernel` (tw_add_onnx_exact_s8's contract)
    where the integer form exists, the portable float kernel otherwise."""
    def kernel_of(lay: Layer, g: LayerGraph, names: tuple[str, ...]) -> Kernel:
        k = _add_onnx(lay, g, names)
        return replace(k, name=exact_kernel) if k.name == "tw_add_onnx_exact_s8" else k
    return _tiled(layer, lg, kernel_of)


def _tiled(layer: Layer, lg: LayerGraph, kernel_of: KernelOf) -> str:
    """compute(): the kernel on every element of the tile."""
    k = kernel_of(layer, lg, layer.inputs)
    return render("elementwise_s8.c.j2", kernel=k.name, params=k.params, p=k.p,
                  operands=("x2", "x") if k.swap else ("x", "x2"))


def _broadcast(layer: Layer, lg: LayerGraph, kernel_of: KernelOf) -> str:
    """The whole layer function: the kernel once per output pixel (module docstring; checks.py
    broadcast_s8 passed: two operands, each full-size or a per-channel vector, a constant also a
    scalar)."""
    names, consts = layer.node_inputs, layer.const_inputs
    y = lg.tensors[layer.output]
    assert len(names) == 2 and y.shape, f"layer '{layer.name}' passed its check"
    chans = int(y.shape[-1])
    view = replace(lg, tensors={**lg.tensors, **consts})
    operands, constants, acts = [], [], iter(("x", "x2"))
    for i, nm in enumerate(names):
        t = view.tensors[nm]
        size = int(np.prod(t.shape, dtype=np.int64)) if t.shape else 1
        full = tuple(t.shape) == tuple(y.shape)
        if nm in consts:
            vals = np.broadcast_to(np.asarray(t.data, dtype=np.int64).reshape(-1),
                                   (size if size != 1 else chans,)) - u8_offset(view, nm)
            constants.append(dict(index=i, data=[int(v) for v in vals]))
        operands.append(dict(constant=nm in consts, index=i,
                             act=None if nm in consts else next(acts), per_pixel=full and size > 1))
    k = kernel_of(layer, view, names)
    return render("elementwise_broadcast_s8.c.j2", op=str(layer.op), mode=str(layer.mode),
                  pixels=y.nbytes // max(chans, 1), channels=chans, constants=constants,
                  operands=operands[::-1] if k.swap else operands, kernel=k.name,
                  params=k.params, p=k.p)


def _emit(place: Callable[[Layer, LayerGraph, KernelOf], str], kernel_of: KernelOf,
          name: str) -> Callable[[Layer, LayerGraph, LayerConstants | None], str]:
    """The emit function `name` of a binding: `place` (_tiled or _broadcast) of the kernel call
    `kernel_of` gives."""
    def emit(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
        return place(layer, lg, kernel_of)

    emit.__name__ = emit.__qualname__ = name
    return emit


#: the bindings' emit functions (bindings/portable/__init__.py)
add_s8 = _emit(_tiled, _add_tflite, "add_s8")
sub_s8 = _emit(_tiled, _sub_tflite, "sub_s8")
mul_s8 = _emit(_tiled, _mul_tflite, "mul_s8")
add_onnx_s8 = _emit(_tiled, _add_onnx, "add_onnx_s8")
add_broadcast_s8 = _emit(_broadcast, _add_tflite, "add_broadcast_s8")
sub_broadcast_s8 = _emit(_broadcast, _sub_tflite, "sub_broadcast_s8")
mul_broadcast_s8 = _emit(_broadcast, _mul_tflite, "mul_broadcast_s8")
add_broadcast_onnx_s8 = _emit(_broadcast, _add_onnx, "add_broadcast_onnx_s8")


def const_lookup_table(layer: Layer, lg: LayerGraph) -> np.ndarray:
    """The 256 outputs, as stored, of a tflite add / sub / mul of an activation and a constant
    of one value (checks.const_lookup_s8), by the activation's stored byte + 128: the golden
    kernel itself (golden/elementwise.py) on every byte, so the table is bit-exact by
    construction."""
    from types import SimpleNamespace

    from ...golden import elementwise as golden

    consts = layer.const_inputs
    tensors = {**lg.tensors, **consts}
    args = []
    for nm in layer.node_inputs:
        if nm in consts:
            args.append(np.full(256, int(np.asarray(consts[nm].data).reshape(-1)[0]), dtype=np.int64))
        else:
            args.append(np.arange(-128, 128, dtype=np.int64) + u8_offset(lg, nm))
    node = SimpleNamespace(params=layer.params, inputs=list(layer.node_inputs), outputs=[layer.output])
    fn = {"add": golden.add, "sub": golden.sub, "mul": golden.mul}[str(layer.op)]
    out = np.asarray(fn(node, SimpleNamespace(tensors=tensors), args), dtype=np.int64)
    return out - u8_offset(lg, layer.output)


def const_lookup_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """The whole layer function of a tflite add / sub / mul by a constant of one value: tw_lut_s8
    with the op's table (const_lookup_table)."""
    table = const_lookup_table(layer, lg)
    assert table.shape == (256,) and table.min() >= -128 and table.max() <= 127
    return render("lookup_s8.c.j2", op=str(layer.op), table=[int(v) for v in table],
                  size=lg.tensors[layer.output].nbytes)


def add_table_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """compute() of an add by tables (checks.add_table): both tables laid out by stored byte
    read as unsigned (entry e is the stored int8 (int8_t)e, the value e − 256·(e ≥ 128) + offset),
    the output's offset (uint8: 128) taken out of a's table so that the sum is the output as
    stored — (TA − o·2^s + TB) >> s = ((TA + TB) >> s) − o exactly — and the clamp as stored."""
    p = layer.params
    assert isinstance(p, TableAddParams), f"layer '{layer.name}' passed its check"
    entries = np.arange(256)
    stored = np.where(entries >= 128, entries - 256, entries)
    y_off = u8_offset(lg, layer.output)
    tables = []
    for name, table, minus in zip(layer.inputs, (p.table_a, p.table_b), (y_off << int(p.shift), 0)):
        off = u8_offset(lg, name)
        lo = dtype_range(lg.tensors[name].dtype)[0]
        tables += [int(v) - minus for v in np.asarray(table, np.int64)[stored + off - lo]]
    return render("add_table_s8.c.j2", tables=tables, shift=int(p.shift), qmin=int(p.qmin) - y_off,
                  qmax=int(p.qmax) - y_off)
