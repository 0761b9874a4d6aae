/*
 * tw_fw.h — the bare-metal runtime of a tilewise firmware on Cortex-M (startup.c, the linker
 * scripts, tw_fw.c): what main.c uses to print and to end the run. Output and exit go through
 * Arm semihosting (QEMU's -semihosting; a debugger on a board), so the firmware needs no UART.
 */
#ifndef TW_FW_H
#define TW_FW_H

#include <stdint.h>

/* place a variable in the DTCM (tightly coupled data memory; zeroed at boot): the L1 arena */
#define TW_FW_DTCM __attribute__((section(".dtcm")))

/* The program: run after start-up; its return value is the exit status. */
int tw_fw_main(void);

void tw_fw_puts(const char *s);                  /* to the host's stdout */
void tw_fw_put_uint(uint32_t v);                 /* decimal */
void tw_fw_put_hex_bytes(const int8_t *p, uint32_t n);   /* two hex digits per byte */
void tw_fw_exit(int status);                     /* ends the run: 0 success, else failure */

#endif /* TW_FW_H */
