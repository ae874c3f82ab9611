/* The cortex-m set's shared KxK convolution (issue 50): bt_conv_s8_kxk_rq2_ssat (conv.c), one function for every
 * KxK layer it takes, its shape read from the layer's struct at run time, where a layer's own instance (conv_pm.h's
 * row buffer with the shape as immediates) is 2-16 KB of code per layer. Taken by model.c alone (the code budget's
 * choice, kernel_variants.py's row and its conditions): kh kw > 1, c_in % 4 == 0, in.pixel_stride == c_in, no
 * dilation, K = kh kw c_in at most BT_COL_MAX, an even count of output channels, bt_rq2 requantisation with the
 * output zero point folded into every channel's rounding word (bt_rq2_zp_ok), the whole int8 range.
 *
 * Where the instance's advantage came from (ResNet-8's 3x3 layers, `buildtool run --board cortex-m4`, the QEMU
 * plugin's per-address counts): the shared bt_conv_s8_pm_rq2_ssat ran 1.12-1.25x its instances' estimated cycles,
 * (1) its MAC group (bt_pm_loop3r, BT_MM3X2_STEP_R) moved the three pixels' words by two LDMs, which the TRM does
 * not pipeline after the weights' LDRs: 29 estimated cycles a group of 24 MACs against the row buffer's 26;
 * (2) it widened each pixel's patch (bt_pm_widen3r, bt_pm_col_call tap by tap at the map's edges, ~12 % of a 32x32
 * map's pixels on that C path); (3) the code between (gathers, tails, the 1x1 paths' tests).
 * Here: (1) the group's loads are single LDRs in two pipelined runs (ldr wb, wa, x1, x2, x0; ldr wa, x1, x2, x0:
 * 11 load cycles, 27 a group; the row buffer's immediate pixel and channel offsets need 16 registers at run time,
 * the columns' one run-time offset, K, fits the 14), 16 groups a pass entered at (K / 4 - 1) % 16 from its end; where a
 * pass has BT_KXK_FW_MIN triples or more and K <= BT_KXK_FW_K, the pair's filter rows widened once a pass (bt_kxk_fw)
 * and its group 24 cycles (bt_kxk_pairw: ResNet-8's ops 1-2 3.18 -> 3.03 M est. cycles, op 4 1.59 -> 1.57 M);
 * (2) widening: strips where a pass fits 3 triples or more (below: an input row's block widened once for the triples
 * of up to R output rows, not kh times: ResNet-8's op 1 (3x3, stride 1, 32x32x16) 210 -> 194 est. cycles an output,
 * widening ~10 % -> ~3 % of it), else triples of consecutive pixels widened kernel row by kernel row; a kernel row
 * of three runs inside the map at one stride by bt_pm_widen3r, others lane by lane, a run's part inside the map and
 * its padding a call each (bt_kxk_lane); (3) one path.
 * The columns (the same 3840 bytes of stack as conv_pm.h's col) of a pass are widened at once, then each pair of
 * output channels runs over them in one asm loop (sums from the biases, bt_rq2 with the zero point folded, SSAT, a
 * pixel's two outputs one STRH, the output pointer a step on, the column pointer back by s.back); a line's last
 * triple, short of pixels, stores into a scratch word first (or bt_kxk_one for one pixel). The stack: one frame
 * (bt_kxk_pass and bt_kxk_krow inlined at one call site each), 8 bytes under the variant's before the strips, 576 more
 * for the widened filter rows. A widened pass after a widened pass runs the pairs the other way, from the pair whose
 * rows are still in fw (one widening of 8 saved a pass on ResNet-8's 16 channels), and bt_kxk_fw widens 4 groups a loop
 * pass: ResNet-8's ops 1-2 3.029 -> 3.009 M est. cycles (midpoints), op 4 1.569 -> 1.563 M, the others unchanged.
 * The columns a row leaves after its strips (ow % 3) run as strips too, a triple's pixels a third of the band apart
 * (bt_conv_kxk): ResNet-8's ops 1-2 3.009 -> 2.978 M, op 5 2.983 -> 2.971 M, op 4 1.563 -> 1.560 M; ops 8-9 (no
 * strips: the lines' loop, its strip cases gone) 1.536 -> 1.529 M and 3.003 -> 2.990 M; the function +168 B.
 * A strip's blocks are widened from one source stepped a row a block, whether its columns lie in the map decided once
 * a pass (a line's triple: once a triple) and its rows by its first and last lane, where bt_kxk_krow recomputed and
 * tested the three lanes' rows every block; bt_kxk_one in asm: ResNet-8's ops 1-2 2.978 -> 2.932 M, op 4 1.560 ->
 * 1.535 M, op 5 2.971 -> 2.956 M, op 8 1.529 -> 1.521 M, op 9 2.990 -> 2.977 M; the function +204 B, its frame +32 B.
 * A fused box tile calls it a column at a time (codegen/fused_c.py fx_lean_k: out.w 1, out.pixel_stride the output
 * window's row pitch, in.w the input window's width, pad_left its column's offset): the lines' triples run down the
 * column, where an output row of 1-2 pixels a call set up every channel pair per row (ResNet-8's least-RAM plan).
 * Included by conv.c (BT_PM_SHARED: bt_pm_widen3r, bt_pm_k6). */
