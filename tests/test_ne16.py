"""NE16's arithmetic (bindings/ne16): the numpy statement of a job (arith.py) from bit-plane
packed weights equals the golden convolution of the same int8 layer, and the C functional model
the host HAL runs (c/tw_ne16.c, through the task API) equals the numpy statement — conv 3×3 with
'same' padding, depthwise 3×3, 1×1 and linear, stride 1 and 2, 2- to 8-bit weights, int32 output
and norm-quant (per-channel scale, bias, ReLU, floor shift, int8 / uint8 saturation)."""

from __future__ import annotations

import ctypes
from dataclasses import replace

import numpy as np
import pytest

from tilewise.bindings.ne16 import arith

from . import tw_c_build as build
from .ne16_forced import ne16_forced
from .test_c_kernels import conv_acc

NE16_C = build.REPO / "tilewise" / "bindings" / "ne16" / "c"
KIND = {"conv3x3": 0, "dw3x3": 1, "conv1x1": 2}


@pytest.fixture(scope="module")
def lib():
    so = build.build_shared("ne16", [NE16_C / "tw_ne16.c", build.TESTS_C / "ne16_shim.c"],
                           [NE16_C, build.HAL])
    lib = ctypes.CDLL(str(so))
    lib.shim_ne16.restype = ctypes.c_long
    return lib


def _ptr(a: np.ndarray):
    return a.ctypes.data_as(ctypes.c_void_p)


def c_job(lib, kind: str, job: arith.Job, u: np.ndarray, packed: np.ndarray, oy: int, ox: int,
          nq: tuple | None = None) -> np.ndarray:
    """The C functional model's outputs of `job` (norm-quant `nq` = (scale, bias, shift, relu,
    signed) or int32)."""
    u = np.ascontiguousarray(u, np.uint8)
    h, w, c = u.shape
    dims = np.array([KIND[kind], job.bits, job.stride, h, w, c, oy, ox, job.k, *job.pads,
                     job.pad_value], np.int32)
    if nq is None:
        out = np.zeros((oy, ox, job.k), np.int32)
        flags = np.zeros(4, np.int32)
        scale = bias = np.zeros(1, np.int32)
    else:
        scale, bias, shift, relu, signed = nq
        out = np.zeros((oy, ox, job.k), np.int8 if signed else np.uint8)
        flags = np.array([1, shift, int(relu), int(signed)], np.int32)
        scale, bias = np.asarray(scale, np.int32), np.asarray(bias, np.int32)
    packed = np.ascontiguousarray(packed, np.uint8)
    lib.shim_ne16(_ptr(dims), _ptr(u), _ptr(packed), _ptr(out), _ptr(flags), _ptr(scale),
                  _ptr(bias))
    return out


# (kind, H, W, C, K, stride, bits): what NE16 takes (notes/accelerators.md)
CASES = [("conv3x3", 7, 6, 20, 9, 1, 8), ("conv3x3", 9, 8, 16, 5, 2, 8),
         ("conv3x3", 5, 5, 3, 33, 1, 4), ("dw3x3", 8, 7, 19, 19, 1, 8),
         ("dw3x3", 9, 9, 32, 32, 2, 6), ("conv1x1", 4, 5, 37, 12, 1, 8),
         ("conv1x1", 6, 6, 16, 8, 2, 2), ("linear", 1, 1, 100, 10, 1, 8)]


