"""The cluster's row-wise integer ops and transpose through L1 (bindings/pulp/rows.py,
c/tw_pulp_rows.h, issue 28), priced by bindings/pulp/rows_cost.py.

- bit-exact with the golden model on the host build (gap8's cluster, the host HAL whose DMA
  completes only at its wait): Deeploy's iLayerNorm (int8 and uint8 input; its 32-bit path and,
  with weights beyond it, its 64-bit one), iRMSNorm, iSoftmax, ITAMax, iGELU,
  iHardswish, RequantShift, Transpose and IntegerMean on rank-3 tensors whose rows are the last axis, in
  blocks of rows (several blocks, a short last one), each layer on its cluster binding;
- a row along another axis, a per-channel requant and a row too long for an L1 block stay on
  the host core (the binding's reason);
- the block arithmetic: scratch, DMA and rows agree (rows.py);
- the cost model against its own measurement: bench/calibration_rows.json holds every such
  layer of Deeploy's ICCT and microLlama1 as bench/calibrate_rows.py measured it on GVSoC
  (pulp-open, 8 and 1 cores); the model in the tree predicts each (cores, op)'s layers summed
  within TOLERANCE — no simulator needed;
- one live GVSoC run (a small network of these ops, 8 cores): bit-exact, the DMA the schedules
  declare, each layer within LIVE_TOLERANCE of its prediction (GVSoC and the RISC-V toolchain:
  a failure under TILEWISE_REQUIRE_MODELS=1);
- the host cores' portable row kernels where they stay in use (stm32h7, the PULP host core):
  bench/calibration_host_rows.json, counted instructions and GVSoC cycles of the Deeploy
  exports' layers, each (configuration, op) within HOST_TOLERANCE of the model in the tree.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from bench import calibrate_host_rows as hr
from bench import calibrate_rows as cr
from tilewise.bindings.pulp import rows
from tilewise.frontend import load_model
from tilewise.ir.layer import LoopNest
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate.check import validate_model

from .codegen_cases import c_cache  # noqa: F401 (fixture)
from .test_onnx_int import _const, _model, _save, _vi
from .test_tflite_repair import require_isa

#: predicted / measured of a (cores, op)'s layers summed, against bench/calibration_rows.json
TOLERANCE = 0.25
#: predicted / measured of one layer of the live run
LIVE_TOLERANCE = 0.35


def _f(v) -> onnx.AttributeProto:
    return numpy_helper.from_array(np.array([v], np.float32))


def row_net(shape=(1, 40, 96), ln_weight=None, rms_weight=None, unsigned: bool = False) -> onnx.ModelProto:
    """x [1, R, L] int8 codes: iLayerNorm, iRMSNorm, iSoftmax (uint8 out), ITAMax of the layer
    norm, iGELU (int32) and a RequantShift back to int8, iHardswish (int32) and a RequantShift,
    a Transpose, an IntegerMean over the rows of ITAMax's output; every row op along the last
    axis. `unsigned`: x uint8 codes, read by the layer
    norm and the transpose only (Deeploy's iRMSNorm and iSoftmax take signed codes)."""
    rng = np.random.default_rng(5)
    L = shape[-1]
    lw = rng.integers(1 << 19, 1 << 21, L) if ln_weight is None else ln_weight
    rw = rng.integers(1 << 20, 1 << 22, L) if rms_weight is None else rms_weight
    nodes = [
        helper.make_node("iLayerNorm", ["x", "lw", "lb"], ["ln"], name="ln", D=_f(16384.0), n_levels=_f(256.0)),
        helper.make_node("iRMSNorm", ["x", "rw"], ["rms"], name="rms", D=65536, n_levels=256),
        helper.make_node("iSoftmax", ["x"], ["smx"], name="smx", coeffA=_f(1.0), coeffB=_f(173.0),
                         coeffC=_f(15548.0), log2=_f(127.0), n_levels=_f(256.0)),
        helper.make_node("ITAMax", ["ln"], ["ita"], name="ita", n_levels=_f(256.0)),
        helper.make_node("iGELU", ["rms"], ["gelu"], name="gelu", b=-40, one=1743),
        helper.make_node("RequantShift", ["gelu", "m1", "a1"], ["g8"], div=65536, n_levels_out=256, signed=1,
                         name="rq_gelu"),
        helper.make_node("iHardswish", ["g8"], ["hsw"], one_over_six=33, six=1530, three=765, name="hsw"),
        helper.make_node("RequantShift", ["hsw", "m2", "a2"], ["h8"], div=65536, n_levels_out=256, signed=1,
                         name="rq_hsw"),
        helper.make_node("Transpose", ["h8"], ["t"], perm=[0, 2, 1], name="tr"),
        helper.make_node("IntegerMean", ["ita"], ["mean"], axes=[1], keepdims=0, name="mean"),
    ]
    inits = [_const("lw", lw), _const("lb", rng.integers(-40000, 40000, L)), _const("rw", rw),
             _const("m1", 3), _const("a1", 100), _const("m2", 1), _const("a2", 0)]
    outs = [_vi(n, None) for n in ("smx", "ita", "t", "mean")]
    if unsigned:
        nodes = [nodes[0], nodes[3], helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1], name="tr")]
        inits, outs = inits[:2], [_vi("ita", None), _vi("t", None)]
    return _model(nodes, [_vi("x", list(shape))], outs, inits, opset=10)


