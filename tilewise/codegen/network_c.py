"""network.h / network.c, layers/layers.h and weights.c / weights.h of a generated project.

`tw_network_run(input, output, l1, l2[, l3])` (DESIGN.md "Generated C project") copies the input
into its planned place in the L2 arena (transposing it there when the frontend folded an input
transpose into the layout, ir/layout.py: `InputTranspose`), runs the layers in order — each gets its input and output
activations at the memory plan's offsets (memory/network.py NetworkPlan), its constants (the const
arrays of weights.c, the L2 image, or the L2 buffer its L3 copy is streamed into) and the L1
arena — and copies the output out. A network with several inputs or outputs takes them all, in
graph order: `tw_network_run(in0, in1, …, out0, out1, …, l1, l2[, l3])` (`NetInput`,
`NetOutput`); an output that is a network input itself is copied from the caller's input, two
outputs of the same tensor each get a copy. network.h describes every input and output
(`IoTensor`) and gives `TW_NETWORK_RUN_IO`, the call on arrays of pointers the harness and the
firmware mains use whatever the network's arity. Weights placed in L3 (NetworkPlan.weights_in_l3) are read from
the L3 image (weights_l3.bin) into their L2 buffer by tw_l3_read, issued at the start of the
step whose plan makes that buffer live (the previous layer when prefetched, DORY Listing 2) and
waited for right before their layer runs. With -DTW_DUMP_LAYERS every layer's output is handed
to tw_dump_layer() (defined by the harness) for validate's per-layer comparison.
A network with state tensors (ir/graph.py: an SVDF's int16 state, LiteRT's variable tensors) keeps
them at their places in the L2 arena, which the memory plan gives no other buffer
(memory/network.py), from one call of tw_network_run to the next; `tw_network_reset(l2)`
(declared with TW_NETWORK_STATE_BYTES only for such a network, `StateBuffer`) zeroes them — the
caller calls it before the first inference, as LiteRT starts from zeroed variable tensors.

The files are templates (codegen/templates: network.h.j2, network.c.j2, layers.h.j2, weights.h.j2,
weights.c.j2); this module computes their data: the arena table, one `Step` per layer (what it
reads from L3, where its tensors and constants are), the constant blobs as signed bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..bindings.base import LayerConstants
from ..ir.graph import state_tensors
from ..ir.io_quant import io_quant
from ..ir.layer import Layer, LayerGraph
from ..ir.layout import input_perm, inverse, model_input_shape
from ..ir.tensor import is_sub_byte, np_dtype
from ..memory.network import NetworkPlan, act_name
from ..templating import render
from .layer_c import LayerEmit


@dataclass(frozen=True)
class L3Stream:
    """An L3 -> L2 weight copy: issued before layer `issue_at` runs, waited before `layer`."""

    layer: int
    issue_at: int
    l3_offset: int
    l2_offset: int
    bytes: int


@dataclass(frozen=True)
class ArenaMap:
    """The L2 arena: the memory plan's buffers the generated code uses, at their planned offsets
    shifted by `base` (the lowest one). Weights resident in L2 are the const image of weights.c,
    not arena bytes: with the bidirectional stack they sit together at one end of the plan
    ([0, base) here), so arena + image = the plan's peak; weights planned between activations
    leave holes the arena keeps (`holes` bytes)."""

    plan: NetworkPlan
    base: int
    size: int
    holes: int

    def offset(self, buffer: str) -> int:
        return self.plan.plan.offsets[buffer] - self.base

    def act(self, tensor: str) -> int:
        return self.offset(act_name(tensor))


def arena_map(plan: NetworkPlan, used: set[str]) -> ArenaMap:
    bufs = [b for b in plan.plan.buffers if b.name in used]
    lo = min((plan.plan.offsets[b.name] for b in bufs), default=0)
    hi = max((plan.plan.offsets[b.name] + b.size for b in bufs), default=0)
    inside = sum(b.size for b in plan.plan.buffers if b.name not in used
                 and lo <= plan.plan.offsets[b.name] < hi)
    return ArenaMap(plan, lo, hi - lo, inside)


@dataclass(frozen=True)
class StateBuffer:
    """A state tensor's place in the L2 arena, which tw_network_reset zeroes."""

    tensor: str
    offset: int
    bytes: int


