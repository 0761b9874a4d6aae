"""ctypes calls into the C kernel library (tests/c/kernel_shim.c) with numpy arrays.

Each function takes one tile's arrays exactly as generated code would hold them in L1 (dense, HWC,
tile-local channels), runs the kernel on `cores` host threads through the HAL's tw_fork, and returns
the output array. Used by tests/test_c_kernels.py.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from tilewise.bindings.portable.elementwise import add_onnx_exact as add_onnx_exact_params
from tilewise.golden import onnx_requant_exact
from tilewise.ir.ops import Op
from tilewise.ir.params import OnnxAddParams, TfliteAddSubParams, TfliteAvgPoolParams, TfliteSoftmaxParams
from tilewise.ir.requant import Requant

from . import tw_c_build as build

P = ctypes.c_void_p
I = ctypes.c_int
I32 = ctypes.c_int32

MODES = {"tflite": 0, "shift": 1, "onnx": 2, "tflite_single": 3}
ACC_FIRST, ACC_LAST = 1, 2
ACC_WHOLE = ACC_FIRST | ACC_LAST

_SIGNATURES = {
    "shim_conv_scratch": (ctypes.c_long, [P, I, I]),
    "shim_window_valid": (I, [P]),
    "shim_conv": (None, [P, P, I, P, P, P, I, I, P, I, P, P, P, P, P, P, I, I]),
    "shim_depthwise": (None, [P, P, I, I, P, P, P, I, P, P, P, P, P, I]),
    "shim_fc": (None, [P, I, I, P, P, P, I, P, I, P, P, P, P, P, I]),
    "shim_elementwise": (None, [I, P, P, P, P, I, I]),
    "shim_pool": (None, [I, P, P, I, P, I, I, I]),
    "shim_avgpool_onnx": (None, [P, P, I, P, P, P, I]),
    "shim_gap": (None, [P, I, I, P, I, P, P, I]),
    "shim_softmax": (None, [P, P, I, I, I32, I32, I32, I]),
    "shim_softmax_onnx": (None, [P, P, I, I, P, P, I32, I32, I]),
    "shim_lut": (None, [P, P, P, I, I]),
    "shim_concat2": (None, [P, P, I, P, P, I, P, I]),
    "shim_mbqm": (I32, [I32, I32, I32, I]),
    "shim_div64_clamp": (None, [P, I, ctypes.c_int64, I, ctypes.c_int64, ctypes.c_int64, P]),
    "shim_add_onnx": (None, [P, P, P, P, P, I, I, I]),
    "shim_add_onnx_exact": (None, [P, P, P, P, P, I, I]),
    "shim_gap_rq": (None, [P, I, I, P, I, I, P, P, P, P, P, P, I]),
}


def load_library(family: str = "portable") -> ctypes.CDLL:
    """The shim library of a kernel family: "portable" (tests/c/kernel_shim.c) or "pulp" (the same
    entry points running the pulp kernels, tests/c/pulp_shim.c; the portable kernels it builds on
    are linked too)."""
    hal = [build.HAL / "tw_hal_host.c"]
    if family == "pulp":
        sources = build.kernel_sources() + build.pulp_sources() + hal + [build.TESTS_C / "pulp_shim.c"]
        includes = [build.KERNELS, build.PULP, build.HAL, build.TESTS_C]
    else:
        sources = build.kernel_sources() + hal + [build.TESTS_C / "kernel_shim.c"]
        includes = [build.KERNELS, build.HAL]
    lib = ctypes.CDLL(str(build.build_shared(f"tw{family}", sources, includes)))
    pulp = {"shim_pulp_shift32": (None, [I]), "shim_pulp_tflite_right": (None, [I]), "shim_pulp_add_right": (None, [I]),
            "shim_pulp_add_fold": (None, [P]), "shim_pulp_rq_words": (None, [P, P, P, P, P, I, I, P]),
            "shim_pulp_dw_scratch": (ctypes.c_long, [P, I])}
    signatures = dict(_SIGNATURES, **(pulp if family == "pulp" else {}))
    for name, (res, args) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


def ptr(a: np.ndarray | None):
    return None if a is None else a.ctypes.data_as(P)


def c_array(a, dtype) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a), dtype=dtype)


@dataclass(frozen=True)
class Window:
    """tw_window_t: a tile's input/output dims, kernel, stride, dilation and per-side pads."""

    in_h: int
    in_w: int
    out_h: int
    out_w: int
    k_h: int
    k_w: int
    s_h: int = 1
    s_w: int = 1
    d_h: int = 1
    d_w: int = 1
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)

    def array(self) -> np.ndarray:
        return c_array([self.in_h, self.in_w, self.out_h, self.out_w, self.k_h, self.k_w, self.s_h,
                        self.s_w, self.d_h, self.d_w, *self.pads], np.int32)


