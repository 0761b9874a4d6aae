"""`--bits mixed`: per-layer weight bit widths (8, 4, 2) under a weight-memory budget, chosen from
MEASURED sensitivity.

Sensitivity (HAQ's and seed 004 ch. 3's premise that layers differ in how much precision they
need, measured rather than assumed): for every weighted layer L and every width b ∈ {4, 2}, the
model is quantized with L alone at b bits (every other layer and every activation int8), run by
onnxruntime on the calibration inputs, and the output noise power ‖y_float − y_q‖² (summed over
the outputs and inputs) is recorded; the int8 model's noise is the baseline. The added noise of a
choice is the sum of its layers' added noises (the additive-noise model of SQNR-based bit
allocation; the final model is measured again, not predicted, and its figures are reported).

Assignment: the widths with the least summed added noise whose packed weight bytes
Σ_L ⌈n_L·b_L/8⌉ fit the budget — a knapsack over layers solved exactly by a dynamic program on the
Pareto front of (bytes, noise) (`_knapsack`; a greedy "least noise per byte saved" step misses
e.g. the digits CNN's 8/2/4 choice for 4/4/2, which has 35 % more noise). A budget no
assignment meets (every layer at 2 bits still above it) is refused in one sentence.

Activations stay int8 (and the network's input and outputs): the budget is about weight memory;
`--bits 4|2` is the uniform choice of both (pipeline.uniform_widths).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx

from ..errors import TilewiseError
from .graph_out import WEIGHTED, Plan, node_labels
from .pipeline import QuantizeResult, Widths, quantize_values
from .sqnr import run_all, session

WIDTHS = (8, 4, 2)


@dataclass(frozen=True)
class Assignment:
    """The chosen weight bits per layer and the figures that chose them."""

    bits: tuple[tuple[str, int], ...]
    weight_elems: tuple[tuple[str, int], ...]
    #: output noise power added by each layer alone at 4 and 2 bits, relative to the int8 model
    sensitivity: tuple[tuple[str, int, float], ...]
    int8_noise: float
    budget: int

    def weight_bytes(self, bits: dict[str, int] | None = None) -> int:
        b = dict(self.bits) if bits is None else bits
        return sum(-(-n * b.get(name, 8) // 8) for name, n in self.weight_elems)

    def int8_bytes(self) -> int:
        return sum(n for _, n in self.weight_elems)

    def to_json(self) -> dict:
        return {"bits": dict(self.bits), "weight_bytes": self.weight_bytes(),
                "int8_weight_bytes": self.int8_bytes(), "budget": self.budget,
                "sensitivity": [{"layer": n, "bits": b, "added_noise": v} for n, b, v in self.sensitivity],
                "int8_noise": self.int8_noise}


def weight_elems(model: onnx.ModelProto) -> dict[str, int]:
    """Weights of each weighted node (label -> element count)."""
    inits = {t.name: int(np.prod(t.dims, dtype=np.int64)) for t in model.graph.initializer}
    labels = iter(node_labels(model))
    return {next(labels): inits[n.input[1]] for n in model.graph.node if n.op_type in WEIGHTED}


def budget_bytes(spec: str, int8_bytes: int) -> int:
    """`--weight-budget`: bytes (an integer ≥ 1) or a fraction of the int8 weight bytes (0 < f < 1)."""
    try:
        v = float(spec)
    except ValueError:
        raise TilewiseError(f"--weight-budget {spec}: give bytes (e.g. 2048) or a fraction of the "
                            f"int8 weight bytes (e.g. 0.6)") from None
    if not np.isfinite(v) or v <= 0:
        raise TilewiseError(f"--weight-budget {spec}: the budget must be positive")
    return int(v * int8_bytes) if v < 1 else int(v)


def _noise(model: onnx.ModelProto, name: str, inputs: np.ndarray, ref: dict[str, list[np.ndarray]]) -> float:
    outs = run_all(session(model), name, inputs, list(ref))
    return float(sum(np.sum((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2)
                     for t in ref for a, b in zip(ref[t], outs[t])))


def assign(model: onnx.ModelProto, p: Plan, values: dict[str, list[np.ndarray]], inputs: np.ndarray,
           budget: str, method: str = "minmax", percentile: float = 99.99) -> Assignment:
    """Measure each layer's sensitivity at 4 and 2 bits and choose the bits under `budget`."""
    elems = weight_elems(model)
    int8_bytes = sum(elems.values())
    limit = budget_bytes(budget, int8_bytes)
    floor = sum(-(-n * 2 // 8) for n in elems.values())
    if limit < floor:
        raise TilewiseError(f"--weight-budget {budget}: {limit} B is below the {floor} B of every "
                            f"layer's weights at 2 bits (int8: {int8_bytes} B)")
    outputs = [o.name for o in model.graph.output]
    name = next(vi.name for vi in model.graph.input if vi.name not in {t.name for t in model.graph.initializer})
    ref = run_all(session(model), name, inputs, outputs)

    def noise(w: dict[str, int]) -> float:
        res = quantize_values(model, p, values, method, percentile, Widths(tuple(w.items())))
        return _noise(res.model, name, inputs, ref)

    base = noise({})
    added = {(layer, b): max(noise({layer: b}) - base, 0.0) for layer in elems for b in (4, 2)}
    added.update({(layer, 8): 0.0 for layer in elems})
    bits = _knapsack(elems, added, limit)
    sens = tuple((layer, b, added[(layer, b)]) for layer in elems for b in (4, 2))
    return Assignment(tuple(bits.items()), tuple(elems.items()), sens, base, limit)


def _knapsack(elems: dict[str, int], added: dict[tuple[str, int], float], limit: int) -> dict[str, int]:
    """The bits per layer with the least summed added noise whose packed weights fit `limit`:
    a dynamic program over the layers keeping the Pareto front of (bytes, noise) partial choices
    (exact; the front stays small because bytes only take a few values per layer)."""
    front: list[tuple[int, float, tuple[int, ...]]] = [(0, 0.0, ())]
    for layer, n in elems.items():
        grown = [(b0 + -(-n * b // 8), e0 + added[(layer, b)], (*c, b))
                 for b0, e0, c in front for b in WIDTHS]
        grown = [g for g in grown if g[0] <= limit]
        grown.sort(key=lambda g: (g[0], g[1]))
        front = []
        for g in grown:   # bytes ascending: keep a choice only if it lowers the noise
            if not front or g[1] < front[-1][1]:
                front.append(g)
    best = min(front, key=lambda g: (g[1], g[0]))
    return dict(zip(elems, best[2]))


def quantize_mixed(model: onnx.ModelProto, p: Plan, values: dict[str, list[np.ndarray]],
                   inputs: np.ndarray, budget: str, method: str = "minmax",
                   percentile: float = 99.99) -> tuple[QuantizeResult, Assignment]:
    """The mixed-precision model and its assignment (`assign`)."""
    a = assign(model, p, values, inputs, budget, method, percentile)
    return quantize_values(model, p, values, method, percentile, Widths(a.bits)), a
