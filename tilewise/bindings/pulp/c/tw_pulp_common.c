/*
 * tw_pulp_common.c — the byte movers of tw_pulp_common.h. On RISC-V each is a hardware loop
 * (lp.setup, loop 0) over post-increment loads and stores, two elements per iteration so that no
 * store waits for the load just before it: 2 cycles per word copied, 1 per word filled (two words per iteration), 2 per
 * byte gathered. Elsewhere the same loops in C.
 */
#include "tw_pulp_common.h"

/* Words from src to dst (both word-aligned), n_pairs pairs of words. */
void tw_pulp_copy_words(int8_t *dst, const int8_t *src, int n_pairs)
{
#if TW_PULP_ASM
    int32_t t0, t1;
    __asm__ volatile(
        TW_PULP_LOOP(8)   /* a body of 4 */
        TW_PULP_P_LW("%[t0]", "%[s]") TW_PULP_P_LW("%[t1]", "%[s]")
        TW_PULP_P_SW("%[t0]", "%[d]") TW_PULP_P_SW("%[t1]", "%[d]")
        TW_PULP_LOOP_END
        : [s] "+r"(src), [d] "+r"(dst), [t0] "=&r"(t0), [t1] "=&r"(t1)
        : [n] "r"(n_pairs)
        : "memory");
#else
    int i;
    for (i = 0; i < n_pairs; i++) {
        tw_v4_t t0 = tw_pulp_lw_step(&src, 4), t1 = tw_pulp_lw_step(&src, 4);
        tw_pulp_sw(dst, t0);
        tw_pulp_sw(dst + 4, t1);
        dst += 8;
    }
#endif
}

void tw_pulp_fill(int8_t *dst, int8_t value, int n)
{
    int i = 0;
    uint32_t v = (uint8_t)value * 0x01010101u;
    while (i < n && ((uintptr_t)(dst + i) & 3u) != 0)
        dst[i++] = value;
    if (n - i >= 8) {
        int pairs = (n - i) >> 3;
#if TW_PULP_ASM
        int8_t *d = dst + i;
        __asm__ volatile(
            TW_PULP_LOOP(4)   /* a body of 2 */
            TW_PULP_P_SW("%[v]", "%[d]") TW_PULP_P_SW("%[v]", "%[d]")
            TW_PULP_LOOP_END
            : [d] "+r"(d) : [n] "r"(pairs), [v] "r"(v) : "memory");
#else
        int w;
        for (w = 0; w < 2 * pairs; w++)
            tw_pulp_sw(dst + i + 4 * w, v);
#endif
        i += pairs << 3;
    }
    for (; i < n; i++)
        dst[i] = value;
}

void tw_pulp_gather(int8_t *dst, const int8_t *src, int stride, int n)
{
    int pairs = n >> 1;
    if (pairs > 0) {
#if TW_PULP_ASM
        int32_t t0, t1;
        __asm__ volatile(
            TW_PULP_LOOP(8)   /* a body of 4 */
            TW_PULP_P_LB_RR("%[t0]", "%[s]", "%[st]") TW_PULP_P_LB_RR("%[t1]", "%[s]", "%[st]")
            TW_PULP_P_SB("%[t0]", "%[d]") TW_PULP_P_SB("%[t1]", "%[d]")
            TW_PULP_LOOP_END
            : [s] "+r"(src), [d] "+r"(dst), [t0] "=&r"(t0), [t1] "=&r"(t1)
            : [n] "r"(pairs), [st] "r"(stride)
            : "memory");
#else
        int i;
        for (i = 0; i < pairs; i++) {
            dst[0] = (int8_t)tw_pulp_lb_step(&src, stride);
            dst[1] = (int8_t)tw_pulp_lb_step(&src, stride);
            dst += 2;
        }
#endif
    }
    if (n & 1)
        *dst = *src;
}