#ifndef BT_CONV_KXK_H
#define BT_CONV_KXK_H
#include "bt_kernels.h"
#include "requant.h"
#include "dsp.h"
#include "conv_pm.h"

#define BT_KXK_COL 1920   /* int16 of the columns (3840 bytes): 3 K a triple */

#if BT_PM_RQ6_ASM && defined(BT_PM_SHARED)
/* the asm's words in memory (its 14 registers leave none for them): read at the offsets the asm names */
typedef struct {
  int32_t k[8];        /* 0: b0, b1, then bt_pm_k6's m0, p0, e0, m1, p1, e1 (the zero point folded) */
  int8_t *o;           /* 32: the next triple's outputs */
  int32_t ops;         /* 36: the output pixel stride */
  const int16_t *end;  /* 40: the columns' end */
  const int8_t *f0;    /* 44: the pair's first filter row */
  int32_t K;           /* 48 */
  int32_t step;        /* 52: bytes from a triple's first output to the next triple's */
  int32_t back;        /* 56: bytes the column pointer steps back after a triple (a strip's shared blocks) */
  const uint32_t *fw;  /* 60: the pair's filter rows widened (bt_kxk_fw), where a pass runs bt_kxk_pairw */
} bt_kxk_s;

/* One group of 4 values of three pixels (the columns: x0, x1, x2 lo words, then their hi words, 24 bytes) by two
 * filter rows (f, f + K): two pipelined runs of single loads (after an SMLAD the first costs 2 estimated cycles, the
 * others 1), 4 SXTB16, 12 SMLAD; wa is extracted in place and loaded again for its high half (no register left). */
/* BT_KXK_STEP: im2col.h's BT_MM3X2_STEP_R (its high halves BT_MM3X2_STEP_R2), BT_KXK_STEP0: conv_pm.h's
 * BT_MM3X2_STEP0_R (the sums start from the biases in a00 (b0) and a01 (b1)) */
#define BT_KXK_STEP BT_MM3X2_STEP_R
#define BT_KXK_STEP0 BT_MM3X2_STEP0_R
/* a sum requantised in place: bt_rq2 (m, rounding word with the zero point, e1 in x0-x2; wa, f scratch), SSAT #8 */
#define BT_KXK_RQ(A)                                                                          \
  "and %[wa], %[" A "], #0x80000000\n\torr %[wa], %[wa], #0x40000000\n\t"                       \
  "add %[f], %[x1], %[" A "], asr #31\n\tsmlal %[wa], %[f], %[" A "], %[x0]\n\t"                \
  "asr %[" A "], %[f], %[x2]\n\tssat %[" A "], #8, %[" A "]\n\t"
/* The triple's six sums requantised (the pair's constants from s in wb), stored (one STRH a pixel), the output and
 * column pointers moved on and the next pair's biases loaded: the tail of bt_kxk_pair's and bt_kxk_pairw's asm */
#define BT_KXK_OUT3                                                                                       \
  "ldr %[x0], [%[wb], #8]\n\tldr %[x1], [%[wb], #12]\n\tldr %[x2], [%[wb], #16]\n\t" \
  BT_KXK_RQ("a00") BT_KXK_RQ("a10") BT_KXK_RQ("a20") \
  "ldr %[x0], [%[wb], #20]\n\tldr %[x1], [%[wb], #24]\n\tldr %[x2], [%[wb], #28]\n\t" \
  BT_KXK_RQ("a01") BT_KXK_RQ("a11") BT_KXK_RQ("a21") \
  "bfi %[a00], %[a01], #8, #8\n\tbfi %[a10], %[a11], #8, #8\n\tbfi %[a20], %[a21], #8, #8\n\t" \
  "ldr %[f], [%[wb], #32]\n\tldr %[x0], [%[wb], #36]\n\tldr %[x1], [%[wb], #52]\n\tldr %[x2], [%[wb], #56]\n\t" \
  "strh %[a00], [%[f]]\n\tstrh %[a10], [%[f], %[x0]]\n\tstrh %[a20], [%[f], %[x0], lsl #1]\n\t" \
  "add %[f], %[f], %[x1]\n\tsub %[c], %[c], %[x2]\n\tstr %[f], [%[wb], #32]\n\t" \
  "ldr %[wa], [%[wb], #40]\n\tldr %[a00], [%[wb]]\n\tldr %[a01], [%[wb], #4]\n\t"
