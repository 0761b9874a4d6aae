"""The pulp family's elementwise and pooling bindings: the portable compute() of each op (the
same call contract and parameter structs, bindings/portable/elementwise.py and pool.py) calling
the pulp kernel.

| layer op (mode)           | kernel                                | golden                      |
|---------------------------|---------------------------------------|-----------------------------|
| add / sub (tflite)        | tw_pulp_add_fold_tables + _fold_s8 (*)| golden/elementwise.py       |
| add (onnx), folded        | tw_pulp_add_fold_copy + _fold_s8 (**) | golden/onnx_ops.py add      |
| mul (tflite)              | tw_pulp_mul_s8                        | golden/elementwise.py       |
| max_pool (any)            | tw_pulp_maxpool_s8                    | golden/pool.py, onnx_ops.py |
| avg_pool (tflite)         | tw_pulp_avgpool_s8                    | golden/pool.py avg_pool     |
| global_avg_pool (tflite)  | tw_pulp_global_avgpool_s8             | golden/pool.py mean         |
| global_avg_pool (onnx)    | tw_pulp_global_avgpool_rq_s8_onnx     | golden/onnx_ops.py mean     |

(*) the folded form where addfold.fold proves it exact for the layer, else tw_pulp_add_tables +
tw_pulp_add_s8.
(**) the binding add_onnx_fold_s8, legal where addfold.fold_onnx finds a folded form equal to
onnxruntime's add on every pair of codes (onnx_fold_reason); else add_onnx_s8's exact kernel.

uint8 as the portable bindings (the same checks refuse what they refuse, bindings/portable/
common.py); the tflite average pool refuses uint8.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...golden import fixedpoint
from ...ir.layer import Layer, LayerGraph
from ...ir.params import OnnxAddParams
from ...ir.tensor import dtype_range
from ..base import LayerConstants
from ..portable import checks as portable_checks
from ..portable import elementwise, pool
from ..portable.common import u8_offset
from . import addfold, constants
from .common import render

#: L1 scratch of an add / sub: both inputs' tables, 2 × 256 int32, in either form
#: (tw_pulp_elementwise.h)
TABLES_BYTES = 2 * 256 * 4


def _by_tables(layer: Layer, lg: LayerGraph, sub: int, arm: bool) -> str:
    """compute() of a tiled tflite add (sub 0) or sub (1) on the tables of both inputs, computed
    by the layer's first tile in the L1 scratch (`TABLES_BYTES`): the folded form where
    addfold.fold proves it exact for the layer, else tw_pulp_add_s8."""
    k = elementwise.TFLITE[str(layer.op)](layer, lg, layer.inputs)
    f = addfold.fold(k.p, bool(sub))
    return render("add_s8.c.j2", params=k.params, p=k.p, sub=sub,
                  fold=None if f is None else f.words(),
                  right=int(one_rounding(k.p, arm)), operands=("x2", "x") if k.swap else ("x", "x2"))


def one_rounding(p: dict, arm: bool = False) -> bool:
    """Whether tw_pulp_add_s8 may requantize its sums in the one-rounding form (`right`): the
    output shift is a right shift and no sum of two table entries (both inputs' scaled values
    over all 256 codes, computed as the kernel does) overflows its rounding (`arm`: nor reaches
    2^30, constants.right_shift_fits)."""
    q = np.arange(-128, 128, dtype=np.int64)

    def table(zp: int, m: int, s: int) -> np.ndarray:
        x = (q - zp) << p["left_shift"]
        return fixedpoint.multiply_by_quantized_multiplier(x, np.int64(m), np.int64(s))

    bound = (np.abs(table(p["a_zp"], p["a_mult"], p["a_shift"])).max()
             + np.abs(table(p["b_zp"], p["b_mult"], p["b_shift"])).max())
    return constants.right_shift_fits(p["out_mult"], p["out_shift"], bound, arm)


def add_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None, arm: bool = False) -> str:
    return _by_tables(layer, lg, 0, arm)


def sub_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None, arm: bool = False) -> str:
    return _by_tables(layer, lg, 1, arm)


def add_onnx_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return elementwise.onnx_add_call(layer, lg, "tw_pulp_add_onnx_exact_s8")


@lru_cache(maxsize=256)
def _onnx_fold(ratio_a: float, ratio_b: float, fixed: float, off: int, qmin: int, qmax: int
               ) -> addfold.OnnxFold | None:
    a = OnnxAddParams(a_index=0, ratio_a=ratio_a, ratio_b=ratio_b, fixed=fixed, qmin=qmin,
                      qmax=qmax)
    ex = elementwise.add_onnx_exact(a, off, qmin, qmax)
    if ex is None:
        return None
    want = addfold.onnx_golden_grid(ratio_a, ratio_b, fixed, off, qmin, qmax)
    return addfold.fold_onnx(ex["ma"], ex["tb"], ex["shift"], off, want, qmin - off, qmax - off)


def onnx_fold(layer: Layer, lg: LayerGraph) -> addfold.OnnxFold | None:
    """The folded form of the layer's onnx add (addfold.fold_onnx on the exact integers of
    elementwise.add_onnx_exact, checked against onnxruntime's float32 add on every pair of
    codes), or None where there is none."""
    a = layer.params
    assert isinstance(a, OnnxAddParams)
    _, off = elementwise._stored(layer, lg, layer.inputs)
    lo, hi = dtype_range(lg.tensors[layer.output].dtype)
    return _onnx_fold(float(a.ratio_a), float(a.ratio_b), float(a.fixed), off,
                      max(lo, int(a.qmin)), min(hi, int(a.qmax)))


def onnx_fold_reason(layer: Layer, lg: LayerGraph) -> str | None:
    """The portable elementwise check, and whether the onnx add has a folded form."""
    reason = portable_checks.elementwise_s8(layer, lg)
    if reason is None and onnx_fold(layer, lg) is None:
        reason = "no folded form of this onnx add is exact on every pair of codes"
    return reason


def add_onnx_fold_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """compute() of a tiled onnx add in the folded form (onnx_fold; the binding's check found
    it), its tables copied into the L1 scratch by the layer's first tile."""
    f = onnx_fold(layer, lg)
    assert f is not None, f"layer '{layer.name}' passed its check"
    a = layer.params
    _, off = elementwise._stored(layer, lg, layer.inputs)
    lo, hi = dtype_range(lg.tensors[layer.output].dtype)
    return render("add_onnx_fold_s8.c.j2", tables=f.tables, shift=f.shift,
                  qmin=max(lo, int(a.qmin)) - off, qmax=min(hi, int(a.qmax)) - off,
                  operands=("x2", "x") if a.a_index == 1 else ("x", "x2"))


def mul_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return elementwise.tiled_call(layer, lg, "tw_pulp_mul_s8")


def max_pool_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return pool.pool_call(layer, lg, "tw_pulp_maxpool_s8")


def avg_pool_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    assert not u8_offset(lg, layer.inputs[0]), f"layer '{layer.name}' passed its check"
    return pool.pool_call(layer, lg, "tw_pulp_avgpool_s8")


def global_avg_pool_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return pool.global_avg_pool_s8(layer, lg, consts, kernel="tw_pulp_global_avgpool_s8")


def global_avg_pool_onnx_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return pool.global_avg_pool_onnx_s8(layer, lg, consts,
                                        kernel="tw_pulp_global_avgpool_rq_s8_onnx")
