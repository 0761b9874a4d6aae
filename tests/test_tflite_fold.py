"""The TFLite constant-folding pass (frontend/tflite_fold.py): a TRANSPOSE_CONV whose output_shape,
or a RESHAPE whose shape, Keras computes as SHAPE → STRIDED_SLICE → PACK (and MUL) of a static
shape is folded to a constant before lowering and validates bit-exact against LiteRT on the
original file; every folded op agrees with LiteRT's kernel on the same values; a graph with nothing
to fold is returned unchanged; what cannot be folded is one sentence naming the op and tensor."""

from __future__ import annotations

import numpy as np
import pytest

from tilewise.errors import ModelFormatError, UnsupportedOpError
from tilewise.frontend import load_model
from tilewise.frontend.tflite import ir_names, read_flatbuffer
from tilewise.frontend.tflite_fold import fold_constants
from tilewise.frontend.tflite_ops import Converter
from tilewise.ir.ops import Op
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets import get_target
from tilewise.validate.check import validate_model

from .tconv_models import transpose_conv
from .test_cli_errors import assert_one_sentence_error
from .test_tflite_repair import ISAS, person_detect_like, run_cli, validate_on_isa
from .tflite_builder import ModelBuilder, compare_with_litert, keras_shape_input, litert_run


def keras_tconv(dtype: str = "int8", mul: tuple[int, int] | None = (1, 2)) -> ModelBuilder:
    """tests/tconv_models.py's TRANSPOSE_CONV (stride 2, SAME: 4x5 → 8x10) with its output_shape
    computed as Keras writes it: batch from SHAPE(x), height SHAPE(x)[1]·2 (MUL), the rest constant."""
    b = transpose_conv(dtype=dtype)
    keras_shape_input(b, 0, 0, b.inputs[0], mul)
    return b


def _read(b: ModelBuilder, tmp_path, name: str = "m.tflite"):
    path = b.save(tmp_path / name)
    return path, read_flatbuffer(path.read_bytes(), str(path))


# --- the pass itself ----------------------------------------------------------------------------

def test_keras_output_shape_subgraph_is_folded_into_a_constant(tmp_path):
    path, model = _read(keras_tconv(), tmp_path)
    assert [op.name for op in model.operators] == ["SHAPE", "STRIDED_SLICE", "STRIDED_SLICE", "MUL", "PACK",
                                                   "TRANSPOSE_CONV"]
    folded = fold_constants(model, str(path))
    assert [(op.index, op.name) for op in folded.operators] == [(5, "TRANSPOSE_CONV")]
    by_name = {t.name: t for t in folded.tensors}
    values = {n: (by_name[n].data.dtype.name, by_name[n].data.tolist())
              for n in ("x/Shape", "x/strided_slice", "x/strided_slice_1", "x/mul_1", "x/stack")}
    assert values == {"x/Shape": ("int32", [1, 4, 5, 3]), "x/strided_slice": ("int32", 1),
                      "x/strided_slice_1": ("int32", 4), "x/mul_1": ("int32", 8), "x/stack": ("int32", [1, 8, 10, 4])}
    assert folded.tensors[model.inputs[0]].data is None          # the activation itself is untouched
    # without the pass, the frontend stops at the first shape op
    with pytest.raises(UnsupportedOpError, match=r"operator 0 \(SHAPE, output 'x/Shape'\) is not supported"):
        cv = Converter(model, ir_names(model), str(path))
        for op in model.operators:
            cv.convert(op)
    assert [n.op for n in load_model(path).nodes] == [Op.TRANSPOSE_CONV]


def test_a_graph_with_nothing_to_fold_is_unchanged(tmp_path):
    for i, b in enumerate((transpose_conv(), person_detect_like(bias_qdim=0))):
        path, model = _read(b, tmp_path, f"m{i}.tflite")
        assert fold_constants(model, str(path)) is model


