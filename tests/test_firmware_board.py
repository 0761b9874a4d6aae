"""Firmware a user can flash (issue 25, item 3), and the pulp-open project's `make gvsoc` (item 11).

What can be tested without a board: `make firmware LINK=stm32h7` after `make firmware` rebuilds
(LINK, BOARD and OUTPUT are the build's identity); the STM32H7 image's link map against the
datasheet's regions (targets/stm32h7.py) and its vector table; that the default on-chip build
prints through a putchar (the ITM), never semihosting (`bkpt` halts a core without a debugger);
the start-up under QEMU with the board layer stubbed, printing through a user-supplied putchar;
the per-layer cycle lines with a counting board layer under QEMU. The real board layer (PLL,
caches, DWT) is compiled and linked here but runs only on a chip (docs/firmware.md).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tilewise.codegen import generate
from tilewise.examples import EXAMPLE_ONNX
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate.firmware_run import parse_run

from .conftest import REPO, absent

QEMU_ARGS = ["qemu-system-arm", "-M", "mps2-an500", "-nographic", "-monitor", "none", "-serial",
             "none", "-chardev", "stdio,id=tw", "-semihosting-config",
             "enable=on,target=native,chardev=tw", "-kernel"]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    for tool in ("arm-none-eabi-gcc", "arm-none-eabi-readelf", "qemu-system-arm", "make"):
        if shutil.which(tool) is None:
            absent(f"{tool} is not installed")
    ns = schedule_network(lower(load_model(EXAMPLE_ONNX)), get_target("stm32h7"), "model")
    return generate(ns, tmp_path_factory.mktemp("fw") / "p").path


def _make(p: Path, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(["make", "-C", str(p), *args], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc


def _sections(elf: Path) -> dict[str, tuple[int, int]]:
    """section → (address, size) from readelf -S."""
    out = subprocess.run(["arm-none-eabi-readelf", "-SW", str(elf)], capture_output=True,
                         text=True, check=True).stdout
    got = {}
    for line in out.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 5 and parts[0].startswith("[") and parts[1].startswith("."):
            got[parts[1]] = (int(parts[3], 16), int(parts[5], 16))
    return got


def _symbols(elf: Path) -> dict[str, int]:
    out = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    return {parts[2]: int(parts[0], 16) for parts in map(str.split, out.splitlines())
            if len(parts) == 3}


def test_changing_link_rebuilds_and_the_chip_image_is_at_the_datasheet_addresses(project):
    """`make firmware LINK=stm32h7` after `make firmware` rebuilds (it said "Nothing to be done"),
    and the chip's image is where the datasheet's regions are (_check_stm32h7_image)."""
    elf = project / "build_fw" / "network.elf"
    _make(project, "firmware")
    assert _sections(elf)[".vectors"][0] == 0x00000000        # QEMU's map
    _make(project, "firmware", "LINK=stm32h7")
    assert _sections(elf)[".vectors"][0] == 0x08000000        # rebuilt for the chip
    _check_stm32h7_image(project, elf)
    again = _make(project, "firmware", "LINK=stm32h7")
    assert "arm-none-eabi-gcc" not in again.stdout            # nothing changed: nothing rebuilt


def _check_stm32h7_image(project: Path, elf: Path) -> None:
    """Every section in the region the target file places it in, at the datasheet's address; the
    vector table at the flash's start: initial SP = the stack's top in DTCM, reset = tw_fw_reset
    (Thumb); the board layer linked; the output the ITM's putchar, no semihosting."""
    t = get_target("stm32h7")
    sec, sym = _sections(elf), _symbols(elf)
    where = {".vectors": "flash", ".text": "flash", ".rodata": "flash", ".bss": "data",
             ".dtcm": "L1", ".stack": "L1", ".l2_arena": "L2"}
    for name, level in where.items():
        r = t.region(level)
        addr, size = sec[name]
        assert r.origin <= addr and addr + size <= r.origin + r.size, (name, hex(addr), r)
    assert sec[".vectors"][0] == 0x08000000 and sec[".l2_arena"][0] == 0x24000000
    assert sec[".dtcm"][0] == 0x20000000 and sec[".bss"][0] == 0x30000000
    words = subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", "-j", ".vectors", str(elf),
                            "/dev/stdout"], capture_output=True, check=True).stdout
    sp, reset = int.from_bytes(words[0:4], "little"), int.from_bytes(words[4:8], "little")
    assert sp == sym["_estack"] and 0x20000000 < sp <= 0x20020000
    assert reset == sym["tw_fw_reset"] | 1 and 0x08000000 <= reset < 0x08200000
    assert {"tw_board_init", "tw_board_early_init", "tw_board_cycles", "tw_fw_putchar"} <= set(sym)
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", str(elf)], capture_output=True,
                         text=True, check=True).stdout
    assert "bkpt" not in dis                                   # no semihosting on the chip
    assert (project / "build_fw" / "network.hex").stat().st_size > 0
    # the network's arenas fill their regions as the plan says
    import json

    m = json.loads((project / "tilewise.json").read_text())
    assert sec[".l2_arena"][1] >= m["l2_peak_bytes"] and sec[".dtcm"][1] >= m["l1_bytes"]


