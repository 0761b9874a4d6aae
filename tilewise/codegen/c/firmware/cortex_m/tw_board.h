/*
 * tw_board.h — the board layer of a tilewise Cortex-M firmware: what differs between the chip and
 * QEMU. tw_fw.c calls tw_board_early_init() at reset before it initialises .data and .bss (the
 * clocks of the RAM they live in), then tw_board_init() (system clock, caches, cycle counter);
 * main.c reads tw_board_cycles() (tw_fw.h tw_fw_cycles) around the network and each layer.
 *
 *   tw_board_stm32h7.c  the STM32H743 (RM0433): 480 MHz from the HSI through PLL1 at VOS0, the
 *                       flash's wait states, I- and D-cache, the DWT cycle counter
 *   tw_board_stub.c     QEMU's mps2-an500: nothing to set up, and no cycle counter
 */
#ifndef TW_BOARD_H
#define TW_BOARD_H

#include <stdint.h>

void tw_board_early_init(void);   /* before .data/.bss exist: uses no static variable */
void tw_board_init(void);         /* clock, caches, cycle counter */
uint32_t tw_board_cycles(void);   /* core clock cycles since tw_board_init (wraps at 2^32) */
uint32_t tw_board_clock_hz(void); /* the core clock tw_board_init set; 0 = no cycle counter */

#endif /* TW_BOARD_H */
