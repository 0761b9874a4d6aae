"""The exact partition: a dynamic programme over the execution order (partition/table.py's cost).

MATCH (seed 003 §IV-B) picks every layer's module alone and ignores what passing tensors between
modules costs; with hand-offs (partition/handoff.py) a layer's best module depends on where its
inputs are and how its outputs will be read. The cost of the layers after layer i depends on the
choices before it only through the tensors still live after i (written before, read after, or a
network output): for each, the memory it was written in, the representation it is stored in and
the memories it has already been copied to. That triple per live tensor is the DP's state, so the
minimum over states at the end is the minimum over all assignments (Bellman): exact.

Live tensors are few (a chain keeps one, a residual block two or three), the memories and
representations of a target a handful: on the MLPerf Tiny models the frontier stays within tens
of states. Options of one layer that agree on exchange memory, representation read and written
are interchangeable for everything but their own cost, so only the cheapest of each such group is
expanded (ties: the first, i.e. the target's order). An option writing its output in a
representation that some consumer of it cannot read (or, for a network output, other than the
dtype's) can lead to no feasible assignment: it is not expanded (`_readable`). Without this, each
live tensor that could be written in two representations doubled the frontier until its
consumers ran — an unrolled recurrent layer, whose converter computes every time step's input
projection first, kept 2^49 states.
"""

from __future__ import annotations

from .table import ZERO, Cost, CostTable, add

#: one live tensor: (tensor index, memory written in, representation, bit mask of copies)
Live = tuple[int, int, int, int]
State = tuple[Live, ...]


def _expanded(table: CostTable) -> list[list[int]]:
    """Per layer, the cheapest option of each (memory, reads, writes) group, in table order."""
    keep = []
    for opts in table.options:
        best: dict[tuple[int, int, int], int] = {}
        for j, o in enumerate(opts):
            k = (o.memory, o.reads, o.writes)
            if k not in best or o.cost < opts[best[k]].cost:
                best[k] = j
        keep.append(sorted(best.values()))
    return keep


def _readable(table: CostTable) -> list[set[int] | None]:
    """Per tensor, the representations every consumer can read it in (and 0 for a network
    output); None for a tensor no later layer reads."""
    reads: list[set[int] | None] = [None] * len(table.tensors)
    for i, ins in enumerate(table.reads):
        can = {o.reads for o in table.options[i]}
        for ti in ins:
            reads[ti] = can if reads[ti] is None else reads[ti] & can
    for ti, t in enumerate(table.tensors):
        if t.output:
            reads[ti] = {0} if reads[ti] is None else reads[ti] & {0}
    return reads


def solve(table: CostTable) -> tuple[Cost, tuple[int, ...]] | None:
    """The cheapest feasible assignment (an option index per layer) and its cost; None when no
    assignment is feasible."""
    n = table.n_layers
    tensors = table.tensors
    io = table.io_memory
    last = [n if t.output else max(t.consumers, default=-1) for t in tensors]
    keep = _expanded(table)
    readable = _readable(table)
    init: State = tuple(sorted((ti, io, 0, 0) for ti, t in enumerate(tensors)
                               if t.producer < 0 and last[ti] >= 0))
    frontier: dict[State, Cost] = {init: ZERO}
    back: list[dict[State, tuple[State, int]]] = []
    for i in range(n):
        nxt: dict[State, Cost] = {}
        came: dict[State, tuple[State, int]] = {}
        w = table.writes[i]
        for state, cost in frontier.items():
            live = {e[0]: e[1:] for e in state}
            for j in keep[i]:
                o = table.options[i][j]
                if last[w] > i and readable[w] is not None and o.writes not in readable[w]:
                    continue    # no consumer could read the output so written
                c = add(cost, o.cost)
                new = dict(live)
                for ti in table.reads[i]:
                    home, stored, mask = new[ti]
                    if stored != o.reads:
                        break
                    if o.memory != home and not mask >> o.memory & 1:
                        c = add(c, tensors[ti].move[home][o.memory])
                        new[ti] = (home, stored, mask | 1 << o.memory)
                else:
                    if last[w] > i:
                        new[w] = (o.memory, o.writes, 0)
                    for ti in table.reads[i]:
                        if last[ti] == i:
                            del new[ti]
                    key: State = tuple(sorted((k, *v) for k, v in new.items()))
                    if key not in nxt or c < nxt[key]:
                        nxt[key], came[key] = c, (state, j)
        back.append(came)
        frontier = nxt
    best: tuple[Cost, State] | None = None
    for state, cost in frontier.items():
        c = cost
        for ti, home, stored, mask in state:
            if stored != 0:
                break
            if home != io and not mask >> io & 1:
                c = add(c, tensors[ti].move[home][io])
        else:
            if best is None or c < best[0]:
                best = (c, state)
    if best is None:
        return None
    picks = [0] * n
    state = best[1]
    for i in range(n - 1, -1, -1):
        state, picks[i] = back[i][state]
    return best[0], tuple(picks)