def _run_qemu_until(elf: Path, end: str, timeout: float = 60) -> str:
    """QEMU's output up to `end` (a putchar build never exits: it sleeps), read unbuffered."""
    import os
    import selectors
    import time

    proc = subprocess.Popen([*QEMU_ARGS, str(elf)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    out = b""
    try:
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and end.encode() + b" " not in out:
            if sel.select(timeout=1):
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                out += chunk
        time.sleep(0.2)   # the rest of the line
        if sel.select(timeout=0.5):
            out += os.read(proc.stdout.fileno(), 65536)
    finally:
        proc.kill()
        proc.wait()
    return out.decode()


def test_startup_under_qemu_prints_through_a_user_putchar(project):
    """LINK=qemu (the board stubbed) with OUTPUT=putchar and the user's tw_fw_putchar (here
    semihosting's SYS_WRITEC, one character at a time): the start-up runs, the outputs come
    through the putchar, and the end is "TW_EXIT 0" — no semihosting exit, the core sleeps."""
    (project / "my_putchar.c").write_text(
        '#include "tw_fw.h"\n'
        "void tw_fw_putchar(char c)\n{\n"
        '    register int r0 __asm__("r0") = 3;   /* SYS_WRITEC */\n'
        '    register const char *r1 __asm__("r1") = &c;\n'
        '    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");\n}\n')
    _make(project, "firmware", "OUTPUT=putchar", "PUTCHAR_SRC=my_putchar.c")
    text = _run_qemu_until(project / "build_fw" / "network.elf", "TW_EXIT")
    run = parse_run(0, text)
    assert len(run.outputs) == 1 and "TW_DONE" in text and "TW_EXIT 0" in text, text
    assert not run.cycles                                     # the stub counts no cycles


def test_per_layer_cycles_printed_with_a_counting_board(project):
    """A board layer that counts (here a stand-in: each read advances by 1000) makes main.c print
    TW_CYCLES and one TW_LAYERS figure per layer, which validate's parser reads."""
    (project / "firmware" / "tw_board_fake.c").write_text(
        '#include "tw_board.h"\n'
        "static uint32_t g_now;\n"
        "void tw_board_early_init(void) {}\n"
        "void tw_board_init(void) { g_now = 0; }\n"
        "uint32_t tw_board_cycles(void) { return g_now += 1000; }\n"
        "uint32_t tw_board_clock_hz(void) { return 480000000u; }\n")
    _make(project, "firmware", "BOARD=fake")
    proc = subprocess.run([*QEMU_ARGS, str(project / "build_fw" / "network.elf")],
                          capture_output=True, text=True, timeout=120)
    run = parse_run(proc.returncode, proc.stdout)
    layers = len(__import__("json").loads((project / "tilewise.json").read_text())["layers"])
    assert run.status == 0 and len(run.outputs) == 1, proc.stdout
    assert run.cycles and run.cycles[0] > 0, proc.stdout
    assert len(run.layer_cycles[0]) == layers and all(c == 1000 for c in run.layer_cycles[0])


def test_board_layer_and_output_choices_are_documented():
    readme = (REPO / "README.md").read_text()
    assert "docs/firmware.md" in readme and "make firmware LINK=stm32h7" in readme
    doc = (REPO / "docs" / "firmware.md").read_text()
    for word in ("OUTPUT=putchar", "OUTPUT=semihosting", "ITM", "480 MHz", "DWT", "not run",
                 "AXI SRAM"):
        assert word in doc, word


def test_pulp_open_make_gvsoc_finds_gvsoc_by_an_absolute_path(tmp_path):
    """The Makefile names GVSoC's runner by the absolute path tilewise found it at, so `make
    gvsoc` works from a project anywhere (it was ../shared/tools/gvsoc/gvsoc-run)."""
    from tilewise.platforms.gvsoc import runner

    try:
        gvsoc = runner().resolve()
    except Exception as e:   # noqa: BLE001 - the one-sentence TilewiseError
        absent(str(e))
    ns = schedule_network(lower(load_model(EXAMPLE_ONNX)), get_target("pulp-open"), "model")
    p = generate(ns, tmp_path / "deep" / "er" / "p").path
    text = (p / "Makefile").read_text()
    assert f"GVSOC_RUN ?= $(or $(TILEWISE_GVSOC),{gvsoc})" in text
    assert "../shared/tools/gvsoc" not in text.split("GVSOC_RUN ?=")[1].splitlines()[0]
    dry = subprocess.run(["make", "-n", "-C", str(p), "gvsoc"], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"})
    assert f"{gvsoc} build_fw/network.elf" in dry.stdout, dry.stdout + dry.stderr
