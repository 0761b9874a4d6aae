"""The digital accelerator's elementwise add (HTVM's element_wise_add_pattern: add → right shift →
clip → cast; notes/accelerators.md DIANA): out = clip((a + b) >> shift, qmin, qmax) on two int8
tiles of one shape, as stored — no multiplier, no bias (c/tw_diana_digital.h TW_DIANA_ADD).

Which IR adds it takes (`reason`): an add by tables (TableAddParams, what the shift-mode integer
models' residual Add lowers to: frontend/onnx_int.py table_add) whose tables, read on the stored
int8 values as portable/elementwise.add_table_s8 reads them (the output's uint8 offset o taken
out of a's table: TA − o·2^s), are a' + c and b' − c for one constant c — then (TA + TB) >> s is
(a' + b') >> s exactly, the core's add. `quantize --target diana` writes its residual Adds so
(quantize/shift_nodes.py write_add_pow2: both addends on one scale with zero points 0 or 128, the
output on that scale × 2^d with zero point 128 + (z_a + z_b − 256) / 2^d, no rounding term).
Other adds run on the host.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...ir.layer import Layer, LayerGraph
from ...ir.params import TableAddParams
from ...ir.tensor import dtype_range
from ...templating import render
from ..base import LayerConstants
from ..portable import checks as portable_checks
from ..portable.common import TEMPLATES as PORTABLE_TEMPLATES
from ..portable.common import u8_offset

TEMPLATES = Path(__file__).resolve().parent / "templates"

#: the stored int8 values, as the tables are laid out (entry e is (int8_t)e)
_STORED = np.where(np.arange(256) >= 128, np.arange(256) - 256, np.arange(256))


def stored_tables(layer: Layer, lg: LayerGraph) -> tuple[np.ndarray, np.ndarray]:
    """(TA, TB) on the stored int8 values −128..127 of a and b, the output's offset taken out of
    TA (portable/elementwise.add_table_s8's layout, in value order)."""
    p = layer.params
    assert isinstance(p, TableAddParams)
    v = np.arange(-128, 128)
    y_off = u8_offset(lg, layer.output)
    out = []
    for name, table, minus in zip(layer.inputs, (p.table_a, p.table_b), (y_off << int(p.shift), 0)):
        lo = dtype_range(lg.tensors[name].dtype)[0]
        out.append(np.asarray(table, np.int64)[v + u8_offset(lg, name) - lo] - minus)
    return out[0], out[1]


def reason(layer: Layer, lg: LayerGraph) -> str | None:
    """None when the core's add computes the layer exactly (module docstring), else why not."""
    if not isinstance(layer.params, TableAddParams):
        return "an add that is not a shift-mode add by tables (DIANA's core adds, shifts and clips)"
    why = portable_checks.add_table(layer, lg)
    if why is not None:
        return why
    ta, tb = stored_tables(layer, lg)
    v = np.arange(-128, 128)
    c = ta - v
    if (c != c[0]).any() or (tb - v != -c[0]).any():
        return ("an add whose addends are scaled or offset (DIANA's core adds the stored values "
                "as they are, then shifts and clips)")
    p = layer.params
    y_off = u8_offset(lg, layer.output)
    if not (-128 <= p.qmin - y_off <= p.qmax - y_off <= 127):
        return "an add clamped beyond int8 (DIANA's core writes int8)"
    return None


def emit(layer: Layer, lg: LayerGraph, consts: LayerConstants | None) -> str:
    """compute() of the add (templates/diana_add_s8.c.j2): one job per tile."""
    p = layer.params
    y_off = u8_offset(lg, layer.output)
    return render("diana_add_s8.c.j2", (TEMPLATES, PORTABLE_TEMPLATES), shift=int(p.shift), qmin=int(p.qmin) - y_off,
                  qmax=int(p.qmax) - y_off)
