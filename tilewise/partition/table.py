"""The cost table partition minimises over: per layer its options, per tensor its uses and moves.

Pure data, built from the scheduled candidates (partition/choose.py) or written by hand (tests):
an `Option` is one way to run a layer — a (module, binding) and the representation it writes its
output in — with its cost as ``(score, cycles)``: the objective's figure (cycles, pJ or their
product, partition/choose.py) and the predicted cycles, compared in that order. The network's
cost of an assignment (one option per layer) is

    Σ layer option costs + Σ over tensors, over the distinct exchange memories of its consumers
    (and `io_memory` for a network output) other than its producer's, of the move's cost

and an assignment is feasible when every consumer reads each input in the representation it is
stored in and every network output is stored as its dtype (offset 0) — partition/handoff.py.
`evaluate` states that sum directly; the DP (partition/dp.py) and the oracle (partition/oracle.py)
both minimise it.
"""

from __future__ import annotations

from dataclasses import dataclass

Cost = tuple[float, float]
ZERO: Cost = (0.0, 0.0)
INFEASIBLE: Cost = (float("inf"), float("inf"))


def add(a: Cost, b: Cost) -> Cost:
    return a[0] + b[0], a[1] + b[1]


@dataclass(frozen=True)
class Option:
    """One way to run a layer (module docstring)."""

    module: str
    binding: str
    #: index of the module's exchange memory in `CostTable.memories`
    memory: int
    #: representation of its activation inputs (Binding.input_offset)
    reads: int
    #: representation of its output (one of Binding.output_offsets)
    writes: int
    cost: Cost
    #: index of the candidate it comes from in the layer's candidate list
    ref: int = 0


@dataclass(frozen=True)
class Tensor:
    """A tensor's uses (partition/handoff.py TensorUse) and the cost of its moves."""

    name: str
    producer: int
    consumers: tuple[int, ...]
    output: bool
    #: move[src][dst]: cost of copying it from memory src to memory dst
    move: tuple[tuple[Cost, ...], ...]


@dataclass(frozen=True)
class CostTable:
    memories: tuple[str, ...]
    io_memory: int
    #: per layer, in execution order
    options: tuple[tuple[Option, ...], ...]
    tensors: tuple[Tensor, ...]
    #: per layer: indices in `tensors` of the tensors it reads, and of the one it writes
    reads: tuple[tuple[int, ...], ...]
    writes: tuple[int, ...]

    @property
    def n_layers(self) -> int:
        return len(self.options)

    def size(self) -> int:
        """The number of assignments (one option per layer)."""
        n = 1
        for opts in self.options:
            n *= len(opts)
        return n


@dataclass(frozen=True)
class Move:
    """One copy an assignment makes: tensor index, source and destination memory indices."""

    tensor: int
    src: int
    dst: int
    cost: Cost


def moves(table: CostTable, picks: tuple[int, ...]) -> tuple[Move, ...] | None:
    """The copies assignment `picks` (an option index per layer) makes, or None when it is
    infeasible (a consumer reads a tensor in another representation than it is stored in, or a
    network output is not stored as its dtype)."""
    out = []
    for ti, t in enumerate(table.tensors):
        if t.producer < 0:
            home, stored = table.io_memory, 0
        else:
            o = table.options[t.producer][picks[t.producer]]
            home, stored = o.memory, o.writes
        dests = []
        for c in t.consumers:
            o = table.options[c][picks[c]]
            if o.reads != stored:
                return None
            dests.append(o.memory)
        if t.output:
            if stored != 0:
                return None
            dests.append(table.io_memory)
        for d in dict.fromkeys(dests):
            if d != home:
                out.append(Move(ti, home, d, t.move[home][d]))
    return tuple(out)


def evaluate(table: CostTable, picks: tuple[int, ...]) -> Cost:
    """The network cost of assignment `picks` (module docstring); INFEASIBLE when it is not
    feasible."""
    ms = moves(table, picks)
    if ms is None:
        return INFEASIBLE
    total = ZERO
    for i, p in enumerate(picks):
        total = add(total, table.options[i][p].cost)
    for m in ms:
        total = add(total, m.cost)
    return total
