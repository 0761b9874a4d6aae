/*
 * tw_hal_host.c — the host implementation of tw_hal.h, for bit-exact validation runs.
 *
 * Cores are POSIX threads: tw_fork starts n-1 threads and runs core 0 on the caller.
 *
 * The DMA is deliberately unforgiving (DESIGN.md "Generated C project"): a transfer completes
 * ONLY inside its tw_dma_wait. At issue time the destination is filled with a garbage pattern
 * (tw_hal_host_garbage) and a hash of the source is taken; at wait time the source is hashed
 * again (a mismatch counts a race: the program wrote the source of an in-flight transfer) and
 * copied. So a missing or misplaced wait in generated double buffering shows up as a wrong
 * result or a counted race, never as luck. Transfers, bytes and L2-side contiguous chunks are
 * counted for comparison with the schedule's prediction. L3 reads (tw_l3_read) go through the same
 * pending table — garbage until their wait, races counted, included in dma_pending/dma_waits —
 * but are counted apart (tw_hal_get_l3_stats).
 *
 * Built with -DTW_HAL_HOST_UNCHECKED (benchmarks only: bench/), the garbage fill and the source
 * hashing are skipped — transfers still complete at their wait and are counted — so that timing
 * measures the generated code rather than the checks.
 */
#define _POSIX_C_SOURCE 200809L

#include "tw_hal.h"
#include "tw_hal_chunks.h"
#include "tw_hal_host.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TW_HAL_HOST_UNCHECKED
#define TW_HAL_CHECKED 0
#else
#define TW_HAL_CHECKED 1
#endif

#define MAX_PENDING 64
#define MAX_CORES 64

/* ---------------------------------------------------------------- DMA */

typedef struct {
    tw_dma_id_t id;                       /* 0: free slot */
    uint8_t *dst;
    const uint8_t *src;
    uint32_t row_bytes, rows, planes;
    uint32_t dst_row, dst_plane, src_row, src_plane;
    uint64_t src_hash;
} transfer_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;   /* DMA table and counters */
static transfer_t g_pending[MAX_PENDING];
static tw_dma_id_t g_next_id = 1;
static tw_hal_stats_t g_stats;
static uint64_t g_l3_transfers, g_l3_bytes;                  /* tw_l3_read, counted apart */

static void fail(const char *msg)
{
    fprintf(stderr, "tw_hal_host: %s\n", msg);
    abort();
}

uint8_t tw_hal_host_garbage(tw_dma_id_t id, uint32_t index)
{
    uint32_t h = index * 0x9E3779B1u + id * 0x85EBCA77u;   /* an integer hash of (id, index) */
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    h *= 0x297A2D39u;
    h ^= h >> 15;
    return (uint8_t)(h ^ (h >> 24));
}

/* FNV-1a over the source bytes of a transfer, in copy order. */
static uint64_t source_hash(const transfer_t *t)
{
    uint64_t h = 1469598103934665603ULL;
    uint32_t p, r, b;
    for (p = 0; p < t->planes; p++)
        for (r = 0; r < t->rows; r++) {
            const uint8_t *row = t->src + (size_t)p * t->src_plane + (size_t)r * t->src_row;
            for (b = 0; b < t->row_bytes; b++) {
                h ^= row[b];
                h *= 1099511628211ULL;
            }
        }
    return h;
}

static void fill_garbage(const transfer_t *t)
{
    uint32_t p, r, b, index = 0;
    for (p = 0; p < t->planes; p++)
        for (r = 0; r < t->rows; r++) {
            uint8_t *row = t->dst + (size_t)p * t->dst_plane + (size_t)r * t->dst_row;
            for (b = 0; b < t->row_bytes; b++)
                row[b] = tw_hal_host_garbage(t->id, index++);
        }
}

static void complete(const transfer_t *t)
{
    uint32_t p, r;
    for (p = 0; p < t->planes; p++)
        for (r = 0; r < t->rows; r++)
            memmove(t->dst + (size_t)p * t->dst_plane + (size_t)r * t->dst_row,
                    t->src + (size_t)p * t->src_plane + (size_t)r * t->src_row, t->row_bytes);
}

/* Issue a transfer (L2<->L1 DMA, or an L3->L2 read when `l3` is set: `l2` is then the L3
 * source and `l1` the L2 destination). */
