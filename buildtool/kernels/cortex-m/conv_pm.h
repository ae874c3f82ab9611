/* The cortex-m set's patch-matrix convolution loops (im2col.h), one static inline function: the
 * bt_conv_s8_pm* variants (conv.c) instantiate it for any layer, and model.c for each of its
 * patch-matrix layers with that layer's parameters as constants (BT_CONV_PM_INLINE, bt_variants.h),
 * so gcc folds the shape, strides, offsets and loop bounds into the code. */
#ifndef BT_CONV_PM_H
#define BT_CONV_PM_H
/* With a layer's constants gcc warns about the int32 overflow of the tail loops' trip counts on paths
 * that never run (iteration 2^31 / K): the loops stop at the layer's n, so the warning is silenced. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
#include "bt_kernels.h"
#include "requant.h"
#include "dsp.h"
#include "im2col.h"

#define BT_PM3_T 8   /* triples of pixels widened at once on the 3-pixel path (their columns share 3 BT_COL3) */

/* The patch-matrix path's bt_rq2 condition: bt_rq2_ok's (requant.h), except that a channel whose
 * multiplier is 0 may have any shift in [-31, 31] (TFLite writes multiplier 0, shift 0 for a channel of
 * scale 0, as in vww's 1x1 layers): its output is the zero point with either requantisation, and
 * bt_pm_shift hands bt_rq2 a shift in its range for it. */
static inline int bt_pm_rq2_ok(const int32_t *mult, const int32_t *shift, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    const int32_t m = mult[i], s = shift[i];
    if (m == 0 ? (s < -31 || s > 31) : (m < (1 << 30) || s > -2 || s < -31)) return 0;
  }
  return 1;
}
static inline int32_t bt_pm_shift(int32_t s) { return s > -2 ? -2 : s; }
#define BT_PM_P2(s) bt_rq2_p2(bt_pm_shift(s))
#define BT_PM_E1(s) bt_rq2_e1(bt_pm_shift(s))

/* fast 2, the doubled sums: the columns hold 2 (x + off) and the sums start from 2 bias, so an accumulator is
 * a2 = 2a and SMMLAR(a2, m, R) = R + floor((a m + 2^30) / 2^31) = R + h, TFLite's SaturatingRoundingDoublingHighMul
 * for m >= 2^30 (or m = 0); with R = 2^(e-1) - [a < 0] (+ zp 2^e) an ASR by e = -shift is its
 * RoundingDivideByPOT (bt_rq2's floor form, requant.h) (plus zp): ADD, SMMLAR, ASR per output instead of bt_rq2's
 * AND, ORR, ADD, SMLAL, ASR. Needs bt_pm_rq2_ok and |bias| + K 255 128 < 2^30 on every channel (2a in int32),
 * which code generation checks (kernel_variants.py doubled_ok): no run-time check, so only model.c calls it.
 * bt_smmlar: dsp.h. */
static inline __attribute__((always_inline)) int32_t bt_rq2m(int32_t a2, int32_t m, int32_t s) {
  const int32_t e = -bt_pm_shift(s);
  return bt_smmlar(a2, m, (1 << (e - 1)) + (a2 >> 31)) >> e;
}

/* Requantised, clamped output of one accumulator: fast 1 takes bt_rq2 (p2, e1 from the shift), 2 bt_rq2m
 * (doubled sums), 0 bt_mbqm_fast; act 2: the activation range is the whole int8 range (one SSAT), act 1: its upper
 * bound is 127 (SSAT, then the lower bound: act_min >= -128), act 0: any range. */
static inline __attribute__((always_inline)) int32_t bt_pm_out(int32_t acc, int32_t m, int32_t s, int32_t p2, int32_t e1,
                                                           int32_t zp, int32_t lo, int32_t hi, const int fast,
                                                           const int act) {
  const int32_t v = (fast == 2 ? bt_rq2m(acc, m, s) : fast ? bt_rq2(acc, m, p2, e1) : bt_mbqm_fast(acc, m, s)) + zp;
  if (act == 2) return bt_ssat8(v);
  if (act == 1) { const int32_t t = bt_ssat8(v); return t < lo ? lo : t; }
  return bt_clamp(v, lo, hi);
}

/* The 3-pixel path's six sums of a pair of output channels requantised and stored in asm (gcc's own code
 * for them reloaded the channels' constants from the stack for every output): bt_rq2 (AND, ORR, ADD,
 * SMLAL, ASR), the output zero point folded into the rounding word when both channels allow it
 * (bt_rq2_zp_ok: ZA empty) or one ADD, SSAT #8 (act 2: the activation range is all of int8), STRB at
 * pixel q's output o + q*ops (the band's outputs are in raster order, ops apart). k = {m0, p0, e0, m1,
 * p1, e1}, each channel's three words by one LDM into r8-r10 (bt_mm3x2's column registers, free after it: 4
 * cycles against LDRD + LDR's 5; kws's 1x1 layers ~2.6 K est. high each). Only with a layer's constant output
 * pixel stride (the store offsets are immediates), DSP and optimised. */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)
/* One sum A requantised into OUT (operand names): bt_rq2 with the scratch words LO, HI and the channel's M, PZ
 * (rounding word, the zero point folded or not), E; ZA(OUT) adds the zero point when not folded (BT_PM_ZP) or
 * nothing (BT_PM_NZ); SSAT #8. BT_PM_RQM_ASM: the doubled-sum form (ADD into T, SMMLAR, ASR). Shared by
 * bt_pm_rq6 / bt_pm_rqm6 and bt_pm_loop3. */
#define BT_PM_RQ2_ASM(LO, HI, A, M, PZ, E, OUT, ZA)           \
  "and %[" LO "], %[" A "], #0x80000000\n\t"                 \
  "orr %[" LO "], %[" LO "], #0x40000000\n\t"                \
  "add %[" HI "], %[" PZ "], %[" A "], asr #31\n\t"          \
  "smlal %[" LO "], %[" HI "], %[" A "], %[" M "]\n\t"       \
  "asr %[" OUT "], %[" HI "], %[" E "]\n\t" ZA(OUT)          \
  "ssat %[" OUT "], #8, %[" OUT "]\n\t"
#define BT_PM_RQM_ASM(T, A, M, PZ, E, OUT, ZA)                \
  "add %[" T "], %[" PZ "], %[" A "], asr #31\n\t"           \
  "smmlar %[" OUT "], %[" A "], %[" M "], %[" T "]\n\t"      \
  "asr %[" OUT "], %[" OUT "], %[" E "]\n\t" ZA(OUT)         \
  "ssat %[" OUT "], #8, %[" OUT "]\n\t"
#define BT_PM_ZP(X) "add %[" X "], %[" X "], %[zp]\n\t"
#define BT_PM_NZ(X) ""
#define BT_PM_RQ_ONE(a, ZA, OFS)                          \
  BT_PM_RQ2_ASM("lo", "hi", a, "m", "pz", "e", "hi", ZA)    \
  "strb %[hi], [%[o], %[" OFS "]]\n\t"
#define BT_PM_RQ6(ZA)                                                                   \
  "ldm %[k]!, {%[m], %[pz], %[e]}\n\t"                                                   \
  BT_PM_RQ_ONE("a00", ZA, "s00") BT_PM_RQ_ONE("a10", ZA, "s10") BT_PM_RQ_ONE("a20", ZA, "s20") \
  "ldm %[k], {%[m], %[pz], %[e]}\n\t"                                                    \
  BT_PM_RQ_ONE("a01", ZA, "s01") BT_PM_RQ_ONE("a11", ZA, "s11") BT_PM_RQ_ONE("a21", ZA, "s21")
#define BT_PM_RQM_ONE(a, ZA, OFS)                         \
  BT_PM_RQM_ASM("hi", a, "m", "pz", "e", "hi", ZA)         \
  "strb %[hi], [%[o], %[" OFS "]]\n\t"
#define BT_PM_RQM6(ZA)                                                                     \
  "ldm %[k]!, {%[m], %[pz], %[e]}\n\t"                                                      \
  BT_PM_RQM_ONE("a00", ZA, "s00") BT_PM_RQM_ONE("a10", ZA, "s10") BT_PM_RQM_ONE("a20", ZA, "s20") \
  "ldm %[k], {%[m], %[pz], %[e]}\n\t"                                                       \
  BT_PM_RQM_ONE("a01", ZA, "s01") BT_PM_RQM_ONE("a11", ZA, "s11") BT_PM_RQM_ONE("a21", ZA, "s21")
#define BT_PM_RQ_OPS                                                                                   \
  : [lo] "=&r"(lo_), [hi] "=&r"(hi_), [m] "=&r"(m_), [pz] "=&r"(pz_), [e] "=&r"(e_), [k] "+r"(k)     \
  : [a00] "r"(acc[0]), [a01] "r"(acc[1]), [a10] "r"(acc[2]), [a11] "r"(acc[3]), [a20] "r"(acc[4]),   \
    [a21] "r"(acc[5]), [o] "r"(o), [s00] "i"(0), [s01] "i"(1), [s10] "i"(OPS),           \
    [s11] "i"(OPS + 1), [s20] "i"(2 * OPS), [s21] "i"(2 * OPS + 1)
#define BT_PM_RQM_OPS                                                                                  \
  : [hi] "=&r"(hi_), [m] "=&r"(m_), [pz] "=&r"(pz_), [e] "=&r"(e_), [k] "+r"(k)                        \
  : [a00] "r"(acc[0]), [a01] "r"(acc[1]), [a10] "r"(acc[2]), [a11] "r"(acc[3]), [a20] "r"(acc[4]),   \
    [a21] "r"(acc[5]), [o] "r"(o), [s00] "i"(0), [s01] "i"(1), [s10] "i"(OPS),           \
    [s11] "i"(OPS + 1), [s20] "i"(2 * OPS), [s21] "i"(2 * OPS + 1)
static inline __attribute__((always_inline)) void bt_pm_rq6(const int32_t *acc, const int32_t *k, int8_t *o,
                                                            const int32_t OPS, const int folded, int32_t zp) {
  uint32_t lo_, hi_;
  register uint32_t m_ __asm__("r8"), pz_ __asm__("r9"), e_ __asm__("r10");   /* an LDM's list is in register order */
  if (folded) __asm__ volatile(BT_PM_RQ6(BT_PM_NZ) BT_PM_RQ_OPS : "memory");
  else __asm__ volatile(BT_PM_RQ6(BT_PM_ZP) BT_PM_RQ_OPS, [zp] "r"(zp) : "memory");
}
/* The same for doubled sums (fast 2): ADD, SMMLAR, ASR; k = {m0, R0, e0, m1, R1, e1}, R = 2^(e-1) (+ zp 2^e when
 * folded), e = -shift. */
static inline __attribute__((always_inline)) void bt_pm_rqm6(const int32_t *acc, const int32_t *k, int8_t *o,
                                                             const int32_t OPS, const int folded, int32_t zp) {
  uint32_t hi_;
  register uint32_t m_ __asm__("r8"), pz_ __asm__("r9"), e_ __asm__("r10");   /* an LDM's list is in register order */
  if (folded) __asm__ volatile(BT_PM_RQM6(BT_PM_NZ) BT_PM_RQM_OPS : "memory");
  else __asm__ volatile(BT_PM_RQM6(BT_PM_ZP) BT_PM_RQM_OPS, [zp] "r"(zp) : "memory");
}
/* A triple of a 1x1 read in place (pixels s, s + IPS, s + 2 IPS, K % 4 == 0 values each) widened into its
 * interleaved columns at c (BT_GROUPED(3, K)): per group of 4 values a word of each pixel, two SXTAB16 each (plus
 * two SADD16 for doubled sums), and one STM of the group's six words (a0, a1, a2, b0, b1, b2: r0-r5, an STM's list
 * is in register order), two groups a pass (an odd count enters at the second). bt_pm_col widened pixel by pixel
 * with a STR per word (and gcc rematerialised the offset word in its loop). Measured (est. high): kws's 1x1 layers
 * 716.7 K -> 706.1 K each; vww's 1x1 layers 48x48 of 8 values 843.5 K -> 808.3 K, 24x24 of 32 981.7 K -> 937.4 K,
 * 12x12 of 64 837.7 K -> 826.6 K, 6x6 of 128 ~761 K -> ~756 K. Only optimised with DSP (BT_PM_RQ6_ASM). */
#define BT_PM_W3_GROUP(D) BT_PM_W3_GROUPX(D, "%[I2]") "stmia %[c]!, {%[a0], %[a1], %[a2], %[b0], %[b1], %[b2]}\n\t"
/* A2: the third pixel's offset, the operand I2 or (a register stride, bt_pm_widen3r) I1 shifted; the stores after */
#define BT_PM_W3_GROUPX(D, A2)                               \
  "ldr %[a1], [%[s], %[I1]]\n\t"                              \
  "ldr %[a2], [%[s], " A2 "]\n\t"                              \
  "ldr %[a0], [%[s]], #4\n\t"                                 \
  "sxtab16 %[b0], %[o2], %[a0], ror #8\n\t"                   \
  "sxtab16 %[a0], %[o2], %[a0]\n\t"                           \
  "sxtab16 %[b1], %[o2], %[a1], ror #8\n\t"                   \
  "sxtab16 %[a1], %[o2], %[a1]\n\t"                           \
  "sxtab16 %[b2], %[o2], %[a2], ror #8\n\t"                   \
  "sxtab16 %[a2], %[o2], %[a2]\n\t" D
#define BT_PM_W3_DBL                                         \
  "sadd16 %[a0], %[a0], %[a0]\n\tsadd16 %[a1], %[a1], %[a1]\n\tsadd16 %[a2], %[a2], %[a2]\n\t" \
  "sadd16 %[b0], %[b0], %[b0]\n\tsadd16 %[b1], %[b1], %[b1]\n\tsadd16 %[b2], %[b2], %[b2]\n\t"
