"""QuantLab integer ONNX (RequantShift, frontend/onnx_quantlab.py), bit-exact end to end.

Each pattern of notes/integer-onnx.md "QuantLab" has a test network in tests/quantlab_models.py:
RequantShift fused after Conv (dense, depthwise, strided), Gemm (transB) and MatMul; standalone
(an identity requantization on a residual branch, 4-D and 2-D); after an integer Add (4-D and
2-D, signed and unsigned branches); constants shared by several RequantShifts and a Gemm's bias;
an int8-typed input. onnxruntime cannot run RequantShift, so the references are
- `evaluate`, an independent int64 numpy statement of the semantics (quantlab_models.py): the
  golden model equals it on every RequantShift output and the network output;
- onnxruntime on the copy with RequantShift expanded into standard ops, which is exact where the
  static bound proves every intermediate below 2^24: it equals `evaluate` too;
and validate holds the generated C against the golden model and that onnxruntime run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from tilewise.frontend import load_model
from tilewise.frontend.onnx_io import onnx_feeds, reference_session, run_reference
from tilewise.frontend.onnx_lower import Lowering
from tilewise.frontend.onnx_model import read_graph
from tilewise.frontend.onnx_quantlab import F32_EXACT, expanded_model
from tilewise.frontend.onnx_quantlab import to_integer_ops as quantlab_ops
from tilewise.golden import run_graph
from tilewise.ir.ops import Op
from tilewise.ir.tensor import dtype_range
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate.check import make_inputs, validate_model
from tilewise.validate.reference import ORT_EXPANDED, reference_name
from tilewise.validate.text import format_report

from . import quantlab_models as qm
from .codegen_cases import c_cache  # noqa: F401 (fixture)
from .test_cli_errors import assert_one_sentence_error, run_cli


def _save(tmp_path: Path, name: str, model: onnx.ModelProto) -> Path:
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


def _inputs(g, n: int = 4) -> list[np.ndarray]:
    t = g.tensors[g.inputs[0]]
    lo, hi = dtype_range(t.dtype)
    rng = np.random.default_rng(11)
    xs = [rng.integers(lo, hi + 1, t.shape) for _ in range(n)]
    return xs + [np.full(t.shape, lo), np.full(t.shape, hi)]


def _ir_layout(v: np.ndarray) -> np.ndarray:
    """An NCHW array in the IR's NHWC layout (2-D arrays as they are)."""
    return v.transpose((0, 2, 3, 1)) if v.ndim == 4 else v


@pytest.mark.parametrize("net", sorted(qm.NETS))
def test_golden_equals_numpy_semantics(net, tmp_path):
    """Every RequantShift output and the network output of the golden model equal `evaluate`."""
    model = qm.NETS[net]()
    g = load_model(_save(tmp_path, net, model))
    rs_outputs = [n.output[0] for n in model.graph.node if n.op_type == "RequantShift"]
    compared = 0
    for x in _inputs(g):
        got = run_graph(g, {g.inputs[0]: x}, keep_all=True)
        want = qm.evaluate(model, {"x": onnx_feeds(g, {g.inputs[0]: x})["x"]})
        for name in rs_outputs:
            assert name in got, f"{net}: RequantShift output {name} has no IR tensor"
            np.testing.assert_array_equal(got[name], _ir_layout(want[name]), err_msg=f"{net}: {name}")
            compared += want[name].size
    out = model.graph.output[0].name
    assert len(np.unique(want[out])) > 1, f"{net}: a degenerate test network (constant output)"
    assert compared > 0


@pytest.mark.parametrize("net", sorted(qm.NETS))
def test_expanded_onnxruntime_equals_numpy_semantics(net, tmp_path):
    """onnxruntime on the expanded copy (the validate reference) equals `evaluate`, and the
    static bound that makes it exact holds on these networks."""
    model = qm.NETS[net]()
    path = _save(tmp_path, net, model)
    g = load_model(path)
    assert g.meta["onnx_style"] == "quantlab" and g.meta["onnx_value_bound"] < F32_EXACT
    before = model.SerializeToString()
    copy = expanded_model(model, read_graph(path.read_bytes(), str(path)))
    assert "RequantShift" not in {n.op_type for n in copy.graph.node}
    assert model.SerializeToString() == before      # the original is untouched
    sess = reference_session(copy.SerializeToString())
    for x in _inputs(g):
        ref = run_reference(g, sess, {g.inputs[0]: x})[g.outputs[0]]
        want = qm.evaluate(model, {"x": onnx_feeds(g, {g.inputs[0]: x})["x"]})[model.graph.output[0].name]
        np.testing.assert_array_equal(ref, want)


