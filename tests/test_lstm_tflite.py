"""TFLite's int8 UNIDIRECTIONAL_SEQUENCE_LSTM: models written by TensorFlow's converter in the test
(tests/lstm_models.py, fixed seeds, built once per session), the golden model bit-exact with LiteRT
BUILTIN_REF on every element of the LSTM's output, gemmlowp's int16 sigmoid / tanh exact on all
65,536 inputs (golden against gemmlowp's own header, the C against the golden), the generated C
bit-exact on gap8 (host build), stm32h7 (instruction counter) and pulp-open (GVSoC) with the
kernel's cost prediction held against the measurement, and the forms tilewise refuses in one
sentence.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tilewise.bindings.cost_terms import Scaled
from tilewise.frontend import load_model
from tilewise.golden import gemmlowp16
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate import validate_model

from . import lstm_models
from .codegen_cases import c_cache  # noqa: F401 (fixture)
from .conftest import REPO, absent
from .test_cli_errors import assert_one_sentence_error, run_cli
from .test_tflite_repair import require_isa
from .tflite_builder import compare_with_litert

C_DIR = REPO / "tilewise" / "bindings" / "portable" / "c"


@pytest.fixture(scope="session")
def lstm_model(tmp_path_factory):
    """name -> the converted int8 model, each converted once per session."""
    out = tmp_path_factory.mktemp("lstm_models")
    made: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in made:
            made[name] = lstm_models.int8_lstm(name, out)
        return made[name]

    return get


def _lstm_layer(ns) -> int:
    (i,) = [k for k, layer in enumerate(ns.layers.layers) if layer.op == "lstm"]
    return i


@pytest.mark.parametrize("name", sorted(lstm_models.MODELS))
def test_golden_bit_exact_with_litert(name, lstm_model):
    """Every element of every LSTM output and of the network output, on random, all-min and
    all-max inputs, each from LiteRT's reset state."""
    path = lstm_model(name)
    graph = load_model(path)
    assert any(n.op == "lstm" for n in graph.nodes)
    bad, total = compare_with_litert(path, n=2, all_tensors=True)
    steps = lstm_models.MODELS[name][1][0]
    assert total >= 4 * steps and bad == 0, (bad, total)


def test_cell_clip_bit_exact_with_litert_and_on_gap8(lstm_model, tmp_path, c_cache):  # noqa: F811
    """Keras' cell clip 10.0 never binds on a Q0.15 cell (its int16 clip is 32767); patched to 0.25
    (8192) it clips: golden = LiteRT on every LSTM element, and the C on gap8."""
    path = lstm_models.with_cell_clip(lstm_model("kws"), 0.25, tmp_path)
    graph = load_model(path)
    (p,) = [n.params for n in graph.nodes if n.op == "lstm"]
    assert p.cell_clip == 8192
    bad, total = compare_with_litert(path, n=1, all_tensors=True)
    assert total > 0 and bad == 0, (bad, total)
    ns = schedule_network(lower(graph), get_target("gap8"))
    r = validate_model(path, ns, graph, n_random=1, out_dir=tmp_path / "c", cache=c_cache)
    assert r.bit_exact, r.to_json()


def test_time_major_runs_each_batch_row_on_its_own(lstm_model, tmp_path, c_cache):  # noqa: F811
    """The kws LSTM read time-major ([T, B, I] = [1, 49, 10]: 49 sequences of one step): the golden
    model equals the batch-major one run on each row alone, and the C (gap8) equals the golden."""
    from dataclasses import replace

    from tilewise.golden.run import run_graph
    from tilewise.ir.graph import Graph
    from tilewise.validate import make_inputs
    from tilewise.validate.check import validate_network

    graph = load_model(lstm_model("kws"))
    (node,) = [n for n in graph.nodes if n.op == "lstm"]
    tm = replace(node, params=replace(node.params, time_major=True, steps=1, batch=49))
    nodes = tuple(tm if n is node else n for n in graph.nodes)
    tgraph = Graph(graph.name, graph.tensors, nodes, graph.inputs, graph.outputs, graph.source, dict(graph.meta))
    x = np.random.default_rng(3).integers(-128, 128, (1, 49, 10)).astype(np.int8)
    got = run_graph(tgraph, [x], keep_all=True)[node.outputs[0]]
    rows = [run_graph(graph, [x[:, t:t + 1].repeat(49, axis=1)], keep_all=True)[node.outputs[0]][0, 0]
            for t in (0, 17, 48)]
    assert [np.array_equal(got[0, t], r) for t, r in zip((0, 17, 48), rows)] == [True] * 3
    ns = schedule_network(lower(tgraph), get_target("gap8"))
    r, _ = validate_network(ns, tmp_path / "c", make_inputs(ns.layers, 2, 0), cache=c_cache)
    assert r.bit_exact, r.to_json()


