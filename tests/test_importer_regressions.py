"""Each importer bug the fuzzing (tests/test_fuzz_importers.py, bench/fuzz_importers.py) found,
reproduced by a small deterministic mutation of a shipped model (or a model built here): before
the fix `tilewise analyze` ended in an internal error (exit 3), now it is one sentence naming the
file and the node, exit 2 (or, where the mutation keeps a meaning, a clean analysis).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from tilewise import cli

from .conftest import absent, error_lines, models_dir
from .tflite_builder import SAME, ModelBuilder

Edit = Callable[[onnx.ModelProto], None]


def _shipped(rel: str) -> Path:
    p = models_dir() / "integer_onnx" / rel
    if not p.exists():
        absent(f"integer ONNX export not found at {p} (set TILEWISE_MODELS)")
    return p


def _mutated(tmp_path: Path, rel: str, edit: Edit, raw: Callable[[bytes], bytes] | None = None) -> Path:
    model = onnx.load(_shipped(rel))
    edit(model)
    data = model.SerializeToString()
    out = tmp_path / "mutated.onnx"
    out.write_bytes(raw(data) if raw else data)
    return out


def _analyze(path: Path, capsys, monkeypatch) -> tuple[int, str]:
    monkeypatch.delenv("TILEWISE_DEBUG", raising=False)
    rc = cli.main(["analyze", str(path)])
    return rc, capsys.readouterr().err.strip()


def _refused(path: Path, capsys, monkeypatch, *needles: str) -> str:
    rc, err = _analyze(path, capsys, monkeypatch)
    assert rc == 2, err
    lines = error_lines(err)
    assert len(lines) == 1 and lines[0].startswith("tilewise: error: ") and "internal error" not in err, err
    for n in (str(path), *needles):
        assert n in err, (n, err)
    return err


def _node(model: onnx.ModelProto, op_type: str) -> onnx.NodeProto:
    return next(n for n in model.graph.node if n.op_type == op_type)


def _set_attr(node: onnx.NodeProto, name: str, value) -> None:
    for a in list(node.attribute):
        if a.name == name:
            node.attribute.remove(a)
    if value is not None:
        node.attribute.append(helper.make_attribute(name, value))


# ---------------------------------------------------------------- onnx_check.py: node structure

def test_node_without_output(tmp_path, capsys, monkeypatch):
    """IndexError in onnx_nemo._absorb / int_hardswish / max_pool: a node lost its output."""
    p = _mutated(tmp_path, "deeploy/kernels/Add/Regular/network.onnx", lambda m: m.graph.node[0].ClearField("output"))
    _refused(p, capsys, monkeypatch, "node '/Add' (Add)", "produces no tensor")


def test_add_with_one_input(tmp_path, capsys, monkeypatch):
    """IndexError in onnx_nemo_ops._add: an Add that lost an input."""
    p = _mutated(tmp_path, "deeploy/kernels/Add/Regular/network.onnx", lambda m: m.graph.node[0].input.pop())
    _refused(p, capsys, monkeypatch, "node '/Add' (Add)", "has 1 inputs where ONNX's Add takes 2")


def test_conv_with_four_inputs(tmp_path, capsys, monkeypatch):
    """ValueError (broadcast) in onnx_nemo._acc_bound: a Conv given a fourth input."""
    p = _mutated(tmp_path, "deeploy/kernels/Conv/Regular_1D_RQ/network.onnx",
                 lambda m: _node(m, "Conv").input.extend(["Conv.weight", "Conv.weight"]))
    _refused(p, capsys, monkeypatch, "node 'Conv' (Conv)", "has 4 inputs where ONNX's Conv takes 2 to 3")


def test_conv_bias_of_the_wrong_size(tmp_path, capsys, monkeypatch):
    """ValueError (broadcast) in onnx_nemo._acc_bound: the Conv's bias is its weight tensor."""
    p = _mutated(tmp_path, "deeploy/kernels/Conv/DW_2D/network.onnx", lambda m: _node(m, "Conv").input.append("weight"))
    _refused(p, capsys, monkeypatch, "node 'Conv2D1'", "has weights of shape (2, 1, 8, 8) and 128 biases")


def test_node_output_overwrites_a_graph_input(tmp_path, capsys, monkeypatch):
    """KeyError in Lowering.act: the Sub's output renamed to the graph input it reads."""
    def edit(m):
        m.graph.node[0].output[0] = "input2"
    p = _mutated(tmp_path, "deeploy/kernels/Sub/network.onnx", edit)
    _refused(p, capsys, monkeypatch, "writes 'input2', which a graph input or initializer already provides")


