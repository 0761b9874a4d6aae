"""DIANA's analog core (bindings/diana_analog) and the adc requantization mode.

- golden: the adc chain floor(acc / D) clipped to [−32, 31], then (m·a6 + a) >> s clipped, on
  hand-picked accumulators (multiples of D, negative ones, values at the clip edges);
- frontend: NEMO-style integer ONNX graphs (float32 tensors holding integers, NCHW) with the ADC
  chain lower to one adc-mode conv2d and run bit-exact against onnxruntime, accumulators at the
  boundaries included; the shift-mode chain recogniser keeps its behaviour;
- arith.py: the 2-bit packing, and the numpy job = the golden convolution + requantization;
- c/tw_diana_analog.c: the C functional model = the numpy job (kernels 1/3/5/7, strides 1 and 2,
  tile pads, boundary accumulators);
- checks.py: every refusal says why;
- a ternary network validates bit-exact (golden, onnxruntime, generated C on the host) with the
  analog module running its layers (a test-local copy of gap8 with an "analog" module, L1 small
  enough for several tiles and jobs per layer), and with the layers on the CPU's portable kernels;
- the same network on the real target (`validate --target diana`, whole and at a small L1): the
  partition, by cost, places every layer on module "analog" (the project's manifest says so), its
  jobs measured = predicted, and `analyze --target diana [--why]` shows the analog module chosen
  over the host core.
"""

from __future__ import annotations

import ctypes
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tilewise.bindings import diana_analog
from tilewise.bindings.diana_analog import arith, checks
from tilewise.bindings.diana_analog.cost import AnalogKernels
from tilewise.errors import TilewiseError
from tilewise.frontend import load_model
from tilewise.frontend.onnx_io import reference_session, run_reference
from tilewise.golden import run_graph
from tilewise.golden.requant import apply_requant
from tilewise.ir.ops import Op
from tilewise.ir.requant import Requant
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.base import Module
from tilewise.targets.registry import get_target
from tilewise.validate import validate_model

from . import tw_c_build as build
from .pulp_targets import portable_target
from .test_c_kernels import conv_acc

ANALOG_C = build.REPO / "tilewise" / "bindings" / "diana_analog" / "c"
f32 = np.float32


# --- test networks -----------------------------------------------------------------------------

def adc_net(path: Path, layers, in_shape=(1, 16, 12, 12), seed: int = 0, *, divisor=37,
            bias: bool = True, in_range=(0, 255), w_range=(-1, 1), m_range=(-600, 600),
            adc=(-32, 31), pads=None, second_stage: bool = True, shift: int = 6) -> Path:
    """A NEMO-style integer graph (float32 tensors holding integers, NCHW): per layer (K, kernel,
    stride, qmin, qmax) Conv → Div(D) → Floor → Clip(adc) → Mul(m) → Add(a) → Div(2^shift) →
    Floor → Clip(qmin, qmax), ternary weights (w_range), the input in `in_range`."""
    rng = np.random.default_rng(seed)
    inits: list[onnx.TensorProto] = []
    nodes = []

    def c(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name))
        return name

    x, ch = "x", in_shape[1]
    for i, (k, ks, s, lo, hi) in enumerate(layers):
        last = i == len(layers) - 1
        ins = [x, c(f"w{i}", rng.integers(w_range[0], w_range[1] + 1, (k, ch, ks, ks)))]
        if bias:
            ins.append(c(f"b{i}", rng.integers(-300, 300, k)))
        p = (ks - 1) // 2
        nodes.append(helper.make_node("Conv", ins, [f"c{i}"], kernel_shape=[ks, ks], strides=[s, s],
                                      pads=list(pads or (p, p, p, p)), name=f"conv{i}"))
        out = "y" if last else f"y{i}"
        adc_out = out if not second_stage else f"a{i}"
        nodes += [
            helper.make_node("Div", [f"c{i}", c(f"D{i}", f32(divisor))], [f"q{i}"], name=f"adc_div{i}"),
            helper.make_node("Floor", [f"q{i}"], [f"f{i}"], name=f"adc_floor{i}"),
            helper.make_node("Clip", [f"f{i}", c(f"alo{i}", f32(adc[0])), c(f"ahi{i}", f32(adc[1]))],
                             [adc_out], name=f"adc_clip{i}")]
        if second_stage:
            nodes += [
                helper.make_node("Mul", [f"a{i}", c(f"m{i}", rng.integers(*m_range, (1, k, 1, 1)))],
                                 [f"mm{i}"], name=f"mul{i}"),
                helper.make_node("Add", [f"mm{i}", c(f"ad{i}", rng.integers(-3000, 3000, (1, k, 1, 1)))],
                                 [f"aa{i}"], name=f"add{i}"),
                helper.make_node("Div", [f"aa{i}", c(f"s{i}", f32(2 ** shift))], [f"d{i}"], name=f"shift{i}"),
                helper.make_node("Floor", [f"d{i}"], [f"ff{i}"], name=f"floor{i}"),
                helper.make_node("Clip", [f"ff{i}", c(f"lo{i}", f32(lo)), c(f"hi{i}", f32(hi))], [out],
                                 name=f"clip{i}")]
        x, ch = out, k
    graph = helper.make_graph(
        nodes, path.stem, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, ch, None, None])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 9
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return path


