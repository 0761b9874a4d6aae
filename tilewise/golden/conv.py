"""Integer accumulation of convolutions and dense layers (int64, exact).

acc[n,oy,ox,k] = bias[k] + Σ (x[n, oy·sy + fy·dy − pt, ox·sx + fx·dx − pl, c] − zp_x) · (w[k,fy,fx,c] − zp_w[k])
with padding taking the value zp_x (so padded taps contribute nothing), groups splitting C and K
evenly (depthwise: groups = C, w [K,FY,FX,1], output channel k reads input channel k // (K/C)).
This is the arithmetic of TFLite's reference ConvPerChannel/DepthwiseConvPerChannel/FullyConnected
and of onnxruntime's QLinearConv before requantization.

Sums are computed as float64 matrix products: every partial sum of int8/uint8/int16 × int8 products
here stays far below 2^53, so the result is exact and BLAS-fast.
"""

from __future__ import annotations

import numpy as np


def pad_nhwc(x: np.ndarray, pads: tuple[int, int, int, int], value: int) -> np.ndarray:
    t, l, b, r = pads
    return np.pad(x, ((0, 0), (t, b), (l, r), (0, 0)), constant_values=value)


def conv2d_acc(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None,
    zp_x: int,
    zp_w: np.ndarray | int,
    stride: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilation: tuple[int, int] = (1, 1),
    groups: int = 1,
    pad_value: int | None = None,
) -> np.ndarray:
    """int64 accumulators [N, OY, OX, K] of a (grouped) 2-D convolution in NHWC/OHWI.

    Padding takes `pad_value` (default zp_x). Lowered layers pass zp_x=0 and pad_value=zp_x: their
    bias already holds −zp_x·Σw, so padded taps must contribute zp_x·w to cancel it.
    """
    n, _, _, c = x.shape
    k, fy, fx, cg = w.shape
    sy, sx = stride
    dy, dx = dilation
    fill = zp_x if pad_value is None else pad_value
    xp = pad_nhwc(np.asarray(x, dtype=np.int64), pads, fill) - zp_x
    hp, wp = xp.shape[1], xp.shape[2]
    oy = (hp - (dy * (fy - 1) + 1)) // sy + 1
    ox = (wp - (dx * (fx - 1) + 1)) // sx + 1
    # patches [N, OY, OX, FY, FX, C]
    cols = np.empty((n, oy, ox, fy, fx, c), dtype=np.float64)
    for i in range(fy):
        for j in range(fx):
            cols[:, :, :, i, j, :] = xp[:, i * dy: i * dy + sy * (oy - 1) + 1: sy,
                                        j * dx: j * dx + sx * (ox - 1) + 1: sx, :]
    wz = np.asarray(w, dtype=np.int64) - np.asarray(zp_w, dtype=np.int64).reshape(-1, 1, 1, 1)
    kg = k // groups
    acc = np.empty((n, oy, ox, k), dtype=np.float64)
    if groups == 1:
        flat = cols.reshape(n * oy * ox, fy * fx * c)
        acc[...] = (flat @ wz.reshape(k, -1).astype(np.float64).T).reshape(n, oy, ox, k)
    elif cg == 1 and groups == c:
        # depthwise: output channel ki reads input channel ki // kg
        src = cols[..., np.arange(k) // kg]  # [N,OY,OX,FY,FX,K]
        acc[...] = np.einsum("nyxijk,kij->nyxk", src, wz[..., 0].astype(np.float64), optimize=True)
    else:
        for g in range(groups):
            sub = cols[..., g * cg:(g + 1) * cg].reshape(n * oy * ox, fy * fx * cg)
            wg = wz[g * kg:(g + 1) * kg].reshape(kg, -1).astype(np.float64)
            acc[..., g * kg:(g + 1) * kg] = (sub @ wg.T).reshape(n, oy, ox, kg)
    out = np.rint(acc).astype(np.int64)
    if bias is not None:
        out += np.asarray(bias, dtype=np.int64)
    return out


def dense_acc(
    x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, zp_x: int, zp_w: np.ndarray | int = 0
) -> np.ndarray:
    """int64 accumulators [N, K] of a fully-connected layer: x [N, C], w [K, C]."""
    xz = np.asarray(x, dtype=np.int64).reshape(-1, w.shape[1]) - zp_x
    wz = np.asarray(w, dtype=np.int64) - np.asarray(zp_w, dtype=np.int64).reshape(-1, 1)
    out = np.rint(xz.astype(np.float64) @ wz.astype(np.float64).T).astype(np.int64)
    if bias is not None:
        out += np.asarray(bias, dtype=np.int64)
    return out


def transpose_conv_acc(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None,
    zp_x: int,
    stride: tuple[int, int],
    pads: tuple[int, int],
    output_hw: tuple[int, int],
) -> np.ndarray:
    """int64 accumulators [N, OH, OW, K] of TFLite's TRANSPOSE_CONV, stated as LiteRT's reference
    kernel computes it (reference_integer_ops::TransposeConv): every input pixel scatters
    (x − zp_x)·w[k, fy, fx, :] onto output (iy·sy − pad_top + fy, ix·sx − pad_left + fx), taps
    falling outside the output dropped; the bias is added once per output value. Integer sums
    (int64 here, int32 / int64 in LiteRT) are exact whatever the order."""
    n, ih, iw, c = x.shape
    k, fh, fw, _ = w.shape
    sy, sx = stride
    pt, pl = pads
    oh, ow = output_hw
    xz = np.asarray(x, dtype=np.int64) - zp_x
    wk = np.asarray(w, dtype=np.int64)
    # the full scatter canvas, then the window [pt, pt + oh) x [pl, pl + ow) of it
    full = np.zeros((n, (ih - 1) * sy + fh, (iw - 1) * sx + fw, k), dtype=np.int64)
    for i in range(fh):
        for j in range(fw):
            contrib = np.einsum("nyxc,kc->nyxk", xz, wk[:, i, j, :])
            full[:, i: i + sy * (ih - 1) + 1: sy, j: j + sx * (iw - 1) + 1: sx, :] += contrib
    out = np.zeros((n, oh, ow, k), dtype=np.int64)
    ys, xs = slice(max(pt, 0), min(pt + oh, full.shape[1])), slice(max(pl, 0), min(pl + ow, full.shape[2]))
    out[:, ys.start - pt: ys.stop - pt, xs.start - pl: xs.stop - pl, :] = full[:, ys, xs, :]
    if bias is not None:
        out += np.asarray(bias, dtype=np.int64)
    return out