static inline __attribute__((always_inline)) void bt_pm_widen3(const int8_t *s, int16_t *c, const int32_t K,
                                                               const int32_t IPS, int32_t off2, const int dbl) {
  register uint32_t a0 __asm__("r0"), a1 __asm__("r1"), a2 __asm__("r2"), b0 __asm__("r3"), b1 __asm__("r4"),
      b2 __asm__("r5");
  int32_t n = K >> 2;
#define BT_PM_W3_OPS                                                                                      \
  : [s] "+r"(s), [c] "+r"(c), [n] "+r"(n), [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [b0] "=&r"(b0), \
    [b1] "=&r"(b1), [b2] "=&r"(b2)                                                                        \
  : [o2] "r"(off2), [I1] "i"(IPS), [I2] "i"(2 * IPS)                                                     \
  : "cc", "memory"
  if (n & 1) {
    n >>= 1;
    if (dbl) __asm__ volatile("b 2f\n1:\n\t" BT_PM_W3_GROUP(BT_PM_W3_DBL) "2:\n\t" BT_PM_W3_GROUP(BT_PM_W3_DBL)
                              "subs %[n], %[n], #1\n\tbpl 1b\n\t" BT_PM_W3_OPS);
    else __asm__ volatile("b 2f\n1:\n\t" BT_PM_W3_GROUP("") "2:\n\t" BT_PM_W3_GROUP("")
                          "subs %[n], %[n], #1\n\tbpl 1b\n\t" BT_PM_W3_OPS);
  } else {
    n >>= 1;
    if (dbl) __asm__ volatile("1:\n\t" BT_PM_W3_GROUP(BT_PM_W3_DBL) BT_PM_W3_GROUP(BT_PM_W3_DBL)
                              "subs %[n], %[n], #1\n\tbne 1b\n\t" BT_PM_W3_OPS);
    else __asm__ volatile("1:\n\t" BT_PM_W3_GROUP("") BT_PM_W3_GROUP("")
                          "subs %[n], %[n], #1\n\tbne 1b\n\t" BT_PM_W3_OPS);
  }
#undef BT_PM_W3_OPS
}
#ifdef BT_PM_SHARED
/* The same with a run-time pixel stride IPS in a register (the third pixel at IPS << 1: one register fewer), the
 * six words stored by three STRDs (no fixed registers: an STM's list in r0-r5 left gcc no registers in
 * bt_conv_s8_pm_rq2_ssat_lo, "impossible constraints"), one loop for either parity (an odd count enters at the
 * second group): the shared variants' 1x1 read in place and
 * their KxK triples inside the image (filter row by filter row), whose bt_pm_col_call per pixel (a call, the
 * geometry's tests, a STR per word and a branch on dbl per group) took ~3.3-3.8 instructions a value. */
static inline __attribute__((always_inline)) void bt_pm_widen3r(const int8_t *s, int16_t *c, const int32_t K,
                                                                const int32_t IPS, int32_t off2, const int dbl) {
  uint32_t a0, a1, a2, b0, b1, b2;
  int32_t n = K >> 2;
#define BT_PM_W3R_G(D)                                                                                    \
  BT_PM_W3_GROUPX(D, "%[I1], lsl #1")                                                                     \
  "strd %[a0], %[a1], [%[c]]\n\tstrd %[a2], %[b0], [%[c], #8]\n\tstrd %[b1], %[b2], [%[c], #16]\n\tadds %[c], #24\n\t"
#define BT_PM_W3R(D)                                                                                      \
  "lsrs %[n], %[n], #1\n\tbcs 2f\n\tsub %[n], %[n], #1\n1:\n\t" BT_PM_W3R_G(D) "2:\n\t" BT_PM_W3R_G(D)      \
  "subs %[n], %[n], #1\n\tbpl 1b\n\t"                                                                     \
  : [s] "+r"(s), [c] "+r"(c), [n] "+r"(n), [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [b0] "=&r"(b0), \
    [b1] "=&r"(b1), [b2] "=&r"(b2)                                                                        \
  : [o2] "r"(off2), [I1] "r"(IPS)                                                                         \
  : "cc", "memory"
  if (dbl) __asm__ volatile(BT_PM_W3R(BT_PM_W3_DBL));
  else __asm__ volatile(BT_PM_W3R(""));
#undef BT_PM_W3R
#undef BT_PM_W3R_G
}
#endif
#undef BT_PM_W3_DBL
/* bt_pm_rq6 / bt_pm_rqm6 (fast 1 / 2) without the stores, for a run-time output pixel stride (the shared variants,
 * conv.c): the six sums of acc requantised in place (SSAT #8: act 2), the caller stores them. gcc's own code for
 * bt_pm_out reloaded the channels' constants from the stack for every output. */
#define BT_PM_RQR_ONE(A, ZA) BT_PM_RQ2_ASM("lo", "hi", A, "m", "pz", "e", A, ZA)
#define BT_PM_RQMR_ONE(A, ZA) BT_PM_RQM_ASM("hi", A, "m", "pz", "e", A, ZA)
#define BT_PM_RQR6(ONE, ZA)                                                                   \
  "ldm %[k], {%[m], %[pz], %[e]}\n\t" ONE("a00", ZA) ONE("a10", ZA) ONE("a20", ZA)            \
  "ldr %[m], [%[k], #12]\n\tldr %[pz], [%[k], #16]\n\tldr %[e], [%[k], #20]\n\t"              \
  ONE("a01", ZA) ONE("a11", ZA) ONE("a21", ZA)
#define BT_PM_RQR_OPS                                                                                \
  : [lo] "=&r"(lo_), [hi] "=&r"(hi_), [m] "=&r"(m_), [pz] "=&r"(pz_), [e] "=&r"(e_), [a00] "+r"(acc[0]), \
    [a01] "+r"(acc[1]), [a10] "+r"(acc[2]), [a11] "+r"(acc[3]), [a20] "+r"(acc[4]), [a21] "+r"(acc[5])  \
  : [k] "r"(k)
static inline __attribute__((always_inline)) void bt_pm_rqr6(int32_t *acc, const int32_t *k, const int folded,
                                                             int32_t zp, const int fast) {
  uint32_t lo_, hi_;
  register uint32_t m_ __asm__("r8"), pz_ __asm__("r9"), e_ __asm__("r10");   /* an LDM's list is in register order */
  if (fast == 2) {
    if (folded) __asm__ volatile(BT_PM_RQR6(BT_PM_RQMR_ONE, BT_PM_NZ) BT_PM_RQR_OPS : "memory");
    else __asm__ volatile(BT_PM_RQR6(BT_PM_RQMR_ONE, BT_PM_ZP) BT_PM_RQR_OPS, [zp] "r"(zp) : "memory");
  } else {
    if (folded) __asm__ volatile(BT_PM_RQR6(BT_PM_RQR_ONE, BT_PM_NZ) BT_PM_RQR_OPS : "memory");
    else __asm__ volatile(BT_PM_RQR6(BT_PM_RQR_ONE, BT_PM_ZP) BT_PM_RQR_OPS, [zp] "r"(zp) : "memory");
  }
  (void)lo_;
}
#ifdef BT_PM_SHARED
/* The shared variants' whole triple loop of one pair of output channels in one asm (bt_pm_loop3's for a run-time K
 * and output pixel stride): per triple bt_mm3x2's run-time-K groups (BT_MM3X2_STEP_R; the first, BT_MM3X2_STEP0_R,
 * starts the sums from the biases; the other K / 4 - 1 in passes of eight, the first entered at (K / 4 - 1) % 8 from
 * the pass's end: the address found once a call by the table's LDRH and taken by LDR pc a triple, 4 est. cycles
 * against SUB, UBFX, TBH's 6.5), the requantisation (bt_rq2 or bt_rq2m, the output zero point folded into the
 * rounding words, SSAT #8), a pixel's two outputs one STRH (BFI), then the next triple. A pair whose zero point does
 * not fold (bt_pm_k6) takes the C loop (bt_mm3x2, bt_pm_rqr6, the STRBs), which reloaded the column, filter and output
 * pointers, K and the biases from the stack and tested K's tail and the fold for every triple (~95 of vww's 1x1 of 8
 * values' ~137 instructions a triple). Its 14 registers leave none for the words of s: the asm pushes s, the filter
 * row's end and the entry (three words below SP while it runs, popped at its end) and reads them from SP; s is a
 * local of the variant (at col's end, past SP's 4095 bytes, gcc built each of its addresses with an ADD.W). Needs
 * K % 4 == 0 and K >= 8. */
typedef struct {
  int32_t k[8];        /* b0, b1, m0, p0, e0, m1, p1, e1 (bt_pm_k6's constants, the zero point folded) */
  int8_t *o;           /* 32: the next triple's outputs */
  int32_t ops;         /* 36: the output pixel stride */
  const int16_t *end;  /* 40: the columns' end */
  const int8_t *f0;    /* 44: the filter rows */
  int32_t K;           /* 48 */
} bt_pm_l3r;
#define BT_MM3X2_STEP0_R                                      \
  "ldr %[wb], [%[f], %[K]]\n\t"                               \
  "ldr %[wa], [%[f]]\n\t"                                     \
  BT_MM3X2_LD3                                                \
  "sxtb16 %[wa], %[wa]\n\t"                                   \
  "smlad %[a10], %[wa], %[x1], %[a00]\n\t"                    \
  "smlad %[a20], %[wa], %[x2], %[a00]\n\t"                    \
  "smlad %[a00], %[wa], %[x0], %[a00]\n\t"                    \
  "sxtb16 %[wa], %[wb]\n\t"                                   \
  "smlad %[a11], %[wa], %[x1], %[a01]\n\t"                    \
  "smlad %[a21], %[wa], %[x2], %[a01]\n\t"                    \
  "smlad %[a01], %[wa], %[x0], %[a01]\n\t"                    \
  BT_MM3X2_STEP_R2
/* A sum requantised in place (m, rounding word with the zero point, e in x0-x2): bt_rq2m (T = wa) or bt_rq2 (wa, f) */
#define BT_PM_L3R_RQ2(A)                                                                      \
  "add %[wa], %[x1], %[" A "], asr #31\n\tsmmlar %[" A "], %[" A "], %[x0], %[wa]\n\t"         \
  "asr %[" A "], %[" A "], %[x2]\n\tssat %[" A "], #8, %[" A "]\n\t"
#define BT_PM_L3R_RQ1(A)                                                                      \
  "and %[wa], %[" A "], #0x80000000\n\torr %[wa], %[wa], #0x40000000\n\t"                       \
  "add %[f], %[x1], %[" A "], asr #31\n\tsmlal %[wa], %[f], %[" A "], %[x0]\n\t"                \
  "asr %[" A "], %[f], %[x2]\n\tssat %[" A "], #8, %[" A "]\n\t"
#define BT_PM_L3R(RQ)                                                                         \
  "str %[wa], [sp, #-4]!\n\tstr %[wb], [sp, #-4]!\n\tldr %[K], [%[wa], #48]\n\t"                 \
  "sub %[x0], %[K], #4\n\tubfx %[x0], %[x0], #2, #3\n\tadr %[x1], 0f\n\t"                         \
  "ldrh %[x0], [%[x1], %[x0], lsl #1]\n\tadd %[x0], %[x1], %[x0]\n\torr %[x0], %[x0], #1\n\t"       \
  "str %[x0], [sp, #-4]!\n\t"                                                                  \
  "ldr %[a00], [%[wa]]\n\tldr %[a01], [%[wa], #4]\n\tldr %[f], [%[wa], #44]\n\tb 1f\n\t"       \
  ".p2align 2\n0:\n\t.hword 10f - 0b, 17f - 0b, 16f - 0b, 15f - 0b, 14f - 0b, 13f - 0b, 12f - 0b, 11f - 0b\n" \
  "1:\n\t" BT_MM3X2_STEP0_R "ldr pc, [sp]\n"                                                   \
  "10:\n\t" BT_MM3X2_STEP_R "11:\n\t" BT_MM3X2_STEP_R "12:\n\t" BT_MM3X2_STEP_R               \
  "13:\n\t" BT_MM3X2_STEP_R "14:\n\t" BT_MM3X2_STEP_R "15:\n\t" BT_MM3X2_STEP_R               \
  "16:\n\t" BT_MM3X2_STEP_R "17:\n\t" BT_MM3X2_STEP_R                                         \
  "ldr %[wa], [sp, #4]\n\tldr %[wb], [sp, #8]\n\tcmp %[f], %[wa]\n\tbne 10b\n\t"                  \
  "ldr %[x0], [%[wb], #8]\n\tldr %[x1], [%[wb], #12]\n\tldr %[x2], [%[wb], #16]\n\t" \
  RQ("a00") RQ("a10") RQ("a20")                                                               \
  "ldr %[x0], [%[wb], #20]\n\tldr %[x1], [%[wb], #24]\n\tldr %[x2], [%[wb], #28]\n\t"         \
  RQ("a01") RQ("a11") RQ("a21")                                                               \
  "bfi %[a00], %[a01], #8, #8\n\tbfi %[a10], %[a11], #8, #8\n\tbfi %[a20], %[a21], #8, #8\n\t"  \
  "ldr %[f], [%[wb], #32]\n\tldr %[x0], [%[wb], #36]\n\t"                                     \
  "strh %[a00], [%[f]]\n\tstrh %[a10], [%[f], %[x0]]\n\tadd %[f], %[f], %[x0], lsl #1\n\t"      \
  "strh %[a20], [%[f]]\n\tadd %[f], %[f], %[x0]\n\tstr %[f], [%[wb], #32]\n\t"                \
  "ldr %[wa], [%[wb], #40]\n\tldr %[a00], [%[wb]]\n\tldr %[a01], [%[wb], #4]\n\t"              \
  "ldr %[f], [%[wb], #44]\n\t"                                                                \
  "cmp %[c], %[wa]\n\tbne 1b\n\tadd sp, sp, #12\n\t"                                           \
  : [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), [a20] "=&r"(a20), [a21] "=&r"(a21), \
    [c] "+r"(c), [f] "=&r"(f), [K] "=&r"(K), [wa] "+r"(wa), [wb] "+r"(wb), [x0] "=&r"(x0), [x1] "=&r"(x1),   \
    [x2] "=&r"(x2)                                                                                         \
  :                                                                                                        \
  : "cc", "memory"
static inline __attribute__((always_inline)) void bt_pm_loop3r(const int16_t *c, bt_pm_l3r *s, const int fast) {
  uint32_t a00, a01, a10, a11, a20, a21, f, K, x0, x1, x2;
  uint32_t wa = (uint32_t)s, wb = (uint32_t)(s->f0 + s->K);   /* pushed: s, the filter row's end */
  if (fast == 2) __asm__ volatile(BT_PM_L3R(BT_PM_L3R_RQ2));
  else __asm__ volatile(BT_PM_L3R(BT_PM_L3R_RQ1));
}
#undef BT_PM_L3R
#undef BT_PM_L3R_RQ1
#undef BT_PM_L3R_RQ2
#endif  /* BT_MM3X2_STEP0_R stays: conv_kxk.h runs it too */
#undef BT_PM_RQR_OPS
#undef BT_PM_RQR6
#undef BT_PM_RQMR_ONE
#undef BT_PM_RQR_ONE
#undef BT_PM_W3_GROUP
#undef BT_PM_RQM_OPS
#undef BT_PM_RQ_OPS
#undef BT_PM_RQ6
#undef BT_PM_RQ_ONE
#undef BT_PM_RQM6
#undef BT_PM_RQM_ONE
#define BT_PM_RQ6_ASM 1
#else
#define BT_PM_RQ6_ASM 0
#define BT_PM_L3_ROOM(p, K, OPS) 0
#endif

#if BT_PM_RQ6_ASM
/* The row-buffer path (bt_conv_pmr below) for a layer's constant KxK conv (kh <= 3) with c_in % 4 == 0: each input
 * row is widened once into a ring of kh zero-padded int16 rows (bt_widen_x's order: [v0, v2][v1, v3] per group of
 * 4 values, so the weights' SXTB16 halves pair up; 0 at padding after the offset fold), and the asm reads the
 * output pixels' words straight from it: pixel q's word at a constant q * D1 bytes from pixel 0's, D1 = stride_w *
 * c_in * 2 (LDRs with immediate offsets, each single load after the first pipelined: 10 load cycles per group
 * against bt_mm3x2's 2 LDM + 2 LDR, 11), a filter row's kh runs of kw*c_in values in kh ring rows. No columns:
 * bt_conv_pm widened every input value once per output pixel whose window covers it (9 times for a 3x3 of stride
 * 1: ResNet-8's 32x32 layers spent ~0.5 M of their 3.52 M estimated high cycles on it). Measured (MLPerf Tiny
 * ResNet-8, est. high cycles): ops 1/2 3.52 -> 2.92 M, op 5 3.17 -> 2.83 M, op 9 3.03 -> 2.79 M, op 4 1.66 ->
 * 1.53 M, op 8 1.55 -> 1.44 M; the model 18.20 -> 16.18 M (0.918 -> 0.816 of the record), its instructions
 * 13.19 -> 14.22 M (three LDRs where an LDM moved three words: more instructions, fewer cycles). */
#define BT_PMR_SM3(w, x0, x1, x2, a0, a1, a2)                 \
  "smlad %[" a0 "], %[" w "], %[" x0 "], %[" a0 "]\n\t"       \
  "smlad %[" a1 "], %[" w "], %[" x1 "], %[" a1 "]\n\t"       \
  "smlad %[" a2 "], %[" w "], %[" x2 "], %[" a2 "]\n\t"
/* One group of 4 values of three pixels times 4 weights of two filter rows (f, f + K): 8 LDR + 4 SXTB16 +
 * 12 SMLAD per 24 MACs (26 estimated cycles at the high end against bt_mm3x2's 27). c moves 8 bytes. */
#define BT_PMR3_STEPX(END)                                    \
  "ldr %[x1], [%[c], %[D1]]\n\t"                              \
  "ldr %[x2], [%[c], #(%c[D1] * 2)]\n\t"                              \
  "ldr %[x0], [%[c]], #8\n\t"                                 \
  "ldr %[wb], [%[f], %[K]]\n\t"                               \
  "ldr %[wa], [%[f]], #4\n\t"                                 \
  "sxtb16 %[t], %[wa]\n\t"                                    \
  BT_PMR_SM3("t", "x0", "x1", "x2", "a00", "a10", "a20")      \
  "sxtb16 %[t], %[wb]\n\t"                                    \
  BT_PMR_SM3("t", "x0", "x1", "x2", "a01", "a11", "a21")      \
  "ldr %[x0], [%[c], #-4]\n\t"                                \
  "ldr %[x1], [%[c], #(%c[D1] - 4)]\n\t"                             \
  "ldr %[x2], [%[c], #(%c[D1] * 2 - 4)]\n\t"                             \
  END                                                         \
  "sxtb16 %[wa], %[wa], ror #8\n\t"                           \
  BT_PMR_SM3("wa", "x0", "x1", "x2", "a00", "a10", "a20")     \
  "sxtb16 %[wb], %[wb], ror #8\n\t"                           \
  BT_PMR_SM3("wb", "x0", "x1", "x2", "a01", "a11", "a21")
#define BT_PMR3_STEP BT_PMR3_STEPX("")
/* BT_PMR_COMPACT's last group of a pass: t is free after the first half, its load of the loop's end (fc) follows
 * a load (pipelined) */
#define BT_PMR3_STEPL BT_PMR3_STEPX("ldr %[t], %[fc]\n\t")
/* Two pixels (a row's last two) times three filter rows (f, f + K, f + 2K): 7 LDR + 6 SXTB16 + 12 SMLAD per 24
 * MACs (27 estimated cycles at the high end; two pixels by two rows took 20 per 16: ResNet-8's 8x8 layers, a
 * quarter of their pixels in pairs, 2.85 -> 2.79 M and 1.47 -> 1.44 M est. high); STEP0 the first group, the sums
 * from the biases in a00, a01, a02. */
#define BT_PMR23_A(W, A0, A1)                                 \
  "sxtb16 %[t], %[" W "]\n\t"                                 \
  "smlad %[" A1 "], %[t], %[x1], %[" A0 "]\n\t"               \
  "smlad %[" A0 "], %[t], %[x0], %[" A0 "]\n\t"
#define BT_PMR23_B(W, A0, A1)                                 \
  "sxtb16 %[" W "], %[" W "], ror #8\n\t"                     \
  "smlad %[" A0 "], %[" W "], %[x0], %[" A0 "]\n\t"           \
  "smlad %[" A1 "], %[" W "], %[x1], %[" A1 "]\n\t"
#define BT_PMR23_LOADS                                        \
  "ldr %[x1], [%[c], %[D1]]\n\t"                              \
  "ldr %[x0], [%[c]], #8\n\t"                                 \
  "ldr %[wb], [%[f], %[K]]\n\t"                               \
  "ldr %[wc], [%[f], #(%c[K] * 2)]\n\t"                       \
  "ldr %[wa], [%[f]], #4\n\t"
#define BT_PMR23_REST                                         \
  "ldr %[x0], [%[c], #-4]\n\t"                                \
  "ldr %[x1], [%[c], #(%c[D1] - 4)]\n\t"                      \
  BT_PMR23_B("wa", "a00", "a10") BT_PMR23_B("wb", "a01", "a11") BT_PMR23_B("wc", "a02", "a12")
#define BT_PMR23_STEP0                                        \
  BT_PMR23_LOADS BT_PMR23_A("wa", "a00", "a10") BT_PMR23_A("wb", "a01", "a11") BT_PMR23_A("wc", "a02", "a12") \
  BT_PMR23_REST
#define BT_PMR23_STEP                                         \
  BT_PMR23_LOADS BT_PMR23_B2("wa", "a00", "a10") BT_PMR23_B2("wb", "a01", "a11") BT_PMR23_B2("wc", "a02", "a12") \
  BT_PMR23_REST
#define BT_PMR23_B2(W, A0, A1)                                \
  "sxtb16 %[t], %[" W "]\n\t"                                 \
  "smlad %[" A0 "], %[t], %[x0], %[" A0 "]\n\t"               \
  "smlad %[" A1 "], %[t], %[x1], %[" A1 "]\n\t"
/* One pixel (a row's last) times four filter rows (f + r K): 6 LDR + 8 SXTB16 + 8 SMLAD per 16 MACs. */
#define BT_PMR1_ONE(w, a)                                     \
  "sxtb16 %[t], %[" w "]\n\t"                                 \
  "smlad %[" a "], %[t], %[x0], %[" a "]\n\t"                 \
  "sxtb16 %[" w "], %[" w "], ror #8\n\t"                     \
  "smlad %[" a "], %[" w "], %[x1], %[" a "]\n\t"
#define BT_PMR1_STEP                                          \
  "ldr %[x1], [%[c], #4]\n\t"                                 \
  "ldr %[x0], [%[c]], #8\n\t"                                 \
  "ldr %[w1], [%[f], %[K]]\n\t"                               \
  "ldr %[w2], [%[f], #(%c[K] * 2)]\n\t"                              \
  "ldr %[w3], [%[f], #(%c[K] * 3)]\n\t"                              \
  "ldr %[w0], [%[f]], #4\n\t"                                 \
  BT_PMR1_ONE("w0", "a0") BT_PMR1_ONE("w1", "a1") BT_PMR1_ONE("w2", "a2") BT_PMR1_ONE("w3", "a3")
/* The three-pixel first group with a layer's constant patch: the sums start from the biases in a00 (b0) and
 * a01 (b1), as bt_mm3x2's BT_MM3X2_STEP0 (no copies of the biases into the other four sums). */
#define BT_PMR3_STEP0                                         \
  "ldr %[x1], [%[c], %[D1]]\n\t"                              \
  "ldr %[x2], [%[c], #(%c[D1] * 2)]\n\t"                              \
  "ldr %[x0], [%[c]], #8\n\t"                                 \
  "ldr %[wb], [%[f], %[K]]\n\t"                               \
  "ldr %[wa], [%[f]], #4\n\t"                                 \
  BT_MM3X2_LO0                                                \
  "ldr %[x0], [%[c], #-4]\n\t"                                \
  "ldr %[x1], [%[c], #(%c[D1] - 4)]\n\t"                             \
  "ldr %[x2], [%[c], #(%c[D1] * 2 - 4)]\n\t"                             \
  "sxtb16 %[wa], %[wa], ror #8\n\t"                           \
  BT_PMR_SM3("wa", "x0", "x1", "x2", "a00", "a10", "a20")     \
  "sxtb16 %[wb], %[wb], ror #8\n\t"                           \
  BT_PMR_SM3("wb", "x0", "x1", "x2", "a01", "a11", "a21")
/* N (an assembler expression, at most 31) copies of STEP: copies of 16, 8, 4, 2, 1 under .if (not .rept: gcc
 * sizes an asm by its lines, and under a .rept's real size it placed a literal pool out of reach). */
#define BT_PMR_X2(s) s s
#define BT_PMR_X4(s) BT_PMR_X2(s) BT_PMR_X2(s)
#define BT_PMR_X8(s) BT_PMR_X4(s) BT_PMR_X4(s)
#define BT_PMR_X16(s) BT_PMR_X8(s) BT_PMR_X8(s)
#define BT_PMR_REP(N, STEP)                                                                                  \
  ".if (" N ") & 16\n\t" BT_PMR_X16(STEP) ".endif\n\t.if (" N ") & 8\n\t" BT_PMR_X8(STEP)                 \
  ".endif\n\t.if (" N ") & 4\n\t" BT_PMR_X4(STEP) ".endif\n\t.if (" N ") & 2\n\t" BT_PMR_X2(STEP)         \
  ".endif\n\t.if (" N ") & 1\n\t" STEP ".endif\n\t"
/* A whole patch in one asm statement (the sums stay in their registers: between statements gcc moved them
 * around, 4 MOVs at each): kh (at most 3) runs of G groups, the next buffer row's run d1 / d2 bytes on from
 * where the last one ended (the ring's rows are in no fixed order: LDR + ADD); up to 24 groups a run is
 * straight code (FIRST: the first group), more a loop of 16 (the filter's end of each run's loop in memory:
 * no register left, compared with f) and G % 16 straight. */
#define BT_PMR_NEXT(D) "ldr %[t], %[" D "]\n\tadd %[c], %[c], %[t]\n\t"
#define BT_PMR_STRAIGHT(FIRST, STEP)                                                                         \
  FIRST BT_PMR_REP("%c[G] - 1", STEP)                                                                        \
  ".if %c[KH] > 1\n\t" BT_PMR_NEXT("d1") BT_PMR_REP("%c[G]", STEP) ".endif\n\t"                             \
  ".if %c[KH] > 2\n\t" BT_PMR_NEXT("d2") BT_PMR_REP("%c[G]", STEP) ".endif\n\t"
#define BT_PMR_LOOP1(L, FE, STEP)                                                                             \
  L ":\n\t" BT_PMR_X16(STEP) "ldr %[t], %[" FE "]\n\tcmp %[f], %[t]\n\tbne " L "b\n\t"                      \
  BT_PMR_REP("%c[G] & 15", STEP)
#define BT_PMR_LOOPED0(RUN0, STEP)                                                                           \
  RUN0                                                                                                       \
  ".if %c[KH] > 1\n\t" BT_PMR_NEXT("d1") BT_PMR_LOOP1("2", "fe1", STEP) ".endif\n\t"                        \
  ".if %c[KH] > 2\n\t" BT_PMR_NEXT("d2") BT_PMR_LOOP1("3", "fe2", STEP) ".endif\n\t"
#define BT_PMR_LOOPED(STEP) BT_PMR_LOOPED0(BT_PMR_LOOP1("1", "fe0", STEP), STEP)
/* The same, the first run's first 16 groups straight (FIRST the first of them), the rest of its loop after. */
#define BT_PMR_PEELED(FIRST, STEP)                                                                           \
  BT_PMR_LOOPED0(FIRST BT_PMR_REP("15", STEP) ".if %c[G] >= 32\n\t1:\n\t" BT_PMR_X16(STEP)                  \
                 "ldr %[t], %[fe0]\n\tcmp %[f], %[t]\n\tbne 1b\n\t.endif\n\t" BT_PMR_REP("%c[G] & 15", STEP),  \
                 STEP)
#define BT_PMR_RUNI                                                                                         \
  [G] "i"(G), [KH] "i"(kh), [d1] "m"(dl[0]), [d2] "m"(dl[1])
#define BT_PMR_RUNL , [fe0] "m"(fe[0]), [fe1] "m"(fe[1]), [fe2] "m"(fe[2])
/* The loop ends of f (G > 24) for a patch from f0, in fe (bt_conv_pmr's scratch words after its buffer). */
#define BT_PMR_FE for (int32_t i_ = 0; i_ < kh; i_++) fe[i_] = f0 + 4 * G * i_ + 64 * (G >> 4)
/* The compact form for a part whose instruction cache is small (BT_ICACHE_BYTES, a board define from its memory
 * model, buildtool/firmware/memory_model.py): the straight and looped forms above are kh copies of a run of up to
 * 24 (or 16) groups, 1.2-6 KB of code per patch, which a 1 KiB cache (nucleo-l4r5zi's ART) streams from flash on
 * every triple. Here one loop of U groups (U the largest of 4, 3, 2, 1 dividing G) serves every run: INIT starts
 * the sums from the biases (MOVs instead of a peeled first group), the loop runs until f reaches fc (fe[0]: the
 * run's end; STEPL, the pass's last group, leaves fc in t: bt_pmr3x2's loads it after its own last load, where
 * the TRM pipelines it, 1 cycle instead of 2 a pass), then, unless f is the patch's end (fe[2]), c moves on by d1 (f at run 0's end, fe[1]) or d2, and fc
 * by a run. fe is set per call (BT_PMR_FEC). */
#define BT_PMR_COMPACT(INIT, STEP, STEPL)                                                                    \
  INIT "1:\n\t" BT_PMR_REP("%c[U] - 1", STEP) STEPL "cmp %[f], %[t]\n\tbne 1b\n\t"                             \
  ".if %c[KH] > 1\n\t"                                                                                      \
  "ldr %[t], %[fe2]\n\tcmp %[f], %[t]\n\tbeq 3f\n\t"                                                         \
  "ldr %[t], %[fe1]\n\tcmp %[f], %[t]\n\tite eq\n\tldreq %[t], %[d1]\n\tldrne %[t], %[d2]\n\t"               \
  "add %[c], %[c], %[t]\n\tadd %[t], %[f], #(4 * %c[G])\n\tstr %[t], %[fc]\n\tb 1b\n"                        \
  "3:\n\t.endif\n\t"
#define BT_PMR_FCT "ldr %[t], %[fc]\n\t"   /* STEPL of a step that leaves t no room: the end's load after it */
#define BT_PMR_UNROLL(G) ((G) % 4 == 0 ? 4 : (G) % 3 == 0 ? 3 : (G) % 2 == 0 ? 2 : 1)
#define BT_PMR_FEC                                                                                           \
  do { fe[0] = f0 + 4 * G; fe[1] = fe[0]; fe[2] = f0 + 4 * G * kh; } while (0)
/* The build's default form (conv_stem.h's too): compact on a part with a small instruction cache. A call's form is
 * its `compact` argument (bt_conv_pm_form), a constant gcc folds: BT_PMR_COMPACT_ON for every call but model.c's
 * compact instance of a layer (bt_variants.h BT_CONV_PMC, the code budget's choice on any cortex-m part). */
#ifdef BT_ICACHE_BYTES
#define BT_PMR_COMPACT_ON 1
#else
#define BT_PMR_COMPACT_ON 0
#endif
/* A patch's asm: compact (the call's `compact`) COMPACT (FEC sets its loop ends: BT_PMR_FEC, or only the
 * first run's end, fe[0], where the caller set the other two for its patches of one filter row: bt_pmr_triples);
 * else over 24 groups a run LONG (its loop ends in fe), else SHORT; OUTS, INS the operand lists. */
#define BT_PMR_RUN(FEC, COMPACT, LONG, SHORT, OUTS, INS)                                                     \
  do {                                                                                                       \
    if (compact) {                                                                                           \
      FEC;                                                                                                   \
      __asm__ volatile(COMPACT OUTS, [fc] "+m"(fe[0]) INS, [U] "i"(BT_PMR_UNROLL(G)), [fe1] "m"(fe[1]),       \
                       [fe2] "m"(fe[2]) : "cc", "memory");                                                   \
    } else if (G > 24) {                                                                                     \
      BT_PMR_FE;                                                                                             \
      __asm__ volatile(LONG OUTS INS BT_PMR_RUNL : "cc", "memory");                                          \
    } else {                                                                                                 \
      __asm__ volatile(SHORT OUTS INS : "cc", "memory");                                                     \
    }                                                                                                        \
  } while (0)

/* acc = bt_mm3x2's sums of output pixels 0..2 (pixel q at c + q*D1 bytes, D1 = stride_w*c_in*2: pixel 0's first
 * value in the first buffer row) by filter rows f0 and f0 + K: kh runs of G = kw*c_in/4 groups, run ky + 1
 * dl[ky] bytes after run ky's end. Compact (compact) fe[1] and fe[2] are f0's (BT_PMR_FEC), set by the caller
 * (bt_pmr_triples: once for its triples, not a store and a load and a store each). */
static inline __attribute__((always_inline)) void bt_pmr3x2(const int16_t *c, const int8_t *f0, const int32_t K,
                                                             const int32_t kh, const int32_t G, const int32_t D1,
                                                             const int32_t *dl, const int8_t **fe, int32_t b0,
                                                             int32_t b1, int32_t *acc, const int compact) {
  int32_t a00 = b0, a01 = b1, a10, a11, a20, a21;
  const int8_t *f = f0;
  uint32_t wa, wb, t, x0, x1, x2;
#define BT_PMR3_OUTS                                                                                         \
  : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), [a20] "=&r"(a20), [a21] "=&r"(a21), \
    [c] "+r"(c), [f] "+r"(f), [wa] "=&r"(wa), [wb] "=&r"(wb), [t] "=&r"(t), [x0] "=&r"(x0), [x1] "=&r"(x1),   \
    [x2] "=&r"(x2)
#define BT_PMR3_INS                                                                                          \
  : [K] "i"(K), [D1] "i"(D1), BT_PMR_RUNI
  BT_PMR_RUN(fe[0] = f0 + 4 * G, BT_PMR_COMPACT("mov %[a10], %[a00]\n\tmov %[a20], %[a00]\n\tmov %[a11], %[a01]\n\tmov %[a21], %[a01]\n\t",
                             BT_PMR3_STEP, BT_PMR3_STEPL),
             BT_PMR_PEELED(BT_PMR3_STEP0, BT_PMR3_STEP), BT_PMR_STRAIGHT(BT_PMR3_STEP0, BT_PMR3_STEP),
             BT_PMR3_OUTS, BT_PMR3_INS);
#undef BT_PMR3_OUTS
#undef BT_PMR3_INS
  acc[0] = a00; acc[1] = a01; acc[2] = a10; acc[3] = a11; acc[4] = a20; acc[5] = a21;
}

/* The column form of the compact loop (BT_PMR_COMPACT_ON, bt_pmr_triples when BT_PMRC_FITS): no runs to move
 * between. The kh window rows of a patch lie in ring rows (S0 + ky) % kh, S0 the ring row of the window's first
 * input row (one per output row: bt_conv_pmr instantiates the loop for each), so c is the ring's row 0 (window
 * origin plus the triple's offset) and every load of a pass is an immediate offset from it: window row ky's group
 * u at c + ((S0 + ky) % kh) ROW + 8 u, its weights at f + 4 G ky + 4 u (ROW = a ring row's bytes). A pass is U
 * columns of kh groups (one a window row), G / U passes a patch, each pass's end test against the one loop end
 * fe[0] = f0 + 4 G, which bt_pmr_triples stores once per filter row: no run moves, no per-triple store.
 * c and f move on by post-indexed loads (c's in the group of ring row 0, f's in the first group), the loads after
 * them offset by -8 U and -4 U. */
#define BT_PMRC_RC(ky) "((" ky " + %c[S0]) %% %c[KH])"   /* ring row of window row ky */
#define BT_PMRC_XO(u, ky) "(" BT_PMRC_RC(ky) " * %c[ROW] + 8 * " u ")"
#define BT_PMRC_FO(u, ky) "(" ky " * 4 * %c[G] + 4 * " u ")"
/* the first half of a group: pixel words at XO - CA (X0: x0's load), weights at FO - FA (WA: wa's load) */
#define BT_PMRC_H1(u, ky, CA, X0, FA, WA)                                                                    \
  "ldr %[x1], [%[c], #(" BT_PMRC_XO(u, ky) " + %c[D1] - " CA ")]\n\t"                                      \
  "ldr %[x2], [%[c], #(" BT_PMRC_XO(u, ky) " + 2 * %c[D1] - " CA ")]\n\t" X0                               \
  "ldr %[wb], [%[f], #(" BT_PMRC_FO(u, ky) " + %c[K] - " FA ")]\n\t" WA                                     \
  "sxtb16 %[t], %[wa]\n\t"                                                                                   \
  BT_PMR_SM3("t", "x0", "x1", "x2", "a00", "a10", "a20")                                                     \
  "sxtb16 %[t], %[wb]\n\t"                                                                                   \
  BT_PMR_SM3("t", "x0", "x1", "x2", "a01", "a11", "a21")
/* the second half (CA: 8 U from the c group on), the loop end's load after the pass's last pixel load */
#define BT_PMRC_H2(u, ky, CA)                                                                                \
  "ldr %[x0], [%[c], #(" BT_PMRC_XO(u, ky) " + 4 - " CA ")]\n\t"                                            \
  "ldr %[x1], [%[c], #(" BT_PMRC_XO(u, ky) " + %c[D1] + 4 - " CA ")]\n\t"                                   \
  "ldr %[x2], [%[c], #(" BT_PMRC_XO(u, ky) " + 2 * %c[D1] + 4 - " CA ")]\n\t"                               \
  ".if (" u " == %c[U] - 1) && (" ky " == %c[KH] - 1)\n\tldr %[t], %[fc]\n\t.endif\n\t"                      \
  "sxtb16 %[wa], %[wa], ror #8\n\t"                                                                          \
  BT_PMR_SM3("wa", "x0", "x1", "x2", "a00", "a10", "a20")                                                    \
  "sxtb16 %[wb], %[wb], ror #8\n\t"                                                                          \
  BT_PMR_SM3("wb", "x0", "x1", "x2", "a01", "a11", "a21")
#define BT_PMRC_X0(u, ky, CA) "ldr %[x0], [%[c], #(" BT_PMRC_XO(u, ky) " - " CA ")]\n\t"
#define BT_PMRC_CU "(8 * %c[U])"
#define BT_PMRC_FU "(4 * %c[U])"
/* group (u, ky), FA / WA its weights' adjustment and wa's load: c's post-indexed load in the group of ring row 0
 * (u = 0), the groups after it (program order: u, then ky) at CU less */
#define BT_PMRC_GROUP(u, ky, FA, WA)                                                                         \
  ".if (" u " == 0) && (" BT_PMRC_RC(ky) " == 0)\n\t"                                                        \
  BT_PMRC_H1(u, ky, "0", "ldr %[x0], [%[c]], #(8 * %c[U])\n\t", FA, WA) BT_PMRC_H2(u, ky, BT_PMRC_CU)      \
  ".elseif (" u " > 0) || (((%c[KH] - %c[S0]) %% %c[KH]) < " ky ")\n\t"                                        \
  BT_PMRC_H1(u, ky, BT_PMRC_CU, BT_PMRC_X0(u, ky, BT_PMRC_CU), FA, WA) BT_PMRC_H2(u, ky, BT_PMRC_CU)         \
  ".else\n\t"                                                                                                \
  BT_PMRC_H1(u, ky, "0", BT_PMRC_X0(u, ky, "0"), FA, WA) BT_PMRC_H2(u, ky, "0") ".endif\n\t"
#define BT_PMRC_WA(u, ky) "ldr %[wa], [%[f], #(" BT_PMRC_FO(u, ky) " - " BT_PMRC_FU ")]\n\t"
#define BT_PMRC_G(u, ky) BT_PMRC_GROUP(u, ky, BT_PMRC_FU, BT_PMRC_WA(u, ky))
#define BT_PMRC_LOOP                                                                                         \
  "mov %[a10], %[a00]\n\tmov %[a20], %[a00]\n\tmov %[a11], %[a01]\n\tmov %[a21], %[a01]\n"                    \
  "1:\n\t" BT_PMRC_GROUP("0", "0", "0", "ldr %[wa], [%[f]], #(4 * %c[U])\n\t")                               \
  ".if %c[KH] > 1\n\t" BT_PMRC_G("0", "1") ".endif\n\t"                                                      \
  ".if %c[KH] > 2\n\t" BT_PMRC_G("0", "2") ".endif\n\t"                                                      \
  ".if %c[U] > 1\n\t" BT_PMRC_G("1", "0")                                                                    \
  ".if %c[KH] > 1\n\t" BT_PMRC_G("1", "1") ".endif\n\t"                                                      \
  ".if %c[KH] > 2\n\t" BT_PMRC_G("1", "2") ".endif\n\t"                                                      \
  ".endif\n\t"                                                                                               \
  "cmp %[f], %[t]\n\tbne 1b\n\t"
/* Columns a pass: two where G is even (ResNet-8's runs of 12, 24, 48: 576 bytes a pass), else one. Two fit the 1 KiB
 * cache beside the code between two channel pairs only with that code short (bt_conv_pmr's kt, bt_pmrc_pairs: with
 * bt_pm_k6 per pair they took 33-35 of the ART's 32 lines, 17.462 M modelled for ResNet-8 against 17.206 M with one
 * column a pass; 16.701 M now: python3 benchmarks/mlperf_tiny.py --boards nucleo-l4r5zi --models ic --profile). */
#define BT_PMRC_U(G) ((G) % 2 == 0 ? 2 : 1)
#define BT_PMRC_TMAX 64   /* most output channels of the column form (bt_conv_pmr's kt, 9 words a pair) */
#ifdef BT_ICACHE_BYTES
/* bt_conv_pmr's kt in the column form: static (1,152 bytes of .bss where a layer takes it): in the frame it put the
   frame over 4 KB, out of reach of the asm's SP-relative words (the shared variants' too: "impossible constraints") */
static int32_t bt_pmrc_kt[BT_PMRC_TMAX / 2 * 9] __attribute__((unused));
#define BT_PMRC_KT bt_pmrc_kt
#else
#define BT_PMRC_KT ((int32_t *)0)
#endif
/* the column form's offsets fit a load's 12-bit immediate */
#define BT_PMRC_FITS(kh, ROW, D1, G) (((kh) - 1) * (ROW) + 2 * (D1) + 8 * BT_PMRC_U(G) + 4 < 4096)
/* bt_pmr3x2's sums in the column form: c at ring row 0 (the triple's pixel 0 there), S0 the window's first ring row,
 * ROW bytes a ring row, fe[0] = f0 + 4 G. */
static inline __attribute__((always_inline)) void bt_pmr3x2c(const int16_t *c, const int8_t *f0, const int32_t K,
                                                              const int32_t kh, const int32_t G, const int32_t D1,
                                                              const int32_t ROW, const int32_t S0,
                                                              const int8_t **fe, int32_t b0, int32_t b1,
                                                              int32_t *acc) {
  int32_t a00 = b0, a01 = b1, a10, a11, a20, a21;
  const int8_t *f = f0;
  uint32_t wa, wb, t, x0, x1, x2;
  __asm__("" : "+r"(c), "+r"(f));   /* opaque: gcc may address fe[0] from c, which the loads move (bt_pm_loop3) */
  __asm__ volatile(BT_PMRC_LOOP
                   : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), [a20] "=&r"(a20),
                     [a21] "=&r"(a21), [c] "+r"(c), [f] "+r"(f), [wa] "=&r"(wa), [wb] "=&r"(wb), [t] "=&r"(t),
                     [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2)
                   : [K] "i"(K), [D1] "i"(D1), [ROW] "i"(ROW), [G] "i"(G), [KH] "i"(kh), [S0] "i"(S0),
                     [U] "i"(BT_PMRC_U(G)), [fc] "m"(fe[0])
                   : "cc", "memory");
  acc[0] = a00; acc[1] = a01; acc[2] = a10; acc[3] = a11; acc[4] = a20; acc[5] = a21;
}
#undef BT_PMRC_LOOP
#undef BT_PMRC_G
#undef BT_PMRC_WA
#undef BT_PMRC_GROUP
#undef BT_PMRC_FU
#undef BT_PMRC_CU
#undef BT_PMRC_X0
#undef BT_PMRC_H2
#undef BT_PMRC_H1
#undef BT_PMRC_FO
#undef BT_PMRC_XO
#undef BT_PMRC_RC