def test_missing_opset(tmp_path, capsys, monkeypatch):
    """IndexError in onnx_nemo_ops._add: opset 0 hid the Add's arity from the schema check."""
    def edit(m):
        m.opset_import[0].version = 0
        m.graph.node[0].input.pop()
    p = _mutated(tmp_path, "deeploy/kernels/Add/Large/network.onnx", edit)
    _refused(p, capsys, monkeypatch, "imports no version of their operator set")


# ---------------------------------------------------------------- onnx_check.py: attributes

def test_standard_attribute_of_the_wrong_type(tmp_path, capsys, monkeypatch):
    """TypeError in onnx_quantlab._wide_gemm: Gemm's alpha given as a list."""
    p = _mutated(tmp_path, "deeploy/kernels/GEMM/Regular/network.onnx",
                 lambda m: _set_attr(_node(m, "Gemm"), "alpha", [0.5]))
    _refused(p, capsys, monkeypatch, "node 'GEMM1' (Gemm)", "attribute 'alpha' of type FLOATS where ONNX defines FLOAT")


@pytest.mark.parametrize("rel,op,attr,value,says", [
    # ValueError in onnx_nemo.fold_pads: the opset-2 Pad's pads as a string
    ("deeploy/kernels/Pad/Regular_2D/network.onnx", "Pad", "pads", "x", "not a number"),
    # ValueError in onnx_quantlab.shift_terms: RequantShift's levels as a string
    ("deeploy/kernels/Conv/Regular_2D_RQ/network.onnx", "RequantShift", "n_levels", "x", "not a number"),
    # OverflowError: a DORY-style integer attribute that is infinite
    ("deeploy/kernels/Hardswish/Regular/network.onnx", "iHardswish", "six", float("inf"), "non-finite"),
])
def test_exporter_attribute_not_a_number(tmp_path, capsys, monkeypatch, rel, op, attr, value, says):
    p = _mutated(tmp_path, rel, lambda m: _set_attr(_node(m, op), attr, value))
    _refused(p, capsys, monkeypatch, f"({op}) has attribute '{attr}'", says)


def test_exporter_attribute_missing(tmp_path, capsys, monkeypatch):
    """TypeError in onnx_int._scalar: iHardswish without one_over_six."""
    p = _mutated(tmp_path, "deeploy/kernels/Hardswish/Regular/network.onnx",
                 lambda m: _set_attr(_node(m, "iHardswish"), "one_over_six", None))
    _refused(p, capsys, monkeypatch, "node 'iHardswish_0' (iHardswish)", "lacks its attribute 'one_over_six'")


@pytest.mark.parametrize("rel,op,edits,says", [
    # Conv2dParams ValueError: strides of three values on a 2-D conv
    ("deeploy/kernels/Conv/Regular_2D/network.onnx", "Conv", {"strides": [1, 1, 2]},
     "window attributes of different ranks"),
    # the same through window_pads: no kernel_shape to compare with
    ("deeploy/kernels/Conv/Regular_2D/network.onnx", "Conv", {"strides": [2], "kernel_shape": None, "dilations": None,
                                                             "pads": None}, "has strides [2] for a 2-D window"),
    # ZeroDivisionError risk in window_pads: a zero stride
    ("deeploy/kernels/MaxPool/Regular_2D/network.onnx", "MaxPool", {"strides": [2, 0]}, "each must be at least 1"),
])
def test_window_attributes(tmp_path, capsys, monkeypatch, rel, op, edits, says):
    def edit(m):
        for k, v in edits.items():
            _set_attr(_node(m, op), k, v)
    _refused(_mutated(tmp_path, rel, edit), capsys, monkeypatch, says)


# ---------------------------------------------------------------- values and names

def test_unknown_input_element_type(tmp_path, capsys, monkeypatch):
    """ValueError in onnx_model.read_graph: DataType.Name of an element type ONNX does not have."""
    def edit(m):
        m.graph.input[0].type.tensor_type.elem_type = 278247
    p = _mutated(tmp_path, "deeploy/kernels/Add/Regular/network.onnx", edit)
    _refused(p, capsys, monkeypatch, "graph input 'onnx::Add_0' has element type 278247")


def test_op_type_not_utf8(tmp_path, capsys, monkeypatch):
    """TypeError in onnx_nemo.has_quantization: protobuf hands an op type that is not UTF-8 over as bytes."""
    def edit(m):
        m.graph.node[0].op_type = "Zdd"
    p = _mutated(tmp_path, "deeploy/kernels/Add/Regular/network.onnx", edit,
                 raw=lambda d: d.replace(b"\x22\x03Zdd", b"\x22\x03\xffdd"))
    _refused(p, capsys, monkeypatch, "not UTF-8")