def _layer(rng, kind, h, w, c, k, stride, bits):
    fy = 3 if kind in ("conv3x3", "dw3x3") else 1
    pads = (1, 1, 1, 1) if fy == 3 else (0, 0, 0, 0)
    lo, hi = arith.offset(bits), -arith.offset(bits) - 1
    wt = rng.integers(lo, hi + 1, (k, fy, fy, 1 if kind == "dw3x3" else c))
    x = rng.integers(-128, 128, (h, w, c))
    zp_x = int(rng.integers(-30, 31))
    job = arith.Job(k, c, fy, fy, stride, pads, zp_x + 128, bits, kind == "dw3x3")
    return x, wt, zp_x, job


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}_s{c[5]}_w{c[6]}_c{c[3]}" for c in CASES])
def test_job_is_the_golden_convolution(lib, case):
    """u = x + 128 and bias − 128·Σw: the NE16 job's accumulators + the folded bias are the int8
    layer's golden accumulators (bias and zero points folded as tilewise's kernels take them);
    the C model gives the same int32s."""
    kind, h, w, c, k, stride, bits = case
    rng = np.random.default_rng(sum(map(ord, str(case))))
    x, wt, zp_x, job = _layer(rng, kind, h, w, c, k, stride, bits)
    bias = rng.integers(-5000, 5000, k)
    groups = c if kind == "dw3x3" else 1
    want = conv_acc(x, wt, bias, (stride, stride), job.pads, (1, 1), zp_x, groups=groups)
    packed = arith.pack(wt, bits, depthwise=job.depthwise)
    assert packed.size == arith.packed_bytes(k, c, job.fy, job.fx, bits, job.depthwise)
    acc = arith.run(job, x + 128, packed)
    assert np.array_equal(acc + arith.bias_for_u8(bias, wt), want)
    got = c_job(lib, "conv1x1" if kind == "linear" else kind, job, x + 128, packed, *want.shape[:2])
    assert np.array_equal(got, acc)


@pytest.mark.parametrize("signed", [True, False])
def test_norm_quant_floor_shift_and_saturation(lib, signed):
    """NE16's norm-quant on the job's accumulators, C model = numpy statement: the product wraps
    to int32, the bias saturates, ReLU, a floor shift, saturation to int8 or uint8 — checked
    against an independent per-element statement of those steps."""
    rng = np.random.default_rng(7 + signed)
    x, wt, zp_x, job = _layer(rng, "conv3x3", 6, 5, 24, 16, 1, 8)
    packed = arith.pack(wt)
    acc = arith.run(job, x + 128, packed)
    scale = rng.integers(-300, 300, 16)
    scale[0] = 2**20                                   # wraps acc · scale
    bias = rng.integers(-2**31, 2**31, 16)
    bias[1] = 2**31 - 1                                # saturates
    for shift, relu in ((0, False), (7, True), (13, False), (31, True)):
        want = arith.norm_quant(acc, scale, bias, shift, relu, 8, signed)
        ref = np.empty_like(want)
        for idx in np.ndindex(acc.shape):
            kk = idx[-1]
            t = (int(acc[idx]) * int(scale[kk])) & 0xFFFFFFFF
            t = t - 2**32 if t >= 2**31 else t
            t = min(max(t + int(bias[kk]), -2**31), 2**31 - 1)
            t = max(t, 0) if relu else t
            t >>= shift
            ref[idx] = min(max(t, -128 if signed else 0), 127 if signed else 255)
        assert np.array_equal(want, ref)
        got = c_job(lib, "conv3x3", job, x + 128, packed, *acc.shape[:2],
                    nq=(scale, bias, shift, relu, signed))
        assert np.array_equal(got.astype(np.int64), want), (shift, relu)


def test_packing_layout_bit_planes():
    """The layout named in notes/accelerators.md, byte by byte: channel j of a 16-block is bit j
    of the little-endian pair, bit planes LSB first, taps inside a plane; padded channels 0."""
    w = np.zeros((2, 3, 3, 18), np.int64) + arith.offset(8)        # stored 0 everywhere
    w[1, 2, 1, 17] = arith.offset(8) + 0b1010_0001                  # k 1, tap 7, channel 17
    p = arith.pack(w).reshape(2, 2, 8, 9, 2)
    assert p[0].sum() == 0 and p[1, 0].sum() == 0
    word = p[1, 1, :, 7, 0].astype(int) | p[1, 1, :, 7, 1].astype(int) << 8   # channel 17 = bit 1
    assert list(word) == [2, 0, 0, 0, 0, 2, 0, 2]
    assert p[1, 1, :, [t for t in range(9) if t != 7]].sum() == 0
    with pytest.raises(ValueError):
        arith.pack(np.full((1, 1, 1, 1), 8), bits=4)


# ------------------------------------------------------------------------------ the gap9 module

def _ne16_forced(norm_quant: bool = False):
    """gap9 with NE16 running every layer its checks accept (tests/ne16_forced.py); `norm_quant`:
    NE16 requantizes every shift-mode layer its norm-quant can take."""
    return ne16_forced("gap9", norm_quant)


