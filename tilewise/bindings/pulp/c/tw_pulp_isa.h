/*
 * tw_pulp_isa.h — the XpulpV2 operations the pulp kernels use, each as a small inline function:
 * one instruction emitted with `.insn` on RISC-V (RI5CY, GAP8/GAP9 clusters, pulp-open), the same
 * arithmetic in plain C elsewhere, so that a generated project builds and validates bit-exact on
 * the host through the very code path that runs on the cluster (seed 004 §3.3.1: "hardware loops,
 * load and store with post-increment, 8-bit SIMD sdotp4").
 *
 * Encodings: the XpulpV2 (RI5CY) ones of GVSoC's isa_pulpv2.py, checked by execution on its
 * pulp-open cores (../shared/tools/gvsoc/README.md); a stock riscv64-unknown-elf binutils knows no
 * PULP mnemonics, `.insn` emits them.
 *
 *   pv.sdotsp.b  rd += sum of 4 int8 x int8 lane products      .insn r 0x57, 1, 0x5C
 *   p.lw         rd = mem32[rs1]; rs1 += imm (post-increment)  .insn i 0x0B, 2
 *   p.lb         rd = mem8[rs1];  rs1 += rs2                    .insn r 0x0B, 7, 0x00
 *   p.min/p.max  signed minimum / maximum                       .insn r 0x33, 4 / 6, 0x02
 *   pv.max.b / pv.min.b  lane-wise int8 maximum / minimum       .insn r 0x57, 1, 0x18 / 0x10
 *   lp.setup L, rs1, uimm  hardware loop L: count rs1, body up to pc + 2*uimm (the address of
 *                the body's last instruction in GVSoC)         .insn i 0x7B, 4
 *
 * Words: a tw_v4_t holds 4 int8 lanes little-endian (lane i in bits 8i..8i+7), as a 32-bit load
 * of 4 consecutive bytes gives them on RISC-V. RI5CY loads words at any address (a misaligned
 * load or store costs one more cycle), so tw_pulp_lw and tw_pulp_sw take any pointer.
 *
 * TW_PULP_ASM is 1 when the XpulpV2 path is compiled (RISC-V, unless TW_PULP_PORTABLE is defined,
 * which builds the C path on RISC-V too, e.g. to compare the two on the simulator).
 *
 * TW_PULP_ARM is 1 on Arm cores with the DSP extension (ARMv7E-M: Cortex-M4/M7; __ARM_FEATURE_DSP,
 * unless TW_PULP_PORTABLE): the same kernels through ACLE intrinsics (arm_acle.h) — sdotp4 as
 * two `smlad` (dual 16x16 MAC) on the `sxtb16`-unpacked even and odd lanes (`sxtb16` of the word
 * rotated by 8), words loaded with one `ldr` (Cortex-M7 loads words at any alignment); the
 * other operations in C (mulh compiles to smull, the clamps to compares).
 * Hardware-loop blocks (the MatMul and copy loops) are whole asm statements in the kernels' C
 * files, each next to its C form; this header holds the single instructions.
 */
#ifndef TW_PULP_ISA_H
#define TW_PULP_ISA_H

#include <stdint.h>

#if defined(__ARM_FEATURE_DSP) && !defined(TW_PULP_PORTABLE)
#define TW_PULP_ARM 1
#include <arm_acle.h>
#include <string.h>
#else
#define TW_PULP_ARM 0
#endif
/* TW_PULP_FPU is 1 on those Arm builds for a single-precision FPU (__ARM_FP bit 2: -mfpu=fpv5-d16,
 * fpv4-sp-d16, ...): the onnx_fpu requantization is then three FPU instructions
 * (tw_pulp_requant.h tw_pulp_rq_onnx_fpu). */
#if TW_PULP_ARM && defined(__ARM_FP) && (__ARM_FP & 4)
#define TW_PULP_FPU 1
#else
#define TW_PULP_FPU 0
#endif
#if defined(__riscv) && !defined(TW_PULP_PORTABLE)
#define TW_PULP_ASM 1
#else
#define TW_PULP_ASM 0
#endif

/* Kernel bodies are written once with a compile-time `mode` argument and inlined into one entry
 * point per requantization mode, so that no mode test is left at run time. Forced on the cluster
 * and on Arm only: the host's plain-C path is there to validate bit-exactness, and forcing six
 * inlined copies of every body through a host compiler's vectorizer costs minutes per build
 * (tw_pulp_conv.c: 23 s at -O2, 104 s at -O3 with gcc 12 on x86-64; 2 s and 7 s left to gcc). */
#if defined(__GNUC__) && (TW_PULP_ASM || TW_PULP_ARM)
#define TW_PULP_INLINE static inline __attribute__((always_inline))
#define TW_PULP_NOINLINE __attribute__((noinline))
#else
#define TW_PULP_INLINE static inline
#define TW_PULP_NOINLINE
#endif

/* The asm text of the XpulpV2 instructions the hardware-loop blocks use (operands: asm operand
 * names such as "%[x0]" or register names), so that the blocks read as assembly. */
