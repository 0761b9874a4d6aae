"""Generated C for layers tiled at L3 -> L2 (codegen/l3_c.py, schedule/l3.py l2_tiles,
schedule/tiled.py TiledLayer, memory/l3.py): MLPerf Tiny models at L2 sizes that leave
activations in L3 run bit-exact with the golden model and LiteRT with both tilers, L2<->L1 DMA and
L3 traffic measured by the host HAL equal to the prediction; hand-built conv layers whose weights
stream from L3 by output-channel tiles (border k tile, padded row tiles, the next layer reading
its input rows back from L3); every L2 tile geometry scheduled and summed in analyze; a removed
L3 wait is caught; the PULP variant compiles against the PMSIS stub."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tilewise.codegen import generate, load_project
from tilewise.frontend import load_model
from tilewise.ir.graph import Graph, Node
from tilewise.ir.ops import Op
from tilewise.ir.params import MaxPoolParams
from tilewise.ir.tensor import Tensor
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.report.schedule_report import scheduled_rows, scheduled_totals
from tilewise.targets.registry import get_target
from tilewise.validate import check_project, golden_outputs, make_inputs, new_report, validate_model, validate_network
from tilewise.validate.build import compile_pulp

from .codegen_cases import LayerSpec, _q, _weighted, c_cache  # noqa: F401 (fixture)
from .conftest import REPO, mlperf_path

PMSIS_STUB = REPO / "tests" / "pmsis_stub"


def _check_measured(r: dict, ns) -> None:
    assert r["bit_exact"], r
    assert r["dma_bytes_measured"] == r["dma_bytes_predicted"] == scheduled_totals(ns)["dma_bytes"]
    assert r["dma_transfers_measured"] == r["dma_transfers_predicted"]
    assert r["dma_chunks_measured"] == r["dma_chunks_predicted"]
    assert r["l3_bytes_measured"] == r["l3_bytes_predicted"] > 0
    assert r["l3_transfers_measured"] == r["l3_transfers_predicted"] > 0
    assert r["hal"]["races"] == r["hal"]["bad_waits"] == r["hal"]["pending"] == 0


@pytest.mark.parametrize("name,l2_kb,tiler", [
    ("ic_resnet8", 32, "model"), ("ic_resnet8", 32, "dory"),
    ("ic_resnet8", 16, "model"), ("ic_resnet8", 16, "dory"), ("kws_dscnn", 16, "model")])
def test_mlperf_with_activations_in_l3_bit_exact_with_litert(name, l2_kb, tiler, tmp_path, c_cache):
    path = mlperf_path(name)
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("gap8", l2_kb=l2_kb), tiler)
    tilings = ns.l3.tilings.values()
    # the L2 size leaves activations in L3: outputs written back by row tiles, inputs read back
    assert ns.memory.l3_tensors and ns.l3_plan.bytes > 0
    assert any(t.y_in_l3 for t in tilings) and any(t.x_in_l3 for t in tilings)
    assert any(len(tl.schedules) > 1 for tl in ns.l3_tiles.values())   # border geometries
    report = validate_model(path, ns, graph, n_random=3, seed=l2_kb, out_dir=tmp_path / "p",
                            cache=c_cache)
    r = report.to_json()
    assert r["reference"] == "LiteRT BUILTIN_REF" and r["golden_vs_reference"] == 0
    _check_measured(r, ns)
    # the L3 traffic is the L3 tiler's (row tiles, k tiles) plus the weights streamed whole
    p = tmp_path / "p"
    assert r["l3_bytes_predicted"] == ns.l3_bytes + sum(
        int(m) for m in re.findall(r"tw_l3_read\(L2 \+ \d+, L3 \+ \d+, (\d+)\)",
                                   (p / "network.c").read_text()))
    # the L3 image: streamed constants, then the activation region of the L3 plan
    assert (p / "weights_l3.bin").stat().st_size == load_project(p).manifest["l3_bytes"] >= \
        ns.l3_plan.bytes


def _conv_pool(spec: LayerSpec, seed: int):
    """x -> conv (spec) -> 2x2 max pool: the conv's output may be left in L3 for the pool."""
    rng = np.random.default_rng(seed)
    x = Tensor("x", (1, spec.h, spec.w, spec.c), "int8", _q(0.04, 5))
    node, ts = _weighted(spec, rng, "x", x, 5, "d")
    oy, ox = spec.out_hw
    ts["y"] = Tensor("y", (1, oy // 2, ox // 2, spec.k), "int8", ts["d"].quant)
    pool = Node("y", Op.MAX_POOL, ("d",), ("y",), MaxPoolParams(
        kernel=(2, 2), stride=(2, 2), pads=(0, 0, 0, 0), qmin=-128, qmax=127))
    return lower(Graph("conv_pool", {"x": x, **ts}, (node, pool), ("x",), ("y",)))


CONV = LayerSpec("conv", c=48, k=62, h=12, w=12, fy=3, fx=3, pads=(1, 1, 1, 1))


@pytest.mark.parametrize("l2_kb,strategy,stage", [(32, "cascade", "w"), (16, "cascade", "wy"),
                                                  (16, "search", "wy")])
def test_weights_k_tiled_from_l3(l2_kb, strategy, stage, tmp_path, c_cache):
    lg = _conv_pool(CONV, 7)
    ns = schedule_network(lg, get_target("gap8", l2_kb=l2_kb), "model", l3_strategy=strategy)
    t = ns.l3.tilings["d"]
    tl = ns.l3_tiles["d"]
    assert t.stage == stage and t.w_tiled and 62 % t.k_tile != 0   # a border k tile
    assert "d" in ns.memory.weights_in_l3
    # every L2 tile the code runs, and one schedule per distinct geometry
    assert [(x.k0, x.k) for x in tl.tiles if x.i_h == 0] == [
        (k0, min(t.k_tile, 62 - k0)) for k0 in range(0, 62, t.k_tile)]
    assert len(tl.schedules) == len({x.nest for x in tl.tiles})
    if stage == "wy":
        first, last = tl.tiles[0].nest, tl.tiles[-1].nest
        assert first.pads[0] == 1 and first.pads[2] == 0 and last.pads[2] == 1
        assert t.y_in_l3 and ns.l3.tilings["y"].x_in_l3
    cycles = sum(tl.schedule_of(j).cycles for j in range(len(tl.tiles))) + t.l3_cycles
    assert ns.layer_cycles(0) == pytest.approx(cycles)
    row = scheduled_rows(ns)[0]
    assert row.dma_bytes == ns.layer_dma(0).bytes and row.l3["tiles"] == len(tl.tiles)
    xs = make_inputs(lg, 4, seed=l2_kb)
    report, p = validate_network(ns, tmp_path / "p", xs, cache=c_cache)
    r = report.to_json()
    _check_measured(r, ns)
    text = (p.path / "layers" / "layer_00.c").read_text()
    assert "tw_l3_read" in text and ("tw_l3_write" in text) == t.y_in_l3
    assert len(list((p.path / "layers").glob("layer_00_g*.c"))) == len(tl.schedules)


def test_removing_an_l3_wait_is_caught(tmp_path, c_cache):
    lg = _conv_pool(CONV, 8)
    ns = schedule_network(lg, get_target("gap8", l2_kb=16), "model")
    p = generate(ns, tmp_path / "p")
    f = p.path / "layers" / "layer_01.c"   # the pool reads its input rows back from L3
    text = f.read_text()
    line = re.search(r"\n[^\n]*if \(c->new_row\) tw_l3_wait\(x_id\[0\]\[x_cur\]\);", text)
    assert line is not None
    f.write_text(text[:line.start()] + text[line.end():])
    xs = make_inputs(lg, 2)
    report = new_report(ns, p, "conv_pool (tampered)", len(xs), None)
    # (x_id is then set but never read: let that one warning through -Werror)
    check_project(report, p, lg, xs, golden_outputs(lg, xs), cache=c_cache,
                  extra_flags=("-Wno-error=unused-but-set-variable",))
    assert not report.bit_exact
    kinds = {m.kind for m in report.mismatches}
    assert "hal" in kinds and report.hal["pending"] > 0, report.mismatches


def test_pulp_variant_with_l3_tiling_compiles(tmp_path):
    ns = schedule_network(_conv_pool(CONV, 9), get_target("gap8", l2_kb=16), "model")
    objs = compile_pulp(generate(ns, tmp_path / "p"), PMSIS_STUB, tmp_path / "o")
    names = {o.name for o in objs}
    assert "tw_hal_tw_hal_pulp_l3.o" in names and "layers_layer_00_g0.o" in names


def test_l3_activation_plan_shares_bytes_between_disjoint_lifetimes():
    ns = schedule_network(lower(load_model(mlperf_path("ic_resnet8"))), get_target("gap8", l2_kb=16),
                          "model")
    plan = ns.l3_plan.plan
    assert plan is not None and set(ns.l3_plan.offsets) == set(ns.memory.l3_tensors)
    bufs = plan.buffers
    for a in bufs:
        for b in bufs:
            if a is not b and a.first <= b.last and b.first <= a.last:   # live together
                oa, ob = plan.offsets[a.name], plan.offsets[b.name]
                assert oa + a.size <= ob or ob + b.size <= oa
    assert ns.l3_plan.bytes < sum(b.size for b in bufs)
    assert scheduled_totals(ns)["l3_activation_bytes"] == ns.l3_plan.bytes


def _two_convs(spec: LayerSpec, seed: int):
    """x -> layer (spec) -> 3x3 conv to 8 channels: the first layer's output may stay in L3."""
    rng = np.random.default_rng(seed)
    x = Tensor("x", (1, spec.h, spec.w, spec.c), "int8", _q(0.04, 5))
    node, ts = _weighted(spec, rng, "x", x, 5, "d")
    d = ts["d"]
    oy, ox = spec.out_hw
    n2, t2 = _weighted(LayerSpec("conv", c=d.shape[-1], k=8, h=oy, w=ox, fy=3, fx=3,
                                 pads=(1, 1, 1, 1)), rng, "d", d, d.quant.zp, "y")
    return lower(Graph("two_convs", {"x": x, **ts, **t2}, (node, n2), ("x",), ("y",)))


@pytest.mark.parametrize("spec,l2_kb,strategy,tiler,stage", [
    # depthwise k tiles: the input tile is a channel slice of the wider L2 input (X_CH)
    (LayerSpec("dwconv", c=32, k=32, h=16, w=7, fy=5, fx=5, sy=2, sx=2), 4, "search", "dory", "wy"),
    # stride 2, padding only at the bottom: the last row tile synthesizes it
    (LayerSpec("conv", c=16, k=64, h=23, w=17, fy=3, fx=3, sy=2, sx=2, pads=(0, 0, 1, 1)), 12,
     "search", "dory", "wy"),
    (LayerSpec("dwconv", c=8, k=8, h=17, w=20, fy=5, fx=5, pads=(1, 1, 2, 2)), 4, "cascade",
     "dory", "y"),
    (LayerSpec("conv", c=8, k=62, h=23, w=10), 12, "cascade", "model", "y"),
])
def test_row_and_channel_tiles_of_varied_layers(spec, l2_kb, strategy, tiler, stage, tmp_path,
                                                c_cache):
    lg = _two_convs(spec, 3)
    ns = schedule_network(lg, get_target("gap8", l2_kb=l2_kb), tiler, l3_strategy=strategy)
    assert ns.l3.tilings["d"].stage == stage and ns.l3.tilings["y"].x_in_l3
    report, _ = validate_network(ns, tmp_path / "p", make_inputs(lg, 3, seed=l2_kb), cache=c_cache)
    _check_measured(report.to_json(), ns)


def test_k_tiles_outside_row_tiles(tmp_path, c_cache):
    """The search's k_outer order: per weight k tile, every input row tile is read again from L3
    (x+w with the output in L2)."""
    rng = np.random.default_rng(4)
    x = Tensor("x", (1, 16, 16, 4), "int8", _q(0.04, 5))
    n1, t1 = _weighted(LayerSpec("conv", c=4, k=64, h=16, w=16), rng, "x", x, 5, "a")
    n2, t2 = _weighted(LayerSpec("conv", c=64, k=16, h=16, w=16, fy=3, fx=3, pads=(1, 1, 1, 1)),
                       rng, "a", t1["a"], t1["a"].quant.zp, "y")
    lg = lower(Graph("k_outer", {"x": x, **t1, **t2}, (n1, n2), ("x",), ("y",)))
    ns = schedule_network(lg, get_target("gap8", l2_kb=16), "model", l3_strategy="search")
    t = ns.l3.tilings["y"]
    assert t.order == "k_outer" and t.stage == "x+w" and t.n_k > 1 and t.n_rows > 1
    tiles = ns.l3_tiles["y"].tiles
    assert [x.i_k for x in tiles] == sorted(x.i_k for x in tiles)   # k outer, rows inner
    report, _ = validate_network(ns, tmp_path / "p", make_inputs(lg, 3), cache=c_cache)
    _check_measured(report.to_json(), ns)