def test_shapes_that_do_not_broadcast(tmp_path, capsys, monkeypatch):
    """ValueError (broadcast) in ir.shapes via Lowering.emit: one input's dimension changed."""
    def edit(m):
        m.graph.input[1].type.tensor_type.shape.dim[2].dim_value = 3
    p = _mutated(tmp_path, "deeploy/kernels/Add/Regular/network.onnx", edit)
    _refused(p, capsys, monkeypatch, "node '/Add'", "has inputs of shapes", "cannot take")


@pytest.mark.parametrize("value,says", [(float("-inf"), "non-integer beta"), (1e38, "beyond int32")])
def test_gemm_beta(tmp_path, capsys, monkeypatch, value, says):
    """OverflowError in onnx_nemo._gemm_scalar / int_gemm: an infinite or huge beta."""
    p = _mutated(tmp_path, "deeploy/kernels/GEMM/TransB_RQ/network.onnx",
                 lambda m: _set_attr(_node(m, "Gemm"), "beta", value))
    _refused(p, capsys, monkeypatch, "node 'GEMM1'", says)


def test_true_integer_div_by_zero(tmp_path, capsys, monkeypatch):
    """ZeroDivisionError in onnx_int.rewrite: TrueIntegerDiv with y·η + ε = 0."""
    def edit(m):
        n = _node(m, "TrueIntegerDiv")
        _set_attr(n, "y", 0)
        _set_attr(n, "eps", 0)
    p = _mutated(tmp_path, "deeploy/kernels/TrueIntegerDiv/network.onnx", edit)
    _refused(p, capsys, monkeypatch, "node 'TrueIntegerDiv_2' (TrueIntegerDiv)", "= 0")


def _set_constant(m: onnx.ModelProto, output: str, value: float) -> None:
    n = next(n for n in m.graph.node if n.op_type == "Constant" and output in (n.name, n.output[0]))
    arr = numpy_helper.to_array(n.attribute[0].t)
    n.attribute[0].t.CopyFrom(numpy_helper.from_array(np.full_like(arr, value)))


def test_requantization_dividing_by_a_fraction(tmp_path, capsys, monkeypatch):
    """ValueError (negative shift count) in onnx_nemo._requant: NEMO's Div by 2^d made a Div by 0.5."""
    p = _mutated(tmp_path, "nemo/dronet_no_pooling/model_int.onnx", lambda m: _set_constant(m, "Constant_65", 0.5))
    _refused(p, capsys, monkeypatch, "requantizes by a net multiplication by 2^")


def test_clip_bounds_infinite_or_nan(tmp_path, capsys, monkeypatch):
    """OverflowError / ValueError in onnx_nemo._absorb: Clip's min -inf (ONNX's own default: no
    bound, read as such) and max nan (refused)."""
    p = _mutated(tmp_path, "nemo/eegnet_1d_8b_Hx1/eegnet_id_8b.onnx",
                 lambda m: _set_attr(_node(m, "Clip"), "min", float("-inf")))
    rc, err = _analyze(p, capsys, monkeypatch)
    assert rc in (0, 2) and "internal error" not in err, err
    p = _mutated(tmp_path, "nemo/eegnet_1d_8b_Hx1/eegnet_id_8b.onnx",
                 lambda m: _set_attr(_node(m, "Clip"), "max", float("nan")))
    _refused(p, capsys, monkeypatch, "non-integer bound nan")


# ---------------------------------------------------------------- TFLite

