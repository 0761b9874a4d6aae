"""`generate`: a NetworkSchedule → the self-contained C project of DESIGN.md "Generated C project".

Three steps, the first two pure:
1. `plan_project(ns)` decides everything that is not already decided upstream: each layer's C
   (its binding's kernel code inside the tiled loop nest of layer_c.py / l3_c.py), the constant
   blobs (each binding's layout), the L2 arena map, the L3 image layout ([constants streamed
   whole | weight k tiles of L3-tiled layers | the activations left in L3]) and the manifest;
2. `render(plan)` turns the plan into files (path → text, bytes, or a shipped C file to copy);
3. `write_project(files, out_dir)` writes them.
Nothing here chooses tiles, loop orders, modules or kernels: they come from each layer's
`LayerSchedule` and partition's placement; activation/weight offsets and weight placement from
the memory plan (`NetworkSchedule.memory`). Files written:

    network.h / network.c        tw_network_run (network_c.py)
    layers/layers.h, layer_NN.c  one function per layer (layer_c.py; l3_c.py for layers tiled at
                                 L3->L2: a driver and one function per L2 tile geometry)
    weights.h / weights.c        constants kept as const data (L2, or a read-only memory);
                                 weights_l3.bin for those in L3
    <family dirs>/ tw_runtime/ tw_hal/   the kernel families the bindings chose, tile helpers, HAL
    firmware/ or gap_sdk/         the firmware of the target's platform (platforms/, firmware.py):
                                  bare-metal pulp-open or Cortex-M, or the GAP SDK application
    main_host.c, Makefile, README.md  host harness (host.py)
    input.bin                     one input for `make run` (validate's generator, seed 0);
                                  input0.bin, input1.bin … for a network with several inputs
    tilewise.json                 the manifest validate reads (tensors, layers, predicted DMA)
    .tilewise_files               the files written (owned.py: writing the project again
                                  deletes only those of them it no longer has)

The HAL of the target's platform (`Target.platform`: its hal, hal_l3 and hal_headers) is added
beside the host HAL, and the HAL headers the project's families include (`Family.hal_headers`).
With a C-name prefix other than `tw` (`generate --name`), `render` renames the C identifiers of
every C file as the last step (names.py: one rename pass over templates' and shipped sources'
text, so two projects link into one program).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..bindings.base import Family, LayerConstants
from ..errors import TilewiseError
from ..ir.io_quant import io_quant
from ..ir.layout import input_perm, model_input, model_input_shape
from ..ir.packing import tensor_bytes
from ..ir.tensor import np_dtype
from ..memory.network import act_name, weight_name
from ..pipeline import NetworkSchedule
from ..platforms.base import Platform
from .chain_c import chain_name, emit_chain
from .firmware import firmware_files, folder_makefile, inputs_files
from .host import main_host, makefile, readme
from .l3_c import L3Layer, Where, driver, emit_l3_layer
from .layer_c import (
    NO_PREFETCH,
    CrossPrefetch,
    LayerEmit,
    emit_tiled,
    emit_untiled,
    function_name,
    rows_name,
)
from .linker import link_scripts
from .names import DEFAULT, check_name, defined_macros, renamer
from .network_c import (
    ArenaMap,
    Declared,
    L3Stream,
    arena_map,
    io_tensors,
    layers_h,
    multi_io,
    network_c,
    network_h,
    weights_files,
)
from .owned import recorded, remove_stale, write_record

C_LIB = Path(__file__).resolve().parent / "c"
RUNTIME_DIRS = ("tw_runtime", "tw_hal")
HAL_FILES = ("tw_hal.h", "tw_hal_chunks.h", "tw_hal_host.c", "tw_hal_host.h")

#: a file of the project: its text, its bytes, or a shipped C source to copy
Content = str | bytes | Path


@dataclass(frozen=True)
class L3Image:
    """The L3 image (weights_l3.bin) and where each part of it is."""

    blob: bytes
    streams: tuple[L3Stream, ...]
    #: L3-tiled layers whose weight k tiles stream from L3: the L3 offset of each k tile's blob
    k_blobs: dict[int, tuple[int, ...]] = field(default_factory=dict)
    act_base: int = 0
    #: L3 offsets of the activations left in L3
    acts: dict[str, int] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.blob)


@dataclass(frozen=True)
class ProjectPlan:
    """Every decision of a generated project (pure data; `render` writes it)."""

    ns: NetworkSchedule
    name: str
    families: tuple[Family, ...]
    emits: tuple[LayerEmit, ...]           # one per layer: the function network.c calls
    extra_emits: tuple[LayerEmit, ...]     # L2 tile geometries of L3-tiled layers
    consts: dict[int, LayerConstants]
    #: the const image (weights.c): layers whose constants are not streamed from L3
    image: dict[int, tuple[str, LayerConstants]]
    arena: ArenaMap
    l3: L3Image
    l1_bytes: int
    cores: int
    w_tiled: frozenset[int]
    manifest: dict[str, Any]
    #: the prefix of the project's C names (names.py; "tw" by default)
    c_name: str = DEFAULT


@dataclass(frozen=True)
class Project:
    """A generated project on disk and its manifest (tilewise.json)."""

    path: Path
    manifest: dict[str, Any]

    @property
    def l3(self) -> bool:
        return self.manifest["l3_bytes"] > 0

    @property
    def c_name(self) -> str:
        """The prefix of the project's C names (codegen/names.py; older manifests: the default)."""
        from .names import DEFAULT

        return self.manifest.get("c_name", DEFAULT)

    @property
    def kernel_dirs(self) -> tuple[str, ...]:
        return tuple(f["dir"] for f in self.manifest["families"])

    def sources(self, platform: Platform | None = None) -> list[Path]:
        """C sources of the host build, harness included, or with `platform` of its HAL's build."""
        p = self.path
        srcs = [p / "network.c", p / "weights.c", *sorted((p / "layers").glob("*.c"))]
        for d in self.kernel_dirs:
            srcs += sorted((p / d).glob("*.c"))
        srcs.append(p / "tw_runtime" / "tw_tile.c")
        if platform is None:
            return srcs + [p / "tw_hal" / "tw_hal_host.c", p / "main_host.c"]
        return srcs + [p / "tw_hal" / f for f in platform.hal + (platform.hal_l3 if self.l3 else ())]

    def includes(self) -> list[Path]:
        return [self.path / d for d in (".", "layers", *self.kernel_dirs, *RUNTIME_DIRS)]


