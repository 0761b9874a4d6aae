"""The reference runtimes generated code is held against (DESIGN.md "Verification").

- TFLite models: LiteRT's interpreter with the reference kernels (OpResolverType.BUILTIN_REF) —
  the arithmetic the golden model's tflite mode reproduces. A file whose quantization metadata
  LiteRT refuses although its meaning is clear runs on a repaired copy
  (frontend/tflite_repair.py); `ReferenceRun.notes` says what was repaired. A model with a 16x8
  LSTM (LstmParams.form "16x8"), which LiteRT has no integer kernel for, runs on TFLite Micro's
  interpreter instead (the tflite-micro package; its reference kernels, golden/lstm16.py), from
  its reset state for every input.
- ONNX models: onnxruntime's CPU session as the ONNX frontend configures it
  (frontend/onnx_io.py `reference_session`; `reference_model`: a copy ending at the tensors the
  network ends at when the frontend cut a float tail); float edges are (de)quantized there.
- integer exports whose integers onnxruntime does not compute (graph.meta "onnx_no_reference",
  the frontend's reason: e.g. a ReduceMean's float mean, QuantLab's DORY adder): no reference,
  and `reference_name` says why;
- QuantLab ONNX models (RequantShift, which onnxruntime cannot run): onnxruntime on a copy with
  every RequantShift expanded into standard int64 ops (frontend/onnx_quantlab.py), used only when
  that copy is proven exact (every float32 value below 2^24, every int64 one below 2^62,
  graph.meta["onnx_value_bound"]); otherwise there is no reference and `reference_name` says why.
- NEMO ONNX models: onnxruntime on the model as exported, which computes its integers in float32:
  where the frontend's bound (graph.meta["onnx_value_bound"]) reaches 2^24 — a requantization's
  κ·acc — float32 may round them, and onnxruntime's float32 Conv has no float64 form to run
  instead. Such a reference is `inexact` (ReferenceRun): its differences are reported and do not
  fail the validation; the golden model's exact integers decide (they reproduce NEMO's own golden
  data layer by layer: tests/test_integer_onnx.py).
Inputs and outputs are the IR's integer NHWC arrays, one sample an array per input (output) or a
tuple of them for a network with several (golden/samples.py), matched to the model's inputs and outputs
by name; an input whose transpose the frontend folded into the layout (ir/layout.py) is handed to
the runtime in the model's own layout.

Any failure of a runtime (it refuses the file, an op or an op version, or fails while running) is
a `ReferenceError`: one sentence naming the model and the runtime's own first line (exit 2).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TilewiseError
from ..golden.samples import arrays, sample
from ..ir.graph import Graph, state_tensors
from ..ir.layout import model_input
from ..ir.tensor import is_sub_byte

LITERT = "LiteRT BUILTIN_REF"
TFLM = "TFLite Micro's interpreter"
ORT = "onnxruntime"


ORT_EXPANDED = "onnxruntime on a copy with RequantShift as int64 Mul/Add/Div and Clip"


class ReferenceError(TilewiseError):
    """The reference runtime refused the model or failed to run it."""


@dataclass(frozen=True)
class ReferenceRun:
    """The reference's outputs (IR layout), one sample per input sample (golden/samples.py: an array,
    or a tuple of one per output) — None when the model has no reference
    (a QuantLab model whose expansion is not provably exact) — and what validate must say about
    how they were obtained (e.g. the model was repaired for the runtime)."""

    outputs: list[np.ndarray] | None
    notes: tuple[str, ...] = ()
    #: why the reference's integers may be rounded (float32 beyond 2^24); None: exact
    inexact: str | None = None


def _quantlab_exact(graph: Graph) -> bool:
    from ..frontend.onnx_quantlab import F32_EXACT

    bound = graph.meta.get("onnx_value_bound")
    return bound is not None and bound < F32_EXACT


def reference_name(graph: Graph) -> str:
    """The reference the outputs are held against, as validate prints it."""
    if graph.meta.get("format") == "tflite":
        return TFLM if _needs_tflm(graph) else LITERT
    if graph.meta.get("onnx_no_reference"):
        return (f"no reference runtime (onnxruntime does not compute this export's integers: "
                f"{graph.meta['onnx_no_reference']}; compared with the golden model only)")
    if graph.meta.get("onnx_style") != "quantlab":
        return ORT
    bound = graph.meta.get("onnx_value_bound")
    if _quantlab_exact(graph):
        return f"{ORT_EXPANDED} (exact: float32 values within ±{bound} < 2^24)"
    why = ("a value range is unknown or could pass 2^62 in int64" if bound is None
           else f"a float32 value may reach {bound} >= 2^24, beyond float32's exact integers")
    return (f"no reference runtime (onnxruntime has no RequantShift, and its expansion into standard ops "
            f"is not provably exact here: {why}; compared with the golden model only)")


def _source_location_end(text: str, start: int) -> int:
    """End of "path/file.cc:LINE qualified::Function(args...) " from `start` (balanced parentheses)."""
    i = text.find("(", start)
    if i < 0:
        return start
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j + 1
    return len(text)


def runtime_message(e: BaseException) -> str:
    """The runtime's message as one readable line: onnxruntime's "[ONNXRuntimeError] : n : KIND :"
    prefix and its C++ source location and function signature are dropped, whitespace (LiteRT
    glues its reports) collapsed, and the result kept under 300 characters."""
    text = " ".join(str(e).split()) or type(e).__name__
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", text)
    m = re.search(r"/onnxruntime_src/\S+:\d+ ", text)
    if m:
        text = (text[:m.start()] + " " + text[_source_location_end(text, m.end()):]).strip()
        text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def _guarded(runtime: str, model: str | Path, stage: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except TilewiseError:
        raise
    except Exception as e:   # noqa: BLE001 — any failure of the external runtime is its refusal
        raise ReferenceError(
            f"{model}: the reference runtime {runtime} failed while {stage} the model "
            f"({runtime_message(e)}); tilewise reads the model but cannot check it against {runtime} — "
            f"re-export the model, or use `tilewise generate` without validation"
        ) from None


#: a loaded reference runtime: the outputs of a batch of inputs (reference_runner)
Runner = Callable[[Sequence[np.ndarray]], ReferenceRun]


def _litert(graph: Graph, model: str | Path) -> Runner:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    from ..frontend.tflite_repair import repair_for_litert

    data, notes = repair_for_litert(Path(model).read_bytes())

    def load() -> Any:
        it = Interpreter(model_content=data, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        it.allocate_tensors()
        return it

    it = _guarded(LITERT, model, "loading", load)
    details = it.get_input_details()
    index = graph.meta["tflite_tensor_index"]
    if len(graph.inputs) == 1:   # its transpose may be folded into the layout: the file's input
        dets = [details[0]]
    else:
        by_index = {d["index"]: d for d in details}
        dets = [by_index[index[name]] for name in graph.inputs]
    outs = [index[name] for name in graph.outputs]

    # an LSTM's variable tensors (its h and c) start afresh for every input, as the golden model's
    # do; a graph with state tensors (SVDF's) carries them across consecutive inputs instead
    fresh = not state_tensors(graph.meta)

    def run(x: Any) -> Any:
        if fresh:
            it.reset_all_variables()
        for k, (d, v) in enumerate(zip(dets, arrays(graph.inputs, x))):
            feed = (model_input(graph.meta, v) if k == 0 else np.asarray(v)).astype(d["dtype"])
            it.set_tensor(d["index"], feed.reshape(d["shape"]))
        it.invoke()
        return sample([np.asarray(it.get_tensor(o)).copy() for o in outs])

    repaired = tuple(f"{LITERT} ran on a repaired copy: {n}" for n in notes)
    return lambda inputs: ReferenceRun([_guarded(LITERT, model, "running", lambda x=x: run(x))
                                        for x in inputs], repaired)


def _needs_tflm(graph: Graph) -> bool:
    """A 16x8 LSTM: LiteRT has no integer kernel for it, TFLite Micro has (module docstring)."""
    return any(getattr(n.params, "form", None) == "16x8" for n in graph.nodes)


def _tflm(graph: Graph, model: str | Path) -> Runner:
    def load() -> Any:
        from tflite_micro.python.tflite_micro import runtime

        return runtime.Interpreter.from_bytes(Path(model).read_bytes(), arena_size=8 << 20)

    it = _guarded(TFLM, model, "loading", load)

    def run(x: Any) -> Any:
        it.reset()   # the LSTM's h and c start afresh for every input, as the golden model's do
        for k, v in enumerate(arrays(graph.inputs, x)):
            d = it.get_input_details(k)
            feed = (model_input(graph.meta, v) if k == 0 else np.asarray(v)).astype(d["dtype"])
            it.set_input(feed.reshape(d["shape"]), k)
        it.invoke()
        return sample([np.asarray(it.get_output(k)).copy() for k in range(len(graph.outputs))])

    return lambda inputs: ReferenceRun([_guarded(TFLM, model, "running", lambda x=x: run(x)) for x in inputs])


#: what validate says about a model with 4- or 2-bit tensors (frontend/onnx_io.py)
SUB_BYTE_NOTE = ("onnxruntime has no integer kernels for 4/2-bit tensors (it runs them as float "
                 "DequantizeLinear -> op -> QuantizeLinear): the generated C is compared with the "
                 "golden model only")


def _onnxruntime(graph: Graph, model: str | Path) -> Runner:
    from ..frontend.onnx_io import reference_model, reference_session, run_reference

    if graph.meta.get("onnx_no_reference"):   # the frontend says onnxruntime's result is not ours
        return lambda inputs: ReferenceRun(None)
    # a NEMO graph's 4/2-bit weights are small integers in float32, which onnxruntime runs exactly
    if graph.meta.get("onnx_style") != "nemo" and any(is_sub_byte(t.dtype) for t in graph.tensors.values()):
        return lambda inputs: ReferenceRun(None, (SUB_BYTE_NOTE,))
    if graph.meta.get("onnx_style") == "quantlab":
        if not _quantlab_exact(graph):
            return lambda inputs: ReferenceRun(None)
        from ..frontend.onnx_model import decode_model, read_graph
        from ..frontend.onnx_quantlab import expanded_model

        def expanded() -> bytes:
            data = Path(model).read_bytes()
            return expanded_model(decode_model(data, str(model)),
                                  read_graph(data, str(model))).SerializeToString()

        sess = _guarded(ORT, model, "loading a RequantShift-expanded copy of",
                        lambda: reference_session(expanded()))
    else:
        sess = _guarded(ORT, model, "loading",
                        lambda: reference_session(reference_model(graph, model)))
    def run(x: Any) -> Any:
        out = run_reference(graph, sess, dict(zip(graph.inputs, arrays(graph.inputs, x))))
        return sample([out[name] for name in graph.outputs])

    inexact = nemo_inexact(graph)
    return lambda inputs: ReferenceRun([_guarded(ORT, model, "running", lambda x=x: run(x))
                                        for x in inputs], (inexact,) if inexact else (), inexact)


def nemo_inexact(graph: Graph) -> str | None:
    """Why onnxruntime's float32 run of a NEMO model may round its integers (module docstring);
    None when the frontend's bound proves every value exact."""
    from ..frontend.onnx_quantlab import F32_EXACT

    bound = graph.meta.get("onnx_value_bound")
    if graph.meta.get("onnx_style") != "nemo" or (bound is not None and bound < F32_EXACT):
        return None
    reach = "any size (no bound)" if bound is None else f"±{bound}"
    return (f"onnxruntime computes this NEMO export's integers in float32, exact only below 2^24, "
            f"and its values may reach {reach}: its differences from the golden model (exact "
            f"integers) are reported, not counted as mismatches")


def reference_runner(graph: Graph, model: str | Path) -> Runner:
    """The model loaded once in its reference runtime: a function running it on a batch of
    input samples (golden/samples.py: each the graph's input, IR layout, or a tuple of one array per
    input) — for validations that run many batches."""
    fmt = graph.meta.get("format")
    if fmt == "tflite":
        return _tflm(graph, model) if _needs_tflm(graph) else _litert(graph, model)
    if fmt == "onnx":
        return _onnxruntime(graph, model)
    raise TilewiseError(f"{graph.source or graph.name}: no reference runtime for format '{fmt}'")


def reference_run(graph: Graph, model: str | Path, inputs: Sequence[np.ndarray]) -> ReferenceRun:
    """Run the reference runtime on every input sample (golden/samples.py; IR layout)."""
    return reference_runner(graph, model)(inputs)


def reference_outputs(graph: Graph, model: str | Path,
                      inputs: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """The reference runtime's outputs (golden/samples.py, IR layout) for each input sample; None when
    the model has no reference (a QuantLab model whose expansion is not provably exact)."""
    return reference_run(graph, model, inputs).outputs
