/*
 * tw_board_stm32h7.c — the board layer on an STM32H743 (tw_board.h), on its registers, no HAL.
 * Register addresses and fields: ST RM0433 (STM32H742/743/750/753 reference manual) — RCC §8,
 * PWR §6, SYSCFG §12, FLASH §4 — and the Armv7-M Architecture Reference Manual (SCB cache
 * maintenance, DWT, DEMCR).
 *
 * tw_board_early_init: the clocks of SRAM1-3 (D2), where the linker puts .data and .bss
 *   (RCC_AHB2ENR SRAM1EN/SRAM2EN/SRAM3EN).
 * tw_board_init:
 *   1. supply from the LDO (PWR_CR3), voltage scale 0: VOS1 then the overdrive (SYSCFG_PWRCR
 *      ODEN) — 480 MHz needs VOS0, on revision V silicon (DS12110: revision Y runs at 400 MHz);
 *   2. flash: 4 wait states, WRHIGHFREQ 2 (RM0433 Table 17 at VOS0, AXI clock 240 MHz);
 *   3. PLL1 from the HSI (64 MHz, on at reset: no board-specific crystal): /M 4 = 16 MHz
 *      (input range 8-16 MHz), *N 60 = VCO 960 MHz (wide range), /P 2 = 480 MHz;
 *   4. prescalers: CPU /1 (480 MHz), AHB/AXI /2 (240 MHz), APB1-4 /2 (120 MHz);
 *   5. system clock switched to PLL1;
 *   6. I-cache and D-cache invalidated and enabled (the firmware uses no DMA, so no coherency
 *      maintenance is needed afterwards);
 *   7. the DWT cycle counter reset and started (DEMCR TRCENA, the Cortex-M7's DWT lock).
 * Not run here: no board. QEMU runs tw_board_stub.c instead.
 */
#include "tw_board.h"

#define REG(addr) (*(volatile uint32_t *)(addr))

/* RCC (RM0433 §8.7) */
#define RCC_BASE 0x58024400u
#define RCC_CR REG(RCC_BASE + 0x00u)
#define RCC_CFGR REG(RCC_BASE + 0x10u)
#define RCC_D1CFGR REG(RCC_BASE + 0x18u)
#define RCC_D2CFGR REG(RCC_BASE + 0x1Cu)
#define RCC_D3CFGR REG(RCC_BASE + 0x20u)
#define RCC_PLLCKSELR REG(RCC_BASE + 0x28u)
#define RCC_PLLCFGR REG(RCC_BASE + 0x2Cu)
#define RCC_PLL1DIVR REG(RCC_BASE + 0x30u)
#define RCC_AHB2ENR REG(RCC_BASE + 0xDCu)
#define RCC_APB4ENR REG(RCC_BASE + 0xF4u)
#define RCC_CR_HSIRDY (1u << 2)
#define RCC_CR_PLL1ON (1u << 24)
#define RCC_CR_PLL1RDY (1u << 25)
#define RCC_AHB2ENR_SRAM123 ((1u << 29) | (1u << 30) | (1u << 31))
#define RCC_APB4ENR_SYSCFGEN (1u << 1)
/* PWR (RM0433 §6.8) and SYSCFG (§12.3) */
#define PWR_BASE 0x58024800u
#define PWR_CSR1 REG(PWR_BASE + 0x04u)
#define PWR_CR3 REG(PWR_BASE + 0x0Cu)
#define PWR_D3CR REG(PWR_BASE + 0x18u)
#define PWR_CR3_SUPPLY 0x7u          /* SCUEN | LDOEN | BYPASS */
#define PWR_CR3_LDOEN (1u << 1)
#define PWR_CSR1_ACTVOSRDY (1u << 13)
#define PWR_D3CR_VOS (3u << 14)      /* 11: VOS1 */
#define PWR_D3CR_VOSRDY (1u << 13)
#define SYSCFG_PWRCR REG(0x58000400u + 0x2Cu)
#define SYSCFG_PWRCR_ODEN 1u
/* FLASH (RM0433 §4.9) */
#define FLASH_ACR REG(0x52002000u)
#define FLASH_ACR_SETTING ((2u << 4) | 4u)   /* WRHIGHFREQ 2, LATENCY 4 */
/* PLL1: HSI 64 MHz / 4 * 60 / 2 = 480 MHz */
#define PLL_M 4u
#define PLL_N 60u
#define PLL_P 2u
#define PLL_Q 4u
#define PLL_R 2u
#define CLOCK_HZ 480000000u
/* Armv7-M system control space */
#define SCB_CCR REG(0xE000ED14u)
#define SCB_CCR_DC (1u << 16)
#define SCB_CCR_IC (1u << 17)
#define SCB_CCSIDR REG(0xE000ED80u)
#define SCB_CSSELR REG(0xE000ED84u)
#define SCB_ICIALLU REG(0xE000EF50u)
#define SCB_DCISW REG(0xE000EF60u)
#define DEMCR REG(0xE000EDFCu)
#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL REG(0xE0001000u)
#define DWT_CYCCNT REG(0xE0001004u)
#define DWT_LAR REG(0xE0001FB0u)
#define DWT_LAR_KEY 0xC5ACCE55u

