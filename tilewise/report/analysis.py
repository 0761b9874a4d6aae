"""The network analysis behind `tilewise analyze`: per-layer geometry, MACs, bytes, and totals.

Pure data from a LayerGraph (no target needed): shapes as the layer computes them, MACs from the
loop nest (ir/layer.py LoopNest.macs), weight bytes (weights + int32 bias), activation bytes
(inputs + output), the requantization in words (integer graphs: which division semantics the
model got, ir/requant.py `describe`). Totals: MACs, weight bytes, and the largest single layer's input+output bytes
(the least L2 any schedule needs for activations, before lifetimes are considered).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from ..ir.layer import LayerGraph
from ..ir.requant import describe

if TYPE_CHECKING:  # pragma: no cover
    from ..pipeline import NetworkSchedule
    from .schedule_report import ScheduledRow


@dataclass(frozen=True)
class LayerRow:
    name: str
    op: str
    kind: str
    input_shapes: tuple[tuple[int, ...], ...]
    output_shape: tuple[int, ...]
    macs: int
    weight_bytes: int
    activation_bytes: int
    #: the requantization's arithmetic and where it comes from (ir/requant.py describe; "" = none)
    requant: str = ""


@dataclass(frozen=True)
class Totals:
    layers: int
    macs: int
    weight_bytes: int
    max_layer_activation_bytes: int
    max_layer: str


@dataclass(frozen=True)
class Analysis:
    model: str
    rows: tuple[LayerRow, ...]
    totals: Totals
    #: with a target: one ScheduledRow per layer and the scheduled totals
    scheduled: tuple[ScheduledRow, ...] = ()
    scheduled_totals: dict = field(default_factory=dict)
    #: the frontend's sentences on how the model was read (e.g. a float tail cut), graph meta "notes"
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict:
        layers = [asdict(r) for r in self.rows]
        for row, s in zip(layers, self.scheduled):
            row.update({k: v for k, v in asdict(s).items()
                        if k != "name" and not (k in ("candidates", "in_place", "fused") and v is None)})
        return {"model": self.model, "layers": layers, "totals": {**asdict(self.totals), **self.scheduled_totals},
                "notes": list(self.notes)}


def analyze_layers(lg: LayerGraph, ns: NetworkSchedule | None = None, why: bool = False,
                   code: dict | None = None) -> Analysis:
    """The analysis of `lg` (and of its schedule `ns`); `code`: the measured code size
    (validate/code_size.py), counted in the flash summary."""
    rows = []
    for layer in lg.layers:
        ins = tuple(tuple(lg.tensors[i].shape) for i in layer.inputs)
        out = lg.tensors[layer.output]
        act = sum(lg.tensors[i].nbytes for i in layer.inputs) + out.nbytes
        rows.append(LayerRow(layer.name, layer.op, layer.nest.kind, ins, tuple(out.shape), layer.macs,
                             layer.weight_bytes, act, describe(layer.requant)))
    biggest = max(rows, key=lambda r: r.activation_bytes) if rows else None
    totals = Totals(
        layers=len(rows),
        macs=sum(r.macs for r in rows),
        weight_bytes=sum(r.weight_bytes for r in rows),
        max_layer_activation_bytes=biggest.activation_bytes if biggest else 0,
        max_layer=biggest.name if biggest else "",
    )
    notes = tuple(lg.meta.get("notes", ()))
    if ns is None:
        return Analysis(model=lg.source or lg.name, rows=tuple(rows), totals=totals, notes=notes)
    from .schedule_report import scheduled_rows, scheduled_totals

    return Analysis(lg.source or lg.name, tuple(rows), totals, scheduled_rows(ns, why),
                    scheduled_totals(ns, code), notes)