@pytest.mark.parametrize("options", [dict(StrideW=0, StrideH=1), dict(StrideW=1, StrideH=1, DilationHFactor=0)])
def test_tflite_conv_stride_or_dilation_zero(tmp_path, capsys, monkeypatch, options):
    """ZeroDivisionError in ir.shapes.same_pads via tflite_ops.pads: a CONV_2D with stride 0."""
    b = ModelBuilder()
    x = b.input("x", (1, 8, 8, 3), "int8", scale=0.03, zero_point=-1)
    w = b.const("w", np.ones((4, 3, 3, 3), np.int8), "int8", scale=np.full(4, 0.01), zero_point=0)
    bias = b.const("b", np.zeros(4, np.int32), "int32", scale=np.full(4, 3e-4), zero_point=0)
    y = b.tensor("y", (1, 8, 8, 4), "int8", scale=0.05, zero_point=0)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=SAME, **{"DilationWFactor": 1, "DilationHFactor": 1,
                                                                         **options})
    b.output(y)
    p = tmp_path / "stride0.tflite"
    p.write_bytes(b.build())
    _refused(p, capsys, monkeypatch, "operator 0 (CONV_2D", "each must be at least 1")


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_tflite_non_finite_scale(tmp_path, capsys, monkeypatch, bad):
    """ValueError / OverflowError in ir.requant.quantize_multiplier: a weight scale of nan or inf."""
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 3), "int8", scale=0.03, zero_point=-1)
    w = b.const("w", np.ones((2, 1, 1, 3), np.int8), "int8", scale=np.array([0.01, bad]), zero_point=0)
    bias = b.const("b", np.zeros(2, np.int32), "int32", scale=np.full(2, 3e-4), zero_point=0)
    y = b.tensor("y", (1, 4, 4, 2), "int8", scale=0.05, zero_point=0)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         DilationWFactor=1, DilationHFactor=1)
    b.output(y)
    p = tmp_path / "scale.tflite"
    p.write_bytes(b.build())
    _refused(p, capsys, monkeypatch, "tensor 1 'w' has a non-finite quantization scale")


def test_transpose_perm_not_a_permutation(tmp_path, capsys, monkeypatch):
    """IndexError in onnx_lower.transpose: a perm naming an axis the tensor does not have."""
    x = helper.make_tensor_value_info("x", onnx.TensorProto.INT8, [1, 2, 3, 4])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.INT8, None)
    node = helper.make_node("Transpose", ["x"], ["y"], name="t", perm=[0, 1, 5, 2])
    model = helper.make_model(helper.make_graph([node], "g", [x], [y]), opset_imports=[helper.make_opsetid("", 13)])
    p = tmp_path / "transpose.onnx"
    p.write_bytes(model.SerializeToString())
    _refused(p, capsys, monkeypatch, "node 't'", "has perm [0, 1, 5, 2] for a 4-D tensor")


def test_ceil_mode_as_a_list(tmp_path, capsys, monkeypatch):
    """TypeError in onnx_lower.window_pads: a Conv's (non-standard) ceil_mode given as a list."""
    p = _mutated(tmp_path, "deeploy/kernels/Conv/Regular_3x3_RQ/network.onnx",
                 lambda m: _set_attr(_node(m, "Conv"), "ceil_mode", [0, 0, 0, 0]))
    _refused(p, capsys, monkeypatch, "node 'Conv'", "has ceil_mode [0, 0, 0, 0]")


def test_window_larger_than_its_input(tmp_path, capsys, monkeypatch):
    """ValueError (max of an empty sequence) in the scheduler's cost model: a dilated kernel wider
    than the padded input gave a conv output of negative height."""
    p = _mutated(tmp_path, "deeploy/kernels/Conv/DW_2D_RQ/network.onnx",
                 lambda m: _set_attr(_node(m, "Conv"), "dilations", [31, 1]))
    _refused(p, capsys, monkeypatch, "node 'Conv_0'", "gives an output of shape (1, -44, 16, 5)")


def test_residual_branch_scaled_by_nan(tmp_path, capsys, monkeypatch):
    """ValueError (NaN to integer) in onnx_nemo_ops._add: NEMO's residual scale made nan."""
    p = _mutated(tmp_path, "nemo/dronet_complete/model_int.onnx",
                 lambda m: _set_constant(m, "Constant_95", float("nan")))
    _refused(p, capsys, monkeypatch, "scales a residual branch by nan")


def test_requantization_multiplier_beyond_int64(tmp_path, capsys, monkeypatch):
    """OverflowError in onnx_nemo._requant: NEMO's second-stage multiplier made int64's maximum."""
    p = _mutated(tmp_path, "nemo/TCN_T/TCN.onnx", lambda m: _set_constant(m, "Constant_63", 2 ** 63 - 1))
    _refused(p, capsys, monkeypatch, "requantizes with the multiplier", "keep its chain's constants within int32")


def test_exporter_op_without_inputs(tmp_path, capsys, monkeypatch):
    """IndexError in onnx_int.int_hardswish: an iHardswish that reads nothing."""
    p = _mutated(tmp_path, "deeploy/kernels/Hardswish/Regular/network.onnx",
                 lambda m: _node(m, "iHardswish").ClearField("input"))
    _refused(p, capsys, monkeypatch, "node 'iHardswish_0' (iHardswish) reads no tensor")


