"""Flash taken by a generated network's code, read from its firmware ELF's linker map.

The firmware builds (firmware.py, the platform's toolchain; firmware_run.build_elf) link
with --gc-sections and write a GNU ld map beside the ELF (`network.map`). Every input section the
link kept is listed there with its size and the object it came from, so the flash image splits
exactly into:

- code: the network's own code and read-only data — network.c, layers/*.c, the kernel families
  (tw_kernels/ ...), the runtime's tw_tile.c and the HAL — sections .text*, .rodata*, .srodata*,
  .data*, .sdata* (initialised data is stored in flash too);
- constants: weights.c (the packed constants, memory_summary.py's flash constants);
- firmware: what the bare-metal firmware adds around the network (start-up, main, the embedded
  test inputs, newlib / picolibc and libgcc) — a user's own firmware replaces it.

.bss and debug sections take no flash and are not counted. This is the size of the code as the
validation builds it (-O2, the project's flags); a user's build with other flags differs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: input-section prefixes that take flash (code, read-only data, the initial image of .data)
FLASH_SECTIONS = (".text", ".rodata", ".srodata", ".data", ".sdata", ".init", ".fini",
                  ".ARM.exidx", ".ARM.extab", ".vectors", ".isr_vector")
_LINE = re.compile(r"^ (\S+)?\s+0x[0-9a-fA-F]+\s+0x([0-9a-fA-F]+)\s+(\S.*)$")
_NAME_ONLY = re.compile(r"^ (\.\S+|COMMON)\s*$")


@dataclass(frozen=True)
class CodeSize:
    """Flash bytes of one firmware image, by what they belong to (module docstring)."""

    code: int
    constants: int
    firmware: int
    isa: str

    def to_json(self) -> dict:
        return {"code_bytes": self.code, "constants_bytes": self.constants,
                "firmware_bytes": self.firmware, "isa": self.isa}


def owner(obj: str) -> str:
    """'code', 'constants' or 'firmware' for an object path of the map."""
    name = Path(obj.split("(")[0]).name
    if "(" in obj or name.endswith(".a") or not name.endswith(".o"):
        return "firmware"              # an archive member: libc, libm, libgcc
    if name == "weights.c.o":
        return "constants"
    if name.startswith("firmware_") or name.startswith("crt0"):
        return "firmware"
    return "code"


def bytes_by_owner(text: str, sections: tuple[str, ...]) -> dict[str, int]:
    """Bytes per owner ('code', 'constants', 'firmware') of a GNU ld map's kept input sections
    (those after "Linker script and memory map") whose names start with one of `sections` (a
    long name is on its own line, its address and size on the next)."""
    sizes = {"code": 0, "constants": 0, "firmware": 0}
    body = text.split("Linker script and memory map", 1)[-1]
    pending = None
    for line in body.splitlines():
        m = _LINE.match(line)
        if m:
            section = m.group(1) or pending
            pending = None
            if section and section.startswith(sections) and int(m.group(2), 16):
                sizes[owner(m.group(3).strip())] += int(m.group(2), 16)
            continue
        n = _NAME_ONLY.match(line)
        pending = n.group(1) if n else None
    return sizes


def parse_map(text: str) -> dict[str, int]:
    """Flash bytes per owner ('code', 'constants', 'firmware') of a GNU ld map."""
    return bytes_by_owner(text, FLASH_SECTIONS)


def code_size(map_path: Path, isa: str) -> CodeSize:
    """The CodeSize of the firmware whose linker map is `map_path`."""
    s = parse_map(Path(map_path).read_text(errors="replace"))
    return CodeSize(s["code"], s["constants"], s["firmware"], isa)


def of_elf(elf: Path, isa: str) -> dict:
    """CodeSize.to_json of a firmware ELF built by firmware_run.build_elf (its map beside it)."""
    return code_size(Path(elf).with_suffix(".map"), isa).to_json()


def measure(ns, model_name: str | None = None) -> dict:
    """`analyze --code-size`: generate `ns` into a temporary directory, build its firmware (one
    all-zero input embedded) and read the map: CodeSize.to_json. Targets whose platform's firmware
    tilewise builds (Platform.toolchain); others refuse in one sentence."""
    import shutil
    import tempfile

    import numpy as np

    from ..codegen.project import generate
    from ..errors import TilewiseError
    from ..ir.tensor import np_dtype

    platform = ns.target.platform
    if not platform.builds_firmware:
        from ..targets.registry import list_targets

        own = [t.name for t in list_targets() if t.platform.builds_firmware]
        raise TilewiseError(f"--code-size links the firmware tilewise builds itself (targets "
                            f"{' and '.join(own)}); {ns.target.name}'s projects are built by "
                            f"{'the ' + platform.label if platform.hal else 'its own toolchain'}, so "
                            f"drop --code-size there")
    work = Path(tempfile.mkdtemp(prefix="tilewise_codesize_"))
    try:
        project = generate(ns, work / "p", model_name=model_name)
        from ..golden.samples import sample
        from .firmware import build_firmware

        lg = ns.layers
        x = [sample([np.zeros(lg.tensors[t].shape, np_dtype(lg.tensors[t].dtype))
                     for t in lg.inputs])]
        return of_elf(build_firmware(project, x), platform.isa)
    finally:
        shutil.rmtree(work, ignore_errors=True)
