"""The host-core module ("cpu") of every built-in target and the kernels only it takes
(bindings/portable/host.py, c/tw_host.c): kernels against the golden model, models with those ops
generated and validated bit-exact against LiteRT with the layers on the cpu, on the host and on
GVSoC, and the cpu's cost model (targets/pulp_open.py HOST) against GVSoC's cycles."""

from __future__ import annotations

import ctypes
import itertools
import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from tilewise.bindings import portable, pulp
from tilewise.bindings.portable.cost import PulpNN
from tilewise.frontend import load_model
from tilewise.golden.fixedpoint import multiply_by_quantized_multiplier
from tilewise.golden.shape_ops import rescale_values
from tilewise.ir.ops import Op
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.platforms.gvsoc import runner
from tilewise.platforms.pulp_open import toolchain
from tilewise.targets.pulp_open import HOST
from tilewise.targets.registry import get_target, list_targets
from tilewise.validate.check import validate_model

from . import cpu_models
from .conftest import absent, mlperf_path
from .tflite_builder import ModelBuilder
from .tw_kernel_calls import load_library, ptr

HOST_OPS = {"quantize", "transpose", "concat"}
P = ctypes.c_void_p


# ------------------------------------------------------------------------------ targets

def test_every_target_has_a_cpu_module_and_only_it_lists_the_host_kernels():
    for t in list_targets():
        cpu = t.module("cpu")
        assert cpu.cores == 1 and cpu.memory == "L2" and not cpu.scalable, t.name
        ops = {b.key.op for b in cpu.bindings}
        assert HOST_OPS <= ops, (t.name, ops)
        for m in t.modules:
            if m.name != "cpu":
                # (a PULP cluster transposes a tensor that fits its L1 itself: pulp/rows.py)
                host = [b.name for b in m.bindings if b.key.op == "quantize"
                        or (b.key.op == "transpose" and not b.name.startswith("transpose_l1"))
                        or b.name.startswith("concat_tflite")]
                assert not host, (t.name, m.name, host)
    # one call gives a host core's bindings (the diana target's cpu uses it)
    names = {b.name for b in portable.bindings(PulpNN(), host=True)}
    assert {"quantize", "quantize_8_16", "quantize_16_8", "transpose", "transpose_s16",
            "concat_tflite", "concat_onnx", "concat_s16_tflite"} <= names
    assert not {"quantize", "transpose"} & {b.name for b in portable.bindings(PulpNN())}
    assert {"quantize", "transpose"} <= {b.name for b in pulp.bindings(HOST, host=True)}


# ------------------------------------------------------------------------------ kernels

@pytest.fixture(scope="module")
def lib():
    lib = load_library()
    lib.tw_quantize.argtypes = [P, P, ctypes.c_int, P, ctypes.c_int, ctypes.c_int32]
    lib.tw_transpose.argtypes = [P, P, ctypes.c_int, ctypes.c_int, P, P]
    lib.tw_concat.argtypes = [P, P, P, ctypes.c_int, P, ctypes.c_int32]
    for f in (lib.tw_quantize, lib.tw_transpose, lib.tw_concat):
        f.restype = None
    return lib


def _quantize_c(lib, x, in_zp, mult, shift, out_zp, out_dtype):
    lo, hi = np.iinfo(out_dtype).min, np.iinfo(out_dtype).max
    prm = np.array([in_zp, mult, shift, out_zp, lo, hi], np.int32)
    y = np.zeros(x.size, out_dtype)
    lib.tw_quantize(ptr(prm), ptr(x), x.itemsize, ptr(y), y.itemsize, x.size)
    return y


@pytest.mark.parametrize("in_dtype,out_dtype", list(itertools.product((np.int8, np.int16),
                                                                       repeat=2)))
def test_quantize_kernel_equals_golden_on_edge_values(lib, in_dtype, out_dtype):
    """Every int8 value / int16 extremes and a spread, with multipliers and shifts at their ends
    (left shifts that wrap int32, right shifts to 31, M0 near 2^31), zero points at the ends."""
    info = np.iinfo(in_dtype)
    x = (np.arange(-128, 128) if in_dtype == np.int8 else
         np.r_[info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max,
               np.random.RandomState(1).randint(info.min, info.max + 1, 500)]).astype(in_dtype)
    oi = np.iinfo(out_dtype)
    for mult, shift in ((1 << 30, 0), (2147483647, -31), (1518500250, 3), (1073741824, 20),
                        (1717986918, -7), (1395864371, 12)):
        for in_zp, out_zp in ((0, 0), (info.min, oi.max), (info.max, oi.min), (17, -9)):
            got = _quantize_c(lib, x, in_zp, mult, shift, out_zp, out_dtype)
            want = np.clip(multiply_by_quantized_multiplier(x.astype(np.int64) - in_zp, mult, shift)
                           + out_zp, oi.min, oi.max)
            np.testing.assert_array_equal(got, want, err_msg=f"{mult} {shift} {in_zp} {out_zp}")


