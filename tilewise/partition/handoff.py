"""Hand-offs: what it costs to pass a tensor from the layer that writes it to the layers that read it.

A layer on module M_a writes its output tensor into M_a's exchange memory (`Module.exchange`), in
the representation its binding writes (`Binding.output_offsets`: stored = value + offset); a layer
on M_b reads it from M_b's exchange memory, in the representation its binding reads
(`Binding.input_offset`). Two costs follow, both target data, no target names:

- the move: a tensor whose consumer exchanges in another memory than its producer is copied there
  once per destination memory (the copy then serves every consumer on that memory). A copy between
  levels i < j of `Target.memories` goes through every level between them, each hop by the DMA
  engine of the inner level of the hop, priced from its `Memory` figures as one contiguous
  transfer of the whole tensor (schedule/cost.py prices tile transfers alike, seed 003 §V, seed 002
  eq. 5.9): ``dma_setup_cycles + dma_chunk_cycles + bytes / bandwidth + dma_issue_cycles``, and
  ``bytes · pj_per_byte`` of the inner level. The consumer cannot start before its input is
  there, and layers run one after another, so the copy is on the critical path whether the DMA is
  blocking or not (assumed: no overlap with the layers between producer and consumer). Every
  built-in module exchanges in L2 today: every move costs 0.
- the representation: every consumer must read a tensor as it is stored. A kernel that reads
  another representation than the tensor's dtype either converts its input itself (its cost model
  prices that, e.g. NE16's per-tile `convert`, bindings/ne16/cost.py) and reads offset 0, or it
  reads the tensor stored with its offset, which its producer must then write. The network's
  input is given and its output read as their dtype (offset 0) in `Target.io_memory`.

`tensor_uses(lg)` lists, per activation tensor, its bytes, producer and consumers in execution
order; `move_cost(target, src, dst, nbytes)` prices one copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.layer import LayerGraph
from ..targets.base import Target


@dataclass(frozen=True)
class TensorUse:
    """One activation tensor of the network as the partition sees it."""

    name: str
    nbytes: int
    #: index of the layer writing it, -1 for a network input
    producer: int
    #: indices of the layers reading it, ascending, each once
    consumers: tuple[int, ...]
    #: a network output (read in `Target.io_memory`, as its dtype, after the last layer)
    output: bool


@dataclass(frozen=True)
class HandOff:
    """One copy of a tensor from its producer's exchange memory to a consumer's."""

    tensor: str
    src: str
    dst: str
    nbytes: int
    cycles: float
    energy_pj: float

    def to_json(self) -> dict:
        return {"tensor": self.tensor, "from": self.src, "to": self.dst, "bytes": self.nbytes,
                "cycles": self.cycles, "energy_pj": self.energy_pj}


def tensor_uses(lg: LayerGraph) -> tuple[TensorUse, ...]:
    """Every activation tensor the layers read or write, network inputs first (module doc)."""
    producer: dict[str, int] = {}
    consumers: dict[str, list[int]] = {}
    for i, layer in enumerate(lg.layers):
        for t in dict.fromkeys(layer.inputs):
            consumers.setdefault(t, []).append(i)
        producer[layer.output] = i
    names = list(dict.fromkeys((*lg.inputs, *consumers, *producer)))
    return tuple(TensorUse(n, int(lg.tensors[n].nbytes), producer.get(n, -1),
                           tuple(consumers.get(n, ())), n in lg.outputs) for n in names)


def move_cost(target: Target, src: str, dst: str, nbytes: int) -> tuple[float, float]:
    """(cycles, pJ) of copying `nbytes` contiguous bytes from memory `src` to memory `dst`."""
    if src == dst:
        return 0.0, 0.0
    names = [m.name for m in target.memories]
    lo, hi = sorted((names.index(src), names.index(dst)))
    cycles = energy = 0.0
    for m in target.memories[lo:hi]:
        cycles += (m.dma_setup_cycles + m.dma_chunk_cycles
                   + nbytes / m.bytes_per_cycle(target.clock_mhz) + m.dma_issue_cycles)
        energy += nbytes * m.pj_per_byte
    return cycles, energy
