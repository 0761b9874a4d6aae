"""A Keras GRU as TensorFlow 2.21 converts it (tests/gru_models.py): unrolled, its ops (UNPACK,
SPLIT, SPLIT_V, TANH beside FULLY_CONNECTED, LOGISTIC, MUL, ADD, SUB) bit-exact against LiteRT,
every intermediate tensor included, and the generated C bit-exact on gap8 (host build), stm32h7
(instruction counter) and pulp-open (GVSoC); without unroll (a WHILE loop) one sentence, exit 2.
The partition's DP stays small on the unrolled graph (dp.py `_readable`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilewise.frontend import load_model
from tilewise.frontend.tflite import read_flatbuffer
from tilewise.ir.ops import Op
from tilewise.partition.dp import solve
from tilewise.partition.table import CostTable, Option, Tensor
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.quantize.tflite_build import ModelBuilder
from tilewise.targets.registry import get_target
from tilewise.validate import validate_model

from .codegen_cases import c_cache  # noqa: F401 (fixture)
from .conftest import absent
from .gru_models import convert
from .test_cli_errors import assert_one_sentence_error, run_cli
from .test_tflite_repair import require_isa
from .tflite_builder import compare_with_litert, litert_interpreter


@pytest.fixture(scope="session")
def grus(tmp_path_factory) -> dict[str, Path]:
    """The GRU models, converted once per session (a TensorFlow subprocess, ~25 s)."""
    try:
        return convert(tmp_path_factory.mktemp("gru"))
    except (RuntimeError, OSError) as e:
        absent(str(e))
        raise


def test_the_unrolled_gru_is_these_int8_ops(grus):
    """The converter's ops; a float island it may leave (DEQUANTIZE → SPLIT → QUANTIZE, not every
    run: its calibration is not deterministic) is folded onto the codes at import."""
    m = read_flatbuffer(grus["gru49.tflite"].read_bytes(), "gru49")
    ops = {op.name for op in m.operators}
    gru = {"UNPACK", "FULLY_CONNECTED", "SPLIT", "SPLIT_V", "LOGISTIC", "TANH", "MUL", "ADD", "SUB"}
    assert gru <= ops <= gru | {"RESHAPE", "DEQUANTIZE", "QUANTIZE"}, ops
    g = load_model(grus["gru49.tflite"])
    assert {Op.SLICE, Op.TANH, Op.LOGISTIC} <= {n.op for n in g.nodes}
    assert {t.dtype for t in g.tensors.values()} <= {"int8", "int32"}


def test_keyword_sized_gru_golden_is_litert_tensor_by_tensor(grus):
    """49 steps × 10 features, 32 units: every IR tensor with a TFLite twin (each gate of each
    step) equals LiteRT's on 6 random inputs and the all-min / all-max ones."""
    bad, total = compare_with_litert(grus["gru49.tflite"], n=6, all_tensors=True)
    assert total > 49 * 10 * 32 and bad == 0, (bad, total)


@pytest.mark.parametrize("quant", [(0.02, 5, 1 / 128, 0), (0.1, -128, 0.01, 3), (0.003, 100, 1 / 128, 0)])
def test_tanh_table_is_litert_on_every_code(quant, tmp_path):
    """TANH int8 on all 256 codes equals LiteRT's LUTPopulate of the float tanh."""
    s_in, z_in, s_out, z_out = quant
    b = ModelBuilder()
    x = b.input("x", (1, 256), "int8", scale=s_in, zero_point=z_in)
    y = b.tensor("y", (1, 256), "int8", scale=s_out, zero_point=z_out)
    b.op("TANH", [x], [y])
    b.output(y)
    path = b.save(tmp_path / "tanh.tflite")
    codes = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    it = litert_interpreter(path)
    it.set_tensor(it.get_input_details()[0]["index"], codes)
    it.invoke()
    from tilewise.golden import run_graph

    g = load_model(path)
    np.testing.assert_array_equal(run_graph(g, [codes])[g.outputs[0]],
                                  it.get_tensor(it.get_output_details()[0]["index"]))