def _gemmlowp_include() -> Path:
    spec = importlib.util.find_spec("tensorflow")
    inc = Path(spec.origin).parent / "include" / "external" / "gemmlowp" if spec and spec.origin else None
    if inc is None or not (inc / "fixedpoint" / "fixedpoint.h").exists():
        absent("gemmlowp's fixedpoint.h (tensorflow's include/external/gemmlowp) not found")
    if shutil.which("g++") is None:
        absent("g++ not found")
    return inc


ORACLE = r"""
#include <cstdio>
#include <cstdint>
#include "fixedpoint/fixedpoint.h"
template <int I> void tanh_all() { for (int v = -32768; v < 32768; ++v) {
  int16_t o = gemmlowp::tanh(gemmlowp::FixedPoint<int16_t, I>::FromRaw((int16_t)v)).raw(); fwrite(&o, 2, 1, stdout); } }
int main() {
  for (int v = -32768; v < 32768; ++v) {
    int16_t o = gemmlowp::logistic(gemmlowp::FixedPoint<int16_t, 3>::FromRaw((int16_t)v)).raw();
    fwrite(&o, 2, 1, stdout); }
  tanh_all<0>(); tanh_all<1>(); tanh_all<2>(); tanh_all<3>(); tanh_all<4>(); tanh_all<5>(); tanh_all<6>();
  return 0; }
"""

ALL = np.arange(-32768, 32768, dtype=np.int64)


def _golden_tables() -> np.ndarray:
    return np.stack([gemmlowp16.logistic(ALL, 3), *(gemmlowp16.tanh(ALL, b) for b in range(7))])


def test_golden_sigmoid_tanh_equal_gemmlowps_header(tmp_path):
    """golden/gemmlowp16.py against gemmlowp::logistic (Q3.12) and gemmlowp::tanh (Q0..Q6)
    compiled from the header LiteRT builds with, on every int16 input."""
    inc = _gemmlowp_include()
    (tmp_path / "oracle.cc").write_text(ORACLE)
    subprocess.run(["g++", "-O1", "-std=c++14", f"-I{inc}", "oracle.cc", "-o", "oracle"], cwd=tmp_path, check=True)
    raw = subprocess.run([str(tmp_path / "oracle")], capture_output=True, check=True).stdout
    want = np.frombuffer(raw, dtype=np.int16).reshape(8, 65536).astype(np.int64)
    got = _golden_tables()
    assert [int((g != w).sum()) for g, w in zip(got, want)] == [0] * 8
    assert want[0, 32768] == 16384 and want[1:, 32768].tolist() == [0] * 7   # sigmoid(0) = 1/2, tanh(0) = 0


HARNESS = r"""
#include <stdio.h>
#include "tw_lstm.h"
int main(void) {
  for (int v = -32768; v < 32768; v++) { short o = tw_lstm_sigmoid((short)v); fwrite(&o, 2, 1, stdout); }
  for (int b = 0; b < 7; b++)
    for (int v = -32768; v < 32768; v++) { short o = tw_lstm_tanh((short)v, b); fwrite(&o, 2, 1, stdout); }
  return 0; }
"""


def test_c_sigmoid_tanh_equal_the_golden_ones(tmp_path):
    """tw_lstm.c's int16 sigmoid / tanh against golden/gemmlowp16.py on every input (-Werror)."""
    if shutil.which("gcc") is None:
        absent("gcc not found")
    (tmp_path / "h.c").write_text(HARNESS)
    subprocess.run(["gcc", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{C_DIR}", "h.c",
                    str(C_DIR / "tw_lstm.c"), "-o", "h"], cwd=tmp_path, check=True)
    raw = subprocess.run([str(tmp_path / "h")], capture_output=True, check=True).stdout
    got = np.frombuffer(raw, dtype=np.int16).reshape(8, 65536).astype(np.int64)
    assert [int(d) for d in (got != _golden_tables()).sum(axis=1)] == [0] * 8


@pytest.mark.parametrize("name", ["kws", "stacked"])
@pytest.mark.parametrize("binding", ["lstm_cluster_s8", "lstm_s8"])
def test_generated_c_bit_exact_on_gap8(name, binding, lstm_model, tmp_path, c_cache):  # noqa: F811
    """gap8's host build: the cluster kernel (its 8 cores as threads), which the scheduler takes,
    and the host core's, taken when the cluster's is left out of the target."""
    path = lstm_model(name)
    graph = load_model(path)
    target = get_target("gap8")
    if binding == "lstm_s8":
        target = without_bindings(target, "lstm_cluster_s8")
    ns = schedule_network(lower(graph), target)
    r = validate_model(path, ns, graph, n_random=2, out_dir=tmp_path / "c", cache=c_cache)
    assert r.bit_exact, r.to_json()
    lstms = [i for i, layer in enumerate(ns.layers.layers) if layer.op == "lstm"]
    assert len(lstms) == (2 if name == "stacked" else 1)
    assert {ns.placement(i).binding.name for i in lstms} == {binding}


