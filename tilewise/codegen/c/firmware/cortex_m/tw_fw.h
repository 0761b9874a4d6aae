/*
 * tw_fw.h — the bare-metal runtime of a tilewise firmware on Cortex-M (tw_fw.c, the linker
 * scripts): what main.c uses to print and to end the run. Output and exit are one of
 *   tw_fw_semihosting.c  Arm semihosting: QEMU, or a board with a debugger attached;
 *   tw_fw_putchar.c      every character through tw_fw_putchar(): the ITM's (tw_fw_itm.c) or
 *                        the application's own (a UART), for a board without a debugger
 * (the Makefile's OUTPUT picks one: docs/firmware.md).
 */
#ifndef TW_FW_H
#define TW_FW_H

#include <stdint.h>

/* place a variable in the DTCM (tightly coupled data memory; zeroed at boot): the L1 arena */
#define TW_FW_DTCM __attribute__((section(".dtcm")))
/* place a variable in the L2 region (the AXI SRAM; not zeroed): the L2 arena */
#define TW_FW_L2 __attribute__((section(".l2_arena")))

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