#define BT_KXK_S4(a, b, c, d) a "\n\t" b "\n\t" c "\n\t" d "\n\t"
/* One pair of output channels over the triples from c to s->end. Three words pushed below SP while it runs (s, the
 * filter row's end, the pass's entry: (K / 4 - 1) % 16 groups from its end, by the table at 0). */
static inline __attribute__((always_inline)) void bt_kxk_pair(const int16_t *c, bt_kxk_s *s) {
  uint32_t a00, a01, a10, a11, a20, a21, f, K, x0, x1, x2;
  uint32_t wa = (uint32_t)s, wb = (uint32_t)(s->f0 + s->K);
  __asm__ volatile(
      "str %[wa], [sp, #-4]!\n\tstr %[wb], [sp, #-4]!\n\tldr %[K], [%[wa], #48]\n\t"
      "sub %[x0], %[K], #4\n\tubfx %[x0], %[x0], #2, #4\n\tadr %[x1], 0f\n\t"
      "ldrh %[x0], [%[x1], %[x0], lsl #1]\n\tadd %[x0], %[x1], %[x0]\n\torr %[x0], %[x0], #1\n\t"
      "str %[x0], [sp, #-4]!\n\t"
      "ldr %[a00], [%[wa]]\n\tldr %[a01], [%[wa], #4]\n\tldr %[f], [%[wa], #44]\n\tb 1f\n\t"
      ".p2align 2\n0:\n\t.hword 20f - 0b, 35f - 0b, 34f - 0b, 33f - 0b, 32f - 0b, 31f - 0b, 30f - 0b, 29f - 0b\n\t"
      ".hword 28f - 0b, 27f - 0b, 26f - 0b, 25f - 0b, 24f - 0b, 23f - 0b, 22f - 0b, 21f - 0b\n"
      "1:\n\t" BT_KXK_STEP0 "ldr pc, [sp]\n"
      "20:\n\t" BT_KXK_STEP "21:\n\t" BT_KXK_STEP "22:\n\t" BT_KXK_STEP "23:\n\t" BT_KXK_STEP
      "24:\n\t" BT_KXK_STEP "25:\n\t" BT_KXK_STEP "26:\n\t" BT_KXK_STEP "27:\n\t" BT_KXK_STEP
      "28:\n\t" BT_KXK_STEP "29:\n\t" BT_KXK_STEP "30:\n\t" BT_KXK_STEP "31:\n\t" BT_KXK_STEP
      "32:\n\t" BT_KXK_STEP "33:\n\t" BT_KXK_STEP "34:\n\t" BT_KXK_STEP "35:\n\t" BT_KXK_STEP
      "ldr %[x0], [sp, #4]\n\tcmp %[f], %[x0]\n\tbne 20b\n\t"
      "ldr %[wb], [sp, #8]\n\t"
      BT_KXK_OUT3
      "ldr %[f], [%[wb], #44]\n\t"
      "cmp %[c], %[wa]\n\tbne 1b\n\tadd sp, sp, #12\n\t"
      : [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), [a20] "=&r"(a20),
        [a21] "=&r"(a21), [c] "+r"(c), [f] "=&r"(f), [K] "=&r"(K), [wa] "+r"(wa), [wb] "+r"(wb), [x0] "=&r"(x0),
        [x1] "=&r"(x1), [x2] "=&r"(x2)
      :
      : "cc", "memory");
}
/* The pair's two filter rows widened once a pass (bt_kxk_fw: a group's 4 words a_lo, b_lo, a_hi, b_hi), where the
 * pass's triples are enough to repay it (BT_KXK_FW_MIN): a group of 24 MACs two runs of 5 single loads and 12 SMLAD, 24
 * estimated cycles where bt_kxk_pair's takes 27 (its 4 SXTB16 and the reload of wa gone, two loads more); widening
 * costs ~12 cycles a group once a pass and pair, so it pays from 4 triples a pass (ResNet-8's 3x3 16 -> 16 strips run
 * 10-11). The register K frees holds the widened rows' end; 8 groups a pass entered at (K / 4 - 1) % 8 from its end
 * (1 KB of loop, inside nucleo-l4r5zi's 1 KiB cache with its tail where bt_kxk_pair's 16 are 1.6 KB). */
