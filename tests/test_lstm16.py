"""TFLite's 16x8 UNIDIRECTIONAL_SEQUENCE_LSTM (int16 activations, int8 weights, int16 cell state):
models built with the schema (tests/lstm16_models.py), TFLite Micro's interpreter (the
tflite-micro package) as the reference — the golden model bit-exact with it on every output
element, several inputs per model — the generated C bit-exact on gap8 and stm32h7 (host builds),
on pulp-open (GVSoC) and under stm32h7's instruction counter with the kernel's cost prediction held
against the measurement, and the 16x8 forms tilewise refuses in one sentence.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilewise.frontend import load_model
from tilewise.golden.run import run_graph

from . import lstm16_models
from .codegen_cases import c_cache  # noqa: F401 (fixture)
from .conftest import absent
from .test_cli_errors import assert_one_sentence_error, run_cli


def _tflm() -> None:
    try:
        import tflite_micro  # noqa: F401
    except ImportError:
        absent("the tflite-micro package (TFLite Micro's interpreter, the dev extra) is not installed")


@pytest.fixture(scope="session")
def lstm16_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("lstm16_models")
    made: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in made:
            made[name] = lstm16_models.lstm16(name, out)
        return made[name]

    return get


def _inputs(shape: tuple[int, ...], n: int) -> list[np.ndarray]:
    """Random int16 over the full range (some gates saturate), a quieter one (x / 8), all-max."""
    rng = np.random.default_rng(5)
    xs = [rng.integers(-32768, 32768, shape).astype(np.int16) for _ in range(n)]
    return xs + [(xs[0] // 8).astype(np.int16), np.full(shape, 32767, np.int16)]


@pytest.mark.parametrize("name", sorted(lstm16_models.MODELS))
def test_golden_bit_exact_with_tflite_micro(name, lstm16_model):
    """Every element of the LSTM's output, each input from TFLM's reset state."""
    _tflm()
    path = lstm16_model(name)
    graph = load_model(path)
    (node,) = graph.nodes
    assert node.op == "lstm" and node.params.form == "16x8"
    shape = graph.tensors[graph.inputs[0]].shape
    bad = []
    for x in _inputs(shape, 2):
        want = lstm16_models.tflm_run(path, x)
        got = np.asarray(run_graph(graph, [x])[graph.outputs[0]])
        assert got.shape == want.shape
        bad.append(int((got != want).sum()))
    assert bad == [0] * len(bad), bad
    # the outputs use the int16 range: the test exercises saturated and small gates alike
    assert int(np.abs(want).max()) > 16000


def test_small_model_clips_its_cell(lstm16_model):
    """small16's cell clip 1.5 on a 2^-13 cell (12288) binds on the full-range input: the golden
    cell state reaches it (so the bit-exact tests above cover the clip)."""
    from tilewise.golden.lstm16 import lstm16_step

    graph = load_model(lstm16_model("small16"))
    (node,) = graph.nodes
    p = node.params
    assert p.cell_clip == 12288 and p.cell_scale == -13
    w_x, w_h, b_x = (np.asarray(graph.tensors[n].data, np.int64) for n in node.inputs[1:])
    x = _inputs(graph.tensors[graph.inputs[0]].shape, 1)[0].astype(np.int64)
    h, c, top = np.zeros(p.n_cell, np.int64), np.zeros(p.n_cell, np.int64), 0
    for t in range(p.steps):
        h, c = lstm16_step(p, x[t, 0], h, c, w_x, w_h, b_x)
        top = max(top, int(np.abs(c).max()))
    assert top == 12288


def test_unsupported_16x8_forms_are_one_sentence(tmp_path):
    """A nonzero zero point on the int16 input, and int32 biases: exit 2, one sentence naming the
    operator."""
    from tilewise.quantize.tflite_build import ModelBuilder

    def build(path: Path, x_zp: int, bias_dtype: str) -> Path:
        b = ModelBuilder()
        x = b.input("x", (1, 3, 4), "int16", scale=1 / 4096, zero_point=x_zp)
        w = [b.const(f"w{k}", np.ones((2, 4 if k < 4 else 2)), "int8", scale=0.01) for k in range(8)]
        bias = [b.const(f"b{k}", np.zeros(2), bias_dtype, scale=1e-6) for k in range(4)]
        h = b.tensor("h", (1, 2), "int16", scale=1 / 32768)
        c = b.tensor("c", (1, 2), "int16", scale=2.0 ** -11)
        b.tensors[h].variable = b.tensors[c].variable = True
        y = b.tensor("y", (1, 3, 2), "int16", scale=1 / 32768)
        b.op("UNIDIRECTIONAL_SEQUENCE_LSTM", [x, *w, -1, -1, -1, *bias, -1, -1, h, c, -1, -1, -1, -1], [y],
             "UnidirectionalSequenceLSTMOptions", FusedActivationFunction=4, TimeMajor=False)
        b.output(y)
        return b.save(path)

    for path, what in ((build(tmp_path / "zp.tflite", 5, "int64"), "zero point"),
                       (build(tmp_path / "b32.tflite", 0, "int32"), "int32")):
        assert_one_sentence_error(run_cli("analyze", str(path), "--target", "gap8"), str(path),
                                  "UNIDIRECTIONAL_SEQUENCE_LSTM", what)


HARNESS = r"""
#include <stdio.h>
#include "tw_lstm16.h"
int main(void) {
  for (int v = -32768; v < 32768; v++) { short o = tw_lstm16_sigmoid((short)v); fwrite(&o, 2, 1, stdout); }
  for (int pw = -16; pw <= -8; pw++)
    for (int v = -32768; v < 32768; v++) { short o = tw_lstm16_tanh((short)v, pw); fwrite(&o, 2, 1, stdout); }
  return 0; }
