"""Depth-first attention (issue 28: passes/fuse_attention.py, bindings/pulp/attention.py,
templates/attention.c.j2, attention_cost.AttentionCost).

- q·kᵀ → RequantShift → iSoftmax / ITAMax / nothing → ·v → RequantShift becomes one `attention`
  layer on a target that runs it (the PULP clusters: pulp-open, gap8, gap9; stm32h7's Cortex-M7,
  the Arm build), whose golden numbers are the three layers'; the scores and the softmax leave
  the memory plan; a target without the binding (idsp) and `depth_first=False` keep the layers;
  an attention whose kernel scratch exceeds the free L1 stays layer by layer (ICCT on gap8);
- EEGFormer's plan drops its 8×66×66 scores from the peak (pulp-open 40,320 → 6,528 B: the
  memory depth-first saves);
- the generated C is bit-exact with the golden model on gap8 and stm32h7 (host builds) for each
  row op, one and several row tiles and heads; on GVSoC (pulp-open) and the Cortex-M7 counter
  bit-exact with each attention's predicted cycles (instructions) within BAND of its measurement;
- the model in the tree predicts every attention of bench/calibration_attention.json (GVSoC, 8
  cores; counted Cortex-M7 instructions: bench/calibrate_attention.py) within BAND — no
  simulator.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from tilewise.bindings.pulp import attention
from tilewise.bindings.pulp.attention_cost import AttentionCost
from tilewise.frontend import load_model
from tilewise.golden.layers import run_layers
from tilewise.ir.layer import LoopNest
from tilewise.ir.ops import Op
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate.check import validate_model

from .attention_models import attention_suite
from .codegen_cases import c_cache  # noqa: F401 (fixture)
from .conftest import absent, models_dir

#: predicted / measured of one attention layer, per ISA (the Arm fit is the looser: 0.87-1.07)
BAND = {"pulp-open": (0.9, 1.1), "stm32h7": (0.85, 1.15)}
DATA = Path(__file__).resolve().parent.parent / "bench" / "calibration_attention.json"
#: (heads, m, d, L, dv, row op): several heads; several row tiles (m·(d + 2L + dv) > TILE_BYTES)
#: with ITAMax; EEGFormer-like without a row op
SUITE = ((2, 16, 8, 16, 8, "iSoftmax"), (1, 96, 32, 96, 24, "ITAMax"), (2, 66, 2, 66, 2, None))
#: the ISA runs' (a firmware build and run each): two row tiles on the cluster, smaller sizes
ISA_SUITE = ((2, 16, 8, 16, 8, "iSoftmax"), (1, 64, 16, 64, 16, "ITAMax"), (2, 66, 2, 66, 2, None))


def shared_model(rel: str) -> Path:
    """A model of ../shared/models; fails (CI) or skips (elsewhere) when it is absent."""
    path = models_dir() / rel
    if not path.exists():
        absent(f"model not found at {path} (set TILEWISE_MODELS)")
    return path


def _suite(tmp_path: Path, shapes=SUITE):
    model, types = attention_suite(shapes)
    path = tmp_path / "suite.onnx"
    onnx.save(model, str(path))
    return path, load_model(path, types)


def _ops(ns) -> list[str]:
    return [str(layer.op) for layer in ns.layers.layers]


def test_fused_where_the_cluster_runs_it_with_the_layers_numbers(tmp_path):
    _, g = _suite(tmp_path)
    lg = lower(g)
    for target in ("pulp-open", "gap8", "gap9", "stm32h7"):
        ns = schedule_network(lg, get_target(target))
        assert _ops(ns).count("attention") == 3 and "matmul" not in _ops(ns), (target, _ops(ns))
        fused = [x for x in ns.layers.layers if x.op == Op.ATTENTION]
        assert all(t not in ns.layers.tensors for x in fused for t in x.params.inner)
        # the fused layer counts its two MatMuls' MACs
        assert sum(x.macs for x in ns.layers.layers) == sum(x.macs for x in lg.layers), target
        assert {s.binding for x, s in zip(ns.layers.layers, ns.schedules) if x.op == Op.ATTENTION} == \
            {"pulp/attention_int_softmax_s8", "pulp/attention_ita_max_s8", "pulp/attention_norows_s8"}
    rng = np.random.default_rng(1)
    x = [rng.integers(-128, 128, lg.tensors[i].shape).astype(np.int8) for i in lg.inputs]
    want = run_layers(lg, x)
    got = run_layers(schedule_network(lg, get_target("gap8")).layers, x)
    assert all(np.array_equal(want[o], got[o]) for o in lg.outputs)
    for target, kw in (("idsp", {}), ("pulp-open", {"depth_first": False})):
        ops = _ops(schedule_network(lg, get_target(target), **kw))
        assert "attention" not in ops and ops.count("matmul") == 6, (target, ops)


def test_an_attention_whose_scratch_exceeds_l1_stays_layer_by_layer():
    """ICCT's attention (64 rows, d = 192: kᵀ and vᵀ 24 kB in L1) fits pulp-open's L1, not gap8's."""
    g = lower(load_model(shared_model("integer_onnx/deeploy/models/CCT/Int/ICCT/network.onnx")))
    assert _ops(schedule_network(g, get_target("pulp-open"))).count("attention") == 1
    gap8 = schedule_network(g, get_target("gap8"))
    assert "attention" not in _ops(gap8) and _ops(gap8).count("matmul") == 2
    geo = attention.nest_geometry(LoopNest(kind="other", K=192, C=192, OY=1, OX=64, IX=64), True)
    assert geo.bytes > get_target("gap8").memory("L1").free >= 0


