"""`tilewise validate --on RUNNER`: build a project's firmware with its platform's toolchain, run
it with one of the platform's runners (platforms/: GVSoC, QEMU, the instruction counter), compare.

The firmware (codegen/c/firmware/<platform>) runs the network on the embedded inputs and prints,
per inference, the output bytes, the DMA counters and, where the chip counts them, the cycles of
`tw_network_run` and of each layer (firmware_run.py parses them). Here: write the validation
inputs into the project (firmware/inputs.c), compile and link with the platform's `Toolchain`
(firmware_run.build_elf, the shipped files through the object cache), run it with the `Runner`,
and fill the report (firmware_run.fill_report: outputs against the golden model and the reference
runtime, DMA against the schedule, cycles next to the prediction, from the first inference); a
runner that counts instructions adds the executed instructions per inference and per layer, next
to the prediction (the Cortex-M cost model prices instructions: one per cycle, targets/stm32h7.py),
and their cycles as the core's timing model estimates them (platforms/mca_timing.py).
`project_platform` finds a generated project's platform from its manifest.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..codegen.project import Project
from ..errors import TilewiseError
from ..pipeline import NetworkSchedule
from ..platforms.base import HOST_ONLY, Platform, Runner
from . import ram_elf
from .code_size import of_elf
from .firmware_run import build_elf, fill_report, parse_run
from .instructions import predicted_instructions
from .report import ValidationReport


def project_platform(project: Project) -> Platform:
    """The platform a project was generated for: its manifest's target's, when that is a built-in
    target with the manifest's "sdk" (two targets may share a platform's name with different
    cores: stm32h7's Cortex-M7, stm32l4r5's Cortex-M4), else the first built-in target's platform
    of that "sdk"; HOST_ONLY when it names none."""
    from ..targets.registry import list_targets

    sdk = project.manifest.get("sdk")
    matching = [t for t in list_targets() if sdk and t.platform.sdk == sdk]
    own = [t for t in matching if t.name == str(project.manifest.get("target", "")).lower()]
    return (own or matching)[0].platform if matching else HOST_ONLY


def build_firmware(project: Project, inputs: Sequence[np.ndarray], out: Path | None = None,
                   link: str = "qemu", output: str | None = None) -> Path:
    """Embed `inputs` in the project's firmware, compile and link it with its platform's
    toolchain for `link` with `output` (Cortex-M: platforms/cortex_m.py CM_OUTPUTS; default
    semihosting under QEMU, the ITM on the chip); the ELF's path."""
    platform = project_platform(project)
    if platform.toolchain is None:
        raise TilewiseError(f"{project.path}: target {project.manifest['target']} has no firmware "
                            f"tilewise builds (generate for a target whose platform has one)")
    if platform.no_l3 and project.l3:
        raise TilewiseError(f"{project.path}: {platform.no_l3}")
    tc = platform.toolchain
    tc.check()
    fw = project.path / platform.folder
    output = output or ("semihosting" if link == "qemu" else "itm")
    srcs = project.sources(platform) + tc.sources(fw, link, output)
    return build_elf(project, inputs, srcs, tc.compile_args,
                     lambda objs, elf: tc.link_args(fw, objs, elf, link), out)


def check_on_firmware(report: ValidationReport, ns: NetworkSchedule, project: Project,
                      runner: Runner, inputs: Sequence[np.ndarray], golden: Sequence[np.ndarray],
                      reference: Sequence[np.ndarray] | None = None) -> ValidationReport:
    """Build the firmware, run it with `runner` on `inputs`; fill `report` (outputs, DMA, cycles,
    and the executed instructions from a runner that counts them)."""
    elf = build_firmware(project, inputs)
    report.code = of_elf(elf, project_platform(project).isa)
    from ..progress import step

    with step(runner.doing):
        ran = runner.run(elf, len(ns.layers.layers), project.c_name)
    report.platform = runner.on
    report.counts_instructions = runner.counts_instructions
    fill_report(report, ns, parse_run(ran.status, ran.text), inputs, golden, reference)
    if project_platform(project).name == "cortex-m":
        report.ram = ram_report(ns, elf, ran.text)
    if runner.counts_instructions:
        # the target's model in its unit (stm32h7: estimated Cortex-M7 cycles, held against the
        # timing model's estimate) and, re-priced, in instructions (held against the count)
        inst = predicted_instructions(ns)
        report.predicted_instructions = inst.total if inst is not None else None
        report.predicted_cycles = ns.cycles
        if ran.instructions:
            report.measured_instructions = ran.instructions[0]
            report.estimated_cycles = (round(ran.estimated_cycles)
                                       if ran.estimated_cycles is not None else None)
            report.estimated_cycles_model = ran.estimated_model
            report.estimated_core = ran.estimated_core
            report.layer_cycles = [
                {"index": i, "name": layer.name, "op": str(layer.op), "kind": layer.nest.kind,
                 "measured_instructions": (ran.layer_instructions[i]
                                           if i < len(ran.layer_instructions) else None),
                 "predicted_instructions": inst.layers[i] if inst is not None else None,
                 "estimated_cycles": (round(ran.layer_estimated_cycles[i])
                                      if i < len(ran.layer_estimated_cycles) else None),
                 "predicted_cycles": ns.layer_cycles(i)}
                for i, layer in enumerate(ns.layers.layers)]
    return report


def ram_report(ns: NetworkSchedule, elf: Path, text: str) -> dict:
    """RAM as a user's linker sees it (ram_elf.py): measured (the ELF's arenas and the network's
    statics, the I/O, the run's stack high-water mark) and as analyze predicts it."""
    predicted = ram_elf.predict(ns)
    measured = ram_elf.measure(elf, predicted.input_bytes, predicted.output_bytes,
                               ram_elf.stack_of(text))
    return {"measured": measured.to_json(), "predicted": predicted.to_json()}
