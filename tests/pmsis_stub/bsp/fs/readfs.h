/* STUB (tilewise tests) of the GAP SDK's bsp/fs/readfs.h: the flash's read-only file system. */
#ifndef TILEWISE_STUB_BSP_READFS_H
#define TILEWISE_STUB_BSP_READFS_H

#include "bsp/fs.h"

struct pi_readfs_conf {
    struct pi_fs_conf fs;
};
void pi_readfs_conf_init(struct pi_readfs_conf *conf);

#endif
