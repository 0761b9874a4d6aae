"""One C file per fused chain (schedule/chain.py): the function tw_network_run calls in place of
the chain's layers, looping over the last member's output row bands.

Per band: the windows of the intermediate tensors are found backwards from the band's output rows
through the members' receptive fields (tw_input_span: the rows member k computes are those of its
window not computed yet); then, member by member in order, the ring's rows the window reads again
are moved to the ring's start (memmove) and the member computes its new rows after them
(`tw_layer_NN_rows`, layer_c.py `rows_name`) from the previous ring (the first member: from the
chain's input); the last member writes the band's rows into the chain's output — a residual add
from the last ring and the chain's input at the band's rows (its skip) — or, in a chain with a
branch (a convolution of the chain's input: ResNet's stride-2 shortcut), from the branch's ring,
which the branch fills with the band's rows just before — its tables in the L1 arena after the
other members' scratch (Chain.l1_offsets: built by its first band call, kept). The band geometry
is the C's own (the formula chain.bands mirrors), so the file shows the loop, not a table.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.layer import Layer, LayerGraph
from ..schedule.chain import Chain, ring_offsets
from ..schedule.space import LayerSchedule
from ..templating import render
from .layer_c import LayerEmit, rows_name


def chain_name(last: int) -> str:
    """The chain's function, by its last member's index (the step network.c calls it at)."""
    return f"tw_chain_{last:02d}"


@dataclass(frozen=True)
class BranchCall:
    """A chain's branch as chain.c.j2 calls it (schedule/chain.py `Chain.branch`): its layer
    index and layer, its rows function and its constants."""

    index: int
    layer: Layer
    rows: str
    const: str


def emit_chain(head: int, ch: Chain, members: list[Layer], lg: LayerGraph,
               scheds: list[LayerSchedule], ring_offset: int, in_off: int,
               out_off: int, has_consts: list[bool]) -> LayerEmit:
    """chain_NN.c of the chain whose first member is layer `head` (NN: its last member's index);
    the template loops over the main path, the branch (if any) called before the add."""
    last = head + len(members) - 1
    fn = chain_name(last)

    def const(k: int) -> str:
        return f"tw_const_{head + k:02d}" if has_consts[k] else "NULL"

    main, b = ch.main, ch.branch
    branch = None if b is None else BranchCall(head + b, members[b], rows_name(head + b), const(b))
    text = render("chain.c.j2", head=head, last=last, ch=ch, members=[members[k] for k in main],
                  nests=[scheds[k].nest for k in main], fn=fn, index=[head + k for k in main],
                  rows=[rows_name(head + k) for k in main], consts=[const(k) for k in main],
                  rings=[ring_offset + o for o in ring_offsets(ch.rings)],
                  in_off=in_off, out_off=out_off, x=lg.tensors[members[0].inputs[0]],
                  mids=[lg.tensors[members[k].output] for k in (*main[:-1], *(() if b is None else (b,)))],
                  y=lg.tensors[members[-1].output], branch=branch)
    return LayerEmit(fn, f"chain_{last:02d}.c", text)
