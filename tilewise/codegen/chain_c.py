"""One C file per fused chain (schedule/chain.py): the function tw_network_run calls in place of
the chain's layers, looping over the last member's output row bands.

Per band: the windows of the intermediate tensors are found backwards from the band's output rows
through the members' receptive fields (tw_input_span: the rows member k computes are those of its
window not computed yet); then, member by member in order, the ring's rows the window reads again
are moved to the ring's start (memmove) and the member computes its new rows after them
(`tw_layer_NN_rows`, layer_c.py `rows_name`) from the previous ring (the first member: from the
chain's input); the last member writes the band's rows into the chain's output — a residual add
from the last ring and the chain's input at the band's rows (its skip), its tables in the L1
arena after the other members' scratch (Chain.l1_offsets: built by its first band call, kept). The band geometry
is the C's own (the formula chain.bands mirrors), so the file shows the loop, not a table.
"""

from __future__ import annotations

from ..ir.layer import Layer, LayerGraph
from ..schedule.chain import Chain, ring_offsets
from ..schedule.space import LayerSchedule
from ..templating import render
from .layer_c import LayerEmit, rows_name


def chain_name(last: int) -> str:
    """The chain's function, by its last member's index (the step network.c calls it at)."""
    return f"tw_chain_{last:02d}"


def emit_chain(head: int, ch: Chain, members: list[Layer], lg: LayerGraph,
               scheds: list[LayerSchedule], ring_offset: int, in_off: int,
               out_off: int, has_consts: list[bool]) -> LayerEmit:
    """chain_NN.c of the chain whose first member is layer `head` (NN: its last member's index)."""
    last = head + len(members) - 1
    fn = chain_name(last)
    text = render("chain.c.j2", head=head, last=last, ch=ch, members=members,
                  nests=[s.nest for s in scheds], fn=fn,
                  rows=[rows_name(head + k) for k in range(len(members))],
                  rings=[ring_offset + o for o in ring_offsets(ch.rings)],
                  in_off=in_off, out_off=out_off, x=lg.tensors[members[0].inputs[0]],
                  mids=[lg.tensors[m.output] for m in members[:-1]],
                  y=lg.tensors[members[-1].output], has_consts=has_consts)
    return LayerEmit(fn, f"chain_{last:02d}.c", text)
