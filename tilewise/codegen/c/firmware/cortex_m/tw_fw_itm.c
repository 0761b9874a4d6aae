/*
 * tw_fw_itm.c — tw_fw_putchar on the ITM's stimulus port 0 (Armv7-M ARM, Appendix D "ITM"): a
 * debug probe reading SWO (ST-LINK, J-Link) shows the text; with the ITM or the port disabled
 * (no probe configured it) characters are dropped, so the firmware runs on without one.
 */
#include "tw_fw.h"

#define ITM_PORT0 (*(volatile uint32_t *)0xE0000000u)
#define ITM_PORT0_8 (*(volatile uint8_t *)0xE0000000u)
#define ITM_TER (*(volatile uint32_t *)0xE0000E00u)
#define ITM_TCR (*(volatile uint32_t *)0xE0000E80u)

void tw_fw_putchar(char c)
{
    if (!(ITM_TCR & 1u) || !(ITM_TER & 1u))
        return;
    while (ITM_PORT0 == 0)   /* the port's FIFO is full */
        ;
    ITM_PORT0_8 = (uint8_t)c;
}