# --- plan ---------------------------------------------------------------------------------------

def _l3_image(ns: NetworkSchedule, consts: dict[int, LayerConstants], l3_layers: dict[int, L3Layer],
              arena: ArenaMap, w_tiled: frozenset[int]) -> L3Image:
    """[constants streamed whole | weight k tiles of L3-tiled layers | the L3 activations]."""
    lg, plan = ns.layers, ns.memory
    in_l3 = set(plan.weights_in_l3)
    image = bytearray()
    streams: list[L3Stream] = []
    for i, layer in enumerate(lg.layers):
        if layer.name not in in_l3 or i in w_tiled:
            continue
        buf = next(b for b in plan.plan.buffers if b.name == weight_name(layer.name))
        assert i in consts and buf.size == consts[i].size, f"layer '{layer.name}': L3 stream size"
        image += bytes(-len(image) % 4)
        streams.append(L3Stream(i, buf.first, len(image), arena.offset(buf.name), consts[i].size))
        image += consts[i].blob
    k_blobs: dict[int, list[int]] = {}
    for i in sorted(w_tiled):
        for blob in l3_layers[i].k_blobs:
            image += bytes(-len(image) % 4)
            k_blobs.setdefault(i, []).append(len(image))
            image += blob
    image += bytes(-len(image) % 4)
    act_base = len(image)
    acts = {t: act_base + o for t, o in ns.l3_plan.offsets.items()}
    image += bytes(ns.l3_plan.bytes)
    return L3Image(bytes(image), tuple(streams), {i: tuple(v) for i, v in k_blobs.items()},
                   act_base, acts)