#define BT_KXK_WLD                                                                              \
  "ldr %[wb], [%[f], #4]\n\tldr %[wa], [%[f]], #8\n\t"                                          \
  "ldr %[x1], [%[c], #4]\n\tldr %[x2], [%[c], #8]\n\tldr %[x0], [%[c]], #12\n\t"
/* the three pixels' sums A0-A2 of one channel += its weights W . the words (x0, the run's last load, used last:
 * cortex-m7's load-use stall) */
#define BT_KXK_WSM(W, A0, A1, A2)                                                               \
  "smlad %[" A1 "], %[" W "], %[x1], %[" A1 "]\n\tsmlad %[" A2 "], %[" W "], %[x2], %[" A2 "]\n\t"    \
  "smlad %[" A0 "], %[" W "], %[x0], %[" A0 "]\n\t"
#define BT_KXK_WHALF BT_KXK_WLD BT_KXK_WSM("wa", "a00", "a10", "a20") BT_KXK_WSM("wb", "a01", "a11", "a21")
#define BT_KXK_WSTEP BT_KXK_WHALF BT_KXK_WHALF
/* the first group: the sums from the biases in a00 (b0) and a01 (b1) */
#define BT_KXK_WSTEP0                                                                           \
  BT_KXK_WLD "smlad %[a10], %[wa], %[x1], %[a00]\n\tsmlad %[a20], %[wa], %[x2], %[a00]\n\t"       \
  "smlad %[a00], %[wa], %[x0], %[a00]\n\t"                                                      \
  "smlad %[a11], %[wb], %[x1], %[a01]\n\tsmlad %[a21], %[wb], %[x2], %[a01]\n\t"                 \
  "smlad %[a01], %[wb], %[x0], %[a01]\n\t" BT_KXK_WHALF
#ifndef BT_KXK_FW_MIN
#define BT_KXK_FW_MIN 5   /* triples a pass from which it widens the filter rows */
#endif
#define BT_KXK_FW_K 144   /* the largest patch it widens (the buffer: K words on the stack) */

static inline __attribute__((always_inline)) void bt_kxk_fw(uint32_t *w, const int8_t *fa, const int32_t K) {
  /* a group: two loads, 4 SXTB16, one STM of its 4 words (the registers in the words' order); four a loop pass (the
     loop's compare and branch a quarter of the groups' cycles at two), the odd group and pair of K / 4 first */
  register uint32_t t0 __asm__("r0"), t1 __asm__("r1"), t2 __asm__("r2"), t3 __asm__("r3");
  const uint32_t *const e = w + K;
#define BT_KXK_FW1                                                                                              \
  "ldr %[t3], [%[fa], %[K]]\n\tldr %[t2], [%[fa]], #4\n\t"                                                     \
  "sxtb16 %[t1], %[t3]\n\tsxtb16 %[t0], %[t2]\n\tsxtb16 %[t3], %[t3], ror #8\n\tsxtb16 %[t2], %[t2], ror #8\n\t"  \
  "stmia %[w]!, {%[t0], %[t1], %[t2], %[t3]}\n\t"
  __asm__ volatile(
      "tst %[K], #4\n\tbeq 3f\n\t" BT_KXK_FW1 "3:\n\ttst %[K], #8\n\tbeq 4f\n\t" BT_KXK_FW1 BT_KXK_FW1
      "4:\n\tcmp %[w], %[e]\n\tbeq 2f\n"
      "1:\n\t" BT_KXK_FW1 BT_KXK_FW1 BT_KXK_FW1 BT_KXK_FW1 "cmp %[w], %[e]\n\tbne 1b\n2:\n\t"
      : [w] "+r"(w), [fa] "+r"(fa), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3)
      : [K] "r"(K), [e] "r"(e)
      : "cc", "memory");
#undef BT_KXK_FW1
}