def _split_model(path: Path) -> Path:
    """UNPACK on axis 1, SPLIT and SPLIT_V (an inferred -1 size) on the last axis, all int8."""
    b = ModelBuilder()
    q = dict(scale=0.05, zero_point=-3)
    x = b.input("x", (2, 3, 12), "int8", **q)
    parts = [b.tensor(f"u{k}", (2, 12), "int8", **q) for k in range(3)]
    b.op("UNPACK", [x], parts, "UnpackOptions", Num=3, Axis=1)
    axis = b.const("axis", np.array(-1, np.int32), "int32")
    thirds = [b.tensor(f"s{k}", (2, 4), "int8", **q) for k in range(3)]
    b.op("SPLIT", [axis, parts[1]], thirds, "SplitOptions", NumSplits=3)
    sizes = b.const("sizes", np.array([5, -1, 2], np.int32), "int32")
    pieces = [b.tensor(f"v{k}", (2, n), "int8", **q) for k, n in enumerate((5, 5, 2))]
    b.op("SPLIT_V", [parts[2], sizes, axis], pieces, "SplitVOptions", NumSplits=3)
    for t in (parts[0], thirds[2], pieces[1], pieces[2]):
        b.output(t)
    return b.save(path)


def test_split_split_v_unpack_are_litert(tmp_path):
    bad, total = compare_with_litert(_split_model(tmp_path / "split.tflite"), n=4)
    assert total > 0 and bad == 0, (bad, total)


@pytest.mark.parametrize("target", ["gap8", "stm32h7"])
def test_split_ops_generated_c_bit_exact(target, tmp_path, c_cache):
    path = _split_model(tmp_path / "split.tflite")
    g = load_model(path)
    ns = schedule_network(lower(g), get_target(target))
    r = validate_model(path, ns, g, n_random=3, out_dir=tmp_path / "c", cache=c_cache)
    assert r.bit_exact, r.to_json()


def _const_op_model(path: Path, op: str, dtype: str, values: np.ndarray) -> Path:
    """An activation `op` a constant of `values` (the GRU's 1 − z: SUB of a one-value constant
    and the gate), 8-bit tensors of dtype."""
    b = ModelBuilder()
    zp = 7 if dtype == "uint8" else -5
    x = b.input("x", (1, 2, 16), dtype, scale=1 / 128, zero_point=zp)
    c = b.const("c", values.astype(dtype), dtype, scale=1 / 127, zero_point=zp)
    y = b.tensor("y", (1, 2, 16), dtype, scale=1 / 64, zero_point=zp + 3)
    opts = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions"}[op]
    b.op(op, [c, x] if op == "SUB" else [x, c], [y], opts, FusedActivationFunction=0)
    b.output(y)
    return b.save(path)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_op_by_a_one_value_constant_is_a_lookup_bit_exact(op, dtype, tmp_path, c_cache):
    """ADD / SUB / MUL of an activation and a constant of one value run the 256-entry lookup
    (the golden op's outputs, *_const_lut_s8) on pulp-open's cores, bit-exact against LiteRT and the
    golden model; a constant of several values keeps the broadcast kernel."""
    hi = 127 if dtype == "int8" else 255
    for values, binding in ((np.array([hi]), "const_lut"), (np.arange(16) * 3, "broadcast")):
        path = _const_op_model(tmp_path / f"{op}_{binding}.tflite", op, dtype, values)
        g = load_model(path)
        ns = schedule_network(lower(g), get_target("pulp-open"))
        (i,) = [i for i, layer in enumerate(ns.layers.layers) if str(layer.op) == op.lower()]
        assert binding in ns.placement(i).binding.name, ns.placement(i).binding.name
        r = validate_model(path, ns, g, n_random=3, out_dir=tmp_path / f"c_{binding}", cache=c_cache)
        assert r.bit_exact, r.to_json()


def test_unrolled_gru_generated_c_bit_exact_on_gap8(grus, tmp_path, c_cache):
    path = grus["gru3.tflite"]
    g = load_model(path)
    ns = schedule_network(lower(g), get_target("gap8"))
    r = validate_model(path, ns, g, n_random=3, out_dir=tmp_path / "c", cache=c_cache)
    assert r.bit_exact, r.to_json()


def test_unrolled_gru_counted_on_cortex_m7(grus, tmp_path):
    require_isa("count")
    path = grus["gru3.tflite"]
    g = load_model(path)
    ns = schedule_network(lower(g), get_target("stm32h7"))
    r = validate_model(path, ns, g, 1, 0, tmp_path / "p", on="count").to_json()
    assert r["bit_exact"] and r["platform"] == "count" and r["measured_instructions"] > 0, r