static tw_dma_id_t issue(void *l1, void *l2, uint32_t row_bytes, uint32_t rows, uint32_t planes,
                         uint32_t l1_row_stride, uint32_t l1_plane_stride, uint32_t l2_row_stride,
                         uint32_t l2_plane_stride, tw_dma_dir_t dir, int l3)
{
    transfer_t *t = NULL;
    int i;
    pthread_mutex_lock(&g_lock);
    for (i = 0; i < MAX_PENDING; i++)
        if (g_pending[i].id == 0) {
            t = &g_pending[i];
            break;
        }
    if (!t) {
        pthread_mutex_unlock(&g_lock);
        fail("more than 64 DMA transfers pending (a missing tw_dma_wait?)");
    }
    t->id = g_next_id++;
    if (g_next_id == 0) g_next_id = 1;
    t->row_bytes = row_bytes;
    t->rows = rows;
    t->planes = planes;
    if (dir == TW_DMA_L2_TO_L1) {
        t->dst = (uint8_t *)l1;
        t->src = (const uint8_t *)l2;
        t->dst_row = l1_row_stride;
        t->dst_plane = l1_plane_stride;
        t->src_row = l2_row_stride;
        t->src_plane = l2_plane_stride;
    } else {
        t->dst = (uint8_t *)l2;
        t->src = (const uint8_t *)l1;
        t->dst_row = l2_row_stride;
        t->dst_plane = l2_plane_stride;
        t->src_row = l1_row_stride;
        t->src_plane = l1_plane_stride;
    }
    if (TW_HAL_CHECKED) {
        t->src_hash = source_hash(t);
        fill_garbage(t);
    }
    if (l3) {
        g_l3_transfers++;
        g_l3_bytes += (uint64_t)row_bytes * rows * planes;
    } else {
        g_stats.dma_transfers++;
        g_stats.dma_bytes += (uint64_t)row_bytes * rows * planes;
        g_stats.dma_chunks += tw_l2_chunks(row_bytes, rows, planes, l2_row_stride, l2_plane_stride);
    }
    g_stats.dma_pending++;
    if (g_stats.dma_pending > g_stats.dma_max_pending)
        g_stats.dma_max_pending = g_stats.dma_pending;
    pthread_mutex_unlock(&g_lock);
    return t->id;
}

tw_dma_id_t tw_dma_copy_3d(void *l1, void *l2, uint32_t row_bytes, uint32_t rows,
                           uint32_t planes, uint32_t l1_row_stride, uint32_t l1_plane_stride,
                           uint32_t l2_row_stride, uint32_t l2_plane_stride, tw_dma_dir_t dir)
{
    return issue(l1, l2, row_bytes, rows, planes, l1_row_stride, l1_plane_stride, l2_row_stride,
                 l2_plane_stride, dir, 0);
}

tw_dma_id_t tw_l3_read(void *l2, const void *l3, uint32_t bytes)
{
    return issue(l2, (void *)(uintptr_t)l3, bytes, 1, 1, 0, 0, 0, 0, TW_DMA_L2_TO_L1, 1);
}

tw_dma_id_t tw_l3_write(void *l3, const void *l2, uint32_t bytes)
{
    /* the L2 buffer plays the near side: copied into L3 at the wait, checked unchanged */
    return issue((void *)(uintptr_t)l2, l3, bytes, 1, 1, 0, 0, 0, 0, TW_DMA_L1_TO_L2, 1);
}

void tw_l3_wait(tw_dma_id_t id)
{
    tw_dma_wait(id);
}

void tw_hal_get_l3_stats(uint64_t *transfers, uint64_t *bytes)
{
    pthread_mutex_lock(&g_lock);
    *transfers = g_l3_transfers;
    *bytes = g_l3_bytes;
    pthread_mutex_unlock(&g_lock);
}

void tw_dma_wait(tw_dma_id_t id)
{
    int i;
    pthread_mutex_lock(&g_lock);
    for (i = 0; i < MAX_PENDING; i++)
        if (id != 0 && g_pending[i].id == id)
            break;
    if (i == MAX_PENDING) {
        g_stats.dma_bad_waits++;
    } else {
        transfer_t *t = &g_pending[i];
        if (TW_HAL_CHECKED && source_hash(t) != t->src_hash)
            g_stats.dma_races++;
        complete(t);
        t->id = 0;
        g_stats.dma_waits++;
        g_stats.dma_pending--;
    }
    pthread_mutex_unlock(&g_lock);
}

