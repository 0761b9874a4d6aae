/*
 * Test shim for tests/test_hal.py: team checks that need C callbacks (fork, core ids, barrier),
 * and the 1D / 2D copies, static inline in tw_hal.h, as symbols ctypes can call.
 */
#include <stdint.h>

#include "tw_hal.h"

#define MAX_CORES 64
#define MAX_ROUNDS 64

typedef struct {
    int rounds;
    volatile int stamp[MAX_CORES];       /* the round each core has reached */
    int ids[MAX_CORES], counts[MAX_CORES];
    int violations;                       /* written by core 0 only */
} team_t;

static void team_core(void *p)
{
    team_t *t = (team_t *)p;
    int me = tw_core_id(), n = tw_core_count(), r, c;
    t->ids[me] = me;
    t->counts[me] = n;
    for (r = 1; r <= t->rounds; r++) {
        t->stamp[me] = r;
        tw_barrier();
        /* after the barrier every core has stamped round r and none has gone past it */
        if (me == 0)
            for (c = 0; c < n; c++)
                if (t->stamp[c] != r) t->violations++;
        tw_barrier();
    }
}

/* Fork n cores that run `rounds` barrier rounds; ids/counts receive what each core saw.
 * Returns the number of barrier violations seen by core 0. */
int hal_team_check(int n, int rounds, int *ids, int *counts)
{
    static team_t t;
    int i;
    t.rounds = rounds > MAX_ROUNDS ? MAX_ROUNDS : rounds;
    t.violations = 0;
    for (i = 0; i < MAX_CORES; i++) {
        t.stamp[i] = 0;
        t.ids[i] = -1;
        t.counts[i] = -1;
    }
    tw_fork(n, team_core, &t);
    for (i = 0; i < n && i < MAX_CORES; i++) {
        ids[i] = t.ids[i];
        counts[i] = t.counts[i];
    }
    return t.violations;
}

tw_dma_id_t hal_copy_1d(void *l1, void *l2, uint32_t bytes, tw_dma_dir_t dir)
{
    return tw_dma_copy_1d(l1, l2, bytes, dir);
}

tw_dma_id_t hal_copy_2d(void *l1, void *l2, uint32_t row_bytes, uint32_t rows,
                        uint32_t l1_row_stride, uint32_t l2_row_stride, tw_dma_dir_t dir)
{
    return tw_dma_copy_2d(l1, l2, row_bytes, rows, l1_row_stride, l2_row_stride, dir);
}
