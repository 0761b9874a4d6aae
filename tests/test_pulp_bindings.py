"""The pulp family's bindings (bindings/pulp): its table, its constants layout, and generated
projects on a copy of gap8 whose cluster runs it (tests/pulp_targets.py), built and run on the
host (the kernels' C path) and compared bit for bit with the golden model and the reference
runtime.

- the table: every key of the portable family's table is served (own kernels first, the portable
  bindings for the rest), the weighted bindings take the 20-byte layout;
- the requantization words Python builds (constants.py) equal tw_pulp_rq_words' in C, for every
  variant; shift mode runs in 32 bits exactly where k·acc + lambda provably fits;
- projects: the bundled example (onnx, default and 8 kB L1), ic_resnet8 and kws_dscnn (tflite),
  quantize_static uint8 networks (QDQ / QOperator), the NEMO integer graph (shift mode, uint8),
  per-channel right shifts with the 64-bit shift kernel, layers tiled at L3→L2, and random layers
  of every kind (hypothesis, the portable property test's strategy) at small L1s with border
  tiles and C tiles.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilewise.bindings import portable, pulp
from tilewise.bindings.portable.cost import PulpNN
from tilewise.bindings.pulp import constants
from tilewise.examples import EXAMPLE_ONNX
from tilewise.frontend import load_model
from tilewise.ir.requant import Requant, tflite_requant
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.validate import make_inputs, validate_model, validate_network

from . import onnx_models as om
from . import tw_kernel_calls as kc
from .codegen_cases import LayerSpec, c_cache, layer_graph  # noqa: F401 (fixture)
from .conftest import mlperf_path
from .pulp_targets import pulp_target
from .test_codegen_l3 import CONV, _conv_pool, _two_convs
from .test_codegen_ops import shift_specs
from .test_codegen_property import KINDS, schedule_small, specs

MODE_IDS = {"tflite": 0, "shift": 1, "onnx": 2, "tflite_single": 3, "shift32": 4, "tflite_right": 5,
            "onnx24": 6}


# ------------------------------------------------------------------------------ the table

def test_table_serves_every_portable_key_and_runs_its_own_kernels_first():
    own = pulp.bindings(PulpNN())
    keys = {b.key for b in own}
    assert {b.key for b in portable.bindings(PulpNN())} <= keys
    by_key = {}
    for b in own:
        by_key.setdefault(b.key, []).append(b)
    # one binding per key, but the onnx keys' second ones (the onnx24 variant of the weighted
    # kernels, the folded onnx add) and the lookup of an add / sub / mul by a one-value constant
    # beside the broadcast kernel, which the choice weighs against the first by their cost;
    # the MatMul of two activations (mm_act.py) is the cluster's own (a host core's module has
    # tw_int.h's beside it: test_pulp_mm_act.py)
    extra = {"conv2d_s8_onnx24", "depthwise_s8_onnx24", "fully_connected_s8_onnx24",
             "add_onnx_fold_s8", "matmul_act_x8y8", "matmul_act_x8y32",
             "add_const_lut_s8", "sub_const_lut_s8", "mul_const_lut_s8"}
    assert all(len([b for b in v if b.name not in extra]) == 1 for k, v in by_key.items()
               if k.op not in ("matmul", "attention"))
    # the depth-first attention (attention.py): one binding per row op under one key, each
    # check taking only its own row op
    assert sorted(b.name for v in by_key.values() for b in v if b.key.op == "attention") == \
        ["attention_int_softmax_s8", "attention_ita_max_s8", "attention_norows_s8"]
    assert {b.name for v in by_key.values() for b in v if b.key.op == "matmul"} == \
        {"matmul_act_x8y8", "matmul_act_x8y32"}
    assert extra <= {b.name for b in own}
    ours = [b for b in own if b.family.name == "pulp"]
    # the integer exports' row ops and the transpose through L1 (rows.py, issue 28), TFLite's
    # LSTM and SVDF on the cores (lstm.py, svdf.py, issue 28)
    assert {b.key.op for b in ours} == {"conv2d", "depthwise", "fully_connected", "add", "sub", "attention",
                                        "mul", "avg_pool", "max_pool", "global_avg_pool",
                                        "layer_norm", "rms_norm", "int_softmax", "ita_max",
                                        "int_gelu", "hardswish", "requant", "transpose", "reduce",
                                        "matmul", "lstm", "svdf"}
    assert all(b.const_bytes == constants.BYTES_PER_CHANNEL for b in ours if b.consts)
    assert pulp.FAMILY.closure()[0].name == "portable"


# ------------------------------------------------------------------------------ constants

@pytest.fixture(scope="module")
def lib():
    return kc.load_library("pulp")


def _requants(rng, k):
    real = rng.uniform(1e-4, 3.0, k)
    real[:3] = (1e-9, 0.9999, 2.5)                        # shifts at the edges, a left shift
    tfl = tflite_requant(real, 3, -128, 127)
    yield "tflite", tfl
    right = tflite_requant(rng.uniform(1e-9, 0.49, k), 3, -128, 127)  # every shift negative
    yield "tflite_right", right
    yield "tflite_single", replace(tfl, rounding="single")
    yield "onnx", Requant("onnx", np.ones(k, np.int64), np.zeros(k, np.int64), 0, -128, 127,
                          scale=real.astype(np.float32))
    small = rng.uniform(1e-9, 0.2499, k).astype(np.float32)
    small[:3] = (0.0, 1e-40, 0.2499999)                  # m = 0 twice (r taken as 33), r = 33
    yield "onnx24", Requant("onnx", np.ones(k, np.int64), np.zeros(k, np.int64), 0, -128, 127,
                            scale=small)
    d = rng.integers(0, 64, k)
    lam = rng.integers(-(1 << 31), 1 << 31, k)
    for v in ("shift", "shift32"):
        yield v, Requant("shift", rng.integers(-(1 << 31), 1 << 31, k), d, 0, -128, 127, bias=lam)


def test_words_equal_tw_pulp_rq_words(lib):
    rng = np.random.default_rng(3)
    k = 37
    for v, rq in _requants(rng, k):
        want = np.stack(constants.words_of(rq, k, v), axis=1).ravel()
        got = np.zeros(4 * k, np.int32)
        ra = kc.RequantArrays(rq)
        lib.shim_pulp_rq_words(*ra.args(), k, MODE_IDS[v], kc.ptr(got))
        assert np.array_equal(got, want), v


@pytest.mark.parametrize("fy,fx,sy,sx", [(3, 3, 1, 1), (5, 5, 2, 2), (7, 7, 3, 3), (3, 1, 1, 1),
                                         (1, 5, 1, 2), (1, 1, 1, 1)])
def test_scratch_formulas_are_the_kernels(lib, fy, fx, sy, sx):
    """The bindings' scratch bytes (planning) equal what the C kernels use, for every tile size
    of a layer: tw_pulp_conv2d_s8_scratch and tw_pulp_depthwise_s8_scratch."""
    for c, oy, ox, cores in ((3, 1, 1, 1), (13, 7, 5, 8), (64, 16, 16, 8), (5, 2, 9, 3)):
        spec = LayerSpec("conv", c=c, k=4, h=(oy - 1) * sy + fy, w=(ox - 1) * sx + fx, fy=fy,
                         fx=fx, sy=sy, sx=sx)
        nest = layer_graph(spec, 0).layers[-1].nest
        win = kc.Window(nest.IY, nest.IX, oy, ox, fy, fx, sy, sx)
        conv = int(pulp.im2col_bytes(nest, cores, 4, c, oy, ox))
        assert conv == (lib.shim_conv_scratch(kc.ptr(win.array()), c, cores) if fy * fx > 1 else 0)
        dw = int(pulp.depthwise_bytes(nest, cores, c, c, oy, ox))
        assert dw == lib.shim_pulp_dw_scratch(kc.ptr(win.array()), cores)


def test_shift_mode_runs_in_32_bits_where_it_provably_fits():
    lg = layer_graph(LayerSpec("conv", c=8, k=6, h=5, w=5, fy=3, fx=3, pads=(1, 1, 1, 1)), 2)
    layer = lg.layers[-1]
    bound = int(constants.acc_bound(layer, lg).max())
    k = layer.nest.K

    def with_k(mult):
        rq = Requant("shift", np.full(k, mult), np.full(k, 20), 0, -128, 127,
                     bias=np.full(k, 1 << 10))
        return replace(layer, requant=rq)

    assert constants.variant(with_k((2**31 - 1 - 1024) // bound), lg) == "shift32"
    assert constants.variant(with_k((2**31 - 1 - 1024) // bound + 1), lg) == "shift"


def test_tflite_right_where_every_shift_is_negative_and_cannot_overflow():
    """TFLite's double rounding runs as tflite_right exactly where the binding can prove it: every
    shift in [-31, -1] and SRDHM(acc) + 2^(e-1) within int32 for the layer's accumulator bound."""
    lg = layer_graph(LayerSpec("conv", c=8, k=6, h=5, w=5, fy=3, fx=3, pads=(1, 1, 1, 1)), 2)
    layer = lg.layers[-1]
    k = layer.nest.K

    def with_scale(real):
        return replace(layer, requant=tflite_requant(np.full(k, real), 0, -128, 127))

    assert constants.variant(with_scale(0.01), lg) == "tflite_right"
    assert constants.variant(with_scale(0.3), lg) == "tflite_right"      # shift -1
    assert constants.variant(with_scale(0.7), lg) == "tflite"            # shift 0
    assert constants.variant(with_scale(1.5), lg) == "tflite"            # a left shift
    rq = with_scale(0.01).requant
    bound = constants.acc_bound(layer, lg)
    assert constants.tflite_right_fits(rq, bound)
    big = with_scale((1 - 1e-6) * 2.0**-30).requant                       # M0 ~ 2^31, e = 30
    assert constants.tflite_right_fits(big, bound)
    assert not constants.tflite_right_fits(big, np.full(k, 2**31 - 1))   # y + h would overflow
    assert not constants.tflite_right_fits(replace(rq, shift=np.full(k, -32)), bound)
    # built for Arm, SRDHM is one smmulr of 2·acc: accumulators must stay below 2^30 as well
    assert constants.tflite_right_fits(rq, bound, arm=True)
    assert constants.tflite_right_fits(rq, np.full(k, 2**30), arm=False)
    assert not constants.tflite_right_fits(rq, np.full(k, 2**30), arm=True)