def _where(ns: NetworkSchedule, i: int, arena: ArenaMap, l3: L3Image, w_tiled: frozenset[int],
           has_consts: bool) -> Where:
    layer = ns.layers.layers[i]
    offsets = ns.memory.plan.offsets
    return Where(
        tuple(None if x in l3.acts else arena.act(x) for x in layer.inputs),
        tuple(l3.acts.get(x) for x in layer.inputs),
        None if layer.output in l3.acts else arena.act(layer.output), l3.acts.get(layer.output),
        arena.offset(f"tmp:{layer.name}") if f"tmp:{layer.name}" in offsets else None,
        arena.offset(weight_name(layer.name)) if i in w_tiled else None,
        "a->w" if has_consts else None, l3.k_blobs.get(i, ()))


def _chain_json(ns: NetworkSchedule, i: int) -> dict:
    """A fused chain as the manifest shows it on each of its layers."""
    ch = ns.chain_of(ns.layers.layers[i].name)
    assert ch is not None
    h = next(j for j, layer in enumerate(ns.layers.layers) if layer.name == ch.layers[0])
    return {"layers": list(range(h, h + len(ch.layers))), "band": ch.band, "ring_bytes": ch.ring_bytes,
            "cycles": ch.cycles, "unfused_cycles": ch.unfused_cycles}


def chain_heads(ns: NetworkSchedule) -> tuple[int, ...]:
    """The indices of the fused chains' first members."""
    first = {c.layers[0] for c in ns.chains}
    return tuple(i for i, layer in enumerate(ns.layers.layers) if layer.name in first)


def chain_spans(ns: NetworkSchedule) -> dict[int, int]:
    """Each fused chain's first member's index → its last member's."""
    return {h: h + len(ns.chain_of(ns.layers.layers[h].name).layers) - 1  # type: ignore[union-attr]
            for h in chain_heads(ns)}


def u8_stored(ns: NetworkSchedule) -> frozenset[int]:
    """Layers whose output partition stores as u8 (x + 128) for the NE16 layers reading it."""
    if ns.partition is None:
        return frozenset()
    return frozenset(i for i, c in enumerate(ns.partition.choices) if c.out_offset)


def weights_first(k: LayerConstants) -> LayerConstants:
    """The blob of a layer whose w and b move in one transfer (schedule/prefetch.py `packs`):
    its weight blocks first, then its per-channel blocks, as its L1 layout holds them."""
    assert k.b_offset == 0 and k.w_offset > 0, "per-channel blocks first (portable.blob)"
    return replace(k, blob=k.blob[k.w_offset:] + k.blob[:k.w_offset],
                   w_offset=0, b_offset=len(k.blob) - k.w_offset)


def prefetch_function(i: int) -> str:
    """The function that issues layer i's first-tile w and b loads (layer_c.py)."""
    return f"{function_name(i)}_prefetch"


def cross_prefetch(ns: NetworkSchedule, i: int) -> CrossPrefetch:
    """Layer i's part in the network's cross-layer prefetches (schedule/prefetch.py)."""
    pf = ns.prefetch
    mine, nxt = pf.of(i) is not None, pf.of(i + 1) is not None
    if not (mine or nxt or i in pf.packed):
        return NO_PREFETCH
    return CrossPrefetch(
        mine=mine, prefetch_fn=prefetch_function(i) if mine else "",
        const=f"tw_const_{i:02d}" if mine else "", prev_index=i - 1, packed=i in pf.packed,
        next_fn=prefetch_function(i + 1) if nxt else "",
        next_offset=pf.bases[i + 1] - pf.bases[i] if nxt else 0, next_index=i + 1)


