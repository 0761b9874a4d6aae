"""The real values an integer ONNX model states for the codes of its inputs and outputs.

An integer export carries raw codes (in float32 or integer containers) and the IR keeps them so:
their tensors' QuantParams are scale 1, zero point 0, the arithmetic's (the zero points live in
the biases, quantize/shift_out.py). A model may still say what the codes mean: `tilewise
quantize`'s shift-mode models (gap8, gap9, pulp-open, diana) write, per graph input, output and
activation, `tilewise.quant.<tensor>` = "<scale> <zero_point>" in their
metadata_props (real = scale·(u − zero_point)). `stated_quant` reads them; the lowering
(onnx_lower.py) records those of the network's inputs and outputs in graph.meta["io_quant"]
(ir/io_quant.py), which validate --data (quantizing float inputs, dequantizing outputs) and
network.h (TW_INPUT_SCALE …, tw_network_info) take for the tensors' quantization; validate
--float-model reads the layers' own (validate/float_layers.py).
"""

from __future__ import annotations

import math

from .onnx_model import OnnxGraph, unsupported

#: metadata key prefix of a tensor's stated quantization (quantize/shift_out.py META)
STATED_KEY = "tilewise.quant."


def stated_quant(g: OnnxGraph) -> dict[str, tuple[float, int]]:
    """ONNX tensor name -> (scale, zero point) the model's metadata states for its codes; a
    malformed entry is one sentence naming it."""
    out: dict[str, tuple[float, int]] = {}
    for key, value in g.metadata.items():
        if not key.startswith(STATED_KEY) or len(key) == len(STATED_KEY):
            continue
        parts = value.split()
        try:
            scale, zp = float(parts[0]), int(parts[1])
            ok = len(parts) == 2 and math.isfinite(scale) and scale > 0
        except (ValueError, IndexError):
            ok = False
        if not ok:
            raise unsupported(g, None, f"states the quantization of '{key[len(STATED_KEY):]}' as "
                              f"{value!r} in its metadata ('{key}')",
                              "give '<scale> <zero point>' with a positive finite scale and an "
                              "integer zero point, or drop the entry")
        out[key[len(STATED_KEY):]] = (scale, zp)
    return out
