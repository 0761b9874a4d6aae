"""Fused chains (schedule/chain.py, codegen/chain_c.py): two layers run row band by row band on
stm32h7, the tensor between them never in memory, and network inputs held in the arena with a
layer written over them (memory/network.py `inputs_in_arena`).

- the band geometry: vww's expanding 1x1 (8 → 16, 48x48) into its stride-2 depthwise — a ring of
  3 rows (2,304 B), one row carried over per band, the output over the input at lag 0; a
  stride-1 consumer carries two rows;
- a small MobileNet-like network (3x3 conv, 1x1 expand 8 → 32, depthwise s2, 1x1 project): the
  cost model fuses the expand with the depthwise (its ring within the 1.10x budget), the plan's
  peak falls below the unfused plan's, the generated C is bit-exact on the host and in the
  instruction counter (the Cortex-M7 firmware), whose ELF holds exactly the planned arenas,
  with counted instructions within 1.10x of the unfused schedule's and the chain's prediction
  against its measurement within a band;
- the control: the same chain with its output placed four rows above its input (band 0 then
  writes input rows later bands read) is not bit-exact — the placement is what keeps it exact;
- N members: that block's four layers as one chain (three rings), and a residual block (3x3
  conv → 3x3 conv → add of the block's input, as ic_resnet8's) as one chain whose add writes
  over its skip, bit-exact on the host and on the counter with the ELF's arenas the plan's;
  controls: the rings over one another, the add's tables in the convs' L1 scratch;
- a branch: a stride-2 residual block whose shortcut is a 1x1 stride-2 convolution of the
  block's input (ic_resnet8's second and third stages) as one chain — the 3x3 s2 and the 1x1 s2
  both read the chain's input band by band, the add reads the 3x3's ring and the branch's —
  bit-exact on the host and on the counter, the ELF's arenas the plan's; control: the branch's
  ring over the main path's last ring.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilewise.frontend import load_model
from tilewise.ir.layer import LoopNest
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.schedule import chain
from tilewise.targets.registry import get_target

from .test_in_place import ACT, _conv, _dw
from .test_qemu import _holds_ram_prediction
from .tflite_builder import ModelBuilder

VWW_PROD = LoopNest("conv", 16, 8, 48, 48, 1, 1, 1, 1, (0, 0, 0, 0), 48, 48)
VWW_CONS = LoopNest("dwconv", 16, 16, 24, 24, 3, 3, 2, 2, (0, 0, 1, 1), 48, 48)


def test_bands_ring_and_lag_of_vwws_first_stage():
    bs = chain.bands([VWW_PROD, VWW_CONS], 1)
    assert len(bs) == 24 and chain.ring_rows(bs) == 3
    assert (bs[0].lo, bs[0].hi, bs[0].new_lo) == (0, 3, 0)
    assert (bs[1].lo, bs[1].hi, bs[1].new_lo) == (2, 5, 3)     # row 2 kept, rows 3-4 new
    assert (bs[-1].lo, bs[-1].hi) == (46, 48)                  # the bottom pad row synthesized
    assert chain.copied_rows(bs) == [0] + [1] * 23
    assert chain.chain_lag([VWW_PROD, VWW_CONS], bs) == 0
    s1 = LoopNest("dwconv", 16, 16, 48, 48, 3, 3, 1, 1, (1, 1, 1, 1), 48, 48)
    bs1 = chain.bands([VWW_PROD, s1], 1)
    assert chain.ring_rows(bs1) == 3 and chain.copied_rows(bs1)[2:] == [2] * 46
    # every producer row computed exactly once, in order
    rows = [r for b in bs1 for r in range(b.new_lo, b.hi)]
    assert rows == list(range(48))


def test_price_counts_one_call_of_each_kernel_per_band():
    calls: list[tuple[str, int]] = []

    def cyc(tag):
        return lambda n, first: calls.append((tag, n.OY)) or 100.0 + n.OY

    bs = chain.bands([VWW_PROD, VWW_CONS], 2)
    (p, c), copy, nbytes = chain.price([VWW_PROD, VWW_CONS], bs, [cyc("p"), cyc("c")], lambda n: 10.0)
    assert sum(1 for t, _ in calls if t == "p") == len(bs) == 12
    assert sum(n for t, n in calls if t == "p") == 48 and sum(n for t, n in calls if t == "c") == 24
    assert p == 12 * 100 + 48 and c == 12 * 100 + 24 and copy == 11 * 10.0
    assert nbytes == 11 * 48 * 16


def expand_block(path):
    """conv 3x3 (4 → 8) → 1x1 expand (8 → 32) → depthwise s2 → 1x1 project (32 → 8): 16x16."""
    r, b = np.random.RandomState(5), ModelBuilder()
    x = b.input("x", (1, 16, 16, 4), "int8", scale=0.05, zero_point=-3)
    h = _conv(b, r, x, 4, 8, 3, (16, 16), "c0")
    h = _conv(b, r, h, 8, 32, 1, (16, 16), "p1")
    h = _dw(b, r, h, 32, (8, 8), "d2", stride=2)
    b.output(_conv(b, r, h, 32, 8, 1, (8, 8), "p3"))
    return b.save(path)


@pytest.fixture()
def block(tmp_path):
    path = expand_block(tmp_path / "expand.tflite")
    return path, load_model(str(path))


def _validate(path, graph, tmp_path, on="host", chains=True):
    from tilewise.validate import validate_model

    ns = schedule_network(lower(graph), get_target("stm32h7"), "model", chains=chains)
    n = 2 if on == "host" else 1
    return ns, validate_model(path, ns, graph, n, 0, tmp_path / f"p_{on}_{chains}", on=on).to_json()


def _chained(graph):
    """The network on stm32h7, its schedule with chains and without, and its one chain."""
    lg = lower(graph)
    ns = schedule_network(lg, get_target("stm32h7"), "model")
    unfused = schedule_network(lg, get_target("stm32h7"), "model", chains=False)
    (ch,) = ns.chains
    return lg, ns, unfused, ch


def test_the_block_fuses_into_one_chain_below_the_unfused_peak_bit_exact(block, tmp_path):
    """All four layers in one chain: three rings (the 3x3 conv's output for the 1x1 expand, the
    expand's for the stride-2 depthwise, the depthwise's for the project)."""
    path, graph = block
    lg, ns, unfused, ch = _chained(graph)
    assert ch.layers == ("op0_conv_2d", "op1_conv_2d", "op2_depthwise_conv_2d", "op3_conv_2d"), ch
    assert ch.rings == tuple(r * w for r, w in zip(ch.ring_rows, (16 * 8, 16 * 32, 8 * 32))), ch
    assert ch.ring_rows[1] < 16 and ch.cycles <= chain.BUDGET * ch.unfused_cycles
    assert ns.memory.peak < unfused.memory.peak
    for k in range(3):
        assert f"act:{lg.layers[k].output}" not in ns.memory.plan.offsets   # never in memory
    assert "tmp:op0_conv_2d" in ns.memory.plan.offsets          # the rings
    _, r = _validate(path, graph, tmp_path)
    assert r["bit_exact"], r["mismatches"][:3]


def test_the_chain_placed_over_input_it_still_reads_is_not_exact(block, tmp_path, monkeypatch):
    """The control: the pair (expand → depthwise) alone, its output four of its rows above its
    input."""
    from tilewise import pipeline

    pairs = pipeline.candidates
    monkeypatch.setattr(pipeline, "candidates",
                        lambda lg, ok: [(i, j) for i, j in pairs(lg, ok) if j - i == 2])
    monkeypatch.setattr(chain, "chain_lag",
                        lambda ns, bs, align=4, branch=None: -4 * ns[-1].OX * ns[-1].K)
    path, graph = block
    ns, r = _validate(path, graph, tmp_path)
    assert ns.chains and ns.chains[0].lag < 0
    assert not r["bit_exact"]


def test_the_rings_over_one_another_are_not_exact(block, tmp_path, monkeypatch):
    """The control of the N-layer chain: its three rings all at the scratch's start."""
    from tilewise.codegen import chain_c

    monkeypatch.setattr(chain_c, "ring_offsets", lambda rings: (0,) * len(rings))
    path, graph = block
    ns, r = _validate(path, graph, tmp_path)
    assert len(ns.chains[0].layers) == 4
    assert not r["bit_exact"]


