"""Table 2 — memory: tilewise's static activation plan vs TFLM's arena, and generated code size.

- tilewise: the activation buffers of the lowered network (lifetimes over the execution order,
  residuals kept alive) planned by the product's L2 planner (`memory.network.plan_network`, the
  better of bidirectional stack and best fit) with no weights in the plan — TFLM keeps weights in
  the flatbuffer, outside its arena, so this is the like-for-like number — and the plan's lower
  bound (the largest set of simultaneously live activations).
- TFLM: RecordingMicroAllocator's arena total and head (the planned non-persistent buffers).
- generated: the L2/L1 arenas the generated project declares and the text and rodata of its objects
  compiled with gcc -O2 (tilewise_host); rodata holds the weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tilewise.memory.network import LayerStep, plan_network, steps_from_layer_graph

from . import models, peers, scheduling
from .tables import Table

NA_GEN = "n/a (generate unavailable)"


def activation_plan(name: str) -> tuple[int, int]:
    """(peak, lower bound) in bytes of the activation-only L2 plan of a model."""
    lg = scheduling.lowered(models.model_path(name))
    steps, sizes = steps_from_layer_graph(lg)
    acts = [LayerStep(s.name, s.inputs, s.output) for s in steps]
    plan = plan_network(acts, sizes, l2_bytes=1 << 40, outputs=lg.outputs)
    return plan.peak, plan.lower_bound


def measure(names: Sequence[str] = models.MLPERF,
            code_sizes: Mapping[str, Mapping[str, int] | str] | None = None) -> Table:
    """code_sizes: per model {'text', 'rodata'} from table 1's builds, or a reason string."""
    rows, data = [], {}
    for name in names:
        peak, lb = activation_plan(name)
        arena = peers.tflm_arena(name)
        cs = (code_sizes or {}).get(name, NA_GEN)
        gen = [cs[k] if isinstance(cs, Mapping) else cs for k in ("l2_arena", "l1_arena", "text", "rodata")]
        data[name] = {"tw_act_peak": peak, "tw_act_lower_bound": lb, "tflm_arena": arena,
                      "generated": cs}
        rows.append((name, peak, lb, arena["head"], arena["total"], peak / arena["head"], *gen))
    return Table(
        "memory", "Table 2 — memory (bytes)",
        ("model", "tilewise act. peak", "lower bound", "TFLM arena head", "TFLM arena total",
         "tilewise / TFLM head", "generated L2 arena", "generated L1 arena", "generated text",
         "generated rodata"),
        tuple(rows),
        notes=("tilewise act. peak: static L2 plan of all activations (no weights; TFLM keeps weights outside "
               "its arena too); lower bound = max over layers of the live activation bytes.",
               "TFLM: tflite-micro print_allocations() after one invoke (head = planned activation and "
               "scratch buffers, total = head + persistent tail).",
               "generated: the host build of table 1 (gap8, 1 core, --tiler model): the L2 and L1 arenas its "
               "network.h declares (L2: activations and L3-streamed weight buffers; L1: tile buffers and "
               "scratch), and `size` text/rodata of its network, layers, weights, kernels, tile runtime and "
               "host HAL objects (gcc -O2), without the benchmark's main; rodata holds the weights."),
        data=data,
    )