/* acc = {b0 + p0 f0, b1 + p0 f1, b2 + p0 f2, b0 + p1 f0, b1 + p1 f1, b2 + p1 f2}: two pixels (D1 bytes apart
 * from c) by filter rows f0, f0 + K, f0 + 2K, the runs as bt_pmr3x2's. */
static inline __attribute__((always_inline)) void bt_pmr2x3(const int16_t *c, const int8_t *f0, const int32_t K,
                                                             const int32_t kh, const int32_t G, const int32_t D1,
                                                             const int32_t *dl, const int8_t **fe, int32_t b0,
                                                             int32_t b1, int32_t b2, int32_t *acc, const int compact) {
  int32_t a00 = b0, a01 = b1, a02 = b2, a10, a11, a12;
  const int8_t *f = f0;
  uint32_t wa, wb, wc, t, x0, x1;
#define BT_PMR23_OUTS                                                                                        \
  : [a00] "+r"(a00), [a01] "+r"(a01), [a02] "+r"(a02), [a10] "=&r"(a10), [a11] "=&r"(a11), [a12] "=&r"(a12),  \
    [c] "+r"(c), [f] "+r"(f), [wa] "=&r"(wa), [wb] "=&r"(wb), [wc] "=&r"(wc), [t] "=&r"(t), [x0] "=&r"(x0),   \
    [x1] "=&r"(x1)
#define BT_PMR23_INS : [K] "i"(K), [D1] "i"(D1), BT_PMR_RUNI
  BT_PMR_RUN(BT_PMR_FEC, BT_PMR_COMPACT("mov %[a10], %[a00]\n\tmov %[a11], %[a01]\n\tmov %[a12], %[a02]\n\t",
                             BT_PMR23_STEP, BT_PMR23_STEP BT_PMR_FCT),
             BT_PMR_PEELED(BT_PMR23_STEP0, BT_PMR23_STEP), BT_PMR_STRAIGHT(BT_PMR23_STEP0, BT_PMR23_STEP),
             BT_PMR23_OUTS, BT_PMR23_INS);
#undef BT_PMR23_OUTS
#undef BT_PMR23_INS
  acc[0] = a00; acc[1] = a01; acc[2] = a02; acc[3] = a10; acc[4] = a11; acc[5] = a12;
}