def _semantics_model() -> tuple[ModelBuilder, list[tuple[str, int]]]:
    """Every folded op on constants, each result t added to a zero graph input (ADD(t, 0) is what
    LiteRT outputs; the pass folds t and leaves the ADD): (builder, [(case, t)])."""
    b = ModelBuilder()
    z32, z64 = b.input("z32", (1,), "int32"), b.input("z64", (1,), "int64")
    c = b.const("c", np.arange(24, dtype=np.int32).reshape(2, 3, 4) - 7, "int32")
    v = b.const("v", np.array([5, -7, 9, -2], np.int32), "int32")
    cases: list[tuple[str, int]] = []

    def i32(*values: int) -> int:
        return b.const(f"k{len(b.tensors)}", np.array(values, np.int32), "int32")

    def case(name: str, op: str, ins: list[int], opts: str | None = None, dtype: str = "int32", **kw) -> None:
        t = b.tensor(name, (), dtype)
        b.op(op, ins, [t], opts, **kw)
        cases.append((name, t))

    slices = [  # begin, end, strides, masks (STRIDED_SLICE's exact mask semantics)
        ((0, 1, 1), (2, 3, 4), (1, 1, 1), {}),
        ((-1, 0, -1), (0, 0, 0), (-1, 1, -2), dict(BeginMask=2, EndMask=7)),
        ((1,), (2,), (1,), dict(ShrinkAxisMask=1)),
        ((0, 5), (0, -8), (1, -1), dict(EllipsisMask=1)),
        ((0, 0, 1), (0, 0, 3), (1, 1, 1), dict(NewAxisMask=2, EndMask=1)),
        ((1, 0, 2), (1, 2, 2), (1, 1, 1), dict(Offset=True)),
        ((-5, 1, 9), (9, -1, -9), (1, 1, -1), dict(ShrinkAxisMask=0)),
        ((0, 2), (1, 3), (1, 1), dict(EllipsisMask=2, ShrinkAxisMask=1)),
        ((2, 0), (1, 3), (1, 1), {}),                                      # empty
        ((-1, -2, 0), (0, 1, 4), (1, 1, 3), dict(Offset=True, BeginMask=4, ShrinkAxisMask=1)),
        ((7, 1), (0, 0), (1, 1), dict(BeginMask=1, ShrinkAxisMask=2, NewAxisMask=0)),
    ]
    for k, (bg, en, st, masks) in enumerate(slices):
        case(f"strided_slice_{k}", "STRIDED_SLICE", [c, i32(*bg), i32(*en), i32(*st)], "StridedSliceOptions", **masks)
    case("slice", "SLICE", [c, i32(1, 0, 1), i32(-1, 2, 3)])
    case("pack_axis1", "PACK", [v, v, v], "PackOptions", ValuesCount=3, Axis=1)
    case("concat", "CONCATENATION", [c, c], "ConcatenationOptions", Axis=-1, FusedActivationFunction=0)
    case("gather", "GATHER", [c, i32(2, 0, 2)], "GatherOptions", Axis=1, BatchDims=0)
    case("reshape", "RESHAPE", [c, i32(4, -1)], "ReshapeOptions", NewShape=[4, -1])
    case("squeeze", "SQUEEZE", [b.const("c1", np.array([[3], [4]], np.int32), "int32")], "SqueezeOptions",
         SqueezeDims=[1])
    case("expand_dims", "EXPAND_DIMS", [v, b.const("ax", np.array(-1, np.int32), "int32")])
    case("cast64", "CAST", [v], dtype="int64")
    case("shape64", "SHAPE", [c], "ShapeOptions", dtype="int64", OutType=4)
    case("add_relu", "ADD", [v, i32(1)], "AddOptions", FusedActivationFunction=1)
    case("sub_relu6", "SUB", [v, i32(-3)], "SubOptions", FusedActivationFunction=3)
    case("mul", "MUL", [c, i32(3, -2, 1, 5)], "MulOptions", FusedActivationFunction=0)
    case("floor_div", "FLOOR_DIV", [v, i32(2, 3, -4, -3)])
    case("floor_mod", "FLOOR_MOD", [v, i32(2, 3, -4, -3)])
    case("maximum", "MAXIMUM", [c, v])
    case("minimum", "MINIMUM", [c, v])
    case("sum", "SUM", [c, i32(0, -1)], "ReducerOptions", KeepDims=False)
    case("prod", "REDUCE_PROD", [b.const("small", np.array([[2, -3], [4, 5]], np.int32), "int32"), i32(1)],
         "ReducerOptions", KeepDims=True)
    for k, (_, t) in enumerate(list(cases)):
        out = b.tensor(f"out{k}", (), b.tensors[t].dtype)
        b.op("ADD", [t, z64 if b.tensors[t].dtype == "int64" else z32], [out], "AddOptions",
             FusedActivationFunction=0)
        b.output(out)
    return b, cases