def test_the_chain_on_the_instruction_counter(block, tmp_path):
    """The Cortex-M7 firmware (unicorn's instruction counter): bit-exact, the ELF's arenas the
    plan's, the counted instructions within 1.10x of the unfused schedule's, and the chain's
    (counted at its consumer's step) within ±25% of its two layers' prediction in
    instructions."""
    from tilewise.validate.instructions import predicted_instructions

    path, graph = block
    ns, r = _validate(path, graph, tmp_path, "count")
    _, base = _validate(path, graph, tmp_path, "count", chains=False)
    assert r["bit_exact"] and base["bit_exact"], (r["mismatches"][:3], base["mismatches"][:3])
    _holds_ram_prediction(r["ram"])     # the ELF's arenas and I/O = the plan's
    m = r["ram"]["measured"]
    assert m["l2_arena_bytes"] == ns.memory.peak
    assert m["input_bytes"] == 0 if ns.memory.inputs_in_arena else m["input_bytes"] > 0
    assert r["measured_instructions"] <= 1.10 * base["measured_instructions"], \
        (r["measured_instructions"], base["measured_instructions"])
    per = {lc["index"]: lc["measured_instructions"] for lc in r["layers"]}
    inst = predicted_instructions(ns)
    assert inst is not None
    # the chain's call is counted at its last member's step, the others' steps run nothing
    assert per[0] == per[1] == per[2] == 0 and per[3] > 0, per
    assert 0.75 <= per[3] / sum(inst.layers[:4]) <= 1.25, (per, inst.layers)


