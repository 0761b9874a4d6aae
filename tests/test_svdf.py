"""TFLite SVDF (int8, int16 state): golden model vs LiteRT over consecutive invocations, the state
in the memory plan, the generated C bit-exact on gap8 (host build), stm32h7 (instruction counter)
and pulp-open (GVSoC), its cost model against those measurements, and the refusals.

The models are written with the TFLite schema (tests/svdf_models.py says why: TensorFlow 2.21's
converter writes no SVDF); LiteRT 2.3's interpreter (BUILTIN_REF) is the reference.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilewise.frontend import load_model
from tilewise.golden import run_graph
from tilewise.ir.graph import state_tensors
from tilewise.ir.ops import Op
from tilewise.memory.network import act_name
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.quantize.tflite_build import ModelBuilder
from tilewise.targets.registry import get_target
from tilewise.validate import validate_model

from .codegen_cases import c_cache  # noqa: F401 (fixture)
from .svdf_models import add_svdf, keyword_model, svdf_model
from .test_cli_errors import assert_one_sentence_error, run_cli
from .test_tflite_repair import require_isa
from .tflite_builder import litert_interpreter

#: the models of these tests, by name: the builder's keyword arguments
GEOMETRIES = {
    "rank2_bias": dict(),
    "rank1_nobias_saturating": dict(rank=1, bias=False, memory=3, seed=4, state_std=30000.0),
    "rank4_wide": dict(inputs=24, units=8, rank=4, memory=16, seed=7, x_zp=-100, y_zp=60),
}


@pytest.fixture(scope="session")
def models(tmp_path_factory) -> dict[str, Path]:
    """The test models, written once per session."""
    d = tmp_path_factory.mktemp("svdf")
    out = {name: svdf_model(d / f"{name}.tflite", **kw) for name, kw in GEOMETRIES.items()}
    out["keyword"] = keyword_model(d / "keyword.tflite")
    return out


def _frames(shape, n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, shape).astype(np.int8) for _ in range(n)]


@pytest.mark.parametrize("name", [*GEOMETRIES, "keyword"])
def test_golden_is_litert_over_consecutive_invocations(name, models):
    """30 invocations in a row: every output and the state LiteRT's variable tensor holds after
    each one equal the golden model's, which carries its state from one call to the next."""
    path = models[name]
    it = litert_interpreter(path)
    g = load_model(path)
    index = g.meta["tflite_tensor_index"]
    names = state_tensors(g.meta)
    assert len(names) == sum(n.op == Op.SVDF for n in g.nodes) >= 1
    states: dict[str, np.ndarray] = {}
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    for x in _frames(tuple(inp["shape"]), 30, seed=1):
        it.set_tensor(inp["index"], x)
        it.invoke()
        got = run_graph(g, [x], states=states)
        np.testing.assert_array_equal(got[g.outputs[0]], it.get_tensor(out["index"]))
        for s in names:
            ref = it.get_tensor(index[s])
            np.testing.assert_array_equal(states[s].reshape(ref.shape), ref)


def test_the_state_saturates_and_outputs_use_their_range(models):
    """The saturating geometry does clamp state values at int16 (and the others mostly do not):
    the tests above exercise the clamp, not only the middle of the range."""
    g = load_model(models["rank1_nobias_saturating"])
    states: dict[str, np.ndarray] = {}
    ys = [run_graph(g, [x], states=states)[g.outputs[0]] for x in _frames((1, 10), 10, seed=2)]
    (s,) = states.values()
    assert (np.abs(s.astype(np.int64)) == 32767).mean() > 0.1
    assert np.concatenate(ys).std() > 10


def test_a_fresh_run_starts_from_zero_state(models):
    """Without `states` every call is a first inference (a fresh interpreter's first output)."""
    path = models["rank2_bias"]
    g = load_model(path)
    xs = _frames((1, 10), 3, seed=3)
    for x in xs:
        it = litert_interpreter(path)
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        np.testing.assert_array_equal(run_graph(g, [x])[g.outputs[0]],
                                      it.get_tensor(it.get_output_details()[0]["index"]))


