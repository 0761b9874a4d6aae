"""The exhaustive oracle of the partition (for tests): every assignment of options to the layers.

It minimises the same network cost as the DP (partition/table.py `evaluate`: Σ layer costs +
Σ moves, feasible representations) without its state argument, so a test that finds both equal
checks the DP's exactness:
- literal enumeration (`itertools.product` over every layer's options, each assignment priced by
  `evaluate`) when there are at most `limit` assignments;
- otherwise a complete depth-first search over the layers in execution order, every option of
  every layer, cheapest first, pricing moves as consumers are placed and pruned only by a bound
  that cannot cut an optimum: the cost so far plus the cheapest option of every remaining layer
  (moves cost ≥ 0 and an infeasible representation only removes assignments), and only when that
  bound is not below the best assignment found (a branch that can at most tie it is cut, so the
  value is the optimum; the assignment returned is one optimum).
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


def search(table: CostTable) -> tuple[Cost, tuple[int, ...]] | None:
    """The minimum by complete depth-first search with the admissible bound (module doc)."""
    n = table.n_layers
    tensors = table.tensors
    io = table.io_memory
    cheapest = [min((o.cost for o in opts), default=ZERO) for opts in table.options]
    rest = [ZERO] * (n + 1)
    for i in range(n - 1, -1, -1):
        rest[i] = add(rest[i + 1], cheapest[i])
    order = [sorted(range(len(opts)), key=lambda j, opts=opts: opts[j].cost)
             for opts in table.options]
    home = [io if t.producer < 0 else -1 for t in tensors]
    stored = [0] * len(tensors)
    copies: list[set[int]] = [set() for _ in tensors]
    picks = [0] * n
    best: list = [INFEASIBLE, None]

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
        if add(cost, rest[i])[0] >= best[0][0] and best[1] is not None:
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