/* One pixel by four filter rows (K at most 1365: the row offsets 3K immediates); acc holds the start values. */
static inline __attribute__((always_inline)) void bt_pmr1x4(const int16_t *c, const int8_t *f0, const int32_t K,
                                                             const int32_t kh, const int32_t G, const int32_t *dl,
                                                             const int8_t **fe, int32_t *acc, const int compact) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  const int8_t *f = f0;
  uint32_t w0, w1, w2, w3, t, x0, x1;
#define BT_PMR1_OUTS                                                                                         \
  : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [c] "+r"(c), [f] "+r"(f), [w0] "=&r"(w0),    \
    [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3), [t] "=&r"(t), [x0] "=&r"(x0), [x1] "=&r"(x1)
#define BT_PMR1_INS : [K] "i"(K), BT_PMR_RUNI
  BT_PMR_RUN(BT_PMR_FEC, BT_PMR_COMPACT("", BT_PMR1_STEP, BT_PMR1_STEP BT_PMR_FCT), BT_PMR_LOOPED(BT_PMR1_STEP), BT_PMR_STRAIGHT(BT_PMR1_STEP, BT_PMR1_STEP),
             BT_PMR1_OUTS, BT_PMR1_INS);
#undef BT_PMR1_OUTS
#undef BT_PMR1_INS
  acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
}
#undef BT_PMR_FE
#undef BT_PMR_FEC
#undef BT_PMR_COMPACT
#undef BT_PMR_FCT
#undef BT_PMR_RUNI
#undef BT_PMR_RUNL
#undef BT_PMR_LOOPED
#undef BT_PMR_LOOPED0
#undef BT_PMR_PEELED
#undef BT_PMR_LOOP1
#undef BT_PMR_STRAIGHT
#undef BT_PMR_NEXT
#undef BT_PMR3_STEP0
#undef BT_PMR1_STEP
#undef BT_PMR1_ONE
#undef BT_PMR23_STEP
#undef BT_PMR23_STEP0
#undef BT_PMR23_B2
#undef BT_PMR23_REST
#undef BT_PMR23_LOADS
#undef BT_PMR23_B
#undef BT_PMR23_A
#undef BT_PMR3_STEP
#undef BT_PMR3_STEPL
#undef BT_PMR3_STEPX
#undef BT_PMR_SM3

/* acc[q] += pixel q of NP (D1 bytes apart from c0, the runs as bt_pmr3x2's) . filter row f (the last channel of
 * an odd count), in C. */
static inline __attribute__((always_inline)) void bt_pmr_dot(const int16_t *c0, const int32_t *dl, const int8_t *f,
                                                              const int32_t kh, const int32_t G, const int32_t D1,
                                                              const int32_t NP, int32_t *acc) {
  const char *c = (const char *)c0;
  for (int32_t ky = 0; ky < kh; ky++) {
    if (ky) c += dl[ky - 1];
    for (int32_t j = 0; j < G; j++, c += 8, f += 4) {
      const uint32_t w = bt_ld4(f);
      const int32_t l = bt_sxtb16(w), h = bt_sxtb16_ror8(w);
      for (int32_t q = 0; q < NP; q++) {
        int32_t x, y;
        __builtin_memcpy(&x, c + q * D1, 4);
        __builtin_memcpy(&y, c + q * D1 + 4, 4);
        acc[q] = bt_smlad(h, y, bt_smlad(l, x, acc[q]));
      }
    }
  }
}

/* bt_pm_rq6's / bt_pm_rqm6's constants of output channels s0, s1 (multipliers m0, m1): k as they read it;
 * returns whether the output zero point is folded into the rounding words. */
static inline __attribute__((always_inline)) int bt_pm_k6(int32_t *k, int32_t m0, int32_t m1, int32_t s0, int32_t s1,
                                                          int32_t zp, const int fast) {
  if (fast == 2) {
    const int32_t q0 = -bt_pm_shift(s0), q1 = -bt_pm_shift(s1);
    const int folded = q0 <= 22 && q1 <= 22;   /* bt_rq2_zp_ok */
    k[0] = m0; k[1] = (1 << (q0 - 1)) + (folded ? (int32_t)((uint32_t)zp << q0) : 0); k[2] = q0;
    k[3] = m1; k[4] = (1 << (q1 - 1)) + (folded ? (int32_t)((uint32_t)zp << q1) : 0); k[5] = q1;
    return folded;
  }
  const int32_t p0 = BT_PM_P2(s0), e0 = BT_PM_E1(s0), p1 = BT_PM_P2(s1), e1 = BT_PM_E1(s1);
  const int folded = bt_rq2_zp_ok(bt_pm_shift(s0)) && bt_rq2_zp_ok(bt_pm_shift(s1));
  k[0] = m0; k[1] = folded ? bt_rq2_p2_zp(p0, e0, zp) : p0; k[2] = e0;
  k[3] = m1; k[4] = folded ? bt_rq2_p2_zp(p1, e1, zp) : p1; k[5] = e1;
  return folded;
}

/* One pair of output channels over T triples in one asm loop (bt_mm3x2's constant-K asm, then bt_pm_rq6's /
 * bt_pm_rqm6's requantisation, then the stores): the columns at c (triple j at c + j S, the LDMs leave c at the
 * next one), filter rows f0, f0 + K, outputs from o (triple j's pixel q at o + (3j + q) OPS). Between triples
 * bt_conv_pm's C loop reloaded the column, filter and output pointers and the biases from the stack, stored the
 * output pointer back and branched (~16 estimated high cycles a triple, ~31 with the constants' loads): here the
 * filter pointer steps back by an immediate, the column pointer is where the LDMs left it, the output pointer
 * lives in its word of s (one LDR into the temporary the MACs freed, ADD, STR), the biases and the channels'
 * constants are LDRs of s's words (14 registers taken: no base register for an LDM), each requantised output
 * overwrites its sum, and a pixel's two outputs are one STRH (BFI joins the second's byte to the first: 3 cycles
 * against two STRBs' 4), two of the three after single loads (pipelined: 1 cycle). ZP: the output zero point as
 * an immediate when not folded into the rounding words. Needs K a constant in [4, 131] (K / 4 groups, at most 32:
 * straight code) and 3 OPS < 4096. Measured (est. high cycles, with the two triples a pass below) on the dense
 * vww's 1x1 layers: 8 -> 16 values at 48x48 808.3 K -> 700.1 K (21.9 -> 19.0 a output), 16 -> 32 at 24x24
 * 572.2 K -> 518.9 K, 32 -> 32 937.0 K -> 881.4 K, 32 -> 64 at 12x12 459.6 K -> 431.1 K, 128 -> 128 at 6x6
 * 754.6 K -> 744.0 K; the MLPerf vww 0.793 -> 0.766 of its record, kws 0.804 -> 0.785 (its 1x1 layers of 64
 * values 705.7 K -> 686.2 K each), ResNet-8 0.804 -> 0.803 (its 1x1 layers 261.6 K -> 237.6 K, 214.4 K -> 202.0 K).
 * No stack of its own (s is in col, the frames 8-48 bytes smaller); flash: vww +6.1 KB, kws +0.7 KB. Pre-widened
 * weights (two LDRDs a group instead of two LDRs and four SXTB16s, the output pointer in the freed register) took
 * the dense vww's first 1x1 a further 699.5 K -> 670.7 K, but their presence made gcc fail bt_pm_widen3's asm in
 * MobileNet v2's tile functions ("impossible constraints"): not kept. */
/* bt_pm_loop3's words in memory (the asm's 14 registers leave none for them), at col's end in bt_conv_pm (no stack
 * of their own: as locals they moved the conv.c variants' frames so that bt_mm3x2's end pointer went out of SP's
 * reach, "impossible constraints"). The asm reads them by "m" operands: gcc must address them from SP, not from a
 * register the asm moves (it took c, the columns' start, as their base: a HardFault; c and f are made opaque
 * first). */
typedef struct {
  int32_t k[8];       /* b0, b1, then bt_pm_k6's constants */
  int8_t *o;          /* the next triple's outputs */
  const int16_t *end; /* the columns' end */
  const int8_t *fend; /* the filter row's last whole group's end (BT_PM_L3_LOOPED: a compact call's) */
} bt_pm_l3s;
#define BT_PM_L3S_N ((int32_t)(sizeof(bt_pm_l3s) / sizeof(int16_t)))   /* int16 of col it takes */
/* col's int16 the columns leave to bt_pm_l3s: only model.c's own instance of a layer (BT_SHAPE_CONST): in a tile
 * function with a run-time output width (MobileNet v2's split 1x1 layers) gcc found no way to the words ("impossible
 * constraints") */
#define BT_PM_L3_ROOM(p, K, OPS) (BT_PM_L3_OK(K, OPS) && BT_SHAPE_CONST(p) ? BT_PM_L3S_N : 0)
/* A sum requantised in place (the channel's m, rounding word, e in x0-x2; wa, wb scratch). */
#define BT_PM_L3_RQ2(A, ZA) BT_PM_RQM_ASM("wa", A, "x0", "x1", "x2", A, ZA)
#define BT_PM_L3_RQ1(A, ZA) BT_PM_RQ2_ASM("wa", "wb", A, "x0", "x1", "x2", A, ZA)
/* bt_mm3x2's tail step (BT_MM3X2_STEPT) with its offsets as expressions of K (an asm has at most 30 operands). */
#define BT_PM_L3_STEPT                                        \
  "ldm %[c]!, {%[x0], %[x1], %[x2]}\n\t"                      \
  "ldr %[wb], [%[f], #(2 * %c[K] - 4 - (%c[K] & ~3))]\n\t"    \
  "ldr %[wa], [%[f]], #4\n\t"                                 \
  "lsr %[wb], %[wb], #(8 * (4 - (%c[K] & 3)))\n\t"            \
  BT_MM3X2_LO                                                 \
  BT_MM3X2_HI
/* One triple: MACs, requantisation, stores, the output pointer moved on; E: the end pointer's load into wa (the
 * loop's test after it). */
#define BT_PM_L3_TRIPLE(RQ, ZA, E)                                                                            \
  BT_MM3X2_STEP0 BT_PMR_REP("(%c[K] >> 2) - 1", BT_MM3X2_STEP) BT_PM_L3_REST(RQ, ZA, E)
/* A triple after its whole groups: the K % 4 tail, f back to the row's start, requantisation, stores. */
#define BT_PM_L3_REST(RQ, ZA, E)                                                                              \
  ".if %c[K] & 3\n\t" BT_PM_L3_STEPT "sub %[f], %[f], #((%c[K] & ~3) + 4)\n\t"                                \
  ".else\n\tsub %[f], %[f], #%c[K]\n\t.endif\n\t"                                                             \
  "ldr %[x0], %[m0]\n\tldr %[x1], %[p0]\n\tldr %[x2], %[e0]\n\t"                                               \
  RQ("a00", ZA) RQ("a10", ZA) RQ("a20", ZA)                                                                   \
  "ldr %[t], %[om]\n\tldr %[x0], %[m1]\n\tldr %[x1], %[p1]\n\tldr %[x2], %[e1]\n\t"                            \
  RQ("a01", ZA) RQ("a11", ZA) RQ("a21", ZA)                                                                   \
  "bfi %[a00], %[a01], #8, #8\n\tbfi %[a10], %[a11], #8, #8\n\tbfi %[a20], %[a21], #8, #8\n\t"                \
  E "ldr %[a01], %[b1]\n\tstrh %[a00], [%[t]]\n\t"                                                             \
  "ldr %[a00], %[b0]\n\tstrh %[a10], [%[t], #(%c[O1] & 4095)]\n\tstrh %[a20], [%[t], #((%c[O1] & 4095) * 2)]\n\t" \
  "add %[t], %[t], #((%c[O1] & 4095) * 3)\n\tstr %[t], %[om]\n\t"