@pytest.mark.parametrize("target", ["gap8", "stm32h7"])
def test_state_lives_the_whole_run_in_the_memory_plan(target, models, tmp_path):
    """Each SVDF's state is an L2 buffer live from the first step to the last (no other buffer
    shares its bytes: it keeps its value between inferences); tw_network_reset zeroes exactly
    those bytes and network.h declares it with TW_NETWORK_STATE_BYTES."""
    from tilewise.codegen import generate

    g = load_model(models["keyword"])
    ns = schedule_network(lower(g), get_target(target))
    plan = ns.memory.plan
    n = len(ns.layers.layers)
    names = state_tensors(ns.layers.meta)
    assert len(names) == 2
    for s in names:
        (buf,) = [b for b in plan.buffers if b.name == act_name(s)]
        assert (buf.first, buf.last, buf.size) == (0, n - 1, ns.layers.tensors[s].nbytes)
    project = generate(ns, tmp_path / "p")
    h = (project.path / "network.h").read_text()
    c = (project.path / "network.c").read_text()
    total = sum(ns.layers.tensors[s].nbytes for s in names)
    assert f"#define TW_NETWORK_STATE_BYTES {total}" in h and "void tw_network_reset(void *l2);" in h
    assert c.count("memset((int8_t *)l2 + ") == 2


@pytest.mark.parametrize("name,target", [("keyword", "gap8"), ("keyword", "stm32h7"),
                                         ("rank1_nobias_saturating", "gap8"), ("rank4_wide", "stm32h7")])
def test_generated_c_bit_exact_on_the_host(name, target, models, tmp_path, c_cache):
    """validate's 7 inputs run as consecutive inferences of one harness process, whose arena is
    filled with 0x5A first (so the state is zero only through tw_network_reset): bit-exact with
    the golden model and LiteRT, which carry the state the same way."""
    path = models[name]
    g = load_model(path)
    ns = schedule_network(lower(g), get_target(target))
    assert {layer.op for layer in ns.layers.layers} >= {Op.SVDF}
    r = validate_model(path, ns, g, n_random=5, out_dir=tmp_path / "c", cache=c_cache)
    assert r.bit_exact, r.to_json()


def _svdf_layers(r: dict) -> list[dict]:
    return [layer for layer in r["layers"] if layer["op"] == "svdf"]


#: the SVDF cost model's band against its own measurements (bench/calibrate_svdf.py fits it)
BAND = 0.15


def test_keyword_model_counted_on_cortex_m7(models, tmp_path):
    """stm32h7 under the instruction counter: bit-exact over 4 consecutive inferences, and each
    SVDF layer's predicted instructions within BAND of the counted ones."""
    require_isa("count")
    path = models["keyword"]
    g = load_model(path)
    ns = schedule_network(lower(g), get_target("stm32h7"))
    r = validate_model(path, ns, g, 2, 0, tmp_path / "p", on="count").to_json()
    assert r["bit_exact"] and r["platform"] == "count" and r["inputs"] == 4, r
    for layer in _svdf_layers(r):
        ratio = layer["predicted_instructions"] / layer["measured_instructions"]
        assert abs(ratio - 1) <= BAND, layer


def test_keyword_model_on_gvsoc(models, tmp_path):
    """pulp-open on GVSoC: bit-exact over 3 consecutive inferences, both SVDFs on the cluster's
    cores (bindings/pulp/svdf.py); the first's predicted cycles within BAND of GVSoC's, the
    second's above them by at most 35%: it runs with the kernel's code in the instruction cache
    (~2,100 cycles cheaper), which the model — fitted on SVDFs run cold, each a network's only
    one (bench/calibrate_svdf.py `cluster`) — does not price."""
    require_isa("gvsoc")
    path = models["keyword"]
    g = load_model(path)
    ns = schedule_network(lower(g), get_target("pulp-open"))
    assert [s.binding for x, s in zip(ns.layers.layers, ns.schedules) if x.op == Op.SVDF] == \
        ["pulp/svdf_cluster_s8"] * 2
    r = validate_model(path, ns, g, 1, 0, tmp_path / "p", on="gvsoc").to_json()
    assert r["bit_exact"] and r["platform"] == "gvsoc" and r["inputs"] == 3, r
    first, second = (layer["predicted_cycles"] / layer["measured_cycles"] for layer in _svdf_layers(r))
    assert abs(first - 1) <= BAND, first
    assert 1.0 <= second <= 1.35, second