@pytest.mark.parametrize("dtype", [np.int8, np.int16])
def test_transpose_kernel_every_permutation_of_a_4d_tensor(lib, dtype):
    x = np.random.RandomState(2).randint(np.iinfo(dtype).min, np.iinfo(dtype).max + 1,
                                         (2, 3, 4, 5)).astype(dtype)
    strides = [s // x.itemsize for s in x.strides]
    for perm in itertools.permutations(range(4)):
        want = np.transpose(x, perm)
        y = np.zeros(want.size, dtype)
        dims = np.array(want.shape, np.int32)
        st = np.array([strides[d] for d in perm], np.int32)
        lib.tw_transpose(ptr(x), ptr(y), x.itemsize, 4, ptr(dims), ptr(st))
        np.testing.assert_array_equal(y, want.reshape(-1), err_msg=str(perm))
    # ranks 1, 2, 3 and 6
    for shape, perm in (((7,), (0,)), ((3, 5), (1, 0)), ((2, 3, 4), (2, 0, 1)),
                        ((2, 1, 3, 2, 2, 3), (5, 3, 1, 0, 4, 2))):
        x = np.arange(np.prod(shape)).astype(dtype).reshape(shape)
        want = np.transpose(x, perm)
        y = np.zeros(want.size, dtype)
        strides = [s // x.itemsize for s in x.strides]
        lib.tw_transpose(ptr(x), ptr(y), x.itemsize, len(shape),
                         ptr(np.array(want.shape, np.int32)),
                         ptr(np.array([strides[d] for d in perm], np.int32)))
        np.testing.assert_array_equal(y, want.reshape(-1), err_msg=str(perm))


def _concat_c(lib, parts, axis, luts=None):
    n = len(parts)
    out_shape = list(parts[0].shape)
    out_shape[axis] = sum(p.shape[axis] for p in parts)
    y = np.zeros(int(np.prod(out_shape)), parts[0].dtype)
    ins = (P * n)(*[p.ctypes.data for p in parts])
    inner = np.array([int(np.prod(p.shape[axis:])) * p.itemsize for p in parts], np.int32)
    lut_arr = None if luts is None else (P * n)(*[None if t is None else t.ctypes.data
                                                 for t in luts])
    lib.tw_concat(ins, lut_arr, ptr(inner), n, ptr(y), int(np.prod(out_shape[:axis])))
    return y.reshape(out_shape)


@pytest.mark.parametrize("dtype", [np.int8, np.int16])
def test_concat_kernel_on_every_axis(lib, dtype):
    r = np.random.RandomState(3)
    for axis in range(4):
        for n in (1, 2, 3, 5):
            parts = []
            for j in range(n):
                shape = [2, 3, 4, 5]
                shape[axis] = j + 1
                parts.append(r.randint(-30000 if dtype == np.int16 else -128, 128,
                                       shape).astype(dtype))
            np.testing.assert_array_equal(_concat_c(lib, parts, axis),
                                          np.concatenate(parts, axis=axis), err_msg=f"{axis} {n}")


def test_concat_kernel_requantizes_through_the_golden_tables(lib):
    """uint8 TFLite concatenation with rescaling (stored biased: u − 128)."""
    r = np.random.RandomState(4)
    qs = [(0.1, 128), (0.037, 90), (0.05, 100)]
    ys, yz = 0.05, 100
    parts_u = [r.randint(0, 256, (1, 2, 3, 2)) for _ in qs]
    luts = []
    for s, z in qs:
        if (np.float32(s), z) == (np.float32(ys), yz):
            luts.append(None)
        else:
            luts.append((rescale_values(np.arange(256), s, z, ys, yz, "uint8") - 128)
                        .astype(np.int8))
    stored = [(p - 128).astype(np.int8) for p in parts_u]
    got = _concat_c(lib, stored, 3, luts).astype(np.int64) + 128
    want = np.concatenate([p if t is None else rescale_values(p, s, z, ys, yz, "uint8")
                           for p, t, (s, z) in zip(parts_u, luts, qs)], axis=3)
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------------------ models

MODELS = {"conv_requant_conv": (cpu_models.conv_requant_conv, {"op1_quantize"}),
          "requant_16": (cpu_models.requant_16, {"op1_quantize", "op3_quantize"}),
          # its transpose fits L1: the cluster runs it (pulp/rows.py); the concat stays host-only
          "transpose_concat": (cpu_models.transpose_concat, {"op3_concatenation"})}


def _on_cpu(ns, names):
    got = {layer.name: ns.schedules[i].module for i, layer in enumerate(ns.layers.layers)}
    assert {n for n, m in got.items() if m == "cpu"} >= names, got
    assert all(got[n] == "cpu" for n in names), got


@pytest.mark.parametrize("target", ["gap8", "gap9", "pulp-open"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_with_host_only_ops_validate_bit_exact_with_the_layer_on_cpu(name, target,
                                                                           tmp_path):
    build, names = MODELS[name]
    path = build().save(tmp_path / f"{name}.tflite")
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target(target), "model")
    _on_cpu(ns, names)
    r = validate_model(path, ns, graph, 3, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r
    manifest = json.loads((tmp_path / "p" / "tilewise.json").read_text())
    modules = {row["name"]: row["module"] for row in manifest["layers"]}
    assert all(modules[n] == "cpu" for n in names), modules


def test_cli_validate_transpose_and_three_input_concat_on_gap8(tmp_path):
    path = cpu_models.transpose_concat(perm=(0, 1, 2, 3), axis=2).save(tmp_path / "m.tflite")
    proc = subprocess.run([sys.executable, "-m", "tilewise.cli", "validate", str(path),
                           "--target", "gap8", "--inputs", "3", "--json"],
                          capture_output=True, text=True, timeout=600)
    rep = json.loads(proc.stdout)
    assert proc.returncode == 0 and rep["bit_exact"] and rep["golden_vs_reference"] == 0, rep


def test_a_layer_no_module_runs_is_still_one_sentence(tmp_path):
    """A TFLite uint8 average pool: the golden model runs it, no module of any target (cpu
    included)."""
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 2), "uint8", scale=0.05, zero_point=128)
    y = b.tensor("y", (1, 2, 2, 2), "uint8", scale=0.05, zero_point=128)
    b.op("AVERAGE_POOL_2D", [x], [y], "Pool2DOptions", Padding=1, StrideW=2, StrideH=2,
         FilterWidth=2, FilterHeight=2, FusedActivationFunction=0)
    b.output(y)
    path = b.save(tmp_path / "mp.tflite")
    for target in ("gap8", "gap9", "pulp-open", "stm32h7", "idsp"):
        proc = subprocess.run([sys.executable, "-m", "tilewise.cli", "generate", str(path),
                               "--target", target, "-o", str(tmp_path / target)],
                              capture_output=True, text=True, timeout=300)
        err = proc.stderr.strip()
        assert proc.returncode == 2 and "\n" not in err, err
        assert "layer 'op0_average_pool_2d'" in err and f"cannot run on {target}" in err, err


# ------------------------------------------------------------------------------ GVSoC

@pytest.fixture()
def gvsoc() -> None:
    """GVSoC and the RISC-V toolchain, or skip (fail with TILEWISE_REQUIRE_MODELS=1)."""
    try:
        runner()
        toolchain()
    except Exception as e:   # noqa: BLE001 - the one-sentence TilewiseError
        absent(str(e))


def _cpu_only():
    t = get_target("pulp-open")
    return replace(t, modules=(t.module("cpu"),))


@pytest.mark.parametrize("name", ["conv_requant_conv", "transpose_concat"])
def test_host_only_ops_on_gvsoc(name, tmp_path, gvsoc):
    build, names = MODELS[name]
    path = build().save(tmp_path / f"{name}.tflite")
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("pulp-open"), "model")
    _on_cpu(ns, names)
    r = validate_model(path, ns, graph, 1, 0, tmp_path / "p", on="gvsoc").to_json()
    assert r["bit_exact"] and r["platform"] == "gvsoc", r


#: prediction / measurement of the cpu's model (bench/calibrate_cpu.py fits it on these)
CPU_TOLERANCE = {"host_ops": 0.10, "kws_dscnn": 0.15}


@pytest.mark.parametrize("name", sorted(CPU_TOLERANCE))
def test_cpu_model_against_gvsoc(name, tmp_path, gvsoc):
    """Every layer on the cpu (pulp-open with only that module): bit-exact, and the cycles
    GVSoC measures within the tolerance of the model's prediction for the network."""
    path = (mlperf_path(name) if name == "kws_dscnn" else
            getattr(cpu_models, name)().save(tmp_path / f"{name}.tflite"))
    graph = load_model(path)
    ns = schedule_network(lower(graph), _cpu_only(), "model")
    assert {s.module for s in ns.schedules} == {"cpu"}
    r = validate_model(path, ns, graph, 1, 0, tmp_path / "p", on="gvsoc").to_json()
    assert r["bit_exact"], r
    ratio = r["predicted_cycles"] / r["measured_cycles"]
    assert abs(ratio - 1) <= CPU_TOLERANCE[name], (r["predicted_cycles"], r["measured_cycles"])
    assert Op.QUANTIZE in {layer.op for layer in ns.layers.layers} or name == "kws_dscnn"
