"""tw_network_info(): the description of a generated network an application reads at run time.

network.h declares `tw_network_info_t` / `tw_io_info_t` and `const tw_network_info_t
*tw_network_info(void)`; network.c defines it (templates/network_info.c.j2, included by
network.c.j2) as const data: per input and output, in tw_network_run's order, its name, dtype
(name, bits, signedness, C type), bytes, elements, rank, dims and layout as the caller holds
it, and its quantization as the model states it (real = scale·(q − zero_point),
ir/io_quant.py); the counts of inputs and outputs, the arena sizes the caller provides (L1, L2,
L3), the constants' bytes (L2 image, flash) and the number of layers. Every number is the
network.h macro of the same fact (TW_INPUT_BYTES, TW_NETWORK_L2_BYTES, …), so the two cannot
disagree; this module gives the template what the macros do not: the dims arrays' C names and
each dtype's bits and signedness.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.layer import LayerGraph
from ..ir.tensor import dtype_bits
from .network_c import IoTensor, io_names, io_tensors


@dataclass(frozen=True)
class InfoTensor:
    """One tw_io_info_t entry: its IoTensor, the C array of its dims, its element bits and
    signedness."""

    io: IoTensor
    dims_array: str
    bits: int
    signed: bool


def info_tensors(lg: LayerGraph) -> tuple[tuple[InfoTensor, ...], tuple[InfoTensor, ...]]:
    """The inputs' and the outputs' tw_io_info_t entries, in tw_network_run's order."""
    tins, touts = io_tensors(lg)
    vins, vouts = io_names(lg)

    def entry(t: IoTensor, var: str) -> InfoTensor:
        return InfoTensor(t, f"tw_info_dims_{var}", dtype_bits(t.dtype),
                          not t.dtype.startswith("u"))

    return (tuple(entry(t, v) for t, v in zip(tins, vins)),
            tuple(entry(t, v) for t, v in zip(touts, vouts)))