/* The loop: K <= 32 two triples a pass (an odd T enters at the second: bit 8 of s->k[4], the first channel's shift,
 * which ASR by a register does not read; the end test, its load and the taken branch, ~7 estimated high cycles,
 * once per two triples: the dense vww's 1x1 layers of 8 values 717.5 K -> 699.5 K est. high, 16 values 527.3 K
 * -> 518.7 K, 32 values 887.2 K -> 879.1 K and 434.9 K -> 431.0 K), else one. */
#define BT_PM_L3_END "ldr %[wa], %[end]\n\t"
#define BT_PM_L3_BODY(RQ, ZA)                                                                                 \
  "ldr %[a00], %[b0]\n\tldr %[a01], %[b1]\n\t"                                                                \
  ".if %c[K] <= 32\n\tldr %[wa], %[e0]\n\ttst %[wa], #256\n\tbne 2f\n"                                          \
  "1:\n\t" BT_PM_L3_TRIPLE(RQ, ZA, "")                                                                        \
  "2:\n\t" BT_PM_L3_TRIPLE(RQ, ZA, BT_PM_L3_END) "cmp %[c], %[wa]\n\tbne 1b\n\t"                              \
  ".else\n"                                                                                                   \
  "1:\n\t" BT_PM_L3_TRIPLE(RQ, ZA, BT_PM_L3_END) "cmp %[c], %[wa]\n\tbne 1b\n\t"                              \
  ".endif\n\t"
/* On a part with a small instruction cache (BT_ICACHE_BYTES, bt_conv_pmr's BT_PMR_COMPACT_ON): one triple a pass,
 * and over 4 groups its groups in a loop of U (4, 3, 2 or 1, dividing them) until f reaches fend, the sums started by
 * MOVs: kws's 1x1 layers of 64 values straight took 1.3 KB a pass, streamed from flash on every triple. The output
 * zero point folded into the rounding words (BT_PM_NZ) or, a constant, added by an immediate (BT_PM_L3_ZO: an
 * operand of its own would be the asm's 31st, so it rides in O1's bits 12 and up, plus 128: bt_pm_loop3). */
#define BT_PM_L3_ZO(X)                                                                                        \
  ".if (%c[O1] >> 12) < 128\n\tsub %[" X "], %[" X "], #(128 - (%c[O1] >> 12))\n\t"                              \
  ".else\n\tadd %[" X "], %[" X "], #((%c[O1] >> 12) - 128)\n\t.endif\n\t"
/* The loop's groups (BT_PM_L3_STEPC): bt_mm3x2's (BT_MM3X2_STEP) with the first half's five words (the two filter
 * rows', the three pixels') one chain of single loads (each after the first pipelined: 6 estimated cycles against the
 * LDM's 4 and the two LDRs' 3; 8 bytes more a group); the pass's last (BT_PM_L3_STEPE) loads the second half's words
 * singly too and the filter row's end after them. mobilenetv2_160_a1's 1x1 layers on nucleo-l4r5zi (modelled cycles,
 * kernels_vs_cmsis.py --mem nucleo-l4r5zi --ops 5,8,12): 96 -> 24 at 40x40 5.285 M -> 5.093 M, 144 -> 24 7.700 M ->
 * 7.419 M, 144 -> 32 at 20x20 2.533 M -> 2.438 M. Six groups a pass (four passes of 96 values instead of six) ran op 5
 * at 5.049 M without BT_PM_L3_STEPE and 5.476 M with it, op 8 at 8.023 M and 7.314 M (zero-wait 4.99 M and 4.97 M,
 * 7.27 M and 7.23 M): with the pair's C around it the loop is the 1 KiB instruction cache's 32 lines, in or out by
 * where the code lands; not kept. */
#define BT_PM_L3_STEPC                                        \
  "ldr %[wb], [%[f], %[K]]\n\t"                               \
  "ldr %[wa], [%[f]], #4\n\t"                                 \
  BT_MM3X2_LD3                                                \
  BT_MM3X2_LO                                                 \
  BT_MM3X2_HI
/* the pass's last group: its second half's words by single loads too, the filter row's end loaded after them (one
 * chain: 5 estimated cycles against the LDM's 4 and the end's LDR 2 after the MACs: op 5 5.133 M -> 5.093 M) */
#define BT_PM_L3_STEPE                                        \
  "ldr %[wb], [%[f], %[K]]\n\t"                               \
  "ldr %[wa], [%[f]], #4\n\t"                                 \
  BT_MM3X2_LD3                                                \
  BT_MM3X2_LO                                                 \
  BT_MM3X2_LD3                                                \
  "ldr %[t], %[fend]\n\t"                                     \
  BT_MM3X2_MACS_HI
#define BT_PM_L3_LOOPED(RQ, ZA)                                                                               \
  ".if (%c[K] >> 2) <= 4\n\t" BT_PM_L3_TRIPLE(RQ, ZA, BT_PM_L3_END) ".else\n\t"                                \
  "mov %[a10], %[a00]\n\tmov %[a20], %[a00]\n\tmov %[a11], %[a01]\n\tmov %[a21], %[a01]\n"                    \
  ".if ((%c[K] >> 2) %% 4) == 0\n\t.set bt_l3u, 4\n\t.elseif ((%c[K] >> 2) %% 3) == 0\n\t.set bt_l3u, 3\n\t"          \
  ".elseif ((%c[K] >> 2) %% 2) == 0\n\t.set bt_l3u, 2\n\t.else\n\t.set bt_l3u, 1\n\t.endif\n"                   \
  "3:\n\t" BT_PMR_REP("bt_l3u - 1", BT_PM_L3_STEPC) BT_PM_L3_STEPE "cmp %[f], %[t]\n\tbne 3b\n\t"                \
  BT_PM_L3_REST(RQ, ZA, BT_PM_L3_END) ".endif\n\t"
#define BT_PM_L3_COMPACT(RQ, ZA)                                                                              \
  "ldr %[a00], %[b0]\n\tldr %[a01], %[b1]\n1:\n\t" BT_PM_L3_LOOPED(RQ, ZA) "cmp %[c], %[wa]\n\tbne 1b\n\t"
/* Its patches: K below BT_PM_L3_KSTRAIGHT (straight code; kernel_variants.BT_PM_L3_KMAX); on a part with a small instruction cache (BT_ICACHE_BYTES) the compact form's
 * loop of groups (the caller's compact 1, the build's full instances there) takes K up to 624 too, a triple's columns
 * (3 K int16) still in col beside s: the full instance's bt_mm3x2 and bt_pm_rq6 loop of a 1x1 of K 144 was 1.2 KB a
 * triple, streamed through the 1 KiB cache (mobilenetv2_160_a1's 144 -> 24 at 40x40 11.42 M modelled cycles, 3.95 M
 * of them stalls; its compact loop3 ~0.5 KB) */
#define BT_PM_L3_KSTRAIGHT 132
#ifdef BT_ICACHE_BYTES
#define BT_PM_L3_KLIM 625
#else
#define BT_PM_L3_KLIM BT_PM_L3_KSTRAIGHT
#endif
#define BT_PM_L3_OK(K, OPS)                                                                                   \
  (__builtin_constant_p(K) && (K) >= 4 && (K) < BT_PM_L3_KLIM && __builtin_constant_p(OPS) && (OPS) > 0 &&      \
   3 * (OPS) < 4096)
static inline __attribute__((always_inline)) void bt_pm_loop3(const int16_t *c, const int8_t *f, const int32_t K,
                                                              bt_pm_l3s *s, const int32_t OPS, const int fast,
                                                              const int folded, const int32_t zp, const int compact) {
  register uint32_t x0 __asm__("r8"), x1 __asm__("r9"), x2 __asm__("r10");   /* an LDM's list is in register order */
  uint32_t a00, a01, a10, a11, a20, a21, wa, wb, t;
  __asm__("" : "+r"(c), "+r"(f));   /* opaque: gcc addressed s's words from c, which the LDMs move */
#define BT_PM_L3_OPS                                                                                          \
  : [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), [a20] "=&r"(a20), [a21] "=&r"(a21), \
    [c] "+r"(c), [f] "+r"(f), [wa] "=&r"(wa), [wb] "=&r"(wb), [t] "=&r"(t), [x0] "=&r"(x0), [x1] "=&r"(x1),      \
    [x2] "=&r"(x2), [om] "+m"(s->o)                                                                           \
  : [b0] "m"(s->k[0]), [b1] "m"(s->k[1]), [m0] "m"(s->k[2]), [p0] "m"(s->k[3]), [e0] "m"(s->k[4]),              \
    [m1] "m"(s->k[5]), [p1] "m"(s->k[6]), [e1] "m"(s->k[7]), [end] "m"(s->end), [K] "i"(K),   \
    [O1] "i"(OPS + 4096 * (128 + (__builtin_constant_p(zp) ? zp : 0)))   /* the output pixel stride; BT_PM_L3_ZO */
#define BT_PM_L3_ZI [zp] "i"(__builtin_constant_p(zp) ? zp : 0)   /* the caller's test: folded or zp a constant */
#define BT_PM_L3_CI , [fend] "m"(s->fend)
  if (compact && folded) {   /* (the zero point's operand would be the asm's 31st) */
    if (fast == 2) __asm__ volatile(BT_PM_L3_COMPACT(BT_PM_L3_RQ2, BT_PM_NZ) BT_PM_L3_OPS BT_PM_L3_CI : "cc", "memory");
    else __asm__ volatile(BT_PM_L3_COMPACT(BT_PM_L3_RQ1, BT_PM_NZ) BT_PM_L3_OPS BT_PM_L3_CI : "cc", "memory");
    return;
  }
  if (compact && __builtin_constant_p(zp)) {   /* the caller's test: folded or zp a constant */
    if (fast == 2) __asm__ volatile(BT_PM_L3_COMPACT(BT_PM_L3_RQ2, BT_PM_L3_ZO) BT_PM_L3_OPS BT_PM_L3_CI : "cc", "memory");
    else __asm__ volatile(BT_PM_L3_COMPACT(BT_PM_L3_RQ1, BT_PM_L3_ZO) BT_PM_L3_OPS BT_PM_L3_CI : "cc", "memory");
    return;
  }
  if (fast == 2 && folded) __asm__ volatile(BT_PM_L3_BODY(BT_PM_L3_RQ2, BT_PM_NZ) BT_PM_L3_OPS : "cc", "memory");
  else if (fast == 2) __asm__ volatile(BT_PM_L3_BODY(BT_PM_L3_RQ2, BT_PM_ZP) BT_PM_L3_OPS, BT_PM_L3_ZI : "cc", "memory");
  else if (folded) __asm__ volatile(BT_PM_L3_BODY(BT_PM_L3_RQ1, BT_PM_NZ) BT_PM_L3_OPS : "cc", "memory");
  else __asm__ volatile(BT_PM_L3_BODY(BT_PM_L3_RQ1, BT_PM_ZP) BT_PM_L3_OPS, BT_PM_L3_ZI : "cc", "memory");
#undef BT_PM_L3_CI
#undef BT_PM_L3_ZI
#undef BT_PM_L3_OPS
}
#undef BT_PMR_UNROLL
#undef BT_PM_L3_COMPACT
#undef BT_PM_L3_ZO
#undef BT_PM_L3_LOOPED
#undef BT_PM_L3_STEPC
#undef BT_PM_L3_STEPE
#undef BT_PM_L3_REST
#undef BT_PM_L3_BODY
#undef BT_PM_L3_END
#undef BT_PM_L3_TRIPLE
#undef BT_PM_L3_STEPT
#undef BT_PM_L3_RQ1
#undef BT_PM_L3_RQ2
#undef BT_PM_NZ
#undef BT_PM_ZP
#undef BT_PM_RQM_ASM
#undef BT_PM_RQ2_ASM

#define BT_PMR_KH 3   /* largest kh (the asm's runs, bt_conv_pmr's row pointers) */
/* Does bt_conv_pmr take the layer (every field it folds a constant, its buffer and scratch words in `bytes`)? The
 * ring's rows: nx input pixels each (those a window reads), P zero pixels before each and after the last, P the
 * larger of the left padding and the right padding (the windows' reach past the input): a row's right padding is
 * the next one's left (ResNet-8's 8x8 layer: 28 pixels of 64 values, 3584 bytes, where three rows of 10 took all
 * of col's 3840). */
#define BT_PMR_WP(p) (((p)->out.w - 1) * (p)->stride_w + (p)->kw)   /* a window row's reach: pixels */
#define BT_PMR_NX(p) ((p)->in.w < BT_PMR_WP(p) - (p)->pad_left ? (p)->in.w : BT_PMR_WP(p) - (p)->pad_left)
#define BT_PMR_PR(p) (BT_PMR_WP(p) - (p)->pad_left - BT_PMR_NX(p))   /* right padding: pixels */
#define BT_PMR_P(p) ((p)->pad_left > BT_PMR_PR(p) ? (p)->pad_left : BT_PMR_PR(p))
#define BT_PMR_VALUES(p) ((BT_PMR_P(p) + (p)->kh * (BT_PMR_NX(p) + BT_PMR_P(p))) * (p)->in.c)   /* int16 */
#define BT_PMR_SCRATCH 11   /* int32 words after the buffer: dl[2], k[6], fe[3] */
/* Every field of a layer's shape a compile-time constant (model.c's own instance): the paths whose asm takes the
 * shape as immediates (bt_pmr_ok, conv_stem.h's bt_stem_ok). */
#define BT_SHAPE_CONST(p)                                                                                      \
  (__builtin_constant_p((p)->in.c) && __builtin_constant_p((p)->in.w) && __builtin_constant_p((p)->in.h) &&     \
   __builtin_constant_p((p)->in.pixel_stride) && __builtin_constant_p((p)->out.w) &&                          \
   __builtin_constant_p((p)->out.c) && __builtin_constant_p((p)->out.pixel_stride) &&                         \
   __builtin_constant_p((p)->kh) && __builtin_constant_p((p)->kw) && __builtin_constant_p((p)->stride_h) &&     \
   __builtin_constant_p((p)->stride_w) && __builtin_constant_p((p)->pad_top) &&                               \
   __builtin_constant_p((p)->pad_left) && __builtin_constant_p((p)->dil_h) && __builtin_constant_p((p)->dil_w))
static inline __attribute__((always_inline)) int bt_pmr_ok(const bt_conv_params *p, const int fast, const int act,
                                                           const int32_t bytes) {
  const int consts = BT_SHAPE_CONST(p);
  if (!consts || !fast || act != 2) return 0;
  const int32_t K = p->kh * p->kw * p->in.c;
  return (p->in.c & 3) == 0 && p->in.pixel_stride == p->in.c && p->kh * p->kw > 1 && p->dil_h == 1 &&
         p->dil_w == 1 && p->out.w >= 3 && p->out.c >= 3 && p->out.pixel_stride > 0 && p->out.pixel_stride < 2000 &&
         p->kh <= BT_PMR_KH && 3 * K < 4096 && 2 * p->stride_w * p->in.c * 2 < 4096 && p->pad_left >= 0 &&
         p->pad_top >= 0 && 2 * BT_PMR_VALUES(p) + 4 * BT_PMR_SCRATCH <= bytes;
}

/* bt_widen_x for a buffer row (n % 4 == 0), unrolled with pointer steps (bt_widen_x's loop indexed both
 * arrays: register-offset stores and the loop test every 4 values). */
static inline __attribute__((always_inline)) void bt_pmr_widen(const int8_t *s, int16_t *d, const int32_t n,
                                                               int32_t off2, const int dbl) {
  const int8_t *const end = s + n;
#pragma GCC unroll 4
  for (; s != end; s += 4, d += 4) {
    const uint32_t v = bt_ld4(s);
    int32_t a = (int32_t)bt_sxtab16((uint32_t)off2, v), b = (int32_t)bt_sxtab16_ror8((uint32_t)off2, v);
    if (dbl) { a = bt_sadd16(a, a); b = bt_sadd16(b, b); }
    __builtin_memcpy(d, &a, 4);
    __builtin_memcpy(d + 2, &b, 4);
  }
}

/* The row-buffer path: a ring of kh buffer rows (BT_PMR_VALUES, in bt_conv_pm's col of 3840 bytes with
 * BT_PMR_SCRATCH words after them; the padding pixels zeroed once), input row iy in row (iy + pad_top) % kh, each
 * widened (or zeroed: a padding row) once; per output row, per pair of output channels the row's triples
 * (bt_pmr3x2, bt_pm_rq6 / bt_pm_rqm6), an odd last channel's in C (bt_pmr_dot); 2 pixels left by bt_pmr2x3, 1 by
 * bt_pmr1x4 (bt_pm_out). */
