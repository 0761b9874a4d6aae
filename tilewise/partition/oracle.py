"""The exhaustive oracle of the partition (for tests): every assignment of options to the layers.

It minimises the same network cost as the DP (partition/table.py `evaluate`: Σ layer costs +
Σ moves, feasible representations) without its state argument, so a test that finds both equal
checks the DP's exactness:
- literal enumeration (`itertools.product` over every layer's options, each assignment priced by
  `evaluate`) when there are at most `limit` assignments;
- otherwise a complete depth-first search over the layers in execution order, every option of
  every layer, cheapest first, pricing moves as consumers are placed and pruned only by a bound
  that cannot cut an optimum, and only when that bound is not below the best assignment found (a
  branch that can at most tie it is cut, so the value is the optimum; the assignment returned is
  one optimum). The bound is the cost so far plus the optimum of a relaxation of the remaining
  layers (`_chain_bound`): every option's own cost, and of the moves only those between a layer
  and the next one in execution order when that next layer is the sole consumer of the tensor
  (such a move is paid exactly when their memories differ; every other move costs ≥ 0 and is
  dropped), with representations that cannot be read on that edge excluded (an infeasible
  representation only removes assignments). The search starts from the cost of one feasible
  assignment — every layer's cheapest option that reads and writes the plain representation.
"""

from __future__ import annotations

import itertools

from .table import INFEASIBLE, ZERO, Cost, CostTable, add, evaluate

#: enumerate literally up to this many assignments
LIMIT = 50_000


def enumerate_all(table: CostTable) -> tuple[Cost, tuple[int, ...]] | None:
    """The minimum of `evaluate` over every assignment (itertools.product)."""
    best: tuple[Cost, tuple[int, ...]] | None = None
    for picks in itertools.product(*(range(len(o)) for o in table.options)):
        c = evaluate(table, picks)
        if c != INFEASIBLE and (best is None or c < best[0]):
            best = (c, picks)
    return best


def _chain_bound(table: CostTable) -> list[list[float]]:
    """bound[i][p]: a lower bound on the cost (first component) of layers i… when layer i−1 took
    option p (bound[0][0]: from the start; module docstring). Backward over the layers:
    at[i][j] = cost of option j + min over the next layer's options j' of edge(j, j') + at[i+1][j'],
    where edge is the move of layer i's output into j's memory when layer i+1 is its only
    consumer and it is no network output (∞ when j' cannot read the representation j writes), and
    0 otherwise."""
    n = table.n_layers
    inf = float("inf")
    at: list[list[float]] = [[] for _ in range(n)]
    bound: list[list[float]] = [[] for _ in range(n)]

    def edge(i: int, j: int, k: int) -> float:
        """layer i option j → layer i+1 option k."""
        if i < 0 or i + 1 >= n:
            return 0.0
        w = table.writes[i]
        if w not in table.reads[i + 1]:
            return 0.0
        o, q = table.options[i][j], table.options[i + 1][k]
        if q.reads != o.writes:
            return inf
        t = table.tensors[w]
        if t.consumers != (i + 1,) or t.output:
            return 0.0
        return t.move[o.memory][q.memory][0] if o.memory != q.memory else 0.0

    for i in range(n - 1, -1, -1):
        nxt = at[i + 1] if i + 1 < n else None          # (the last layer: no next edge)
        row = []
        for j, o in enumerate(table.options[i]):
            tail = 0.0 if nxt is None else min(
                (edge(i, j, k) + nxt[k] for k in range(len(nxt))), default=inf)
            row.append(o.cost[0] + tail)
        at[i] = row
        prev = range(len(table.options[i - 1])) if i > 0 else range(1)
        bound[i] = [min((edge(i - 1, p, j) + row[j] for j in range(len(row))), default=inf)
                    if i > 0 else min(row, default=inf) for p in prev]
    return bound


def search(table: CostTable) -> tuple[Cost, tuple[int, ...]] | None:
    """The minimum by complete depth-first search with the admissible bound (module doc)."""
    n = table.n_layers
    tensors = table.tensors
    io = table.io_memory
    lower = _chain_bound(table)
    order = [sorted(range(len(opts)), key=lambda j, opts=opts: opts[j].cost)
             for opts in table.options]
    home = [io if t.producer < 0 else -1 for t in tensors]
    stored = [0] * len(tensors)
    copies: list[set[int]] = [set() for _ in tensors]
    picks = [0] * n
    best: list = [INFEASIBLE, None]
    plain = []
    for opts, ord_ in zip(table.options, order):
        js = [j for j in ord_ if opts[j].reads == 0 and opts[j].writes == 0]
        if not js:
            break
        plain.append(js[0])
    if len(plain) == n:
        c0 = evaluate(table, tuple(plain))
        if c0 != INFEASIBLE:
            best[0], best[1] = c0, tuple(plain)

    def finish(cost: Cost) -> None:
        for ti, t in enumerate(tensors):
            if not t.output:
                continue
            if stored[ti] != 0:
                return
            if home[ti] != io and io not in copies[ti]:
                cost = add(cost, t.move[home[ti]][io])
        if cost < best[0]:
            best[0], best[1] = cost, tuple(picks)

    def visit(i: int, cost: Cost) -> None:
        if i == n:
            finish(cost)
            return
        if best[1] is not None and cost[0] + lower[i][picks[i - 1] if i else 0] >= best[0][0]:
            return
        for j in order[i]:
            o = table.options[i][j]
            c = add(cost, o.cost)
            added = []
            ok = True
            for ti in table.reads[i]:
                if stored[ti] != o.reads:
                    ok = False
                    break
                if o.memory != home[ti] and o.memory not in copies[ti]:
                    c = add(c, tensors[ti].move[home[ti]][o.memory])
                    copies[ti].add(o.memory)
                    added.append(ti)
            if ok:
                w = table.writes[i]
                saved = (home[w], stored[w], copies[w])
                home[w], stored[w], copies[w] = o.memory, o.writes, set()
                picks[i] = j
                visit(i + 1, c)
                home[w], stored[w], copies[w] = saved
            for ti in added:
                copies[ti].discard(o.memory)

    visit(0, ZERO)
    return None if best[1] is None else (best[0], best[1])


def oracle(table: CostTable, limit: int = LIMIT) -> tuple[Cost, tuple[int, ...]] | None:
    """The optimum of `table`: literal enumeration when small, complete search otherwise."""
    return enumerate_all(table) if table.size() <= limit else search(table)
