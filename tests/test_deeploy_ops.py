"""Deeploy's integer transformer operators (frontend/onnx_deeploy.py, golden/int_ops.py, tw_int.h's
tw_int_softmax / tw_int_rms_norm / tw_int_layer_norm / tw_int_gelu): small graphs written as QuantLab
writes them (float32 containers of int8 codes, NCHW, attributes as floats), each checked against
the formulas of Deeploy's reference kernels written out here element by element
(Generic/src/Softmax_s8.c with PULPOpen/src/iSoftmax.c's unsigned output, Generic/src/iRMSNorm_s8.c,
Snitch/src/iNoNorm.c, Generic/src/Layernorm_s8.c with the exporter's clip, Generic/src/GELU_s8.c,
ITAMax_s8's unsigned codes; the Gather that picks an attention head and IntegerMean as ReduceMean;
microLlama's attention-mask add of activations of different ranks as numpy broadcasts them),
then the generated C bit-exact with the golden model on gap8 and stm32h7 (host builds) — rank-4
tensors, so the ONNX last axis the operators work along is not the IR's last (NHWC) and the row
kernels walk it at a stride. Their bad attributes are one sentence (exit 2), and analyze prices
them. The corpus networks themselves are tests/test_integer_onnx.py's."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from tilewise.frontend import load_model
from tilewise.golden import run_graph
from tilewise.ir.ops import Op
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate.check import validate_model

from .codegen_cases import c_cache  # noqa: F401 (fixture)
from .test_cli_errors import assert_one_sentence_error, run_cli
from .test_onnx_int import _const, _model, _save, _vi

SHAPE = [1, 3, 4, 10]     # N, C, H, W: the operators work along W (IR axis 2 of NHWC)


def softmax_net(**attrs) -> onnx.ModelProto:
    a = dict(coeffA=1.0, coeffB=173.0, coeffC=15548.0, log2=127.0, n_levels=256.0)
    a.update(attrs)
    nodes = [helper.make_node("iSoftmax", ["x"], ["y"], name="smx",
                              **{k: numpy_helper.from_array(np.array([v], np.float32)) for k, v in a.items()})]
    return _model(nodes, [_vi("x", SHAPE)], [_vi("y", None)], opset=10)


def rms_net(weight=None, **attrs) -> onnx.ModelProto:
    a = dict(D=65536, n_levels=256)
    a.update(attrs)
    w = np.random.default_rng(7).integers(1 << 20, 1 << 22, SHAPE[-1]) if weight is None else weight
    nodes = [helper.make_node("iRMSNorm", ["x", "w"], ["y"], name="rms", **a)]
    return _model(nodes, [_vi("x", SHAPE)], [_vi("y", None)], [_const("w", w)], opset=10)


def nonorm_net(bias_shape=(SHAPE[-1],)) -> onnx.ModelProto:
    rng = np.random.default_rng(9)
    f = lambda v: numpy_helper.from_array(np.array([v], np.float32))    # noqa: E731
    nodes = [helper.make_node("iNoNorm", ["x", "w", "b"], ["y"], name="nonorm", D=f(65536.0), mul=f(425.0),
                              n_levels=f(256.0))]
    inits = [_const("w", rng.integers(-120, 128, SHAPE[1:])), _const("b", rng.integers(-5000, 5000, bias_shape))]
    return _model(nodes, [_vi("x", SHAPE)], [_vi("y", None)], inits, opset=10)


def layernorm_net(weight=None, bias=None, shape=SHAPE, **attrs) -> onnx.ModelProto:
    a = dict(D=np.array([16384.0], np.float32), n_levels=np.array([256.0], np.float32))
    a.update(attrs)
    rng = np.random.default_rng(11)
    w = rng.integers(1 << 19, 1 << 21, shape[-1]) if weight is None else weight
    b = rng.integers(-40000, 40000, shape[-1]) if bias is None else bias
    nodes = [helper.make_node("iLayerNorm", ["x", "w", "b"], ["y"], name="ln",
                              **{k: numpy_helper.from_array(np.asarray(v, np.float32)) for k, v in a.items()})]
    return _model(nodes, [_vi("x", shape)], [_vi("y", None)], [_const("w", w), _const("b", b)], opset=10)


def gelu_net(b=-40, one=1743) -> onnx.ModelProto:
    nodes = [helper.make_node("iGELU", ["x"], ["y"], name="gelu", b=b, one=one)]
    return _model(nodes, [_vi("x", SHAPE)], [_vi("y", None)], opset=10)


def itamax_net(n_levels=256.0) -> onnx.ModelProto:
    nodes = [helper.make_node("ITAMax", ["x"], ["y"], name="ita",
                              n_levels=numpy_helper.from_array(np.array([n_levels], np.float32)))]
    return _model(nodes, [_vi("x", SHAPE)], [_vi("y", None)], opset=10)


def head_net(index=np.array(1)) -> onnx.ModelProto:
    """CCT's attention tail: Gather of one head (axis 1, a scalar index), IntegerMean over tokens."""
    nodes = [helper.make_node("Gather", ["x", "i"], ["h"], name="head", axis=1),
             helper.make_node("IntegerMean", ["h"], ["y"], name="mean", axes=[1], keepdims=0)]
    i = numpy_helper.from_array(np.asarray(index, np.int64), "i")
    return _model(nodes, [_vi("x", SHAPE)], [_vi("y", None)], [i], opset=10)