#: three ternary layers: 3×3 int8 out, 5×5 stride 2 uint8 out, 1×1 int8 out
NET = [(32, 3, 1, -128, 127), (16, 5, 2, 0, 255), (32, 1, 1, -128, 127)]


def compare_with_onnxruntime(path: Path, inputs: list[np.ndarray]) -> int:
    """Golden vs onnxruntime on the given NCHW inputs; returns the elements compared."""
    g = load_model(path)
    sess = reference_session(path)
    n = 0
    for x in inputs:
        feed = {g.inputs[0]: x.transpose(0, 2, 3, 1).astype(g.tensors[g.inputs[0]].dtype)}
        ref = run_reference(g, sess, feed)      # the graph's input is NHWC (frontend layout)
        got = run_graph(g, feed)
        for name, want in ref.items():
            assert np.array_equal(got[name], want), f"{path.name}: output {name} differs"
            n += want.size
    return n


# --- golden ------------------------------------------------------------------------------------

def test_adc_requant_floor_division_and_clips():
    """floor(acc / D) for negative accumulators and exact multiples, the ADC clip, then the
    digital stage's floor shift and clamp — written out by hand."""
    rq = Requant(mode="adc", multiplier=np.array([3]), shift=np.array([2]), bias=np.array([5]),
                 qmin=-128, qmax=127, divisor=4)
    acc = np.array([[-1], [-4], [-5], [0], [3], [4], [127], [128], [-128], [-129], [10**6], [-10**6]])
    a6 = np.array([-1, -1, -2, 0, 0, 1, 31, 31, -32, -32, 31, -32])
    want = np.floor((3 * a6 + 5) / 4).astype(np.int64)
    assert np.array_equal(apply_requant(acc, rq).ravel(), want)
    # the output clamp after the shift
    big = replace(rq, multiplier=np.array([30000]), shift=np.array([0]))
    assert apply_requant(np.array([[124]]), big)[0, 0] == 127
    assert apply_requant(np.array([[-124]]), big)[0, 0] == -128


# --- frontend ----------------------------------------------------------------------------------

