"""The `model` tiler: exact against brute force, C tiling where DORY cannot fit, errors, speed on
a whole MobileNet, and the `schedule_layer` API."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tilewise.errors import TilewiseError
from tilewise.ir.layer import LoopNest
from tilewise.schedule import TILERS, schedule_layer
from tilewise.schedule.cost import Evaluator
from tilewise.schedule.model import brute_force, candidate_orders, min_l1_bytes, tile
from tilewise.targets import get_target

from .placed import placed, seed002
from .pulp_targets import tiled


def conv(K, C, H, W, f=3, s=1, p=1, kind="conv", N=1, b=1, pads=None):
    pads = pads or (p, p, p, p)
    OY, OX = (H + pads[0] + pads[2] - f) // s + 1, (W + pads[1] + pads[3] - f) // s + 1
    return LoopNest(kind, K, C, OY, OX, f, f, s, s, pads, H, W, N, 8 * b, 8 * b, 8 * b)


def small(tname, l1, cores=None):
    t = tiled(tname)
    t = replace(t, memories=(replace(t.memory("L1"), size=l1, reserved=0),) + t.memories[1:])
    return t.with_overrides(cores=cores) if cores and any(m.scalable for m in t.modules) else t


BRUTE = [
    # (target, L1 bytes, cores, nest)
    ("gap8", 2500, 8, conv(8, 5, 6, 6)),                        # C tiled with partial sums
    ("gap8", 1400, 1, conv(7, 4, 7, 5, 3, 2, 1)),              # stride 2, tight L1
    ("gap8", 900, 8, conv(6, 3, 5, 6, 5, 1, 2)),               # 5x5, pad 2: clipped tiles
    ("gap8", 4000, 8, conv(8, 6, 6, 6, 1, 1, 0)),              # pointwise
    ("gap8", 700, 8, conv(10, 10, 7, 7, kind="dwconv")),
    ("gap8", 1000, 8, conv(12, 40, 1, 1, 1, 1, 0, kind="fc")),
    ("gap8", 600, 8, conv(12, 12, 6, 6, 2, 2, 0, kind="pool")),
    ("gap8", 2500, 8, conv(9, 9, 5, 6, 1, 1, 0, kind="add")),  # 2 kB of it the add tables
    ("gap8", 60000, 8, conv(8, 5, 6, 6)),                      # everything fits
    ("stm32h7", 1500, None, conv(6, 5, 6, 6, 3, 1, 1)),
    ("idsp", 3000, None, conv(6, 4, 5, 5, 3, 1, 0, N=2, b=2)),  # batch, spilled partial sums
]


@pytest.mark.parametrize("case", range(len(BRUTE)))
def test_exact_against_brute_force(case):
    tname, l1, cores, nest = BRUTE[case]
    t = small(tname, l1, cores)
    m = seed002(t, nest) if tname == "idsp" else placed(t, nest)
    want, _, _, _ = brute_force(nest, t, m)
    got = tile(nest, t, m)
    assert got.cycles == pytest.approx(want, rel=1e-9)
    assert got.l1_bytes <= t.memory("L1").free
    # the returned schedule is what the cost model says it is
    ev = Evaluator(nest, t, m)
    again = ev.build(got.tile_sizes, got.loop_order, got.buffering)
    assert again.cycles == got.cycles and again.l1_bytes == got.l1_bytes


@pytest.mark.parametrize("seed", range(8))
def test_random_layers_against_brute_force(seed):
    import random
    rng = random.Random(seed)
    kind = rng.choice(["conv", "conv", "dwconv", "fc", "pool", "add"])
    f = 1 if kind in ("fc", "add") else rng.choice([1, 3])
    s = 1 if kind in ("fc", "add") else rng.choice([1, 2])
    H = 1 if kind == "fc" else rng.randint(f, 7)
    W = 1 if kind == "fc" else rng.randint(f, 7)
    p = f // 2 if rng.random() < 0.6 else 0
    K = rng.randint(1, 9)
    C = rng.randint(1, 6 if kind != "fc" else 30) if kind in ("conv", "fc") else K
    nest = conv(K, C, H, W, f, s, p, kind=kind)
    t = small(rng.choice(["gap8", "stm32h7"]), rng.choice([400, 900, 2000, 6000]),
              rng.choice([1, 8]))
    m = placed(t, nest)
    want, best, _, _ = brute_force(nest, t, m)
    if not best:
        with pytest.raises(TilewiseError, match="cannot fit"):
            tile(nest, t, m)
    else:
        assert tile(nest, t, m).cycles == pytest.approx(want, rel=1e-9)


def test_c_tiling_deploys_what_full_c_tiles_cannot():
    """A 3x3 conv with C = 256: with C untiled (DORY: Ctx = Cx) even a 1x1x1 output tile needs
    the 8-core im2col (2·9·256 B per core) plus 2.3 kB of weights — more than 16 kB here. The
    model tiler splits C with 32-bit partial sums in L1 and deploys it."""
    nest = conv(32, 256, 8, 8)
    t = get_target("gap8", l1_kb=16)
    m = placed(t, nest)
    ev = Evaluator(nest, t, m)
    full_c = {d: np.array([1]) for d in ev.dims}
    full_c["c"] = np.array([256])
    assert all(ev.l1_bytes(full_c, o, 1)[0] > 16 * 1024 for o in candidate_orders(nest, m))
    s = schedule_layer(nest, t)
    assert s.psum and s.weights_tiled and s.tiling("c").count > 1
    assert s.l1_bytes <= 16 * 1024 and s.buffer("psum") is not None
    assert s.loop_order[-1] == "c"                   # partial sums never leave L1


def test_nothing_fits_names_the_minimum():
    nest = conv(64, 32, 16, 16)
    t = small("gap8", 150, 8).with_modules(("cluster",))      # not the host core, from L2
    m = placed(t, nest)
    need = min_l1_bytes(Evaluator(nest, t, m), candidate_orders(nest, m))
    with pytest.raises(TilewiseError, match=f"cannot fit: needs at least {need} bytes of L1"):
        schedule_layer(nest, t)
    s = schedule_layer(nest, small("gap8", need, 8).with_modules(("cluster",)))
    assert s.l1_bytes == need


def vww_mobilenet_v1_025() -> list[LoopNest]:
    """MLPerf Tiny VWW MobileNetV1 0.25 at 96x96 (TFLite 'same' padding), built by hand."""
    layers = [conv(8, 3, 96, 96, 3, 2, pads=(0, 0, 1, 1))]
    h, c = 48, 8
    for out, s in [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1), (128, 1),
                   (128, 1), (128, 1), (128, 1), (256, 2), (256, 1)]:
        pads = (1, 1, 1, 1) if s == 1 else (0, 0, 1, 1)
        layers.append(conv(c, c, h, h, 3, s, pads=pads, kind="dwconv"))
        h = layers[-1].OY
        layers.append(conv(out, c, h, h, 1, 1, 0))
        c = out
    layers.append(conv(c, c, 3, 3, 3, 1, 0, kind="pool"))
    layers.append(conv(2, c, 1, 1, 1, 1, 0, kind="fc"))
    return layers


def test_whole_network_schedules():
    layers = vww_mobilenet_v1_025()
    assert sum(n.kind in ("conv", "dwconv") for n in layers) == 27
    assert layers[1].OY == 48 and layers[-2].IY == 3
    t = get_target("gap8")
    scheds = [schedule_layer(n, t) for n in layers]      # (its speed is measured in bench/)
    free = t.memory("L1").free
    for n, s in zip(layers, scheds):
        assert s.l1_bytes <= free
        # compulsory traffic: every weight, input and output element at least once
        ops = {x.operand: x.bytes for x in s.traffic}
        assert ops["y"] == n.output_elems
        assert ops["x"] >= n.input_elems          # every input row and column is used here
        if n.kind in ("conv", "dwconv", "fc"):
            assert ops["w"] >= n.weight_elems
    macs = sum(n.macs for n in layers)
    cycles = sum(s.cycles for s in scheds)
    # DORY on GAP8, 0.25-MobileNetV1-128: 4.74 MAC/cycle (seed 001 Table 4)
    assert 3.5 < macs / cycles < 7


def test_schedule_layer_api(monkeypatch):
    nest = conv(32, 16, 12, 12)
    g9 = get_target("gap9")
    s = schedule_layer(nest, g9, module="cluster")
    assert s.module == "cluster" and s.level == "L1" and s.outer == "L2" and s.tiler == "model"
    # over all modules the fastest: NE16 takes a 3×3 conv of 16 input channels
    assert schedule_layer(nest, g9).module == "ne16"
    fc = schedule_layer(nest, g9, module="cpu")      # the host core computes from L2, untiled
    assert fc.untiled and fc.level == "L2" and fc.dma_bytes == 0 and fc.n_tiles == 1
    assert fc.cycles > s.cycles
    soft = schedule_layer(LoopNest("other", 10, 10, 1, 1), get_target("gap8"))
    assert soft.untiled and soft.level == "L2"
    with pytest.raises(TilewiseError, match="unknown tiler 'magic'"):
        schedule_layer(nest, g9, tiler="magic")
    with pytest.raises(TilewiseError, match="no binding of module cluster runs a gap loop nest"):
        cl = g9.module("cluster")
        no_gap = replace(cl, bindings=tuple(b for b in cl.bindings if b.key.nest_kind != "gap"))
        schedule_layer(LoopNest("gap", 8, 8, 1, 1, 4, 4, IY=4, IX=4), g9, module=no_gap)
    # the tiler hook: any "module:function" taking (nest, target, placement)
    calls = []

    def fake(n, t, p):
        calls.append(p.module.name)
        return tile(n, t, p)
    import sys
    import types
    mod = types.ModuleType("fake_tiler")
    mod.tile = fake
    monkeypatch.setitem(sys.modules, "fake_tiler", mod)
    monkeypatch.setitem(TILERS, "fake", "fake_tiler:tile")
    assert schedule_layer(nest, g9, tiler="fake").cycles == schedule_layer(nest, g9).cycles
    assert calls == ["cluster", "ne16"]              # the L2 module never reaches a tiler


@pytest.mark.parametrize("case", range(len(BRUTE)))
def test_sliced_search_is_the_same_search(case, monkeypatch):
    """With the expansion taken in slices (`_CAP`: families and values of a dimension a few at a
    time) the branch and bound finds the same optimum as in one piece."""
    from tilewise.schedule import model

    tname, l1, cores, nest = BRUTE[case]
    t = small(tname, l1, cores)
    m = seed002(t, nest) if tname == "idsp" else placed(t, nest)
    whole = tile(nest, t, m)
    monkeypatch.setattr(model, "_CAP", 3)
    sliced = tile(nest, t, m)
    assert sliced.cycles == pytest.approx(whole.cycles, rel=1e-9) and sliced.l1_bytes == whole.l1_bytes


def test_large_extents_tile_in_bounded_memory():
    """A 4,096-row GEMM of 1,024 inputs (4 MB: fits gap8's L3) once needed every tile-size
    combination of its loops at once (2.7 GB before pruning); sliced, the search stays small.
    Run in a child process with 1.5 GB of address space so that a regression fails, not swaps."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))\n"
        "from tests.test_model_tiler import conv\n"
        "from tests.placed import placed\n"
        "from tests.pulp_targets import tiled\n"
        "from tilewise.schedule.model import tile\n"
        "t = tiled('gap8'); nest = conv(10, 1024, 4096, 1, 1, 1, 0, kind='fc')\n"
        "s = tile(nest, t, placed(t, nest)); print(s.tile_sizes['c'], s.l1_bytes <= t.memory('L1').free)\n")
    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["1024", "True"], r.stdout