def test_tflite_multiplier_of_minus_2_31_is_refused():
    lg = layer_graph(LayerSpec("fc", c=8, k=4, h=1, w=1), 1)
    layer = lg.layers[-1]
    rq = replace(layer.requant, multiplier=np.full(4, -2**31))
    assert "-2^31" in constants.check(replace(layer, requant=rq), lg)


# ------------------------------------------------------------------------------ projects

def _validate(path, target, tmp_path, c_cache, n=3):
    graph = load_model(path)
    ns = schedule_network(lower(graph), target, "model")
    report = validate_model(path, ns, graph, n_random=n, out_dir=tmp_path / "c", cache=c_cache)
    assert report.bit_exact and report.golden_vs_reference == 0, report.to_json()
    assert report.dma_bytes_measured == report.dma_bytes_predicted
    return ns


@pytest.mark.parametrize("l1_kb", [None, 8])
def test_example_on_pulp_kernels(l1_kb, tmp_path, c_cache):
    ns = _validate(EXAMPLE_ONNX, pulp_target("gap8", l1_kb=l1_kb), tmp_path, c_cache)
    labels = [c.placement.binding.label for c in ns.partition.choices]
    # the example's accumulators stay within 2^24 and its scales below 1/4: the onnx24 variant;
    # its add has a folded form
    assert labels.count("pulp/conv2d_s8_onnx24") == 3 and "pulp/depthwise_s8_onnx24" in labels
    assert "pulp/add_onnx_fold_s8" in labels
    assert (tmp_path / "c" / "tw_pulp" / "tw_pulp_conv.c").exists()
    assert "tw_pulp_conv2d_s8_onnx24(&p" in (tmp_path / "c" / "layers" / "layer_00.c").read_text()