def test_adc_chain_lowers_to_one_adc_layer(tmp_path):
    g = load_model(adc_net(tmp_path / "net.onnx", NET))
    convs = [n for n in g.nodes if n.op == Op.CONV2D]
    assert [n.op for n in g.nodes] == [Op.CONV2D] * 3
    for n, (k, _, _, lo, hi) in zip(convs, NET):
        rq = n.params.requant
        assert (rq.mode, rq.divisor, rq.adc_min, rq.adc_max, rq.qmin, rq.qmax) == ("adc", 37, -32, 31, lo, hi)
        assert np.all(np.asarray(rq.shift) == 6) and np.size(rq.multiplier) == k
    assert [g.tensors[n.outputs[0]].dtype for n in convs] == ["int8", "uint8", "int8"]
    # a power-of-two D with the digital stage after it is the adc mode too
    g2 = load_model(adc_net(tmp_path / "pow2.onnx", NET[:1], divisor=64))
    assert g2.nodes[0].params.requant.mode == "adc" and g2.nodes[0].params.requant.divisor == 64
    # the ADC stage alone: a power of two stays the shift mode, any other D is adc with m = 1
    g3 = load_model(adc_net(tmp_path / "alone.onnx", NET[:1], second_stage=False, divisor=64))
    assert g3.nodes[0].params.requant.mode == "shift"
    g4 = load_model(adc_net(tmp_path / "alone37.onnx", NET[:1], second_stage=False))
    rq = g4.nodes[0].params.requant
    assert rq.mode == "adc" and (rq.qmin, rq.qmax) == (-32, 31) and np.all(np.asarray(rq.multiplier) == 1)
    for p in (tmp_path / "alone.onnx", tmp_path / "alone37.onnx", tmp_path / "pow2.onnx"):
        x = np.random.default_rng(1).integers(0, 256, (1, 16, 12, 12)).astype(np.float32)
        assert compare_with_onnxruntime(p, [x]) > 0


def test_division_without_the_adc_clip_is_one_sentence(tmp_path):
    path = adc_net(tmp_path / "noclip.onnx", NET[:1])
    m = onnx.load(str(path))
    clip = next(n for n in m.graph.node if n.name == "adc_clip0")
    m.graph.node.remove(clip)
    for n in m.graph.node:
        n.input[:] = ["f0" if i == "a0" else i for i in n.input]
    onnx.save(m, str(path))
    with pytest.raises(TilewiseError) as e:
        load_model(path)
    msg = str(e.value)
    assert "adc_floor0" in msg and "not a power of two" in msg and msg.count(". ") <= 1


@pytest.mark.parametrize("divisor", [1, 7, 37, 1000, 2 ** 18])
def test_golden_equals_onnxruntime_at_the_boundaries(divisor, tmp_path):
    """Random inputs, the extremes, and inputs that put accumulators exactly on multiples of D,
    just below them, negative and at the ADC's and the output's clip edges."""
    path = adc_net(tmp_path / f"d{divisor}.onnx", NET, divisor=divisor, seed=divisor)
    rng = np.random.default_rng(divisor)
    shape = (1, 16, 12, 12)
    inputs = [rng.integers(0, 256, shape).astype(np.float32) for _ in range(3)]
    inputs += [np.zeros(shape, np.float32), np.full(shape, 255, np.float32)]
    # one-hot pixels: the first conv's sums are bias ± multiples of v, for v across the range
    for v in (1, 36, 37, 38, 74, 111, 255):
        x = np.zeros(shape, np.float32)
        x[0, :, ::3, ::2] = v
        inputs.append(x)
    assert compare_with_onnxruntime(path, inputs) > 0
    # the first layer's accumulators cover multiples of D, negatives and both ADC clip edges
    g = load_model(path)
    layer = lower(g).layers[0]
    rq = layer.requant
    accs = []
    for x in inputs:
        xh = x[0].transpose(1, 2, 0).astype(np.int64)
        accs.append(conv_acc(xh, np.asarray(layer.weights, np.int64), layer.bias, (1, 1),
                             layer.nest.pads, (1, 1), 0))
    acc = np.concatenate([a.ravel() for a in accs])
    assert (acc < 0).any() and (acc % divisor == 0).any() and ((acc + 1) % divisor == 0).any()
    q = np.floor_divide(acc, rq.divisor)
    assert ((q > -32) & (q < 31)).any()
    if divisor <= 37:       # |acc| reaches 32·D only for small D (|acc| ≤ 255·144 + 300 here)
        assert (q <= rq.adc_min).any() and (q >= rq.adc_max).any()


