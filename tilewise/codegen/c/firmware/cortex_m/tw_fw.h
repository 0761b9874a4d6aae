/*
 * tw_fw.h — the bare-metal runtime of a tilewise firmware on Cortex-M (tw_fw.c, the board layer,
 * the linker scripts): what main.c (firmware/common, shared with pulp-open) uses to place its
 * arenas, count cycles, print and end the run. Output and exit are one of
 *   tw_fw_semihosting.c  Arm semihosting: QEMU, or a board with a debugger attached;
 *   tw_fw_putchar.c      every character through tw_fw_putchar(): the ITM's (tw_fw_itm.c) or
 *                        the application's own (a UART), for a board without a debugger
 * (the Makefile's OUTPUT picks one: docs/firmware.md).
 */
#ifndef TW_FW_H
#define TW_FW_H

#include <stdint.h>

#include "tw_board.h"

/* place a variable in the DTCM (tightly coupled data memory; zeroed at boot): the L1 arena */
#define TW_FW_L1 __attribute__((section(".dtcm")))
/* place a variable in the L2 region (the AXI SRAM; not zeroed): the L2 arena */
#define TW_FW_L2 __attribute__((section(".l2_arena")))
/* one core computes in place: no compute phases to time apart (no TW_COMPUTE lines) */
#define TW_FW_COMPUTE_PHASES 0

/* the board's cycle counter (tw_board.h) */
static inline uint32_t tw_fw_cycles(void)
{
    return tw_board_cycles();
}

/* 0 on a board without a cycle counter (QEMU's stub): no TW_CYCLES / TW_LAYERS lines */
static inline int tw_fw_counts_cycles(void)
{
    return tw_board_clock_hz() != 0;
}

/* The program: run after start-up; its return value is the exit status. */
int tw_fw_main(void);

void tw_fw_puts(const char *s);                  /* to the host's stdout */
void tw_fw_put_uint(uint32_t v);                 /* decimal */
void tw_fw_put_hex_bytes(const int8_t *p, uint32_t n);   /* two hex digits per byte */
void tw_fw_exit(int status);                     /* ends the run: 0 success, else failure */
/* One character out (OUTPUT=itm: tw_fw_itm.c; OUTPUT=putchar: the application's, e.g. a UART's
 * transmit register). Unused with semihosting. */
void tw_fw_putchar(char c);

#endif /* TW_FW_H */
