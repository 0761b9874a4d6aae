"""Which pulp kernels may write their output over their input as they go, and how far below the
input the output must start (the lag) — read off the kernels' loop order in c/.

In-place execution lowers RAM below the per-layer bound (issue 30): TinyEngine runs depthwise
convolutions in place, channel by channel through a temporary buffer (Lin et al., "MCUNet: Tiny
Deep Learning on IoT Devices", NeurIPS 2020, §3.2 "in-place depth-wise convolution"); MCUNetV2
(Lin et al., NeurIPS 2021) goes further with patch-by-patch execution. Here no kernel changes:
the pulp kernels already consume their input in an order that lets the output overwrite it, when
the output starts `lag` bytes below the input's first byte (memory/inplace.py places it so):

- depthwise (tw_pulp_depthwise.c, both the Arm path's groups of four channels and the planar
  path's single channels): a channel run writes only its own channels, and before it writes
  output row oy it has copied the padded input rows up to oy·s − pad_t + k_h − 1 of those
  channels into its ring (the core's scratch). Input and output have the same pixel stride (C
  bytes; channel multiplier 1), so with the output `lag_px` pixels below the input, output row oy
  ends at input pixel (oy + 1)·OX − lag_px, which must not pass the first row not yet in the ring:
  lag_px ≥ max_oy ((oy + 1)·OX − min(IY, oy·s + k_h − pad_t)·IX). A lag of whole pixels keeps
  every channel on its own bytes; 0 for a stride-1 or stride-2 "same" 3x3.
- conv2d / 1x1 conv (tw_pulp_conv.c conv_tile / conv_tile_arm): the output pixels in row-major
  pairs, one core (the layer untiled on the module's one core); a pair's output bytes (all its
  output channels, K per pixel) are written while the pair's receptive fields are still read
  (the generic path reads them in place per channel block; the Arm path unpacks them into its
  scratch first, which only helps). The lowest input byte still to be read when pair p0 is
  written is m(p0) = min over pixels q ≥ p0 of the first byte of q's receptive field
  (max(0, oy·s − pad_t)·IX + max(0, ox·s − pad_l))·C, so lag ≥ max_p0 (min(p0 + 2, P)·K − m(p0)).
- add / sub (tw_pulp_elementwise.c add_run): two elements of each input are loaded before the
  two outputs are stored, element i to element i: the output exactly over either input (lag 0)
  when the tensors have the same bytes.

On PULP's cluster the cores write their shares of output rows concurrently and tiled layers go
through L1, so only an untiled layer on a one-core module qualifies (`in_place_candidates`' caller
checks the schedule); lags are rounded up to `align` (a larger lag is as safe).
"""

from __future__ import annotations

from ...ir.layer import Layer, LayerGraph, LoopNest

#: binding labels (Binding.label prefixes) whose access order is the one derived above
CONV = ("pulp/conv2d_s8",)
DEPTHWISE = ("pulp/depthwise_s8",)
ADD = ("pulp/add_s8",)


def _align(n: int, align: int) -> int:
    return -(-max(n, 0) // align) * align


def depthwise_lag(n: LoopNest, align: int = 4) -> int:
    """Bytes the output of a depthwise (multiplier 1) starts below its input (module docstring)."""
    pad_t = n.pads[0]
    lag_px = max(0, max((oy + 1) * n.OX - min(n.IY, oy * n.SY + n.FY - pad_t) * n.IX
                        for oy in range(n.OY)))
    while (lag_px * n.C) % align:
        lag_px += 1
    return lag_px * n.C


def conv_lag(n: LoopNest, align: int = 4) -> int:
    """Bytes the output of a conv2d / 1x1 conv (pixel pairs in row-major order, one core) starts
    below its input (module docstring)."""
    pad_t, pad_l = n.pads[0], n.pads[1]
    pixels = n.OY * n.OX
    first = [(max(0, (p // n.OX) * n.SY - pad_t) * n.IX + max(0, (p % n.OX) * n.SX - pad_l)) * n.C
             for p in range(pixels)]
    lag, low = 0, None
    for p in range(pixels - 1, -1, -1):        # suffix minimum of the first bytes read
        low = first[p] if low is None else min(low, first[p])
        if p % 2 == 0:
            lag = max(lag, min(p + 2, pixels) * n.K - low)
    return _align(lag, align)


def in_place_candidates(layer: Layer, lg: LayerGraph, label: str, align: int = 4
                        ) -> tuple[tuple[str, int], ...]:
    """The (input tensor, lag bytes) pairs over which the kernel `label` may write `layer`'s
    output as it goes (an add: either input); none when it may not. The caller checks that the
    input dies at this layer and that the layer runs untiled on one core."""
    n = layer.nest
    y = lg.tensors[layer.output]
    xs = [lg.tensors[t] for t in layer.inputs]
    if not xs or y.dtype != "int8" or any(x.dtype != "int8" for x in xs) or n.N != 1:
        return ()
    if label.startswith(DEPTHWISE) and n.kind == "dwconv" and n.K == n.C:
        return ((layer.inputs[0], depthwise_lag(n, align)),)
    if label.startswith(CONV) and n.kind == "conv":
        return ((layer.inputs[0], conv_lag(n, align)),)
    if label.startswith(ADD) and n.kind == "add" and len(xs) == 2:
        # element i to element i: either input holding the output's bytes (no broadcast)
        return tuple((t, 0) for t, x in zip(layer.inputs, xs) if x.nbytes == y.nbytes)
    return ()
