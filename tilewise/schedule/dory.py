"""The `dory` tiler (`--tiler dory`): seed 001's CP tiling, costed by the common cost model.

The tile sizes come from DORY's constraint program (dory_cp.py: maximize memory use plus the
PULP-NN heuristics, C and the kernel never tiled) solved with CP-SAT on the module's L1 budget.
The schedule around them is DORY's own execution scheme, from its generated layer code
(pulp-platform/dory, layer template): tile loops nested output channels → rows → columns → input
channels (outer→inner; so a weight tile stays in L1 across all spatial tiles and the input tile is
fetched for every tile), every transfer double buffered when the DMA is asynchronous. That
schedule is then built and costed by `cost.Evaluator` exactly like the `model` tiler's, so the two
are comparable layer by layer; the `model` tiler searches a superset of this space under the same
L1 accounting, so it never predicts more cycles.

DORY's L1 accounting (8 B of k/λ per channel, im2col for every conv, +20 B) differs slightly from
the common one (the module's per-channel constants, 4-byte aligned buffers, single copies of
operands fetched once). The CP is solved with DORY's accounting; if the common accounting of the
result exceeds the budget, the CP is solved again with the budget reduced by the excess, so the
schedule returned is always valid for the target.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import TilewiseError
from ..ir.layer import LoopNest
from ..targets.base import Target
from .cost import Evaluator, untiled_schedule
from .dory_cp import DoryTile, Objective, solve_dory
from .placement import Placement
from .space import REDUCING, LayerSchedule, loop_dims

#: DORY's tile loop nest, outer→inner (its layer template: "loop nest is nof,h,w,nif")
DORY_ORDER = ("n", "k", "oy", "ox", "c")
#: how many times the CP is re-solved with a tighter budget before giving up
_RETRIES = 48


def dory_order(nest: LoopNest) -> tuple[str, ...]:
    dims = loop_dims(nest.kind)
    return tuple(d for d in DORY_ORDER if d in dims)


def schedule_from_tile(nest: LoopNest, target: Target, placement: Placement, t: DoryTile,
                       ev: Evaluator | None = None) -> LayerSchedule:
    """The LayerSchedule of a DORY tile placed by `placement`, costed by the common model."""
    ev = ev or Evaluator(nest, target, placement)
    tile = {"n": nest.N, "k": t.K, "oy": t.OY, "ox": t.OX}
    if nest.kind in REDUCING:
        tile["c"] = nest.C
    buffering = 2 if (t.double_buffer and ev.overlap) else 1
    s = ev.build(tile, dory_order(nest), buffering, tiler="dory")
    notes = (f"dory objective={t.objective_set} value={t.objective} ({t.status})",
             f"dory L1 accounting {t.l1_bytes} B")
    return replace(s, notes=s.notes + notes)


def tile(nest: LoopNest, target: Target, placement: Placement, *, objective: Objective = "code",
         double_buffer: bool | None = None, time_limit_s: float = 10.0,
         num_workers: int = 1) -> LayerSchedule:
    """DORY's schedule of `nest` placed by `placement`; TilewiseError when its formulation cannot
    fit L1.

    `double_buffer`: None = when the level's DMA is asynchronous (DORY always double buffers on
    GAP8); False reproduces the single-buffered accounting of the paper's example. The binding's
    tile rules hold: an imposed output-channel tile is a constraint of the CP; rules DORY's
    formulation cannot express (C or spatial dimensions kept whole or fixed, tile multiples,
    packed sub-byte activations) are refused with a reason.
    """
    if placement.untiled:
        return untiled_schedule(nest, target, placement, tiler="dory")
    module, rules = placement.module, placement.rules
    fixed = dict(rules.fixed)
    k_tile = fixed.pop("k", None)
    if "k" in rules.whole:
        k_tile = nest.K
    fixed.pop("c", None)    # DORY never tiles C: a fixed c tile is the whole C
    if fixed or rules.multiple or rules.whole - {"c", "k", "n"}:
        raise TilewiseError(f"its kernel {rules.describe()}, which DORY's formulation cannot "
                            f"express; use --tiler model")
    if min(nest.x_bits, nest.y_bits) < 8:
        raise TilewiseError(f"its activations are packed {min(nest.x_bits, nest.y_bits)}-bit "
                            f"tensors, which DORY's formulation (whole bytes per element) cannot "
                            f"express; use --tiler model")
    level = target.memory(module.memory)
    ev = Evaluator(nest, target, placement)
    free = level.free
    budget = free
    for _ in range(_RETRIES):
        try:
            db = level.dma_async if double_buffer is None else double_buffer
            t = solve_dory(nest, budget, cores=module.cores, double_buffer=db,
                           objective=objective, time_limit_s=time_limit_s,
                           num_workers=num_workers, layer_name=None, k_tile=k_tile)
        except TilewiseError as e:
            if budget == free:
                raise
            raise TilewiseError(
                f"DORY's formulation cannot fit this {nest.kind} layer into the {free} bytes of "
                f"{module.memory} free on {target.name} once buffers are counted as the target "
                f"does ({e})") from None
        s = schedule_from_tile(nest, target, placement, t, ev)
        over = max((v - target.memory(m).free for m, v in s.memory_bytes().items()), default=0)
        if over <= 0:
            return s
        # shrink DORY's budget by the overshoot (at least 1/16 of it) until our accounting fits
        budget -= max(4, over, budget // 16)
        if budget <= 0:
            break
    raise TilewiseError(f"DORY's formulation found no {nest.kind} tile that fits the {free} bytes "
                        f"of {module.memory} free on {target.name}")