def test_cluster_svdf_model_against_its_stored_measurements():
    """SvdfCost in the tree against bench/calibration_svdf.json's cluster rows (GVSoC, 8 cores):
    each single-SVDF geometry within BAND."""
    import json

    from tilewise.bindings.pulp.svdf_cost import CLUSTER
    from tilewise.ir.layer import LoopNest

    data = json.loads((Path(__file__).resolve().parent.parent / "bench" / "calibration_svdf.json").read_text())
    oh = get_target("pulp-open").module("cluster").layer_overhead_cycles
    rows = [r for r in data["cluster"]["rows"] if not isinstance(r["geometry"], str)]
    assert len(rows) >= 10
    for r in rows:
        pred = sum(CLUSTER.parts(LoopNest(kind="other", **r["nest"]), 8).values()) + oh
        assert abs(pred / r["measured"] - 1) <= BAND, (r["geometry"], pred, r["measured"])


def test_analyze_prices_the_svdf_by_its_terms(models):
    """analyze --json: the SVDF layers on the host core, priced by the fitted terms (feature
    MACs, time MACs, filters, the call) — the keyword model's first SVDF costs more than its
    second (40 vs 32 features, 64 vs 32 filters) — with their MACs and weight bytes."""
    import json

    proc = run_cli("analyze", str(models["keyword"]), "--target", "stm32h7", "--json")
    assert proc.returncode == 0, proc.stderr
    first, second = [x for x in json.loads(proc.stdout)["layers"] if x["op"] == "svdf"]
    assert first["binding"].startswith("cpu") or "svdf" in first["binding"]
    assert first["cycles"] > second["cycles"] > 0
    # MACs F·(C + M) (feature and time products) and the weights' bytes (int8 feature, int16
    # time weights, int32 bias), so that MAC/cycle is reported
    assert (first["macs"], second["macs"]) == (64 * (40 + 10), 32 * (32 + 10))
    assert (first["weight_bytes"], second["weight_bytes"]) == (64 * 40 + 64 * 10 * 2 + 32 * 4,
                                                               32 * 32 + 32 * 10 * 2 + 32 * 4)
    assert first["mac_per_cycle"] == first["macs"] / first["cycles"]


def _bad(path: Path, *, act: int = 1, state_zp: int = 0, x_dtype: str = "int8", rank: int = 1) -> Path:
    rng = np.random.default_rng(0)
    b = ModelBuilder()
    b.op_versions["SVDF"] = 3
    x = b.input("x", (1, 6), x_dtype, **({} if x_dtype == "float32" else dict(scale=0.05, zero_point=0)))
    y = add_svdf(b, x, "svdf", rng, inputs=6, units=4, rank=rank, memory=3, x_scale=0.05)
    b.ops[-1].options["FusedActivationFunction"] = act
    b.tensors[b.ops[-1].inputs[4]].zero_point = (state_zp,)
    b.output(y)
    return b.save(path)


@pytest.mark.parametrize("kw,words", [
    (dict(act=0), ("SVDF", "fused activation NONE", "RELU")),
    (dict(state_zp=3), ("SVDF", "state 'svdf/state'", "zero point 3", "symmetric")),
    (dict(x_dtype="float32"), ("SVDF", "float or hybrid SVDF", "int16 state")),
], ids=["activation", "state_zero_point", "float"])
def test_refusals_are_one_sentence(kw, words, tmp_path):
    path = _bad(tmp_path / "bad.tflite", **kw)
    assert_one_sentence_error(run_cli("analyze", str(path), "--target", "gap8"), str(path), *words)
