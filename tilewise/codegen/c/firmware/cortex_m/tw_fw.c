/*
 * tw_fw.c — start-up and runtime of a tilewise firmware on Cortex-M: the vector table (initial
 * stack pointer, reset and fault handlers), the reset handler (the FPU on in a build for it, the
 * board's early set-up, paints the stack, copies .data from flash, zeroes .bss and .dtcm, the
 * board's clock / cache / cycle-counter set-up, runs tw_fw_main, prints the stack's high-water
 * mark and exits with tw_fw_main's status) and the number printing.
 * The stack measure: every word of the stack below the reset handler's frame is painted with
 * STACK_PAINT before anything else runs; after tw_fw_main returns, the lowest word no longer
 * holding it is the deepest the stack went (start-up, main, every inference and the printing of
 * its results): "TW_STACK <bytes from _estack down to it>" (validate/ram_elf.py reads it). Output and exit are the chosen
 * output's (tw_fw_semihosting.c, or tw_fw_putchar.c over a putchar), the board set-up the
 * board layer's (tw_board.h). A fault prints "TW_TRAP <name> pc <hex>" and exits non-zero.
 * The symbols come from the linker scripts (link_qemu.ld, link_<target>.ld, sections.ld).
 */
#include "tw_board.h"
#include "tw_fw.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _sdtcm, _edtcm, _sstack, _estack;

/* the word painted over the unused stack at reset */
#define STACK_PAINT 0x5AC4C0DEu

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
    char buf[65];
    uint32_t i, k = 0;
    for (i = 0; i < n; i++) {
        uint8_t b = (uint8_t)p[i];
        buf[k++] = digits[b >> 4];
        buf[k++] = digits[b & 15];
        if (k == 64 || i + 1 == n) {
            buf[k] = 0;
            tw_fw_puts(buf);
            k = 0;
        }
    }
}

static void put_hex(uint32_t v)
{
    static const char digits[] = "0123456789abcdef";
    char buf[9];
    int i;
    for (i = 7; i >= 0; i--, v >>= 4)
        buf[i] = digits[v & 15];
    buf[8] = 0;
    tw_fw_puts(buf);
}

/* A fault: the stacked pc is word 6 of the exception frame on the active stack. */
static void fault(const char *name)
{
    uint32_t *frame;
    __asm__ volatile("mrs %0, msp" : "=r"(frame));
    tw_fw_puts("TW_TRAP ");
    tw_fw_puts(name);
    tw_fw_puts(" pc ");
    put_hex(frame[6]);
    tw_fw_puts("\n");
    tw_fw_exit(99);
}

static void hard_fault(void) { fault("hardfault"); }
static void mem_fault(void) { fault("memmanage"); }
static void bus_fault(void) { fault("busfault"); }
static void usage_fault(void) { fault("usagefault"); }
static void other(void) { fault("exception"); }

#if defined(__ARM_FP)
/* A build for the FPU (-mfloat-abi=hard or softfp, -mfpu=...; platforms/cortex_m.py): the FPU
 * is off at reset, so the first float instruction would fault (UsageFault NOCP). CPACR (SCB,
 * 0xE000ED88) bits 20-23: CP10 and CP11 full access; DSB then ISB so that the instructions after
 * it see the FPU on (ARMv7-M Architecture Reference Manual, CPACR). The FPSCR's reset value rounds to nearest even
 * without flush-to-zero: the IEEE float32 arithmetic the kernels' onnx requantization relies on. */
static void fpu_on(void)
{
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}
#endif

/* Paint the stack from its bottom up to the current stack pointer (this function's frame and
 * its callers' sit above it). */
static __attribute__((noinline)) void paint_stack(void)
{
    volatile uint32_t *p = &_sstack;
    uint32_t *sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    while (p < (volatile uint32_t *)sp)
        *p++ = STACK_PAINT;
}

/* Bytes of stack ever used: from _estack down to the lowest word no longer painted. */
static uint32_t stack_used(void)
{
    const volatile uint32_t *p = &_sstack;
    while (p < (const volatile uint32_t *)&_estack && *p == STACK_PAINT)
        p++;
    return (uint32_t)((uintptr_t)&_estack - (uintptr_t)p);
}

void tw_fw_reset(void)
{
    uint32_t *src = &_sidata, *dst;
    int status;
    paint_stack();
#if defined(__ARM_FP)
    fpu_on();            /* before any float instruction */
#endif
    tw_board_early_init();
    for (dst = &_sdata; dst < &_edata;)
        *dst++ = *src++;
    for (dst = &_sbss; dst < &_ebss;)
        *dst++ = 0;
    for (dst = &_sdtcm; dst < &_edtcm;)
        *dst++ = 0;
    tw_board_init();
    status = tw_fw_main();
    tw_fw_puts("TW_STACK ");
    tw_fw_put_uint(stack_used());
    tw_fw_puts("\n");
    tw_fw_exit(status);
}

typedef void (*tw_vector_t)(void);

/* initial stack pointer, reset, NMI, then the faults; the rest print and exit */
__attribute__((section(".vectors"), used))
const tw_vector_t tw_fw_vectors[16] = {
    (tw_vector_t)(uintptr_t)&_estack, tw_fw_reset, other, hard_fault, mem_fault, bus_fault,
    usage_fault, 0, 0, 0, 0, other, other, 0, other, other,
};