"""


def test_c_logistic_tanh_equal_the_golden_ones(tmp_path):
    """tw_lstm16.c's int16 Logistic and Tanh (cell scales 2^-16 .. 2^-8: the input shifted right,
    not shifted, shifted left) against golden/lstm16.py on every int16 input (-Werror)."""
    import shutil
    import subprocess

    from tilewise.golden import lstm16

    if shutil.which("gcc") is None:
        absent("gcc not found")
    c_dir = Path(lstm16.__file__).resolve().parents[1] / "bindings" / "portable" / "c"
    (tmp_path / "h.c").write_text(HARNESS)
    subprocess.run(["gcc", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{c_dir}", "h.c",
                    str(c_dir / "tw_lstm16.c"), str(c_dir / "tw_common.c"), "-o", "h"], cwd=tmp_path, check=True)
    raw = subprocess.run([str(tmp_path / "h")], capture_output=True, check=True).stdout
    got = np.frombuffer(raw, dtype=np.int16).reshape(10, 65536).astype(np.int64)
    a = np.arange(-32768, 32768)
    want = np.stack([lstm16.logistic16(a), *(lstm16.tanh16(a, p) for p in range(-16, -7))])
    assert [int(d) for d in (got != want).sum(axis=1)] == [0] * 10
    assert want[0, 32768] == 16384 and want[1:, 32768].tolist() == [0] * 9   # sigmoid(0) = 1/2, tanh(0) = 0


def _validate(path: Path, target, tmp: Path, on: str | None = None, cache=None) -> dict:
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.validate import validate_model

    graph = load_model(path)
    ns = schedule_network(lower(graph), target)
    kw = {"on": on} if on else {"cache": cache}
    r = validate_model(path, ns, graph, 1, 0, tmp, **kw).to_json()
    assert r["bit_exact"], r
    (i,) = [k for k, layer in enumerate(ns.layers.layers) if layer.op == "lstm"]
    return dict(r, lstm=r["layers"][i] if "layers" in r else None, binding=ns.placement(i).binding.name)


@pytest.mark.parametrize(("name", "target", "binding"), [
    ("kws16", "gap8", "lstm_cluster_s16"), ("small16", "gap8", "lstm_cluster_s16"),
    ("small16", "gap8", "lstm_s16"), ("small16", "stm32h7", "lstm_cluster_s16")])
def test_generated_c_bit_exact_on_host_builds(name, target, binding, lstm16_model, tmp_path, c_cache):  # noqa: F811
    """gap8's host build (the cluster kernel with its 8 cores as threads, which the scheduler takes,
    and the host core's lstm_s16, taken when the cluster's is left out) and stm32h7's (the pulp
    family's kernel on the Arm core, its C path): bit-exact with the golden model and TFLM."""
    from tilewise.targets.registry import get_target

    from .test_lstm_tflite import without_bindings

    _tflm()
    t = get_target(target)
    if binding == "lstm_s16":
        t = without_bindings(t, "lstm_cluster_s16")
    r = _validate(lstm16_model(name), t, tmp_path / "c", cache=c_cache)
    assert r["binding"] == binding and "TFLite Micro" in r["reference"], r