def test_standard_op_in_another_domain(tmp_path, capsys, monkeypatch):
    """TypeError in onnx_qop.concat: a Concat of a made-up domain (read as ONNX's Concat) with a
    list for its axis."""
    def edit(m):
        n = _node(m, "Concat")
        n.domain = "x"
        _set_attr(n, "axis", [-1])
        m.opset_import.add(domain="x", version=1)
    p = _mutated(tmp_path, "deeploy/kernels/Concat/network.onnx", edit)
    _refused(p, capsys, monkeypatch, "attribute 'axis' of type INTS where ONNX defines INT")


def test_qlinear_add_of_shapes_that_do_not_broadcast(tmp_path, capsys, monkeypatch):
    """ValueError (broadcast) in onnx_qop.qlinear_add: the bundled example's conv padded so that
    the residual add's operands differ."""
    from tilewise.examples import EXAMPLE_ONNX

    model = onnx.load(EXAMPLE_ONNX)
    _set_attr(next(n for n in model.graph.node if n.name == "pw2_quant"), "pads", [8, 0, 0, 0])
    p = tmp_path / "example.onnx"
    p.write_bytes(model.SerializeToString())
    _refused(p, capsys, monkeypatch, "adds tensors of shapes", "which do not broadcast")


def test_conv_group_zero(tmp_path, capsys, monkeypatch):
    """ZeroDivisionError in onnx_qop.conv_params: a Conv with group 0."""
    p = _mutated(tmp_path, "nemo/eegnet_1d_8b_Hx1/eegnet_id_8b.onnx",
                 lambda m: _set_attr(next(n for n in m.graph.node if n.name == "Conv_12"), "group", 0))
    _refused(p, capsys, monkeypatch, "node 'Conv_12'", "has 0 groups")


def test_tflite_zero_output_scale(tmp_path, capsys, monkeypatch):
    """ValueError (NaN to integer) in tflite_ops.activation_range: an output scale of -0.0."""
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 3), "int8", scale=0.03, zero_point=-1)
    w = b.const("w", np.ones((2, 1, 1, 3), np.int8), "int8", scale=np.full(2, 0.01), zero_point=0)
    bias = b.const("b", np.zeros(2, np.int32), "int32", scale=np.full(2, 3e-4), zero_point=0)
    y = b.tensor("y", (1, 4, 4, 2), "int8", scale=-0.0, zero_point=0)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         DilationWFactor=1, DilationHFactor=1, FusedActivationFunction=1)
    b.output(y)
    p = tmp_path / "scale0.tflite"
    p.write_bytes(b.build())
    _refused(p, capsys, monkeypatch, "has the non-positive scale -0.0 on its tensor 'y'")


# ---------------------------------------------------------------- a long run at seed 28 (20,000 files)

def _set_initializer(m: onnx.ModelProto, name: str, value) -> None:
    t = next(t for t in m.graph.initializer if t.name == name)
    t.CopyFrom(numpy_helper.from_array(np.asarray(value, dtype=numpy_helper.to_array(t).dtype), name))


def test_requantization_scale_beyond_int64(tmp_path, capsys, monkeypatch):
    """OverflowError in golden.requant.divide (and a RuntimeWarning of the int64 cast): NEMO's
    BatchNorm kappa made 1e-45, a divisor of 2^149 and an offset of 1e51."""
    p = _mutated(tmp_path, "nemo/Residual_connection_test_2/model_int.onnx",
                 lambda m: _set_initializer(m, "bn_5.kappa", np.full((1, 16, 1, 1), 1e-45)))
    err = _refused(p, capsys, monkeypatch, "node 'Conv_80'", "beyond int64")
    assert "Warning" not in err


def test_dense_with_one_dimensional_weights(tmp_path, capsys, monkeypatch):
    """IndexError in onnx_nemo.to_integer_ops: a MatMul whose constant B is 1-D."""
    def edit(m: onnx.ModelProto) -> None:
        m.graph.initializer.append(numpy_helper.from_array(np.ones(8, np.float32), "w1d"))
        next(n for n in m.graph.node if n.name == "MatMul_133").input[1] = "w1d"
    p = _mutated(tmp_path, "nemo/TCN_T/TCN.onnx", edit)
    _refused(p, capsys, monkeypatch, "node 'MatMul_133'", "has 1-D weights 'w1d'")


