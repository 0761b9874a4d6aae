"""RAM as a user's linker sees it (validate/ram_elf.py): the map's split of .data / .bss between
the network and the test firmware, the TW_STACK line, and analyze's predicted figure. The
ELF-against-prediction check of real firmware runs is in tests/test_qemu.py (`_holds_ram_prediction`).
"""

from __future__ import annotations

from tilewise.validate.ram_elf import STACK_ALLOWANCE, Ram, stack_of, statics_by_owner

MAP = """Memory Configuration
 .bss           0x00000000        0x40 /p/build_fw/not_counted_before_the_map.o

Linker script and memory map

.bss            0x200a0000      0x328
 *(.bss .bss.* COMMON)
 .bss           0x200a0000       0x58 /p/build_fw/tw_hal_tw_hal_cortex_m.c.o
 .bss.layer_cycles
                0x200a0058       0x28 /p/build_fw/firmware_main.c.o
 .bss           0x200a0080        0x0 /p/build_fw/network.c.o
 .data          0x200a0080        0x8 /usr/lib/arm-none-eabi/newlib/libc_nano.a(lib_a-impure.o)
 .data.tw_state 0x200a0088       0x10 /p/build_fw/layers_layer_03.c.o
 .text          0x00000100      0x200 /p/build_fw/network.c.o
 .rodata        0x00000300      0x100 /p/build_fw/weights.c.o
 COMMON         0x200a0098        0x4 /p/build_fw/tw_kernels_tw_common.c.o
"""


def test_statics_split_between_network_and_firmware():
    """Only the kept input sections after the map's header count; the network's (HAL, layers,
    kernels) apart from the firmware's (main.c, newlib); flash sections are not RAM."""
    assert statics_by_owner(MAP) == {"code": 0x58 + 0x10 + 0x4, "constants": 0,
                                     "firmware": 0x28 + 0x8}


def test_stack_line():
    text = "TW_OUT 0 00ff\nTW_DMA 0 0 0 0\nTW_DONE\nTW_STACK 1060\n"
    assert stack_of(text) == 1060
    assert stack_of("TW_DONE\n") is None


def test_total_is_the_sum_of_its_parts():
    r = Ram(l1_arena=4, l2_arena=768, network_statics=88, input_bytes=640, output_bytes=640,
            stack=744)
    assert r.total == 4 + 768 + 88 + 640 + 640 + 744 and r.to_json()["total_bytes"] == r.total
    assert Ram(4, 8, 0, 1, 1, None).total == 14


def test_analyze_predicts_the_linked_ram_on_cortex_m_only():
    """analyze's memory summary: the predicted figure (arenas + I/O + the stack allowance) on
    stm32h7, labelled predicted; no such figure on a PULP target (no firmware ELF measures it)."""
    from tilewise.codegen.network_c import output_in_arena
    from tilewise.examples import EXAMPLE_ONNX
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.report.memory_summary import memory_summary, summary_lines
    from tilewise.targets.registry import get_target

    lg = lower(load_model(EXAMPLE_ONNX))
    ns = schedule_network(lg, get_target("stm32h7"), "model")
    m = memory_summary(ns)
    # the input and the output are held in the arena (memory/network.py: every layer untiled on
    # the one core): the caller passes no buffer of its own for either
    assert ns.memory.inputs_in_arena == tuple(lg.inputs)
    assert output_in_arena(lg, ns.memory) == lg.outputs[0]
    assert m["ram_linked_predicted_bytes"] == max(4, ns.l1_bytes) + ns.memory.peak + STACK_ALLOWANCE
    assert "as an application links it (predicted)" in summary_lines(m)[1]
    pulp = memory_summary(schedule_network(lg, get_target("pulp-open"), "model"))
    assert "ram_linked_predicted_bytes" not in pulp
