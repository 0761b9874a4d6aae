"""NEMO integer ONNX as NEMO exports it (../shared/notes/integer-onnx.md), end to end.

Each pattern is a network built with onnx.helper (tests/nemo_models.py); the golden model and the
generated C (host build) are compared with onnxruntime on every output element:
- the Cast chain Mul(κ) → Add(λ) → Cast(int64) → Mul(m) → Div(D) → Cast(int64)[×2] → Cast(float)
  → Clip with D = 2^21 − 1, and with D = 2^21 (a floor shift where the clip proves it equal, the
  exact truncating division where it does not);
- the division on boundary accumulators: an exhaustive sweep of the input range through a 1×1
  conv whose m·(κ·acc + λ) land on and beside multiples of D, where floor, truncation and a shift
  by round(log2 D) (DORY's reading) give different codes — the test checks they do differ;
- a truncating float Div by 2^d without Floor (Cast to int64), chains of Pads before a Conv.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tilewise.frontend import load_model
from tilewise.golden.requant import divide
from tilewise.ir.params import TableAddParams
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.report.analysis import analyze_layers
from tilewise.targets.registry import get_target
from tilewise.validate.check import validate_model, validate_network
from tilewise.validate.reference import reference_outputs
from tilewise.validate.text import format_report

from . import nemo_models as nm
from .codegen_cases import c_cache  # noqa: F401 (fixture)

D21 = 2 ** 21 - 1


def _validate(path: Path, tmp: Path, cache, inputs=None, n_random: int = 6):
    """Golden and generated C against onnxruntime: on `inputs` (IR layout) or on random ones."""
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("gap8", l1_kb=2), "model")
    if inputs is None:
        report = validate_model(path, ns, graph, n_random=n_random, out_dir=tmp / "c", cache=cache)
    else:
        ref = reference_outputs(graph, path, inputs)
        report, _ = validate_network(ns, tmp / "c", inputs, model=path.name, reference_name="onnxruntime",
                                     reference=ref, cache=cache)
    assert report.reference == "onnxruntime" and report.golden_vs_reference == 0, report.to_json()
    assert report.bit_exact, report.to_json()
    return graph, ns


def _modes(graph) -> list[str]:
    return [n.params.requant.mode for n in graph.nodes if getattr(n.params, "requant", None) is not None]


# ------------------------------------------------------------------ the division on boundary values

def boundary_net(path: Path, m: int, div: int, lo: float, hi: float) -> Path:
    """x (1×1×16×16, every value 0..255 once) → 1×1 Conv to 4 channels (weights ±1, biases so the
    accumulators cover [−128, 127] both ways) → the Cast chain with κ = 1 and λ = (0, 0, 1, −1)."""
    net = nm.NemoNet("boundary", (1, 1, 16, 16))
    w = net.const("w", np.asarray([1, -1, 1, -1], np.float32).reshape(4, 1, 1, 1))
    b = net.const("b", np.asarray([-128, 127, -127, 128], np.float32))
    y = net.node("Conv", ["x", w, b], kernel_shape=[1, 1])
    y = net.cast_requant(y, np.ones((1, 4, 1, 1)), np.asarray([0, 0, 1, -1]).reshape(1, 4, 1, 1), m, div, lo, hi,
                         casts=2)
    return net.save(path, y)


def _sweep(graph) -> list[np.ndarray]:
    """The input holding every value 0..255 once, and its mirror (IR layout: NHWC uint8)."""
    t = graph.tensors[graph.inputs[0]]
    x = np.arange(256, dtype=np.uint8).reshape(t.shape)
    return [x, x[:, ::-1].copy()]


BOUNDARY = [  # (m, D, clip, floor differs, shift differs): m·z on, above and below multiples of D
    (D21, D21, (-128, 127), False, True),         # exact quotients: only the shift is off
    (D21 + 1, D21, (-128, 127), True, False),     # (D+1)·z / D: the shift happens to agree
    (D21 - 1, D21, (-128, 127), True, True),
    (1, 7, (-128, 127), True, True),
    (2 ** 21 + 1, 2 ** 21, (-128, 127), True, True),   # a power of two, truncation with negatives kept
]


@pytest.mark.parametrize("m,div,clip,floor_differs,shift_differs", BOUNDARY)
def test_division_on_boundary_values_matches_onnxruntime(m, div, clip, floor_differs, shift_differs,
                                                         tmp_path, c_cache):
    path = boundary_net(tmp_path / "b.onnx", m, div, *clip)
    graph = load_model(path)
    rq = next(n.params.requant for n in graph.nodes if getattr(n.params, "requant", None) is not None)
    if rq.mode == "shift":   # an int32 shift form equal on every accumulator (frontend/shift_fit.py)
        assert "shift_fit" in rq.semantics, rq.semantics
    else:
        assert (rq.mode, rq.division, rq.divisor, rq.post_multiplier) == ("div", "trunc", div, m)
    inputs = _sweep(graph)
    want = reference_outputs(graph, path, inputs)
    # the sweep discriminates: floor division and DORY's shift by round(log2 D) give other codes
    z = (np.arange(256, dtype=np.int64)[:, None] * np.array([1, -1, 1, -1]) + np.array([-128, 127, -127, 128])
         + np.array([0, 0, 1, -1])) * m
    floor = np.clip(divide(z, div, "floor"), *clip)
    shift = np.clip(z >> round(math.log2(div)), *clip)
    exact = np.clip(divide(z, div, "trunc"), *clip)
    got = want[0].reshape(-1, 4)
    assert np.array_equal(got, exact)
    assert (np.count_nonzero(floor != exact) > 0) == floor_differs
    assert (np.count_nonzero(shift != exact) > 0) == shift_differs
    _validate(path, tmp_path, c_cache, inputs)


def test_truncation_is_a_shift_only_where_the_clip_proves_it(tmp_path, c_cache):
    """D = 2^21 with the clip [0, 255]: onnxruntime's truncation equals the floor shift (negative
    quotients all clip to 0); analyze says so."""
    path = boundary_net(tmp_path / "b.onnx", 2 ** 21 + 1, 2 ** 21, 0, 255)
    graph, ns = _validate(path, tmp_path, c_cache, None)
    graph, ns = _validate(path, tmp_path, c_cache, _sweep(graph))
    rq = ns.layers.layers[0].requant
    assert rq.mode == "shift" and int(rq.shift[0]) == 21 and "lower bound 0" in rq.semantics
    row = analyze_layers(ns.layers).to_json()["layers"][0]
    assert row["requant"].startswith("shift: floor((k·acc + λ) / 2^21)") and "truncation" in row["requant"]


# ------------------------------------------------------------------ whole networks

@pytest.mark.parametrize("div,lo,casts,mode", [
    (D21, 0, 2, "div"),          # 2^21 − 1: exact division (uint8 activations); the second
                                 # layer's int32 shift form (shift_fit) below
    (D21, -128, 1, "div"),       # int8 activations, truncation kept
    (2 ** 21, 0, 1, "shift"),    # proven equal to the floor shift
    (2 ** 21, -128, 2, "div"),   # truncation with negatives: not a shift
])
def test_cast_chain_network_bit_exact(div, lo, casts, mode, tmp_path, c_cache):
    """Pad → Pad(0) → Conv → cast chain → Conv → cast chain → Flatten → Gemm → cast chain."""
    path = nm.nemo_cast_net(tmp_path / "n.onnx", div=div, lo=lo, hi=255 if lo == 0 else 127, casts=casts)
    graph, ns = _validate(path, tmp_path, c_cache)
    modes = _modes(graph)
    want = ["div", "shift"] if (div, lo) == (D21, 0) else [mode, mode]
    assert modes[:2] == want and len(modes) == 3
    assert graph.nodes[0].params.pads == (1, 1, 1, 1)      # both Pads folded into the conv
    # the outputs are not degenerate: the network's codes spread over the range
    out = reference_outputs(graph, path, [np.asarray(x) for x in _sweep_random(graph)])
    assert len(np.unique(np.concatenate([o.ravel() for o in out]))) >= 5


def _sweep_random(graph, n: int = 4) -> list[np.ndarray]:
    t = graph.tensors[graph.inputs[0]]
    rng = np.random.default_rng(1)
    return [rng.integers(0, 256, t.shape).astype(np.uint8) for _ in range(n)]


@pytest.mark.parametrize("lo,mode", [(0, "shift"), (-128, "div")])
def test_truncating_float_div_without_floor(lo, mode, tmp_path, c_cache):
    """Mul → Add → Div(2^d) in float → Cast(int64) → Cast(float) → Clip: the cast truncates."""
    net = nm.NemoNet("trunc", (1, 4, 6, 6), seed=5)
    y = net.conv("x", 4, 8, 3, pads=1, wmax=10)
    y = net.trunc_requant(y, net.rng.integers(1, 9, (1, 8, 1, 1)), net.rng.integers(-3000, 3000, (1, 8, 1, 1)),
                          12, lo, 255 if lo == 0 else 127)
    path = net.save(tmp_path / "t.onnx", y)
    graph, ns = _validate(path, tmp_path, c_cache)
    rq = ns.layers.layers[0].requant
    assert rq.mode == mode
    assert mode == "shift" or (rq.division, rq.divisor) == ("trunc", 4096)
    out = reference_outputs(graph, path, _sweep_random(graph))
    vals = np.concatenate([o.ravel() for o in out])
    assert len(np.unique(vals)) >= 5 and (lo == 0 or vals.min() < 0)


def test_analyze_json_names_each_layers_semantics(tmp_path):
    from tilewise.cli import main

    path = nm.nemo_cast_net(tmp_path / "n.onnx", div=D21, lo=0, hi=255)
    out = tmp_path / "a.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["analyze", str(path), "--json"])
    assert code in (0, None)
    layers = json.loads(buf.getvalue())["layers"]
    assert layers[0]["requant"].startswith("div: trunc(") and "2097151" in layers[0]["requant"]
    assert "not a power of two" in layers[0]["requant"] and "no int32 shift form" in layers[0]["requant"]
    # the second conv: the same division, equal to an int32 shift form on its accumulators
    assert layers[1]["requant"].startswith("shift: floor(") and "2097151" in layers[1]["requant"]
    assert "shift_fit" in layers[1]["requant"]
    del out


# ------------------------------------------------------------------ int32 accumulator output

@pytest.mark.parametrize("last", ["Gemm", "MatMul"])
def test_last_dense_layer_without_requantization_outputs_int32(last, tmp_path, c_cache):
    """… → Flatten → Gemm/MatMul as the graph output: the int32 accumulators, in C too."""
    net = nm.NemoNet("acc", (1, 3, 6, 6), seed=2)
    y = net.conv("x", 3, 4, 3, pads=1)
    y = net.cast_requant(y, np.ones((1, 4, 1, 1)), np.zeros((1, 4, 1, 1)), 3, 1023, 0, 255)
    y = net.flatten(y)
    y = net.gemm(y, 4 * 36, 10, wmax=127) if last == "Gemm" else net.matmul(y, 4 * 36, 10, wmax=127)
    path = net.save(tmp_path / "acc.onnx", y)
    graph, ns = _validate(path, tmp_path, c_cache)
    out = ns.layers.tensors[ns.layers.outputs[0]]
    assert out.dtype == "int32"
    assert ns.placement(len(ns.layers.layers) - 1).binding.name == "fully_connected_int_x8y32_shift"
    want = reference_outputs(graph, path, _sweep_random(graph))
    assert max(np.abs(w).max() for w in want) > 127    # beyond any 8-bit output
    row = analyze_layers(ns.layers).to_json()["layers"][-1]
    assert row["requant"].startswith("none: the int32 accumulator")


# ------------------------------------------------------------------ the reference refusing a model

def test_validate_says_in_one_sentence_when_onnxruntime_refuses_the_model(tmp_path):
    """A model tilewise reads but onnxruntime will not load (an IR version beyond its own): exit 2,
    one sentence quoting onnxruntime's reason — never an internal error."""
    import onnx

    from .test_cli_errors import assert_one_sentence_error, run_cli

    net = nm.NemoNet("refused", (1, 3, 6, 6), seed=1)
    y = net.conv("x", 3, 4, 3, pads=1)
    y = net.cast_requant(y, np.ones((1, 4, 1, 1)), np.zeros((1, 4, 1, 1)), 3, 1023, 0, 255)
    path = net.save(tmp_path / "refused.onnx", y)
    model = onnx.load(str(path))
    model.ir_version = 99
    onnx.save(model, str(path))
    proc = run_cli("validate", str(path), "--target", "gap8", "--inputs", "1")
    assert proc.returncode == 2, proc.stderr
    assert_one_sentence_error(proc, "refused.onnx", "onnxruntime failed while loading the model",
                              "IR version: 99")