def test_reshape_copying_a_dimension_the_input_lacks(tmp_path, capsys, monkeypatch):
    """IndexError in onnx_lower._target_shape: a Reshape's 0 (copy the input's dimension) at an
    axis beyond the input's rank."""
    p = _mutated(tmp_path, "deeploy/models/EEGFormer/network.onnx",
                 lambda m: _set_initializer(m, "onnx::Reshape_53", [1, -1, 8, 0]))
    _refused(p, capsys, monkeypatch, "node 'Reshape_34'", "copying a dimension (0) its 3-D input does not have")


def test_tflite_mean_axes_not_a_vector(tmp_path, capsys, monkeypatch):
    """TypeError in tflite_ops.mean: an operator turned MEAN whose axis tensor is a 4-D weight."""
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 3), "int8", scale=0.03, zero_point=-1)
    ax = b.const("axes", np.full((2, 1, 1, 3), 25, np.int32), "int32")
    y = b.tensor("y", (1, 1, 1, 3), "int8", scale=0.03, zero_point=-1)
    b.op("MEAN", [x, ax], [y], "ReducerOptions", KeepDims=True)
    b.output(y)
    p = tmp_path / "mean.tflite"
    p.write_bytes(b.build())
    _refused(p, capsys, monkeypatch, "operator 0 (MEAN", "reduces axes [25, 25, 25, 25, 25, 25] of a 4-D tensor")


@pytest.mark.parametrize("beta", [float("nan"), float("inf"), 0.0])
def test_tflite_softmax_beta_not_finite_positive(tmp_path, capsys, monkeypatch, beta):
    """ValueError (NaN to integer) in ir.requant.quantize_multiplier: a SOFTMAX with beta nan."""
    b = ModelBuilder()
    x = b.input("x", (1, 10), "int8", scale=0.1, zero_point=0)
    y = b.tensor("y", (1, 10), "int8", scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [x], [y], "SoftmaxOptions", Beta=beta)
    b.output(y)
    p = tmp_path / "softmax.tflite"
    p.write_bytes(b.build())
    _refused(p, capsys, monkeypatch, "operator 0 (SOFTMAX", f"has beta {beta}")


# ---------------------------------------------------------------- a long run at seed 29 (20,000 files)

def test_window_pads_beyond_any_tensor(tmp_path, capsys, monkeypatch):
    """ValueError (array too big) in the tiler's cost model: a MaxPool padded by 2^62."""
    p = _mutated(tmp_path, "deeploy/kernels/MaxPool/Regular_1D/network.onnx",
                 lambda m: _set_attr(_node(m, "MaxPool"), "pads", [1 << 62, 0]))
    _refused(p, capsys, monkeypatch, "node 'MaxPool'", "pad by less than 65536")


@pytest.mark.parametrize("rel, clip", [("nemo/SmartAgri-net/model_int.onnx", "Clip_11"),
                                       ("quantlab_dory/Dronet/DRONETV3_ql_integerized.onnx", "Clip_58")])
def test_clip_to_a_bound_beyond_int32(tmp_path, capsys, monkeypatch, rel, clip):
    """OverflowError in golden.requant.apply_requant: a requantization chain's Clip min made 1e38."""
    p = _mutated(tmp_path, rel, lambda m: _set_attr(next(n for n in m.graph.node if n.name == clip), "min", 1e38))
    _refused(p, capsys, monkeypatch, f"node '{clip}'", "clips everything to 1e+38, beyond int32")


def test_requantization_divisor_nan(tmp_path, capsys, monkeypatch):
    """ValueError (NaN to integer) in onnx_nemo._integer_divisor: a chain's Div constant made nan."""
    p = _mutated(tmp_path, "nemo/TCN_T/TCN.onnx", lambda m: _set_constant(m, "Constant_122", float("nan")))
    _refused(p, capsys, monkeypatch, "(Div)", "divides")


# ---------------------------------------------------------------- a long run at seed 30 (20,000 files)