def test_checks_say_why():
    """The layers NE16 refuses, each with its reason (checks.py)."""
    from tilewise.bindings.ne16 import checks

    from .codegen_cases import LayerSpec, layer_graph

    def reason(**kw):
        lg = layer_graph(LayerSpec(**kw), 0)
        return checks.ne16(lg.layers[-1], lg)

    assert reason(kind="conv", c=16, k=8, h=6, w=6, fy=3, fx=3, pads=(1, 1, 1, 1)) is None
    assert reason(kind="conv", c=32, k=8, h=6, w=6, fy=1, fx=1) is None
    # any channel count: the weights are padded to 16 channels
    assert reason(kind="conv", c=3, k=8, h=6, w=6, fy=3, fx=3, pads=(1, 1, 1, 1)) is None
    assert reason(kind="dwconv", c=24, k=24, h=6, w=6, fy=3, fx=3, pads=(1, 1, 1, 1)) is None
    assert "5×5 kernel" in reason(kind="conv", c=16, k=8, h=6, w=6, fy=5, fx=5)
    assert "stride of 3×3" in reason(kind="conv", c=16, k=8, h=9, w=9, fy=3, fx=3, sy=3, sx=3)
    assert "padding" in reason(kind="conv", c=16, k=8, h=6, w=6, fy=3, fx=3, pads=(2, 2, 2, 2))


@pytest.mark.parametrize("name", ["ic_resnet8", "kws_dscnn"])
def test_gap9_with_ne16_bit_exact(name, tmp_path):
    """validate --target gap9: the partition gives NE16 the layers its model makes fastest (on
    these two, every 3×3 / 1×1 conv with 16-multiple channels), the host HAL runs their jobs
    through the functional model; outputs bit-exact with the golden model and the reference,
    copies and NE16 jobs as the schedule predicts."""
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.targets.registry import get_target
    from tilewise.validate import validate_model

    from .conftest import mlperf_path

    path = mlperf_path(name)
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("gap9"), "model")
    on = [i for i in range(len(ns.layers.layers)) if ns.placement(i).module.name == "ne16"]
    assert len(on) >= 8, on
    r = validate_model(path, ns, graph, 2, 0, tmp_path / "p").to_json()
    assert r["bit_exact"], r
    assert r["dma_bytes_measured"] == r["dma_bytes_predicted"]
    # the row jobs of every L1 tile of every NE16 layer, counted by the host's functional model
    assert r["jobs_predicted"] == sum(ns.layer_jobs(i) for i in on) >= len(on)
    assert r["jobs_measured"] == r["jobs_predicted"]


@pytest.mark.parametrize("name", ["kws_dscnn", "vww_mobilenet_v1_025"])
def test_ne16_forced_on_every_layer_it_accepts(name, tmp_path):
    """NE16 forced onto every layer its checks accept (depthwise and dense included, and the
    convs its im2col bindings take: kws_dscnn's first layer): the network is still bit-exact."""
    from tilewise.bindings.ne16 import checks, im2col
    from tilewise.frontend import load_model
    from tilewise.ir.ops import Op
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.validate import validate_model

    from .conftest import mlperf_path

    path = mlperf_path(name)
    graph = load_model(path)
    lg = lower(graph)
    ns = schedule_network(lg, _ne16_forced(), "model")
    accepted = {layer.name for layer in lg.layers
                if layer.op in (Op.CONV2D, Op.DEPTHWISE, Op.FULLY_CONNECTED)
                and (checks.ne16(layer, lg) is None or  # or as a 1×1 job over an im2col
                     im2col.reason(layer, lg, im2col.c_pad(layer.nest)) is None)}
    placed = {ns.layers.layers[i].name for i in range(len(ns.layers.layers))
              if ns.placement(i).module.name == "ne16"}
    assert accepted and placed == accepted
    assert any(layer.op == Op.DEPTHWISE for layer in lg.layers if layer.name in placed)
    r = validate_model(path, ns, graph, 1, 0, tmp_path / "p").to_json()
    assert r["bit_exact"], r


