/*
 * tw_fw.c — the runtime of a tilewise firmware on pulp-open, after crt0.S: each cluster core
 * arrives in tw_fw_cluster_main(core); core 0 runs tw_fw_main() (main.c) and exits with its
 * status, cores 1-7 serve forks (tw_hal_worker, tw_hal_pulp_open.c). Output goes to the stdout
 * peripheral (0x1A10F000 + core<<3 + cluster<<7), the simulation ends by writing the exit
 * register (0x1A1040A0, 0x80000000 | status). A trap (illegal instruction, a bad access) prints
 * its cause (mcause: 11 = illegal instruction in this ISS's numbering), pc and core,
 * and exits with status 99 (../shared/tools/gvsoc README: without a handler a trap restarts
 * _start and the program never ends).
 */
#include "tw_fw.h"

#define STDOUT ((volatile uint32_t *)0x1A10F000u)
#define EXIT_REG ((volatile uint32_t *)0x1A1040A0u)

void tw_hal_worker(int core);

void tw_fw_puts(const char *s)
{
    while (*s)
        *STDOUT = (uint32_t)(uint8_t)*s++;
}

void tw_fw_put_uint(uint32_t v)
{
    char buf[12];
    int i = 11;
    buf[i] = 0;
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    tw_fw_puts(buf + i);
}

void tw_fw_put_hex_bytes(const int8_t *p, uint32_t n)
{
    static const char digits[] = "0123456789abcdef";
    uint32_t i;
    for (i = 0; i < n; i++) {
        uint8_t b = (uint8_t)p[i];
        *STDOUT = (uint32_t)digits[b >> 4];
        *STDOUT = (uint32_t)digits[b & 15];
    }
}

void tw_fw_exit(int status)
{
    *EXIT_REG = 0x80000000u | (uint32_t)(status & 0xff);
    for (;;)
        __asm__ volatile("wfi");
}

void tw_fw_cluster_main(int core)
{
    if (core != 0)
        tw_hal_worker(core);
    tw_fw_exit(tw_fw_main());
}

void tw_fw_trap(void) __attribute__((interrupt("machine"), aligned(4)));
void tw_fw_trap(void)
{
    uint32_t cause, epc, hart;
    __asm__ volatile("csrr %0, mcause" : "=r"(cause));
    __asm__ volatile("csrr %0, mepc" : "=r"(epc));
    __asm__ volatile("csrr %0, mhartid" : "=r"(hart));
    tw_fw_puts("TW_TRAP mcause ");
    tw_fw_put_uint(cause);
    tw_fw_puts(" mepc ");
    tw_fw_put_uint(epc);
    tw_fw_puts(" hart ");
    tw_fw_put_uint(hart);
    tw_fw_puts("\n");
    tw_fw_exit(99);
}