# --- arith: packing and the numpy job ----------------------------------------------------------

def test_packing_two_bit_codes():
    w = np.array([1, -1, 0, 1, 0, 0, -1, -1]).reshape(2, 1, 1, 4)
    packed = arith.pack(w)
    # weight j in bits 2j..2j+1, LSB first: +1 → 01, −1 → 11, 0 → 00
    assert packed.tolist() == [0b01_00_11_01, 0b11_11_00_00]
    rng = np.random.default_rng(0)
    for shape in ((5, 3, 3, 4), (8, 7, 7, 12), (3, 1, 1, 8)):
        w = rng.integers(-1, 2, shape)
        p = arith.pack(w)
        assert p.size == shape[0] * arith.row_bytes(*shape[1:])
        assert np.array_equal(arith.unpack(p, *shape), w)
    with pytest.raises(ValueError):
        arith.pack(np.full((1, 1, 1, 4), 2))


def _job_case(rng, ks: int, stride: int, c: int = 8, k: int = 12, h: int = 9, w: int = 7,
              pads=None, divisor: int = 5):
    p = (ks - 1) // 2
    pads = pads or (p, p, p, p)
    x = rng.integers(-128, 128, (h, w, c))
    wt = rng.integers(-1, 2, (k, ks, ks, c))
    job = arith.Job(k=k, c=c, fy=ks, fx=ks, stride=stride, pads=pads, pad_value=int(rng.integers(-128, 128)),
                    divisor=divisor, zero_point=int(rng.integers(-5, 5)), qmin=-100, qmax=120)
    bias = rng.integers(-400, 400, k)
    m = rng.integers(-32768, 32768, k)
    m[0] = 32767
    m[1] = -32768
    a = rng.integers(-2**20, 2**20, k)
    s = rng.integers(0, 32, k)
    return job, x, wt, bias, m, a, s


CASES = [(ks, stride) for ks in (1, 3, 5, 7) for stride in (1, 2)]


@pytest.mark.parametrize("ks,stride", CASES)
def test_numpy_job_is_the_golden_convolution(ks, stride):
    rng = np.random.default_rng(ks * 10 + stride)
    job, x, wt, bias, m, a, s = _job_case(rng, ks, stride)
    acc = conv_acc(x, wt, bias, (stride, stride), job.pads, (1, 1), job.pad_value)
    rq = Requant(mode="adc", multiplier=m, shift=s, bias=a, zero_point=job.zero_point,
                 qmin=job.qmin, qmax=job.qmax, divisor=job.divisor)
    packed = arith.pack(wt)
    assert np.array_equal(arith.accumulate(job, x, packed, bias), acc)
    assert np.array_equal(arith.run(job, x, packed, bias, m, a, s), apply_requant(acc, rq))


# --- the C functional model --------------------------------------------------------------------

@pytest.fixture(scope="module")
def lib():
    so = build.build_shared("diana_analog", [ANALOG_C / "tw_diana_analog.c",
                                             build.TESTS_C / "diana_analog_shim.c"],
                            [ANALOG_C, build.HAL])
    lib = ctypes.CDLL(str(so))
    lib.shim_analog.restype = ctypes.c_long
    return lib


def _ptr(a: np.ndarray):
    return a.ctypes.data_as(ctypes.c_void_p)


def c_job(lib, job: arith.Job, x, packed, bias, m, a, s, oy: int, ox: int) -> tuple[np.ndarray, int]:
    x = np.ascontiguousarray(x, np.int8)
    h, w, c = x.shape
    d = np.array([job.fy, job.fx, job.stride, h, w, c, oy, ox, job.k, *job.pads, job.pad_value,
                  job.divisor, job.adc_min, job.adc_max, job.zero_point, job.qmin, job.qmax], np.int32)
    blk = np.concatenate([bias, m, a, s]).astype(np.int32)
    out = np.zeros((oy, ox, job.k), np.int8)
    packed = np.ascontiguousarray(packed, np.uint8)
    jobs = lib.shim_analog(_ptr(d), _ptr(x), _ptr(packed), _ptr(blk), _ptr(out))
    return out, jobs


