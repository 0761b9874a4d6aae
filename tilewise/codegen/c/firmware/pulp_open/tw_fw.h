/*
 * tw_fw.h — the bare-metal runtime of a tilewise firmware on pulp-open (crt0.S, link.ld,
 * tw_fw.c): what main.c (firmware/common, shared with Cortex-M) uses to place its arenas, count
 * cycles, print and end the simulation.
 */
#ifndef TW_FW_H
#define TW_FW_H

#include <stdint.h>

/* place a variable in L1 (TCDM; zeroed at boot): the L1 arena */
#define TW_FW_L1 __attribute__((section(".l1")))
/* the L2 arena: the linker script's default data section */
#define TW_FW_L2
/* the cluster's compute phases (barrier to barrier) are timed apart: TW_COMPUTE lines */
#define TW_FW_COMPUTE_PHASES 1

/* The program: run by cluster core 0 after start-up; its return value is the exit status. */
int tw_fw_main(void);

/* this core's cycle counter (mcycle) */
static inline uint32_t tw_fw_cycles(void)
{
    uint32_t c;
    __asm__ volatile("csrr %0, mcycle" : "=r"(c));
    return c;
}

/* every run counts cycles */
static inline int tw_fw_counts_cycles(void)
{
    return 1;
}

void tw_fw_puts(const char *s);                  /* to the simulator's stdout */
void tw_fw_put_uint(uint32_t v);                 /* decimal */
void tw_fw_put_hex_bytes(const int8_t *p, uint32_t n);   /* two hex digits per byte */
void tw_fw_exit(int status);                     /* ends the simulation */

#endif /* TW_FW_H */
