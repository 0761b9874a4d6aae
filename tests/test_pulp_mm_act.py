"""The MatMul of two activations on the pulp cluster and the Cortex-M7 (issue 28:
bindings/pulp/mm_act.py, c/tw_pulp_mm_act.h, passes/fuse_matmul.py, cost.py MatMulActCost).

- Deeploy's MatMul → RequantShift becomes one matmul layer carrying the requantization (its int32
  sums never a tensor), whose MACs analyze counts;
- the cluster binding takes it (int8 or uint8 a, int8 b, one requantization per tensor or per
  column, or int32 sums without one; heads; b as the graph has it or from a Transpose) and the
  generated C is bit-exact with the golden model on gap8 and stm32h7 (host builds) — the kernels'
  C path; a uint8 b stays on the portable kernel, named by the check;
- on the ISAs (GVSoC's pulp-open cluster, the Cortex-M7 instruction counter) one network of
  several such MatMuls (tests/attention_models.py matmul_suite) is bit-exact and each MatMul's
  predicted cycles (instructions) are within BAND of its measurement;
- the model in the tree predicts every MatMul of bench/calibration_mm_act.json (GVSoC 8 and 1
  cores, counted Cortex-M7 instructions: bench/calibrate_mm_act.py) within BAND — no simulator.
"""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from tilewise.bindings.pulp import mm_act
from tilewise.bindings.pulp.cost import MatMulActCost
from tilewise.frontend import load_model
from tilewise.ir.layer import LoopNest
from tilewise.ir.ops import Op
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate.check import validate_model

from .attention_models import dtypes, matmul_net, matmul_suite
from .codegen_cases import c_cache  # noqa: F401 (fixture)

#: predicted / measured of one MatMul layer, live and stored
BAND = (0.75, 1.25)
DATA = Path(__file__).resolve().parent.parent / "bench" / "calibration_mm_act.json"

CASES = {
    "int8-heads": dict(heads=2, m=16, k=24, n=20),
    "uint8a-per-column-odd": dict(heads=3, m=13, k=21, n=10, a_unsigned=True, per_column=True),
    "kT-from-transpose": dict(heads=1, m=64, k=64, n=64, b_from_t=True),
    "int32-sums": dict(heads=2, m=9, k=12, n=5, requant=False),
}


def _load(tmp_path: Path, case: dict):
    path = tmp_path / "m.onnx"
    onnx.save(matmul_net(**case), str(path))
    return path, load_model(path, dtypes(case.get("a_unsigned", False)))


def test_matmul_and_its_requantization_are_one_layer_with_its_macs(tmp_path):
    _, g = _load(tmp_path, CASES["int8-heads"])
    lg = lower(g)
    mm = [layer for layer in lg.layers if layer.op == Op.MATMUL]
    assert len(mm) == 1 and mm[0].requant is not None
    assert not [layer for layer in lg.layers if layer.op == Op.REQUANT]
    assert lg.tensors[mm[0].output].dtype == "int8"
    assert mm[0].macs == 2 * 16 * 24 * 20
    _, g = _load(tmp_path, CASES["int32-sums"])
    (mm,) = [layer for layer in lower(g).layers if layer.op == Op.MATMUL]
    assert mm.requant is None and mm.macs == 2 * 9 * 12 * 5


@pytest.mark.parametrize("target", ["gap8", "stm32h7"])
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_cluster_matmul_bit_exact(case, target, tmp_path, c_cache):
    path, g = _load(tmp_path, CASES[case])
    ns = schedule_network(lower(g), get_target(target))
    y = 32 if CASES[case].get("requant") is False else 8
    (s,) = [s for layer, s in zip(ns.layers.layers, ns.schedules) if layer.op == Op.MATMUL]
    assert s.binding == f"pulp/matmul_act_x8y{y}", s.binding
    r = validate_model(path, ns, g, n_random=2, out_dir=tmp_path / "c", cache=c_cache)
    assert r.bit_exact, r.to_json()["mismatches"]


