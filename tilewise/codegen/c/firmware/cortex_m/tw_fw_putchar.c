/*
 * tw_fw_putchar.c — output through a putchar, for a board without a debugger: every character
 * goes to tw_fw_putchar(c) (tw_fw.h) — the ITM's (tw_fw_itm.c, OUTPUT=itm) or your own, e.g. a
 * UART's transmit register (`make firmware LINK=stm32h7 OUTPUT=putchar PUTCHAR_SRC=my_uart.c`).
 * The run's end prints "TW_EXIT <status>" and the core then sleeps (wfi) for good: nothing halts
 * it, and no debugger is needed.
 */
#include "tw_fw.h"

void tw_fw_puts(const char *s)
{
    while (*s)
        tw_fw_putchar(*s++);
}

void tw_fw_exit(int status)
{
    tw_fw_puts("TW_EXIT ");
    tw_fw_put_uint((uint32_t)status);
    tw_fw_puts("\n");
    for (;;)
        __asm__ volatile("wfi");
}
