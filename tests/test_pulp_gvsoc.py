"""The pulp kernels on the ISA: their XpulpV2 path on GVSoC's pulp-open cluster against the golden
model, and the seed-004 layer's MAC/cycle.

One firmware (tests/c/pulp_gvsoc_main.c on the project's bare-metal runtime: crt0, linker script,
tw_fw.c, tw_hal_pulp_open.c's fork) carries every case below with its golden output (cases.h,
written here): conv 3×3 / 5×5 / 2×2 (odd pixels, K mod 4, C mod 4, strides, asymmetric pads,
C tiles with partial sums, fewer pixel pairs than cores), 1×1 conv (padded, strided), dense
(rows, C tiles), depthwise (3×3, 5×5, 7×7, 3×1, 1×5, strides), every requant variant (tflite
double and single rounding, shift in 32 and 64 bits, onnx soft-float), add / sub / mul (the
split and the general input scaling), max / average pooling and both global average pools,
uint8 storage; each case on 1, 3 and 8 cores, inputs copied to L1 as the tiles are. A run prints
the mismatching bytes per case and core count: all must be 0. The same run times seed 004's
benchmark layer (16×16×32 → 16×16×64, 3×3, pad 1, whole in L1) on 1 and 8 cores: at least 1.6
and 11 MAC/cycle with TFLite's requantization (PULP-NN on GAP8 silicon: 1.82 / 13.07).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pytest

from tilewise.bindings.pulp import addfold, constants
from tilewise.bindings.pulp.simple import one_rounding
from tilewise.codegen.firmware import FIRMWARE_C
from tilewise.examples import EXAMPLE_ONNX
from tilewise.frontend import load_model
from tilewise.frontend.onnx_qparams import global_pool_scale
from tilewise.golden import elementwise as g_elt
from tilewise.golden import onnx_ops as g_onnx
from tilewise.golden import pool as g_pool
from tilewise.golden.conv import dense_acc
from tilewise.ir.ops import Op
from tilewise.ir.params import OnnxMeanParams, TfliteMeanParams
from tilewise.ir.requant import Requant, quantize_multiplier
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.platforms.gvsoc import execute as run_firmware
from tilewise.platforms.pulp_open import compile_args, link_args, toolchain
from tilewise.validate import validate_model
from tilewise.validate.firmware_run import parse

from . import tw_c_build as build
from .conftest import mlperf_path
from .pulp_targets import pulp_target
from .test_c_kernels import (
    POOL_CASES,
    add_params,
    conv_acc,
    golden_node,
    make_requant,
    pool_golden,
    random_conv,
    requantized,
)
from .test_gvsoc import gvsoc_present  # noqa: F401 (autouse fixture: skip without GVSoC)
from .tw_kernel_calls import ADD_PARAMS

VARIANTS = {"tflite": 0, "shift": 1, "onnx": 2, "tflite_single": 3, "shift32": 4, "tflite_right": 5,
            "onnx24": 6, "onnx_fpu": 7}
KINDS = ("conv", "conv1x1", "fc", "dw", "add", "sub", "mul", "maxpool", "avgpool", "gap",
         "gap_onnx", "nop")
ALL_CORES = (1, 3, 8)
SEED004_MACS = 16 * 16 * 64 * 3 * 3 * 32


@dataclass
class Case:
    """One firmware case (pulp_gvsoc_main.c's tw_case_t)."""

    name: str
    kind: str
    prm: list[int]
    bufs: list[np.ndarray | int]       # data to copy into L1, or a byte count (output, scratch)
    want: np.ndarray
    variant: str = "tflite"
    out: int = 0
    cores: tuple[int, ...] = ALL_CORES
    macs: int = 0
    extra: dict = field(default_factory=dict)


def _window(h, w, oh, ow, fy, fx, stride, pads) -> list[int]:
    return [h, w, oh, ow, fy, fx, *stride, *pads]


def _variant_rq(mode: str, acc, rng, layer_bound):
    """A requant of `mode` ("shift32": shift mode whose k·acc + lambda provably fits int32 for the
    layer's accumulator bound) and its kernel variant."""
    if mode == "shift32":
        k = acc.shape[-1]
        mult = rng.integers(1, max(2, (1 << 30) // int(layer_bound.max())), k)
        return (Requant("shift", mult, rng.integers(8, 40, k), 3, -128, 127,
                        bias=rng.integers(-(1 << 29), 1 << 29, k)), "shift32")
    if mode == "tflite_right":
        rq = make_requant("tflite", acc, rng)
        rq = replace(rq, shift=np.minimum(np.asarray(rq.shift), -1))    # right shifts only
        assert constants.tflite_right_fits(rq, layer_bound)
        return rq, "tflite_right"
    if mode == "onnx24":
        # onnx's requantization without the range check: scales < 1/4, |acc| <= 2^24 proven
        rq = make_requant("onnx", acc, rng)
        rq = replace(rq, scale=np.minimum(np.asarray(rq.scale, np.float32), np.float32(0.2499999)))
        assert int(np.max(layer_bound)) <= constants.ONNX24_ACC
        return rq, "onnx24"
    if mode == "onnx_fpu":        # onnx mode as float32 operations (on an FPU where built for one)
        return make_requant("onnx", acc, rng), "onnx_fpu"
    rq = make_requant(mode, acc, rng)
    return rq, "tflite" if mode == "tflite" else mode


def _bound(bias, wt) -> np.ndarray:
    k = wt.shape[0]
    return np.abs(np.asarray(bias, np.int64)) + 128 * np.abs(wt.astype(np.int64)).reshape(k, -1).sum(1)


def _rq_prm(rq: Requant) -> list[int]:
    return [int(rq.zero_point), int(rq.qmin), int(rq.qmax)]


def _words(rq: Requant, k: int, v: str) -> np.ndarray:
    return np.stack(constants.words_of(rq, k, v), axis=1).ravel().astype(np.int32)


def conv_case(name, rng, h, w, c, k, fy, fx, stride, pads, mode, c_tiles=None, cores=ALL_CORES):
    x, wt, bias, zp_x = random_conv(rng, h, w, c, k, fy, fx)
    acc = conv_acc(x, wt, bias, stride, pads, (1, 1), zp_x)
    rq, v = _variant_rq(mode, acc, rng, _bound(bias, wt))
    want = requantized(acc, rq)
    oh, ow = want.shape[:2]
    c_tiles = c_tiles or [c]
    starts = np.cumsum([0, *c_tiles])
    tiles = []
    for c0, c1 in zip(starts[:-1], starts[1:]):
        tiles += [np.ascontiguousarray(x[..., c0:c1]), np.ascontiguousarray(wt[..., c0:c1])]
    kind = "conv1x1" if fy * fx == 1 else "conv"
    # RISC-V: two receptive fields per core on 8 cores; the Cortex-M7 (one core, test_qemu.py):
    # the Arm path's unpacked columns, 4 bytes per value of both (tw_pulp_matmul_arm.h)
    l4 = (fy * fx * max(c_tiles) + 3) // 4 * 4
    im2col = 8 * 2 * l4 if kind == "conv" else 4 * l4
    prm = _window(h, w, oh, ow, fy, fx, stride, pads) + [*c_tiles, *[0] * (4 - len(c_tiles)),
                                                           len(c_tiles), k, zp_x, *_rq_prm(rq)]
    psum = 4 * want.size if len(c_tiles) > 1 else 4
    bufs = [want.nbytes, im2col, psum, bias.astype(np.int32), _words(rq, k, v), *tiles]
    return Case(name, kind, prm, bufs, want, v, cores=cores, macs=oh * ow * k * fy * fx * c)


def fc_case(name, rng, rows, c, k, mode, c_tiles=None):
    zp_x = int(rng.integers(-30, 31))
    x = rng.integers(-128, 128, (rows, c)).astype(np.int8)
    wt = rng.integers(-127, 128, (k, c)).astype(np.int8)
    bias = (rng.integers(-4000, 4000, k) - zp_x * wt.astype(np.int64).sum(axis=1)).astype(np.int32)
    acc = dense_acc(x, wt, bias, 0, 0)
    rq, v = _variant_rq(mode, acc, rng, _bound(bias, wt))
    want = requantized(acc, rq)
    c_tiles = c_tiles or [c]
    starts = np.cumsum([0, *c_tiles])
    tiles = []
    for c0, c1 in zip(starts[:-1], starts[1:]):
        tiles += [np.ascontiguousarray(x[:, c0:c1]), np.ascontiguousarray(wt[:, c0:c1])]
    prm = [rows, *[0] * 11, *c_tiles, *[0] * (4 - len(c_tiles)), len(c_tiles), k, 0, *_rq_prm(rq)]
    psum = 4 * want.size if len(c_tiles) > 1 else 4
    return Case(name, "fc", prm, [want.nbytes, 4, psum, bias, _words(rq, k, v), *tiles],
                want, v, macs=rows * c * k)


def dw_case(name, rng, h, w, c, fy, fx, stride, pads, mode, u8=False):
    x, wt, bias, zp_x = random_conv(rng, h, w, c, 0, fy, fx, depthwise_mult=1)
    acc = conv_acc(x, wt, bias, stride, pads, (1, 1), zp_x, groups=c)
    rq, v = _variant_rq(mode, acc, rng, _bound(bias, wt))
    want = requantized(acc, rq)
    oh, ow = want.shape[:2]
    w4 = (fx + 3) // 4 * 4
    scratch = 8 * fy * (((ow - 1) * stride[1] + w4 + 3) // 4 * 4 + w4)
    prm = _window(h, w, oh, ow, fy, fx, stride, pads) + [c, zp_x, *_rq_prm(rq)]
    return Case(name, "dw", prm, [want.nbytes, scratch, x, np.ascontiguousarray(wt[..., 0]),
                                  bias, _words(rq, c, v)], want, v, macs=oh * ow * c * fy * fx)


def elementwise_case(name, rng, op, n, left_shift=20, fold=True):
    """add / sub in the form the binding picks (the folded one where addfold.fold finds it,
    `fold` False: tw_pulp_add_s8 always), or mul."""
    params, prm, (za, sa), (zb, sb), (zo, so) = add_params(rng, op)
    if op != "mul" and left_shift != 20:     # rescale the output for another left shift
        mo = quantize_multiplier(2.0 * max(sa, sb) / ((1 << left_shift) * so))
        params = replace(params, left_shift=left_shift, output_multiplier=mo[0], output_shift=mo[1])
        prm[6:9] = [left_shift, mo[0], mo[1]]
    a = rng.integers(-128, 128, (1, n)).astype(np.int8)
    b = rng.integers(-128, 128, (1, n)).astype(np.int8)
    fn = {"add": g_elt.add, "sub": g_elt.sub, "mul": g_elt.mul}[op]
    want = golden_node(fn, Op(op), params, [(a, za, sa), (b, zb, sb)], a.shape, zo, so)
    if op == "mul":
        prm = [prm[0], prm[3], prm[7], prm[8], prm[9], prm[10], prm[11], 0, 0, 0, 0, 0]
    tables = [] if op == "mul" else [2 * 256 * 4]          # tw_pulp_add_tables' scratch
    p = dict(zip(ADD_PARAMS, prm))
    right = 0 if op == "mul" else int(one_rounding(p))
    f = addfold.fold(p, op == "sub") if op != "mul" and fold else None
    folded = [0] * 7 if f is None else [1, *f.words()]
    return Case(name, op, [*prm, n, right, *folded], [want.nbytes, a, b, *tables], want)


def pool_case(name, rng, key, op):
    """Pooling of POOL_CASES[key] (or a geometry tuple of the same form)."""
    geometry = POOL_CASES[key] if isinstance(key, str) else key
    h, w, c, fy, fx, stride, pads, _ = geometry
    x, (qmin, qmax), want = pool_golden(rng, geometry, op)
    prm = _window(h, w, want.shape[0], want.shape[1], fy, fx, stride, pads) + [c, qmin, qmax]
    return Case(name, f"{op}pool", prm, [want.nbytes, x], want)


def gap_case(name, rng, h, w, c, onnx=False):
    x = rng.integers(-128, 128, (h, w, c)).astype(np.int8)
    si, so = rng.uniform(0.02, 0.1, 2)
    zi, zo = (int(v) for v in rng.integers(-30, 31, 2))
    if onnx:
        scale = global_pool_scale(si, so, h * w)
        rq = Requant("onnx", np.ones(1, np.int64), np.zeros(1, np.int64), zo, -128, 127,
                     scale=np.asarray([scale], np.float32))
        params = OnnxMeanParams(axes=(1, 2), keepdims=True, x_zero_point=zi, count=h * w,
                                requant=rq)
        want = golden_node(g_onnx.mean, Op.MEAN, params, [(x[None], zi, si)], (1, 1, 1, c), zo, so)
        bits = int(np.asarray([scale], np.float32).view(np.int32)[0])
        prm = [h * w, c, 1, zi, bits, 0, zo, -128, 127]
    else:
        m, s = quantize_multiplier(float(si / so))
        params = TfliteMeanParams(axes=(1, 2), keepdims=True, multiplier=m, shift=s)
        want = golden_node(g_pool.mean, Op.MEAN, params, [(x[None], zi, si)], (1, 1, 1, c), zo, so)
        mp, sp = g_pool._mean_scale(m, s, h * w)
        prm = [h * w, c, 1, zi, mp, sp, zo, -128, 127]
    return Case(name, "gap_onnx" if onnx else "gap", prm, [c, x.reshape(h * w, c)],
                want.reshape(c))


def cases() -> list[Case]:
    rng = np.random.default_rng(2026)
    out = [conv_case(f"conv3x3_{m}", rng, 9, 7, 8, 8, 3, 3, (1, 1), (1, 1, 1, 1), m)
           for m in ("tflite", "tflite_right", "tflite_single", "shift", "shift32", "onnx",
                     "onnx24")]
    out += [conv_case("conv5x5_s2_c5_k7", rng, 11, 9, 5, 7, 5, 5, (2, 2), (2, 1, 1, 2), "tflite"),
            conv_case("conv3x3_ctiles_5_7", rng, 6, 5, 12, 9, 3, 3, (1, 1), (1, 1, 1, 1),
                      "tflite_single", c_tiles=[5, 7]),
            conv_case("conv2x4_s13_c7_k4", rng, 5, 13, 7, 4, 2, 4, (1, 3), (0, 2, 1, 1), "shift"),
            conv_case("conv3x3_1x3_pixels_k37", rng, 3, 5, 6, 37, 3, 3, (1, 1), (0, 0, 0, 0),
                      "tflite"),
            conv_case("conv1x1_c16_k6", rng, 6, 5, 16, 6, 1, 1, (1, 1), (0, 0, 0, 0), "tflite"),
            conv_case("conv1x1_padded_s2_c11_k9", rng, 7, 6, 11, 9, 1, 1, (2, 1), (2, 0, 1, 3),
                      "onnx"),
            conv_case("conv1x1_ctiles", rng, 5, 5, 20, 10, 1, 1, (1, 1), (0, 0, 0, 0), "shift32",
                      c_tiles=[8, 8, 4])]
    out += [fc_case("fc_1x37_k10", rng, 1, 37, 10, "tflite"),
            fc_case("fc_2x64_k13_ctiles", rng, 2, 64, 13, "shift", c_tiles=[16, 16, 16, 16]),
            fc_case("fc_3x29_k4", rng, 3, 29, 4, "tflite_single"),
            fc_case("fc_1x250_k3", rng, 1, 250, 3, "onnx"),
            fc_case("fc_1x64_k20", rng, 1, 64, 20, "shift32"),
            fc_case("fc_1x48_k12", rng, 1, 48, 12, "tflite_right"),
            fc_case("fc_1x96_k9_onnx24", rng, 1, 96, 9, "onnx24")]
    out += [dw_case("dw3x3_s1_c13", rng, 10, 9, 13, 3, 3, (1, 1), (1, 1, 1, 1), "tflite"),
            dw_case("dw3x3_s2_c16", rng, 11, 12, 16, 3, 3, (2, 2), (1, 1, 1, 1), "shift32"),
            dw_case("dw5x5_s2_c5", rng, 11, 12, 5, 5, 5, (2, 2), (2, 2, 1, 2), "tflite_single"),
            dw_case("dw7x7_s3_c3", rng, 13, 9, 3, 7, 7, (3, 3), (3, 2, 3, 3), "shift"),
            dw_case("dw3x1_c8", rng, 6, 5, 8, 3, 1, (1, 1), (1, 0, 1, 0), "onnx"),
            dw_case("dw1x5_s12_c6", rng, 5, 13, 6, 1, 5, (1, 2), (0, 2, 0, 2), "tflite"),
            dw_case("dw3x3_kws_25x5_c64", rng, 25, 5, 64, 3, 3, (1, 1), (1, 1, 1, 1), "tflite"),
            dw_case("dw3x3_c24_right", rng, 8, 8, 24, 3, 3, (1, 1), (1, 1, 1, 1), "tflite_right"),
            dw_case("dw3x3_c12_onnx24", rng, 7, 6, 12, 3, 3, (1, 1), (1, 1, 1, 1), "onnx24")]
    out += [elementwise_case(f"{op}_{n}", rng, op, n) for op in ("add", "sub", "mul")
            for n in (7, 1000)]
    out += [elementwise_case("add_left_shift_5", rng, "add", 300, left_shift=5)]
    out += [elementwise_case(f"{op}_{n}_by_tables", rng, op, n, fold=False) for op in ("add", "sub")
            for n in (7, 1000)]
    out += [pool_case(f"{op}pool_{k}", rng, k, op) for op in ("max", "avg") for k in POOL_CASES]
    out += [gap_case("gap_5x5x16", rng, 5, 5, 16), gap_case("gap_7x3x13", rng, 7, 3, 13),
            gap_case("gap_onnx_8x8x32", rng, 8, 8, 32, onnx=True),
            gap_case("gap_onnx_5x3x13", rng, 5, 3, 13, onnx=True)]
    # onnx mode in float32 (the onnx_fpu variant; its own generator, the other cases' unchanged)
    f = np.random.default_rng(2027)
    out += [conv_case("conv3x3_onnx_fpu", f, 9, 7, 8, 8, 3, 3, (1, 1), (1, 1, 1, 1), "onnx_fpu"),
            conv_case("conv1x1_s2_onnx_fpu", f, 7, 6, 11, 9, 1, 1, (2, 1), (2, 0, 1, 3), "onnx_fpu"),
            fc_case("fc_1x250_k3_onnx_fpu", f, 1, 250, 3, "onnx_fpu"),
            dw_case("dw3x3_c13_onnx_fpu", f, 10, 9, 13, 3, 3, (1, 1), (1, 1, 1, 1), "onnx_fpu")]
    return out + perf_cases(rng)


def perf_cases(rng) -> list[Case]:
    """Layer-sized cases on 1 and 8 cores for the timings: seed 004's layer (both requant kinds),
    then one of each kernel kind (cycles per output), and an empty fork to subtract."""
    both = (1, 8)
    out = [conv_case(f"seed004_{m}", rng, 16, 16, 32, 64, 3, 3, (1, 1), (1, 1, 1, 1), m,
                     cores=both) for m in ("tflite", "tflite_right", "shift32")]
    out += [conv_case("perf_conv1x1_16x16x64_k64", rng, 16, 16, 64, 64, 1, 1, (1, 1), (0,) * 4,
                      "tflite", cores=both),
            replace(fc_case("perf_fc_256_k128", rng, 1, 256, 128, "tflite"), cores=both),
            replace(dw_case("perf_dw3x3_16x16x64", rng, 16, 16, 64, 3, 3, (1, 1), (1, 1, 1, 1),
                            "tflite"), cores=both),
            replace(elementwise_case("perf_add_8192", rng, "add", 8192), cores=both),
            replace(elementwise_case("perf_add_8192_by_tables", rng, "add", 8192, fold=False),
                    cores=both),
            replace(elementwise_case("perf_mul_8192", rng, "mul", 8192), cores=both),
            replace(pool_case("perf_maxpool_16x16x64_2x2", rng, (16, 16, 64, 2, 2, (2, 2), (0,) * 4,
                                                                   None), "max"), cores=both),
            replace(pool_case("perf_avgpool_16x16x64_2x2", rng, (16, 16, 64, 2, 2, (2, 2), (0,) * 4,
                                                                   None), "avg"), cores=both),
            replace(gap_case("perf_gap_8x8x64", rng, 8, 8, 64), cores=both),
            Case("fork", "nop", [], [4], np.full(4, 0x5A, np.int8), cores=both)]
    return out


# ------------------------------------------------------------------------------ the firmware

def _c_array(name: str, a: np.ndarray) -> str:
    flat = np.asarray(a).reshape(-1)
    ctype = "int32_t" if flat.dtype.itemsize == 4 else "int8_t"
    body = ",".join(str(int(v)) for v in flat)
    return f"static const {ctype} {name}[{max(flat.size, 1)}] __attribute__((aligned(4))) = {{{body}}};\n"


def cases_header(cs: list[Case]) -> str:
    text = [f"/* generated by tests/test_pulp_gvsoc.py: {len(cs)} cases */\n"]
    rows = []
    for i, c in enumerate(cs):
        bufs = []
        for j, b in enumerate(c.bufs):
            if isinstance(b, (int, np.integer)):
                bufs.append(f"{{NULL, {int(b)}}}")
            else:
                arr = np.asarray(b)
                arr = arr.astype(np.int32) if arr.dtype.itemsize == 4 else arr.astype(np.int8)
                text.append(_c_array(f"c{i}_b{j}", arr))
                bufs.append(f"{{c{i}_b{j}, {arr.nbytes}}}")
        text.append(_c_array(f"c{i}_want", np.asarray(c.want).astype(np.int8)))
        text.append(f"static const tw_buf_t c{i}_bufs[] = {{{', '.join(bufs)}}};\n")
        prm = ", ".join(str(int(v)) for v in (c.prm + [0] * 24)[:24])
        mask = sum(1 << n for n in c.cores)
        rows.append(f"    {{{KINDS.index(c.kind)}, {VARIANTS[c.variant]}, {{{prm}}}, {len(c.bufs)}, "
                    f"c{i}_bufs, {c.out}, c{i}_want, {mask}}},  /* {c.name} */")
    text.append(f"#define TW_CASES {len(cs)}\nstatic const tw_case_t tw_cases[] = {{\n")
    text.append("\n".join(rows) + "\n};\n")
    return "".join(text)


def build_firmware(cs: list[Case], out: Path, main: str = "pulp_gvsoc_main.c",
                   header: str | None = None, family: Path | None = None) -> Path:
    """The firmware of tests/c/`main` with the cases' header (`header`, else cases_header(cs)),
    the portable and pulp kernels and, given, another family's C folder (`family`)."""
    tc = toolchain()
    out.mkdir(parents=True, exist_ok=True)
    (out / "cases.h").write_text(cases_header(cs) if header is None else header)
    fw = FIRMWARE_C / "pulp_open"
    hal = build.C_ROOT / "tw_hal"
    extra = [] if family is None else sorted(family.glob("*.c"))
    srcs = [fw / "crt0.S", fw / "tw_fw.c", hal / "tw_hal_pulp_open.c", build.TESTS_C / main,
            *build.kernel_sources(), *build.pulp_sources(), *extra]
    includes = [out, fw, hal, build.KERNELS, build.PULP, *([] if family is None else [family])]
    objects = []
    for s in srcs:
        obj = out / f"{s.parent.name}_{s.name}.o"
        build.compile_object(compile_args(tc, includes, s, obj), s, obj)
        objects.append(obj)
    elf = out / "kernels.elf"
    build.run_cmd(link_args(tc, fw / "link.ld", objects, elf))
    return elf


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    cs = cases()
    run = parse(run_firmware(build_firmware(cs, tmp_path_factory.mktemp("pulp_gvsoc")), timeout=600))
    assert run.status == 0 and "TW_DONE" in run.text, run.text[-2000:]
    got = {}
    for m in re.finditer(r"TW_CASE (\d+) (\d+) (\d+) (\d+)", run.text):
        i, cores, bad, cycles = (int(v) for v in m.groups())
        got[(cs[i].name, cores)] = (bad, cycles)
    return cs, got


def test_every_kernel_bit_exact_on_gvsoc(results):
    cs, got = results
    assert set(got) == {(c.name, n) for c in cs for n in c.cores}
    bad = {k: v[0] for k, v in got.items() if v[0]}
    assert not bad, bad
    kinds = {c.kind for c in cs if c.name != "fork"}
    assert kinds == set(KINDS) - {"nop"} and {c.variant for c in cs} == set(VARIANTS)


def test_seed004_layer_mac_per_cycle(results):
    """seed 004's layer in L1, TFLite requantization, in the variant the binding picks for it
    (tflite_right: its shifts are negative): >= 1.6 MAC/cycle on 1 core, >= 11 on 8; the general
    tflite variant (any shift) within 5% of it."""
    cs, got = results
    mac = {(v, n): SEED004_MACS / got[(f"seed004_{v}", n)][1]
           for v in ("tflite_right", "tflite") for n in (1, 8)}
    assert mac[("tflite_right", 1)] >= 1.6 and mac[("tflite_right", 8)] >= 11, mac
    assert all(mac[("tflite", n)] >= 0.95 * mac[("tflite_right", n)] for n in (1, 8)), mac


# ------------------------------------------------------------------------------ networks

def layer_kind(nest) -> str:
    """The layer kinds of the issue's acceptance: 3x3 (any kernel > 1x1) and 1x1 conv, depthwise,
    add, pool (windowed and global), dense; "other" for the untiled portable kernels."""
    if nest.kind == "conv":
        return "conv1x1" if nest.FY * nest.FX == 1 else "conv3x3"
    return {"dwconv": "depthwise", "fc": "dense", "add": "add", "pool": "pool",
            "gap": "pool"}.get(nest.kind, "other")


#: prediction / measurement allowed for a network (±15%, the issue's acceptance) and for each
#: layer kind that takes at least MAJOR of its cycles (±20%: within one network a kind is a few
#: layers of one shape — kws_dscnn's four depthwise layers are 1.18; summed over the four MLPerf
#: Tiny models, bench table 6b, each kind is within ±15%)
TOLERANCE, KIND_TOLERANCE, MAJOR = 0.15, 0.20, 0.05


@pytest.mark.parametrize("name", ["example", "kws_dscnn", "ic_resnet8"])
def test_networks_on_pulp_kernels_bit_exact_on_gvsoc(name, tmp_path):
    """Generated pulp-open projects whose cluster runs the pulp family (tests/pulp_targets.py):
    the firmware on GVSoC equals the golden model and the reference runtime, with the DMA the
    schedule predicts, and the cost model (bindings/pulp/cost.py, fitted by
    bench/calibrate_pulp.py) predicts the measured cycles within ±15% for the network and ±20%
    for each of its major layer kinds."""
    path = EXAMPLE_ONNX if name == "example" else mlperf_path(name)
    graph = load_model(path)
    ns = schedule_network(lower(graph), pulp_target("pulp-open"), "model")
    r = validate_model(path, ns, graph, 1, 0, tmp_path / "p", on="gvsoc").to_json()
    assert r["bit_exact"] and r["platform"] == "gvsoc", r
    assert (r["dma_bytes_measured"], r["dma_transfers_measured"]) == \
        (r["dma_bytes_predicted"], r["dma_transfers_predicted"])
    assert "tw_pulp_" in (tmp_path / "p" / "layers" / "layer_01.c").read_text()
    ratio = r["predicted_cycles"] / r["measured_cycles"]
    assert abs(ratio - 1) <= TOLERANCE, (r["predicted_cycles"], r["measured_cycles"])
    by_kind: dict[str, list[float]] = {}
    for row in r["layers"]:
        got = by_kind.setdefault(layer_kind(ns.layers.layers[row["index"]].nest), [0.0, 0.0])
        got[0] += row["predicted_cycles"]
        got[1] += row["measured_cycles"]
    major = {k: p / m for k, (p, m) in by_kind.items() if m >= MAJOR * r["measured_cycles"]}
    assert major and all(abs(v - 1) <= KIND_TOLERANCE for v in major.values()), major


def test_onnx_requant_cost_against_gvsoc(tmp_path):
    """onnx-mode requantization in integers (tw_pulp_rq_onnx, issue 27): the bundled example's
    onnx-mode conv / depthwise / dense layers on pulp-open's cluster, predicted with
    PulpKernels.requant_onnx (bench/calibrate_onnx_requant.py) within ±15% of GVSoC's cycles
    together and ±30% each (those of 5% of the network or more)."""
    graph = load_model(EXAMPLE_ONNX)
    ns = schedule_network(lower(graph), pulp_target("pulp-open"), "model")
    r = validate_model(EXAMPLE_ONNX, ns, graph, 1, 0, tmp_path / "p", on="gvsoc").to_json()
    assert r["bit_exact"] and r["platform"] == "gvsoc", r
    rows = [row for row in r["layers"] if ns.placement(row["index"]).binding.key.mode == "onnx"
            and row["kind"] in ("conv", "dwconv", "fc")]
    assert len(rows) == 5
    predicted = sum(row["predicted_cycles"] for row in rows)
    measured = sum(row["measured_cycles"] for row in rows)
    assert abs(predicted / measured - 1) <= 0.15, (predicted, measured)
    big = [row for row in rows if row["measured_cycles"] >= MAJOR * r["measured_cycles"]]
    assert big and all(abs(row["predicted_cycles"] / row["measured_cycles"] - 1) <= 0.30
                       for row in big), big