void tw_hal_get_stats(tw_hal_stats_t *out)
{
    pthread_mutex_lock(&g_lock);
    *out = g_stats;
    pthread_mutex_unlock(&g_lock);
}

void tw_hal_reset_stats(void)
{
    uint32_t pending;
    pthread_mutex_lock(&g_lock);
    pending = g_stats.dma_pending;
    memset(&g_stats, 0, sizeof g_stats);
    g_l3_transfers = g_l3_bytes = 0;
    g_stats.dma_pending = pending;
    g_stats.dma_max_pending = pending;
    pthread_mutex_unlock(&g_lock);
}

/* ---------------------------------------------------------------- cores */

typedef struct {
    int id, n;
    tw_task_fn fn;
    void *arg;
} core_t;

static pthread_key_t g_core_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static int g_in_fork;                                      /* under g_lock */

static struct {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int n, arrived;
    unsigned generation;
} g_bar = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1, 0, 0};

static void make_key(void)
{
    if (pthread_key_create(&g_core_key, NULL) != 0)
        fail("pthread_key_create failed");
}

static const core_t *current_core(void)
{
    pthread_once(&g_key_once, make_key);
    return (const core_t *)pthread_getspecific(g_core_key);
}

int tw_core_id(void)
{
    const core_t *c = current_core();
    return c ? c->id : 0;
}

int tw_core_count(void)
{
    const core_t *c = current_core();
    return c ? c->n : 1;
}

static void *core_main(void *p)
{
    core_t *c = (core_t *)p;
    pthread_setspecific(g_core_key, c);
    c->fn(c->arg);
    return NULL;
}

void tw_fork(int n_cores, tw_task_fn fn, void *arg)
{
    core_t cores[MAX_CORES];
    pthread_t threads[MAX_CORES];
    int i;

    pthread_once(&g_key_once, make_key);
    if (n_cores < 1) n_cores = 1;
    if (n_cores > MAX_CORES) fail("tw_fork: more than 64 cores");
    pthread_mutex_lock(&g_lock);
    if (g_in_fork) {
        pthread_mutex_unlock(&g_lock);
        fail("tw_fork: forks do not nest");
    }
    g_in_fork = 1;
    g_stats.forks++;
    pthread_mutex_unlock(&g_lock);

    pthread_mutex_lock(&g_bar.m);
    g_bar.n = n_cores;
    g_bar.arrived = 0;
    pthread_mutex_unlock(&g_bar.m);

    for (i = 0; i < n_cores; i++) {
        cores[i].id = i;
        cores[i].n = n_cores;
        cores[i].fn = fn;
        cores[i].arg = arg;
    }
    for (i = 1; i < n_cores; i++)
        if (pthread_create(&threads[i], NULL, core_main, &cores[i]) != 0)
            fail("tw_fork: pthread_create failed");
    pthread_setspecific(g_core_key, &cores[0]);
    fn(arg);
    pthread_setspecific(g_core_key, NULL);
    for (i = 1; i < n_cores; i++)
        pthread_join(threads[i], NULL);

    pthread_mutex_lock(&g_lock);
    g_in_fork = 0;
    pthread_mutex_unlock(&g_lock);
}

void tw_barrier(void)
{
    const core_t *c = current_core();
    unsigned generation;
    if (!c) return;                                        /* outside a fork */
    pthread_mutex_lock(&g_bar.m);
    generation = g_bar.generation;
    if (++g_bar.arrived == g_bar.n) {
        g_bar.arrived = 0;
        g_bar.generation++;
        pthread_mutex_lock(&g_lock);
        g_stats.barriers++;
        pthread_mutex_unlock(&g_lock);
        pthread_cond_broadcast(&g_bar.cv);
    } else {
        while (generation == g_bar.generation)
            pthread_cond_wait(&g_bar.cv, &g_bar.m);
    }
    pthread_mutex_unlock(&g_bar.m);
}
