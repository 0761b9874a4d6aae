"""Static L3 plan: where the activations the L3→L2 tiler leaves in L3 live off-chip.

Seed 001 §4.2.1 and §4.4: a layer whose output does not fit L2 writes it back to L3 by row tiles
and the next layer streams it in again; DORY keeps such tensors at fixed L3 addresses. Here each
tensor in L3 (`NetworkL3.l3_tensors`) is a buffer live from its producing step to its last
consumer, planned with the same two planners as L2 (`memory.plan.plan_buffers`), so tensors whose
lifetimes do not overlap share L3 bytes. The plan's offsets are relative to the start of the L3
activation region; a generated project places that region after its L3 weight image
(codegen/project.py), so the whole L3 is [weights image | activations].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from .network import LayerStep, act_name, activation_buffers
from .plan import Plan, plan_buffers


@dataclass(frozen=True)
class L3Plan:
    """Offsets (bytes, relative to the L3 activation region) of every activation left in L3."""

    offsets: dict[str, int] = field(hash=False)
    #: bytes of the L3 activation region (the plan's peak)
    bytes: int
    plan: Plan | None = None

    def offset(self, tensor: str) -> int:
        return self.offsets[tensor]


def plan_l3_activations(
    steps: Sequence[LayerStep], tensor_bytes: Mapping[str, int], l3_tensors: frozenset[str],
    outputs: Sequence[str] = (), align: int = 4,
) -> L3Plan:
    """Plan the tensors `l3_tensors` in L3 by their lifetimes over `steps`."""
    if not l3_tensors:
        return L3Plan({}, 0)
    keep = {act_name(t) for t in l3_tensors}
    own = [replace(s, alias_of=None) for s in steps]   # tensors in L3 share no buffer (network.py)
    bufs = [b for b in activation_buffers(own, tensor_bytes, outputs) if b.name in keep]
    plan = plan_buffers(bufs, [False] * len(steps), align)
    return L3Plan({b.name[4:]: plan.offsets[b.name] for b in bufs}, plan.peak, plan)
