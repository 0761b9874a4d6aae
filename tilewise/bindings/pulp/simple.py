"""The pulp family's elementwise and pooling bindings: the portable compute() of each op (the
same call contract and parameter structs, bindings/portable/elementwise.py and pool.py) calling
the pulp kernel.

| layer op (mode)           | kernel                                | golden                      |
|---------------------------|---------------------------------------|-----------------------------|
| add / sub (tflite)        | tw_pulp_add_fold_tables + _fold_s8 (*)| golden/elementwise.py       |
| mul (tflite)              | tw_pulp_mul_s8                        | golden/elementwise.py       |
| max_pool (any)            | tw_pulp_maxpool_s8                    | golden/pool.py, onnx_ops.py |
| avg_pool (tflite)         | tw_pulp_avgpool_s8                    | golden/pool.py avg_pool     |
| global_avg_pool (tflite)  | tw_pulp_global_avgpool_s8             | golden/pool.py mean         |
| global_avg_pool (onnx)    | tw_pulp_global_avgpool_rq_s8_onnx     | golden/onnx_ops.py mean     |

(*) the folded form where addfold.fold proves it exact for the layer, else tw_pulp_add_tables +
tw_pulp_add_s8.

uint8 as the portable bindings (the same checks refuse what they refuse, bindings/portable/
common.py); the tflite average pool refuses uint8.
"""

from __future__ import annotations

import numpy as np

from ...golden import fixedpoint
from ...ir.layer import Layer, LayerGraph
from ..base import LayerConstants
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