def test_every_folded_op_agrees_with_litert(tmp_path):
    b, cases = _semantics_model()
    path, model = _read(b, tmp_path)
    folded = fold_constants(model, str(path))
    assert [op.name for op in folded.operators] == ["ADD"] * len(cases)
    ref = litert_run(path, [np.zeros(1, np.int32), np.zeros(1, np.int64)])
    for (name, t), out in zip(cases, b.outputs):
        got, want = folded.tensors[t].data, ref[out]
        assert got.dtype == want.dtype and np.broadcast_shapes(got.shape, (1,)) == want.shape, (name, got, want)
        assert np.array_equal(np.broadcast_to(got, want.shape), want), (name, got, want)


def test_random_strided_slices_agree_with_litert(tmp_path):
    """Seeded random STRIDED_SLICE specs (ranks 1-4, 1-4 indices, every mask, offset): wherever the
    pass computes a value it is LiteRT's; the specs it refuses are those where LiteRT reads outside
    its inputs or writes fewer values than its output holds (undefined results, not compared)."""
    from tilewise.errors import TilewiseError

    rng = np.random.default_rng(7)
    compared = 0
    for k in range(150):
        shape = tuple(int(v) for v in rng.integers(1, 5, int(rng.integers(1, 5))))
        n = int(rng.integers(1, 5))
        spec = [rng.integers(-6, 7, n), rng.integers(-6, 7, n), rng.choice([-3, -2, -1, 1, 2, 3], n)]
        masks = {m: int(rng.integers(0, 1 << n)) if rng.random() < 0.5 else 0
                 for m in ("BeginMask", "EndMask", "EllipsisMask", "NewAxisMask", "ShrinkAxisMask")}
        b = ModelBuilder()
        z = b.input("z", (1,), "int32")
        c = b.const("c", np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape), "int32")
        t = b.tensor("t", (), "int32")
        b.op("STRIDED_SLICE", [c, *(b.const(f"s{i}", a.astype(np.int32), "int32") for i, a in enumerate(spec))],
             [t], "StridedSliceOptions", Offset=bool(rng.random() < 0.15), **masks)
        out = b.tensor("o", (), "int32")
        b.op("ADD", [t, z], [out], "AddOptions", FusedActivationFunction=0)
        b.output(out)
        path, model = _read(b, tmp_path, f"s{k}.tflite")
        try:
            got = fold_constants(model, str(path)).tensors[t].data
        except TilewiseError:
            continue
        want = litert_run(path, [np.zeros(1, np.int32)])[out]
        assert np.broadcast_shapes(got.shape, (1,)) == want.shape, (shape, spec, masks, got, want)
        assert np.array_equal(np.broadcast_to(got, want.shape), want), (shape, spec, masks, got, want)
        compared += 1
    assert compared >= 100


# --- end to end: bit-exact against LiteRT on the original file -------------------------------------

@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_golden_matches_litert(dtype, tmp_path):
    bad, total = compare_with_litert(keras_tconv(dtype).save(tmp_path / "m.tflite"), n=8)
    assert total > 0 and bad == 0


@pytest.mark.parametrize("dtype,target", [("int8", "gap8"), ("int8", "stm32h7"), ("int16", "gap8"),
                                          ("int16", "stm32h7")])