/* bt_kxk_pair over the widened rows s->fw (two words below SP while it runs: s, the pass's entry) */
static inline __attribute__((always_inline)) void bt_kxk_pairw(const int16_t *c, bt_kxk_s *s) {
  uint32_t a00, a01, a10, a11, a20, a21, f, E, x0, x1, x2, wb;
  uint32_t wa = (uint32_t)s;
  __asm__ volatile(
      "str %[wa], [sp, #-4]!\n\tldr %[E], [%[wa], #48]\n\t"
      "sub %[x0], %[E], #4\n\tubfx %[x0], %[x0], #2, #3\n\tadr %[x1], 0f\n\t"
      "ldrh %[x0], [%[x1], %[x0], lsl #1]\n\tadd %[x0], %[x1], %[x0]\n\torr %[x0], %[x0], #1\n\t"
      "str %[x0], [sp, #-4]!\n\tldr %[f], [%[wa], #60]\n\tadd %[E], %[f], %[E], lsl #2\n\t"
      "ldr %[a00], [%[wa]]\n\tldr %[a01], [%[wa], #4]\n\tb 1f\n\t"
      ".p2align 2\n0:\n\t.hword 20f - 0b, 27f - 0b, 26f - 0b, 25f - 0b, 24f - 0b, 23f - 0b, 22f - 0b, 21f - 0b\n"
      "1:\n\t" BT_KXK_WSTEP0 "ldr pc, [sp]\n"
      "20:\n\t" BT_KXK_WSTEP "21:\n\t" BT_KXK_WSTEP "22:\n\t" BT_KXK_WSTEP "23:\n\t" BT_KXK_WSTEP
      "24:\n\t" BT_KXK_WSTEP "25:\n\t" BT_KXK_WSTEP "26:\n\t" BT_KXK_WSTEP "27:\n\t" BT_KXK_WSTEP
      "cmp %[f], %[E]\n\tbne 20b\n\t"
      "ldr %[wb], [sp, #4]\n\t"
      BT_KXK_OUT3
      "ldr %[f], [%[wb], #60]\n\t"
      "cmp %[c], %[wa]\n\tbne 1b\n\tadd sp, sp, #8\n\t"
      : [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), [a20] "=&r"(a20),
        [a21] "=&r"(a21), [c] "+r"(c), [f] "=&r"(f), [E] "=&r"(E), [wa] "+r"(wa), [wb] "=&r"(wb), [x0] "=&r"(x0),
        [x1] "=&r"(x1), [x2] "=&r"(x2)
      :
      : "cc", "memory");
}
#undef BT_KXK_WSTEP0
#undef BT_KXK_WSTEP
#undef BT_KXK_WHALF
#undef BT_KXK_WSM
#undef BT_KXK_WLD
#undef BT_KXK_S4
#undef BT_KXK_RQ
#undef BT_KXK_OUT3
#undef BT_KXK_STEP0
#undef BT_KXK_STEP

/* n4 groups of one pixel's values (s on) widened into its lane of the columns (d: its lo word of the first group;
 * the hi word 3 words on, the next group 6), or zeros (s NULL: padding). One copy, called (the pixels whose runs the
 * triple's widening cannot take at once: a row outside the map, a run across its left or right edge, a triple across
 * rows or short of pixels): a run's part inside the map one call, its padding on either side one call each, where
 * the kernel row's taps one by one took ~11x the instructions of bt_pm_widen3r's kernel rows (ResNet-8's op 1). */
static __attribute__((noinline)) void bt_kxk_lane(const int8_t *s, uint32_t *d, int32_t n4, uint32_t off2) {
  if (n4 <= 0) return;
  uint32_t *const e = d + n4 * 6;
  if (!s) {
    do { d[0] = 0; d[3] = 0; d += 6; } while (d != e);
    return;
  }
  do {
    const uint32_t v = bt_ld4(s);
    s += 4;
    d[0] = bt_sxtab16(off2, v);
    d[3] = bt_sxtab16_ror8(off2, v);
    d += 6;
  } while (d != e);
}

/* acc[r] += pixel (lane 0 of the columns at c) . filter row fa + r K, r = 0, 1: a call's last pixel when it is alone in
 * its triple. In asm, two groups a loop pass (the odd group first, entered at the second): four pipelined loads, 4
 * SXTB16, 4 SMLAD a group, ~14 estimated cycles where gcc's loop took ~18 (its loads apart, a compare and branch a
 * group: ResNet-8's ops 8-9, 8x8 maps of 64 pixels, one alone) */
static inline __attribute__((always_inline)) void bt_kxk_one(const uint32_t *c, const int8_t *fa, const int32_t K,
                                                             int32_t *acc) {
  int32_t a = acc[0], b = acc[1], n = K >> 2;
  const int8_t *fb = fa + K;
  uint32_t wa, wb, x, y, t;
#define BT_KXK_ONE_G                                                                                       \
  "ldr %[wb], [%[fb]], #4\n\tldr %[wa], [%[fa]], #4\n\tldr %[y], [%[c], #12]\n\tldr %[x], [%[c]], #24\n\t" \
  "sxtb16 %[t], %[wa]\n\tsmlad %[a], %[t], %[x], %[a]\n\tsxtb16 %[wa], %[wa], ror #8\n\t"                  \
  "smlad %[a], %[wa], %[y], %[a]\n\tsxtb16 %[t], %[wb]\n\tsmlad %[b], %[t], %[x], %[b]\n\t"                 \
  "sxtb16 %[wb], %[wb], ror #8\n\tsmlad %[b], %[wb], %[y], %[b]\n\t"
  __asm__ volatile("lsrs %[n], %[n], #1\n\tbcs 2f\n\tsub %[n], %[n], #1\n1:\n\t" BT_KXK_ONE_G "2:\n\t" BT_KXK_ONE_G
                   "subs %[n], %[n], #1\n\tbpl 1b\n\t"
                   : [a] "+r"(a), [b] "+r"(b), [n] "+r"(n), [c] "+r"(c), [fa] "+r"(fa), [fb] "+r"(fb), [wa] "=&r"(wa),
                     [wb] "=&r"(wb), [x] "=&r"(x), [y] "=&r"(y), [t] "=&r"(t)
                   :
                   : "cc", "memory");
#undef BT_KXK_ONE_G
  acc[0] = a; acc[1] = b;
}