def plan_project(ns: NetworkSchedule, model_name: str | None = None,
                 c_name: str = DEFAULT) -> ProjectPlan:
    """Every decision of the project of `ns` (module docstring); pure. `c_name` prefixes every
    C name of the project (names.py)."""
    check_name(c_name)
    lg, target, plan = ns.layers, ns.target, ns.memory
    if ns.partition is not None and ns.partition.handoffs:
        h = ns.partition.handoffs[0]
        raise TilewiseError(f"tensor '{h.tensor}' is handed off from {h.src} to {h.dst} between "
                            f"modules of {target.name}: partition prices copies between exchange "
                            f"memories, but generate plans every activation in L2 and emits no "
                            f"such copy yet (restrict the modules with --modules)")
    l1_free = target.memory("L1").free if target.has_memory("L1") else None
    in_l3 = set(plan.weights_in_l3)
    # a fused chain's intermediate tensors are never in memory: its rings are, in the scratch of
    # its step (named by its first member; schedule/chain.py)
    spans = chain_spans(ns)
    middle = {lg.layers[k].output: f"tmp:{lg.layers[h].name}" for h, e in spans.items()
              for k in range(h, e)}
    used = {act_name(t) for l in lg.layers for t in (*l.inputs, l.output) if t not in middle}
    used |= {weight_name(n) for n in in_l3}
    used |= {f"tmp:{n}" for n in ns.l3_tiles} | set(middle.values())
    arena = arena_map(plan, used)

    def at(t: str) -> int:
        return arena.offset(middle[t]) if t in middle else arena.act(t)

    consts: dict[int, LayerConstants] = {}
    emits: list[LayerEmit] = []
    l3_layers: dict[int, L3Layer] = {}
    cores, l1_bytes = 1, 4
    for i, (layer, s) in enumerate(zip(lg.layers, ns.schedules)):
        p = ns.placement(i)
        if layer.name in ns.l3_tiles:   # the driver is emitted once L3 offsets are known
            lay = l3_layers[i] = emit_l3_layer(i, layer, ns, l1_free)
            if lay.consts is not None:
                consts[i] = lay.consts
            emits.append(lay.emits[0])
            cores, l1_bytes = max(cores, lay.cores), max(l1_bytes, lay.l1_bytes)
            continue
        b = p.binding
        k = b.consts.build(layer, lg, s) if b.consts is not None and layer.weights is not None else None
        if k is not None and i in ns.prefetch.packed:
            k = weights_first(k)
        if k is not None:
            consts[i] = k
        code = b.emit(layer, lg, k)
        args = (i, layer, lg, s, p.module.cores, k, l1_free, [at(t) for t in layer.inputs],
                at(layer.output), code)
        fused = ns.chain_of(layer.name) is not None
        emits.append(emit_untiled(*args, b.whole_function, rows_fn=rows_name(i) if fused else None)
                     if s.untiled else emit_tiled(*args, pf=cross_prefetch(ns, i)))
        base = ns.prefetch.bases[i] if ns.prefetch.bases else 0
        cores, l1_bytes = max(cores, p.module.cores), max(l1_bytes, base + s.l1_bytes)

    w_tiled = frozenset(i for i in l3_layers if ns.l3.tilings[lg.layers[i].name].w_tiled)
    l3 = _l3_image(ns, consts, l3_layers, arena, w_tiled)
    streamed = {st.layer for st in l3.streams}
    for i, lay in l3_layers.items():
        emits[i] = driver(i, lg.layers[i], ns, lay,
                          _where(ns, i, arena, l3, w_tiled, i in streamed or i in consts))
    image = {i: (lg.layers[i].name, k) for i, k in consts.items() if lg.layers[i].name not in in_l3}
    families = tuple({f.name: f for i in range(len(lg.layers))
                      for f in ns.placement(i).binding.family.closure()}.values())
    extra = tuple(g for lay in l3_layers.values() for g in lay.emits)
    chains = {}
    l1_bytes = max((l1_bytes, *(c.l1_bytes for c in ns.chains)))
    for h, e in spans.items():
        members = lg.layers[h:e + 1]
        chains[h] = emit_chain(h, ns.chain_of(members[0].name), members, lg, ns.schedules[h:e + 1],
                               at(members[0].output), at(members[0].inputs[0]),
                               at(members[-1].output), [k in image for k in range(h, e + 1)])
    extra += tuple(chains.values())
    name = model_name or lg.name
    manifest = _manifest(ns, name, emits, families, arena, l3, image, l1_bytes, cores, c_name)
    return ProjectPlan(ns, name, families, tuple(emits), extra, consts, image, arena, l3,
                       l1_bytes, cores, w_tiled, manifest, c_name)


