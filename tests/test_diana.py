"""DIANA (targets/diana.py) and its digital accelerator (bindings/diana_digital): the numpy
statement of a job (arith.py) from the core's weight layout equals the golden convolution of the
same int8 layer, the C functional model the host HAL runs (c/tw_diana_digital.c, through the job
API) equals the numpy statement — conv with kernels 1/3/5/7 and 'same' padding, stride 1 and 2,
depthwise, dense; padding per side (TFLite's asymmetric stride-2 'SAME', and a symmetric job on a
shifted input shown to differ from it); int32 output and the core's shift requantization —
the weight layout byte by
byte, the checks' reasons, the cost model against MATCH's formula, and `validate --target diana`
bit-exact on the four MLPerf Tiny models with the digital core running every layer it accepts,
its jobs counted as predicted."""

from __future__ import annotations

import ctypes
from dataclasses import replace

import numpy as np
import pytest

from tilewise.bindings.diana_digital import arith

from . import tw_c_build as build
from .test_c_kernels import conv_acc

DIANA_C = build.REPO / "tilewise" / "bindings" / "diana_digital" / "c"
KIND = {"conv": 0, "dw": 1, "dense": 2}


@pytest.fixture(scope="module")
def lib():
    so = build.build_shared("diana", [DIANA_C / "tw_diana_digital.c",
                                      build.TESTS_C / "diana_shim.c"], [DIANA_C, build.HAL])
    lib = ctypes.CDLL(str(so))
    lib.shim_diana.restype = ctypes.c_long
    return lib


def _ptr(a: np.ndarray):
    return a.ctypes.data_as(ctypes.c_void_p)


def c_job(lib, job: arith.Job, x: np.ndarray, packed: np.ndarray, bias: np.ndarray, oy: int,
          ox: int) -> np.ndarray:
    """The C functional model's outputs of `job` (int32, or int8 with its requant)."""
    x = np.ascontiguousarray(x, np.int8)
    h, w, c = x.shape
    dims = np.array([KIND[job.kind], job.fy, job.fx, job.stride, h, w, c, oy, ox, job.k,
                     *job.pads, job.pad_value], np.int32)
    if job.requant is None:
        out = np.zeros((oy, ox, job.k), np.int32)
        rq = np.zeros(4, np.int32)
    else:
        out = np.zeros((oy, ox, job.k), np.int8)
        rq = np.array([1, *job.requant], np.int32)
    packed = np.ascontiguousarray(packed, np.uint8)
    bias = np.ascontiguousarray(bias, np.int32)
    lib.shim_diana(_ptr(dims), _ptr(x), _ptr(packed), _ptr(bias), _ptr(out), _ptr(rq))
    return out


# (kind, H, W, C, K, kernel, stride): what the digital core takes (notes/accelerators.md)
CASES = [("conv", 7, 6, 5, 9, 1, 1), ("conv", 8, 9, 3, 20, 3, 1), ("conv", 9, 8, 16, 17, 3, 2),
         ("conv", 9, 9, 4, 16, 5, 1), ("conv", 11, 10, 3, 7, 7, 2), ("conv", 6, 7, 2, 33, 7, 1),
         ("dw", 8, 7, 19, 19, 3, 1), ("dw", 9, 9, 32, 32, 3, 2), ("dw", 7, 8, 5, 5, 5, 1),
         ("dw", 10, 9, 17, 17, 7, 2), ("dense", 1, 1, 100, 10, 1, 1),
         ("dense", 1, 1, 16, 40, 1, 1)]


def _layer(rng, kind, h, w, c, k, f, stride):
    pads = ((f - 1) // 2,) * 4
    wt = rng.integers(-128, 128, (k, f, f, 1 if kind == "dw" else c))
    x = rng.integers(-128, 128, (h, w, c))
    zp_x = int(rng.integers(-30, 31))
    job = arith.Job(kind, k, c, f, f, stride, pads, zp_x)
    return x, wt, job


def _packed(wt, kind):
    if kind == "dense":
        return arith.pack(wt.reshape(wt.shape[0], -1), "dense")
    return arith.pack(wt[..., 0] if kind == "dw" else wt, kind)


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}{c[5]}_s{c[6]}_c{c[3]}_k{c[4]}"
                                             for c in CASES])
