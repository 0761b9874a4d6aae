"""The operators each frontend accepts, in each model style it reads: what `tilewise ops` lists
(report/ops.py formats it).

Nothing here is a hand-kept list: the TFLite builtin ops are the keys of the converter table
(tflite_ops.CONVERTERS); the ONNX op types come from the tables the ONNX frontend matches on — the
lowering handlers (onnx_lower.HANDLERS: QOperator ops, minus the frontend's own rewritten forms,
which are neither ONNX nor com.microsoft operators), the float ops a QDQ graph may hold between
QuantizeLinear/DequantizeLinear (onnx_qdq), the NEMO integer patterns (onnx_nemo: the linear ops
and their requantization chains) and QuantLab's RequantShift patterns (onnx_quantlab). The
frontend owns this knowledge, so that no other package reads its internal tables.
"""

from __future__ import annotations

from dataclasses import dataclass

#: QOperator ops that are com.microsoft contrib operators rather than ai.onnx ones
_MS_PREFIXES = ("QLinear", "QGemm")


@dataclass(frozen=True)
class OpGroup:
    """Op types a frontend accepts in one model style, with what the style means."""

    frontend: str
    style: str
    ops: tuple[str, ...]
    note: str


def _onnx_public(name: str) -> bool:
    import onnx.defs

    return onnx.defs.has(name) or name.startswith(_MS_PREFIXES)


def frontend_ops() -> tuple[OpGroup, ...]:
    """The op types each frontend and model style accepts (derived from the frontend tables)."""
    from . import onnx as _onnx  # noqa: F401  (registers every lowering handler)
    from . import onnx_int, onnx_nemo, onnx_qdq, onnx_quantlab, onnx_tail
    from .onnx_lower import HANDLERS
    from .tflite_fold import FOLDERS
    from .tflite_ops import CONVERTERS

    integer = set(onnx_int.INTEGER_OPS)
    qop = tuple(sorted(n for n in HANDLERS if _onnx_public(n) and n not in integer))
    quant = onnx_nemo.QUANT_OPS
    moves = tuple(n for n in qop if not n.startswith(_MS_PREFIXES))
    return (
        OpGroup("tflite", "int8/int16 builtin", tuple(sorted(CONVERTERS)),
                "TFLite builtin operators on quantized tensors (fused activations included)"),
        OpGroup("tflite", "folded", tuple(sorted(FOLDERS)),
                "int32/int64 shape arithmetic on constants and static shapes, computed at import"),
        OpGroup("onnx", "qoperator", qop, "QOperator ops on integer tensors"),
        OpGroup("onnx", "qdq", tuple(dict.fromkeys((*quant, *onnx_qdq.REQUANT_OPS,
                                                    *onnx_qdq.MOVE_OPS, *onnx_qdq.CLIP_OPS))),
                "float ops between QuantizeLinear and DequantizeLinear"),
        OpGroup("onnx", "nemo", tuple(dict.fromkeys((*onnx_nemo.LINEAR, *onnx_nemo.REQUANT_CHAIN,
                                                     "Pad", "AveragePool", "Add"))),
                "NEMO integer graphs (DORY's examples): Conv/Gemm/MatMul with Mul/Add/Div/Floor/Clip/Cast "
                "requantization, AveragePool and residual Add with theirs, Pads folded into the conv"),
        OpGroup("onnx", "quantlab", tuple(dict.fromkeys((*onnx_quantlab.DEPLOYED_OPS, "Add (DORY adder)"))),
                "QuantLab / Deeploy graphs: RequantShift after linear ops, an integer Add or on its own; "
                "Deeploy's iHardswish, iSoftmax, iRMSNorm, iNoNorm, iLayerNorm, iGELU, TrueIntegerDiv merged into "
                "its RequantShift; QuantLab's DORY adder"),
        OpGroup("onnx", "integer", tuple(dict.fromkeys((*onnx_int.INTEGER_OPS, *moves))),
                "any integer export: exact integer ops on codes; 1-D Conv / MaxPool as 2-D"),
        OpGroup("onnx", "float tail", onnx_tail.FLOAT_TAIL + onnx_tail.JOINS,
                "after an integer export's last layer: cut, and said so (the network ends before it)"),
        OpGroup("onnx", "folded", ("Shape", "any standard op on constants"),
                "computed at import (onnx_fold.py: ONNX's reference implementation; Shape of a static tensor)"),
    )
