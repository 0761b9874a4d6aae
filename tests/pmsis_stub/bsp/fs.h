/* STUB (tilewise tests) of the GAP SDK's bsp/fs.h: mount, open, read, close. */
#ifndef TILEWISE_STUB_BSP_FS_H
#define TILEWISE_STUB_BSP_FS_H

#include "pmsis.h"

struct pi_fs_conf {
    struct pi_device *flash;
};
typedef struct pi_fs_file_s {
    uint32_t size;
} pi_fs_file_t;

int32_t pi_fs_mount(struct pi_device *device);
void pi_fs_unmount(struct pi_device *device);
pi_fs_file_t *pi_fs_open(struct pi_device *device, const char *file, int flags);
int32_t pi_fs_read(pi_fs_file_t *file, void *buffer, uint32_t size);
void pi_fs_close(pi_fs_file_t *file);

#endif