def test_job_is_the_golden_convolution(lib, case):
    """A job on the layer's int8 input, its zero point as the pad value, weights in the core's
    layout and the kernel bias: the int32 outputs are the int8 layer's golden accumulators (bias
    and zero points folded as tilewise's kernels take them); the C model gives the same int32s,
    and with the core's requantization the same int8s as clip(acc >> shift)."""
    kind, h, w, c, k, f, stride = case
    rng = np.random.default_rng(sum(map(ord, str(case))))
    x, wt, job = _layer(rng, kind, h, w, c, k, f, stride)
    bias = rng.integers(-5000, 5000, k)
    groups = c if kind == "dw" else 1
    want = conv_acc(x, wt, bias, (stride, stride), job.pads, (1, 1), job.pad_value,
                    groups=groups)
    packed = _packed(wt, kind)
    assert packed.size == arith.packed_bytes(kind, k, c, f, f)
    acc = arith.run(job, x, packed, bias)
    assert np.array_equal(acc, want)
    got = c_job(lib, job, x, packed, bias, *want.shape[:2])
    assert np.array_equal(got, acc)
    for shift, lo, hi in ((0, -128, 127), (9, 0, 127), (31, -128, 127), (13, -20, 90)):
        rq = replace(job, requant=(shift, lo, hi))
        ref = np.clip(np.floor(want / 2.0**shift), lo, hi)
        assert np.array_equal(arith.run(rq, x, packed, bias), ref)
        assert np.array_equal(c_job(lib, rq, x, packed, bias, *want.shape[:2]), ref)


