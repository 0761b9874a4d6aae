/* STUB (tilewise tests) of the GAP SDK's bsp/ram.h: the board's default RAM (HyperRAM on GAP8,
 * octo-SPI RAM on GAP9) as gap_sdk/main.c opens and fills it. */
#ifndef TILEWISE_STUB_BSP_RAM_H
#define TILEWISE_STUB_BSP_RAM_H

#include "pmsis.h"

struct pi_default_ram_conf {
    int stub;
};
void pi_default_ram_conf_init(struct pi_default_ram_conf *conf);
int pi_ram_open(struct pi_device *device);
void pi_ram_write(struct pi_device *device, uint32_t pi_ram_addr, void *addr, uint32_t size);

#endif