@pytest.mark.parametrize("name", ["ic_resnet8", "kws_dscnn"])
def test_mlperf_on_pulp_kernels(name, tmp_path, c_cache):
    ns = _validate(mlperf_path(name), pulp_target("gap8"), tmp_path, c_cache, n=2)
    fams = {c.placement.binding.family.name for c in ns.partition.choices}
    assert fams == {"pulp", "portable"}                     # softmax stays portable


@pytest.mark.parametrize("net,fmt,per_channel", [("convs", "QDQ", False), ("residual", "QOperator", True),
                                                 ("matmul", "QOperator", False)])
def test_uint8_onnx_models_on_pulp_kernels(net, fmt, per_channel, tmp_path, c_cache):
    model = om.quantize(om.NETS[net](), tmp_path / f"{net}.onnx", fmt, per_channel, act="uint8")
    _validate(model, pulp_target("gap8", l1_kb=4), tmp_path, c_cache)


def test_nemo_shift_graph_on_pulp_kernels(tmp_path, c_cache):
    import onnx

    path = tmp_path / "nemo.onnx"
    onnx.save(om.nemo_net(), str(path))
    ns = _validate(path, pulp_target("gap8", l1_kb=1), tmp_path, c_cache, n=4)
    layers = ns.layers.layers
    assert {constants.variant(l, ns.layers) for l in layers if l.requant is not None} <= \
        {"shift", "shift32"}


