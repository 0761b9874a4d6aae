"""The partition minimises Σ layer costs + Σ hand-offs over the whole network, exactly.

- the DP (partition/dp.py) equals the exhaustive oracle (partition/oracle.py: literal enumeration
  and the complete depth-first search) on random small cost tables with nonzero moves, residual
  tensors and representations, and on hand-made tables where the per-layer choice is provably
  worse;
- the partition's total equals the oracle's on the four MLPerf Tiny models on every built-in
  target with more than one module, and on gap9 variants whose NE16 exchanges tensors in another
  memory (moves priced from the memories' DMA figures), where the per-layer choice loses;
- the chosen assignment's cost as `evaluate` states it is the DP's; with no hand-off cost the
  partition is every layer's cheapest candidate (MATCH's choice, `choose`).
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from tilewise.frontend import load_model
from tilewise.partition import choose, partition, tables
from tilewise.partition.dp import solve
from tilewise.partition.handoff import move_cost, tensor_uses
from tilewise.partition.oracle import enumerate_all, oracle, search
from tilewise.partition.table import INFEASIBLE, CostTable, Option, Tensor, evaluate
from tilewise.passes import lower
from tilewise.targets.registry import get_target, list_targets

from .conftest import MLPERF, mlperf_path

MULTI = tuple(t.name for t in list_targets() if len(t.modules) > 1)


def _table(n_mem: int, options, edges, outputs, move) -> CostTable:
    """A cost table over tensors 0..n (0: the network input, i + 1: layer i's output), layer i
    reading `edges[i]`; `move(t, a, b)` the cost of copying tensor t from memory a to b."""
    n = len(options)
    consumers: dict[int, list[int]] = {}
    for i, reads in enumerate(edges):
        for t in reads:
            consumers.setdefault(t, []).append(i)
    tensors = tuple(Tensor(f"t{t}", t - 1, tuple(consumers.get(t, ())), t in outputs,
                           tuple(tuple((0.0, 0.0) if a == b else (move(t, a, b),) * 2
                                       for b in range(n_mem)) for a in range(n_mem)))
                    for t in range(n + 1))
    mems = tuple(f"M{k}" for k in range(n_mem))
    return CostTable(mems, 0, tuple(tuple(o) for o in options), tensors,
                     tuple(tuple(e) for e in edges), tuple(range(1, n + 1)))


def _opt(memory: int, cost: float, reads: int = 0, writes: int = 0, name: str = "") -> Option:
    return Option(name or f"m{memory}", "b", memory, reads, writes, (cost, cost))


def _greedy(table: CostTable) -> tuple[int, ...]:
    return tuple(min(range(len(o)), key=lambda j: o[j].cost) for o in table.options)


def _random_table(rng: random.Random) -> CostTable:
    n = rng.randint(2, 7)
    n_mem = rng.randint(1, 3)
    edges = []
    for i in range(n):
        reads = [i]
        if i >= 2 and rng.random() < 0.4:            # a residual branch from further back
            reads.append(rng.randint(0, i - 1))
        edges.append(reads)
    outputs = {n} | ({rng.randint(1, n - 1)} if n > 1 and rng.random() < 0.2 else set())
    options = []
    for _ in range(n):
        opts = [_opt(rng.randrange(n_mem), rng.randint(1, 60))]       # reads and writes int8
        for _ in range(rng.randint(0, 3)):
            opts.append(_opt(rng.randrange(n_mem), rng.randint(1, 60),
                             reads=rng.choice((0, 0, 128)), writes=rng.choice((0, 128))))
        options.append(opts)
    costs = {(t, a, b): rng.randint(1, 40) for t in range(n + 1) for a in range(n_mem)
             for b in range(n_mem)}
    return _table(n_mem, options, edges, outputs, lambda t, a, b: costs[t, a, b])


@pytest.mark.parametrize("seed", range(300))
def test_dp_equals_the_oracle_on_random_tables(seed):
    table = _random_table(random.Random(seed))
    exact = enumerate_all(table)
    dp = solve(table)
    dfs = search(table)
    if exact is None:
        assert dp is None and dfs is None
        return
    assert dp is not None and dfs is not None
    assert dp[0][0] == pytest.approx(exact[0][0]) == dfs[0][0]
    assert evaluate(table, dp[1]) == pytest.approx(dp[0])       # the assignment it returns


def test_greedy_is_worse_where_a_hand_off_costs():
    """Layer 0 is 1 cheaper on M1, but its input (the network's, in M0) must go there and its
    output come back to M0 for layer 1 (cheapest on M0), 5 each: greedy pays 9 + 10 + 5 + 5 =
    29, the optimum stays on M0: 10 + 10 = 20."""
    table = _table(2, [[_opt(0, 10), _opt(1, 9)], [_opt(0, 10), _opt(1, 12)]],
                   [[0], [1]], {2}, lambda t, a, b: 5)
    greedy = _greedy(table)
    assert greedy == (1, 0) and evaluate(table, greedy)[0] == 29
    assert solve(table) == ((20.0, 20.0), (0, 0)) and oracle(table)[0][0] == 20


def test_a_residual_tensor_is_copied_once_per_memory():
    """Tensor 1 is read by layers 1 and 2, both on M1, produced on M0: one copy (7), not two;
    the network output comes back to M0 (the io memory, 3)."""
    table = _table(2, [[_opt(0, 1)], [_opt(1, 1)], [_opt(1, 1)]], [[0], [1], [2, 1]], {3},
                   lambda t, a, b: {1: 7, 3: 3}.get(t, 100))
    assert solve(table)[0][0] == 3 + 7 + 3 == oracle(table)[0][0]


def test_representation_read_as_stored():
    """Layer 1 is cheaper reading u8 (offset 128), which layer 0 can write at no cost, but the
    residual reader layer 2 reads int8 only: u8 is only possible when both readers take it."""
    u8_producer = [_opt(0, 10), _opt(0, 10, writes=128)]
    table = _table(1, [u8_producer, [_opt(0, 10), _opt(0, 4, reads=128)], [_opt(0, 1)]],
                   [[0], [1], [2, 1]], {3}, lambda t, a, b: 0)
    assert solve(table)[0][0] == 21 == oracle(table)[0][0]          # tensor 1 stays int8
    assert evaluate(table, (1, 1, 0)) == INFEASIBLE                   # u8 read as int8
    both = _table(1, [u8_producer, [_opt(0, 10), _opt(0, 4, reads=128, writes=128)],
                      [_opt(0, 5), _opt(0, 5, reads=128)]],
                  [[0], [1], [2, 1]], {3}, lambda t, a, b: 0)
    assert solve(both) == ((19.0, 19.0), (1, 1, 1)) and oracle(both)[0][0] == 19
    # a network output is stored as its dtype
    out = _table(1, [[_opt(0, 5), _opt(0, 1, writes=128)]], [[0]], {1}, lambda t, a, b: 0)
    assert solve(out) == ((5.0, 5.0), (0,))


def test_moves_are_priced_from_the_memories():
    g9 = get_target("gap9")
    l1 = g9.memory("L1")
    cyc, pj = move_cost(g9, "L2", "L1", 4096)
    assert cyc == l1.dma_setup_cycles + l1.dma_chunk_cycles + 4096 / l1.bandwidth + \
        l1.dma_issue_cycles and pj == 4096 * l1.pj_per_byte
    two_hops = move_cost(g9, "L1", "L3", 4096)[0]
    assert two_hops == pytest.approx(cyc + move_cost(g9, "L2", "L3", 4096)[0])
    assert move_cost(g9, "L2", "L2", 4096) == (0.0, 0.0)


def _lowered(name: str):
    return lower(load_model(mlperf_path(name)))


@pytest.mark.parametrize("target", MULTI)
@pytest.mark.parametrize("model", MLPERF)
def test_partition_equals_the_oracle_on_mlperf(target, model):
    lg = _lowered(model)
    t = get_target(target)
    tab = tables(lg, t).table
    part = partition(lg, t)
    best = oracle(tab)
    assert best is not None
    assert part.score == pytest.approx(best[0][0], rel=1e-9)
    assert evaluate(tab, best[1])[0] == pytest.approx(part.score, rel=1e-9)
    # the built-in modules all exchange in L2: no copies; with every tensor int8, every layer
    # takes its cheapest int8-reading candidate (MATCH's choice), which the partition can only
    # improve on by handing tensors to NE16 as u8
    assert not part.handoffs
    int8 = sum(min(o.cost[0] for o in opts if o.reads == 0) for opts in tab.options)
    assert part.score <= int8 * (1 + 1e-12)
    if all(o.reads == 0 for opts in tab.options for o in opts):
        assert [c.placement.label for c in part.choices] == \
            [choose(layer, lg, t).placement.label for layer in lg.layers]


def _exchanging(target: str, module: str, memory: str, slow_l2: bool):
    """`target` with `module` exchanging tensors in `memory` (and a slow L2↔L3 DMA)."""
    t = get_target(target)
    if slow_l2:
        t = replace(t, memories=tuple(replace(m, bandwidth_mb_s=10.0) if m.name == "L2" else m
                                      for m in t.memories))
    return replace(t, modules=tuple(replace(m, exchange=memory) if m.name == module else m
                                    for m in t.modules))


@pytest.mark.parametrize("model", MLPERF)
@pytest.mark.parametrize("memory", ["L1", "L3"])
def test_partition_equals_the_oracle_with_hand_offs(model, memory):
    """gap9 with NE16 exchanging in L1 or (behind a slow DMA) L3: moves cost, the DP still equals
    the complete search, and where the per-layer choice pays for moves the DP avoids them."""
    lg = _lowered(model)
    t = _exchanging("gap9", "ne16", memory, slow_l2=memory == "L3")
    tab = tables(lg, t).table
    part = partition(lg, t)
    best = search(tab)
    assert best is not None and part.score == pytest.approx(best[0][0], rel=1e-9)
    greedy = evaluate(tab, _greedy(tab))[0]
    assert part.score <= greedy * (1 + 1e-12)
    on_ne16 = any(c.placement.module.name == "ne16" for c in part.choices)
    if on_ne16:
        assert part.handoffs and part.handoff_cycles > 0
        assert all({h.src, h.dst} <= {"L2", memory} for h in part.handoffs)
    if memory == "L3" and model != "ad_autoencoder":      # (no NE16 layer there)
        assert part.score < greedy * 0.95, "the case must make the per-layer choice lose"


def test_tensor_uses_of_a_residual_network():
    lg = _lowered("ic_resnet8")
    uses = {u.name: u for u in tensor_uses(lg)}
    assert uses[lg.inputs[0]].producer == -1 and uses[lg.outputs[0]].output
    assert max(len(u.consumers) for u in uses.values()) == 2      # the residual branches
    for i, layer in enumerate(lg.layers):
        assert uses[layer.output].producer == i
        assert all(i in uses[x].consumers for x in layer.inputs)