def _manifest(ns: NetworkSchedule, name: str, emits: list[LayerEmit], families: tuple[Family, ...],
              arena: ArenaMap, l3: L3Image, image: dict, l1_bytes: int, cores: int,
              c_name: str = DEFAULT) -> dict:
    lg, target = ns.layers, ns.target
    in_t, out_t = lg.tensors[lg.inputs[0]], lg.tensors[lg.outputs[0]]
    layer_dma = [ns.layer_dma(i) for i in range(len(lg.layers))]
    u8 = u8_stored(ns)
    ins, outs = io_tensors(lg)
    rename = renamer(c_name, ()) or (lambda text: text)
    # a fused chain's members but its last keep no tensor
    heads = {k for h, e in chain_spans(ns).items() for k in range(h, e)}
    return {
        "model": name, "source": lg.source, "target": target.name, "tiler": ns.tiler,
        "hypothetical": target.hypothetical,
        "c_name": c_name, "entry": rename("tw_network_run"),
        # as the layers read it (IR, NHWC): validate's view; `inputs` / `outputs` below: the caller's
        "input": {"name": in_t.name, "shape": list(in_t.shape), "bytes": in_t.nbytes, "dtype": in_t.dtype,
                  **({"model_perm": list(input_perm(lg.meta) or ()),
                      "model_shape": list(model_input_shape(lg.meta, tuple(in_t.shape)))}
                     if input_perm(lg.meta) else {})},
        "output": {"name": out_t.name, "shape": list(out_t.shape), "bytes": out_t.nbytes, "dtype": out_t.dtype},
        "inputs": [t.to_json() for t in ins], "outputs": [t.to_json() for t in outs],
        "layers": [{
            "index": i, "name": l.name, "op": l.op, "kind": l.nest.kind, "output": l.output,
            "shape": list(lg.tensors[l.output].shape),
            # a fused chain's producer: its output is never in memory, nothing is dumped
            "bytes": 0 if i in heads else lg.tensors[l.output].nbytes,
            **({"chain": _chain_json(ns, i)} if ns.chain_of(l.name) is not None else {}),
            "module": s.module, "binding": s.binding, "acc_bits": l.acc_bits,
            "function": rename(e.function), "file": f"layers/{e.filename}", "untiled": s.untiled,
            "tiles": {t.dim: t.tile for t in s.tiles}, "loop_order": list(s.loop_order),
            "dma_bytes": layer_dma[i].bytes, "dma_transfers": layer_dma[i].transfers,
            "l3_tiled": l.name in ns.l3_tiles, "output_u8": i in u8,
        } for i, (l, s, e) in enumerate(zip(lg.layers, ns.schedules, emits))],
        "families": [{"name": f.name, "dir": f.project_dir} for f in families],
        "dma_bytes_predicted": sum(d.bytes for d in layer_dma),
        "dma_transfers_predicted": sum(d.transfers for d in layer_dma),
        "dma_chunks_predicted": sum(d.chunks for d in layer_dma),
        "jobs_predicted": sum(ns.layer_jobs(i) for i in range(len(lg.layers))),
        "l3_bytes": l3.size,
        "l3_bytes_predicted": sum(s.bytes for s in l3.streams) + ns.l3_bytes,
        "l3_transfers_predicted": len(l3.streams) + sum(t.l3_transfers
                                                        for t in ns.l3.tilings.values()),
        "l3_activation_bytes": ns.l3_plan.bytes,
        "l1_bytes": l1_bytes, "l2_arena_bytes": arena.size, "l2_arena_base": arena.base,
        "l2_arena_holes": arena.holes,
        "l2_image_bytes": sum(k.size for i, (_, k) in image.items()
                              if ns.placement(i).module.weights_from is None),
        "l2_peak_bytes": ns.memory.peak, "flash_bytes": ns.flash_bytes,
        "cores": cores, "sdk": target.platform.sdk,
    }