def test_a_uint8_b_stays_on_the_portable_kernel(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(matmul_net(1, 8, 8, 8), str(path))
    g = load_model(path, {"a": "int8", "b": "uint8"})
    lg = lower(g)
    (layer,) = [x for x in lg.layers if x.op == Op.MATMUL]
    assert "uint8" in mm_act.check(layer, lg)
    for target in ("gap8", "stm32h7"):
        ns = schedule_network(lg, get_target(target))
        assert [s.binding for x, s in zip(ns.layers.layers, ns.schedules) if x.op == Op.MATMUL] == \
            ["portable/matmul_x8y8"], target


def test_the_l1_scratch_is_one_formula_and_tiles_rows():
    """Geometry: a's row tile and its outputs fit TILE_BYTES (an even row count); bᵀ, the
    corrections and the words before them, b's staging shared with the outputs; on Arm no
    tiles, the unpacked rows instead."""
    g = mm_act.geometry(1, 64, 192, 64, 1, True, 8, False)    # ICCT's scores Q·Kᵀ
    assert g.m_tile == 30 and 30 * 192 + 30 * 64 <= mm_act.TILE_BYTES < 32 * (192 + 64) + 1
    assert g.bytes == 64 * 192 + 4 * 64 + 16 * 64 + 30 * 192 + 64 * 192
    arm = mm_act.geometry(1, 64, 192, 64, 1, True, 1, True)
    assert arm.m_tile == 64 and arm.bytes == 64 * 192 + 4 * 64 + 16 * 64 + 4 * 192


def _predicted(r: dict) -> float:
    """The binding's model on the target (its coefficients in the tree) and the module's layer
    overhead, as the schedule prices the layer."""
    h, m, k, n = r["shape"]
    nest = LoopNest(kind="other", K=n, C=k, OY=h, OX=m, N=1, IY=h, IX=m, y_bits=r["y_bits"])
    target = get_target(r["target"]) if r["arm"] else get_target(r["target"], cores=r["cores"])
    if target.instruction_model is not None:    # stm32h7: counted instructions, its model in them
        target = target.instruction_model(target)
    b = next(b for mod in target.modules for b in mod.bindings if b.name == f"matmul_act_x8y{r['y_bits']}")
    assert isinstance(b.cost, MatMulActCost) and b.cost.arm == r["arm"]
    return b.cost.cycles(nest, r["cores"]) + r["overhead"]


ROWS = json.loads(DATA.read_text())["rows"]


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['on']}{r['cores']}-{'x'.join(map(str, r['shape']))}" for r in ROWS])
def test_the_model_in_the_tree_against_each_stored_measurement(row):
    ratio = _predicted(row) / row["measured"]
    assert BAND[0] <= ratio <= BAND[1], (row["shape"], row["on"], row["cores"], ratio)


@pytest.mark.parametrize("on,target", [("gvsoc", "pulp-open"), ("count", "stm32h7")])
def test_on_the_isa_bit_exact_and_predicted_within_band(on, target, tmp_path):
    """One firmware, three MatMuls (ICCT's scores, a uint8 softmax·V, odd sizes)."""
    from .test_tflite_repair import require_isa

    require_isa("qemu" if on == "count" else on)
    model, types = matmul_suite(((1, 64, 192, 64, False), (2, 32, 64, 48, True), (1, 30, 20, 14, False)))
    path = tmp_path / "suite.onnx"
    onnx.save(model, str(path))
    g = load_model(path, types)
    ns = schedule_network(lower(g), get_target(target))
    r = validate_model(path, ns, g, n_random=1, out_dir=tmp_path / "c", on=on)
    assert r.bit_exact, r.to_json()["mismatches"]
    # counted instructions against the instruction model's re-pricing of the same schedule
    key, pkey = (("measured_instructions", "predicted_instructions") if on == "count"
                 else ("measured_cycles", "predicted_cycles"))
    got = [(lc[pkey], lc[key]) for layer, lc in zip(ns.layers.layers, r.to_json()["layers"])
           if layer.op == Op.MATMUL]
    assert len(got) == 3
    for pred, meas in got:
        assert BAND[0] <= pred / meas <= BAND[1], got