def test_unrolled_gru_on_gvsoc(grus, tmp_path):
    require_isa("gvsoc")
    path = grus["gru3.tflite"]
    g = load_model(path)
    ns = schedule_network(lower(g), get_target("pulp-open"))
    r = validate_model(path, ns, g, 1, 0, tmp_path / "p", on="gvsoc").to_json()
    assert r["bit_exact"] and r["platform"] == "gvsoc" and r["measured_cycles"] > 0, r
    # the cost model against GVSoC: the layers called directly (the lookups, the broadcast subs,
    # the slices: the module's call_overhead_cycles and their kernels' fits,
    # bench/calibrate_untiled.py) per op, and the network, within GVSOC_BAND
    per_op: dict[str, list[float]] = {}
    for i, layer in enumerate(r["layers"]):
        if ns.placement(i).binding.direct_call and layer["op"] != "reshape":
            acc = per_op.setdefault(layer["op"], [0.0, 0.0])
            acc[0] += layer["predicted_cycles"]
            acc[1] += layer["measured_cycles"]
    assert set(per_op) == {"logistic", "tanh", "sub", "slice"}, per_op
    for op, (pred, meas) in per_op.items():
        assert abs(pred / meas - 1) <= GVSOC_BAND, (op, pred, meas)
    assert abs(r["predicted_cycles"] / r["measured_cycles"] - 1) <= GVSOC_BAND, r["predicted_cycles"]


#: predicted / measured GVSoC cycles of the GRU's directly called layers (summed per op) and of
#: the network
GVSOC_BAND = 0.15


def test_gru_without_unroll_is_one_sentence(grus):
    path = grus["gru_while.tflite"]
    assert_one_sentence_error(run_cli("analyze", str(path), "--target", "gap8"), str(path), "WHILE",
                              "recurrent layer converted without unroll", "unroll=True")


def test_dp_skips_representations_no_consumer_reads():
    """60 tensors live at once, each producible in two representations of which only one is read
    (the unrolled GRU's input projections): the DP expands one state per step, not 2^60."""
    n = 60
    produce = tuple((Option("m", "b", 0, 0, 0, (1.0, 1.0)), Option("m", "b8", 0, 0, 128, (0.5, 0.5)))
                    for _ in range(n))
    consume = tuple((Option("m", "c", 0, 0, 0, (1.0, 1.0)),) for _ in range(n))
    move = (((0.0, 0.0),),)
    tensors = tuple(Tensor(f"t{k}", k, (n + k,), False, move) for k in range(n)) + \
        tuple(Tensor(f"y{k}", n + k, (), True, move) for k in range(n))
    table = CostTable(("L2",), 0, produce + consume, tensors,
                      tuple(() for _ in range(n)) + tuple((k,) for k in range(n)),
                      tuple(range(n)) + tuple(n + k for k in range(n)))
    cost, picks = solve(table)
    assert picks == (0,) * (2 * n) and cost == (2.0 * n, 2.0 * n)


def _float_island_model(path: Path) -> Path:
    """What the converter sometimes leaves in a GRU's first step: DEQUANTIZE → float SPLIT →
    QUANTIZE (same scale and zero point) of two outputs, the third unused."""
    b = ModelBuilder()
    q = dict(scale=0.0122, zero_point=6)
    x = b.input("x", (1, 12), "int8", **q)
    f = b.tensor("deq", (1, 12), "float32")
    b.op("DEQUANTIZE", [x], [f])
    axis = b.const("axis", np.array(1, np.int32), "int32")
    parts = [b.tensor(f"f{k}", (1, 4), "float32") for k in range(3)]
    b.op("SPLIT", [axis, f], parts, "SplitOptions", NumSplits=3)
    for k in (0, 2):
        y = b.tensor(f"q{k}", (1, 4), "int8", **q)
        b.op("QUANTIZE", [parts[k]], [y])
        b.output(y)
    return b.save(path)


def test_float_island_of_a_split_is_the_split_on_codes(tmp_path):
    path = _float_island_model(tmp_path / "island.tflite")
    g = load_model(path)
    assert [n.op for n in g.nodes] == [Op.SLICE] * 3 and {t.dtype for t in g.tensors.values()} <= {"int8", "int32"}
    bad, total = compare_with_litert(path, n=4, all_tensors=True)
    assert total > 0 and bad == 0, (bad, total)