/* One kernel row of a triple's columns (d: lane 0's lo word of its first group) where its three runs are not one
 * bt_pm_widen3r (bt_conv_kxk decides): lane q the run of kw taps from input row iy[q], pixel ix[q]; lanes from n on
 * zeros; each lane padding, the part inside the map, padding (bt_kxk_lane). */
static inline __attribute__((always_inline)) void bt_kxk_krow(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                              uint32_t off2, uint32_t *d, const int32_t *iy,
                                                              const int32_t *ix, const int32_t n) {
  const int32_t cin = p->in.c, kw = p->kw, iw = p->in.w, ih = p->in.h, in_row = iw * cin, n4 = kw * cin / 4;
  for (int32_t q = 0; q < 3; q++, d++) {
    if (q >= n || (uint32_t)iy[q] >= (uint32_t)ih) {
      bt_kxk_lane(0, d, n4, 0);
      continue;
    }
    const int32_t x = ix[q], kx0 = x < 0 ? -x : 0, kx1 = x + kw > iw ? iw - x : kw;
    const int32_t g0 = kx0 * cin / 4, g1 = kx1 > kx0 ? kx1 * cin / 4 : g0;
    bt_kxk_lane(0, d, g0, 0);
    bt_kxk_lane(in + (iy[q] - in_y0) * in_row + (x + kx0) * cin, d + g0 * 6, g1 - g0, off2);
    bt_kxk_lane(0, d + g1 * 6, n4 - g1, 0);
  }
}

/* Every pair of output channels over a pass's columns: triples from col until the column pointer reaches end (s: ops,
 * step and back set), outputs from o0; the last triple, short of pixels (last: its pixels, 1-2; 3: none short), into a
 * scratch word first (two pixels) or by bt_kxk_one (one), then to its outputs (o0 + nfull step, s's ops apart). One
 * call site (bt_conv_kxk's): one copy of the asm, no frame of its own on the stack. */
static inline __attribute__((always_inline)) void bt_kxk_pass(const bt_conv_params *p, bt_kxk_s *s,
                                                              const int16_t *col,
                                                  const int16_t *end, const int32_t nfull, const int32_t last,
                                                  int8_t *o0, uint32_t *fw, int32_t *held, const int32_t lane) {
  const int32_t cout = p->out.c, zp = p->output_offset, ops = s->ops, step = s->step, K = s->K;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  /* the short triple's columns: its blocks from the pass's last sh (a strip's: back kh - sh blocks) or kh */
  const int16_t *const tail = last < 3 ? end - 3 * K + s->back / 2 : end;
  int8_t *const ot = o0 + nfull * step;                          /* its outputs */
  const int wide = K <= BT_KXK_FW_K && nfull + (last == 2) >= BT_KXK_FW_MIN;
  /* a wide pass after a wide pass runs the pairs the other way, from the one whose rows are in fw (*held: that pair's
     first channel, -1 none), widened once for both */
  const int32_t h = wide ? *held : -1, flip = h == cout - 2 ? cout - 2 : 0;
  for (int32_t i = 0; i < cout; i += 2) {
    const int32_t oc = flip ? flip - i : i;
    s->k[0] = bias ? bias[oc] : 0;
    s->k[1] = bias ? bias[oc + 1] : 0;
    bt_pm_k6(s->k + 2, mult[oc], mult[oc + 1], shift[oc], shift[oc + 1], zp, 1);
    s->f0 = p->filter + oc * K;
    if (wide && oc != h) bt_kxk_fw(fw, s->f0, K);
    uint8_t tmp[8];
    s->o = o0 + oc;
    s->end = tail;
    for (int32_t part = col == tail; part < 1 + (last == 2); part++) {
      if (part) {   /* the short triple's two pixels into tmp */
        s->o = (int8_t *)tmp;
        s->ops = 2;
        s->step = 6;
        s->end = end;
      }
      if (wide) bt_kxk_pairw(part ? tail : col, s);
      else bt_kxk_pair(part ? tail : col, s);
    }
    int8_t *const o = ot + oc;
    if (last == 2) {
      s->ops = ops;
      s->step = step;
    }
    if (last == 1) {
      int32_t acc[2];
      acc[0] = s->k[0]; acc[1] = s->k[1];
      bt_kxk_one((const uint32_t *)tail + lane, s->f0, K, acc);
      o[lane * ops] = (int8_t)bt_ssat8(bt_rq2(acc[0], s->k[2], s->k[3], s->k[4]));
      o[lane * ops + 1] = (int8_t)bt_ssat8(bt_rq2(acc[1], s->k[5], s->k[6], s->k[7]));
    } else if (last == 2) {
      o[0] = (int8_t)tmp[0]; o[1] = (int8_t)tmp[1];
      o[ops] = (int8_t)tmp[2]; o[ops + 1] = (int8_t)tmp[3];
    }
  }
  *held = wide ? (flip ? 0 : cout - 2) : -1;
}