CLUSTER_OPS = {"layer_norm", "rms_norm", "int_softmax", "ita_max", "int_gelu", "hardswish", "requant",
               "transpose", "reduce"}


def _schedule(path, target: str = "gap8", dtype: str = "int8"):
    g = load_model(path, {"*": dtype})
    ns = schedule_network(lower(g), get_target(target))
    return g, ns


def _ops_on_cluster(ns) -> dict[str, str]:
    return {str(lay.op): ns.placement(i).binding.name for i, lay in enumerate(ns.layers.layers)
            if ns.placement(i).module.name == "cluster"}


@pytest.mark.parametrize("case", ["int8", "uint8", "wide_weights", "one_block"])
def test_row_ops_on_the_cluster_bit_exact(case, tmp_path, c_cache):
    shape = (1, 6, 24) if case == "one_block" else (1, 100, 96)
    kw = {}
    if case == "wide_weights":   # 255·|w| ≥ 2^31: the layer norm's 64-bit path (the frontend holds
        kw = dict(ln_weight=np.full(shape[-1], (1 << 24) + 3))   # iRMSNorm's products to int32)
    path = _save(tmp_path, row_net(shape, unsigned=case == "uint8", **kw))
    g, ns = _schedule(path, dtype="uint8" if case == "uint8" else "int8")
    placed = _ops_on_cluster(ns)
    assert ({"layer_norm", "ita_max", "transpose"} if case == "uint8" else CLUSTER_OPS) <= set(placed), placed
    assert all(("_rows_" in b or b.startswith(("transpose_l1", "reduce_l1"))) for op, b in placed.items()
               if op in CLUSTER_OPS)
    if case != "one_block":   # several blocks of rows, a short last one
        ln = next(i for i, lay in enumerate(ns.layers.layers) if str(lay.op) == "layer_norm")
        assert ns.schedules[ln].dma_transfers >= 4
    r = validate_model(path, ns, g, n_random=2, out_dir=tmp_path / "c", cache=c_cache)
    assert r.bit_exact, r.to_json()


def test_other_axes_and_long_rows_stay_on_the_host_core(tmp_path):
    """A norm along a rank-4 tensor's W (not the IR's last axis), and rows longer than a block."""
    from .test_deeploy_ops import layernorm_net

    for shape in ([1, 3, 4, 10], [1, 2, 8000]):
        path = _save(tmp_path, layernorm_net(shape=shape), f"ln{len(shape)}")
        _, ns = _schedule(path)
        (i,) = [i for i, lay in enumerate(ns.layers.layers) if str(lay.op) == "layer_norm"]
        assert ns.placement(i).module.name == "cpu", shape
        lay = ns.layers.layers[i]
        b = next(b for b in get_target("gap8").module("cluster").bindings if b.name == "layer_norm_rows_x8y8")
        reason = b.check(lay, ns.layers)
        assert reason and (("not the last" in reason) if len(shape) == 4 else ("L1 block" in reason)), reason


@pytest.mark.parametrize("rows_, length, xb, yb", [(64, 128, 1, 1), (64, 512, 1, 4), (3, 10, 1, 1),
                                                     (100, 100, 1, 1), (32768, 1, 4, 1), (7, 3000, 1, 1)])