# ------------------------------------------------------------------ residual add, average pool

@pytest.mark.parametrize("k_a,k_b,pool,tail", [(2, 0, 2, "Floor"), (1, 3, 3, "Clip"), (0, 0, 2, "Clip")])
def test_residual_branches_and_integer_average_pool(k_a, k_b, pool, tail, tmp_path, c_cache):
    """Branches Mul(2^k) → Add → Cast → Div(2^k) → Cast → Floor/Clip, and Pad → Pad(0) →
    AveragePool → Mul(n) → Mul → Div(4) → Floor: bit-exact, golden and C, vs onnxruntime."""
    path = nm.nemo_residual_pool_net(tmp_path / "r.onnx", k_a, k_b, pool, tail)
    graph, ns = _validate(path, tmp_path, c_cache, n_random=8)
    layers = ns.layers.layers
    pool_layer = next(l for l in layers if l.name.startswith("averagepool"))
    assert pool_layer.nest.kind == "dwconv" and pool_layer.nest.FY == pool
    assert "checked on every window sum" in pool_layer.requant.semantics
    # the residual add: one add by two tables where its chain is a floor shift, else a concat +
    # 1×1 conv whose requantization says so
    add = next(l for l in layers if l.name.startswith("add") and l.op in ("add", "conv2d"))
    assert (add.op == "add" and isinstance(add.params, TableAddParams)) or "residual Add" in add.requant.semantics
    # the network's codes are spread (not a constant output)
    out = reference_outputs(graph, path, _sweep_random(graph))
    assert len(np.unique(np.concatenate([o.ravel() for o in out]))) >= 5