#define TW_PULP_LOOP(n) \
    ".option push\n\t.option norvc\n\t.insn i 0x7B, 4, x0, %[n], " #n "\n\t"
#define TW_PULP_LOOP_END ".option pop"
/* lp.setup of loop 1 (the outer loop of a nest) over the next n / 2 instructions, %[rows] times */
#define TW_PULP_OUTER_LOOP(n) \
    ".option push\n\t.option norvc\n\t.insn i 0x7B, 4, x1, %[rows], " #n "\n\t"
#define TW_PULP_INNER_LOOP(n) ".insn i 0x7B, 4, x0, %[n], " #n "\n\t"
#define TW_PULP_P_LW(rd, rs) ".insn i 0x0B, 2, " rd ", " rs ", 4\n\t"
#define TW_PULP_P_LW_RR(rd, rs, step) ".insn r 0x0B, 7, 0x10, " rd ", " rs ", " step "\n\t"
#define TW_PULP_P_LB_RR(rd, rs, step) ".insn r 0x0B, 7, 0x00, " rd ", " rs ", " step "\n\t"
#define TW_PULP_P_SW(rv, rs) ".insn s 0x2B, 2, " rv ", 4(" rs ")\n\t"
#define TW_PULP_P_SB(rv, rs) ".insn s 0x2B, 0, " rv ", 1(" rs ")\n\t"
#define TW_PULP_SDOTP(rd, ra, rb) ".insn r 0x57, 1, 0x5C, " rd ", " ra ", " rb "\n\t"
/* TW_PULP_LOOP(n): lp.setup of loop 0 over the next n / 2 instructions (n = twice the count:
 * the end offset is in half-words, up to the body's last instruction) */

typedef uint32_t tw_v4_t;

/* Lane i of a word as a signed value. */
TW_PULP_INLINE int32_t tw_pulp_lane(tw_v4_t v, int i)
{
    return (int32_t)(int8_t)(uint8_t)(v >> (8 * i));
}

/* The word of lanes b0..b3 (each an int8 value). */
TW_PULP_INLINE tw_v4_t tw_pulp_pack4(int32_t b0, int32_t b1, int32_t b2, int32_t b3)
{
    return (tw_v4_t)(uint8_t)b0 | (tw_v4_t)(uint8_t)b1 << 8 | (tw_v4_t)(uint8_t)b2 << 16 |
           (tw_v4_t)(uint8_t)b3 << 24;
}

/* 32-bit load of the 4 bytes at p (any alignment). */
TW_PULP_INLINE tw_v4_t tw_pulp_lw(const int8_t *p)
{
#if TW_PULP_ASM
    tw_v4_t v;
    __asm__("lw %0, %1" : "=r"(v) : "m"(*(const char (*)[4])(const void *)p));
    return v;
#elif TW_PULP_ARM
    tw_v4_t v;
    memcpy(&v, p, 4);          /* one ldr: ARMv7E-M loads words at any alignment */
    return v;
#else
    return tw_pulp_pack4(p[0], p[1], p[2], p[3]);
#endif
}

/* 32-bit store of the 4 lanes of v at p (any alignment). */
TW_PULP_INLINE void tw_pulp_sw(int8_t *p, tw_v4_t v)
{
#if TW_PULP_ASM
    __asm__("sw %1, %0" : "=m"(*(char (*)[4])(void *)p) : "r"(v));
#elif TW_PULP_ARM
    memcpy(p, &v, 4);          /* one str: ARMv7E-M stores words at any alignment */
#else
    p[0] = (int8_t)tw_pulp_lane(v, 0);
    p[1] = (int8_t)tw_pulp_lane(v, 1);
    p[2] = (int8_t)tw_pulp_lane(v, 2);
    p[3] = (int8_t)tw_pulp_lane(v, 3);
#endif
}

/* A load with register post-increment: the value at *p, then *p += step (`insn`: p.lw / p.lb,
 * `bytes` the access; `cload` the load in C). */
#if TW_PULP_ASM
#define TW_PULP_LOAD_STEP(name, type, insn, bytes, cload)                                   \
    TW_PULP_INLINE type name(const int8_t **p, int32_t step)                                \
    {                                                                                       \
        type v;                                                                             \
        __asm__(insn " %0, %1, %3"                                                          \
                : "=r"(v), "+r"(*p) : "m"(*(const char (*)[bytes])(const void *)*p),         \
                  "r"(step));                                                               \
        return v;                                                                           \
    }
#else
#define TW_PULP_LOAD_STEP(name, type, insn, bytes, cload)                                   \
    TW_PULP_INLINE type name(const int8_t **p, int32_t step)                                \
    {                                                                                       \
        type v = cload;                                                                     \
        *p += step;                                                                         \
        return v;                                                                           \
    }
#endif

/* p.lw / p.lb with register post-increment */
TW_PULP_LOAD_STEP(tw_pulp_lw_step, tw_v4_t, ".insn r 0x0B, 7, 0x10,", 4, tw_pulp_lw(*p))
TW_PULP_LOAD_STEP(tw_pulp_lb_step, int32_t, ".insn r 0x0B, 7, 0x00,", 1, **p)

