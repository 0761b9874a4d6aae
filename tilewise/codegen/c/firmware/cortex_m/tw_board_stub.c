/*
 * tw_board_stub.c — the board layer under QEMU's mps2-an500 (tw_board.h): QEMU models no clock
 * tree, no caches that matter and no DWT cycle counter, so nothing is set up and no cycles are
 * counted (tw_board_clock_hz() is 0: main.c then prints no TW_CYCLES / TW_LAYERS lines).
 */
#include "tw_board.h"

void tw_board_early_init(void)
{
}

void tw_board_init(void)
{
}

uint32_t tw_board_cycles(void)
{
    return 0;
}

uint32_t tw_board_clock_hz(void)
{
    return 0;
}