static inline __attribute__((always_inline)) void bt_pmr_triples(const int16_t *c, const int32_t *dl, const int8_t *f,
                                                                 int8_t *o, const int32_t *k, int32_t b0, int32_t b1,
                                                                 const int32_t K, const int32_t kh, const int32_t G,
                                                                 const int32_t D1, const int32_t OPS, const int32_t ow,
                                                                 const int fast, int folded, int32_t zp,
                                                                 const int8_t **fe, const int compact,
                                                                 const int32_t ROW, const int32_t S0) {
  if (S0 >= 0) fe[0] = f + 4 * G;   /* the column form (bt_pmr3x2c, c at ring row 0): its one loop end */
  else if (compact) { fe[1] = f + 4 * G; fe[2] = f + 4 * G * kh; }   /* bt_pmr3x2's BT_PMR_FEC but fe[0] */
  for (const int16_t *const end = c + ow / 3 * 3 * D1 / 2; c != end; c += 3 * D1 / 2, o += 3 * OPS) {
    int32_t acc[6];
    if (S0 >= 0) bt_pmr3x2c(c, f, K, kh, G, D1, ROW, S0, fe, b0, b1, acc);
    else bt_pmr3x2(c, f, K, kh, G, D1, dl, fe, b0, b1, acc, compact);
    /* folded: a constant, or the pair's (bt_conv_pmr) */
    if (fast == 2) {
      if (folded) bt_pm_rqm6(acc, k, o, OPS, 1, zp);
      else bt_pm_rqm6(acc, k, o, OPS, 0, zp);
    } else {
      if (folded) bt_pm_rq6(acc, k, o, OPS, 1, zp);
      else bt_pm_rq6(acc, k, o, OPS, 0, zp);
    }
  }
}
/* The column form's pairs of output channels (bt_conv_pmr, S0 a constant): each pair's bt_pm_k6 words, biases and
 * folded flag from kt (9 words a pair), its triples by bt_pmr3x2c. */
static inline __attribute__((always_inline)) void bt_pmrc_pairs(const int16_t *rb, const int32_t *dl,
                                                                const int8_t *filter, int8_t *orow, const int32_t *kt,
                                                                const int32_t K, const int32_t kh, const int32_t G,
                                                                const int32_t D1, const int32_t OPS, const int32_t ow,
                                                                const int32_t cout, const int fast, int32_t zp,
                                                                const int8_t **fe, const int32_t ROW, const int32_t S0) {
  for (int32_t oc = 0; oc + 2 <= cout; oc += 2, kt += 9) {
    const int8_t *const f = filter + oc * K;
    if (kt[8]) bt_pmr_triples(rb, dl, f, orow + oc, kt, kt[6], kt[7], K, kh, G, D1, OPS, ow, fast, 1, zp, fe, 1, ROW, S0);
    else bt_pmr_triples(rb, dl, f, orow + oc, kt, kt[6], kt[7], K, kh, G, D1, OPS, ow, fast, 0, zp, fe, 1, ROW, S0);
  }
}
static inline __attribute__((always_inline)) void bt_conv_pmr(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                            int8_t *out, int32_t y0, int32_t y1, const int fast,
                                                            int16_t *buf, const int compact) {
  const int32_t cin = p->in.c, cout = p->out.c, ow = p->out.w, OPS = p->out.pixel_stride;
  const int32_t kh = p->kh, K = kh * p->kw * cin, G = p->kw * cin / 4, pt = p->pad_top;
  const int32_t nx = BT_PMR_NX(p), P = BT_PMR_P(p), rowv = (nx + P) * cin, D1 = 2 * p->stride_w * cin;
  const int32_t in_row = p->in.w * cin, pl = p->pad_left, nv = BT_PMR_VALUES(p);
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max, off2 = bt_dup16(p->input_offset);
  const int dbl = fast == 2;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int8_t *const filter = p->filter;
  const int32_t xr = ow - ow % 3, xor_ = xr * D1 / 2;   /* the pixels left after the triples: xr.. */
  /* scratch words after the buffer (in col: the frame no larger than bt_conv_pm's): dl[ky - 1], bytes from the end
     of a patch's run in buffer row ky - 1 to row ky's; k, bt_pm_rq6's constants; fe, the kernels' loop ends */
  int32_t *const dl = (int32_t *)(buf + nv), *const k = dl + 2;
  const int8_t **const fe = (const int8_t **)(dl + 8);
  dl[0] = 0; dl[1] = 0;
  /* the column form (bt_pmr3x2c): each channel pair's bt_pm_k6 words, biases and folded flag once a call, in kt (9
     words a pair, bt_pmrc_kt): the code between two pairs' triples then fits the instruction cache beside them */
  /* a call's form (bt_conv_pm_form's compact): 1 every patch's loops rolled (BT_PMR_COMPACT); 2 the middle form
     (bt_variants.h BT_CONV_PMM): the triples' runs straight in one loop of triples (folded read per pair, as over 16
     groups a run), the pixels left after them (bt_pmr2x3, bt_pmr1x4) rolled */
  const int roll = compact == 1, edge = compact != 0;
  const int colf = roll && BT_PMR_COMPACT_ON && BT_PMRC_FITS(kh, 2 * rowv, D1, G) && cout <= BT_PMRC_TMAX;
  int32_t *const kt = BT_PMRC_KT;
  if (colf)
    for (int32_t i = 0; i + 2 <= cout; i += 2) {
      int32_t *const q = kt + i / 2 * 9;
      q[8] = bt_pm_k6(q, mult[i], mult[i + 1], shift[i], shift[i + 1], zp, fast);
      q[6] = bias ? bias[i] * (1 + dbl) : 0; q[7] = bias ? bias[i + 1] * (1 + dbl) : 0;
    }
  for (int32_t i = 0; i < nv; i += 2) {   /* the padding pixels stay 0 */
    const int32_t z = 0;
    __builtin_memcpy(buf + i, &z, 4);
  }
  int32_t next = y0 * p->stride_h - pt;   /* the first input row not yet in the ring */
  int8_t *orow = out;
  for (int32_t y = y0; y < y1; y++, orow += ow * OPS) {
    const int32_t iy0 = y * p->stride_h - pt;
    if (next < iy0) next = iy0;
    for (; next < iy0 + kh; next++) {
      int16_t *const d = buf + P * cin + ((next + pt) % kh) * rowv;
      if ((uint32_t)next < (uint32_t)p->in.h) {
        bt_pmr_widen(in + (next - in_y0) * in_row, d, nx * cin, off2, dbl);
      } else {
        for (int32_t i = 0; i < nx * cin; i += 2) {
          const int32_t z = 0;
          __builtin_memcpy(d + i, &z, 4);
        }
      }
    }
    const int32_t s0 = (iy0 + pt) % kh;   /* the ring row of the window's first input row */
    const int16_t *const r0 = buf + (P - pl) * cin + s0 * rowv;   /* its window origin */
    for (int32_t ky = 1; ky < kh; ky++)   /* ring row s0 + ky wrapped, minus the run */
      dl[ky - 1] = 2 * rowv * ((s0 + ky >= kh ? ky - kh : ky) - (s0 + ky - 1 >= kh ? ky - 1 - kh : ky - 1)) - 8 * G;
    int32_t oc = 0;
    if (colf) {   /* the column form: a loop over the pairs per S0 (each one stretch of code), ring row 0 at rb */
      const int16_t *const rb = r0 - s0 * rowv;
#define BT_PMRC_P(S0) bt_pmrc_pairs(rb, dl, filter, orow, kt, K, kh, G, D1, OPS, ow, cout, fast, zp, fe, 2 * rowv, S0)
      if (s0 == 0) BT_PMRC_P(0);
      else if (s0 == 1) BT_PMRC_P(1);
      else BT_PMRC_P(2);
#undef BT_PMRC_P
      oc = cout & ~1;
    }
    for (; oc + 2 <= cout; oc += 2) {
      const int32_t b0 = bias ? bias[oc] * (1 + dbl) : 0, b1 = bias ? bias[oc + 1] * (1 + dbl) : 0;
      const int8_t *const f = filter + oc * K;
      /* one loop of triples per case of folded when the patch is short (a branch per triple cost ResNet-8's
         32x32 layers 0.5 %), over 16 groups a run one loop (its asm is 3 kh 96-byte groups; ResNet-8's layers of
         24 and 48 groups: 21 KB of code less, 12 k cycles more) */
      const int folded = bt_pm_k6(k, mult[oc], mult[oc + 1], shift[oc], shift[oc + 1], zp, fast);
      if (G > 16 || compact == 2) bt_pmr_triples(r0, dl, f, orow + oc, k, b0, b1, K, kh, G, D1, OPS, ow, fast, folded, zp, fe, roll, 0, -1);
      else if (folded) bt_pmr_triples(r0, dl, f, orow + oc, k, b0, b1, K, kh, G, D1, OPS, ow, fast, 1, zp, fe, roll, 0, -1);
      else bt_pmr_triples(r0, dl, f, orow + oc, k, b0, b1, K, kh, G, D1, OPS, ow, fast, 0, zp, fe, roll, 0, -1);
    }
    if (oc < cout) {   /* an odd last channel: its triples in C */
      const int32_t b = bias ? bias[oc] * (1 + dbl) : 0, m = mult[oc], s = shift[oc];
      const int32_t pp = BT_PM_P2(s), e = BT_PM_E1(s);
      const int8_t *const f = filter + oc * K;
      for (int32_t x = 0; x + 3 <= ow; x += 3) {
        int32_t acc[3] = {b, b, b};
        bt_pmr_dot(r0 + x * D1 / 2, dl, f, kh, G, D1, 3, acc);
        for (int32_t q = 0; q < 3; q++)
          orow[(x + q) * OPS + oc] = (int8_t)bt_pm_out(acc[q], m, s, pp, e, zp, lo, hi, fast, 2);
      }
    }
    if (ow - xr == 2) {   /* two pixels left: three channels at a time (bt_pmr2x3), the last 1 or 2 in C (bt_pmr_dot:
                             a two-channel asm kernel here grew ResNet-8's frames by 40 bytes) */
      const int16_t *const c = r0 + xor_;
      int8_t *const o = orow + xr * OPS;
      int32_t c3 = 0;
      for (; c3 + 3 <= cout; c3 += 3) {
        int32_t acc[6];
        bt_pmr2x3(c, filter + c3 * K, K, kh, G, D1, dl, fe, bias ? bias[c3] * (1 + dbl) : 0,
                  bias ? bias[c3 + 1] * (1 + dbl) : 0, bias ? bias[c3 + 2] * (1 + dbl) : 0, acc, edge);
#pragma GCC unroll 3
        for (int32_t r = 0; r < 3; r++) {
          const int32_t s = shift[c3 + r], m = mult[c3 + r], pp = BT_PM_P2(s), e = BT_PM_E1(s);
          o[c3 + r] = (int8_t)bt_pm_out(acc[r], m, s, pp, e, zp, lo, hi, fast, 2);
          o[OPS + c3 + r] = (int8_t)bt_pm_out(acc[3 + r], m, s, pp, e, zp, lo, hi, fast, 2);
        }
      }
      for (; c3 < cout; c3++) {
        const int32_t b = bias ? bias[c3] * (1 + dbl) : 0, s = shift[c3], m = mult[c3];
        int32_t acc[2] = {b, b};
        bt_pmr_dot(c, dl, filter + c3 * K, kh, G, D1, 2, acc);
        o[c3] = (int8_t)bt_pm_out(acc[0], m, s, BT_PM_P2(s), BT_PM_E1(s), zp, lo, hi, fast, 2);
        o[OPS + c3] = (int8_t)bt_pm_out(acc[1], m, s, BT_PM_P2(s), BT_PM_E1(s), zp, lo, hi, fast, 2);
      }
    }
    if (ow - xr == 1) {   /* one pixel left: four channels at a time */
      int8_t *const o = orow + xr * OPS;
      int32_t c4 = 0;
      for (; c4 + 4 <= cout; c4 += 4) {
        int32_t acc[4];
        for (int32_t r = 0; r < 4; r++) acc[r] = bias ? bias[c4 + r] * (1 + dbl) : 0;
        bt_pmr1x4(r0 + xor_, filter + c4 * K, K, kh, G, dl, fe, acc, edge);
        for (int32_t r = 0; r < 4; r++) {
          const int32_t s = shift[c4 + r];
          o[c4 + r] = (int8_t)bt_pm_out(acc[r], mult[c4 + r], s, BT_PM_P2(s), BT_PM_E1(s), zp, lo, hi, fast, 2);
        }
      }
      for (; c4 < cout; c4++) {
        int32_t acc[1] = {bias ? bias[c4] * (1 + dbl) : 0};
        bt_pmr_dot(r0 + xor_, dl, filter + c4 * K, kh, G, D1, 1, acc);
        const int32_t s = shift[c4];
        o[c4] = (int8_t)bt_pm_out(acc[0], mult[c4], s, BT_PM_P2(s), BT_PM_E1(s), zp, lo, hi, fast, 2);
      }
    }
  }
}
#undef BT_PMRC_KT
#undef BT_PMRC_FITS
#undef BT_PMRC_TMAX
#undef BT_PMRC_U
#endif

/* The per-call values pixel_col needs, read once (int8 output stores could alias the parameters). */
typedef struct {
  int32_t K, off, off2, ow, ips, ops, in_row, sh, sw;
  int direct;   /* 1x1 without padding: the pixel is read in place */
} bt_pm_geom;

/* Widens the patch of the output pixel whose window starts at input (iy0, ix0) tap by tap into pixel q's place
 * of the P interleaved at col: with c_in % 4 == 0 each tap is whole groups of 4 values (tap t at col + P t c_in),
 * a padding tap is zeros; no gathered copy, any pixel stride and dilation. (Inlined at bt_pm_col's call sites it
 * grows gcc's size estimate of every instance: bt_rq2m, bt_tailw and bt_tail_dot are always_inline so that an
 * RGB stem's instance keeps them inline; out of line, ResNet-8's 8x8 layer lost most of the gain.) */
static inline __attribute__((always_inline)) void bt_pm_taps(const bt_conv_params *p, const int8_t *in,
                                                             int32_t in_y0, int32_t iy0, int32_t ix0, int16_t *col,
                                                             int32_t q, int32_t off, int32_t off2, const int32_t P,
                                                             const int dbl) {
  const int32_t cin = p->in.c, ips = p->in.pixel_stride, in_row = p->in.w * ips;
  int16_t *d = col;
  for (int32_t ky = 0; ky < p->kh; ky++) {
    const int32_t iy = iy0 + ky * p->dil_h;
    const int row_ok = (uint32_t)iy < (uint32_t)p->in.h;
    const int8_t *const irow = in + (iy - in_y0) * in_row;
    for (int32_t kx = 0; kx < p->kw; kx++, d += P * cin) {
      const int32_t ix = ix0 + kx * p->dil_w;
      if (row_ok && (uint32_t)ix < (uint32_t)p->in.w) {
        bt_widenp_x(irow + ix * ips, d, q, cin, P, off, off2, dbl);
      } else {
        int16_t *z = d + 2 * q;
        for (int32_t k = 0; k < cin; k += 4, z += 4 * P) {
          const int32_t zero = 0;
          __builtin_memcpy(z, &zero, 4);
          __builtin_memcpy(z + 2 * P, &zero, 4);
        }
      }
    }
  }
}

/* Widens the patch of the output pixel whose window starts at input (iy0, ix0), partly outside the image, filter
 * row by filter row, its rows whole groups of 4 values (run = kw c_in, run % 4 == 0, c_in % 4 != 0: bt_pm_taps
 * takes the others; dense input, dil_w 1) into pixel q's place of the P interleaved at col (P 0: a column of its
 * own): a row above or below the image zeros, one inside it widened from the input, or, when the window crosses
 * a side, from rb (run bytes: the zero point at the taps outside, filled once, the inside copied per row). A
 * gathered copy of the whole patch took a bounds check and a byte copy per value (kws's 10x4 stem, c_in 1: 65 of
 * its 125 patches, ~35 K cycles of its 567 K). */
static inline __attribute__((always_inline, unused)) void bt_pm_rows(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                             int32_t iy0, int32_t ix0, int16_t *col, int32_t q,
                                                             int8_t *__restrict rb, const int32_t P, int32_t off,
                                                             int32_t off2, const int dbl) {
  const int32_t cin = p->in.c, kw = p->kw, run = kw * cin, in_row = p->in.w * cin;
  int32_t kx0 = ix0 < 0 ? -ix0 : 0, kx1 = p->in.w - ix0 < kw ? p->in.w - ix0 : kw;   /* taps inside: [kx0, kx1) */
  if (kx0 > kw) kx0 = kw;
  if (kx1 < kx0) kx1 = kx0;
  const int side = kx0 > 0 || kx1 < kw;
  if (side) {
    const int8_t zp = (int8_t)(-off);
    for (int32_t k = 0; k < run; k++) rb[k] = zp;
  }
  for (int32_t ky = 0; ky < p->kh; ky++) {
    const int32_t iy = iy0 + ky * p->dil_h;
    int16_t *const d = P ? col + P * ky * run : col + ky * run;
    if ((uint32_t)iy >= (uint32_t)p->in.h) {   /* padding row: its widened values are 0 */
      const int32_t zero = 0;
      if (P) {
        int16_t *z = d + 2 * q;
        for (int32_t k = 0; k < run; k += 4, z += 4 * P) {
          __builtin_memcpy(z, &zero, 4);
          __builtin_memcpy(z + 2 * P, &zero, 4);
        }
      } else {
        for (int32_t k = 0; k < run; k += 2) __builtin_memcpy(d + k, &zero, 4);
      }
      continue;
    }
    const int8_t *src = in + (iy - in_y0) * in_row + ix0 * cin;
    if (side) {
      for (int32_t k = kx0 * cin; k < kx1 * cin; k++) rb[k] = src[k];
      src = rb;
    }
    if (P == 0) bt_widen_x(src, d, run, off, off2, dbl);
    else bt_widenp_x(src, d, q, run, P, off, off2, dbl);
  }
}

/* The patch's values j..j+3 (j % 4 == 0) as one word, the patch inside the image: its kh filter rows are runs
 * of `run` (>= 4) input bytes `rs` apart from s. One unaligned load inside a run, else the run's last bytes
 * (the load ending at its end, shifted down) and the next run's first ones (ORR with a shift): every load
 * inside the runs. */
static inline __attribute__((always_inline)) uint32_t bt_pm_word(const int8_t *s, int32_t rs, int32_t run,
                                                                  int32_t j) {
  const int32_t ky = j / run, o = j % run;
  const int8_t *r = s + ky * rs;
  if (o + 4 <= run) return bt_ld4(r + o);
  const int32_t n1 = run - o;   /* 1..3 bytes from this run, the rest from the next one */
  return (bt_ld4(r + run - 4) >> (8 * (4 - n1))) | (bt_ld4(r + rs) << (8 * n1));
}