static inline void barrier(void)
{
    __asm__ volatile("dsb 0xF\n\tisb 0xF" ::: "memory");
}

void tw_board_early_init(void)
{
    RCC_AHB2ENR |= RCC_AHB2ENR_SRAM123;
    (void)RCC_AHB2ENR;   /* read back: the clock is on before the first access */
    barrier();
}

static void clock_480mhz(void)
{
    /* 1. LDO supply (locks the supply configuration), then VOS1 + overdrive = VOS0 */
    PWR_CR3 = (PWR_CR3 & ~PWR_CR3_SUPPLY) | PWR_CR3_LDOEN;
    while (!(PWR_CSR1 & PWR_CSR1_ACTVOSRDY))
        ;
    PWR_D3CR |= PWR_D3CR_VOS;
    while (!(PWR_D3CR & PWR_D3CR_VOSRDY))
        ;
    RCC_APB4ENR |= RCC_APB4ENR_SYSCFGEN;
    (void)RCC_APB4ENR;
    SYSCFG_PWRCR |= SYSCFG_PWRCR_ODEN;
    while (!(PWR_D3CR & PWR_D3CR_VOSRDY))
        ;
    /* 2. flash wait states before the clock rises */
    FLASH_ACR = (FLASH_ACR & ~0x3Fu) | FLASH_ACR_SETTING;
    while ((FLASH_ACR & 0x3Fu) != FLASH_ACR_SETTING)
        ;
    /* 3. PLL1 from the HSI */
    while (!(RCC_CR & RCC_CR_HSIRDY))
        ;
    RCC_PLLCKSELR = (RCC_PLLCKSELR & ~((0x3Fu << 4) | 0x3u)) | (PLL_M << 4);   /* PLLSRC HSI */
    RCC_PLLCFGR = (RCC_PLLCFGR & ~0xFu) | (3u << 2) | (1u << 16);   /* 8-16 MHz, wide VCO, DIVP1EN */
    RCC_PLL1DIVR = (PLL_N - 1u) | ((PLL_P - 1u) << 9) | ((PLL_Q - 1u) << 16) | ((PLL_R - 1u) << 24);
    RCC_CR |= RCC_CR_PLL1ON;
    while (!(RCC_CR & RCC_CR_PLL1RDY))
        ;
    /* 4. CPU /1, AHB /2, APB3 /2; APB1, APB2 /2; APB4 /2 */
    RCC_D1CFGR = (0u << 8) | (4u << 4) | 8u;
    RCC_D2CFGR = (4u << 8) | (4u << 4);
    RCC_D3CFGR = (4u << 4);
    /* 5. system clock = PLL1 */
    RCC_CFGR = (RCC_CFGR & ~0x7u) | 3u;
    while (((RCC_CFGR >> 3) & 0x7u) != 3u)
        ;
}

static void caches_on(void)
{
    uint32_t ccsidr, sets, ways, s, w;
    barrier();
    SCB_ICIALLU = 0;
    barrier();
    SCB_CCR |= SCB_CCR_IC;
    barrier();
    SCB_CSSELR = 0;   /* level 1 data cache */
    barrier();
    ccsidr = SCB_CCSIDR;
    sets = (ccsidr >> 13) & 0x7FFFu;
    ways = (ccsidr >> 3) & 0x3FFu;
    for (s = 0; s <= sets; s++)   /* invalidate by set/way: 32-byte lines, 4 ways */
        for (w = 0; w <= ways; w++)
            SCB_DCISW = ((s << 5) & 0x3FE0u) | (w << 30);
    barrier();
    SCB_CCR |= SCB_CCR_DC;
    barrier();
}

static void cycle_counter_on(void)
{
    DEMCR |= DEMCR_TRCENA;
    DWT_LAR = DWT_LAR_KEY;
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u;   /* CYCCNTENA */
}

void tw_board_init(void)
{
    clock_480mhz();
    caches_on();
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