def test_eegformer_scores_leave_the_peak():
    g = lower(load_model(shared_model("integer_onnx/deeploy/models/EEGFormer/network.onnx")))
    t = get_target("pulp-open")
    df, lbl = schedule_network(g, t), schedule_network(g, t, depth_first=False)
    (fused,) = [x for x in df.layers.layers if x.op == Op.ATTENTION]
    scores = sum(v.size for v in fused.params.inner.values())
    assert scores == 8 * 66 * 66
    # the scores leave the plan; at most the attention's own operands live longer (q and k until
    # the context is computed)
    operands = sum(df.layers.tensors[t].size for t in (*fused.inputs, fused.output))
    assert lbl.memory.peak >= scores and df.memory.peak < lbl.memory.peak - scores + operands, \
        (df.memory.peak, lbl.memory.peak)
    assert df.memory.peak * 4 < lbl.memory.peak


def test_geometry_tiles_rows_and_stages_k_and_v_in_the_tile_region():
    g = attention.geometry(1, 96, 32, 96, 24, True)
    assert g.m_tile < 96 and g.m_tile % 2 == 0
    assert attention._tile_bytes(g.m_tile, 32, 96, 24, True) <= attention.TILE_BYTES \
        < attention._tile_bytes(g.m_tile + 2, 32, 96, 24, True)
    assert g.bytes == g.region_off + max(32 * 96, g.o_off - g.region_off + g.m_tile * 24)
    small = attention.geometry(8, 16, 8, 16, 8, False)
    assert small.m_tile == 16 and small.p_off == small.s_off


@pytest.mark.parametrize("target", ["gap8", "stm32h7"])
def test_bit_exact_on_the_host(target, tmp_path, c_cache):
    path, g = _suite(tmp_path)
    ns = schedule_network(lower(g), get_target(target))
    assert _ops(ns).count("attention") == 3
    r = validate_model(path, ns, g, n_random=2, out_dir=tmp_path / "c", cache=c_cache)
    assert r.bit_exact, r.to_json()["mismatches"]


ROWS = json.loads(DATA.read_text())["rows"]


def _predicted(r: dict) -> float:
    h, m, d, keys, dv = r["shape"]
    nest = LoopNest(kind="other", K=dv, C=d, OY=h, OX=m, N=1, IY=1, IX=keys)
    target = get_target(r["target"])
    if target.instruction_model is not None:    # stm32h7: counted instructions, its model in them
        target = target.instruction_model(target)
    b = next(b for mod in target.modules for b in mod.bindings if b.name == r["binding"].split("/")[-1])
    assert isinstance(b.cost, AttentionCost) and b.cost.row == r["row"] and b.cost.arm == (r["target"] == "stm32h7")
    return float(sum(b.cost.parts(nest, r["cores"]).values())) + r["overhead"]


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['target']}-" + "x".join(map(str, r["shape"])) for r in ROWS])
def test_the_model_in_the_tree_against_each_stored_measurement(row):
    ratio = _predicted(row) / row["measured"]
    lo, hi = BAND[row["target"]]
    assert lo <= ratio <= hi, (row["shape"], ratio)


@pytest.mark.parametrize("on,target", [("gvsoc", "pulp-open"), ("count", "stm32h7")])
def test_on_the_isa_bit_exact_and_predicted_within_band(on, target, tmp_path):
    from .test_tflite_repair import require_isa

    require_isa(on)
    path, g = _suite(tmp_path, ISA_SUITE)
    ns = schedule_network(lower(g), get_target(target))
    r = validate_model(path, ns, g, n_random=1, out_dir=tmp_path / "c", on=on)
    assert r.bit_exact, r.to_json()["mismatches"]
    # counted instructions against the instruction model's re-pricing of the same schedule
    key, pkey = (("measured_instructions", "predicted_instructions") if on == "count"
                 else ("measured_cycles", "predicted_cycles"))
    got = [(lc[pkey], lc[key]) for layer, lc in
           zip(ns.layers.layers, r.to_json()["layers"]) if layer.op == Op.ATTENTION]
    assert len(got) == 3
    lo, hi = BAND[target]
    for pred, meas in got:
        assert lo <= pred / meas <= hi, got