def test_generated_c_bit_exact_on_gvsoc(lstm16_model, tmp_path):
    """pulp-open on GVSoC: the small model's LSTM on the cluster's 8 cores (lstm_cluster_s16,
    pv.sdotsp.h) bit-exact, and its cycles within ±15% of its prediction (lstm_cost.CLUSTER16)."""
    from tilewise.targets.registry import get_target

    from .test_tflite_repair import require_isa

    _tflm()
    require_isa("gvsoc")
    r = _validate(lstm16_model("small16"), get_target("pulp-open"), tmp_path / "p", on="gvsoc")
    layer = r["lstm"]
    assert r["platform"] == "gvsoc" and r["binding"] == "lstm_cluster_s16", r
    assert abs(layer["predicted_cycles"] / layer["measured_cycles"] - 1) <= 0.15, layer


def test_generated_c_bit_exact_on_stm32h7_and_counted(lstm16_model, tmp_path):
    """The firmware under the instruction counter: bit-exact, and the LSTM layer's instructions
    within ±10% of its prediction (lstm_cost.ARM16: smlad on int16 words, the weights in flash)."""
    from tilewise.targets.registry import get_target

    from .test_tflite_repair import require_isa

    _tflm()
    require_isa("count")
    r = _validate(lstm16_model("small16"), get_target("stm32h7"), tmp_path / "p", on="count")
    layer = r["lstm"]
    assert r["platform"] == "count" and r["binding"] == "lstm_cluster_s16", r
    assert abs(layer["predicted_instructions"] / layer["measured_instructions"] - 1) <= 0.10, layer


@pytest.mark.parametrize("target", ["gap8", "stm32h7"])
def test_analyze_prices_the_16x8_lstm(target, lstm16_model):
    """analyze --json: the 16x8 LSTM on the pulp family's lstm_cluster_s16, its MACs 4·H·(I + H)
    per step, its constants' bytes (int8 w_x, w_h; int64 b_x; no recurrent bias), its cycles
    LstmCost's with two int16 lanes per word (lstm_cost.py CLUSTER16; stm32h7's in estimated
    cycles, ARM16's instructions scaled)."""
    import json

    from tilewise.bindings.pulp.lstm_cost import ARM16, CLUSTER16
    from tilewise.targets.registry import get_target
    from tilewise.targets.stm32h7 import CYCLES_PER_INSTRUCTION

    proc = run_cli("analyze", str(lstm16_model("kws16")), "--target", target, "--json")
    assert proc.returncode == 0, proc.stderr
    (layer,) = json.loads(proc.stdout)["layers"]
    assert layer["binding"] == "pulp/lstm_cluster_s16", layer
    steps, (i, h) = 49, (10, 32)
    assert layer["macs"] == steps * 4 * h * (i + h) == 263_424
    assert layer["weight_bytes"] == 4 * h * (i + h) + 8 * 4 * h
    module = get_target(target).module(layer["module"])
    cost = CLUSTER16 if target == "gap8" else ARM16
    mine = -(-h // module.cores)
    want = cost.call + steps * (cost.step + mine * (cost.cell + cost.word * (10 + 32) // 2))
    scale = 1.0 if target == "gap8" else CYCLES_PER_INSTRUCTION
    assert want * scale <= layer["cycles"] <= want * scale * 1.02 + 2000, (layer, want)