def residual_block(path, stride=1):
    """conv 3x3 (8 → 16) → [conv 3x3 → conv 3x3 → add of the first conv's output] → 1x1: 16x16;
    with stride 2 the block's first conv is stride 2 (16 → 32) and the add's other input the
    first conv's output through a 1x1 stride-2 conv (16 → 32) after them: 8x8 out."""
    r, b = np.random.RandomState(7 if stride == 1 else 11), ModelBuilder()
    k, hw = 16 * stride, (16 // stride, 16 // stride)
    x = b.input("x", (1, 16, 16, 8), "int8", scale=0.05, zero_point=-3)
    s = _conv(b, r, x, 8, 16, 3, (16, 16), "c0")
    h = _conv(b, r, s, 16, k, 3, hw, "c1", stride=stride)
    h = _conv(b, r, h, k, k, 3, hw, "c2")
    skip = s if stride == 1 else _conv(b, r, s, 16, k, 1, hw, "c3", stride=2)
    a = b.tensor("a", (1, *hw, k), "int8", scale=0.07, zero_point=-1)
    b.op("ADD", [skip, h], [a], "AddOptions", FusedActivationFunction=ACT["RELU"])
    b.output(_conv(b, r, a, k, 8, 1, hw, "p4"))
    return b.save(path)


@pytest.fixture()
def resblock(tmp_path):
    path = residual_block(tmp_path / "res.tflite")
    return path, load_model(str(path))


def test_the_residual_block_is_one_chain_bit_exact_on_the_counter(resblock, tmp_path):
    """conv → conv → add as one chain: the skip (the chain's input) live through it, the add's
    output over it; below the unfused peak, bit-exact on the host and on the counter, the
    ELF's arenas the plan's (the L1 arena holding the add's tables beside the convs' scratch)."""
    path, graph = resblock
    lg, ns, unfused, ch = _chained(graph)
    assert ch.layers == ("op1_conv_2d", "op2_conv_2d", "op3_add"), ch
    assert ch.l1_offsets[2] >= ns.schedules[1].l1_bytes and ns.l1_bytes >= ch.l1_bytes, ch
    assert ns.memory.peak < unfused.memory.peak
    assert ch.cycles <= chain.BUDGET * ch.unfused_cycles
    _, r = _validate(path, graph, tmp_path)
    assert r["bit_exact"], r["mismatches"][:3]
    _, c = _validate(path, graph, tmp_path, "count")
    assert c["bit_exact"], c["mismatches"][:3]
    _holds_ram_prediction(c["ram"])
    m = c["ram"]["measured"]
    assert m["l2_arena_bytes"] == ns.memory.peak and m["l1_arena_bytes"] == ns.l1_bytes, m


def test_the_adds_tables_in_the_convs_scratch_are_not_exact(resblock, tmp_path, monkeypatch):
    """The control: every member's L1 scratch at offset 0 (the convs' im2col over the add's
    tables, which its first band call built for the later ones)."""
    from tilewise import pipeline

    monkeypatch.setattr(pipeline, "l1_layout", lambda l1, kept: ((0,) * len(l1), max(l1)))
    path, graph = resblock
    ns, r = _validate(path, graph, tmp_path)
    assert len(ns.chains[0].layers) == 3
    assert not r["bit_exact"]


@pytest.fixture()
def s2block(tmp_path):
    path = residual_block(tmp_path / "s2.tflite", stride=2)
    return path, load_model(str(path))


def test_the_stride2_block_with_its_shortcut_conv_is_one_chain(s2block, tmp_path):
    """3x3 s2 → 3x3 → add ← 1x1 s2 (the branch) as one chain: its rings the two main path
    tensors' and the branch's band; below the unfused peak, bit-exact on the host and on the
    counter, the ELF's arenas the plan's, counted instructions within 1.10x of the unfused
    schedule's and the chain's count within ±25% of its members' prediction."""
    from tilewise.validate.instructions import predicted_instructions

    path, graph = s2block
    lg, ns, unfused, ch = _chained(graph)
    assert ch.layers == ("op1_conv_2d", "op2_conv_2d", "op3_conv_2d", "op4_add"), ch
    assert ch.branch == 2 and ch.main == (0, 1, 3), ch
    assert ch.rings[-1] == ch.band * 8 * 32 and ch.ring_rows[-1] == ch.band, ch
    assert ns.memory.peak < unfused.memory.peak
    assert ch.cycles <= chain.BUDGET * ch.unfused_cycles
    for k in range(1, 4):
        assert f"act:{lg.layers[k].output}" not in ns.memory.plan.offsets   # never in memory
    _, r = _validate(path, graph, tmp_path)
    assert r["bit_exact"], r["mismatches"][:3]
    _, c = _validate(path, graph, tmp_path, "count")
    _, base = _validate(path, graph, tmp_path, "count", chains=False)
    assert c["bit_exact"] and base["bit_exact"], (c["mismatches"][:3], base["mismatches"][:3])
    _holds_ram_prediction(c["ram"])
    m = c["ram"]["measured"]
    assert m["l2_arena_bytes"] == ns.memory.peak and m["l1_arena_bytes"] == ns.l1_bytes, m
    assert c["measured_instructions"] <= 1.10 * base["measured_instructions"], \
        (c["measured_instructions"], base["measured_instructions"])
    per = {lc["index"]: lc["measured_instructions"] for lc in c["layers"]}
    inst = predicted_instructions(ns)
    assert inst is not None
    assert per[1] == per[2] == per[3] == 0 and per[4] > 0, per
    assert 0.75 <= per[4] / sum(inst.layers[1:5]) <= 1.25, (per, inst.layers)


def test_the_branchs_ring_over_the_last_ring_is_not_exact(s2block, tmp_path, monkeypatch):
    """The control: the branch's ring at the main path's last ring's offset (the add then reads
    one tensor's rows for both inputs)."""
    from tilewise.codegen import chain_c

    real = chain_c.ring_offsets
    monkeypatch.setattr(chain_c, "ring_offsets", lambda rings: (*real(rings)[:-1], real(rings)[-2]))
    path, graph = s2block
    ns, r = _validate(path, graph, tmp_path)
    assert ns.chains[0].branch is not None
    assert not r["bit_exact"]
