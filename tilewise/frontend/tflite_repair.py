"""Repair TFLite quantization metadata that LiteRT refuses although its meaning is clear.

LiteRT's InterpreterBuilder (interpreter_builder.cc, ParseQuantization) refuses a tensor whose
`quantized_dimension` is outside [0, rank) — even when the tensor has a single scale, where the
dimension means nothing (per-tensor quantization). Older converters and hand-written exporters
left such values behind (e.g. 3 on a 1-D bias, or the filter's axis copied onto an activation).
tilewise reads those files as per-tensor (frontend/tflite.py `quant_params` ignores the dimension
of a single scale); `validate` needs LiteRT on the same file, so `repair_for_litert` returns a copy
with those dimensions set to 0 and one line per kind of fix, which validate prints.

The fix is made in place on a copy of the bytes: the int32 field of the QuantizationParameters
table is overwritten where the file stores it (a dimension that is absent reads as 0 and is never
out of range), so nothing else of the flatbuffer moves. A per-channel tensor (several scales) with
an out-of-range dimension has no clear meaning and is not repaired (the frontend refuses it where
it matters, and LiteRT's own message is reported otherwise).
"""

from __future__ import annotations

import struct

from .tflite import _schema

#: vtable slot of QuantizationParameters.quantized_dimension (schema field 6: 4 + 2·6)
_QDIM_SLOT = 16


def repair_for_litert(data: bytes) -> tuple[bytes, tuple[str, ...]]:
    """(bytes LiteRT accepts, what was repaired) — `data` itself and () when nothing needed it.
    `data` must be a flatbuffer frontend/tflite.py has already read."""
    model = _schema("Model").Model.GetRootAs(data, 0)
    out = bytearray(data)
    fixed: list[str] = []
    for s in range(model.SubgraphsLength()):
        sg = model.Subgraphs(s)
        for i in range(sg.TensorsLength()):
            t = sg.Tensors(i)
            q = t.Quantization()
            if q is None or q.ScaleLength() != 1:
                continue
            rank = t.ShapeLength()
            qdim = int(q.QuantizedDimension())
            if 0 <= qdim < max(rank, 1):
                continue
            pos = q._tab.Pos + q._tab.Offset(_QDIM_SLOT)
            struct.pack_into("<i", out, pos, 0)
            name = (t.Name() or b"").decode("utf-8", errors="replace") or f"#{i}"
            fixed.append(f"'{name}' (dimension {qdim} of a {rank}-D tensor)")
    if not fixed:
        return data, ()
    shown = ", ".join(fixed[:3]) + (f" and {len(fixed) - 3} more" if len(fixed) > 3 else "")
    note = (f"quantized_dimension reset to 0 on {len(fixed)} per-tensor quantized "
            f"tensor{'s' if len(fixed) > 1 else ''} LiteRT refuses: {shown}")
    return bytes(out), (note,)


__all__ = ["repair_for_litert"]