def mask_net(op: str = "Add", mask_shape=(SHAPE[-1],), mask_first: bool = False) -> onnx.ModelProto:
    """microLlama's attention mask: an activation of lower rank (its position input, [L]) added to
    the scores [1, H, 1, L] — numpy's / ONNX's broadcast, the dims aligned right."""
    ins = ["m", "x"] if mask_first else ["x", "m"]
    nodes = [helper.make_node(op, ins, ["y"], name="mask")]
    return _model(nodes, [_vi("x", SHAPE), _vi("m", list(mask_shape))], [_vi("y", None)], opset=10)


def _rows(x: np.ndarray):
    """Every row along the last axis of an NCHW array, as a list of Python ints, and its index."""
    for idx in np.ndindex(*x.shape[:-1]):
        yield idx, [int(v) for v in x[idx]]


def softmax_by_hand(x: np.ndarray, a: int, b: int, c: int, log2: int, n: int) -> np.ndarray:
    out = np.zeros_like(x)
    for idx, row in _rows(x):
        m = max(row)
        es = []
        for v in row:
            d = v - m
            z = min(-d // log2, 31)
            p = d + z * log2
            es.append((a * (p + b) * (p + b) + c) >> z)
        out[idx] = [e * (n - 1) // sum(es) for e in es]
    return out


def rms_by_hand(x: np.ndarray, w: np.ndarray, d: int) -> np.ndarray:
    out = np.zeros_like(x)
    for idx, row in _rows(x):
        r = math.isqrt(sum(v * v for v in row) // len(row) + 1)
        q = [int(v * int(wj) / r) for v, wj in zip(row, w)]          # toward zero, as C divides
        out[idx] = [min(max(v >> d, -128), 127) for v in q]
    return out


def layernorm_by_hand(x: np.ndarray, w: np.ndarray, b: np.ndarray, d: int) -> np.ndarray:
    """Layernorm_s8.c's loops (C's divisions toward zero), clipped to int8 as QuantLab's exporter does."""
    out = np.zeros_like(x)
    for idx, row in _rows(x):
        mean = int(sum(row) / len(row))
        r = math.isqrt(sum((v - mean) ** 2 for v in row) // len(row) + 1)
        q = [int((v - mean) * int(wj) / r) + int(bj) for v, wj, bj in zip(row, w, b)]
        out[idx] = [min(max(v >> d, -128), 127) for v in q]
    return out


def gelu_by_hand(x: np.ndarray, b: int, one: int) -> np.ndarray:
    """GELU_s8.c's loop."""
    out = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        v = int(x[idx])
        sign = (v > 0) - (v < 0)
        q = -b if abs(v) > -b else abs(v)
        out[idx] = v * ((one + sign * (one - (q + b) * (q + b))) >> 1)
    return out


def itamax_by_hand(x: np.ndarray) -> np.ndarray:
    """ITAMax_s8's loops, before its − n_levels/2 (the exporter's unsigned codes)."""
    out = np.zeros_like(x)
    for idx, row in _rows(x):
        m = max(row)
        shifts = [(m - v + 16) >> 5 for v in row]
        inv = 255 * 256 // sum(256 >> s for s in shifts)
        out[idx] = [inv >> s for s in shifts]
    return out


def _input(g, seed: int, dtype: str = "int8") -> tuple[np.ndarray, np.ndarray]:
    """Random int8 codes in IR layout (NHWC) and the same values in ONNX layout (NCHW)."""
    lo = -128 if dtype == "int8" else 0
    x = np.random.default_rng(seed).integers(lo, lo + 256, SHAPE)
    return np.transpose(x, (0, 2, 3, 1)), x


def _golden_onnx_order(g, x_ir: np.ndarray) -> np.ndarray:
    return np.transpose(run_graph(g, {g.inputs[0]: x_ir})[g.outputs[0]], (0, 3, 1, 2))


def test_isoftmax_is_deeploys_integer_exponential(tmp_path):
    g = load_model(_save(tmp_path, softmax_net()), {"*": "int8"})
    node = next(n for n in g.nodes if n.op == Op.INT_SOFTMAX)
    assert node.params.axis == 2 and g.tensors[node.outputs[0]].dtype == "uint8"
    assert "iSoftmax" in g.meta["onnx_no_reference"]
    for seed in range(3):
        x_ir, x = _input(g, seed)
        np.testing.assert_array_equal(_golden_onnx_order(g, x_ir), softmax_by_hand(x, 1, 173, 15548, 127, 256))


def test_irmsnorm_is_deeploys_floor_sqrt_and_truncating_division(tmp_path):
    w = np.random.default_rng(7).integers(1 << 20, 1 << 22, SHAPE[-1])
    g = load_model(_save(tmp_path, rms_net(w)), {"*": "int8"})
    for seed in range(3):
        x_ir, x = _input(g, seed)
        np.testing.assert_array_equal(_golden_onnx_order(g, x_ir), rms_by_hand(x, w, 16))


@pytest.mark.parametrize("bias_shape", [(SHAPE[-1],), tuple(SHAPE[1:])], ids=["bias_per_column", "bias_full"])
def test_inonorm_is_a_product_and_a_shift_requant(bias_shape, tmp_path):
    """((x·w + b)·mul) >> log2(D), clamped: the bias folds into the requant's λ when it is one per
    element of the last axis, else an exact add comes first."""
    model = nonorm_net(bias_shape)
    g = load_model(_save(tmp_path, model), {"*": "int8"})
    w, b = (numpy_helper.to_array(t).astype(np.int64) for t in model.graph.initializer)
    ops = [n.op for n in g.nodes]
    assert ops.count(Op.ADD) == (len(bias_shape) > 1) and Op.REQUANT in ops
    x_ir, x = _input(g, 4)
    want = np.clip(((x * w + b) * 425) >> 16, -128, 127)
    np.testing.assert_array_equal(_golden_onnx_order(g, x_ir), want)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_ilayernorm_is_deeploys_mean_floor_sqrt_and_truncating_division(dtype, tmp_path):
    """Deeploy's input offset makes uint8 codes their values: the mean, the deviations, the clip."""
    model = layernorm_net()
    g = load_model(_save(tmp_path, model), {"*": dtype})
    node = next(n for n in g.nodes if n.op == Op.LAYER_NORM)
    assert node.params.axis == 2 and g.tensors[node.outputs[0]].dtype == "int8"
    assert "iLayerNorm" in g.meta["onnx_no_reference"]
    w, b = (numpy_helper.to_array(t).astype(np.int64) for t in model.graph.initializer)
    clipped = 0
    for seed in range(3):
        x_ir, x = _input(g, seed, dtype)
        want = layernorm_by_hand(x, w, b, 14)
        np.testing.assert_array_equal(_golden_onnx_order(g, x_ir), want)
        clipped += int(np.sum((want == -128) | (want == 127)))
    assert clipped > 0      # the weights are large enough for the clip to matter


def test_igelu_is_deeploys_integer_gelu(tmp_path):
    g = load_model(_save(tmp_path, gelu_net()), {"*": "int8"})
    node = next(n for n in g.nodes if n.op == Op.INT_GELU)
    assert g.tensors[node.outputs[0]].dtype == "int32"
    for seed in range(2):
        x_ir, x = _input(g, seed)
        np.testing.assert_array_equal(_golden_onnx_order(g, x_ir), gelu_by_hand(x, -40, 1743))
    # every int8 code: the I-BERT polynomial's knee at |x| = −b and the sign
    x = np.arange(-128, 128).reshape(1, 1, 1, 256)
    g1 = load_model(_save(tmp_path, _model([helper.make_node("iGELU", ["x"], ["y"], name="gelu", b=-40, one=1743)],
                                           [_vi("x", [1, 1, 1, 256])], [_vi("y", None)], opset=10), "all"),
                    {"*": "int8"})
    got = run_graph(g1, {g1.inputs[0]: np.transpose(x, (0, 2, 3, 1))})[g1.outputs[0]]
    np.testing.assert_array_equal(np.transpose(got, (0, 3, 1, 2)), gelu_by_hand(x, -40, 1743))


def test_itamax_is_itas_softmax_by_shifts(tmp_path):
    g = load_model(_save(tmp_path, itamax_net()), {"*": "int8"})
    node = next(n for n in g.nodes if n.op == Op.ITA_MAX)
    assert node.params.axis == 2 and g.tensors[node.outputs[0]].dtype == "uint8"
    for seed in range(3):
        x_ir, x = _input(g, seed)
        np.testing.assert_array_equal(_golden_onnx_order(g, x_ir), itamax_by_hand(x))


@pytest.mark.parametrize("index", [np.array(1), np.array(-1), np.array([0, 2])], ids=["scalar", "negative", "run"])
def test_gather_of_a_head_then_integer_mean(index, tmp_path):
    """A scalar index drops the axis (a slice and a reshape), a run of indices keeps it; IntegerMean
    is Deeploy's ReduceMean, floor((Σ + n/2) / n)."""
    g = load_model(_save(tmp_path, head_net(index)), {"*": "int8"})
    x_ir, x = _input(g, 5)
    h = np.take(x, index, axis=1)
    want = (h.sum(axis=1) + h.shape[1] // 2) // h.shape[1]
    got = run_graph(g, {g.inputs[0]: x_ir})[g.outputs[0]]     # rank 2 / 3: the IR holds ONNX order
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op,mask_shape,mask_first", [
    ("Add", (SHAPE[-1],), False), ("Add", (SHAPE[2], SHAPE[-1]), True), ("Sub", (SHAPE[-1],), True),
    ("Mul", (1, SHAPE[-1]), False)], ids=["add_rank1", "add_rank2_first", "sub_rank1_first", "mul_rank2"])
def test_activations_of_different_ranks_broadcast_aligned_right(op, mask_shape, mask_first, tmp_path):
    """An add / sub / mul of a rank-4 activation and one of lower rank (microLlama's attention
    mask): numpy's broadcast of the ONNX tensors, the lower rank's dims aligned right."""
    g = load_model(_save(tmp_path, mask_net(op, mask_shape, mask_first)), {"*": "int8"})
    x_ir, x = _input(g, 6)
    m = np.random.default_rng(8).integers(-128, 128, mask_shape)
    a, b = (m, x) if mask_first else (x, m)
    want = a + b if op == "Add" else a - b if op == "Sub" else a * b
    got = run_graph(g, {"x": x_ir, "m": m})[g.outputs[0]]       # the output in ONNX order: the operands' common one
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def mask_rank2_net() -> onnx.ModelProto:
    return mask_net("Sub", (SHAPE[2], SHAPE[-1]), True)


@pytest.mark.parametrize("target", ["gap8", "stm32h7"])
@pytest.mark.parametrize("net", [softmax_net, rms_net, nonorm_net, layernorm_net, gelu_net, itamax_net, head_net,
                                 mask_net, mask_rank2_net])
def test_generated_c_bit_exact(net, target, tmp_path, c_cache):
    path = _save(tmp_path, net())
    g = load_model(path, {"*": "int8"})
    ns = schedule_network(lower(g), get_target(target))
    r = validate_model(path, ns, g, n_random=3, out_dir=tmp_path / "c", cache=c_cache)
    assert r.bit_exact, r.to_json()


@pytest.mark.parametrize("shape", [(3, 1, 1), (4, 1), (10,)], ids=["per_channel_innermost", "per_row", "per_column"])
def test_per_channel_requant_on_the_host_core_bit_exact(shape, tmp_path, c_cache):
    """A RequantShift of int16 codes with one mul / add per channel (NCHW's C: the
    IR's innermost axis, runs of one element, as Deeploy's iNoNorm), per row (H: runs of W·C, two
    per value with N = 2) or per column (W: runs of C) runs tw_int_requant, channel by channel,
    bit-exact with the golden model."""
    rng = np.random.default_rng(13)
    mul, add = rng.integers(1, 256, shape), rng.integers(-4096, 4096, shape)
    nodes = [helper.make_node("RequantShift", ["x", "mul", "add"], ["y"], div=1 << 19, n_levels_out=256,
                              signed=1, name="rq")]
    x_shape = [2, 3, 4, 10]
    model = _model(nodes, [_vi("x", x_shape)], [_vi("y", None)], [_const("mul", mul), _const("add", add)],
                   opset=10)
    path = _save(tmp_path, model)
    g = load_model(path, {"*": "int16"})
    ns = schedule_network(lower(g), get_target("stm32h7"))
    (rq,) = [i for i, layer in enumerate(ns.layers.layers) if layer.op == Op.REQUANT]
    assert ns.placement(rq).binding.name.startswith("requant_"), ns.placement(rq).binding.name
    r = validate_model(path, ns, g, n_random=3, out_dir=tmp_path / "c", cache=c_cache)
    assert r.bit_exact, r.to_json()


@pytest.mark.parametrize("target", ["gap8", "stm32h7"])
def test_analyze_prices_the_row_kernels_per_element(target, tmp_path):
    """analyze --json: the layer on the host core, its cycles the per-element coefficient
    (bindings/pulp/cost.py) times its elements, and a call (gap8's iGELU: on the cluster)."""
    import json

    for net, op, coef in ((softmax_net, "int_softmax", "int_smx_elem"), (rms_net, "rms_norm", "int_rms_elem"),
                          (layernorm_net, "layer_norm", "int_ln_elem"), (gelu_net, "int_gelu", "int_gelu_elem"),
                          (itamax_net, "ita_max", "int_ita_elem")):
        path = _save(tmp_path, net(), op)
        proc = run_cli("analyze", str(path), "--target", target, "--input-dtype", "int8", "--json")
        assert proc.returncode == 0, proc.stderr
        (layer,) = [x for x in json.loads(proc.stdout)["layers"] if x["op"] == op]
        (b,) = [b for m in get_target(target).modules for b in m.bindings if b.label == layer["binding"]]
        if layer["module"] == "cluster":
            # gap8's cluster takes the elementwise iGELU (bindings/pulp/rows.py; the row ops of
            # this rank-4 net run along W, not the last axis, and stay on the host core), priced
            # per element of the busiest core by its fitted model (tests/test_pulp_rows.py)
            assert (target, op, b.name) == ("gap8", "int_gelu", "int_gelu_rows_x8y32"), layer
            per = dict(b.cost.elem)["int_gelu"] / 8
            assert per * math.prod(SHAPE) <= layer["cycles"] <= per * math.prod(SHAPE) + 4000, (layer, per)
            continue
        per = getattr(b.cost.for_key(b.key), coef)
        assert per * math.prod(SHAPE) <= layer["cycles"] <= per * math.prod(SHAPE) * 1.5, (layer, per)


@pytest.mark.parametrize("model,words", [
    (lambda: softmax_net(coeffB=172.5), ("'smx'", "iSoftmax", "coeffB", "172.5")),
    (lambda: softmax_net(log2=0.0), ("'smx'", "log2 = 0")),
    (lambda: softmax_net(coeffC=-40000.0), ("'smx'", "C = -40000")),
    (lambda: rms_net(D=1000), ("'rms'", "iRMSNorm", "D = 1000", "power of two")),
    (lambda: rms_net(weight=np.ones(3)), ("'rms'", "weight of shape (3,)")),
    (lambda: rms_net(weight=np.full(SHAPE[-1], 1 << 26)), ("'rms'", "int32")),
    (lambda: layernorm_net(D=np.array([1000.0])), ("'ln'", "iLayerNorm", "D = 1000", "power of two")),
    (lambda: layernorm_net(bias=np.zeros(4)), ("'ln'", "bias of shape (4,)")),
    (lambda: layernorm_net(weight=np.full(SHAPE[-1], 2.0 ** 33)), ("'ln'", "weight beyond int32")),
    (lambda: layernorm_net(n_levels=np.array([1.0])), ("'ln'", "n_levels = 1")),
    (lambda: layernorm_net(shape=[1, 1, 1, 40000]), ("'ln'", "rows of 40000", "int32")),
    (lambda: gelu_net(b=-200), ("'gelu'", "iGELU", "b = -200", "int8")),
    (lambda: gelu_net(one=40000), ("'gelu'", "one = 40000", "int16")),
    (lambda: itamax_net(n_levels=128.0), ("'ita'", "ITAMax", "n_levels = 128", "256")),
    (lambda: head_net(np.array([2, 0])), ("'head'", "Gather", "indices [2, 0]", "one increasing run")),
], ids=["non_integer_coeff", "log2_zero", "negative_exponential", "d_not_pow2", "weight_shape", "product_int32",
        "ln_d_not_pow2", "ln_bias_shape", "ln_weight_int32", "ln_levels", "ln_row_int32", "gelu_b", "gelu_one",
        "ita_levels", "gather_not_a_run"])
def test_bad_attributes_are_one_sentence(model, words, tmp_path):
    path = _save(tmp_path, model())
    assert_one_sentence_error(run_cli("analyze", str(path), "--input-dtype", "int8"), str(path), *words)


def test_unsigned_input_to_irmsnorm_is_one_sentence(tmp_path):
    path = _save(tmp_path, rms_net())
    assert_one_sentence_error(run_cli("analyze", str(path)), "'rms'", "uint8", "--input-dtype")

