/*
 * cm_kernel_shim.h — test-only: what tests/c/pulp_gvsoc_main.c (the kernel cases written for the
 * pulp-open firmware) takes from that runtime, given on the Cortex-M firmware instead: L1 data
 * in the DTCM, and no cycle counter (QEMU counts none; the cases' cycles print as 0).
 * Force-included (-include) before the harness.
 */
#ifndef CM_KERNEL_SHIM_H
#define CM_KERNEL_SHIM_H

#include "tw_fw.h"

#define TW_FW_L1 TW_FW_DTCM

static inline uint32_t tw_fw_cycles(void)
{
    return 0;
}

#endif /* CM_KERNEL_SHIM_H */
