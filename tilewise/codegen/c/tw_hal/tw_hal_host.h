/*
 * tw_hal_host.h — extras of the host HAL (tw_hal_host.c) for tests and the host harness.
 */
#ifndef TW_HAL_HOST_H
#define TW_HAL_HOST_H

#include <stdint.h>

#include "tw_hal.h"

/* The byte the host HAL writes at issue time into byte `index` (in copy order: plane, row,
 * byte) of the destination of transfer `id`; it stays there until tw_dma_wait(id). */
uint8_t tw_hal_host_garbage(tw_dma_id_t id, uint32_t index);

#endif /* TW_HAL_HOST_H */
