"""`tilewise ops [--target T] [--json]`: the operators each frontend accepts and, with a target,
which modules and kernels run each IR op at which precisions.

The frontends' lists come from the frontend itself (frontend/supported.py `frontend_ops`, derived
from the tables it matches on); with a target, every binding of every module
(Target.modules[].bindings, bindings/base.py) is listed by its key: IR op, mode, precisions.
"""

from __future__ import annotations

from typing import Any

from ..frontend.supported import frontend_ops


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


#: the exporters each ONNX / TFLite model style comes from (the second column of docs/inputs.md's table)
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
    """The frontends' tables as the markdown table of docs/inputs.md (tests/test_docs_ops.py
    holds the page to it)."""
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