def test_blocks_scratch_and_dma_agree(rows_, length, xb, yb):
    b = rows.block_rows(rows_, length, xb, yb)
    assert 1 <= b <= rows_ and b * length * (xb + yb) <= rows.ROW_BLOCK_BYTES
    assert b % rows.ROW_MULTIPLE == 0 or b < rows.ROW_MULTIPLE or b == rows_
    blocks = -(-rows_ // b)
    assert -(-rows_ // rows.block_rows(10 ** 9, length, xb, yb)) <= blocks   # no more blocks than needed
    nest = LoopNest(kind="other", K=length, C=length, OY=1, OX=rows_, x_bits=8 * xb, y_bits=8 * yb)
    (x, y) = rows.dma_of("layer_norm")(nest)
    assert (x[1], x[3], y[3]) == (blocks, rows_ * length * xb, rows_ * length * yb)
    scratch = int(rows.scratch_of("layer_norm")(nest, 8, np.array(1), np.array(1), np.array(1), np.array(1)))
    assert scratch >= 2 * b * length * (xb + yb)


def test_transpose_walk_merges_dims():
    assert rows.transpose_walk((1, 1, 192, 64), (0, 3, 2, 1)) == ([64, 192], [1, 64])
    assert rows.transpose_walk((1, 8, 8, 128), (0, 1, 3, 2)) == ([8, 128, 8], [1024, 1, 128])
    assert rows.transpose_walk((2, 3, 4), (0, 1, 2)) == ([24], [1])


DATA = json.loads(cr.OUT.read_text())


def _groups() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in DATA["rows"]:
        out.setdefault(f"{r['cores']} {r['op']}", []).append(r)
    return out


GROUPS = _groups()


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_each_kernel_against_its_measurement(group):
    rs = GROUPS[group]
    pred = sum(cr.predicted(r) for r in rs)
    meas = sum(r["measured"] for r in rs)
    assert abs(pred / meas - 1) <= TOLERANCE, (group, pred, meas,
                                               [(r["layer"], round(cr.predicted(r)), r["measured"]) for r in rs])


def test_the_data_covers_every_kernel_on_8_and_1_cores():
    ops = {"layer_norm", "rms_norm", "int_softmax", "ita_max", "int_gelu", "hardswish", "requant", "transpose",
           "reduce"}
    assert {(c, o) for c in (8, 1) for o in ops} <= {(r["cores"], r["op"]) for r in DATA["rows"]}


def test_bit_exact_on_gvsoc_and_cycles_as_predicted(tmp_path):
    require_isa("gvsoc")
    path = _save(tmp_path, row_net((1, 40, 96)))
    g, ns = _schedule(path, "pulp-open")
    r = validate_model(path, ns, g, n_random=1, out_dir=tmp_path / "c", on="gvsoc").to_json()
    assert r["bit_exact"] and r["platform"] == "gvsoc", r
    assert (r["dma_bytes_measured"], r["dma_transfers_measured"]) == \
        (r["dma_bytes_predicted"], r["dma_transfers_predicted"])
    mine = {row["name"]: row["predicted_cycles"] / row["measured_cycles"] for i, row in enumerate(r["layers"])
            if str(ns.layers.layers[i].op) in CLUSTER_OPS and ns.placement(i).module.name == "cluster"}
    assert len(mine) == 10, mine
    assert all(abs(v - 1) <= LIVE_TOLERANCE for v in mine.values()), mine


HOST = json.loads(hr.OUT.read_text())
#: predicted / measured of a host core's (configuration, op) layers summed
HOST_TOLERANCE = 0.25


def _host_groups() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in HOST["rows"]:
        out.setdefault(f"{r['config']} {r['op']}", []).append(r)
    return out


HOST_GROUPS = _host_groups()


@pytest.mark.parametrize("group", sorted(HOST_GROUPS))
def test_host_cores_row_ops_against_their_measurement(group):
    """Where the portable row kernels stay in use — stm32h7's core (counted instructions) and the
    PULP targets' host core (GVSoC cycles) — their per-element coefficients, fitted by
    bench/calibrate_host_rows.py, predict each op's measured layers within HOST_TOLERANCE."""
    rs = HOST_GROUPS[group]
    pred = sum(hr.predicted(r) for r in rs)
    meas = sum(r["measured"] for r in rs)
    assert abs(pred / meas - 1) <= HOST_TOLERANCE, (group, pred, meas)


def test_host_data_covers_every_row_op_on_both_cores():
    ops = set(hr.COEF)
    assert {(c, o) for c in hr.CONFIGS for o in ops} <= {(r["config"], r["op"]) for r in HOST["rows"]}