# --- render and write ---------------------------------------------------------------------------

def render(plan: ProjectPlan) -> dict[str, Content]:
    """The files of the project: relative path → text, bytes or a shipped file to copy."""
    ns, lg = plan.ns, plan.ns.layers
    target = ns.target
    files: dict[str, Content] = {}
    for fam in plan.families:
        for src in sorted(fam.c_dir.iterdir()):
            if src.is_file():
                files[f"{fam.project_dir}/{src.name}"] = src
    for src in sorted((C_LIB / "tw_runtime").iterdir()):
        files[f"tw_runtime/{src.name}"] = src
    platform = target.platform
    hal = [*HAL_FILES, *platform.hal, *(platform.hal_l3 if plan.l3.size else ())]
    for f in (*hal, *platform.hal_headers, *(h for fam in plan.families for h in fam.hal_headers)):
        files[f"tw_hal/{f}"] = C_LIB / "tw_hal" / f
    files.update(firmware_files(platform))
    if platform.region_linker_scripts:
        files.update(link_scripts(target))
    if platform.firmware_c:
        files.update(inputs_files([default_input(lg)], [lg.tensors[t].nbytes for t in lg.inputs],
                                  platform.folder))
    files.update(folder_makefile(platform, target.name, bool(plan.l3.size),
                                 tuple(f.project_dir for f in plan.families), plan.c_name))
    headers = tuple(f.header for f in plan.families)
    spans = chain_spans(ns)
    fused = [i for h, e in spans.items() for i in range(h, e + 1)]
    files["layers/layers.h"] = layers_h(
        list(plan.emits), [l.name for l in lg.layers], headers,
        [(prefetch_function(p.layer), lg.layers[p.layer].name) for p in ns.prefetch.prefetches],
        tuple(Declared(rows_name(i), lg.layers[i].name,
                       ", const int8_t *x2, int x2_row0" if len(lg.layers[i].inputs) == 2 else "")
              for i in fused),
        tuple(Declared(chain_name(e), " -> ".join(x.name for x in lg.layers[h:e + 1]))
              for h, e in spans.items()))
    for e in (*plan.emits, *plan.extra_emits):
        files[f"layers/{e.filename}"] = e.text
    wh, wc = weights_files(plan.image)
    files["weights.h"], files["weights.c"] = wh, wc
    if plan.l3.size:
        files["weights_l3.bin"] = plan.l3.blob
    m = plan.manifest
    files["network.h"] = network_h(lg, m["input"]["bytes"], m["output"]["bytes"], plan.l1_bytes,
                                   plan.arena, m["l2_image_bytes"], plan.l3.size,
                                   m["dma_bytes_predicted"], plan.cores, target.name,
                                   l3_act_base=plan.l3.act_base if plan.l3.size else 0,
                                   flash_bytes=m["flash_bytes"], jobs=m["jobs_predicted"])
    files["network.c"] = network_c(lg, plan.arena, list(plan.emits), plan.consts,
                                   list(plan.l3.streams), plan.l3.size,
                                   [m["layers"][i]["bytes"] for i in range(len(lg.layers))],
                                   plan.l3.acts, plan.w_tiled, u8_stored(ns), ns.prefetch.bases,
                                   {e: (chain_name(e), h) for h, e in spans.items()})
    files["main_host.c"] = main_host(tuple(f.jobs for f in plan.families if f.jobs))
    in_files, out_files = run_files(lg)
    files.update(zip(in_files, reference_input(lg)))
    dirs = tuple(f.project_dir for f in plan.families)
    files["Makefile"] = makefile(target.name, platform, bool(plan.l3.size), dirs,
                                 in_files, out_files)
    files["README.md"] = readme(plan.name, target.name, ns.tiler, platform, bool(plan.l3.size),
                                len(lg.layers), dirs, in_files, out_files, multi_io(lg))
    files["tilewise.json"] = json.dumps(m, indent=2) + "\n"
    rename = renamer(plan.c_name, defined_macros(files["network.h"]))
    return files if rename is None else {p: _renamed(c, rename) if p.endswith(RENAMED) else c
                                         for p, c in files.items()}