/* The band's output rows y0..y1 (outputs from out, the band's first row; its input rows from in_y0 at in). Strips
 * first: three neighbouring outputs of a row (a triple), down the band's rows, R triples a pass, whose columns are one
 * block (3 kw c_in values: a kernel row's runs of the three) per input row the pass reads, laid in the rows' order so
 * that triple t's patch is blocks t sh .. t sh + kh - 1 (the asm steps the column pointer back by kh - sh blocks
 * after each): an input row widened once a pass where each triple widened kh blocks (3x3 stride 1: 13 blocks for 11
 * triples against 33). Then each column a row's last ow % 3 leaves, as a strip whose triple's pixels are the column's
 * rows t, t + S, t + 2 S (D = ceil(rows / 3) triples, S = D, or D - 1 where 3 D - rows is 2: two pixels computed
 * twice; where it is 1 the last triple is short of its third): block m's lanes are input rows S sh apart, shared by
 * the triples as a strip's (ResNet-8's op 1: its two columns 22 triples of 3 blocks each and 6 passes unwidened ->
 * 26 blocks and 2 widened passes). Where no two of a strip's triples fit the columns (or rows < 3), every pixel in
 * rows, in triples of consecutive pixels, each widened kernel row by kernel row. */
static inline __attribute__((always_inline)) void bt_conv_kxk(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                              int8_t *out, int32_t y0, int32_t y1) {
  int16_t col[BT_KXK_COL] __attribute__((aligned(8)));
  const int32_t cin = p->in.c, ow = p->out.w, kh = p->kh, kw = p->kw, rows = y1 - y0;
  const int32_t K = kh * kw * cin, run = kw * cin, ops = p->out.pixel_stride;
  const int32_t sh = p->stride_h, sw = p->stride_w, pt = p->pad_top, pl = p->pad_left;
  const int32_t iw = p->in.w, ih = p->in.h, in_row = iw * cin;
  const int32_t tw = 3 * K, bs = 3 * run, nb = BT_KXK_COL / bs, T = BT_KXK_COL / tw;
  const int32_t R = nb >= kh + sh ? (nb - kh) / sh + 1 : 0;   /* a strip's triples a pass */
  const int32_t strips = R >= 3 && rows >= 3 ? ow / 3 : 0;   /* (R 2: ResNet-8's op 8 ran 1.8 % slower) */
  /* a column strip's triples and its lanes' distance in rows; the input rows past the band's last (a short triple's
     third lane: zeros) */
  const int32_t D = (rows + 2) / 3, S = 3 * D - rows == 2 ? D - 1 : D, ylim = (y1 - 1) * sh - pt + kh;
  const uint32_t off2 = (uint32_t)bt_dup16(p->input_offset);
  bt_kxk_s s;
  int32_t held = -1;   /* the pair whose rows are in fw (bt_kxk_pass) */
  uint32_t fw[BT_KXK_FW_K];   /* the pair's filter rows widened (s.fw; in this frame, as s: no pointer outlives it) */
  s.fw = fw;
  int32_t iy[3], ix[3];
  s.K = K;
  /* the strips' passes (strip j, its triples from t: output row y0 + t; from j == strips the columns ox0 on), then
     the lines' (pix: the next pixel, (ly, lx): that pixel): one call site of bt_kxk_pass */
  int32_t j = 0, t = 0, ox0 = 3 * strips, pix = 0, ly = y0, lx = 0;
  const int32_t np = strips ? 0 : rows * ow;
  while (strips ? j < strips || ox0 < ow : pix < np) {
    const int16_t *end;
    int32_t nfull, last, blocks, nt = 0, y = 0, dq = 0, lane = 0;
    int8_t *o0;
    if (strips) {   /* a strip's pass (a column's: lanes dq input rows apart): blocks of input rows y.. */
      const int32_t col1 = j == strips, len = col1 ? D : rows, nr = len - t < R ? len - t : R;
      blocks = (nr - 1) * sh + kh;
      y = (y0 + t) * sh - pt;
      for (int32_t q = 0; q < 3; q++) ix[q] = (col1 ? ox0 : 3 * j + q) * sw - pl;
      dq = col1 ? S * sh : 0;
      s.ops = col1 ? S * ow * ops : ops;
      s.step = ow * ops;
      s.back = (kh - sh) * bs * 2;
      end = col + nr * sh * bs;
      last = col1 && t + nr == D ? 3 - (3 * D - rows) : 3;
      lane = last == 1 ? 2 : 0;
      nfull = last < 3 ? nr - 1 : nr;
      o0 = out + (t * ow + (col1 ? ox0 : 3 * j)) * ops;
      t += nr;
      if (t == len) {
        t = 0;
        if (col1) ox0++;
        else j++;
      }
    } else {            /* a line's pass: nt triples, kh blocks each */
      nt = np - pix >= 3 * T ? T : (np - pix + 2) / 3;
      const int32_t rest = np - pix - 3 * (nt - 1);
      blocks = nt * kh;
      s.ops = ops;
      s.step = 3 * ops;
      s.back = 0;
      end = col + nt * tw;
      last = rest >= 3 ? 3 : rest;
      nfull = last < 3 ? nt - 1 : nt;
      o0 = out + pix * ops;
    }
    /* the columns, block by block (one call site each of bt_pm_widen3r and bt_kxk_krow). A strip's lanes: input rows
       y + m, + dq, + 2 dq at columns ix[0..2], one offset apart (dl) for every block: whether its columns lie inside
       the map (xin) decided once a pass, each block's rows by its first and last lane, the source stepped a row a
       block (where each block recomputed the three lanes' rows and tested them one by one) */
    const int32_t xin = ix[0] >= 0 && ix[2] + kw <= iw, ytop = ylim < ih ? ylim : ih;
    int32_t ky = 0, n = 3, tfast = 0, dl = dq * in_row + (ix[1] - ix[0]) * cin, off = (y - in_y0) * in_row + ix[0] * cin;
    for (int32_t m = 0; m < blocks; m++, off += in_row) {
      int fast;
      if (!nt) {
        fast = xin && y + m >= 0 && y + 2 * dq + m < ytop;
        if (!fast)
          for (int32_t q = 0; q < 3; q++) iy[q] = y + q * dq + m < ylim ? y + q * dq + m : -1;
      } else {
        if (ky == 0) {   /* the next triple's pixels: their first kernel row */
          for (int32_t q = 0; q < 3; q++) {
            iy[q] = ly * sh - pt; ix[q] = lx * sw - pl;
            if (++lx == ow) { lx = 0; ly++; }
          }
          n = np - pix < 3 ? np - pix : 3;
          pix += 3;
          /* three runs at one stride (a row's three neighbours, a column's) inside the map's columns */
          tfast = n == 3 && iy[1] - iy[0] == iy[2] - iy[1] && ix[1] - ix[0] == ix[2] - ix[1];
          for (int32_t q = 0; q < 3 && tfast; q++) tfast = ix[q] >= 0 && ix[q] + kw <= iw;
          dl = (iy[1] - iy[0]) * in_row + (ix[1] - ix[0]) * cin;
          off = (iy[0] - in_y0) * in_row + ix[0] * cin;
        } else {
          iy[0]++; iy[1]++; iy[2]++;
        }
        if (++ky == kh) ky = 0;
        fast = tfast && (uint32_t)iy[0] < (uint32_t)ih && (uint32_t)iy[2] < (uint32_t)ih;
      }
      if (fast) bt_pm_widen3r(in + off, col + m * bs, run, dl, (int32_t)off2, 0);
      else bt_kxk_krow(p, in, in_y0, off2, (uint32_t *)(col + m * bs), iy, ix, n);
    }
    bt_kxk_pass(p, &s, col, end, nfull, last, o0, fw, &held, lane);
  }
}
#else
static inline void bt_conv_kxk(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                               int32_t y1) {
  bt_conv_pm(p, in, in_y0, out, y0, y1, 1, 2);   /* the same outputs: the shared patch-matrix loops */
}
#endif
#endif