def without_bindings(target, *names: str):
    """`target` with the bindings `names` left out of every module."""
    return replace(target, modules=tuple(replace(m, bindings=tuple(b for b in m.bindings if b.name not in names))
                                         for m in target.modules))


def test_generated_c_bit_exact_on_stm32h7_and_counted(lstm_model, tmp_path):
    """The firmware under the instruction counter (the 12-step sequence model keeps the emulated
    run short; bench/calibrate_lstm.py counts the kws one): bit-exact, and the LSTM layer's
    instructions within ±10% of its prediction (the pulp family's lstm_cluster_s8 on the Arm core,
    bindings/pulp/lstm_cost.py ARM, fitted by bench/calibrate_lstm_cluster.py)."""
    require_isa("count")
    path = lstm_model("sequence")
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("stm32h7"))
    r = validate_model(path, ns, graph, 1, 0, tmp_path / "p", on="count").to_json()
    assert r["bit_exact"] and r["platform"] == "count", r
    layer = r["layers"][_lstm_layer(ns)]
    assert abs(layer["predicted_instructions"] / layer["measured_instructions"] - 1) <= 0.10, layer


def test_generated_c_bit_exact_on_gvsoc(lstm_model, tmp_path):
    """pulp-open on GVSoC: the LSTM on the cluster's 8 cores (lstm_cluster_s8) bit-exact, and its
    cycles within ±15% of its prediction (bindings/pulp/lstm_cost.py CLUSTER)."""
    require_isa("gvsoc")
    path = lstm_model("kws")
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("pulp-open"))
    r = validate_model(path, ns, graph, 1, 0, tmp_path / "p", on="gvsoc").to_json()
    assert r["bit_exact"] and r["platform"] == "gvsoc", r
    layer = r["layers"][_lstm_layer(ns)]
    assert abs(layer["predicted_cycles"] / layer["measured_cycles"] - 1) <= 0.15, layer


@pytest.mark.parametrize("target", ["gap8", "stm32h7"])
def test_analyze_prices_the_lstm(target, lstm_model):
    """analyze --json: the LSTM on the pulp family's lstm_cluster_s8 (gap8's cluster, its 8 cores;
    stm32h7's one core), its MACs 4·H·(I + H) per step and its weights' and folded biases' bytes
    reported (MAC/cycle with them), its cycles LstmCost's: a call, per step, and per cell and
    dot-product word of the busiest core's ⌈H/P⌉ cells (bindings/pulp/lstm_cost.py)."""
    path = lstm_model("kws")
    proc = run_cli("analyze", str(path), "--target", target, "--json")
    assert proc.returncode == 0, proc.stderr
    (layer,) = [x for x in json.loads(proc.stdout)["layers"] if x["op"] == "lstm"]
    assert layer["binding"] == "pulp/lstm_cluster_s8", layer
    module = get_target(target).module(layer["module"])
    (b,) = [b for b in module.bindings if b.label == layer["binding"]]
    cost = b.cost.for_key(b.key)
    steps, (i, h) = 49, (10, 32)
    assert layer["macs"] == steps * 4 * h * (i + h) == 263_424
    assert layer["weight_bytes"] == 4 * h * (i + h) + 2 * 4 * h * 4   # int8 w_x, w_h; int32 b_x, b_h
    mine = -(-h // module.cores)
    # stm32h7 prices in estimated cycles: LstmCost's instruction fit times CYCLES_PER_INSTRUCTION
    scale = b.cost.factor if isinstance(b.cost, Scaled) else 1.0
    want = scale * (cost.call + steps * (cost.step + mine * (cost.cell + cost.word * (12 + 32) // 4)))
    assert want <= layer["cycles"] <= want * 1.02 + 2000, (layer, want)
    assert layer["mac_per_cycle"] == pytest.approx(layer["macs"] / layer["cycles"])
    # stm32h7 keeps constants in flash: the LSTM's static arrays are in its flash total
    totals = json.loads(proc.stdout)["totals"]
    others = sum(x["weight_bytes"] for x in json.loads(proc.stdout)["layers"] if x["op"] != "lstm")
    if target == "stm32h7":
        assert totals["flash_bytes"] >= layer["weight_bytes"] + others > 0, totals
    else:
        assert totals["flash_bytes"] == 0, totals


def test_float_and_hybrid_lstm_are_one_sentence(tmp_path):
    """A float LSTM and a dynamic-range (hybrid: int8 weights, float activations) one: exit 2, one
    sentence naming the operator."""
    for path in (lstm_models.float_lstm(tmp_path), lstm_models.hybrid_lstm(tmp_path)):
        assert_one_sentence_error(run_cli("analyze", str(path), "--target", "gap8"), str(path),
                                  "UNIDIRECTIONAL_SEQUENCE_LSTM", "floating point")