def test_keras_transpose_conv_validates_bit_exact(dtype, target, tmp_path):
    path = keras_tconv(dtype, mul=None if dtype == "int16" else (1, 2)).save(tmp_path / "m.tflite")
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target(target), "model")
    r = validate_model(path, ns, graph, 4, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r


@pytest.mark.parametrize("target,on", ISAS)
def test_keras_transpose_conv_bit_exact_on_the_instruction_sets(target, on, tmp_path):
    validate_on_isa(keras_tconv().save(tmp_path / "m.tflite"), target, on, tmp_path / "p")


def keras_flatten() -> ModelBuilder:
    """int8 CONV_2D → RESHAPE to [batch, -1] (batch from SHAPE → STRIDED_SLICE → PACK, as
    tf.reshape(x, [tf.shape(x)[0], -1]) writes it) → FULLY_CONNECTED."""
    b = person_detect_like(bias_qdim=0)
    reshape = next(i for i, op in enumerate(b.ops) if op.code == 22)   # BuiltinOperator.RESHAPE
    keras_shape_input(b, reshape, 1, b.ops[reshape].inputs[0])
    return b


def test_keras_reshape_shape_is_folded_and_validates(tmp_path):
    path = keras_flatten().save(tmp_path / "flatten.tflite")
    assert [n.op for n in load_model(path).nodes] == [Op.CONV2D, Op.CONV2D, Op.RESHAPE, Op.FULLY_CONNECTED]
    assert compare_with_litert(path, n=4)[0] == 0
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("gap8"), "model")
    r = validate_model(path, ns, graph, 2, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r


# --- what cannot be folded: one sentence naming the op and tensor ----------------------------------

def test_shape_of_a_dynamic_dimension_is_one_sentence(tmp_path):
    b = keras_tconv()
    b.tensors[b.inputs[0]].shape_signature = (-1, -1, 5, 3)    # a dynamic height
    path = b.save(tmp_path / "dyn.tflite")
    proc = run_cli("analyze", str(path))
    assert_one_sentence_error(proc, str(path), "operator 0 (SHAPE, output 'x/Shape') reads the shape of 'x'",
                              "dimension 1 is dynamic", "fixed input size")


def test_a_folding_op_tilewise_does_not_implement_is_one_sentence(tmp_path):
    b = keras_tconv()
    mul = next(op for op in b.ops if op.code == 18)    # BuiltinOperator.MUL -> DIV of the same constants
    mul.code, mul.options_name, mul.options = 42, "DivOptions", dict(FusedActivationFunction=0)
    path = b.save(tmp_path / "div.tflite")
    with pytest.raises(UnsupportedOpError) as e:
        load_model(path)
    msg = str(e.value)
    assert "operator 3 (DIV, output 'x/mul_1') computes integer shape arithmetic from constants" in msg
    assert "FLOOR_DIV" in msg and "\n" not in msg and len(msg) < 600


def test_what_litert_refuses_too_is_one_sentence(tmp_path):
    b = keras_tconv()
    b.buffers[b.tensors[next(i for i, t in enumerate(b.tensors) if t.name == "x/mul_1/y")].buffer] = \
        np.array(0, np.int32).tobytes()
    mul = next(op for op in b.ops if op.code == 18)
    mul.code, mul.options_name, mul.options = 90, None, {}     # FLOOR_DIV by 0
    path = b.save(tmp_path / "zero.tflite")
    with pytest.raises(ModelFormatError, match=r"operator 3 \(FLOOR_DIV, output 'x/mul_1'\) divides by zero"):
        load_model(path)
    # a folded shape that disagrees with the declared output
    b = keras_flatten()
    b.tensors[next(i for i, t in enumerate(b.tensors) if t.name == "flatten")].shape = (2, 144)
    b.tensors[next(i for i, t in enumerate(b.tensors) if t.name == "logits")].shape = (2, 4)
    path = b.save(tmp_path / "mismatch.tflite")
    with pytest.raises(UnsupportedOpError, match=r"RESHAPE, output 'flatten'\) has the shape input \[1, 288\]"):
        load_model(path)
