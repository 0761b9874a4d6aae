"""Generated C for TFLite 16x8 models (int16 activations, int8 weights, int64 bias and accumulation,
bindings/portable/s16.py + tw_kernels/tw_s16.h), built and run on the host: outputs bit-exact with the golden
model and LiteRT BUILTIN_REF, L2<->L1 DMA bytes / transfers / chunks measured = predicted by the
schedule (whose byte counts use LoopNest.x_bits / y_bits = 16), at L1 sizes that force tiles:
conv 3x3 with padding, 1x1 stride 2, fully connected, conv -> fc, conv -> add / sub (residual).

The harness takes int16 inputs and its outputs are read back as int16; `tilewise validate` runs the
same path end to end (the last tests). What the 16x8 path does not run is refused at partition time
(so by analyze and generate alike) with a one-sentence error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilewise.codegen import generate
from tilewise.errors import TilewiseError
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate.build import build_host
from tilewise.validate.check import golden_outputs
from tilewise.validate.run import run_harness

from .codegen_cases import c_cache  # noqa: F401 (fixture)
from .pulp_targets import portable_target
from .tflite_builder import ACT, SAME, VALID, ModelBuilder, litert_interpreter, litert_invoke

R = np.random.RandomState(16)


def _w(shape) -> np.ndarray:
    return R.randint(-127, 128, size=shape).astype(np.int8)


def _b(k: int, span: int) -> np.ndarray:
    return R.randint(-span, span, size=k).astype(np.int64)


def _conv(b: ModelBuilder, x: int, c: int, k: int, f: int, out_hw: tuple[int, int], name: str,
          padding=SAME, stride: int = 1, act: str = "RELU") -> int:
    w = b.const(f"{name}_w", _w((k, f, f, c)), "int8", scale=R.uniform(0.002, 0.02, k), zero_point=0)
    bias = b.const(f"{name}_b", _b(k, 1_000_000), "int64", scale=np.full(k, 1e-6), zero_point=0)
    y = b.tensor(name, (1, *out_hw, k), "int16", scale=0.004, zero_point=0)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=padding, StrideW=stride, StrideH=stride,
         FusedActivationFunction=ACT[act], DilationWFactor=1, DilationHFactor=1)
    return y


def _fc(b: ModelBuilder, x: int, c: int, k: int, name: str, act: str = "NONE") -> int:
    w = b.const(f"{name}_w", _w((k, c)), "int8", scale=0.011, zero_point=0)
    bias = b.const(f"{name}_b", _b(k, 5_000_000), "int64", scale=4.4e-6, zero_point=0)
    y = b.tensor(name, (1, k), "int16", scale=0.03, zero_point=0)
    b.op("FULLY_CONNECTED", [x, w, bias], [y], "FullyConnectedOptions", FusedActivationFunction=ACT[act])
    return y


def conv3x3() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 12, 12, 8), "int16", scale=0.0005, zero_point=0)
    b.output(_conv(b, x, 8, 16, 3, (12, 12), "y"))
    return b


def conv1x1() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 10, 10, 24), "int16", scale=0.0005, zero_point=0)
    b.output(_conv(b, x, 24, 20, 1, (5, 5), "y", padding=VALID, stride=2, act="NONE"))
    return b


def fc() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 200), "int16", scale=0.0004, zero_point=0)
    b.output(_fc(b, x, 200, 24, "y"))
    return b


def conv_fc() -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 9, 9, 4), "int16", scale=0.0005, zero_point=0)
    h = _conv(b, x, 4, 8, 3, (4, 4), "h", padding=VALID, stride=2)
    b.output(_fc(b, h, 128, 10, "y"))
    return b


def residual(op: str) -> ModelBuilder:
    b = ModelBuilder()
    x = b.input("x", (1, 8, 8, 8), "int16", scale=0.0005, zero_point=0)
    h = _conv(b, x, 8, 8, 3, (8, 8), "h", act="NONE")
    y = b.tensor("y", (1, 8, 8, 8), "int16", scale=0.005, zero_point=0)
    b.op(op.upper(), [h, x], [y], f"{op.capitalize()}Options", FusedActivationFunction=ACT["NONE"])
    b.output(y)
    return b


def _run(model: ModelBuilder, l1_kb: float, tmp: Path, cache, n: int = 4):
    path = model.save(tmp / "m.tflite")
    lg = lower(load_model(str(path)))
    # the 16x8 kernels are the portable family's; priced by PULP-NN's model as their tiling cases
    # were chosen (tests/pulp_targets.py)
    ns = schedule_network(lg, portable_target("gap8", l1_kb=l1_kb), "model")
    proj = generate(ns, tmp / "proj")
    exe = build_host(proj, cache=cache)
    shape = lg.tensors[lg.inputs[0]].shape
    xs = [R.randint(-32768, 32768, size=shape).astype(np.int16) for _ in range(n)]
    xs += [np.full(shape, -32768, np.int16), np.full(shape, 32767, np.int16)]
    res = run_harness(proj, exe, xs)
    assert res.outputs is not None and res.stats, res.error
    outs = res.outputs.view(np.int16)
    it = litert_interpreter(path)
    for got, want, x in zip(outs, golden_outputs(lg, xs), xs):
        ref = next(iter(litert_invoke(it, [x]).values())).reshape(-1).astype(np.int64)
        assert np.array_equal(got, np.asarray(want).reshape(-1)), "generated C vs golden"
        assert np.array_equal(got.astype(np.int64), ref), "generated C vs LiteRT"
    st, m = res.stats, proj.manifest
    assert st["dma_bytes_min"] == st["dma_bytes_max"] == m["dma_bytes_predicted"]
    assert st["dma_transfers"] == m["dma_transfers_predicted"] * len(xs)
    assert st["dma_chunks"] == m["dma_chunks_predicted"] * len(xs)
    assert st["races"] == st["bad_waits"] == st["pending"] == 0
    return ns


def _tiles(ns, dim: str) -> list[int]:
    return [s.tiling(dim).count for s in ns.schedules if not s.untiled]


@pytest.mark.parametrize("name,model,l1_kb,tiled", [
    ("conv3x3_pad", conv3x3, 4, ("oy", "ox")),
    ("conv1x1_s2", conv1x1, 1, ("k", "ox")),
    ("conv_add", lambda: residual("add"), 2, ("oy",)),
    ("conv_sub", lambda: residual("sub"), 2, ("oy",)),
])
def test_16x8_conv_bit_exact_with_golden_and_litert_dma_as_predicted(name, model, l1_kb, tiled, tmp_path,
                                                                     c_cache):
    ns = _run(model(), l1_kb, tmp_path, c_cache)
    for dim in tiled:
        assert max(_tiles(ns, dim)) > 1, f"{name}: L1 of {l1_kb} kB did not force {dim} tiles"
    assert all(s.nest.x_bits == 16 and s.nest.y_bits == 16 for s in ns.schedules)


@pytest.mark.parametrize("name,model,l1_kb,tiled", [
    ("fc", fc, 2, ("c",)),                      # C tiles: int32 partial sums
    ("conv_fc", conv_fc, 0.5, ("k", "ox", "c")),
])
def test_16x8_fc_bit_exact_with_golden_and_litert_dma_as_predicted(name, model, l1_kb, tiled, tmp_path,
                                                                   c_cache):
    """LiteRT's reference 16x8 FULLY_CONNECTED requantizes as round(double(acc)·s_x·s_w/s_y) from
    the tensors' float scales (Requant.rounding "real"): golden, C and LiteRT agree bit for bit."""
    ns = _run(model(), l1_kb, tmp_path, c_cache)
    for dim in tiled:
        assert max(_tiles(ns, dim)) > 1, f"{name}: L1 of {l1_kb} kB did not force {dim} tiles"
    assert all(s.nest.x_bits == 16 and s.nest.y_bits == 16 for s in ns.schedules
               if s.nest.kind in ("conv", "fc"))