def test_fused_requant_parameters(tmp_path):
    """After Conv / depthwise Conv / Gemm / MatMul the RequantShift is the layer's shift Requant:
    multiplier = mul, bias = add + div/2, shift = log2(div), clamp from n_levels_out and signed."""
    model = qm.fused_net()
    g = load_model(_save(tmp_path, "fused", model))
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    rs = [n for n in model.graph.node if n.op_type == "RequantShift"]
    weighted = [n for n in g.nodes if n.op in (Op.CONV2D, Op.FULLY_CONNECTED)]
    assert [n.op for n in weighted] == [Op.CONV2D, Op.CONV2D, Op.FULLY_CONNECTED, Op.FULLY_CONNECTED]
    assert weighted[1].params.groups == 8 and weighted[1].params.stride == (2, 2)
    for r, layer in zip(rs, weighted):
        a = {x.name: helper.get_attribute_value(x) for x in r.attribute}
        rq = layer.params.requant
        k = rq.multiplier.size
        assert rq.mode == "shift"
        np.testing.assert_array_equal(rq.multiplier, np.broadcast_to(init[r.input[1]].reshape(-1), k))
        np.testing.assert_array_equal(rq.bias, np.broadcast_to(init[r.input[2]].reshape(-1) + a["div"] // 2, k))
        assert set(rq.shift.tolist()) == {int(np.log2(a["div"]))}
        assert (rq.qmin, rq.qmax) == ((-128, 127) if a["signed"] else (0, 255))
    assert [g.tensors[n.outputs[0]].dtype for n in weighted] == ["uint8", "int8", "int8", "int8"]


def test_standalone_and_add_lowering(tmp_path):
    """A standalone RequantShift is a depthwise 1×1 conv with weights 1; Add → RequantShift is a
    concat along channels, a reshape to [N, H, 2W, C] and a depthwise 1×2 conv, stride (1, 2),
    weights 1 — so its accumulator is a + b exactly."""
    g = load_model(_save(tmp_path, "residual", qm.residual_net()))
    convs = [n for n in g.nodes if n.op == Op.CONV2D]
    dws = [n for n in convs if n.params.groups > 1]
    assert len(dws) == 4           # two standalone, two after an Add
    for n in dws:
        w = g.tensors[n.inputs[1]].data
        assert n.params.groups == w.shape[0] and np.all(w == 1) and len(n.inputs) == 2
    pairs = [n for n in dws if n.params.stride == (1, 2)]
    assert len(pairs) == 2 and all(g.tensors[n.inputs[1]].data.shape[1:] == (1, 2, 1) for n in pairs)
    prod = {n.outputs[0]: n for n in g.nodes}
    for n in pairs:
        r = prod[n.inputs[0]]
        assert r.op == Op.RESHAPE and prod[r.inputs[0]].op == Op.CONCAT
    layers = lower(g).layers
    assert sum(layer.op == Op.DEPTHWISE for layer in layers) == 4


def test_shared_initializers_are_read_not_edited(tmp_path):
    """One `mul`/`add` pair feeds two RequantShifts with different div, and one tensor is both a
    Gemm's bias and a RequantShift's `add`: each layer gets its own derived constants, the file's
    initializers stay as they were."""
    model = qm.shared_net()
    path = _save(tmp_path, "shared", model)
    before = {t.name: numpy_helper.to_array(t).copy() for t in model.graph.initializer}
    g = load_model(path)
    after = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}
    rs = [n for n in model.graph.node if n.op_type == "RequantShift"]
    assert rs[0].input[1:] == rs[1].input[1:]
    divs = [helper.get_attribute_value(a) for n in rs[:2] for a in n.attribute if a.name == "div"]
    assert divs[0] != divs[1]
    convs = [n for n in g.nodes if n.op == Op.CONV2D and n.params.groups == 1]
    assert len(convs) == 2           # the shared conv output: one layer per RequantShift reader
    for layer, div in zip(convs, divs):
        np.testing.assert_array_equal(layer.params.requant.bias, before[rs[0].input[2]].reshape(-1) + div // 2)
    fc = next(n for n in g.nodes if n.op == Op.FULLY_CONNECTED)
    gemm = next(n for n in model.graph.node if n.op_type == "Gemm")
    np.testing.assert_array_equal(g.tensors[fc.inputs[2]].data, before[gemm.input[2]])
    div = next(helper.get_attribute_value(a) for a in rs[-1].attribute if a.name == "div")
    np.testing.assert_array_equal(fc.params.requant.bias, before[gemm.input[2]] + div // 2)
    for name, arr in before.items():
        np.testing.assert_array_equal(after[name], arr)
    # the decoded constants the rewrite and the lowering read are the same arrays afterwards
    og = read_graph(path.read_bytes(), str(path))
    lw = Lowering(quantlab_ops(og), "quantlab")
    lw.lower_inputs()
    lw.lower_nodes()
    lw.finish(og.name, {})
    for name, arr in before.items():
        np.testing.assert_array_equal(og.consts[name], arr)


@pytest.mark.parametrize("net", sorted(qm.NETS))
def test_generated_c_bit_exact(net, tmp_path, c_cache):
    """validate: generated C (gap8, 1 kB L1, so layers are tiled) equals the golden model and
    onnxruntime on the expanded copy, and says which reference it used."""
    path = _save(tmp_path, net, qm.NETS[net]())
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("gap8", l1_kb=1), "model")
    report = validate_model(path, ns, graph, n_random=4, out_dir=tmp_path / "c", cache=c_cache)
    assert report.reference.startswith(ORT_EXPANDED) and "2^24" in report.reference
    assert report.golden_vs_reference == 0
    assert report.bit_exact, report.to_json()


def test_generated_c_bit_exact_on_a_host_target(tmp_path, c_cache):
    """The residual network on the portable kernels of another target (stm32h7): bit-exact."""
    path = _save(tmp_path, "residual", qm.residual_net())
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("stm32h7"), "model")
    report = validate_model(path, ns, graph, n_random=3, out_dir=tmp_path / "c", cache=c_cache)
    assert report.golden_vs_reference == 0 and report.bit_exact, report.to_json()


def test_no_reference_when_float32_is_not_provably_exact(tmp_path, c_cache):
    """A dense layer whose accumulator may pass 2^24: validate says that onnxruntime cannot serve
    and compares the C with the golden model only (which still equals `evaluate`)."""
    model = qm.wide_dense_net()
    path = _save(tmp_path, "wide", model)
    graph = load_model(path)
    assert graph.meta["onnx_value_bound"] >= F32_EXACT
    name = reference_name(graph)
    assert name.startswith("no reference runtime") and "2^24" in name and "golden model only" in name
    lg = lower(graph)
    ns = schedule_network(lg, get_target("gap8", l1_kb=1), "model")
    report = validate_model(path, ns, graph, n_random=3, out_dir=tmp_path / "c", cache=c_cache)
    assert report.reference == name and report.golden_vs_reference is None
    assert report.bit_exact, report.to_json()
    text = format_report(report)
    assert "generated C vs golden model on" in text and f"reference:   {name}" in text
    for x in make_inputs(lg, 3):
        got = run_graph(graph, {graph.inputs[0]: x})[graph.outputs[0]]
        want = qm.evaluate(model, {"x": onnx_feeds(graph, {graph.inputs[0]: x})["x"]})[model.graph.output[0].name]
        np.testing.assert_array_equal(got, want)


def test_large_multipliers_need_the_int64_expansion(tmp_path):
    """With multipliers up to 2^12, x·mul passes 2^24, where a float32 requantization would not be
    provably exact; the expansion's int64 one is, so the bound (float32 values only) still holds and
    validate keeps onnxruntime as the reference (test_generated_c_bit_exact[fused_wide_mul])."""
    model = qm.NETS["fused_wide_mul"]()
    path = _save(tmp_path, "wide_mul", model)
    g = load_model(path)
    x = _inputs(g)[0]
    env = qm.evaluate(model, {"x": onnx_feeds(g, {g.inputs[0]: x})["x"]})
    rs = [n for n in model.graph.node if n.op_type == "RequantShift"]
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    products = [np.abs(env[r.input[0]] * init[r.input[1]]).max() for r in rs]
    assert max(products) >= F32_EXACT
    assert g.meta["onnx_value_bound"] < F32_EXACT


def _bad(tmp_path: Path, **change) -> Path:
    n = qm.QNet("bad", (1, 2, 4, 4), wmax=16)
    c = n.conv("x", 2, 3)
    mul, add = n.const("mul", np.ones((3, 1, 1))), n.const("add", np.zeros((3, 1, 1)))
    attrs = {"div": 4, "n_levels_out": 256, "signed": 1}
    attrs.update(change)
    attrs = {k: v for k, v in attrs.items() if v is not None}
    y = n.node("RequantShift", [c, mul, add], **attrs)
    return _save(tmp_path, "bad", n.model([y]))


@pytest.mark.parametrize("change,words", [
    ({"div": 6}, "divides by 6, not a power of two"),
    ({"signed": None}, "lacks the attribute(s) signed"),
])
def test_bad_requant_shift_is_one_sentence_exit_2(change, words, tmp_path):
    path = _bad(tmp_path, **change)
    res = run_cli("analyze", str(path))
    assert_one_sentence_error(res, str(path), "RequantShift", words)


def test_add_of_mixed_types_is_an_exact_integer_add(tmp_path, c_cache):
    """An int8 and a uint8 branch added before a RequantShift: the exact integer add (int16) and
    the requant op (frontend/onnx_int.py) — not the 8-bit concat form — bit-exact end to end."""
    n = qm.QNet("mixed", (1, 2, 4, 4), wmax=16)
    a = n.rq(n.conv("x", 2, 3), signed=1)
    b = n.rq(n.conv("x", 2, 3), signed=0)
    path = _save(tmp_path, "mixed", n.model([n.rq(n.node("Add", [a, b]), signed=1)]))
    g = load_model(path)
    ops = [node.op for node in g.nodes]
    assert Op.ADD in ops and Op.REQUANT in ops
    add = next(node for node in g.nodes if node.op == Op.ADD)
    assert g.tensors[add.outputs[0]].dtype == "int16"
    r = validate_model(path, schedule_network(lower(g), get_target("gap8")), g, n_random=4, seed=3)
    assert r.bit_exact, format_report(r)
