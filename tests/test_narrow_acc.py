"""Narrow accumulators (issue 15, seed 002 ch. 4): the three accumulator bounds of §4.4 on the
seed's hand values, the two's complement wrap-around (golden per MAC == golden once == C), and
`validate` on the idsp target with 32-bit and 16-bit accumulators."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from tilewise.frontend import load_model
from tilewise.golden import acc_bounds as ab
from tilewise.golden.layers import run_layer
from tilewise.golden.requant import apply_requant
from tilewise.ir.ops import Op
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.idsp import TARGET as IDSP
from tilewise.validate.check import validate_path
from tilewise.validate.report import OutputMismatch

from .conftest import absent, models_dir
from .onnx_models import Net, quantize

ROOT = Path(__file__).resolve().parents[1]
KWS = models_dir() / "mlperf_tiny" / "kws_dscnn.tflite"
WEIGHTED = (Op.CONV2D, Op.DEPTHWISE, Op.FULLY_CONNECTED)

# --- the bounds of seed 002 §4.3–4.4 on its own worked examples ---------------------------------

def test_integer_length_eq_4_6():
    assert ab.integer_length(3.5324) == 2          # seed 002 §4.1's example
    assert ab.integer_length(0.2593) == -1
    assert ab.integer_length(1.0) == 1
    with pytest.raises(ValueError):
        ab.integer_length(0.0)


def test_worst_case_bound_step_3_and_eq_4_14():
    # §4.4 step 3: 8-bit data, 8-bit weights, 1600 taps need 26 bits
    assert (8 + 8 - 1) + ab.delta_worst_case(1600) == 26
    # §4.4: BW(acc) = 16, K = 5·5·32 = 800 leaves 7 bits for BW(in) + BW(w)
    assert ab.available_bits(16, ab.delta_worst_case(800)) == 7
    assert ab.delta_worst_case(1) == 0


def test_weights_bound_gives_11_bits():
    # §4.4: max|w| = 0.2593, Σ|w| = 27.41 → BW(acc) + 1 − Δ = 11
    d = ab.delta_weights_from_stats(27.41, 0.2593)
    assert d == 6
    assert ab.available_bits(16, d) == 11
    w = np.array([0.2593, -0.2] + [0.1] * 270)     # Σ|w| = 27.4593, same Δ from the array
    assert ab.delta_weights(w) == 6


def test_output_bound_gives_14_bits():
    # §4.4: max|in| = 3.946, max|w| = 0.2593, max|acc| = 12.61 → 14 bits
    d = ab.delta_output(3.946, 0.2593, 12.61)
    assert d == 3
    assert ab.available_bits(16, d) == 14
    assert ab.delta_output(3.946, 0.2593, 0.01) == 0   # clamped at zero


def test_1d_search_space():
    sols = ab.solutions_1d(16, ab.delta_worst_case(800))
    assert sols == ((2, 5), (3, 4), (4, 3), (5, 2))
    assert all(a + b == 7 for a, b in sols)
    assert ab.solutions_1d(16, 3, min_bits=4, max_bits=10) == ((4, 10), (5, 9), (6, 8), (7, 7),
                                                               (8, 6), (9, 5), (10, 4))


def test_int_acc_range_and_bits():
    w = np.array([[1, -2, 3], [0, 0, -1]])
    lo, hi = ab.int_acc_range(w, np.array([10, -5]), -128, 127)
    # channel 0: 10 + (−128 + −254 + −384), 10 + (127 + 256 + 381)
    assert lo.tolist() == [10 - 128 - 254 - 384, -5 - 127]
    assert hi.tolist() == [10 + 127 + 256 + 381, -5 + 128]
    assert ab.int_acc_max_abs(w, np.array([10, -5]), -128, 127) == 774
    assert ab.acc_bits_needed(32767) == 16 and ab.acc_bits_needed(32768) == 17
    assert ab.acc_bits_needed(0) == 1


def test_wrap_is_twos_complement():
    v = np.array([0, 1, -1, 32767, 32768, -32768, -32769, 65536 + 5, -(1 << 40) - 3])
    assert ab.wrap(v, 16).tolist() == [0, 1, -1, 32767, -32768, -32768, 32767, 5, -3]
    assert ab.wrap(v, 8).tolist() == [0, 1, -1, -1, 0, 0, -1, 5, -3]
    assert ab.wrap(np.array([1 << 31]), 32).tolist() == [-(1 << 31)]


# --- a small network, once with full-range int8 weights and once with weights that fit 16 bits ---

def _net() -> onnx.ModelProto:
    n = Net("narrow", (1, 3, 8, 8), seed=5)
    y = n.conv("x", 8, (3, 3), (1, 1), (1, 1, 1, 1))
    y = n.conv(y, 8, (3, 3), (2, 2), (1, 1, 1, 1))
    return n.model([n.gemm(n.flatten(y), 10)])


def _shrunk(src: Path, out: Path, acc_bits: int = 16) -> Path:
    """`src` with every weight tensor rescaled to at most m in magnitude, m chosen per layer so
    that taps·m·128 + |bias| stays under 2^(acc_bits−1) (the int8 input's worst case): a network
    whose accumulators provably fit (the test checks the proof on the lowered layers)."""
    m = onnx.load(str(src))
    inits = {t.name: t for t in m.graph.initializer}
    for node in m.graph.node:
        if node.op_type != "DequantizeLinear" or node.input[0] not in inits:
            continue
        arr = numpy_helper.to_array(inits[node.input[0]])
        if arr.dtype != np.int8 or arr.ndim < 2:
            continue
        taps = int(np.prod(arr.shape[1:]))
        top = max(1, int(0.9 * (1 << (acc_bits - 1)) // (128 * taps)))
        small = np.rint(arr.astype(np.float64) * top / 127).astype(np.int8)
        inits[node.input[0]].CopyFrom(numpy_helper.from_array(small, node.input[0]))
    for node in m.graph.node:      # biases: int32, scaled alike so they stay in proportion
        if node.op_type == "DequantizeLinear" and node.input[0] in inits:
            arr = numpy_helper.to_array(inits[node.input[0]])
            if arr.dtype == np.int32:
                small = np.rint(arr.astype(np.float64) / 64).astype(np.int32)
                inits[node.input[0]].CopyFrom(numpy_helper.from_array(small, node.input[0]))
    onnx.save(m, str(out))
    return out


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("narrow")
    full = quantize(_net(), d / "full.onnx", per_channel=True)
    return full, _shrunk(full, d / "small.onnx")


def _layers(path: Path, bits: int):
    return schedule_network(lower(load_model(str(path))), IDSP.with_acc_bits(bits, "dsp")).layers


def _needed_bits(lg) -> dict[str, int]:
    return {layer.name: ab.acc_bits_needed(ab.int_acc_max_abs(layer.weights, layer.bias, -128, 127))
            for layer in lg.layers if layer.op in WEIGHTED}


def test_module_acc_bits_reach_the_layers(models):
    assert all(m.acc_bits == 32 for m in IDSP.modules)
    lg = _layers(models[0], 16)
    weighted = [layer for layer in lg.layers if layer.op in WEIGHTED]
    assert weighted and all(layer.acc_bits == 16 for layer in weighted)
    assert all(layer.acc_bits == 32 for layer in _layers(models[0], 32).layers)
    with pytest.raises(ValueError, match="between 8 and 32"):
        IDSP.with_acc_bits(4)
    with pytest.raises(KeyError):
        IDSP.with_acc_bits(16, "npu")


def test_golden_wrap_equals_wrap_after_every_mac(models):
    """The golden model wraps once; a 16-bit register wrapping after every MAC gives the same."""
    lg = _layers(models[0], 16)
    fc = next(layer for layer in lg.layers if layer.op == Op.FULLY_CONNECTED)
    assert _needed_bits(lg)[fc.name] > 16, "the full-range layer must overflow 16 bits"
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, size=lg.tensors[fc.inputs[0]].shape).astype(np.int8)
    got = run_layer(fc, lg, [x]).reshape(-1)
    flat = x.reshape(-1).astype(np.int64)
    accs = []
    wrapped_midway = False
    for k in range(fc.weights.shape[0]):
        acc = int(ab.wrap(int(fc.bias[k]), 16))
        for i in range(flat.size):
            exact = acc + int(fc.weights[k, i]) * int(flat[i])
            acc = int(ab.wrap(exact, 16))
            wrapped_midway |= acc != exact
        accs.append(acc)
    assert wrapped_midway
    want = apply_requant(np.array([accs], dtype=np.int64), fc.requant).reshape(-1)
    assert np.array_equal(got.astype(np.int64), want.astype(np.int64))
    wide = run_layer(replace(fc, acc_bits=32), lg, [x]).reshape(-1)
    assert not np.array_equal(got, wide)


def _output_mismatches(report, against: str) -> list:
    return [m for m in report.mismatches if isinstance(m, OutputMismatch) and m.against == against]


def test_idsp_16bit_fits_bit_exact(models, tmp_path):
    """Accumulators that provably fit 16 bits: C == golden == onnxruntime."""
    small = models[1]
    need = _needed_bits(_layers(small, 16))
    assert need and max(need.values()) <= 16, need
    assert ab.may_wrap(_layers(small, 16)) == ()
    r = validate_path(small, IDSP.with_acc_bits(16, "dsp"), n_random=6, out_dir=tmp_path / "p")
    assert r.bit_exact, r.mismatches
    assert r.golden_vs_reference == 0
    assert "k.acc_bits = 16;" in "".join(p.read_text() for p in (tmp_path / "p" / "layers").glob("*.c"))
    manifest = json.loads((tmp_path / "p" / "tilewise.json").read_text())
    assert {layer["acc_bits"] for layer in manifest["layers"] if layer["module"] == "dsp"
            and layer["op"] in WEIGHTED} == {16}


def test_idsp_16bit_wraps_like_the_golden_model(models, tmp_path):
    """Accumulators that do not fit: the C wraps exactly as the golden model (no C-vs-golden
    difference) and both differ from onnxruntime's 32-bit arithmetic."""
    full = models[0]
    need = _needed_bits(_layers(full, 16))
    assert max(need.values()) > 16
    assert [n for n, _, _ in ab.may_wrap(_layers(full, 16))] == [n for n, b in need.items() if b > 16]
    r = validate_path(full, IDSP.with_acc_bits(16, "dsp"), n_random=6, out_dir=tmp_path / "p")
    assert not _output_mismatches(r, "golden"), r.mismatches
    assert r.golden_vs_reference > 0
    assert any("16-bit accumulators" in n for n in r.notes)
    r32 = validate_path(full, IDSP, n_random=6, out_dir=tmp_path / "q")
    assert r32.bit_exact and r32.golden_vs_reference == 0


def test_idsp_kws_32bit_bit_exact(tmp_path):
    if not KWS.exists():
        absent(f"{KWS} is missing (set TILEWISE_MODELS)")
    r = validate_path(KWS, IDSP, n_random=4, out_dir=tmp_path / "kws")
    assert r.bit_exact, r.mismatches
    assert r.golden_vs_reference == 0


def test_idsp_16bit_wrap_across_input_channel_tiles(models, tmp_path):
    """With a small L1 the layers are tiled along their input channels: the partial sums stored
    between C-tiles are wrapped too, and the C still equals the golden model."""
    target = IDSP.with_overrides(l1_kb=1.0).with_acc_bits(16, "dsp")
    ns = schedule_network(lower(load_model(str(models[0]))), target)
    c_tiled = [layer.name for layer, s in zip(ns.layers.layers, ns.schedules)
               if layer.op in WEIGHTED and not s.untiled and s.psum]
    assert c_tiled, "1 kB of L1 must tile some layer along its input channels"
    r = validate_path(models[0], target, n_random=4, out_dir=tmp_path / "p")
    assert not _output_mismatches(r, "golden"), r.mismatches
    assert r.golden_vs_reference > 0


def test_cli_acc_bits_errors(tmp_path):
    import subprocess
    import sys

    model = ROOT / "tilewise" / "examples" / "example_cnn.onnx"
    for spec, words in (("npu=16", "has no module npu"), ("x", "expected N or MODULE=N"),
                        ("4", "between 8 and 32")):
        p = subprocess.run([sys.executable, "-m", "tilewise.cli", "analyze", str(model), "--target",
                            "idsp", "--acc-bits", spec], capture_output=True, text=True, cwd=tmp_path)
        assert p.returncode == 2, p.stderr
        assert words in p.stderr and "Traceback" not in p.stderr


def test_c_acc_wrap_matches_golden_wrap(tmp_path):
    """tw_common.h's tw_acc_wrap == acc_bounds.wrap on edge values, built -Wall -Wextra -Werror."""
    import subprocess

    values = [0, 1, -1, 127, 128, -129, 32767, 32768, -32768, -32769, 65541, 2**31 - 1, -2**31]
    bits = (8, 12, 16, 24, 31, 32)
    src = tmp_path / "wrap.c"
    src.write_text(
        '#include <stdio.h>\n#include "tw_common.h"\n'
        "int main(void)\n{\n"
        f"    static const long long v[] = {{{', '.join(f'{x}LL' for x in values)}}};\n"
        f"    static const int b[] = {{{', '.join(map(str, bits))}}};\n"
        "    unsigned i, j;\n"
        "    for (j = 0; j < sizeof b / sizeof b[0]; j++)\n"
        "        for (i = 0; i < sizeof v / sizeof v[0]; i++)\n"
        '            printf("%ld\\n", (long)tw_acc_wrap((int32_t)v[i], b[j]));\n'
        "    return 0;\n}\n")
    exe = tmp_path / "wrap"
    inc = ROOT / "tilewise" / "bindings" / "portable" / "c"
    subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{inc}", str(src), "-o",
                    str(exe)], check=True, capture_output=True)
    got = [int(t) for t in subprocess.run([str(exe)], capture_output=True, text=True,
                                           check=True).stdout.split()]
    want = [int(ab.wrap(x, b)) for b in bits for x in values]
    assert got == want