def test_average_pool_refused_where_float32_differs_from_the_integer_result(tmp_path):
    """A 7×7 average times 147/4: rounded in float32 (as S/49 or as S·(1/49)) it gives other codes
    than the exact integer result on some window sums, so tilewise refuses and says where."""
    from tilewise.errors import UnsupportedOpError

    net = nm.NemoNet("pool7", (1, 2, 7, 7), seed=1)
    y = net.node("AveragePool", ["x"], kernel_shape=[7, 7])
    y = net.node("Mul", [y, net.const("pm", np.float32(147))])
    y = net.node("Div", [y, net.const("pd", np.float32(4))])
    y = net.node("Floor", [y])
    y = net.node("Clip", [y], min=-128.0, max=127.0)
    y = net.conv(y, 2, 2, 1)
    y = net.cast_requant(y, np.ones((1, 2, 1, 1)), np.zeros((1, 2, 1, 1)), 1, 1, -128, 127)
    path = net.save(tmp_path / "p.onnx", y)
    with pytest.raises(UnsupportedOpError, match=r"averages 49 values in float32, which for the window sum"):
        load_model(path)


# ------------------------------------------------------------------ float tails: cut, and said so

@pytest.mark.parametrize("tail,ops", [("split", "Gather, Sigmoid, Unsqueeze"), ("logsoftmax", "LogSoftmax")])
def test_float_tail_is_cut_at_the_integer_body_and_said(tail, ops, tmp_path, c_cache):
    """Gather/Unsqueeze splits, Sigmoid, LogSoftmax after the last Gemm: the network ends at the
    Gemm's int32 accumulators, compared with onnxruntime's value of that tensor, and every
    command says which outputs are compared instead of the model's."""
    path = nm.nemo_tail_net(tmp_path / "t.onnx", tail)
    graph = load_model(path)
    cut = graph.meta["onnx_cut"]
    assert cut["outputs"] == ["gemm11"] and len(cut["model_outputs"]) == (2 if tail == "split" else 1)
    assert len(graph.meta["notes"]) == 1 and ops in graph.meta["notes"][0] and "'gemm11'" in graph.meta["notes"][0]
    graph, ns = _validate(path, tmp_path, c_cache)
    assert ns.layers.tensors[ns.layers.outputs[0]].dtype == "int32"
    report = validate_model(path, ns, graph, n_random=2, out_dir=tmp_path / "c2", cache=c_cache)
    assert report.bit_exact and report.notes == graph.meta["notes"]
    assert "note:" in format_report(report)
    a = analyze_layers(ns.layers).to_json()
    assert a["notes"] == graph.meta["notes"]