def test_cost_model_is_matchs_ne16_model():
    """bindings/ne16/cost.py on one whole-layer tile, against the note's formula written out
    and the row-job pipeline (bindings/ne16/pipeline.py) by hand: a 3×3 conv 16×16×32 → 64 at
    stride 1; one 3-row band is 6 subtiles × 2 output blocks × (2 input blocks × (6 + 25 + 6 + 6
    + 72 + 2) + 40) NE16 cycles; 16 rows are 6 jobs of 3, 3, 3, 3, 3, 1 rows (2 bands each but
    the last: 1): fill + Σ max(NE16 job j+1, requant job j) + drain + conversion (by 7 cores,
    core 0 setting the job up) + 6 jobs' set-up + the tile; with norm-quant one job of 6 bands
    and no requantization."""
    from tilewise.bindings.cost_terms import tile_cycles
    from tilewise.bindings.ne16.cost import Ne16Kernels
    from tilewise.ir.layer import LoopNest

    nest = LoopNest("conv", K=64, C=32, OY=16, OX=16, FY=3, FX=3, pads=(1, 1, 1, 1), IY=16,
                    IX=16)
    m = Ne16Kernels(engine="match")
    size = {d: np.array(v) for d, v in (("n", 1), ("k", 64), ("c", 32), ("oy", 16), ("ox", 16))}
    one = {d: np.array(True) for d in size}
    got = float(tile_cycles(m.terms(nest, 8), size, one, one))
    band = 6 * 2 * (2 * (6 + 25 + 6 + 6 + 72 + 2) + 40)                  # 3288
    row = m.requant / 8 * 16 * 64                                          # 4160
    assert m.requant == 32.5 and band == 3288
    jobs = [3, 3, 3, 3, 3, 1]                                              # rows per job
    ne16 = [band * ((r + 2) // 3) for r in jobs]
    rq = [row * r for r in jobs]
    pipelined = ne16[0] + sum(max(ne16[j + 1], rq[j]) for j in range(5)) + rq[-1]
    assert pipelined == 3288 + 4 * 12480 + 12480 + 4160
    cluster = m.convert / 7 * 18 * 18 * 32 + 6 * 400 + 1324
    assert got == pytest.approx(pipelined + cluster)
    # NE16-bound steps: 1×1, 16 input blocks, 8 channels out (one output block): max takes NE16
    nest = LoopNest("conv", K=8, C=256, OY=12, OX=12, FY=1, FX=1, pads=(0, 0, 0, 0), IY=12,
                    IX=12)
    size = {d: np.array(v) for d, v in (("n", 1), ("k", 8), ("c", 256), ("oy", 12), ("ox", 12))}
    got = float(tile_cycles(m.terms(nest, 8), size, one, one))
    band = 4 * 1 * (16 * (10 + 9 + 6 + 6 + 8 + 2) + 40)                   # 2784
    row = m.requant / 8 * 12 * 8                                           # 390
    ne16, rq = [band] * 4, [3 * row] * 4                                   # 4 jobs of 3 rows
    pipelined = ne16[0] + sum(max(ne16[j + 1], rq[j]) for j in range(3)) + rq[-1]
    assert pipelined == 4 * band + 3 * row
    assert got == pytest.approx(pipelined + m.convert / 7 * 12 * 12 * 256 + 4 * 400 + 1324)
    nq = float(tile_cycles(replace(m, norm_quant=True).terms(nest, 8), size, one, one))
    nq_band = 4 * 1 * (16 * (10 + 9 + 6 + 6 + 8 + 2) + 36 + 13)
    assert nq == pytest.approx(4 * nq_band + m.convert / 7 * 12 * 12 * 256 + 400 + 1324)


def test_norm_quant_on_ne16_for_shift_mode_layers(tmp_path):
    """The NEMO-style integer graph (shift requantization, uint8 activations; tests/onnx_models.py
    nemo_net) on gap9 with NE16 forced where it can: its 1×1 conv (one shift, a [0, 255] clamp)
    is requantized by NE16's norm-quant (the *_nq bindings: no cluster pass), by cost; with the
    cluster-requantized shift bindings left out its dense layer too; bit-exact with the golden
    model and onnxruntime, jobs as predicted. A per-channel shift or a
    clamp NE16 cannot saturate to keeps the cluster's requantization (normquant.reason)."""
    import onnx

    from tilewise.bindings.ne16 import normquant
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.validate import validate_model

    from . import onnx_models as om

    path = tmp_path / "nemo.onnx"
    onnx.save(om.nemo_net(), str(path))
    graph = load_model(path)
    lg = lower(graph)
    for only_nq in (False, True):
        ns = schedule_network(lg, _ne16_forced(norm_quant=only_nq), "model")
        labels = {ns.layers.layers[i].name: ns.placement(i).binding.label
                  for i in range(len(lg.layers))}
        assert labels["conv2"] == "ne16/conv2d_s8_nq", labels      # cheaper than the cluster pass
        if only_nq:
            assert labels["fc"] == "ne16/fully_connected_s8_nq", labels
        r = validate_model(path, ns, graph, 3, 0, tmp_path / f"p{only_nq}").to_json()
        assert r["bit_exact"] and r["reference"] == "onnxruntime", r
        assert r["jobs_measured"] == r["jobs_predicted"] > 0
    nq = ["conv2"]
    # the reasons the other shift-mode layers would get
    from dataclasses import replace

    layer = next(layer for layer in lg.layers if layer.name == nq[0])
    k = layer.nest.K
    rq = layer.requant
    per_channel = replace(layer, requant=replace(rq, shift=np.arange(k) % 3 + 8))
    assert "one shift per layer" in normquant.reason(per_channel, lg)
    clamp = replace(layer, requant=replace(rq, qmin=10))
    assert "clamp" in normquant.reason(clamp, lg)
    assert normquant.reason(layer, lg) is None


EDGE_SPECS = {  # LayerSpec fields: kind, c, k, h, w, fy, fx, sy, sx, pads, mode
    "conv_s2_asym_pads_c5": ("conv", 5, 7, 9, 8, 3, 3, 2, 2, (0, 0, 1, 1), "tflite"),
    "conv_c17_k33": ("conv", 17, 33, 6, 7, 3, 3, 1, 1, (1, 1, 1, 1), "tflite"),
    "conv1x1_s2_c40": ("conv", 40, 9, 5, 5, 1, 1, 2, 2, (0, 0, 0, 0), "tflite"),
    "dw_s2_c24": ("dwconv", 24, 24, 9, 7, 3, 3, 2, 2, (1, 1, 1, 1), "tflite"),
    "dw_c40_pads": ("dwconv", 40, 40, 6, 6, 3, 3, 1, 1, (0, 1, 1, 0), "tflite"),
    "fc_c70": ("fc", 70, 13, 1, 1, 1, 1, 1, 1, (0, 0, 0, 0), "tflite"),
    "conv_onnx": ("conv", 16, 16, 7, 7, 3, 3, 1, 1, (1, 1, 1, 1), "onnx"),
    "conv_c3_single": ("conv", 3, 8, 12, 10, 3, 3, 1, 1, (1, 1, 1, 1), "tflite_single"),
}


@pytest.mark.parametrize("case", list(EDGE_SPECS))
def test_ne16_layers_tiled_small(case, tmp_path):
    """NE16 layers cut into many L1 tiles (gap9 at 2 kB of L1): channel counts that are not
    multiples of 16 (padded weights, depthwise k tiles of 16 with a remainder), stride 2 with
    TFLite's asymmetric padding, border tiles padded on some sides only, 1×1 at stride 2, dense,
    every requant mode through the cluster — bit-exact, the row jobs as predicted."""
    from tilewise.pipeline import schedule_network
    from tilewise.validate import make_inputs, validate_network

    from .codegen_cases import LayerSpec, layer_graph

    kind, c, k, h, w, fy, fx, sy, sx, pads, mode = EDGE_SPECS[case]
    lg = layer_graph(LayerSpec(kind, c=c, k=k, h=h, w=w, fy=fy, fx=fx, sy=sy, sx=sx, pads=pads,
                               mode=mode), 1)
    ns = schedule_network(lg, _ne16_forced().with_overrides(l1_kb=2), "model")
    assert ns.placement(len(lg.layers) - 1).module.name == "ne16"
    r, _ = validate_network(ns, tmp_path / "p", make_inputs(lg, 3))
    j = r.to_json()
    assert j["bit_exact"], j["mismatches"][:2]
    assert j["jobs_measured"] == j["jobs_predicted"] >= 1