#: the files whose text the C-name prefix rewrites (names.py)
RENAMED = (".c", ".h", ".S", ".ld", "README.md")


def _renamed(content: Content, rename) -> Content:
    if isinstance(content, bytes):
        return content
    return rename(content.read_text() if isinstance(content, Path) else content)


def run_files(lg) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The files `make run` reads and writes: input.bin and output.bin for a one-input,
    one-output network, else input0.bin, input1.bin, … and output0.bin, … (one per tensor)."""
    if not multi_io(lg):
        return ("input.bin",), ("output.bin",)
    return (tuple(f"input{k}.bin" for k in range(len(lg.inputs))),
            tuple(f"output{k}.bin" for k in range(len(lg.outputs))))


def reference_input(lg) -> tuple[bytes, ...]:
    """The input files of the project, for `make run`: the first input of validate's generator
    (golden/inputs.py `make_inputs`, seed 0: uniform over each input's integer range) as the
    caller gives it to tw_network_run (its element type, the model's layout), one per input."""
    from ..golden.inputs import make_inputs
    from ..golden.samples import arrays

    xs = arrays(lg.inputs, make_inputs(lg, 1, seed=0)[0])
    return tuple(tensor_bytes(model_input(lg.meta, x) if k == 0 else x, lg.tensors[t].dtype)
                 for k, (t, x) in enumerate(zip(lg.inputs, xs)))


def default_input(lg) -> tuple[bytes, ...]:
    """One input at each input tensor's zero point, as the network takes it (the firmware's
    embedded input until validate writes its own)."""
    out = []
    for name in lg.inputs:
        t = lg.tensors[name]
        zp = io_quant(lg.meta, t).zero_point   # the real zero an integer export states, if any
        out.append(tensor_bytes(np.full(t.shape, zp, dtype=np_dtype(t.dtype)), t.dtype))
    return tuple(out)


def write_project(files: dict[str, Content], out_dir: str | Path) -> Project:
    """Write rendered files into `out_dir` (created). Of an earlier project there, only the files
    tilewise wrote and the new one lacks are deleted; no other file is touched (owned.py)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    remove_stale(out, files)
    write_record(out, recorded(out) | set(files))   # an interrupted write still knows its files
    for rel, content in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copy2(content, path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    write_record(out, files)
    manifest = json.loads(str(files["tilewise.json"]))
    return Project(out, manifest)


def generate(ns: NetworkSchedule, out_dir: str | Path, model_name: str | None = None,
             c_name: str = DEFAULT) -> Project:
    """Write the C project of `ns` into `out_dir` (created; generated files are overwritten);
    `c_name` prefixes its C names (names.py)."""
    return write_project(render(plan_project(ns, model_name, c_name)), out_dir)


def load_project(path: str | Path) -> Project:
    """A project generated earlier (reads its tilewise.json)."""
    p = Path(path)
    try:
        manifest = json.loads((p / "tilewise.json").read_text())
    except FileNotFoundError:
        raise TilewiseError(f"{p}: not a tilewise project (no tilewise.json)") from None
    return Project(p, manifest)
