/* STUB (tilewise tests) of the GAP SDK's bsp/flash.h: the board's default flash. */
#ifndef TILEWISE_STUB_BSP_FLASH_H
#define TILEWISE_STUB_BSP_FLASH_H

#include "pmsis.h"

struct pi_default_flash_conf {
    int stub;
};
void pi_default_flash_conf_init(struct pi_default_flash_conf *conf);
int pi_flash_open(struct pi_device *device);
void pi_flash_close(struct pi_device *device);

#endif