class RequantArrays:
    """The tw_requant_t arrays of a Requant restricted to output channels [k0, k1)."""

    def __init__(self, rq: Requant, k0: int = 0, k1: int | None = None):
        per_channel = rq.channels > 1
        sl = slice(k0, k1) if per_channel else slice(0, 1)
        mode = "tflite_single" if rq.mode == "tflite" and rq.rounding == "single" else rq.mode
        assert not rq.wide, "the C kernels are int8 only (no 16x8 int64 path)"
        self.rqi = c_array([MODES[mode], int(per_channel), rq.zero_point, rq.qmin, rq.qmax], np.int32)
        mult, shift = rq.multiplier, rq.shift
        if mode == "onnx":   # the compiler's integer constants of the float32 scales
            mult, shift = onnx_requant_exact.constants(np.asarray(rq.scale, np.float32))
        self.mult = c_array(np.atleast_1d(mult)[sl], np.int32)
        self.shift = c_array(np.atleast_1d(shift)[sl], np.int32)
        self.lam = None if rq.bias is None else c_array(np.atleast_1d(rq.bias)[sl], np.int32)
        self.scale = None if rq.scale is None else c_array(np.atleast_1d(rq.scale)[sl], np.float32)

    def args(self) -> list:
        return [ptr(self.rqi), ptr(self.mult), ptr(self.shift), ptr(self.lam), ptr(self.scale)]


def window_valid(lib, win: Window) -> bool:
    return bool(lib.shim_window_valid(ptr(win.array())))


def conv(lib, win: Window, x, w, bias, rq: RequantArrays, pad_value: int, cores: int,
         psum: np.ndarray | None = None, flags: int = ACC_WHOLE, pointwise: bool = False) -> np.ndarray:
    """x [in_h, in_w, C] int8, w [K, k_h, k_w, C] int8, bias [K] int32 -> out [out_h, out_w, K]."""
    x, w = c_array(x, np.int8), c_array(w, np.int8)
    b = None if bias is None else c_array(bias, np.int32)
    k, c = w.shape[0], x.shape[-1]
    g = win.array()
    out = np.full((win.out_h, win.out_w, k), 0x5A, dtype=np.int8)
    scratch = None if pointwise else np.zeros(lib.shim_conv_scratch(ptr(g), c, cores), dtype=np.int8)
    lib.shim_conv(ptr(g), ptr(x), c, ptr(w), ptr(b), ptr(out), k, pad_value, ptr(psum), flags,
                  *rq.args(), ptr(scratch), int(pointwise), cores)
    return out


def depthwise(lib, win: Window, x, w_hwk, bias, mult: int, rq: RequantArrays, pad_value: int,
              cores: int) -> np.ndarray:
    """x [in_h, in_w, C], w [k_h, k_w, C*mult] -> out [out_h, out_w, C*mult]."""
    x, w = c_array(x, np.int8), c_array(w_hwk, np.int8)
    b = None if bias is None else c_array(bias, np.int32)
    out = np.full((win.out_h, win.out_w, w.shape[-1]), 0x5A, dtype=np.int8)
    lib.shim_depthwise(ptr(win.array()), ptr(x), x.shape[-1], mult, ptr(w), ptr(b), ptr(out), pad_value,
                       *rq.args(), cores)
    return out


def fully_connected(lib, x, w, bias, rq: RequantArrays, cores: int, psum: np.ndarray | None = None,
                    flags: int = ACC_WHOLE) -> np.ndarray:
    """x [N, C], w [K, C] -> out [N, K]."""
    x, w = c_array(x, np.int8), c_array(w, np.int8)
    b = None if bias is None else c_array(bias, np.int32)
    out = np.full((x.shape[0], w.shape[0]), 0x5A, dtype=np.int8)
    lib.shim_fc(ptr(x), x.shape[0], x.shape[1], ptr(w), ptr(b), ptr(out), w.shape[0], ptr(psum), flags,
                *rq.args(), cores)
    return out


#: the tw_add_params_t fields in the order of the elementwise `params` words (shim_elementwise)
ADD_PARAMS = ("a_zp", "a_mult", "a_shift", "b_zp", "b_mult", "b_shift", "left_shift", "out_mult",
              "out_shift", "out_zp", "qmin", "qmax")


def elementwise(lib, op: str, params: list[int], a, b, cores: int, out: np.ndarray | None = None) -> np.ndarray:
    a, b = c_array(a, np.int8), c_array(b, np.int8)
    if out is None:
        out = np.full(a.shape, 0x5A, dtype=np.int8)
    lib.shim_elementwise({"add": 0, "sub": 1, "mul": 2}[op], ptr(c_array(params, np.int32)), ptr(a), ptr(b),
                         ptr(out), a.size, cores)
    return out