#if TW_PULP_ARM
/* sxtb16 of x rotated right by 8 (lanes 1 and 3 as halfwords): one instruction, which the
 * compiler does not form from a rotate and __sxtb16 (a pure asm: equal ones are shared) */
TW_PULP_INLINE uint32_t tw_pulp_sxtb16_ror8(uint32_t x)
{
    uint32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}

/* The 4 lanes of v as two halfword-pair words: dst[0] = (lane 0, lane 2), dst[1] = (lane 1,
 * lane 3) — the operands of smlad / smlabb / smlatt, unpacked once and reused. */
TW_PULP_INLINE void tw_pulp_unpack2(int32_t *dst, uint32_t v)
{
    dst[0] = (int32_t)__sxtb16(v);
    dst[1] = (int32_t)tw_pulp_sxtb16_ror8(v);
}
#endif

/* pv.sdotsp.b: acc + a.lane0*b.lane0 + ... + a.lane3*b.lane3 (int8 x int8 into int32). */
TW_PULP_INLINE int32_t tw_pulp_sdotp4(int32_t acc, tw_v4_t a, tw_v4_t b)
{
#if TW_PULP_ASM
    __asm__(".insn r 0x57, 1, 0x5C, %0, %1, %2" : "+r"(acc) : "r"(a), "r"(b));
    return acc;
#elif TW_PULP_ARM
    /* lanes 0, 2 and 1, 3 sign-extended to halfwords, two dual 16-bit MACs */
    acc = __smlad(__sxtb16(a), __sxtb16(b), acc);
    return __smlad(tw_pulp_sxtb16_ror8(a), tw_pulp_sxtb16_ror8(b), acc);
#else
    int i;
    uint32_t s = (uint32_t)acc;
    for (i = 0; i < 4; i++)
        s += (uint32_t)(tw_pulp_lane(a, i) * tw_pulp_lane(b, i));
    return (int32_t)s;
#endif
}

/* A binary operation: the one instruction `insn` on RISC-V, `expr` (of a and b) elsewhere. */
#if TW_PULP_ASM
#define TW_PULP_BINARY(name, type, insn, expr)                                              \
    TW_PULP_INLINE type name(type a, type b)                                                \
    {                                                                                       \
        type r;                                                                             \
        __asm__(insn " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));                             \
        return r;                                                                           \
    }
#else
#define TW_PULP_BINARY(name, type, insn, expr)                                              \
    TW_PULP_INLINE type name(type a, type b)                                                \
    {                                                                                       \
        return expr;                                                                        \
    }
#endif

/* The lanes of a and b combined lane by lane: the larger (max != 0) or the smaller. */
TW_PULP_INLINE tw_v4_t tw_pulp_lanewise(tw_v4_t a, tw_v4_t b, int max)
{
    int32_t r[4];
    int i;
    for (i = 0; i < 4; i++) {
        int32_t x = tw_pulp_lane(a, i), y = tw_pulp_lane(b, i);
        r[i] = (x > y) == (max != 0) ? x : y;
    }
    return tw_pulp_pack4(r[0], r[1], r[2], r[3]);
}

/* p.max / p.min: signed maximum and minimum */
TW_PULP_BINARY(tw_pulp_max, int32_t, ".insn r 0x33, 6, 0x02,", a > b ? a : b)
TW_PULP_BINARY(tw_pulp_min, int32_t, ".insn r 0x33, 4, 0x02,", a < b ? a : b)
/* pv.max.b / pv.min.b: lane-wise signed maximum and minimum */
TW_PULP_BINARY(tw_pulp_max4, tw_v4_t, ".insn r 0x57, 1, 0x18,", tw_pulp_lanewise(a, b, 1))
TW_PULP_BINARY(tw_pulp_min4, tw_v4_t, ".insn r 0x57, 1, 0x10,", tw_pulp_lanewise(a, b, 0))
/* mulh / mulhu (RV32M, 5 cycles on RI5CY): the high word of the signed / unsigned product */
TW_PULP_BINARY(tw_pulp_mulh, int32_t, "mulh",
               (int32_t)(uint32_t)((uint64_t)((int64_t)a * (int64_t)b) >> 32))
TW_PULP_BINARY(tw_pulp_mulhu, uint32_t, "mulhu", (uint32_t)(((uint64_t)a * (uint64_t)b) >> 32))

/* x clamped to [lo, hi] (lo <= hi). */
TW_PULP_INLINE int32_t tw_pulp_clamp(int32_t x, int32_t lo, int32_t hi)
{
    return tw_pulp_min(tw_pulp_max(x, lo), hi);
}

/* Floor (arithmetic) right shift by n in [0, 31] (tw_asr32 of tw_common.h: portable C; one sra
 * on RISC-V). */
TW_PULP_INLINE int32_t tw_pulp_asr(int32_t x, int32_t n)
{
#if TW_PULP_ASM
    return x >> n;
#else
    return x < 0 ? ~(~x >> n) : x >> n;
#endif
}

#endif /* TW_PULP_ISA_H */