def test_16x8_unsupported_layers_keep_one_sentence_errors(tmp_path):
    b = ModelBuilder()
    x = b.input("x", (1, 6, 6, 4), "int16", scale=0.0005, zero_point=0)
    w = b.const("w", _w((1, 3, 3, 4)), "int8", scale=R.uniform(0.002, 0.02, 4), zero_point=0,
                quantized_dimension=3)
    bias = b.const("b", _b(4, 1000).astype(np.int32), "int32", scale=np.full(4, 1e-6), zero_point=0)
    y = b.tensor("y", (1, 6, 6, 4), "int16", scale=0.004, zero_point=0)
    b.op("DEPTHWISE_CONV_2D", [x, w, bias], [y], "DepthwiseConv2DOptions", Padding=SAME, StrideW=1,
         StrideH=1, DepthMultiplier=1, FusedActivationFunction=ACT["NONE"], DilationWFactor=1,
         DilationHFactor=1)
    b.output(y)
    lg = lower(load_model(str(b.save(tmp_path / "dw.tflite"))))
    # (an int32 bias: the 16x8 kernels take TFLite's int64-bias form only)
    with pytest.raises(TilewiseError, match=r"no module of gap8 runs depthwise tflite 16x8->16") as e:
        schedule_network(lg, get_target("gap8", l1_kb=4), "model")
    assert "\n" not in str(e.value)


def test_16x8_c_tiles_whose_partial_sums_may_overflow_int32_are_refused(tmp_path):
    b = ModelBuilder()
    x = b.input("x", (1, 4096), "int16", scale=0.0004, zero_point=0)
    b.output(_fc(b, x, 4096, 8, "y"))
    lg = lower(load_model(str(b.save(tmp_path / "big.tflite"))))
    # the binding keeps C whole for this layer: at 2 kB it cannot fit, and the reason says why
    with pytest.raises(TilewiseError, match=r"keeps c whole \(its int32 partial sums could "
                                            r"overflow if C were tiled\)") as e:
        # (the cluster alone: gap8's host core would run it untiled from L2)
        schedule_network(lg, get_target("gap8", l1_kb=2).with_modules(("cluster",)), "model")
    assert "\n" not in str(e.value)
    ns = schedule_network(lg, get_target("gap8", l1_kb=16), "model")
    assert _tiles(ns, "c")[0] == 1


def _validate_cli(model: ModelBuilder, tmp: Path) -> tuple[int, dict]:
    import json
    import subprocess
    import sys

    path = model.save(tmp / "m.tflite")
    proc = subprocess.run([sys.executable, "-m", "tilewise.cli", "validate", str(path), "--target", "gap8",
                           "--l1", "4", "--inputs", "3", "--json"], capture_output=True, text=True, timeout=300)
    return proc.returncode, json.loads(proc.stdout)


def test_validate_cli_on_16x8_conv(tmp_path):
    code, rep = _validate_cli(conv3x3(), tmp_path)
    assert code == 0 and rep["bit_exact"] and rep["golden_vs_reference"] == 0
    assert rep["dma_bytes_measured"] == rep["dma_bytes_predicted"]


def test_validate_cli_on_16x8_fc_is_bit_exact_with_litert(tmp_path):
    """The 16x8 dense layer requantizes as LiteRT's reference kernel does (round(double(acc)·scale)):
    validate reports golden = LiteRT = generated C (it used to differ by one code)."""
    code, rep = _validate_cli(fc(), tmp_path)
    assert code == 0 and rep["bit_exact"] and rep["golden_vs_reference"] == 0, rep