def pool(lib, op: str, win: Window, x, qmin: int, qmax: int, cores: int) -> np.ndarray:
    x = c_array(x, np.int8)
    out = np.full((win.out_h, win.out_w, x.shape[-1]), 0x5A, dtype=np.int8)
    lib.shim_pool({"avg": 0, "max": 1}[op], ptr(win.array()), ptr(x), x.shape[-1], ptr(out), qmin, qmax, cores)
    return out


def avgpool_onnx(lib, win: Window, x, x_scale: float, y_scale: float, x_zp: int, y_zp: int,
                 count_include_pad: bool, qmin: int, qmax: int, out_offset: int, cores: int) -> np.ndarray:
    """tw_avgpool_onnx_s8 on one tile (x_zp stored domain; y_zp, qmin, qmax value domain)."""
    x = c_array(x, np.int8)
    out = np.full((win.out_h, win.out_w, x.shape[-1]), 0x5A, dtype=np.int8)
    lib.shim_avgpool_onnx(ptr(win.array()), ptr(x), x.shape[-1], ptr(out),
                          ptr(c_array([x_scale, y_scale], np.float32)),
                          ptr(c_array([x_zp, y_zp, int(count_include_pad), qmin, qmax, out_offset], np.int32)),
                          cores)
    return out


def global_avgpool(lib, x_pixels, params: list[int], cores: int, acc: np.ndarray | None = None,
                   flags: int = ACC_WHOLE, out: np.ndarray | None = None) -> np.ndarray:
    """x [pixels, C]; params = divisor in_zp mult shift out_zp qmin qmax."""
    x = c_array(x_pixels, np.int8)
    if out is None:
        out = np.full(x.shape[-1], 0x5A, dtype=np.int8)
    lib.shim_gap(ptr(x), x.shape[0], x.shape[1], ptr(acc), flags, ptr(c_array(params, np.int32)), ptr(out), cores)
    return out


def add_onnx(lib, ratio_a: float, ratio_b: float, fixed: float, qmin: int, qmax: int, a, b,
             cores: int, u8: bool = False) -> np.ndarray:
    """onnxruntime QLinearAdd of two int8 arrays of the same shape (tw_add_onnx_s8); with u8, of two
    uint8 arrays stored as u - 128 (tw_add_onnx_u8; a, b and the result are the stored int8 bytes)."""
    a, b = c_array(a, np.int8), c_array(b, np.int8)
    out = np.full(a.shape, 0x5A, dtype=np.int8)
    lib.shim_add_onnx(ptr(c_array([ratio_a, ratio_b, fixed], np.float32)), ptr(c_array([qmin, qmax], np.int32)),
                      ptr(a), ptr(b), ptr(out), a.size, cores, int(u8))
    return out


def add_onnx_exact(lib, ratio_a: float, ratio_b: float, fixed: float, qmin: int, qmax: int, a, b,
                   cores: int, u8: bool = False) -> np.ndarray:
    """add_onnx through tw_add_onnx_exact_s8, its integers from bindings/portable/elementwise.py
    add_onnx_exact (which must exist for these ratios)."""
    p = add_onnx_exact_params(OnnxAddParams(a_index=0, ratio_a=ratio_a, ratio_b=ratio_b, fixed=fixed,
                                            qmin=qmin, qmax=qmax), 128 if u8 else 0,
                              qmin, qmax)
    assert p is not None
    a, b = c_array(a, np.int8), c_array(b, np.int8)
    out = np.full(a.shape, 0x5A, dtype=np.int8)
    lib.shim_add_onnx_exact(ptr(c_array([p["ma"], *p["tb"]], np.int64)),
                            ptr(c_array([p["shift"], qmin, qmax, p["out_off"]], np.int32)),
                            ptr(a), ptr(b), ptr(out), a.size, cores)
    return out


def global_avgpool_rq(lib, x_pixels, in_zp: int, rq: RequantArrays, cores: int,
                      acc: np.ndarray | None = None, flags: int = ACC_WHOLE,
                      out: np.ndarray | None = None) -> np.ndarray:
    """x [pixels, C] -> [C] through tw_global_avgpool_rq_s8."""
    x = c_array(x_pixels, np.int8)
    if out is None:
        out = np.full(x.shape[-1], 0x5A, dtype=np.int8)
    lib.shim_gap_rq(ptr(x), x.shape[0], x.shape[1], ptr(acc), flags, in_zp, *rq.args(), ptr(out), cores)
    return out