/* A patch inside the image whose filter rows are not whole groups of 4 values (a stem's kw*c_in = 9, 15, ...),
 * layer constants only (K <= BT_PM_WORDS_K: the loop unrolled, each group's rows known at compile time):
 * widened straight from the input, the groups that straddle two rows by bt_pm_word (2 loads and 2 shifts
 * instead of a gather's copies of every byte and a reload), the K % 4 tail from the load ending at the last
 * run's end, its missing values masked to 0 (the layout of bt_widen_x / bt_widenp_x). */
#define BT_PM_WORDS_K 64
static inline __attribute__((always_inline)) void bt_pm_widen_words(const int8_t *s, int32_t rs, int32_t run,
                                                                     int32_t K, int16_t *col, int32_t q,
                                                                     const int32_t P, int32_t off, int32_t off2,
                                                                     const int dbl) {
  const int32_t K4 = K & ~3, r = K & 3;
  int16_t *d = P ? col + 2 * q : col;
#pragma GCC unroll 16
  for (int32_t j = 0; j < K4; j += 4, d += P ? 4 * P : 4) {
    const uint32_t v = bt_pm_word(s, rs, run, j);
    int32_t a = (int32_t)bt_sxtab16((uint32_t)off2, v), b = (int32_t)bt_sxtab16_ror8((uint32_t)off2, v);
    if (dbl) { a = bt_sadd16(a, a); b = bt_sadd16(b, b); }
    __builtin_memcpy(d, &a, 4);
    __builtin_memcpy(d + (P ? 2 * P : 2), &b, 4);
  }
  if (r) {   /* values K4..K-1: the last run's last r bytes */
    const uint32_t v = bt_ld4(s + (K4 / run) * rs + run - 4) >> (8 * (4 - r));
    if (P) {
      int32_t a = (int32_t)bt_sxtab16((uint32_t)off2, v), b = (int32_t)bt_sxtab16_ror8((uint32_t)off2, v);
      if (r < 3) a &= 0xffff;          /* value k+2 missing */
      b = r > 1 ? b & 0xffff : 0;      /* value k+3 always, k+1 when r == 1 */
      if (dbl) { a = bt_sadd16(a, a); b = bt_sadd16(b, b); }
      __builtin_memcpy(d, &a, 4);
      __builtin_memcpy(d + 2 * P, &b, 4);
    } else {
      for (int32_t i = 0; i < r; i++) d[i] = (int16_t)(((int8_t)(v >> (8 * i)) + off) * (1 + dbl));
    }
  }
}

/* Widens output pixel tt of the band (raster order from row y0)'s patch into col; P = 0: col is a
 * column of its own (bt_widen), else pixel q of the P interleaved at col (bt_widenp). A 1x1 without
 * padding (g->direct) reads the pixel in place; a patch inside the image of a dense input without
 * horizontal dilation is widened from its kh input runs directly when its filter rows are whole groups
 * of 4 values (kw*c_in % 4 == 0), or, with the layer's constants, by bt_pm_widen_words (runs of 4 or more
 * values, K <= BT_PM_WORDS_K); with interleaved columns (P > 0) and c_in % 4 == 0 other patches are
 * widened tap by tap (bt_pm_taps); the rest are gathered into patch first (bt_gather: zero point at
 * padding taps). Returns its output address. */
static inline __attribute__((always_inline)) int8_t *bt_pm_col(const bt_conv_params *p, const bt_pm_geom *g,
                                                              const int8_t *in, int32_t in_y0, int8_t *out,
                                                              int32_t y0, int32_t tt, int8_t *__restrict patch,
                                                              int16_t *__restrict col, int32_t q, const int32_t P,
                                                              const int dbl) {
  const int8_t *src = patch;
  if (g->direct && g->sh == 1 && g->sw == 1 && g->in_row == g->ow * g->ips) {
    src = in + (y0 - in_y0) * g->in_row + tt * g->ips;   /* the band's pixels in raster order, no division */
  } else if (g->direct) {
    const int32_t y = y0 + tt / g->ow, x = tt % g->ow;
    src = in + (y * g->sh - in_y0) * g->in_row + x * g->sw * g->ips;
  } else {
    const int32_t y = y0 + tt / g->ow, x = tt % g->ow;
    const int32_t run = p->kw * p->in.c, iy0 = y * g->sh - p->pad_top, ix0 = x * g->sw - p->pad_left;
    const int words = (run & 3) && __builtin_constant_p(run) && __builtin_constant_p(g->K) && run >= 4 &&
                      g->K <= BT_PM_WORDS_K;
    if (((run & 3) == 0 || words) && g->ips == p->in.c && p->dil_w == 1 && iy0 >= 0 &&
        iy0 + (p->kh - 1) * p->dil_h < p->in.h && ix0 >= 0 && ix0 + p->kw <= p->in.w) {
      const int8_t *s = in + (iy0 - in_y0) * g->in_row + ix0 * g->ips;
#ifdef __OPTIMIZE__   /* -O0 knows no constants (words is 0): its copies would only grow the frame */
      if (words) {
        bt_pm_widen_words(s, p->dil_h * g->in_row, run, g->K, col, q, P, g->off, g->off2, dbl);
        return out + tt * g->ops;
      }
#endif
      for (int32_t ky = 0; ky < p->kh; ky++, s += p->dil_h * g->in_row) {
        if (P == 0) bt_widen_x(s, col + ky * run, run, g->off, g->off2, dbl);
        else bt_widenp_x(s, col + P * ky * run, q, run, P, g->off, g->off2, dbl);
      }
      return out + tt * g->ops;
    }
#ifdef __OPTIMIZE__   /* -O0: its inlined copies grew the frame past the test firmware's stack (HardFault) */
    if ((run & 3) == 0 && (p->in.c & 3) != 0 && g->ips == p->in.c && p->dil_w == 1) {   /* whole groups per row */
      bt_pm_rows(p, in, in_y0, iy0, ix0, col, q, patch, P, g->off, g->off2, dbl);
      return out + tt * g->ops;
    }
#endif
    if (P != 0 && (p->in.c & 3) == 0) {   /* whole groups per tap: widened tap by tap, no patch */
      bt_pm_taps(p, in, in_y0, iy0, ix0, col, q, g->off, g->off2, P, dbl);
      return out + tt * g->ops;
    }
    bt_gather(p, in, in_y0, y, x, patch);
  }
  if (P == 0) bt_widen_x(src, col, g->K, g->off, g->off2, dbl);
  else bt_widenp_x(src, col, q, g->K, P, g->off, g->off2, dbl);
  return out + tt * g->ops;
}

/* BT_PM_SHARED (defined by conv.c only, before its includes): the shared variants, whose layer's shape is in
 * memory (nothing for gcc to fold), call one out-of-line copy of the column builder (bt_pm_col_call: a column per
 * output pixel, not per MAC, so the call costs little; six inlined copies per variant were most of its ~17.5 KB;
 * at -Os: 1,960 B instead of 3,194 at -O2, once in a firmware; -O2 had made vww's 6x6 1x1 layers ~7 K est. cycles
 * faster each, but the triples of a 1x1 read in place and of a KxK inside the image are widened by bt_pm_widen3r
 * now, not here: what calls it is a KxK's pixels at the image's edges, strided 1x1 layers, stems and the pixels
 * left after the triples, ResNet-8's 3x3 layers ~1.3 % slower, vww's stem 2.4 %, its 1x1 layers alike), of the
 * pixels left after the triples (bt_pm_tail_call) and requantise the triples in asm (bt_pm_rqr6). model.c's
 * instances and tile functions keep everything inline, as before: in MobileNet v2's tile functions the mere
 * presence of the calls made gcc fail bt_pm_widen3's and bt_pm_rqm6's asm ("impossible constraint"). */
#ifdef BT_PM_SHARED
static __attribute__((noinline, unused, optimize("Os", "no-tree-loop-distribute-patterns"))) int8_t *bt_pm_col_call(const bt_conv_params *p,
                                                                                 const bt_pm_geom *g,
                                                                                 const int8_t *in, int32_t in_y0,
                                                                                 int8_t *out, int32_t y0, int32_t tt,
                                                                                 int8_t *__restrict patch,
                                                                                 int16_t *__restrict col, int32_t q,
                                                                                 int32_t P, int dbl) {
  return bt_pm_col(p, g, in, in_y0, out, y0, tt, patch, col, q, P, dbl);
}
#endif
/* the triples' column builder: the out-of-line copy in the shared variants, bt_pm_col itself inline elsewhere
 * (textually, so model.c's instances compile as before: a wrapper made each one 11.5 KB larger at -O0) */
#ifdef BT_PM_SHARED
#define BT_PM_COLX bt_pm_col_call
#else
#define BT_PM_COLX bt_pm_col
#endif

/* bt_conv_pm's pixels left after its triples (t..n): two at a time (bt_mm2x2), an odd last one alone (bt_mv1x4),
 * the columns built by COL, the outputs by OUT (G: the geometry's address). bt_conv_pm expands it inline with
 * bt_pm_col / bt_pm_out, as main did before the shared variants' restructure (an always_inline function of it
 * left bt_mm2x2's run-time-K asm with no registers in fused tile kernels: 'impossible constraints'); the shared
 * variants (BT_PM_SHARED) call one out-of-line copy, bt_pm_tail_call, whose requantisation and activation are
 * run-time values: at most two pixels a band on the 3-pixel path. */
#define BT_PM_TAIL(G, COL, OUT) \
  for (; t + 2 <= n; t += 2) {                                                                                                                              \
    int8_t *const o0 = COL(p, G, in, in_y0, out, y0, t, patch, col, 0, 2, dbl);                                                                             \
    int8_t *const o1 = COL(p, G, in, in_y0, out, y0, t + 1, patch, col, 1, 2, dbl);                                                                         \
    int32_t oc = 0;                                                                                                                                         \
    for (; oc + 2 <= cout; oc += 2) {                                                                                                                       \
      int32_t acc[4], b0 = 0, b1 = 0;                                                                                                                       \
      if (bias) { b0 = bias[oc] * (1 + dbl); b1 = bias[oc + 1] * (1 + dbl); }                                                                               \
      bt_mm2x2(col, filter + oc * K, K, b0, b1, acc);                                                                                                       \
      const int32_t m0 = mult[oc], m1 = mult[oc + 1], s0 = shift[oc], s1 = shift[oc + 1];                                                                   \
      const int32_t p0 = fast ? BT_PM_P2(s0) : 0, e0 = fast ? BT_PM_E1(s0) : 0;                                                                             \
      const int32_t p1 = fast ? BT_PM_P2(s1) : 0, e1 = fast ? BT_PM_E1(s1) : 0;                                                                             \
      const int32_t r00 = OUT(acc[0], m0, s0, p0, e0, zp, lo, hi, fast, act);                                                                               \
      const int32_t r01 = OUT(acc[1], m1, s1, p1, e1, zp, lo, hi, fast, act);                                                                               \
      const int32_t r10 = OUT(acc[2], m0, s0, p0, e0, zp, lo, hi, fast, act);                                                                               \
      const int32_t r11 = OUT(acc[3], m1, s1, p1, e1, zp, lo, hi, fast, act);                                                                               \
      o0[oc] = (int8_t)r00; o0[oc + 1] = (int8_t)r01; o1[oc] = (int8_t)r10; o1[oc + 1] = (int8_t)r11;                                                       \
    }                                                                                                                                                       \
    if (oc < cout) {                                                                                                                                        \
      int32_t acc[2];                                                                                                                                       \
      bt_mmpx1(col, filter + oc * K, K, 2, acc);                                                                                                            \
      const int32_t b = bias ? bias[oc] * (1 + dbl) : 0;                                                                                                    \
      const int32_t s0 = shift[oc], p0 = fast ? BT_PM_P2(s0) : 0, e0 = fast ? BT_PM_E1(s0) : 0;                                                             \
      const int32_t r0 = OUT(acc[0] + b, mult[oc], s0, p0, e0, zp, lo, hi, fast, act);                                                                      \
      const int32_t r1 = OUT(acc[1] + b, mult[oc], s0, p0, e0, zp, lo, hi, fast, act);                                                                      \
      o0[oc] = (int8_t)r0; o1[oc] = (int8_t)r1;                                                                                                             \
    }                                                                                                                                                       \
  }                                                                                                                                                         \
  if (t < n) {                                                                                                                                              \
    int8_t *const o = COL(p, G, in, in_y0, out, y0, t, patch, col, 0, 0, dbl);                                                                              \
    int32_t oc = 0;                                                                                                                                         \
    for (; oc + 4 <= cout; oc += 4) {                                                                                                                       \
      int32_t acc[4];                                                                                                                                       \
      acc[0] = 0; acc[1] = 0; acc[2] = 0; acc[3] = 0;                                                                                                       \
      if (bias) { acc[0] = bias[oc] * (1 + dbl); acc[1] = bias[oc + 1] * (1 + dbl); acc[2] = bias[oc + 2] * (1 + dbl); acc[3] = bias[oc + 3] * (1 + dbl); } \
      bt_mv1x4(col, filter + oc * K, K, acc);                                                                                                               \
      int32_t r[4];                                                                                                                                         \
      for (int k = 0; k < 4; k++) {                                                                                                                         \
        const int32_t sk = shift[oc + k], pk = fast ? BT_PM_P2(sk) : 0, ek = fast ? BT_PM_E1(sk) : 0;                                                       \
        r[k] = OUT(acc[k], mult[oc + k], sk, pk, ek, zp, lo, hi, fast, act);                                                                                \
      }                                                                                                                                                     \
      o[oc] = (int8_t)r[0]; o[oc + 1] = (int8_t)r[1]; o[oc + 2] = (int8_t)r[2]; o[oc + 3] = (int8_t)r[3];                                                   \
    }                                                                                                                                                       \
    for (; oc < cout; oc++) {                                                                                                                               \
      const int32_t a = bt_mv1x1(col, filter + oc * K, K, bias ? bias[oc] * (1 + dbl) : 0);                                                                 \
      const int32_t sk = shift[oc], pk = fast ? BT_PM_P2(sk) : 0, ek = fast ? BT_PM_E1(sk) : 0;                                                             \
      o[oc] = (int8_t)OUT(a, mult[oc], sk, pk, ek, zp, lo, hi, fast, act);                                                                                  \
    }                                                                                                                                                       \
  }

#ifdef BT_PM_SHARED
/* bt_pm_out with a run-time requantisation and activation (bt_pm_tail_call): one out-of-line copy. */
static __attribute__((noinline, unused)) int32_t bt_pm_out_call(int32_t acc, int32_t m, int32_t s, int32_t zp,
                                                                int32_t lo, int32_t hi, int fast, int act) {
  const int32_t p2 = fast ? BT_PM_P2(s) : 0, e1 = fast ? BT_PM_E1(s) : 0;
  if (fast == 2) return act == 2 ? bt_pm_out(acc, m, s, 0, 0, zp, lo, hi, 2, 2) : act ? bt_pm_out(acc, m, s, 0, 0, zp, lo, hi, 2, 1)
                                                                                    : bt_pm_out(acc, m, s, 0, 0, zp, lo, hi, 2, 0);
  if (fast) return act == 2 ? bt_pm_out(acc, m, s, p2, e1, zp, lo, hi, 1, 2) : act ? bt_pm_out(acc, m, s, p2, e1, zp, lo, hi, 1, 1)
                                                                                 : bt_pm_out(acc, m, s, p2, e1, zp, lo, hi, 1, 0);
  return bt_clamp(bt_mbqm_fast(acc, m, s) + zp, lo, hi);
}
#define BT_PM_OUT_CALL(acc, m, s, p2, e1, zp, lo, hi, fast, act)                                                  \
  (__builtin_constant_p(fast) && __builtin_constant_p(act) ? bt_pm_out(acc, m, s, p2, e1, zp, lo, hi, fast, act) \
                                                           : bt_pm_out_call(acc, m, s, zp, lo, hi, fast, act))
static __attribute__((noinline, unused, optimize("Os", "no-tree-loop-distribute-patterns"))) void bt_pm_tail_call(
    const bt_conv_params *p, const bt_pm_geom *g, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t t,
    int32_t n, int16_t *__restrict col, int8_t *__restrict patch, int fast, int act) {
  const int32_t cout = p->out.c, K = p->kh * p->kw * p->in.c;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int8_t *const filter = p->filter;
  const int dbl = fast == 2;
  BT_PM_TAIL(g, bt_pm_col_call, BT_PM_OUT_CALL);
}
#endif

/* The patch-matrix path (im2col.h); a constant layer bt_pmr_ok takes runs bt_conv_pmr (its ring and scratch in col)
 * instead. Output pixels of the band three at a time (bt_mm3x2) when the patch has at
 * most BT_COL3 values (up to BT_PM3_T triples widened at once) or, up to BT_COL_MAX, one triple at a time when
 * no patch is gathered (1x1 without padding, or c_in % 4 == 0: bt_pm_taps), else two at a time (bt_mm2x2),
 * output channels two at a time; the pixels left over two at a time, an odd last pixel alone, four channels at
 * a time (bt_mv1x4). Stack: 3 columns of BT_COL_MAX int16 (3840 bytes); a gathered patch (BT_COL_MAX bytes)
 * lies in it after 3 BT_COL3 (the triples' columns on the BT_COL3 path, at most 2 BT_COL_MAX on the others). */