def _same_pads(h: int, w: int, f: int, stride: int) -> tuple[int, int, int, int]:
    """TFLite's 'SAME' padding: (OY − 1)·S + F − H split ⌊/2⌋ before, ⌈/2⌉ after."""
    def split(n):
        total = max((-(-n // stride) - 1) * stride + f - n, 0)
        return total // 2, total - total // 2
    (t, b), (left, r) = split(h), split(w)
    return t, left, b, r


# (kind, H, W, C, K, kernel, stride, pads): pads differing per side, each within F // 2
ASYM = [("conv", 8, 10, 5, 18, 3, 2, None), ("conv", 10, 8, 4, 16, 5, 2, None),
        ("conv", 12, 12, 3, 9, 7, 2, None), ("dw", 8, 8, 20, 20, 3, 2, None),
        ("dw", 10, 12, 7, 7, 7, 2, None), ("conv", 7, 9, 6, 17, 3, 1, (0, 1, 1, 0)),
        ("conv", 8, 7, 3, 20, 5, 1, (2, 0, 1, 2)), ("dw", 9, 8, 16, 16, 7, 1, (3, 1, 0, 2)),
        ("conv", 9, 9, 8, 16, 7, 2, (0, 3, 2, 1))]


def _asym_id(case) -> str:
    pads = "same" if case[7] is None else "".join(map(str, case[7]))
    return f"{case[0]}{case[5]}_s{case[6]}_{pads}"


@pytest.mark.parametrize("case", ASYM, ids=[_asym_id(c) for c in ASYM])
def test_asymmetric_pads_job_is_the_golden_convolution(lib, case):
    """Pads per side (arith.py's decision): TFLite's stride-2 'SAME' on even inputs (0 on top /
    left, the rest at the bottom / right) and arbitrary per-side pads at stride 1 and 2, kernels
    3/5/7, conv and depthwise: numpy job = the golden convolution, C model = numpy, int32 and
    requantized."""
    kind, h, w, c, k, f, stride, pads = case
    pads = pads or _same_pads(h, w, f, stride)
    assert pads[0] != pads[2] or pads[1] != pads[3]
    rng = np.random.default_rng(sum(map(ord, str(case))))
    x, wt, job = _layer(rng, kind, h, w, c, k, f, stride)
    job = replace(job, pads=pads)
    bias = rng.integers(-5000, 5000, k)
    want = conv_acc(x, wt, bias, (stride, stride), pads, (1, 1), job.pad_value,
                    groups=c if kind == "dw" else 1)
    packed = _packed(wt, kind)
    acc = arith.run(job, x, packed, bias)
    assert np.array_equal(acc, want)
    assert np.array_equal(c_job(lib, job, x, packed, bias, *want.shape[:2]), acc)
    rq = replace(job, requant=(11, -128, 127))
    got = c_job(lib, rq, x, packed, bias, *want.shape[:2])
    assert np.array_equal(got, arith.run(rq, x, packed, bias))
    assert np.array_equal(got, np.clip(want >> 11, -128, 127))


def test_shifted_symmetric_job_is_not_asymmetric_same():
    """The statement arith.py rejects: a stride-2 3×3 'SAME' layer on an even input (pads 0 top /
    left, 1 bottom / right) is not the symmetric job (pads 1) on the input shifted by one row and
    column — they agree everywhere but on the first output row and column, where the shifted job
    reads the pad value in place of the input's row / column 0."""
    rng = np.random.default_rng(7)
    x, wt, job = _layer(rng, "conv", 8, 8, 4, 16, 3, 2)
    bias = rng.integers(-5000, 5000, 16)
    packed = _packed(wt, "conv")
    want = conv_acc(x, wt, bias, (2, 2), (0, 0, 1, 1), (1, 1), job.pad_value)
    asym = arith.run(replace(job, pads=(0, 0, 1, 1)), x, packed, bias)
    shifted = arith.run(replace(job, pads=(1, 1, 1, 1)), x[1:, 1:], packed, bias)
    assert np.array_equal(asym, want) and shifted.shape == want.shape
    assert np.array_equal(shifted[1:, 1:], want[1:, 1:])
    assert not np.array_equal(shifted[0], want[0]) and not np.array_equal(shifted[:, 0], want[:, 0])
    with pytest.raises(ValueError, match="per side"):
        replace(job, pads=(0, 0, 2, 1))


def test_weight_layout_bytes():
    """The layout of notes/accelerators.md (MATCH's DIANA weight code), byte by byte: output
    channels in blocks of 16 innermost, then (Cin, FY, FX) per block; depthwise channel k at row
    4·k, three zero rows after it; dense [Cout][Cin] padded to 16; every 4 bytes reversed."""
    w = np.zeros((18, 3, 3, 2), np.int64)
    w[17, 2, 1, 1] = -5                       # block 1, j 1, c 1, fy 2, fx 1
    p = arith.pack(w, "conv")
    assert p.size == 32 * 2 * 9
    pos = (((1 * 2 + 1) * 3 + 2) * 3 + 1) * 16 + 1
    assert p[pos ^ 3] == 251 and np.count_nonzero(p) == 1
    dw = np.zeros((5, 3, 3), np.int64)
    dw[3, 0, 2] = 7                          # row 12: block 0, j 12
    p = arith.pack(dw, "dw")
    assert p.size == 16 * 4 * 9
    assert p[((0 * 3 + 0) * 3 + 2) * 16 + 12 ^ 3] == 7 and np.count_nonzero(p) == 1
    fc = np.zeros((3, 20), np.int64)
    fc[2, 19] = 100
    p = arith.pack(fc, "dense")
    assert p.size == 16 * 32 and p[(2 * 32 + 19) ^ 3] == 100 and np.count_nonzero(p) == 1
    with pytest.raises(ValueError):
        arith.pack(np.full((1, 1, 1, 1), 200), "conv")


def test_checks_say_why():
    """The layers the digital core refuses, each with its reason (checks.py)."""
    from tilewise.bindings.diana_digital import checks

    from .codegen_cases import LayerSpec, layer_graph

    def reason(**kw):
        lg = layer_graph(LayerSpec(**kw), 0)
        return checks.digital(lg.layers[-1], lg)

    assert reason(kind="conv", c=16, k=8, h=6, w=6, fy=3, fx=3, pads=(1, 1, 1, 1)) is None
    assert reason(kind="conv", c=3, k=8, h=9, w=9, fy=7, fx=7, sy=2, sx=2,
                  pads=(3, 3, 3, 3)) is None
    assert reason(kind="dwconv", c=24, k=24, h=6, w=6, fy=5, fx=5, pads=(2, 2, 2, 2)) is None
    assert reason(kind="fc", c=70, k=13, h=1, w=1) is None
    assert "2×2 kernel" in reason(kind="conv", c=16, k=8, h=6, w=6, fy=2, fx=2)
    assert "stride of 3×3" in reason(kind="conv", c=16, k=8, h=9, w=9, fy=3, fx=3, sy=3, sx=3,
                                     pads=(1, 1, 1, 1))
    assert reason(kind="conv", c=16, k=8, h=8, w=8, fy=3, fx=3, sy=2, sx=2,
                  pads=(0, 0, 1, 1)) is None                  # TFLite's stride-2 'SAME'
    assert reason(kind="dwconv", c=16, k=16, h=8, w=8, fy=7, fx=7, sy=2, sx=2,
                  pads=(2, 2, 3, 3)) is None
    assert reason(kind="conv", c=16, k=8, h=8, w=8, fy=3, fx=3, pads=(0, 0, 0, 0)) is None
    assert "at most 1 rows and 1 columns per side" in reason(
        kind="conv", c=16, k=8, h=8, w=8, fy=3, fx=3, pads=(0, 0, 2, 2))
    assert "at most 2 rows" in reason(kind="conv", c=16, k=8, h=8, w=8, fy=5, fx=5,
                                      pads=(3, 2, 2, 2))


def test_cost_model_is_matchs_digital_model():
    """bindings/diana_digital/cost.py on one whole-layer tile, against MATCH's formula written out: a
    3×3 conv 16×16×32 → 64, padding 1: ⌈64·14·16/256⌉ body rows × (32·3·3 + 2·32·3 + 23) +
    ⌈64·2·16/256⌉ × (32·2·3 + 2·32·2 + 23), plus the host's job and requantization."""
    from tilewise.bindings.cost_terms import tile_cycles
    from tilewise.bindings.diana_digital.cost import DianaDigitalKernels
    from tilewise.ir.layer import LoopNest

    nest = LoopNest("conv", K=64, C=32, OY=16, OX=16, FY=3, FX=3, pads=(1, 1, 1, 1), IY=16,
                    IX=16)
    m = DianaDigitalKernels()
    size = {d: np.array(v) for d, v in (("n", 1), ("k", 64), ("c", 32), ("oy", 16), ("ox", 16))}
    one = {d: np.array(True) for d in size}
    got = float(tile_cycles(m.terms(nest, 1), size, one, one))
    core = 56 * (288 + 192 + 23) + 8 * (192 + 128 + 23)
    host = 200 + 20.4 * 16 * 16 * 64
    assert got == pytest.approx(core + host)
    rq = replace(m, core_requant=True)
    assert float(tile_cycles(rq.terms(nest, 1), size, one, one)) == pytest.approx(core + 200)
    # the add (add_s8_rq): the formula with C = FY = FX = 1, 26 cycles per 16 channels × 16
    # columns of a row: ⌈40/16⌉·12·⌈20/16⌉ steps
    add = LoopNest("add", K=40, C=40, OY=12, OX=20, IY=12, IX=20)
    size = {d: np.array(v) for d, v in (("n", 1), ("k", 40), ("c", 40), ("oy", 12), ("ox", 20))}
    assert float(tile_cycles(rq.terms(add, 1), size, one, one)) == pytest.approx(3 * 12 * 2 * 26 + 200)


def test_cost_model_prices_the_rows_the_core_pads():
    """Per-side padding in the cost model: the padded output rows (bindings/diana_digital/cost.py
    padded_rows) are MATCH's classes at stride 1 (p, p − 1, …, 1 on each side); TFLite's
    stride-2 'SAME' 3×3 on an even input pads one bottom row by one kernel row and none on top;
    a symmetric stride-2 3×3 on an even input pads the top row only. The cost on one tile
    follows: ⌈K/16⌉·⌈OX/16⌉ · (body rows · step(0) + padded rows · step(pad))."""
    from tilewise.bindings.cost_terms import tile_cycles
    from tilewise.bindings.diana_digital.cost import DianaDigitalKernels, padded_rows
    from tilewise.ir.layer import LoopNest

    def nest(f, s, pads, iy=16, c=8):
        oy = (iy + pads[0] + pads[2] - f) // s + 1
        return LoopNest("conv", K=32, C=c, OY=oy, OX=oy, FY=f, FX=f, SY=s, SX=s, pads=pads,
                        IY=iy, IX=iy)

    assert padded_rows(nest(5, 1, (2, 2, 2, 2))) == ((2, 1), (2, 1))
    assert padded_rows(nest(3, 2, (0, 0, 1, 1))) == ((), (1,))
    assert padded_rows(nest(3, 2, (1, 1, 1, 1))) == ((1,), ())
    assert padded_rows(nest(7, 2, (2, 2, 3, 3))) == ((2,), (3, 1))
    assert padded_rows(nest(3, 2, (0, 0, 0, 0), iy=15)) == ((), ())
    m = DianaDigitalKernels(job=0.0, requant=0.0)
    c = 8
    for f, s, pads in ((3, 2, (0, 0, 1, 1)), (7, 2, (2, 2, 3, 3)), (5, 1, (2, 2, 2, 2))):
        n = nest(f, s, pads)
        size = {d: np.array(v) for d, v in (("n", 1), ("k", 32), ("c", c), ("oy", n.OY),
                                             ("ox", n.OX))}
        one = {d: np.array(True) for d in size}
        upper, lower = padded_rows(n)
        lost = upper + lower
        want = 2 * 1 * sum(c * (f - p) * f + 2 * c * (f - p) + 23
                           for p in (0,) * (n.OY - len(lost)) + lost)
        assert float(tile_cycles(m.terms(n, 1), size, one, one)) == pytest.approx(want)


MLPERF = ["ic_resnet8", "kws_dscnn", "vww_mobilenet_v1_025", "ad_autoencoder"]


@pytest.mark.parametrize("name", MLPERF)
def test_diana_bit_exact(name, tmp_path):
    """validate --target diana: the partition gives the digital core every conv, depthwise and
    dense layer its checks accept (and some exist), the host core the rest; the host HAL runs the
    jobs through the functional model; outputs bit-exact with the golden model and LiteRT,
    copies and jobs as the schedule predicts; every weight tile within the 64 kB weight memory."""
    from tilewise.bindings.diana_digital import checks
    from tilewise.frontend import load_model
    from tilewise.ir.ops import Op
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target
    from tilewise.validate import validate_model

    from .conftest import mlperf_path

    path = mlperf_path(name)
    graph = load_model(path)
    lg = lower(graph)
    target = get_target("diana")
    ns = schedule_network(lg, target, "model")
    accepted = [i for i, layer in enumerate(lg.layers)
                if layer.op in (Op.CONV2D, Op.DEPTHWISE, Op.FULLY_CONNECTED)
                and checks.digital(layer, lg) is None]
    on = [i for i in range(len(lg.layers)) if ns.placement(i).module.name == "digital"]
    assert accepted and on == accepted
    asym = [i for i in on if lg.layers[i].nest.pads[:2] != lg.layers[i].nest.pads[2:]]
    if name in ("ic_resnet8", "vww_mobilenet_v1_025"):    # TFLite's stride-2 'SAME' layers
        assert asym, "no asymmetric 'SAME' layer on the digital core"
    assert {ns.placement(i).module.name for i in range(len(lg.layers))} <= {"digital", "cpu"}
    for i in on:
        mem = ns.schedules[i].memory_bytes()
        assert mem.get("WMEM", 0) <= target.memory("WMEM").free
        assert mem["L1"] <= target.memory("L1").free
    r = validate_model(path, ns, graph, 2, 0, tmp_path / "p").to_json()
    assert r["bit_exact"], r
    assert r["dma_bytes_measured"] == r["dma_bytes_predicted"]
    assert r["jobs_predicted"] == sum(ns.layer_jobs(i) for i in on) >= len(on)
    assert r["jobs_measured"] == r["jobs_predicted"]


def _digital_forced(target):
    """`target` where the host core refuses every layer the digital core's checks accept (what
    the partition would give the core if it were the cheapest everywhere)."""
    from tilewise.bindings.diana_digital import checks

    ops = {"conv2d", "depthwise", "fully_connected"}

    def refusing(b):
        def check(layer, lg):
            if b.key.op in ops and checks.digital(layer, lg) is None:
                return "forced onto the digital core (test)"
            return b.check(layer, lg)
        return replace(b, check=check)

    cpu = target.module("cpu")
    return replace(target, modules=tuple(
        replace(m, bindings=tuple(refusing(b) for b in m.bindings)) if m is cpu else m
        for m in target.modules))


EDGE_SPECS = {  # LayerSpec fields: kind, c, k, h, w, fy, fx, sy, sx, pads, mode
    "conv3_k40_onnx": ("conv", 12, 40, 9, 10, 3, 3, 1, 1, (1, 1, 1, 1), "onnx"),
    "conv5_s2": ("conv", 6, 20, 11, 9, 5, 5, 2, 2, (2, 2, 2, 2), "tflite"),
    "conv7_c3": ("conv", 3, 16, 12, 12, 7, 7, 1, 1, (3, 3, 3, 3), "tflite_single"),
    "conv1_s2": ("conv", 24, 33, 7, 7, 1, 1, 2, 2, (0, 0, 0, 0), "tflite"),
    "dw3_c40": ("dwconv", 40, 40, 8, 9, 3, 3, 1, 1, (1, 1, 1, 1), "tflite"),
    "dw5_s2": ("dwconv", 18, 18, 9, 9, 5, 5, 2, 2, (2, 2, 2, 2), "onnx"),
    "conv3_s2_same_asym": ("conv", 8, 24, 12, 10, 3, 3, 2, 2, (0, 0, 1, 1), "tflite"),
    "dw7_s2_same_asym": ("dwconv", 20, 20, 12, 12, 7, 7, 2, 2, (2, 2, 3, 3), "onnx"),
    "conv5_s1_per_side": ("conv", 5, 18, 9, 8, 5, 5, 1, 1, (2, 0, 1, 2), "tflite"),
    "conv3_valid": ("conv", 6, 16, 9, 10, 3, 3, 1, 1, (0, 0, 0, 0), "tflite"),
    "fc_c70": ("fc", 70, 13, 1, 1, 1, 1, 1, 1, (0, 0, 0, 0), "tflite"),
    "fc_weights_beyond_wmem": ("fc", 2100, 40, 1, 1, 1, 1, 1, 1, (0, 0, 0, 0), "tflite"),
}


@pytest.mark.parametrize("case", list(EDGE_SPECS))
def test_digital_layers_tiled_small(case, tmp_path):
    """Digital-core layers cut into many tiles (diana at 2 kB of activation memory): output
    channels not a multiple of 16 (padded weights in the border k tile), border row and column
    tiles padded on some sides only, layers padded per side (TFLite's stride-2 'SAME', no padding,
    arbitrary), kernels 1 to 7, stride 2, depthwise, dense, every requant
    mode on the host; a dense layer whose weights (84 kB) exceed the weight memory runs in k
    tiles that fit it — bit-exact, one job per tile as predicted."""
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target
    from tilewise.validate import make_inputs, validate_network

    from .codegen_cases import LayerSpec, layer_graph

    kind, c, k, h, w, fy, fx, sy, sx, pads, mode = EDGE_SPECS[case]
    lg = layer_graph(LayerSpec(kind, c=c, k=k, h=h, w=w, fy=fy, fx=fx, sy=sy, sx=sx, pads=pads,
                               mode=mode), 1)
    big = case == "fc_weights_beyond_wmem"
    target = _digital_forced(get_target("diana").with_overrides(l1_kb=None if big else 2))
    ns = schedule_network(lg, target, "model")
    i = len(lg.layers) - 1
    assert ns.placement(i).module.name == "digital"
    s = ns.schedules[i]
    if big:
        assert s.tiling("k").count > 1
        assert s.memory_bytes()["WMEM"] <= target.memory("WMEM").free
    elif case != "fc_c70":                   # 13 outputs: one tile, its k block padded
        assert s.n_tiles > 1
    r, _ = validate_network(ns, tmp_path / "p", make_inputs(lg, 3))
    j = r.to_json()
    assert j["bit_exact"], j["mismatches"][:2]
    assert j["jobs_measured"] == j["jobs_predicted"] == s.n_tiles


def test_core_requantizes_shift_layers(tmp_path):
    """The NEMO-style integer graph (tests/onnx_models.py nemo_net) with its shift-mode
    multipliers set to 1 (λ and one shift per layer kept): its conv and dense layers take the
    core-requantized bindings (*_rq: clip((acc + bias') >> d), no host pass) by cost,
    bit-exact with the golden model; with the multipliers of the model they keep the host's
    requantization, with the reason said (constants.reason)."""
    import onnx

    from tilewise.bindings.diana_digital import constants
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target
    from tilewise.validate import make_inputs, validate_network

    from . import onnx_models as om

    path = tmp_path / "nemo.onnx"
    onnx.save(om.nemo_net(), str(path))
    lg = lower(load_model(path))
    layer = next(lay for lay in lg.layers if lay.name == "conv2")
    assert "multiplier other than 1" in constants.reason(layer, lg)
    per_ch = replace(layer, requant=replace(layer.requant, multiplier=np.ones(layer.nest.K),
                                            shift=np.arange(layer.nest.K) % 2 + 8))
    assert "one shift per layer" in constants.reason(per_ch, lg)
    ones = tuple(replace(lay, requant=replace(lay.requant, multiplier=np.ones_like(
        lay.requant.multiplier))) if lay.name in ("conv2", "fc") else lay for lay in lg.layers)
    lg1 = replace(lg, layers=ones)
    ns = schedule_network(lg1, get_target("diana"), "model")
    labels = {lay.name: ns.placement(i).binding.label for i, lay in enumerate(lg1.layers)}
    assert labels["conv2"] == "diana_digital/conv2d_s8_rq", labels
    assert labels["fc"] == "diana_digital/fully_connected_s8_rq", labels
    r, _ = validate_network(ns, tmp_path / "p", make_inputs(lg1, 3))
    j = r.to_json()
    assert j["bit_exact"], j["mismatches"][:2]
    assert j["jobs_measured"] == j["jobs_predicted"] > 0