def softmax_onnx(lib, x, table, y_scale_inv: float, y_zp: int, y_nonfinite: int, cores: int) -> np.ndarray:
    """[rows, depth] int8 (as stored) through tw_softmax_onnx_s8."""
    x = c_array(x, np.int8)
    out = np.full(x.shape, 0x5A, dtype=np.int8)
    lib.shim_softmax_onnx(ptr(x), ptr(out), x.shape[0], x.shape[1], ptr(c_array(table, np.float32)),
                          ptr(c_array([y_scale_inv], np.float32)), y_zp, y_nonfinite, cores)
    return out


def concat2(lib, a, lut_a, b, lut_b) -> np.ndarray:
    """[outer, inner_a] ++ [outer, inner_b] through tw_concat2_s8 (lut None = copy)."""
    a, b = c_array(a, np.int8), c_array(b, np.int8)
    la = None if lut_a is None else c_array(lut_a, np.int8)
    lb = None if lut_b is None else c_array(lut_b, np.int8)
    out = np.full((a.shape[0], a.shape[1] + b.shape[1]), 0x5A, dtype=np.int8)
    lib.shim_concat2(ptr(a), None if la is None else ptr(la), a.shape[1], ptr(b),
                     None if lb is None else ptr(lb), b.shape[1], ptr(out), a.shape[0])
    return out


def lut(lib, table, x, cores: int) -> np.ndarray:
    """out = table[x + 128] through tw_lut_s8."""
    x = c_array(x, np.int8)
    out = np.full(x.shape, 0x5A, dtype=np.int8)
    lib.shim_lut(ptr(c_array(table, np.int8)), ptr(x), ptr(out), x.size, cores)
    return out


def softmax(lib, x, multiplier: int, left_shift: int, diff_min: int, cores: int) -> np.ndarray:
    x = c_array(x, np.int8)
    out = np.full(x.shape, 0x5A, dtype=np.int8)
    lib.shim_softmax(ptr(x), ptr(out), x.shape[0], x.shape[1], multiplier, left_shift, diff_min, cores)
    return out


def run_layer(lib, layer, lg, args: list[np.ndarray], cores: int) -> np.ndarray | None:
    """One lowered layer computed by the C kernels as a single tile (None for layout-only ops)."""
    n = layer.nest
    out_shape = lg.tensors[layer.output].shape
    if layer.op in (Op.CONV2D, Op.DEPTHWISE):
        x = args[0].reshape(n.IY, n.IX, n.C)
        win = Window(n.IY, n.IX, n.OY, n.OX, n.FY, n.FX, n.SY, n.SX, 1, 1, tuple(n.pads))
        pad = layer.pad_value
        rq = RequantArrays(layer.requant)
        if layer.op == Op.DEPTHWISE:
            w_hwk = layer.weights.transpose(1, 2, 0)
            y = depthwise(lib, win, x, w_hwk, layer.bias, n.K // n.C, rq, pad, cores)
        else:
            pointwise = n.FY == n.FX == 1 and not any(n.pads)
            y = conv(lib, win, x, layer.weights, layer.bias, rq, pad, cores, pointwise=pointwise)
    elif layer.op == Op.FULLY_CONNECTED:
        x = args[0].reshape(-1, layer.weights.shape[1])
        y = fully_connected(lib, x, layer.weights, layer.bias, RequantArrays(layer.requant), cores)
    elif layer.op == Op.ADD:
        a = layer.params
        assert isinstance(a, TfliteAddSubParams)
        zp = [lg.tensors[t].quant.zp for t in (*layer.inputs, layer.output)]
        prm = [zp[0], a.input_multipliers[0], a.input_shifts[0], zp[1], a.input_multipliers[1],
               a.input_shifts[1], a.left_shift, a.output_multiplier, a.output_shift, zp[2], a.qmin, a.qmax]
        y = elementwise(lib, "add", prm, args[0], args[1], cores)
    elif layer.op == Op.AVG_POOL:
        a = layer.params
        assert isinstance(a, TfliteAvgPoolParams)
        win = Window(n.IY, n.IX, n.OY, n.OX, *a.kernel, *a.stride, 1, 1, tuple(a.pads))
        y = pool(lib, "avg", win, args[0].reshape(n.IY, n.IX, n.C), a.qmin, a.qmax, cores)
    elif layer.op == Op.SOFTMAX:
        a = layer.params
        assert isinstance(a, TfliteSoftmaxParams)
        x = args[0].reshape(-1, out_shape[-1])
        y = softmax(lib, x, a.input_multiplier, a.input_left_shift, a.diff_min, cores)
    elif layer.op == Op.RESHAPE:
        return None
    else:
        raise AssertionError(f"no C kernel for layer op {layer.op}")
    return y.reshape(out_shape)