static inline __attribute__((always_inline)) void bt_conv_pm_form(const bt_conv_params *p, const int8_t *in,
                                                                int32_t in_y0, int8_t *out, int32_t y0, int32_t y1,
                                                                const int fast, const int act, const int compact) {
  (void)compact;   /* read by the asm paths only (BT_PM_RQ6_ASM): not in a host build */
  int16_t col[3 * BT_COL_MAX] __attribute__((aligned(4)));   /* one frame under 4 KB: bt_mm3x2's end pointer */
#if BT_PM_RQ6_ASM && defined(BT_PM_SHARED)
  bt_pm_l3r l3s;   /* bt_pm_loop3r's words */
#endif
  int8_t *const patch = (int8_t *)(col + 3 * BT_COL3);         /* BT_COL_MAX bytes, used only with P = 0 or 2 or
                                                                  K <= BT_COL3 (bt_pm_col gathers no other) */
  const int32_t cout = p->out.c, K = p->kh * p->kw * p->in.c;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int8_t *const filter = p->filter;
  const bt_pm_geom g = {K, p->input_offset, bt_dup16(p->input_offset), p->out.w, p->in.pixel_stride,
                      p->out.pixel_stride, p->in.w * p->in.pixel_stride, p->stride_h, p->stride_w,
                      p->kh == 1 && p->kw == 1 && p->pad_top == 0 && p->pad_left == 0};
#if BT_PM_RQ6_ASM
  if (bt_pmr_ok(p, fast, act, (int32_t)sizeof col)) {   /* a constant KxK of c_in % 4 == 0: the row buffer */
    bt_conv_pmr(p, in, in_y0, out, y0, y1, fast, col, compact);
    return;
  }
#endif
  const int32_t n = (y1 - y0) * p->out.w;
  const int dbl = fast == 2;   /* doubled sums (bt_rq2m) */
  int32_t t = 0;
  if (K <= BT_COL3 || g.direct || (p->in.c & 3) == 0) {   /* three pixels at a time: each filter word unpacked
                                                              once for three columns */
    /* up to BT_PM3_T triples widened at once (triple j at col + j*S; over BT_COL3 values one), then per pair of
       output channels their constants loaded once for all the triples; the asm requantisation's outputs are
       in raster order from ob[0]: as many triples as the columns hold */
    const int asm_rq = BT_PM_RQ6_ASM && fast && act == 2 && __builtin_constant_p(g.ops) && g.ops > 0 && g.ops < 2000;
    /* a 1x1 read in place gathers no patch: its triples' columns may take all of col with the asm requantisation
       (ob[0] only), fewer passes over the channel pairs' constants (vww's 6x6 1x1 layers of 128 values: one pass
       of 12 triples instead of three of 4, ~6 K est. high cycles a layer; kws's 1x1 layers 5 passes of 41 triples
       instead of 6, ~1.6 K) */
    /* raster: the outputs addressed from ob[0] in raster order (bt_pm_col returns out + tt ops), no address a pixel
       in ob, so a pass takes as many triples as the columns hold: the asm requantisation's, and every shared
       variant's (BT_PM_SHARED: vww's 48x48 1x1 of 8 values 96 passes over the channel pairs' constants -> 10) */
#ifdef BT_PM_SHARED
    const int raster = 1;
    (void)asm_rq;   /* (a host build: no asm paths) */
#else
    const int raster = asm_rq;
#endif
#if BT_PM_RQ6_ASM
    const int w3 = asm_rq && g.direct && g.sh == 1 && g.sw == 1 && g.in_row == g.ow * g.ips && (K & 3) == 0 &&
                   (g.ips & 3) == 0 && __builtin_constant_p(K) && __builtin_constant_p(g.ips) && g.ips < 2048 && K >= 4;
#ifdef BT_PM_SHARED
    /* the shared variants: a triple widened by one bt_pm_widen3r a filter row (the pixel stride a register): a 1x1
       read in place whose band's pixels are consecutive (w3r: one row of K values), or a KxK patch whose filter
       rows are whole groups of 4 values (dense input, dil_w 1: bt_pm_col's rows path), the triple in one output
       row inside the image (its pixels sw ips apart). bt_pm_col_call a pixel (a call, the geometry's tests, a STR
       a word and a branch on dbl a group) took ~3.3-3.8 instructions a value: ResNet-8's 32x32 3x3 layers 4.03 M
       -> 3.61 M est. cycles each */
    const int w3r = g.direct && g.sh == 1 && g.sw == 1 && g.in_row == g.ow * g.ips && (K & 3) == 0 && K >= 4;
    const int32_t run = p->kw * p->in.c, rstep = p->dil_h * g.in_row, pstep = g.sw * g.ips;
    const int rows3 = w3r || (!g.direct && (run & 3) == 0 && run >= 4 && g.ips == p->in.c && p->dil_w == 1);
#endif
#endif
    const int32_t S = BT_GROUPED(3, K), tcap = raster ? BT_COL3 : BT_PM3_T;
#ifdef BT_PM_SHARED   /* (BT_PM_L3_ROOM is 0 there, but its test left the shared variants 40-64 B more code) */
    const int32_t room = (raster && g.direct ? 3 * BT_COL_MAX : 3 * BT_COL3);
#else
    const int32_t room = (raster && g.direct ? 3 * BT_COL_MAX - BT_PM_L3_ROOM(p, K, g.ops) : 3 * BT_COL3);
#endif
    const int32_t tmax = K > BT_COL3 ? 1 : room / S < tcap ? room / S : tcap;
    int8_t *ob[3 * BT_PM3_T];
    ob[0] = out;   /* set in every pass (T >= 1); GCC -O2 cannot see it */
    while (t + 3 <= n) {
      int32_t T = (n - t) / 3;
      if (T > tmax) T = tmax;
#if BT_PM_RQ6_ASM
      if (w3) {   /* a 1x1 read in place: each triple's three pixels widened together (bt_pm_widen3) */
        const int8_t *src = in + (y0 - in_y0) * g.in_row + t * g.ips;
        ob[0] = out + t * g.ops;
        for (int32_t j = 0; j < T; j++, t += 3, src += 3 * g.ips) bt_pm_widen3(src, col + j * S, K, g.ips, g.off2, dbl);
      } else
#ifdef BT_PM_SHARED
      if (w3r) {   /* the same in the shared variants (bt_pm_widen3r): no per-triple tests of rows3's loop below */
        const int8_t *src = in + (y0 - in_y0) * g.in_row + t * g.ips;
        ob[0] = out + t * g.ops;
        for (int32_t j = 0; j < T; j++, t += 3, src += 3 * g.ips) bt_pm_widen3r(src, col + j * S, K, g.ips, g.off2, dbl);
      } else
#endif
#endif
      for (int32_t j = 0; j < T; j++, t += 3) {
#if BT_PM_RQ6_ASM && defined(BT_PM_SHARED)
        if (rows3) {
          const int8_t *sr = in + (y0 - in_y0) * g.in_row + t * g.ips;   /* w3r: the band's pixels consecutive */
          int inside = w3r;
          if (!w3r) {
            const int32_t x = t % g.ow, iy0 = (y0 + t / g.ow) * g.sh - p->pad_top, ix0 = x * g.sw - p->pad_left;
            inside = x + 2 < g.ow && iy0 >= 0 && iy0 + (p->kh - 1) * p->dil_h < p->in.h && ix0 >= 0 &&
                     ix0 + 2 * g.sw + p->kw <= p->in.w;
            sr = in + (iy0 - in_y0) * g.in_row + ix0 * g.ips;
          }
          if (inside) {
            int16_t *c = col + j * S;
            for (int32_t ky = 0; ky < p->kh; ky++, sr += rstep, c += 3 * run) bt_pm_widen3r(sr, c, run, pstep, g.off2, dbl);
            if (j == 0) ob[0] = out + t * g.ops;
            continue;
          }
        }
#endif
        int8_t *const o0 = BT_PM_COLX(p, &g, in, in_y0, out, y0, t, patch, col + j * S, 0, 3, dbl);
        int8_t *const o1 = BT_PM_COLX(p, &g, in, in_y0, out, y0, t + 1, patch, col + j * S, 1, 3, dbl);
        int8_t *const o2 = BT_PM_COLX(p, &g, in, in_y0, out, y0, t + 2, patch, col + j * S, 2, 3, dbl);
        if (!raster) { ob[3 * j] = o0; ob[3 * j + 1] = o1; ob[3 * j + 2] = o2; }
        else if (j == 0) ob[0] = o0;
      }
      int32_t oc = 0;
      for (; oc + 2 <= cout; oc += 2) {
        const int32_t b0 = bias ? bias[oc] * (1 + dbl) : 0, b1 = bias ? bias[oc + 1] * (1 + dbl) : 0;
        const int32_t m0 = mult[oc], m1 = mult[oc + 1], s0 = shift[oc], s1 = shift[oc + 1];
        const int32_t p0 = fast ? BT_PM_P2(s0) : 0, e0 = fast ? BT_PM_E1(s0) : 0;
        const int32_t p1 = fast ? BT_PM_P2(s1) : 0, e1 = fast ? BT_PM_E1(s1) : 0;
        const int8_t *const f = filter + oc * K;
#if BT_PM_RQ6_ASM
        /* the whole triple loop in one asm (bt_pm_loop3); K past its straight form's only in the compact one
           (BT_PM_L3_KLIM) */
        if (asm_rq && BT_PM_L3_ROOM(p, K, g.ops) && (K < BT_PM_L3_KSTRAIGHT || compact == 1)) {
          bt_pm_l3s *const l3s = (bt_pm_l3s *)(col + 3 * BT_COL_MAX) - 1;
          /* the middle form (compact 2): the zero point never folded, one asm (BT_PM_L3_ZO's ADD an output), not
             one per case of the fold */
          const int unfold = compact == 2;
          const int folded = bt_pm_k6(l3s->k + 2, m0, m1, s0, s1, unfold ? 0 : zp, fast) & !unfold;
          if (folded || __builtin_constant_p(zp)) {
            l3s->k[0] = b0; l3s->k[1] = b1;
            l3s->k[4] |= (T & 1) << 8;   /* bt_pm_loop3's odd count (ASR by a register reads bits 0-7) */
            l3s->o = ob[0] + oc; l3s->end = col + T * S;
            if (compact == 1) l3s->fend = f + (K & ~3);
            bt_pm_loop3(col, f, K, l3s, g.ops, fast, folded, zp, compact == 1);
            continue;
          }
        }
        if (fast == 2 && asm_rq) {
          const int32_t q0 = -bt_pm_shift(s0), q1 = -bt_pm_shift(s1);
          /* a compact or medium form (compact): the zero point never folded, one copy of the triples' asm, not one
             per case of the fold (a fused tile kernel's calls of a column: ResNet-8's K = 288, 1.2 KB a copy) */
          const int folded = !compact && q0 <= 22 && q1 <= 22;   /* bt_rq2_zp_ok */
          const int32_t k[6] = {m0, (1 << (q0 - 1)) + (folded ? (int32_t)((uint32_t)zp << q0) : 0), q0,
                                m1, (1 << (q1 - 1)) + (folded ? (int32_t)((uint32_t)zp << q1) : 0), q1};
          int8_t *o = ob[0] + oc;
          const int16_t *cj = col;
          if (folded) {
            for (int32_t j = 0; j < T; j++, cj += S, o += 3 * g.ops) {
              int32_t acc[6];
              bt_mm3x2(cj, f, K, b0, b1, acc);
              bt_pm_rqm6(acc, k, o, g.ops, 1, zp);
            }
          } else {
            for (int32_t j = 0; j < T; j++, cj += S, o += 3 * g.ops) {
              int32_t acc[6];
              bt_mm3x2(cj, f, K, b0, b1, acc);
              bt_pm_rqm6(acc, k, o, g.ops, 0, zp);
            }
          }
          continue;
        }
        if (fast == 1 && asm_rq) {
          const int folded = !compact && bt_rq2_zp_ok(bt_pm_shift(s0)) && bt_rq2_zp_ok(bt_pm_shift(s1));   /* as above */
          const int32_t k[6] = {m0, folded ? bt_rq2_p2_zp(p0, e0, zp) : p0, e0,
                                m1, folded ? bt_rq2_p2_zp(p1, e1, zp) : p1, e1};
          int8_t *o = ob[0] + oc;   /* triple j's outputs at ob[0] + 3*j*ops: raster order */
          const int16_t *cj = col;
          if (folded) {
            for (int32_t j = 0; j < T; j++, cj += S, o += 3 * g.ops) {
              int32_t acc[6];
              bt_mm3x2(cj, f, K, b0, b1, acc);
              bt_pm_rq6(acc, k, o, g.ops, 1, zp);
            }
          } else {
            for (int32_t j = 0; j < T; j++, cj += S, o += 3 * g.ops) {
              int32_t acc[6];
              bt_mm3x2(cj, f, K, b0, b1, acc);
              bt_pm_rq6(acc, k, o, g.ops, 0, zp);
            }
          }
          continue;
        }
#ifdef BT_PM_SHARED
        if (fast && act == 2 && !asm_rq) {   /* the shared variants' run-time output stride: bt_pm_rqr6 */
          const int32_t ops = g.ops;
          int8_t *o = ob[0] + oc;
          const int16_t *cj = col, *const cend = col + T * S;
          bt_pm_l3r *const l3 = &l3s;
          /* one asm (bt_pm_loop3r) when the pair's zero point folds (bt_pm_k6's constants straight into l3) */
          if ((K & 3) == 0 && K >= 8 &&
              bt_pm_k6(l3->k + 2, m0, m1, s0, s1, zp, fast)) {
            l3->k[0] = b0; l3->k[1] = b1; l3->o = o; l3->ops = ops; l3->end = cend; l3->f0 = f; l3->K = K;
            bt_pm_loop3r(col, l3, fast);
            continue;
          }
          int32_t k[6];
          const int folded = bt_pm_k6(k, m0, m1, s0, s1, zp, fast);
          /* one column pointer and one output pointer stepped (raster), no count: gcc kept five induction
             variables on the stack */
          do {
            int32_t acc[6];
            bt_mm3x2(cj, f, K, b0, b1, acc);
            bt_pm_rqr6(acc, k, folded, zp, fast);
            /* the three pixels' two outputs each, o stepped ops a pixel in one asm (gcc kept an address a pixel) */
            __asm__ volatile("strb %[a00], [%[o]]\n\tstrb %[a01], [%[o], #1]\n\tadd %[o], %[o], %[ops]\n\t"
                             "strb %[a10], [%[o]]\n\tstrb %[a11], [%[o], #1]\n\tadd %[o], %[o], %[ops]\n\t"
                             "strb %[a20], [%[o]]\n\tstrb %[a21], [%[o], #1]\n\tadd %[o], %[o], %[ops]\n\t"
                             : [o] "+r"(o)
                             : [a00] "r"(acc[0]), [a01] "r"(acc[1]), [a10] "r"(acc[2]), [a11] "r"(acc[3]),
                               [a20] "r"(acc[4]), [a21] "r"(acc[5]), [ops] "r"(ops)
                             : "memory");
            cj += S;
          } while (cj != cend);
          continue;
        }
#endif
#endif
        for (int32_t j = 0; j < T; j++) {
          int32_t acc[6];
          bt_mm3x2(col + j * S, f, K, b0, b1, acc);
          int8_t *const o0 = (raster ? ob[0] + 3 * j * g.ops : ob[3 * j]) + oc;
          int8_t *const o1 = raster ? o0 + g.ops : ob[3 * j + 1] + oc, *const o2 = raster ? o1 + g.ops : ob[3 * j + 2] + oc;
          o0[0] = (int8_t)bt_pm_out(acc[0], m0, s0, p0, e0, zp, lo, hi, fast, act);
          o0[1] = (int8_t)bt_pm_out(acc[1], m1, s1, p1, e1, zp, lo, hi, fast, act);
          o1[0] = (int8_t)bt_pm_out(acc[2], m0, s0, p0, e0, zp, lo, hi, fast, act);
          o1[1] = (int8_t)bt_pm_out(acc[3], m1, s1, p1, e1, zp, lo, hi, fast, act);
          o2[0] = (int8_t)bt_pm_out(acc[4], m0, s0, p0, e0, zp, lo, hi, fast, act);
          o2[1] = (int8_t)bt_pm_out(acc[5], m1, s1, p1, e1, zp, lo, hi, fast, act);
        }
      }
      if (oc < cout) {
        const int32_t b = bias ? bias[oc] * (1 + dbl) : 0;
        const int32_t s0 = shift[oc], p0 = fast ? BT_PM_P2(s0) : 0, e0 = fast ? BT_PM_E1(s0) : 0;
        for (int32_t j = 0; j < T; j++) {
          int32_t acc[3];
          bt_mmpx1(col + j * S, filter + oc * K, K, 3, acc);
          /* raster: only ob[0] is kept (more triples than ob holds), the outputs in raster order from it */
          int8_t *const o0 = raster ? ob[0] + 3 * j * g.ops : ob[3 * j];
          int8_t *const o1 = raster ? o0 + g.ops : ob[3 * j + 1], *const o2 = raster ? o0 + 2 * g.ops : ob[3 * j + 2];
          o0[oc] = (int8_t)bt_pm_out(acc[0] + b, mult[oc], s0, p0, e0, zp, lo, hi, fast, act);
          o1[oc] = (int8_t)bt_pm_out(acc[1] + b, mult[oc], s0, p0, e0, zp, lo, hi, fast, act);
          o2[oc] = (int8_t)bt_pm_out(acc[2] + b, mult[oc], s0, p0, e0, zp, lo, hi, fast, act);
        }
      }
    }
  }
#ifdef BT_PM_SHARED
  if (t < n) bt_pm_tail_call(p, &g, in, in_y0, out, y0, t, n, col, patch, fast, act);
#else
  BT_PM_TAIL(&g, bt_pm_col, bt_pm_out);
#endif
}
/* bt_conv_pm_form in the build's form (BT_PMR_COMPACT_ON): the shared variants, tile functions, full instances. */
static inline __attribute__((always_inline)) void bt_conv_pm(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                           int8_t *out, int32_t y0, int32_t y1, const int fast,
                                                           const int act) {
#ifdef BT_PMR_COMPACT_ON
  bt_conv_pm_form(p, in, in_y0, out, y0, y1, fast, act, BT_PMR_COMPACT_ON);
#else
  bt_conv_pm_form(p, in, in_y0, out, y0, y1, fast, act, 0);   /* no asm paths: one form */
#endif
}
#pragma GCC diagnostic pop
#endif
