"""One C file per fused chain (schedule/chain.py): the function tw_network_run calls in place of
the chain's two layers, looping over the consumer's output row bands.

Per band, in order: the ring's rows the band reads again (the previous window's tail) are moved
to the ring's start (memmove), the producer computes the band's new rows after them
(`tw_layer_NN_rows` on its input tensor, layer_c.py `rows_name`), then the consumer computes the
band's output rows from the ring into the chain's output. The band geometry is the C's own
(tw_input_span, the formula chain.py mirrors), so the file shows the loop, not a table.
"""

from __future__ import annotations

from ..ir.layer import Layer, LayerGraph
from ..schedule.chain import Chain
from ..schedule.space import LayerSchedule
from ..templating import render
from .layer_c import LayerEmit, rows_name


def chain_name(index: int) -> str:
    """The chain's function, by its producer's index."""
    return f"tw_chain_{index:02d}"


def emit_chain(index: int, ch: Chain, prod: Layer, cons: Layer, lg: LayerGraph,
               sp: LayerSchedule, sc: LayerSchedule, ring_offset: int, in_off: int,
               out_off: int) -> LayerEmit:
    """chain_NN.c of the chain whose producer is layer `index` (its consumer: index + 1)."""
    fn = chain_name(index)
    text = render("chain.c.j2", index=index, ch=ch, prod=prod, cons=cons, p=sp.nest, c=sc.nest,
                  fn=fn, prod_rows=rows_name(index), cons_rows=rows_name(index + 1),
                  ring_offset=ring_offset, in_off=in_off, out_off=out_off,
                  x=lg.tensors[prod.inputs[0]], mid=lg.tensors[prod.output],
                  y=lg.tensors[cons.output])
    return LayerEmit(fn, f"chain_{index:02d}.c", text)