def state_buffers(lg: LayerGraph, arena: ArenaMap) -> list[StateBuffer]:
    """The network's state tensors (ir/graph.py) at their arena offsets, in graph order."""
    return [StateBuffer(t, arena.act(t), lg.tensors[t].nbytes) for t in state_tensors(lg.meta)]


#: the letters of an IR activation's dimensions by rank (ir/tensor.py `nhwc_view`)
IR_LAYOUT = {1: "C", 2: "NC", 3: "NWC", 4: "NHWC"}


@dataclass(frozen=True)
class IoTensor:
    """An input or output of tw_network_run as its caller holds it: `macro` is the stem of its
    network.h macros (INPUT, OUTPUT; INPUT0, INPUT1 … OUTPUT0 … when the network has several
    inputs or outputs, `io_tensors`), `shape` and `layout` the caller's
    (the model's own layout when an input transpose is folded, ir/layout.py), `scale` and
    `zero_point` its quantization (real = scale * (q - zero_point); scale None: not quantized)."""

    macro: str
    name: str
    shape: tuple[int, ...]
    layout: str
    dtype: str
    ctype: str
    scale: float | None
    zero_point: int
    bytes: int

    @property
    def elements(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def scale_literal(self) -> str:
        """The scale as a C float literal of 9 significant digits (float32 round-trips)."""
        text = f"{self.scale:.9g}"
        return text + ("" if any(c in text for c in ".en") else ".0") + "f"

    def to_json(self) -> dict:
        return {"name": self.name, "shape": list(self.shape), "layout": self.layout,
                "dtype": self.dtype, "c_type": self.ctype, "scale": self.scale,
                "zero_point": self.zero_point, "bytes": self.bytes}


def _io(lg: LayerGraph, name: str, macro: str, perm: tuple[int, ...] | None) -> IoTensor:
    t = lg.tensors[name]
    letters = IR_LAYOUT.get(len(t.shape), "")
    shape = tuple(int(d) for d in t.shape)
    if perm is not None:
        inv = inverse(perm)
        shape = tuple(shape[i] for i in inv)
        letters = "".join(letters[i] for i in inv) if letters else ""
    q = io_quant(lg.meta, t)   # the model's statement for an integer export's codes, if any
    scale = float(np.float32(q.scale)) if q.scale is not None else None
    ctype = "uint8_t" if is_sub_byte(t.dtype) else f"{t.dtype}_t"   # packed bytes (ir/packing.py)
    return IoTensor(macro, name, shape, letters or f"rank {len(shape)}, row-major", t.dtype,
                    ctype, scale, q.zero_point, t.nbytes)


def multi_io(lg: LayerGraph) -> bool:
    """Whether tw_network_run takes several inputs or gives several outputs: its parameters are
    then in0, in1, …, out0, out1, … and every tensor has indexed macros (TW_INPUT0_*, …)."""
    return len(lg.inputs) != 1 or len(lg.outputs) != 1


def io_tensors(lg: LayerGraph) -> tuple[tuple[IoTensor, ...], tuple[IoTensor, ...]]:
    """The inputs and the outputs of the network as tw_network_run takes and gives them, in
    graph order; their macro stems are INPUT / OUTPUT for a one-input, one-output network, else
    INPUT0, INPUT1, … and OUTPUT0, OUTPUT1, … (network.h also keeps TW_INPUT_* / TW_OUTPUT_* for
    the first of each)."""
    perm = input_perm(lg.meta)
    multi = multi_io(lg)
    ins = tuple(_io(lg, t, f"INPUT{i}" if multi else "INPUT", perm if i == 0 else None)
                for i, t in enumerate(lg.inputs))
    outs = tuple(_io(lg, t, f"OUTPUT{i}" if multi else "OUTPUT", None)
                 for i, t in enumerate(lg.outputs))
    return ins, outs


def io_names(lg: LayerGraph) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The C parameter names of tw_network_run's inputs and outputs: `input`, `output` for a
    one-input, one-output network, else in0, in1, …, out0, out1, …"""
    if not multi_io(lg):
        return ("input",), ("output",)
    return (tuple(f"in{i}" for i in range(len(lg.inputs))),
            tuple(f"out{i}" for i in range(len(lg.outputs))))


def run_signature(lg: LayerGraph, l3: bool) -> str:
    """tw_network_run's declaration (without the `int` and the `;`): each input and output typed
    as the caller holds it (IoTensor.ctype: int8_t, uint8_t — uint8 and packed sub-byte —,
    int16_t, int32_t)."""
    ins, outs = io_names(lg)
    tins, touts = io_tensors(lg)
    params = ([f"const {t.ctype} *{n}" for n, t in zip(ins, tins)]
              + [f"{t.ctype} *{n}" for n, t in zip(outs, touts)]
              + ["void *l1", "void *l2"] + (["void *l3"] if l3 else []))
    return f"tw_network_run({', '.join(params)})"


def run_io_macro(lg: LayerGraph) -> str:
    """TW_NETWORK_RUN_IO(ins, outs, ...): tw_network_run on arrays of input and output pointers
    (the harness and the firmware mains call the network through it, whatever its arity): byte
    pointers (int8_t), cast to the type of each tensor that is not int8."""
    tins, touts = io_tensors(lg)
    args = ([f"(ins)[{i}]" if t.ctype == "int8_t" else f"(const {t.ctype} *)(ins)[{i}]"
             for i, t in enumerate(tins)]
            + [f"(outs)[{i}]" if t.ctype == "int8_t" else f"({t.ctype} *)(outs)[{i}]"
               for i, t in enumerate(touts)])
    return f"tw_network_run({', '.join(args)}, __VA_ARGS__)"


def network_h(lg: LayerGraph, in_bytes: int, out_bytes: int, l1_bytes: int, arena: ArenaMap,
              image_bytes: int, l3_bytes: int, dma_bytes: int, cores: int, target: str,
              l3_act_base: int = 0, flash_bytes: int = 0, jobs: int = 0) -> str:
    """network.h: tw_network_run, the description of its inputs and outputs (IoTensor) and the
    sizes its caller needs (network.h.j2); `in_bytes` / `out_bytes`: the first input's and
    output's, `image_bytes`: constants resident in L2, `flash_bytes`: constants kept in a
    read-only memory, `jobs`: the accelerator jobs of one inference."""
    ins, outs = io_tensors(lg)
    multi = multi_io(lg)
    # network.h's macro blocks: one per tensor; with several inputs or outputs the first of each
    # also keeps the unindexed TW_INPUT_* / TW_OUTPUT_* stems
    blocks = ((replace(ins[0], macro="INPUT"), *ins, replace(outs[0], macro="OUTPUT"), *outs)
              if multi else (*ins, *outs))
    in_names, out_names = io_names(lg)
    return render("network.h.j2", lg=lg, target=target, in_bytes=in_bytes, out_bytes=out_bytes,
                  transpose=input_transpose(lg), l1_bytes=l1_bytes, arena=arena,
                  image_bytes=image_bytes, l3_bytes=l3_bytes, l3_act_base=l3_act_base,
                  dma_bytes=dma_bytes, cores=cores, flash_bytes=flash_bytes, jobs=jobs,
                  ins=list(zip(in_names, ins)), outs=list(zip(out_names, outs)), io=blocks,
                  multi=multi, signature=run_signature(lg, bool(l3_bytes)),
                  run_io=run_io_macro(lg), states=state_buffers(lg, arena),
                  out_in_arena=output_in_arena(lg, arena.plan))


def output_in_arena(lg: LayerGraph, plan: NetworkPlan) -> str | None:
    """The output network.h names TW_OUTPUT_IN_ARENA: a one-output network's, where the plan
    lets the caller read it in the arena (memory/network.py `outputs_in_arena`); None else."""
    return lg.outputs[0] if len(lg.outputs) == 1 and lg.outputs[0] in plan.outputs_in_arena \
        else None


@dataclass(frozen=True)
class Declared:
    """A layer function layers.h declares, and its layer's name."""

    function: str
    layer: str
    #: parameters after the common ones (a two-input layer's rows function: its second input)
    params: str = ""


def layers_h(emits: list[LayerEmit], names: list[str], headers: tuple[str, ...],
             prefetch_fns: list[tuple[str, str]] = (),  # type: ignore[assignment]
             rows: tuple[Declared, ...] = (), chains: tuple[Declared, ...] = ()) -> str:
    """layers/layers.h (layers.h.j2); `headers`: the umbrella headers of the kernel families the
    layers call; `prefetch_fns`: (function, layer) of the cross-layer prefetch functions; `rows`
    / `chains`: the row-band functions of fused chains' layers and the chains' functions
    (chain_c.py)."""
    return render("layers.h.j2", headers=headers,
                  functions=[Declared(e.function, n) for e, n in zip(emits, names)],
                  prefetch_fns=[Declared(f, n) for f, n in prefetch_fns], rows=rows, chains=chains)


@dataclass(frozen=True)
class Blob:
    """One const array of weights.c: its layer, where its parts start, its bytes as signed
    values, 24 a row."""

    index: int
    name: str
    size: int
    b_offset: int
    w_offset: int
    rows: list[list[int]]


def weights_files(blobs: dict[int, tuple[str, LayerConstants]]) -> tuple[str, str]:
    """weights.h / weights.c: one aligned const array per layer whose constants stay in L2."""
    data = []
    for idx, (name, k) in sorted(blobs.items()):
        signed = np.frombuffer(k.blob, dtype=np.int8).tolist()
        data.append(Blob(idx, name, len(k.blob), k.b_offset, k.w_offset,
                         [signed[i:i + 24] for i in range(0, len(signed), 24)]))
    return render("weights.h.j2", blobs=data), render("weights.c.j2", blobs=data)


@dataclass(frozen=True)
class ArenaRow:
    """A buffer of the memory plan in network.c's arena table: its offset in the arena (None:
    a weight outside it, in the const L2 image), in the plan, its bytes and live steps."""

    arena: int | None
    plan: int
    bytes: int
    first: int
    last: int
    name: str


@dataclass(frozen=True)
class Step:
    """One layer in tw_network_run: the L3 weight reads issued before it runs, the L2 offsets of
    its inputs and output (None: in L3), the L3 offset of its output when there, where its
    constants come from (`w`: "tiled" — its driver streams k tiles; "streamed" — read from L3
    into L2 at `w_l2`; "const" — the const array of weights.c; "none")."""

    index: int
    layer: Layer
    function: str
    reads: list[L3Stream]
    inputs: list[int | str | None]
    output: int | None
    output_l3: int | None
    w: str
    w_l2: int | None
    out_bytes: int
    #: the output is stored as u8 (x + 128) for the NE16 layers reading it (partition/handoff.py)
    u8: bool = False
    #: the offset of the layer's L1 layout in the L1 arena where it differs from the previous
    #: layer's (schedule/prefetch.py), else None
    l1_base: int | None = None
    #: a fused chain's producer: why no call (its chain runs at the consumer's step)
    fused: str | None = None
    #: a fused chain's consumer: what its call runs
    note: str | None = None


@dataclass(frozen=True)
class InputTranspose:
    """The copy of a caller's input held in the model's layout into the NHWC the layers read:
    one loop per IR dimension (outermost first), each its extent and the stride of that
    dimension in the caller's array, writing the L2 copy in order."""

    perm: tuple[int, ...]
    model_shape: tuple[int, ...]
    extents: tuple[int, ...]
    src_strides: tuple[int, ...]
    ctype: str


def input_transpose(lg: LayerGraph) -> InputTranspose | None:
    """The transposing copy of the network input, None when the caller's layout is the IR's."""
    perm = input_perm(lg.meta)
    if perm is None:
        return None
    t = lg.tensors[lg.inputs[0]]
    model_shape = model_input_shape(lg.meta, tuple(t.shape))
    strides = [1] * len(model_shape)
    for d in range(len(model_shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * model_shape[d + 1]
    ctype = "int16_t" if np_dtype(t.dtype).itemsize == 2 else "int8_t"
    return InputTranspose(perm, model_shape, tuple(t.shape), tuple(strides[p] for p in perm), ctype)


def _arena_rows(arena: ArenaMap) -> list[ArenaRow]:
    acts = arena.plan.plan
    rows = []
    for b in sorted(acts.buffers, key=lambda b: acts.offsets[b.name]):
        o = acts.offsets[b.name]
        inside = arena.base <= o < arena.base + arena.size or b.kind != "weight"
        rows.append(ArenaRow(o - arena.base if inside else None, o, b.size, b.first, b.last, b.name))
    return rows


@dataclass(frozen=True)
class NetInput:
    """One input of tw_network_run as network.c handles it: its C parameter, whether the layers
    read it where the caller holds it (`direct`) or from its copy at arena offset `offset`
    (None: no layer reads it — it is only a network output), transposed on that copy
    (`transpose`, the first input only) and stored as u - 128 (`u8`)."""

    var: str
    tensor: str
    bytes_macro: str
    direct: bool
    offset: int | None
    u8: bool
    transpose: InputTranspose | None = None
    #: held in the arena by the plan (memory/network.py `inputs_in_arena`): the caller may write
    #: it there (TW_INPUT_IN_ARENA), else it is copied there
    in_arena: bool = False


@dataclass(frozen=True)
class NetOutput:
    """One output of tw_network_run: its C parameter, and where network.c copies it from — the
    arena at `offset` (flipped back from u - 128 when `u8`), or the caller's input `from_input`
    when the output is a network input itself."""

    var: str
    tensor: str
    bytes_macro: str
    offset: int | None
    u8: bool
    from_input: str | None = None
    #: the caller may read it in the arena (TW_OUTPUT_IN_ARENA, `output_in_arena`): no copy when
    #: handed that pointer
    in_arena: bool = False


def _writable(where: int | str | None) -> int | str | None:
    """A layer's output pointer: a view of a network input read in place (a reshape of it,
    memory/network.py) is the caller's const buffer, cast for the layer's output argument — the
    reshape writes nothing."""
    return f"(int8_t *){where}" if isinstance(where, str) else where


def network_c(lg: LayerGraph, arena: ArenaMap, emits: list[LayerEmit],
              consts: dict[int, LayerConstants], l3_streams: list[L3Stream], l3_bytes: int,
              out_sizes: list[int], l3_acts: dict[str, int] | None = None,
              w_tiled: frozenset[int] = frozenset(), u8_stored: frozenset[int] = frozenset(),
              l1_bases: tuple[int, ...] = (), chains: dict[int, tuple[str, int]] | None = None) -> str:
    """network.c (network.c.j2). `l3_acts`: L3 offsets of the activations left in L3 (layers
    tiled at L3->L2 move them, l3_c.py); `w_tiled`: layers whose drivers stream their weight
    k tiles themselves; `u8_stored`: layers whose output is stored as u8 (x + 128) for NE16,
    flipped to int8 around its per-layer dump; `l1_bases`: each layer's L1 layout offset in the
    L1 arena (schedule/prefetch.py; a.l1 is set where it changes). `chains`: each fused chain's
    last member's index → the chain's function (chain_c.py) and its first member's index, called
    at the last member's step on the first member's input; the other members' steps call nothing
    and dump nothing (their outputs are never in memory)."""
    l3_acts = l3_acts or {}
    chains = chains or {}
    member_of = {k: (fn, last) for last, (fn, h) in chains.items() for k in range(h, last)}
    multi = multi_io(lg)
    in_vars, out_vars = io_names(lg)
    read = {x for layer in lg.layers for x in layer.inputs}

    # a network input is read where the caller holds it (no copy into the arena; layers never
    # write their inputs) unless it must be converted (uint8, a transpose) or layers are tiled at
    # L3 -> L2 (their drivers address the tensors by arena offset)
    ins: list[NetInput] = []
    for k, (t, var) in enumerate(zip(lg.inputs, in_vars)):
        transpose = input_transpose(lg) if k == 0 else None
        u8 = lg.tensors[t].dtype == "uint8"
        in_arena = t in arena.plan.inputs_in_arena
        direct = not u8 and not l3_acts and not w_tiled and transpose is None and not in_arena
        macro = f"TW_INPUT{k}_BYTES" if multi else "TW_NETWORK_INPUT_BYTES"
        ins.append(NetInput(var, t, macro, direct, arena.act(t) if t in read else None, u8,
                            transpose, in_arena))
    ctypes = {t.name: t.ctype for t in io_tensors(lg)[0]}
    # the layers take byte pointers: a typed input read in place is cast
    direct = {i.tensor: i.var if ctypes[i.tensor] == "int8_t" else f"(const int8_t *){i.var}"
              for i in ins if i.direct}

    view_of = arena.plan.aliases   # a reshape's output is its input's bytes (memory/network.py)

    def l2(t: str) -> int | str | None:
        if view_of.get(t, t) in direct:
            return direct[view_of.get(t, t)]
        return None if t in l3_acts else arena.act(t)

    streamed = {s.layer: s for s in l3_streams}
    steps = []
    for i, (layer, e) in enumerate(zip(lg.layers, emits)):
        w = ("tiled" if i in w_tiled else "streamed" if i in streamed else
             "const" if i in consts else "none")
        if i in member_of:
            fn, last = member_of[i]
            steps.append(Step(i, layer, e.function, [], [], None, None, "none", None, 0,
                              fused=f"fused: its rows are computed band by band by {fn} "
                                    f"at layer {last}, the tensor never in memory"))
            continue
        fn, reads, note = e.function, layer.inputs, None
        if i in chains:
            fn, h = chains[i]
            reads, w = lg.layers[h].inputs, "none"
            note = f"the fused chain of layers {h}-{i} ({fn}, layers/{fn[3:]}.c)"
        steps.append(Step(i, layer, fn, [s for s in l3_streams if s.issue_at == i],
                          [l2(x) for x in reads], _writable(l2(layer.output)),
                          l3_acts.get(layer.output), w,
                          streamed[i].l2_offset if w == "streamed" else None, out_sizes[i],
                          i in u8_stored,
                          l1_bases[i] if l1_bases and l1_bases[i] != (l1_bases[i - 1] if i else 0)
                          else None, note=note))
    # uint8 tensors are stored as u - 128 (bindings/portable/common.py "uint8"): convert here
    by_input = dict(zip(lg.inputs, in_vars))
    outs = []
    for k, (t, var) in enumerate(zip(lg.outputs, out_vars)):
        macro = f"TW_OUTPUT{k}_BYTES" if multi else "TW_NETWORK_OUTPUT_BYTES"
        if t in by_input or view_of.get(t) in direct:
            # a network input given back (or a view of one read in place): copied from where the
            # caller holds it
            outs.append(NetOutput(var, t, macro, None, False, by_input.get(t) or by_input[view_of[t]]))
        else:
            outs.append(NetOutput(var, t, macro, arena.act(t), lg.tensors[t].dtype == "uint8",
                                  in_arena=t == output_in_arena(lg, arena.plan)))
    from .network_info import info_tensors  # noqa: PLC0415 (it imports this module)

    info_ins, info_outs = info_tensors(lg)
    return render("network.c.j2", lg=lg, arena=arena, rows=_arena_rows(arena), steps=steps,
                  l3_bytes=l3_bytes, streamed=bool(l3_streams), ins=ins, outs=outs,
                  states=state_buffers(lg, arena),
                  signature=run_signature(lg, bool(l3_bytes)), info_ins=info_ins,
                  info_outs=info_outs)