@pytest.mark.parametrize("kind", ["conv", "dwconv", "fc"])
def test_shift_requant_64_bit_kernels_tiled_over_k(kind, tmp_path, c_cache):
    """Per-channel right shifts up to 40 and multipliers that overflow int32: the 64-bit shift
    kernels, tiled over k on a small L1."""
    lg = layer_graph(shift_specs()[kind], 3)
    rng = np.random.default_rng(9)
    layer = lg.layers[-1]
    k = layer.nest.K
    d = rng.integers(20, 41, k)
    rq = Requant("shift", rng.integers(1 << 18, 1 << 24, k), d, 4, -128, 127,
                 bias=rng.integers(-(1 << 30), 1 << 30, k))
    lg = replace(lg, layers=(*lg.layers[:-1], replace(layer, requant=rq)))
    assert constants.variant(lg.layers[-1], lg) == "shift"
    ns = schedule_network(lg, pulp_target("gap8", l1_kb=1), "model")
    assert any(t.count > 1 for t in ns.schedules[-1].tiles if t.dim == "k")
    report, p = validate_network(ns, tmp_path / kind, make_inputs(lg, 4), cache=c_cache)
    assert report.bit_exact, report.to_json()
    assert "_s8_shift(&p" in (p.path / "layers" / f"layer_{len(lg.layers) - 1:02d}.c").read_text()


@pytest.mark.parametrize("which", ["conv_k_tiles", "depthwise_rows"])
def test_layers_tiled_at_l3_on_pulp_kernels(which, tmp_path, c_cache):
    """Layers cut at L3→L2 (weights in L3 streamed by k tile; depthwise row and channel tiles):
    each L2 tile's constants in the pulp layout, bit-exact."""
    if which == "conv_k_tiles":
        lg = _conv_pool(CONV, 7)
        ns = schedule_network(lg, pulp_target("gap8", l2_kb=16), "model", l3_strategy="search")
        assert ns.l3.tilings["d"].w_tiled
    else:
        lg = _two_convs(LayerSpec("dwconv", c=32, k=32, h=16, w=7, fy=5, fx=5, sy=2, sx=2), 3)
        ns = schedule_network(lg, pulp_target("gap8", l2_kb=4), "dory", l3_strategy="search")
    assert ns.l3_tiles and {c.placement.binding.family.name for c in ns.partition.choices} == {"pulp"}
    report, _ = validate_network(ns, tmp_path / "p", make_inputs(lg, 3, seed=2), cache=c_cache)
    assert report.bit_exact, report.to_json()


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data(), seed=st.integers(0, 2**31 - 1), l1_kb=st.floats(0.5, 6.0),
       cores=st.sampled_from((1, 3, 8)))
def test_random_layer_on_pulp_kernels(kind, data, seed, l1_kb, cores, tmp_path_factory, c_cache):
    spec = data.draw(specs(kind), label="layer")
    lg = layer_graph(spec, seed)
    ns = schedule_small(lg, l1_kb, cores, "model", target=pulp_target)
    report, _ = validate_network(ns, tmp_path_factory.mktemp("prop"), make_inputs(lg, 2, seed),
                                 cache=c_cache)
    assert report.bit_exact, (spec, report.to_json())
    assert report.dma_bytes_measured == report.dma_bytes_predicted
