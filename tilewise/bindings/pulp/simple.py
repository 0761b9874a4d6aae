"""The pulp family's elementwise and pooling bindings: the portable compute() of each op (the
same call contract and parameter structs, bindings/portable/elementwise.py and pool.py) calling
the pulp kernel.

| layer op (mode)           | kernel                                | golden                      |
|---------------------------|---------------------------------------|-----------------------------|
| add / sub / mul (tflite)  | tw_pulp_add_s8 / _sub_s8 / _mul_s8    | golden/elementwise.py       |
| max_pool (any)            | tw_pulp_maxpool_s8                    | golden/pool.py, onnx_ops.py |
| avg_pool (tflite)         | tw_pulp_avgpool_s8                    | golden/pool.py avg_pool     |
| global_avg_pool (tflite)  | tw_pulp_global_avgpool_s8             | golden/pool.py mean         |
| global_avg_pool (onnx)    | tw_pulp_global_avgpool_rq_s8_onnx     | golden/onnx_ops.py mean     |

uint8 as the portable bindings (the same checks refuse what they refuse, bindings/portable/
common.py); the tflite average pool refuses uint8.
"""

from __future__ import annotations

from ...ir.layer import Layer, LayerGraph
from ..base import LayerConstants
from ..portable import elementwise, pool
from ..portable.common import u8_offset


def add_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return elementwise.tiled_call(layer, lg, "tw_pulp_add_s8")


def sub_s8(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    return elementwise.tiled_call(layer, lg, "tw_pulp_sub_s8")


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
