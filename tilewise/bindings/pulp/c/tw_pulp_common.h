/*
 * tw_pulp_common.h — what the pulp kernels share: the work split over the cores and the byte
 * movers of im2col and of the depthwise row buffers.
 *
 * Work split (seed 004 §3.3.2, made to keep every core busy on small tiles): a kernel cuts its
 * tile into `items` of equal cost (pixel pairs, output rows of a channel, output pixels, ...) and
 * core `core` of `cores` takes the contiguous run tw_pulp_share() gives it,
 *     [items·core / cores, items·(core + 1) / cores),
 * so the runs differ by at most one item and every core works as soon as items >= cores (the
 * PULP-NN chunk ceil(items / cores) leaves the last cores idle: 10 neurons on 8 cores make 5
 * chunks of 2). When a tile has fewer spatial items than cores, the kernels also split the
 * channels: tw_pulp_groups() is how many channel groups each spatial item is cut into.
 *
 * Movers (hardware loops of p.lw / p.sw, p.lb / p.sb with post-increment on RISC-V; plain loops
 * otherwise): tw_pulp_copy (words when both ends are word-aligned), tw_pulp_fill,
 * tw_pulp_gather (n bytes at a stride into a dense run: one channel of an HWC row).
 */
#ifndef TW_PULP_COMMON_H
#define TW_PULP_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "tw_pulp_isa.h"

/* The [*begin, *end) run of `items` owned by core `core` of `cores` (balanced; items·cores
 * < 2^31). */
TW_PULP_INLINE void tw_pulp_share(int items, int core, int cores, int *begin, int *end)
{
    *begin = items * core / cores;
    *end = items * (core + 1) / cores;
}

/* Channel groups per spatial item: 1 when there are at least as many spatial items as cores,
 * else enough for every core to get an item, at most `blocks` (the channel blocks there are). */
TW_PULP_INLINE int tw_pulp_groups(int spatial, int blocks, int cores)
{
    int g;
    if (spatial >= cores || spatial <= 0)
        return 1;
    g = (cores + spatial - 1) / spatial;
    return g < blocks ? g : (blocks > 0 ? blocks : 1);
}

/* Block range [*b0, *b1) of group `grp` of `groups` over `blocks` blocks. */
TW_PULP_INLINE void tw_pulp_group_blocks(int blocks, int grp, int groups, int *b0, int *b1)
{
    if (groups == 1) {              /* the common case, without two divisions (~35 cycles each) */
        *b0 = 0;
        *b1 = blocks;
        return;
    }
    *b0 = blocks * grp / groups;
    *b1 = blocks * (grp + 1) / groups;
}

void tw_pulp_copy_words(int8_t *dst, const int8_t *src, int n_pairs);

/* n bytes from src to dst (not overlapping): pairs of words in a hardware loop when both are
 * word-aligned; otherwise, from 4 bytes on, words at any alignment (a misaligned word costs one
 * cycle more) and one last word ending at n, which may rewrite bytes already copied; bytes only
 * below 4. */
TW_PULP_INLINE void tw_pulp_copy(int8_t *dst, const int8_t *src, int n)
{
    int i = 0;
    if ((((uintptr_t)dst | (uintptr_t)src) & 3u) == 0 && n >= 8) {
        i = n & ~7;
        tw_pulp_copy_words(dst, src, n >> 3);
    }
    if (n - i >= 4) {
        for (; i + 4 < n; i += 4)
            tw_pulp_sw(dst + i, tw_pulp_lw(src + i));
        tw_pulp_sw(dst + n - 4, tw_pulp_lw(src + n - 4));
        return;
    }
    for (; i < n; i++)
        dst[i] = src[i];
}
void tw_pulp_fill(int8_t *dst, int8_t value, int n);
void tw_pulp_gather(int8_t *dst, const int8_t *src, int stride, int n);

#endif /* TW_PULP_COMMON_H */
