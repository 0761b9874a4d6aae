"""Repair TFLite quantization metadata that LiteRT refuses although its meaning is clear.

LiteRT's InterpreterBuilder (interpreter_builder.cc, ParseQuantization) refuses a tensor whose
`quantized_dimension` is outside [0, rank). Two such cases have one possible meaning, and converters
and hand-written exporters leave both behind:
- a single scale (per-tensor quantization), where the dimension means nothing (e.g. 3 on a 1-D
  bias, or the filter's axis copied onto an activation);
- a 1-D tensor with one scale per element (per-channel quantization), whose only axis is 0 — TFLite
  Micro's person_detect.tflite carries quantized_dimension 3 on its per-channel int32 biases.
tilewise reads those files so (frontend/tflite.py: `quant_params` ignores the dimension of a single
scale, `read_flatbuffer` gives a 1-D per-channel tensor axis 0); `validate` needs LiteRT on the same
file, so `repair_for_litert` returns a copy with those dimensions set to 0 and one line saying what
was repaired, which validate prints.

The fix is made in place on a copy of the bytes: the int32 field of the QuantizationParameters
table is overwritten where the file stores it, so nothing else of the flatbuffer moves. A dimension
at its default is not stored at all and reads as 0, which is never out of range, so an
out-of-range dimension always has a stored field to overwrite. Other per-channel tensors with an
out-of-range dimension (rank 2 or more, or a scale count that is not the 1-D tensor's length) have
no clear meaning and are not repaired: the frontend refuses them, naming the tensor.
"""

from __future__ import annotations

import struct

from .tflite import _schema

#: vtable slot of QuantizationParameters.quantized_dimension (schema field 6: 4 + 2·6)
_QDIM_SLOT = 16


def _repairable(scales: int, shape: tuple[int, ...], qdim: int) -> str | None:
    """'per-tensor' or 'per-channel' when an out-of-range `qdim` can only mean 0, else None."""
    rank = len(shape)
    if 0 <= qdim < max(rank, 1):
        return None
    if scales == 1:
        return "per-tensor"
    if rank == 1 and scales == shape[0]:
        return "per-channel"
    return None


def repair_for_litert(data: bytes) -> tuple[bytes, tuple[str, ...]]:
    """(bytes LiteRT accepts, what was repaired) — `data` itself and () when nothing needed it.
    `data` must be a flatbuffer frontend/tflite.py has already read."""
    model = _schema("Model").Model.GetRootAs(data, 0)
    out = bytearray(data)
    fixed: dict[str, list[str]] = {"per-tensor": [], "per-channel": []}
    for s in range(model.SubgraphsLength()):
        sg = model.Subgraphs(s)
        for i in range(sg.TensorsLength()):
            t = sg.Tensors(i)
            q = t.Quantization()
            if q is None or q.ScaleLength() < 1:
                continue
            shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() > 0 else ()
            qdim = int(q.QuantizedDimension())
            kind = _repairable(q.ScaleLength(), shape, qdim)
            field = q._tab.Offset(_QDIM_SLOT)
            if kind is None or field == 0:
                continue
            struct.pack_into("<i", out, q._tab.Pos + field, 0)
            name = (t.Name() or b"").decode("utf-8", errors="replace") or f"#{i}"
            scales = f", {q.ScaleLength()} scales" if kind == "per-channel" else ""
            fixed[kind].append(f"'{name}' (dimension {qdim} of a {len(shape)}-D tensor{scales})")
    items = fixed["per-tensor"] + fixed["per-channel"]
    if not items:
        return data, ()
    kinds = [f"{len(v)} {k} quantized" + (" 1-D" if k == "per-channel" else "")
             for k, v in fixed.items() if v]
    shown = ", ".join(items[:3]) + (f" and {len(items) - 3} more" if len(items) > 3 else "")
    note = (f"quantized_dimension reset to 0 on {' and '.join(kinds)} tensor{'s' if len(items) > 1 else ''} "
            f"LiteRT refuses: {shown}")
    return bytes(out), (note,)


__all__ = ["repair_for_litert"]