def test_tflite_graph_output_a_constant(tmp_path, capsys, monkeypatch):
    """KeyError in report.memory_summary: a graph output that names a weight buffer (no layer
    writes it)."""
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 3), "int8", scale=0.03, zero_point=-1)
    w = b.const("w", np.ones((2, 1, 1, 3), np.int8), "int8", scale=np.full(2, 0.01), zero_point=0)
    bias = b.const("b", np.zeros(2, np.int32), "int32", scale=np.full(2, 3e-4), zero_point=0)
    y = b.tensor("y", (1, 4, 4, 2), "int8", scale=0.05, zero_point=0)
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         DilationWFactor=1, DilationHFactor=1)
    b.output(y)
    b.output(bias)
    p = tmp_path / "const_out.tflite"
    p.write_bytes(b.build())
    monkeypatch.delenv("TILEWISE_DEBUG", raising=False)
    rc = cli.main(["analyze", str(p), "--target", "gap8"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "graph output 'b' is a constant, not a layer's result" in err, err


def test_concat_of_zero_dimensional_tensors(tmp_path, capsys, monkeypatch):
    """ZeroDivisionError in onnx_qop.concat: a Concat of 0-D integer tensors."""
    x = helper.make_tensor_value_info("x", onnx.TensorProto.INT8, [])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.INT8, [])
    z = helper.make_tensor_value_info("z", onnx.TensorProto.INT8, None)
    node = helper.make_node("Concat", ["x", "y"], ["z"], name="cat", axis=0)
    model = helper.make_model(helper.make_graph([node], "g", [x, y], [z]), opset_imports=[helper.make_opsetid("", 13)])
    p = tmp_path / "concat0d.onnx"
    p.write_bytes(model.SerializeToString())
    _refused(p, capsys, monkeypatch, "node 'cat'", "0-D")


def test_tflite_activation_with_a_zero_dimension(tmp_path, capsys, monkeypatch):
    """ZeroDivisionError in tflite_ops.depthwise_conv_2d (seed 31): an activation of 0 channels."""
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 0), "int8", scale=0.03, zero_point=-1)
    w = b.const("w", np.ones((1, 3, 3, 2), np.int8), "int8", scale=np.full(2, 0.01), zero_point=0)
    bias = b.const("b", np.zeros(2, np.int32), "int32", scale=np.full(2, 3e-4), zero_point=0)
    y = b.tensor("y", (1, 4, 4, 2), "int8", scale=0.05, zero_point=0)
    b.op("DEPTHWISE_CONV_2D", [x, w, bias], [y], "DepthwiseConv2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         DepthMultiplier=1, DilationWFactor=1, DilationHFactor=1)
    b.output(y)
    p = tmp_path / "zero.tflite"
    p.write_bytes(b.build())
    _refused(p, capsys, monkeypatch, "tensor 0 'x' has the shape [1, 4, 4, 0], with a zero dimension")


def test_tflite_tensor_with_a_negative_dimension(tmp_path, capsys, monkeypatch):
    """ValueError (negative dimensions) in passes.lower (seed 31): a tensor's shape of -1 (the
    dynamic mark belongs in shape_signature, not shape)."""
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, -1), "int8", scale=0.03, zero_point=-1)
    y = b.tensor("y", (1, 4, 4, 2), "int8", scale=0.05, zero_point=0)
    b.op("RELU", [x], [y])
    b.output(y)
    p = tmp_path / "negative.tflite"
    p.write_bytes(b.build())
    _refused(p, capsys, monkeypatch, "tensor 0 'x' has the shape [1, 4, 4, -1], with a negative dimension")


def test_true_integer_div_merged_mul_infinite(tmp_path, capsys, monkeypatch):
    """OverflowError in onnx_int.rewrite (seed 31): the RequantShift after a TrueIntegerDiv
    multiplies by inf."""
    p = _mutated(tmp_path, "deeploy/kernels/TrueIntegerDiv/network.onnx",
                 lambda m: _set_initializer(m, "PACTOps::RequantShift_21", np.inf))
    _refused(p, capsys, monkeypatch, "node 'RequantShift_3'", "after the TrueIntegerDiv, beyond int64")


def _input_dim(model: onnx.ModelProto, name: str, axis: int, value: int) -> None:
    d = next(vi for vi in model.graph.input if vi.name == name).type.tensor_type.shape.dim[axis]
    d.Clear()
    d.dim_value = value


@pytest.mark.parametrize("rel, name, axis, value", [
    ("deeploy/kernels/GEMM/Batch_RQ/network.onnx", "x", 1, 2 ** 31 - 1),
    ("deeploy/kernels/GEMM/Regular_RQPerColumn/network.onnx", "input", 0, 65536),
    ("deeploy/kernels/MaxPool/Regular_2D/network.onnx", "input_0", 2, 2 ** 31)])
