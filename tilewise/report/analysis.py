"""The network analysis behind `tilewise analyze`: per-layer geometry, MACs, bytes, and totals.

Pure data from a LayerGraph (no target needed): shapes as the layer computes them, MACs from the
loop nest (ir/layer.py LoopNest.macs), weight bytes (weights + int32 bias), activation bytes
(inputs + output). Totals: MACs, weight bytes, and the largest single layer's input+output bytes
(the least L2 any schedule needs for activations, before lifetimes are considered).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..ir.layer import LayerGraph


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

    def to_json(self) -> dict:
        d = asdict(self)
        d["layers"] = d.pop("rows")
        return d


def analyze_layers(lg: LayerGraph) -> Analysis:
    rows = []
    for layer in lg.layers:
        ins = tuple(tuple(lg.tensors[i].shape) for i in layer.inputs)
        out = lg.tensors[layer.output]
        act = sum(lg.tensors[i].nbytes for i in layer.inputs) + out.nbytes
        rows.append(LayerRow(layer.name, layer.op, layer.nest.kind, ins, tuple(out.shape), layer.macs, layer.weight_bytes, act))
    biggest = max(rows, key=lambda r: r.activation_bytes) if rows else None
    totals = Totals(
        layers=len(rows),
        macs=sum(r.macs for r in rows),
        weight_bytes=sum(r.weight_bytes for r in rows),
        max_layer_activation_bytes=biggest.activation_bytes if biggest else 0,
        max_layer=biggest.name if biggest else "",
    )
    return Analysis(model=lg.source or lg.name, rows=tuple(rows), totals=totals)
