/*
 * tw_hal_pulp.h — what the firmware of a PMSIS project (GAP8, GAP9) calls besides network.h:
 * the L3 loading API of tw_hal_pulp_l3.c (compiled by projects with an L3 image,
 * TW_NETWORK_L3_BYTES > 0 in network.h).
 *
 * Before the first tw_network_run, the fabric controller
 *   1. opens the RAM device (pi_ram_open),
 *   2. writes the project's weights_l3.bin into it at address TW_L3_BASE (network.h; the
 *      GAP SDK main, gap_sdk/main.c, reads the file from the flash's read-only file system),
 *   3. gives the opened device to tw_hal_pulp_set_ram(),
 * and the cluster task passes (void *)TW_L3_BASE as tw_network_run's `l3`: every L3 read and
 * write of the network (tw_l3_read, tw_l3_write in tw_hal.h) is then a cluster-side request on
 * that device.
 */
#ifndef TW_HAL_PULP_H
#define TW_HAL_PULP_H

#ifdef __cplusplus
extern "C" {   /* a C++ application links the HAL's C symbols */
#endif

struct pi_device;

/* The RAM device tw_l3_read / tw_l3_write use (defined in tw_hal_pulp_l3.c). */
void tw_hal_pulp_set_ram(struct pi_device *ram);

#ifdef __cplusplus
}
#endif

#endif /* TW_HAL_PULP_H */