def test_activations_beyond_every_memory_of_an_l3_target(tmp_path, capsys, monkeypatch, rel, name, axis, value):
    """MemoryError in the tiler (seeds 29, 31, 32: 3.5–32 GB for its tile-size arrays, 24 GB
    resident when run unbounded): an input dimension made 65,536 or 2^31 − 1 gives activations
    larger than gap8's L2 and L3 together; refused before any layer is tiled."""
    monkeypatch.delenv("TILEWISE_DEBUG", raising=False)
    p = _mutated(tmp_path, rel, lambda m: _input_dim(m, name, axis, value))
    rc = cli.main(["analyze", str(p), "--target", "gap8"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(error_lines(err)) == 1, err
    assert str(p) in err and "free in gap8's L2 and L3 together" in err, err


def test_residual_add_table_beyond_int64(tmp_path, capsys, monkeypatch):
    """OverflowError in onnx_int.table_add (seed 32): NEMO's residual scale 1e38 made the add's
    table terms leave int64 (they are computed in Python integers now, and refused past int32)."""
    p = _mutated(tmp_path, "nemo/TCN_T/TCN.onnx", lambda m: _set_constant(m, "Constant_43", 1e38))
    _refused(p, capsys, monkeypatch, "node 'Add_47'", "beyond int32")


def test_requantization_divisor_infinite(tmp_path, capsys, monkeypatch):
    """OverflowError in onnx_nemo._pow2 (seed 33): QuantLab's requantization Div by inf."""
    p = _mutated(tmp_path, "quantlab_dory/Dronet/DRONETV3_ql_integerized.onnx",
                 lambda m: _set_constant(m, "Constant_3", np.inf))
    _refused(p, capsys, monkeypatch, "divides a float by something other than a power of two")


def _op_type(m: onnx.ModelProto, name: str, op_type: str) -> None:
    next(n for n in m.graph.node if n.name == name).op_type = op_type


def test_pads_or_shape_not_finite(tmp_path, capsys, monkeypatch):
    """OverflowError in onnx_int._ints and onnx_lower._target_shape (seed 34): a Pad's pads and a
    Reshape's shape read from an initializer of -inf."""
    def pad(m):
        _set_initializer(m, "rqnt_mul_0", np.full_like(numpy_helper.to_array(
            next(t for t in m.graph.initializer if t.name == "rqnt_mul_0")), -np.inf, dtype=np.float32))
        _op_type(m, "rqnt_0", "Pad")

    def reshape(m):
        w = next(t for t in m.graph.initializer if t.name == "op.weight")
        w.CopyFrom(numpy_helper.from_array(np.full(numpy_helper.to_array(w).shape, -np.inf, np.float32), "op.weight"))
        _op_type(m, "iRMSNorm_0", "Reshape")

    p = _mutated(tmp_path, "deeploy/kernels/GEMM/Batch_RQ/network.onnx", pad)
    _refused(p, capsys, monkeypatch, "node 'rqnt_0' (Pad)", "-inf in its pads")
    p = _mutated(tmp_path, "deeploy/kernels/RMSNorm/network.onnx", reshape)
    _refused(p, capsys, monkeypatch, "node 'iRMSNorm_0' (Reshape)", "-inf in its shape")


def test_constant_attribute_that_cannot_be_decoded(tmp_path, capsys, monkeypatch):
    """ValueError in onnx's numpy_helper (seed 34): a Constant's tensor whose data does not fill
    its dims."""
    def corrupt(m):
        t = _node(m, "Constant").attribute[0].t
        t.dims[0] = t.dims[0] + 1
    p = _mutated(tmp_path, "deeploy/kernels/GEMM/Batch_RQ/network.onnx", corrupt)
    _refused(p, capsys, monkeypatch, "node 'node_Constant_3' (Constant)", "cannot be decoded")


def test_metadata_key_not_utf8(tmp_path, capsys, monkeypatch):
    """TypeError in onnx_stated.stated_quant (seed 34): a metadata key that is not UTF-8 reaches
    tilewise as bytes; it is read as text (and, naming no tensor, ignored)."""
    def meta(m):
        m.metadata_props.add(key="tilewise.quant.zz", value="0.5 3")
    p = _mutated(tmp_path, "deeploy/kernels/ReduceMean/network.onnx", meta,
                 raw=lambda b: b.replace(b"tilewise.quant.zz", b"tilewise.quant\xff\xff\xff"))
    rc, err = _analyze(p, capsys, monkeypatch)
    assert rc == 0, err


def test_second_requantization_multiplier_beyond_int64(tmp_path, capsys, monkeypatch):
    """OverflowError in onnx_int.requant_range (seed 35): the Mul after the floor of NEMO's residual
    add (its second requantization) made int64's maximum."""
    p = _mutated(tmp_path, "nemo/dronet_complete/model_int.onnx",
                 lambda m: _set_constant(m, "Constant_146", 2 ** 63 - 1))
    _refused(p, capsys, monkeypatch, "node 'Add_141'", "second time with the multiplier", "within int32")
