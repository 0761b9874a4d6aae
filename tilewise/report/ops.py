"""`tilewise ops [--target T] [--json]`: the operators each frontend accepts and, with a target,
which modules and kernels run each IR op at which precisions.

Nothing here is a hand-kept list: the TFLite builtin ops are the keys of the converter table
(frontend/tflite_ops.CONVERTERS); the ONNX op types come from the tables the ONNX frontend matches
on — the lowering handlers (frontend/onnx_lower.HANDLERS: QOperator ops, minus the frontend's own
rewritten forms, which are neither ONNX nor com.microsoft operators), the float ops a QDQ graph
may hold between QuantizeLinear/DequantizeLinear (frontend/onnx_qdq), the NEMO integer patterns
(frontend/onnx_nemo: the linear ops and their requantization chains) and QuantLab's RequantShift
patterns (frontend/onnx_quantlab). With a target, every binding of every module
(Target.modules[].bindings, bindings/base.py) is listed by its key: IR op, mode, precisions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
    from ..frontend import onnx as _onnx  # noqa: F401  (registers every lowering handler)
    from ..frontend import onnx_int, onnx_nemo, onnx_qdq, onnx_quantlab, onnx_tail
    from ..frontend.onnx_lower import HANDLERS
    from ..frontend.tflite_fold import FOLDERS
    from ..frontend.tflite_ops import CONVERTERS

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
                "Deeploy's iHardswish, TrueIntegerDiv merged into its RequantShift; QuantLab's DORY adder"),
        OpGroup("onnx", "integer", tuple(dict.fromkeys((*onnx_int.INTEGER_OPS, *moves))),
                "any integer export: exact integer ops on codes; 1-D Conv / MaxPool as 2-D"),
        OpGroup("onnx", "float tail", onnx_tail.FLOAT_TAIL + onnx_tail.JOINS,
                "after an integer export's last layer: cut, and said so (the network ends before it)"),
        OpGroup("onnx", "folded", ("Shape", "any standard op on constants"),
                "computed at import (onnx_fold.py: ONNX's reference implementation; Shape of a static tensor)"),
    )


def target_ops(target) -> list[dict[str, Any]]:
    """One row per (IR op, module): the module's kernels for it and their precisions."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for m in target.modules:
        for b in m.bindings:
            row = rows.setdefault((b.key.op, m.name), {"op": b.key.op, "module": m.name,
                                                       "kernels": [], "precisions": []})
            if b.name not in row["kernels"]:
                row["kernels"].append(b.name)
            prec = str(b.key.precision)
            if prec not in row["precisions"]:
                row["precisions"].append(prec)
    return sorted(rows.values(), key=lambda r: (r["op"], r["module"]))


def ops_json(target=None) -> dict[str, Any]:
    out: dict[str, Any] = {"frontends": [{"frontend": g.frontend, "style": g.style,
                                          "ops": list(g.ops), "note": g.note}
                                         for g in frontend_ops()]}
    if target is not None:
        out["target"] = target.name
        out["ir_ops"] = target_ops(target)
    return out


#: the exporters each ONNX / TFLite model style comes from (the README table's second column)
EXPORTERS = {
    ("tflite", "int8/int16 builtin"): "TFLite converter (LiteRT), Keras",
    ("onnx", "qoperator"): "onnxruntime.quantization (QOperator)",
    ("onnx", "qdq"): "onnxruntime.quantization (QDQ), `tilewise quantize`",
    ("onnx", "nemo"): "NEMO (DORY's examples), `tilewise quantize --target gap8…` (shift mode)",
    ("onnx", "quantlab"): "QuantLab, Deeploy",
    ("onnx", "integer"): "NEMO, QuantLab, Deeploy",
    ("onnx", "float tail"): "NEMO, QuantLab",
    ("tflite", "folded"): "Keras (TRANSPOSE_CONV output shapes, RESHAPE to [batch, -1])",
    ("onnx", "folded"): "PyTorch's exporter (shape arithmetic), any",
}


def ops_markdown() -> str:
    """The frontends' tables as the README's markdown table (tests/test_docs_ops.py holds the
    README to it)."""
    rows = ["| format | exporter | style | operators | what |", "|---|---|---|---|---|"]
    for g in frontend_ops():
        ops = ", ".join(g.ops).replace("|", "\\|")
        rows.append(f"| {g.frontend} | {EXPORTERS.get((g.frontend, g.style), '')} | {g.style} | {ops} | {g.note} |")
    return "\n".join(rows)


def ops_text(target=None, width: int = 100) -> str:
    """The listing as text, every line within `width` columns (long lists wrap, indented)."""
    from textwrap import fill

    def para(text: str, indent: str = "  ") -> str:
        return fill(text, width, initial_indent=indent, subsequent_indent=indent + "  ",
                    break_on_hyphens=False)

    lines = []
    for g in frontend_ops():
        lines.append(para(f"{g.frontend} ({g.style}: {g.note}):", ""))
        lines.append(para(", ".join(g.ops)))
    if target is not None:
        lines.append(para(f"on {target.name} (IR op: module: kernels [precisions x/w->y bits]):", ""))
        for r in target_ops(target):
            lines.append(para(f"{r['op']}: {r['module']}: {', '.join(r['kernels'])} "
                              f"[{', '.join(r['precisions'])}]"))
    return "\n".join(lines)
