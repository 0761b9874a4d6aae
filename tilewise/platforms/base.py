"""What a platform is: everything a generated project needs from the software around its chip,
as one value a target names (`Target.platform`).

A `Platform` says which HAL sources and headers of codegen/c/tw_hal the project takes (always,
and with an L3), which firmware folder of codegen/c/firmware it ships and into which project
folder, whether its linker scripts come from the target's memory regions, the blocks its
Makefile and README add (template folder: the platform's *.j2 beside its value, included by
codegen/templates/Makefile.j2 and README.md.j2), the cross toolchain and flags that build its
firmware (a `Toolchain`; None when the SDK's own rules build it), the stack bytes of each core,
the ISA its code size is reported for, and the runners that execute its firmware (`Runner`:
GVSoC, QEMU, the instruction counter). Stages read these fields; none compares a platform's or a
target's name. `HOST_ONLY` is the platform of a target whose projects are the portable C and the
host harness only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class Execution:
    """What one run of a firmware gave: its exit status and printed text (firmware main's TW_*
    lines, validate/firmware_run.py parses them) and, from a runner that counts them, executed
    instructions per inference and per layer of the first inference, and their cycles as the
    core's timing model estimates them (platforms/mca_timing.py; estimated, not measured), with
    the model's label and the core's name."""

    status: int
    text: str
    instructions: tuple[int, ...] = ()
    layer_instructions: tuple[int, ...] = ()
    estimated_cycles: float | None = None
    layer_estimated_cycles: tuple[float, ...] = ()
    estimated_model: str | None = None
    estimated_core: str | None = None


class Runner(Protocol):
    """Executes a platform's firmware ELF: GVSoC, QEMU, the instruction counter."""

    #: the `validate --on` value that picks it
    on: str
    #: what the progress line says while it runs
    doing: str
    #: it counts executed instructions (Execution.instructions)
    counts_instructions: bool

    def run(self, elf: Path, layers: int, c_name: str) -> Execution: ...


class Toolchain(Protocol):
    """The cross compiler of a platform's firmware and the commands that build it."""

    def check(self) -> None:
        """Raise a one-sentence TilewiseError saying how to install what is missing."""

    def sources(self, fw_dir: Path, link: str, output: str) -> list[Path]:
        """The firmware folder's sources a build for `link` with `output` compiles."""

    def compile_args(self, includes: Sequence[Path], src: Path, obj: Path) -> list[str]: ...

    def link_args(self, fw_dir: Path, objects: Sequence[Path], elf: Path,
                  link: str) -> list[str]: ...


@dataclass(frozen=True)
class Platform:
    """The software platform of a target (module docstring)."""

    #: what the manifest records ("sdk") and messages say
    name: str
    description: str
    #: how messages name its firmware ("pulp-open firmware", "Cortex-M firmware")
    label: str = ""
    #: tw_hal sources the project ships beside the host HAL: always, and with an L3
    hal: tuple[str, ...] = ()
    hal_l3: tuple[str, ...] = ()
    #: tw_hal headers of the platform's HAL the firmware includes
    hal_headers: tuple[str, ...] = ()
    #: the folders of codegen/c/firmware shipped into the project's `folder` (none: no firmware)
    firmware_c: tuple[str, ...] = ()
    folder: str = "firmware"
    #: its firmware links with scripts made from the target's memory regions (codegen/linker.py)
    region_linker_scripts: bool = False
    #: its Makefile / README blocks (make_usage.j2, make_rules.j2, readme_*.j2), None: none
    templates: Path | None = None
    #: targets the platform's Makefile block adds to .PHONY
    make_phony: str = ""
    #: the template values of its Makefile block (called when the Makefile is written)
    make_data: Callable[[], dict[str, Any]] = field(default=dict, compare=False)
    #: builds its firmware (None: the SDK's own rules do, outside tilewise)
    toolchain: Toolchain | None = None
    #: what firmware needs that the network cannot have (None: nothing), e.g. no off-chip memory
    no_l3: str | None = None
    #: bytes of each core's stack (the firmware's and the target's L1 reserve agree on it)
    stack_bytes: int = 0
    #: the ISA the firmware's code size is reported for (validate/code_size.py)
    isa: str = ""
    #: what executes its firmware; the first one `explore --measure` runs
    runners: tuple[Runner, ...] = ()
    #: the compile-only check of its HAL against the SDK's headers (validate/build.compile_sdk):
    #: the make variable naming the include folder (None: no such build)
    sdk_include: str | None = None

    @property
    def sdk(self) -> str | None:
        """What a project's manifest records ("sdk"): the name, None for a platform that adds
        nothing beside the host HAL."""
        return self.name if self.hal else None

    @property
    def builds_firmware(self) -> bool:
        """tilewise builds (and can run or measure) this platform's firmware itself."""
        return self.toolchain is not None

    def runner(self, on: str) -> Runner | None:
        """The runner `validate --on on` picks, or None when the platform has none by that name."""
        return next((r for r in self.runners if r.on == on), None)


#: the platform of targets whose projects are the portable C and the host harness only
HOST_ONLY = Platform("host", "the portable C and the host harness only (no firmware)")