@pytest.mark.parametrize("ks,stride", CASES)
def test_c_model_equals_numpy(lib, ks, stride):
    rng = np.random.default_rng(100 + ks * 10 + stride)
    job, x, wt, bias, m, a, s = _job_case(rng, ks, stride)
    packed = arith.pack(wt)
    want = arith.run(job, x, packed, bias, m, a, s)
    got, jobs = c_job(lib, job, x, packed, bias, m, a, s, *want.shape[:2])
    assert np.array_equal(got, want)
    # a border tile: padding only on some sides, as the layer's loop nest cuts it
    tile = replace(job, pads=(0, (ks - 1) // 2, (ks - 1) // 2, 0))
    want = arith.run(tile, x, packed, bias, m, a, s)
    got, jobs2 = c_job(lib, tile, x, packed, bias, m, a, s, *want.shape[:2])
    assert np.array_equal(got, want) and jobs2 == jobs + 1


def test_c_model_at_boundary_accumulators(lib):
    """Sums exactly on multiples of D, one below and above, negative, and far beyond the ADC's
    range: a 1×1 job whose every channel sees a chosen accumulator."""
    divisor = 7
    accs = np.array([0, -1, 1, -7, 7, -8, 6, 8, -224, -225, -231, 217, 223, 224, 10**6, -10**6,
                     -6, -14, 13, 14])
    k = accs.size
    job = arith.Job(k=k, c=4, fy=1, fx=1, divisor=divisor, qmin=-128, qmax=127)
    x = np.ones((1, 1, 4), np.int64)
    wt = np.zeros((k, 1, 1, 4), np.int64)            # zero weights: acc = bias
    bias = accs
    m = np.resize(np.array([1, -1, 32767, -32768, 3]), k)
    a = np.resize(np.array([0, 5, -7, 2**20, -(2**20)]), k)
    s = np.resize(np.array([0, 1, 4, 15, 31]), k)
    packed = arith.pack(wt)
    want = arith.run(job, x, packed, bias, m, a, s)
    a6 = np.clip(np.floor_divide(accs, divisor), -32, 31)
    assert np.array_equal(want.ravel(), np.clip((a6 * m + a) >> s, -128, 127))
    got, _ = c_job(lib, job, x, packed, bias, m, a, s, 1, 1)
    assert np.array_equal(got, want)


# --- checks ------------------------------------------------------------------------------------

def _first_layer(tmp_path: Path, name: str, **kw):
    lg = lower(load_model(adc_net(tmp_path / f"{name}.onnx", kw.pop("layers", NET[:1]), **kw)))
    return lg.layers[0], lg


def test_checks_say_why(tmp_path):
    def reason(name, **kw):
        layer, lg = _first_layer(tmp_path, name, **kw)
        return checks.analog(layer, lg)

    assert reason("ok") is None
    assert reason("k7s2", layers=[(32, 7, 2, -128, 127)]) is None
    assert "not ternary" in reason("w2", w_range=(-2, 2))
    assert "4×4 kernel" in reason("k4", layers=[(8, 4, 1, -128, 127)], pads=(1, 1, 2, 2))
    assert "padding (0, 0, 0, 0)" in reason("valid", layers=[(8, 3, 1, -128, 127)], pads=(0, 0, 0, 0))
    assert "stride of 3×3" in reason("s3", layers=[(8, 3, 3, -128, 127)])
    assert "divisible by 4" in reason("c6", in_shape=(1, 6, 8, 8))
    assert "divisible by 4" in reason("k5", layers=[(5, 1, 1, -128, 127)], in_shape=(1, 16, 3, 3))
    assert "array" in reason("rows", layers=[(8, 7, 1, -128, 127)], in_shape=(1, 24, 8, 8))
    assert "ADC range of [-16, 15]" in reason("adc5", adc=(-16, 15))
    assert "beyond int16" in reason("m17", m_range=(40000, 50000))
    assert "other than the ADC chain" in reason("shift", second_stage=False, divisor=64)


# --- networks ----------------------------------------------------------------------------------

def analog_target(l1_kb: float | None = None):
    """gap8 (its cluster on the portable family, which has the adc requantization) with DIANA's
    analog core added as a module on the cluster's L1 — the Module line diana.py takes."""
    t = portable_target("gap8", **({} if l1_kb is None else {"l1_kb": l1_kb}))
    analog = Module("analog", cores=1, bindings=diana_analog.bindings(AnalogKernels()),
                    memory="L1", note="DIANA's analog in-memory core (ternary, 6-bit ADC)")
    return replace(t, modules=(*t.modules, analog))


def _validate(path: Path, target, tmp_path: Path, tiler: str = "model"):
    g = load_model(path)
    ns = schedule_network(lower(g), target, tiler)
    report = validate_model(path, ns, g, 4, 0, tmp_path / "proj")
    assert report.bit_exact and report.dma_bytes_measured == report.dma_bytes_predicted, \
        report.to_json()
    assert report.jobs_measured == report.jobs_predicted, report.to_json()
    return ns, report


@pytest.mark.parametrize("l1_kb,tiler", [(None, "model"), (6.0, "model"), (6.0, "dory")])
def test_ternary_network_on_the_analog_core_bit_exact(l1_kb, tiler, tmp_path):
    path = adc_net(tmp_path / "ternary.onnx", NET)
    ns, report = _validate(path, analog_target(l1_kb), tmp_path, tiler)
    placed = [(c.placement.module.name, c.placement.binding.label) for c in ns.partition.choices]
    assert placed == [("analog", "diana_analog/conv2d_analog_s8")] * 3
    tiles = sum(ns.layer_jobs(i) for i in range(len(ns.layers.layers)))
    assert report.jobs_predicted == tiles >= 3
    if l1_kb is not None:               # a small L1: several tiles, one job each
        assert tiles > 6
    proj = tmp_path / "proj"
    assert (proj / "tw_diana_analog" / "tw_diana_analog.c").exists()
    assert "tw_analog_dispatch(&job)" in (proj / "layers" / "layer_00.c").read_text()
    assert "tw_analog_jobs()" in (proj / "main_host.c").read_text()


def test_ternary_network_on_the_cpu_bit_exact(tmp_path):
    """The same layers on the portable kernels' adc requantization (no analog module)."""
    path = adc_net(tmp_path / "ternary.onnx", NET)
    ns, report = _validate(path, portable_target("gap8"), tmp_path)
    assert [c.placement.binding.label for c in ns.partition.choices] == ["portable/conv2d_s8_adc"] * 3
    assert report.jobs_predicted == 0


def test_a_layer_the_analog_core_refuses_falls_back_to_the_cpu(tmp_path):
    """A ternary layer with 6 input channels (a column of 9·6 weights does not fill whole bytes)
    runs on the CPU, the next one on the analog core: bit-exact together."""
    path = adc_net(tmp_path / "mixed.onnx", [(16, 3, 1, -128, 127), (16, 3, 2, -128, 127)],
                   in_shape=(1, 6, 10, 10))
    ns, _ = _validate(path, analog_target(), tmp_path)
    first, second = ns.partition.choices
    assert first.placement.module.name == "cluster"
    refused = next(c for c in first.candidates if c.module == "analog")
    assert "divisible by 4" in refused.reason
    assert second.placement.module.name == "analog"


def test_cost_model_terms():
    """Per tile: the job, the tile's 2-bit columns, one matrix-vector per pixel, its input window
    and outputs (bindings/diana_analog/cost.py), evaluated on one tile."""
    from tilewise.bindings.cost_terms import tile_cycles
    from tilewise.ir.layer import LoopNest

    cost = AnalogKernels()
    nest = LoopNest(kind="conv", K=32, C=16, OY=8, OX=8, FY=3, FX=3, IY=8, IX=8)
    size = {d: np.array(v) for d, v in dict(n=1, k=32, c=16, oy=8, ox=8).items()}
    one = {d: np.array(True) for d in size}
    got = float(tile_cycles(cost.terms(nest, 1), size, one, one))
    want = 200 + 32 * 16 * 9 / 4 / 8 + 64 * 12 + 64 * 16 * 9 / 8 + 64 * 32 / 8
    assert got == pytest.approx(want)


# --- the real diana target ---------------------------------------------------------------------

@pytest.mark.parametrize("l1_kb", [None, 6.0])
def test_ternary_network_on_diana_bit_exact(l1_kb, tmp_path, capsys):
    """`tilewise validate --target diana` of the ternary network: bit-exact against the golden
    model and onnxruntime, every layer on module "analog" (the manifest, tilewise.json), one job
    per tile measured as predicted; at 6 kB of activation memory several tiles per layer."""
    import json

    from tilewise.cli import main

    path = adc_net(tmp_path / "ternary.onnx", NET)
    proj = tmp_path / "proj"
    l1 = [] if l1_kb is None else ["--l1", str(l1_kb)]
    assert main(["validate", str(path), "--target", "diana", *l1, "--inputs", "4", "-o",
                 str(proj), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["bit_exact"] and report["target"] == "diana", report
    assert report["reference"] == "onnxruntime"
    manifest = json.loads((proj / "tilewise.json").read_text())
    placed = [(lay["module"], lay["binding"]) for lay in manifest["layers"]]
    assert placed == [("analog", "diana_analog/conv2d_analog_s8")] * len(NET)
    target = get_target("diana") if l1_kb is None else get_target("diana").with_overrides(l1_kb=l1_kb)
    ns = schedule_network(lower(load_model(path)), target, "model")
    tiles = sum(ns.layer_jobs(i) for i in range(len(NET)))
    assert report["jobs_measured"] == report["jobs_predicted"] == manifest["jobs_predicted"] == tiles
    assert tiles > 6 if l1_kb is not None else tiles == len(NET)
    assert report["dma_bytes_measured"] == report["dma_bytes_predicted"]
    assert "tw_analog_dispatch(&job)" in (proj / "layers" / "layer_00.c").read_text()


def test_analyze_on_diana_shows_the_analog_module(tmp_path, capsys):
    """`tilewise analyze --target diana` puts the ternary layers on the analog core, and `--why`
    says why: the host core's portable adc kernel is a candidate at a far higher cost, the
    digital core is none (its bindings take the tflite, onnx and shift modes, not adc)."""
    import json

    from tilewise.cli import main

    path = adc_net(tmp_path / "ternary.onnx", NET)
    assert main(["analyze", str(path), "--target", "diana"]) == 0
    out = capsys.readouterr().out
    assert out.count("analog conv2d_analog_s8") == len(NET) and "diana" in out
    assert main(["analyze", str(path), "--target", "diana", "--why", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [lay["module"] for lay in data["layers"]] == ["analog"] * len(NET)
    for lay in data["layers"]:
        cands = {c["module"]: c for c in lay["candidates"]}
        assert set(cands) == {"analog", "cpu"} and cands["analog"]["chosen"]
        assert cands["analog"]["cycles"] < cands["cpu"]["cycles"] and cands["cpu"]["reason"] is None
    assert main(["analyze", str(path), "--target", "diana", "--why"]) == 0
    why = capsys.readouterr().out
    assert why.count("✓ analog diana_analog/conv2d_analog_s8") == len(NET)
    assert why.count("cpu portable/conv2d_s8_adc") == len(NET)
    assert "digital diana_digital/" not in why           # no digital binding is a candidate
