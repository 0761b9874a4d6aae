/*
 * tw_board_stm32l4r5.c — the board layer on an STM32L4R5 (tw_board.h), on its registers, no HAL.
 * Register addresses and fields: ST RM0432 (STM32L4+ reference manual) — RCC §6, PWR §5,
 * FLASH §3 — and the Armv7-M Architecture Reference Manual (DWT, DEMCR).
 *
 * tw_board_early_init: nothing — SRAM1-3, where the linker puts .data, .bss, the arenas and the
 *   stack, and the flash are clocked from reset.
 * tw_board_init:
 *   1. the PWR interface clock on (RCC_APB1ENR1 PWREN), voltage range 1 (PWR_CR1 VOS, its reset
 *      value) in boost mode (PWR_CR5 R1MODE = 0): 120 MHz needs it (RM0432 §5.1.8);
 *   2. flash: 5 wait states (range 1 boost, 100 < HCLK <= 120 MHz: RM0432 §3.3.3) and the ART
 *      accelerator's prefetch, instruction and data caches on (FLASH_ACR PRFTEN, ICEN, DCEN);
 *   3. PLL from the HSI16 (on at reset: no board-specific crystal): /M 2 = 8 MHz (the PLL's
 *      input range), *N 30 = VCO 240 MHz, /R 2 = 120 MHz on the PLLCLK output (PLLREN);
 *   4. system clock switched to the PLL with the AHB prescaler at /2 first and back at /1 after
 *      1 us, the sequence RM0432 §5.1.8 asks for when entering boost mode above 80 MHz; APB1 and
 *      APB2 /1 (120 MHz);
 *   5. the DWT cycle counter reset and started (DEMCR TRCENA).
 * Not run here: no board. QEMU runs tw_board_stub.c instead.
 */
#include "tw_board.h"

#define REG(addr) (*(volatile uint32_t *)(addr))

/* RCC (RM0432 §6.4) */
#define RCC_BASE 0x40021000u
#define RCC_CR REG(RCC_BASE + 0x00u)
#define RCC_CFGR REG(RCC_BASE + 0x08u)
#define RCC_PLLCFGR REG(RCC_BASE + 0x0Cu)
#define RCC_APB1ENR1 REG(RCC_BASE + 0x58u)
#define RCC_CR_HSION (1u << 8)
#define RCC_CR_HSIRDY (1u << 10)
#define RCC_CR_PLLON (1u << 24)
#define RCC_CR_PLLRDY (1u << 25)
#define RCC_CFGR_SW_PLL 3u
#define RCC_CFGR_SWS(v) (((v) >> 2) & 3u)
#define RCC_CFGR_HPRE_MASK (0xFu << 4)
#define RCC_CFGR_HPRE_DIV2 (0x8u << 4)
#define RCC_CFGR_PPRE_MASK ((7u << 8) | (7u << 11))
#define RCC_APB1ENR1_PWREN (1u << 28)
/* PLL: HSI16 / 2 * 30 / 2 = 120 MHz */
#define PLL_SRC_HSI16 2u
#define PLL_M 2u
#define PLL_N 30u
#define PLL_REN (1u << 24)    /* PLLR[26:25] = 00: /2 */
#define CLOCK_HZ 120000000u
/* PWR (RM0432 §5.4) */
#define PWR_BASE 0x40007000u
#define PWR_CR1 REG(PWR_BASE + 0x00u)
#define PWR_SR2 REG(PWR_BASE + 0x14u)
#define PWR_CR5 REG(PWR_BASE + 0x80u)
#define PWR_CR1_VOS_MASK (3u << 9)
#define PWR_CR1_VOS_RANGE1 (1u << 9)
#define PWR_SR2_VOSF (1u << 10)
#define PWR_CR5_R1MODE (1u << 8)
/* FLASH (RM0432 §3.7.1) */
#define FLASH_ACR REG(0x40022000u)
#define FLASH_ACR_LATENCY_MASK 0xFu
#define FLASH_ACR_LATENCY 5u
#define FLASH_ACR_ART ((1u << 8) | (1u << 9) | (1u << 10))   /* PRFTEN, ICEN, DCEN */
/* Armv7-M debug: DEMCR, DWT */
#define DEMCR REG(0xE000EDFCu)
#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL REG(0xE0001000u)
#define DWT_CYCCNT REG(0xE0001004u)

void tw_board_early_init(void)
{
}

static void clock_120mhz(void)
{
    volatile uint32_t wait;
    /* 1. range 1, boost */
    RCC_APB1ENR1 |= RCC_APB1ENR1_PWREN;
    (void)RCC_APB1ENR1;   /* read back: the clock is on before the first access */
    PWR_CR1 = (PWR_CR1 & ~PWR_CR1_VOS_MASK) | PWR_CR1_VOS_RANGE1;
    while (PWR_SR2 & PWR_SR2_VOSF)
        ;
    PWR_CR5 &= ~PWR_CR5_R1MODE;
    /* 2. flash wait states before the clock rises, the ART accelerator on */
    FLASH_ACR = (FLASH_ACR & ~FLASH_ACR_LATENCY_MASK) | FLASH_ACR_LATENCY | FLASH_ACR_ART;
    while ((FLASH_ACR & FLASH_ACR_LATENCY_MASK) != FLASH_ACR_LATENCY)
        ;
    /* 3. PLL from the HSI16 */
    RCC_CR |= RCC_CR_HSION;
    while (!(RCC_CR & RCC_CR_HSIRDY))
        ;
    RCC_CR &= ~RCC_CR_PLLON;
    while (RCC_CR & RCC_CR_PLLRDY)
        ;
    RCC_PLLCFGR = PLL_SRC_HSI16 | ((PLL_M - 1u) << 4) | (PLL_N << 8) | PLL_REN;
    RCC_CR |= RCC_CR_PLLON;
    while (!(RCC_CR & RCC_CR_PLLRDY))
        ;
    /* 4. AHB /2, system clock = PLL, 1 us (>= 60 cycles at 60 MHz), AHB /1; APB1, APB2 /1 */
    RCC_CFGR = (RCC_CFGR & ~(RCC_CFGR_HPRE_MASK | RCC_CFGR_PPRE_MASK)) | RCC_CFGR_HPRE_DIV2;
    RCC_CFGR = (RCC_CFGR & ~3u) | RCC_CFGR_SW_PLL;
    while (RCC_CFGR_SWS(RCC_CFGR) != RCC_CFGR_SW_PLL)
        ;
    for (wait = 0; wait < 120u; wait++)
        ;
    RCC_CFGR &= ~RCC_CFGR_HPRE_MASK;
}

static void cycle_counter_on(void)
{
    DEMCR |= DEMCR_TRCENA;
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u;   /* CYCCNTENA */
}

void tw_board_init(void)
{
    clock_120mhz();
    cycle_counter_on();
}

uint32_t tw_board_cycles(void)
{
    return DWT_CYCCNT;
}

uint32_t tw_board_clock_hz(void)
{
    return CLOCK_HZ;
}
