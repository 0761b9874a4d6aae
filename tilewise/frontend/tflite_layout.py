"""Fold the input TRANSPOSE of an NCHW model into the network's input layout.

A PyTorch model exported to TFLite (ai-edge-torch, onnx2tf with NCHW inputs kept) takes its input
in NCHW and opens with TRANSPOSE perm (0, 2, 3, 1) to the NHWC the TFLite kernels compute in. Run
as a layer, that transpose is a whole host-core pass over the input before the first real layer.
`fold_input_transpose` removes it from the graph instead: the graph input becomes the transpose's
NHWC output and meta["input_perm"] records the permutation (ir/layout.py), so the generated
`tw_network_run` still takes the model's NCHW input and transposes it while copying it into its L2
place (codegen/network_c.py), a copy the network makes anyway when its input needs converting.

Only that pattern is folded: the graph's single input, 4-D, read by nothing but one TRANSPOSE with
perm (0, 2, 3, 1) whose output is not itself a graph output. Every other TRANSPOSE stays a layer (the
host kernel, bindings/portable/host.py).
"""

from __future__ import annotations

from ..ir.graph import Node
from ..ir.ops import Op
from ..ir.params import TransposeParams

#: NCHW -> NHWC
NCHW_TO_NHWC = (0, 2, 3, 1)


def fold_input_transpose(nodes: list[Node], inputs: tuple[str, ...], outputs: tuple[str, ...],
                         rank: int) -> tuple[list[Node], tuple[str, ...], tuple[int, ...] | None]:
    """(nodes, graph inputs, folded perm or None); `rank`: the rank of the graph's input."""
    if len(inputs) != 1 or rank != 4 or inputs[0] in outputs:
        return nodes, inputs, None
    readers = [n for n in nodes if inputs[0] in n.inputs]
    if len(readers) != 1:
        return nodes, inputs, None
    t = readers[0]
    if (t.op != Op.TRANSPOSE or not isinstance(t.params, TransposeParams)
            or tuple(t.params.perm) != NCHW_TO_NHWC or t.outputs[0] in outputs):
        return nodes, inputs, None
    return [n for n in nodes if n is not t], (t.outputs[0],), NCHW_TO_NHWC


__all__ = ["fold_input_transpose", "NCHW_TO_NHWC"]
