"""Files like TFLite Micro's person_detect.tflite: per-channel int32 biases (one scale per output
channel) whose quantized_dimension is 3 on a 1-D tensor. LiteRT refuses them ("quantized_dimension
must be in range [0, 1). Was 3"); the frontend reads axis 0, the tensor's only axis, and validate
runs LiteRT on a repaired copy (frontend/tflite_repair.py), saying so in one `reference:` line.
Per-channel dimensions with no clear meaning stay refused in one sentence naming the tensor."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tilewise.errors import ModelFormatError
from tilewise.frontend import load_model
from tilewise.frontend.tflite_repair import repair_for_litert
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets import get_target
from tilewise.validate.check import validate_model
from tilewise.validate.reference import LITERT

from .conftest import absent
from .test_cli_errors import assert_one_sentence_error
from .tflite_builder import ACT, SAME, ModelBuilder, litert_interpreter


def person_detect_like(bias_qdim: int = 3, bias_scales: int | None = None) -> ModelBuilder:
    """int8 CONV_2D 3x3/2 (RELU) → DEPTHWISE_CONV_2D 3x3 (RELU6) → RESHAPE → FULLY_CONNECTED, weights
    per channel, int32 biases per channel (scale s_x·s_w[k]) written with quantized_dimension
    `bias_qdim` (3, as person_detect; out of range on the 1-D biases); `bias_scales`: how many
    scales the FC bias carries (default one per output channel)."""
    r = np.random.RandomState(11)
    b = ModelBuilder()

    def bias(name: str, sx: float, sw: np.ndarray, n: int | None = None) -> int:
        scales = (np.float32(sx) * sw.astype(np.float32))[: n or len(sw)]
        return b.const(name, r.randint(-3000, 3000, len(sw)), "int32", scale=scales,
                       quantized_dimension=bias_qdim)

    x = b.input("input", (1, 12, 12, 3), "int8", scale=0.02, zero_point=-12)
    sw1 = r.uniform(0.003, 0.02, 8)
    w1 = b.const("conv/w", r.randint(-127, 128, (8, 3, 3, 3)), "int8", scale=sw1)
    y1 = b.tensor("conv/out", (1, 6, 6, 8), "int8", scale=0.04, zero_point=-128)
    b.op("CONV_2D", [x, w1, bias("conv/b", 0.02, sw1)], [y1], "Conv2DOptions", Padding=SAME, StrideW=2,
         StrideH=2, FusedActivationFunction=ACT["RELU"], DilationWFactor=1, DilationHFactor=1)
    sw2 = r.uniform(0.005, 0.03, 8)
    w2 = b.const("dw/w", r.randint(-127, 128, (1, 3, 3, 8)), "int8", scale=sw2, quantized_dimension=3)
    y2 = b.tensor("dw/out", (1, 6, 6, 8), "int8", scale=0.03, zero_point=-128)
    b.op("DEPTHWISE_CONV_2D", [y1, w2, bias("dw/b", 0.04, sw2)], [y2], "DepthwiseConv2DOptions", Padding=SAME,
         StrideW=1, StrideH=1, DepthMultiplier=1, FusedActivationFunction=ACT["RELU6"], DilationWFactor=1,
         DilationHFactor=1)
    y3 = b.tensor("flatten", (1, 288), "int8", scale=0.03, zero_point=-128)
    b.op("RESHAPE", [y2, b.const("flatten/shape", np.array([-1, 288], np.int32), "int32")], [y3],
         "ReshapeOptions", NewShape=[-1, 288])
    sw4 = r.uniform(0.002, 0.01, 4)
    w4 = b.const("fc/w", r.randint(-127, 128, (4, 288)), "int8", scale=sw4)
    y4 = b.tensor("logits", (1, 4), "int8", scale=0.12, zero_point=3)
    b.op("FULLY_CONNECTED", [y3, w4, bias("fc/b", 0.03, sw4, bias_scales)], [y4], "FullyConnectedOptions",
         FusedActivationFunction=0)
    b.output(y4)
    return b


#: (target, platform) of the instruction-set runs: Cortex-M7 under QEMU, the PULP cluster on GVSoC
ISAS = [("stm32h7", "qemu"), ("pulp-open", "gvsoc")]


def require_isa(on: str) -> None:
    """The simulator and cross compiler `validate --on qemu|gvsoc|count` needs (the counter: the
    Arm cross compiler; it emulates with unicorn); missing, a failure under
    TILEWISE_REQUIRE_MODELS=1 (conftest `absent`), else a skip."""
    try:
        if on == "count":
            from tilewise.platforms.cortex_m import arm_gcc

            arm_gcc()
        elif on == "qemu":
            from tilewise.platforms.cortex_m import arm_gcc
            from tilewise.platforms.qemu import qemu

            qemu()
            arm_gcc()
        else:
            from tilewise.platforms.gvsoc import runner
            from tilewise.platforms.pulp_open import toolchain

            runner()
            toolchain()
    except Exception as e:   # noqa: BLE001 - the one-sentence TilewiseError
        absent(str(e))


def validate_on_isa(path: Path, target: str, on: str, out: Path) -> dict:
    """validate --target T --on qemu|gvsoc through the API (2 random inputs + the extremes); a
    missing simulator or cross compiler fails under TILEWISE_REQUIRE_MODELS=1 (require_isa)."""
    require_isa(on)
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target(target), "model")
    r = validate_model(path, ns, graph, 2, 0, out, on=on).to_json()
    assert r["bit_exact"] and r["platform"] == on and r["golden_vs_reference"] == 0, r
    return r


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tilewise.cli", *args], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return person_detect_like().save(tmp_path_factory.mktemp("pd") / "person_detect_like.tflite")


def test_litert_refuses_the_file_and_the_repair_makes_it_load(model):
    with pytest.raises(ValueError, match=r"quantized_dimension must be in range \[0, 1\). Was 3"):
        litert_interpreter(model)
    data, notes = repair_for_litert(model.read_bytes())
    assert len(data) == model.stat().st_size and data != model.read_bytes()
    assert notes == ("quantized_dimension reset to 0 on 3 per-channel quantized 1-D tensors LiteRT refuses: "
                     "'conv/b' (dimension 3 of a 1-D tensor, 8 scales), 'dw/b' (dimension 3 of a 1-D tensor, "
                     "8 scales), 'fc/b' (dimension 3 of a 1-D tensor, 4 scales)",)
    fixed = model.with_name("fixed.tflite")
    fixed.write_bytes(data)
    it = litert_interpreter(fixed)
    biases = {d["name"]: d["quantization_parameters"] for d in it.get_tensor_details() if d["name"].endswith("/b")}
    assert {n: (q["quantized_dimension"], len(q["scales"])) for n, q in biases.items()} == \
        {"conv/b": (0, 8), "dw/b": (0, 8), "fc/b": (0, 4)}
    assert repair_for_litert(data) == (data, ())


def test_frontend_reads_the_biases_along_axis_0(model):
    g = load_model(model)
    for name, k in (("conv/b", 8), ("dw/b", 8), ("fc/b", 4)):
        q = g.tensors[name].quant
        assert q.axis == 0 and len(q.scale) == k, (name, q)


def test_a_dimension_at_its_default_is_not_stored_and_needs_no_repair(tmp_path):
    """quantized_dimension 0 is the schema default: the writer leaves the field out (it reads as
    0, never out of range); LiteRT loads the file and the repair leaves it alone."""
    from tflite.Model import Model

    path = person_detect_like(bias_qdim=0).save(tmp_path / "default.tflite")
    data = path.read_bytes()
    sg = Model.GetRootAs(data, 0).Subgraphs(0)
    biases = [sg.Tensors(i) for i in range(sg.TensorsLength()) if sg.Tensors(i).Name().endswith(b"/b")]
    assert len(biases) == 3 and all(t.Quantization()._tab.Offset(16) == 0 for t in biases)
    litert_interpreter(path)
    assert repair_for_litert(data) == (data, ())


@pytest.mark.parametrize("target", ["gap8", "stm32h7"])
def test_validates_bit_exact_against_litert_on_the_repaired_copy(model, target, tmp_path):
    graph = load_model(model)
    ns = schedule_network(lower(graph), get_target(target), "model")
    r = validate_model(model, ns, graph, 4, 0, tmp_path / "p").to_json()
    assert r["bit_exact"] and r["golden_vs_reference"] == 0, r
    assert len(r["reference_notes"]) == 1 and r["reference_notes"][0].startswith(
        f"{LITERT} ran on a repaired copy: quantized_dimension reset to 0 on 3 per-channel"), r["reference_notes"]


@pytest.mark.parametrize("target,on", ISAS)
def test_bit_exact_on_the_instruction_sets(model, target, on, tmp_path):
    r = validate_on_isa(model, target, on, tmp_path / "p")
    assert len(r["reference_notes"]) == 1 and "repaired copy" in r["reference_notes"][0]


def test_cli_validate_prints_one_reference_line(model):
    proc = run_cli("validate", str(model), "--target", "gap8", "--inputs", "2")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    lines = [ln for ln in proc.stdout.splitlines() if "repaired copy" in ln]
    assert len(lines) == 1 and lines[0].strip().startswith("reference:") and "'fc/b'" in lines[0], proc.stdout
    assert "BIT-EXACT" in proc.stdout


def test_a_per_channel_dimension_without_clear_meaning_is_one_sentence(tmp_path):
    """A 1-D bias with fewer scales than elements, or 4-D weights, along a dimension they do not
    have: refused by the frontend, naming the tensor (exit 2), and not repaired."""
    bad_bias = person_detect_like(bias_scales=3).save(tmp_path / "bias.tflite")
    assert repair_for_litert(bad_bias.read_bytes())[1][0].count("'") == 4   # conv/b and dw/b only
    proc = run_cli("generate", str(bad_bias), "--target", "gap8", "-o", str(tmp_path / "out"))
    assert_one_sentence_error(proc, str(bad_bias), "tensor 11 'fc/b' has 3 scales along quantized_dimension 3",
                              "1-D shape [4]")
    b = person_detect_like()
    b.tensors[1].quantized_dimension = 5   # conv/w, 8 scales, 4-D
    bad_w = b.save(tmp_path / "weights.tflite")
    with pytest.raises(ModelFormatError, match=r"tensor 1 'conv/w' has 8 scales along quantized_dimension 5, "
                                               r"which its 4-D shape \[8, 3, 3, 3\] does not have"):
        load_model(bad_w)
