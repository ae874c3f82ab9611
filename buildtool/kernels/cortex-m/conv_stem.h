/* The cortex-m set's convolution for a network's stem: few input channels (c_in 1..3: an RGB image), a window
 * row of kw c_in values not a multiple of 4, a layer's constant shape (model.c's own instance, BT_CONV_PM in
 * bt_variants.h). bt_conv_pm widens each output pixel's patch into int16 columns (vww's 3x3 stride 2 stem of 3
 * channels: ~100 cycles a pixel, 27 values gathered from three input rows) and unpacks the int8 weights by
 * SXTB16 per pixel triple. Here each output row's kh input rows are widened into int16 buffer rows in natural
 * order (the zero point's 0 at the padding), the weights once per call into int16 rows of the window's kw c_in
 * values padded to an even count (a 0 weight against whatever value follows) and doubled (bt_rq2m's doubled
 * sums), and one asm statement per triple of pixels and pair of channels reads the pixels' words straight from
 * the buffer rows with immediate offsets (the shape is constant), 3 + 2 LDR and 6 SMLAD a step, no SXTB16, then
 * requantises and stores the six outputs. vww's stem: 15 steps for 27 values (bt_mm3x2: 14 SMLAD, 7 SXTB16 and
 * their loads per pixel and channel). Measured, est. high cycles: dense vww op 0 1,090,599 -> 851,885; MLPerf
 * Tiny ResNet-8 op 0 (3x3 stride 1, 3 -> 16 at 32x32) 872,284 -> ~778 K. Stack: a buffer of BT_STEM_BYTES (3840,
 * bt_conv_pm's col) in the frame (vww's op 0: 3884 bytes below its pushed registers, bt_conv_pm's 3956), no
 * other RAM. */
#ifndef BT_CONV_STEM_H
#define BT_CONV_STEM_H
#include "conv_pm.h"

#if BT_PM_RQ6_ASM
#define BT_STEM_BYTES 3840   /* the buffers' frame: bt_conv_pm's col (3 BT_COL_MAX int16), no more stack */
#define BT_STEM_RL(p) (((p)->kw * (p)->in.c + 1) & ~1)   /* a window row's values, even */
#define BT_STEM_NS(p) ((p)->kh * BT_STEM_RL(p) / 2)      /* steps (words) of a window */
#define BT_STEM_S(p) ((p)->stride_w * (p)->in.c)         /* values from one pixel's window row to the next's */
/* a buffer row: the values from pixel -pad_left to the last one a window reads, and those of up to 5 pixels past
 * the row's last (the last triples' phantom pixels, their sums dropped), even */
#define BT_STEM_ROWV(p) (((((p)->out.w + 5) * BT_STEM_S(p) + BT_STEM_RL(p)) + 1) & ~1)
#define BT_STEM_ROWB(p) (2 * BT_STEM_ROWV(p))
/* S odd: a second set of rows shifted by one value (B[i] = A[i + 1]), the odd pixels' words aligned in it */
#define BT_STEM_COPIES(p) ((BT_STEM_S(p) & 1) ? 2 : 1)
#define BT_STEM_ROWS(p) (BT_STEM_COPIES(p) * (p)->kh * BT_STEM_ROWB(p))   /* the buffer rows: bytes */
/* a pair of output channels: 9 words (the zero point, the two biases, bt_pm_k6's six constants), then each
 * channel's NS widened weight words */
#define BT_STEM_PB(p) (36 + 8 * BT_STEM_NS(p))
/* pixels from one of a triple's to the next: 1, or on a part with a small instruction cache (BT_PMR_COMPACT_ON,
 * bt_stem_rowc) 2 for an odd S (the triple's pixels all in rows A or all in rows B; an even S keeps bt_stem_row,
 * whose loop holds one triple: vww's stem there 878,443 modelled cycles on nucleo-l4r5zi, 902,532 by bt_stem_rowc) */
#define BT_STEM_CP(p) ((BT_PMR_COMPACT_ON && (BT_STEM_S(p) & 1)) ? 2 : 1)
/* the outputs of a triple with phantom pixels (bt_stem_blk's stores at their offsets), at the frame's end */
#define BT_STEM_SC(p) ((2 * BT_STEM_CP(p) * (p)->out.pixel_stride + 2 + 3) & ~3)
/* channels at a time: as many pairs as the frame holds besides the rows and SC (kws's 64 of 40 values: 32) */
#define BT_STEM_ROOM(p) (BT_STEM_BYTES - BT_STEM_ROWS(p) - BT_STEM_SC(p))
#define BT_STEM_GC(p) (BT_STEM_ROOM(p) / BT_STEM_PB(p) * 2 < (p)->out.c ? BT_STEM_ROOM(p) / BT_STEM_PB(p) * 2 \
                                                                       : (p)->out.c)

/* Does bt_conv_stem take the layer: every field of its shape a constant, requantisation bt_rq2 or bt_rq2m (fast
 * 1 or 2), the whole int8 range (act 2), an even count of output channels, the rows and a pair's words in
 * BT_STEM_BYTES and every immediate offset in LDR's 12 bits; a window row of whole groups of 4 values (kw c_in %
 * 4 == 0) stays with bt_conv_pm, which widens such patches without a gather: kws's 10x4 stem of 1 channel, 5
 * pixels a row, est. high 514,836 there against 550,954 here (a row's second triple has a phantom pixel). */
static inline __attribute__((always_inline)) int bt_stem_ok(const bt_conv_params *p, const int fast, const int act) {
  const int consts = BT_SHAPE_CONST(p);
  if (!consts || !fast || act != 2) return 0;
  return p->in.c >= 1 && p->in.c <= 3 && (p->kw * p->in.c) % 4 != 0 && p->in.pixel_stride == p->in.c &&
         p->dil_h == 1 && p->dil_w == 1 &&
         p->out.w >= 3 && p->out.c >= 2 && (p->out.c & 1) == 0 && p->out.pixel_stride > 0 &&
         p->out.pixel_stride < 2000 && p->pad_left >= 0 && p->pad_top >= 0 && BT_STEM_NS(p) <= 31 &&
         p->kh * p->kw > 1 && BT_STEM_ROOM(p) >= BT_STEM_PB(p) &&
         BT_STEM_ROWS(p) + (BT_STEM_CP(p) == 2 ? 8 : 6) * BT_STEM_S(p) < 4096;
}

/* One step of the 3x2 block: pixel q's word j at c + Oq + off(j) (off: window row j / W's buffer row, word j % W
 * of it), the two channels' weight words at f + 4j and f + KB + 4j: 5 LDR (one load cycle each after the first),
 * 6 SMLAD. */
#define BT_STEM_OFF "((bt_stem_j / %c[W]) * %c[RB] + (bt_stem_j %% %c[W]) * 4)"
#define BT_STEM_LOADS                                                   \
  "ldr %[x0], [%[c], #(%c[O0] + " BT_STEM_OFF ")]\n\t"                  \
  "ldr %[x1], [%[c], #(%c[O1] + " BT_STEM_OFF ")]\n\t"                  \
  "ldr %[x2], [%[c], #(%c[O2] + " BT_STEM_OFF ")]\n\t"                  \
  "ldr %[wa], [%[f], #(bt_stem_j * 4)]\n\t"                            \
  "ldr %[wb], [%[f], #(%c[KB] + bt_stem_j * 4)]\n\t"
#define BT_STEM_STEP0                                                   \
  ".set bt_stem_j, 0\n\t" BT_STEM_LOADS                                 \
  "smlad %[a10], %[wa], %[x1], %[a00]\n\t"                              \
  "smlad %[a20], %[wa], %[x2], %[a00]\n\t"                              \
  "smlad %[a00], %[wa], %[x0], %[a00]\n\t"                              \
  "smlad %[a11], %[wb], %[x1], %[a01]\n\t"                              \
  "smlad %[a21], %[wb], %[x2], %[a01]\n\t"                              \
  "smlad %[a01], %[wb], %[x0], %[a01]\n\t"
#define BT_STEM_STEP                                                    \
  ".set bt_stem_j, bt_stem_j + 1\n\t" BT_STEM_LOADS                     \
  "smlad %[a00], %[wa], %[x0], %[a00]\n\t"                              \
  "smlad %[a10], %[wa], %[x1], %[a10]\n\t"                              \
  "smlad %[a20], %[wa], %[x2], %[a20]\n\t"                              \
  "smlad %[a01], %[wb], %[x0], %[a01]\n\t"                              \
  "smlad %[a11], %[wb], %[x1], %[a11]\n\t"                              \
  "smlad %[a21], %[wb], %[x2], %[a21]\n\t"
#define BT_STEM_MAC BT_STEM_STEP0 BT_PMR_REP("%c[NS] - 1", BT_STEM_STEP)   /* BT_PMR_REP: copies under .if */
#define BT_STEM_OUTS                                                                                         \
  : [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), [a20] "=&r"(a20), [a21] "=&r"(a21), \
    [wa] "=&r"(wa), [wb] "=&r"(wb), [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2)
#define BT_STEM_INS                                                                                          \
  [c] "r"(c), [f] "r"(f), [NS] "i"(NS), [W] "i"(W), [RB] "i"(RB), [KB] "i"(KB), [O0] "i"(O0), [O1] "i"(O1),  \
  [O2] "i"(O2)
/* acc = bt_mm3x2's six sums of the pixels at c + O0, O1, O2 by the weight rows f, f + KB (their biases at f - 32,
 * f - 28); NS steps of W words a window row, buffer rows RB bytes apart. */
static inline __attribute__((always_inline)) void bt_stem3x2(const char *c, const char *f, const int32_t NS,
                                                              const int32_t W, const int32_t RB, const int32_t KB,
                                                              const int32_t O0, const int32_t O1, const int32_t O2,
                                                              int32_t *acc) {
  int32_t a00, a01, a10, a11, a20, a21;
  uint32_t wa, wb, x0, x1, x2;
  __asm__ volatile("ldr %[a00], [%[f], #-32]\n\tldr %[a01], [%[f], #-28]\n\t" BT_STEM_MAC
                   BT_STEM_OUTS : BT_STEM_INS : "memory");
  acc[0] = a00; acc[1] = a01; acc[2] = a10; acc[3] = a11; acc[4] = a20; acc[5] = a21;
}
/* One output of bt_stem_blk in place: bt_rq2m (ADD, SMMLAR, ASR; m in wa, R in wb, e in x0), the zero point (x1)
 * unless folded into R, SSAT. */
#define BT_STEM_RQ(A)                                         \
  "add %[x2], %[wb], %[" A "], asr #31\n\t"                   \
  "smmlar %[" A "], %[" A "], %[wa], %[x2]\n\t"               \
  "asr %[" A "], %[" A "], %[x0]\n\t"                         \
  ".if %c[FOLD] == 0\n\tadd %[" A "], %[" A "], %[x1]\n\t.endif\n\t" \
  "ssat %[" A "], #8, %[" A "]\n\t"
/* Pixel q's two outputs (A0, A1) at o + OFS: one STRH of both bytes (BFI) for an even pixel stride (a STRB costs
 * 1 .. 2 cycles, the BFI 1: vww's stem 3 cycles less at the high end per 6 outputs), else two STRB. */
#define BT_STEM_ST(A0, A1, OFS)                                                     \
  ".if %c[OPS] & 1\n\t"                                                            \
  "strb %[" A0 "], [%[o], #" OFS "]\n\tstrb %[" A1 "], [%[o], #(" OFS " + 1)]\n\t" \
  ".else\n\t"                                                                      \
  "bfi %[" A0 "], %[" A1 "], #8, #8\n\tstrh %[" A0 "], [%[o], #" OFS "]\n\t"      \
  ".endif\n\t"
/* The doubled sums (fast 2) of a triple by a pair of channels (pixel q's outputs at o + q OQ), requantised and
 * stored in one asm statement: the
 * biases and each channel's constants loaded from below f (the pair's words), nothing kept in registers between
 * statements (bt_stem3x2 then bt_pm_rqm6: gcc moved the sums and reloaded its loop's pointers from the stack;
 * vww's stem 912,715 -> 864,173 est. high cycles). */
#define BT_STEM_BLK_ASM                                                                                      \
  __asm__ volatile("ldr %[a00], [%[f], #-32]\n\tldr %[a01], [%[f], #-28]\n\t" BT_STEM_MAC                      \
                   "ldr %[wa], [%[f], #-24]\n\tldr %[wb], [%[f], #-20]\n\tldr %[x0], [%[f], #-16]\n\t"          \
                   ".if %c[FOLD] == 0\n\tldr %[x1], [%[f], #-36]\n\t.endif\n\t"                                \
                   BT_STEM_RQ("a00") BT_STEM_RQ("a10") BT_STEM_RQ("a20")                                     \
                   "ldr %[wa], [%[f], #-12]\n\tldr %[wb], [%[f], #-8]\n\tldr %[x0], [%[f], #-4]\n\t"           \
                   BT_STEM_RQ("a01") BT_STEM_RQ("a11") BT_STEM_RQ("a21")                                     \
                   BT_STEM_ST("a00", "a01", "0") BT_STEM_ST("a10", "a11", "%c[OQ]")                          \
                   BT_STEM_ST("a20", "a21", "(2 * %c[OQ])")                                                  \
                   BT_STEM_OUTS                                                                              \
                   : BT_STEM_INS, [o] "r"(o), [FOLD] "i"(FOLD), [OPS] "i"(OPS), [OQ] "i"(OQ)                 \
                   : "memory")
/* LOW (bt_stem_rowc's, on a part with a small instruction cache): the weights' registers low ones (r0, r1 from
 * r2), so that their LDRs (offsets under 128) take 16 bits: the loop 60 bytes shorter, within nucleo-l4r5zi's 32
 * cache lines (ResNet-8's stem 1,074,294 -> 981,471 modelled cycles, fetch stalls 123,063 -> 17,531; vww's stem,
 * bt_stem_row's, kept as it was: there 878,674 -> 882,480). */
static inline __attribute__((always_inline)) void bt_stem_blk(const char *c, const char *f0, int8_t *o,
                                                               const int32_t NS, const int32_t W, const int32_t RB,
                                                               const int32_t KB, const int32_t O0, const int32_t O1,
                                                               const int32_t O2, const int32_t OPS, const int32_t OQ,
                                                               const int FOLD, const int LOW) {
  int32_t a00, a01, a10, a11, a20, a21;
  uint32_t x0, x1, x2;
  if (LOW) {
    register uint32_t wa __asm__("r0"), wb __asm__("r1");
    register const char *f __asm__("r2") = f0;
    BT_STEM_BLK_ASM;
  } else {
    uint32_t wa, wb;
    const char *const f = f0;
    BT_STEM_BLK_ASM;
  }
}
#undef BT_STEM_BLK_ASM
#undef BT_STEM_ST
#undef BT_STEM_RQ
#undef BT_STEM_INS
#undef BT_STEM_OUTS
#undef BT_STEM_MAC
#undef BT_STEM_STEP
#undef BT_STEM_STEP0
#undef BT_STEM_LOADS
#undef BT_STEM_OFF

/* Widens n input values (x + off) into d in natural order: 4 at a time by SXTAB16 and two PKH, the rest one by
 * one. */
static inline __attribute__((always_inline)) void bt_stem_widen(const int8_t *s, int16_t *d, const int32_t n,
                                                                int32_t off, int32_t off2) {
  const int8_t *const end = s + (n & ~3);
#pragma GCC unroll 4
  for (; s != end; s += 4, d += 4) {   /* pointer steps: immediate offsets (indexed, gcc stored by register offset) */
    const uint32_t v = bt_ld4(s);
    const uint32_t a = (uint32_t)bt_sxtab16((uint32_t)off2, v), b = (uint32_t)bt_sxtab16_ror8((uint32_t)off2, v);
    const uint32_t lo = bt_pkhbt16(a, b), hi = bt_pkhtb16(b, a);
    __builtin_memcpy(d, &lo, 4);
    __builtin_memcpy(d + 2, &hi, 4);
  }
  for (int32_t i = 0; i < (n & 3); i++) d[i] = (int16_t)(s[i] + off);
}

/* The byte offset of the window row of output pixel x (values from x S) in buffer row 0: in the rows A (x S even)
 * or B (odd, its value x S - 1: B[i] = A[i + 1]). */
static inline __attribute__((always_inline)) int32_t bt_stem_pos(int32_t x, const int32_t S, const int32_t BOFF) {
  const int32_t s = x * S;
  return (s & 1) ? BOFF + 2 * (s - 1) : 2 * s;
}

/* Triple h (0; 1: the second of a pair, S odd, c at its base c0 = 3 S - 1 values on) by one pair of channels
 * (f), stored at o: fast 2 by bt_stem_blk, fast 1 by bt_stem3x2 and bt_pm_rq6. */
static inline __attribute__((always_inline)) void bt_stem_tri(const char *c, const char *f, int8_t *o,
                                                              const int32_t NS, const int32_t W, const int32_t RB,
                                                              const int32_t KB, const int32_t S, const int32_t BOFF,
                                                              const int32_t OPS, const int h, const int fast,
                                                              const int FOLD, int32_t zp) {
  const int32_t c0 = h ? 2 * ((3 * S) & ~1) : 0;
  const int32_t O0 = bt_stem_pos(3 * h, S, BOFF) - c0, O1 = bt_stem_pos(3 * h + 1, S, BOFF) - c0,
                O2 = bt_stem_pos(3 * h + 2, S, BOFF) - c0;
  if (fast == 2) {
    bt_stem_blk(c, f, o, NS, W, RB, KB, O0, O1, O2, OPS, OPS, FOLD, 0);
  } else {
    int32_t acc[6];
    bt_stem3x2(c, f, NS, W, RB, KB, O0, O1, O2, acc);
    bt_pm_rq6(acc, (const int32_t *)f - 6, o, OPS, FOLD, zp);
  }
}

/* The row's triples of one pair of channels (f: its weights; o: its first output) from pixel 0: S even, every
 * triple alike; odd, two triples an iteration (their pixels' rows A, B alternate, the second's base at c0 = 3 S
 * - 1 values); fast 2 by bt_stem_blk, fast 1 by bt_stem3x2 and bt_pm_rq6. Returns the pixels done. */
static inline __attribute__((always_inline)) int32_t bt_stem_row(const char *ra, const char *f, int8_t *o,
                                                                const int32_t ow, const int32_t NS, const int32_t W,
                                                                const int32_t RB, const int32_t KB, const int32_t S,
                                                                const int32_t BOFF, const int32_t OPS,
                                                                const int fast, const int FOLD, int32_t zp) {
  const int32_t CP = (S & 1) ? 2 : 1, c0 = 2 * ((3 * S) & ~1);
  int32_t x = 0;
  for (const char *cx = ra; x + 3 * CP <= ow; x += 3 * CP, cx += 6 * CP * S, o += 3 * CP * OPS) {
    bt_stem_tri(cx, f, o, NS, W, RB, KB, S, BOFF, OPS, 0, fast, FOLD, zp);
    if (CP == 2) bt_stem_tri(cx + c0, f, o + 3 * OPS, NS, W, RB, KB, S, BOFF, OPS, 1, fast, FOLD, zp);
  }
  return x;
}

/* bt_stem_row and its tail for a part whose instruction cache is small (BT_PMR_COMPACT_ON) and an odd S: there
 * the row's loop holds two triples' asm (h 0 and 1: their pixels' rows A, B differ) and the tail four more copies,
 * ~4.4 KB for ResNet-8's stem, which a 1 KiB cache streamed from flash for every pair of channels and row (1.17 M
 * fetch stall cycles on nucleo-l4r5zi). Here one triple's asm in one loop serves the row and its tail: the
 * triple's pixels x, x + CP, x + 2 CP (CP = BT_STEM_CP: 2 for an odd S, so the three are all in rows A or all in
 * rows B, CP S values apart), the last group of 3 CP pixels through sc (its phantom pixels' sums dropped), and the
 * zero point always added (FOLD 0: zp is 0 in the pair's words when it is folded into the rounding words), one
 * copy for either. */
static inline __attribute__((always_inline)) void bt_stem_rowc(const char *ra, const char *f, int8_t *o, int8_t *sc,
                                                               const int32_t ow, const int32_t NS, const int32_t W,
                                                               const int32_t RB, const int32_t KB, const int32_t S,
                                                               const int32_t BOFF, const int32_t OPS, const int fast,
                                                               int32_t zp) {
  const int32_t CP = (S & 1) ? 2 : 1, O1 = 2 * CP * S, O2 = 4 * CP * S, OQ = CP * OPS;
  const int32_t nt = (ow + 3 * CP - 1) / (3 * CP) * CP;   /* triples, the last group's phantom pixels included */
#pragma GCC unroll 1
  for (int32_t t = 0; t < nt; t++) {
    const int32_t x = t / CP * 3 * CP + t % CP;   /* the triple's first pixel */
    const char *const c = ra + bt_stem_pos(x, S, BOFF);
    const int last = x + 2 * CP >= ow;
    int8_t *const ot = last ? sc : o + x * OPS;
    if (fast == 2) {
      bt_stem_blk(c, f, ot, NS, W, RB, KB, 0, O1, O2, OPS, OQ, 0, 1);
    } else {
      int32_t acc[6];
      bt_stem3x2(c, f, NS, W, RB, KB, 0, O1, O2, acc);
      bt_pm_rq6(acc, (const int32_t *)f - 6, ot, OQ, 0, zp);
    }
    if (last)
      for (int32_t q = 0; q < 3 && x + q * CP < ow; q++) {
        o[(x + q * CP) * OPS] = sc[q * OQ];
        o[(x + q * CP) * OPS + 1] = sc[q * OQ + 1];
      }
  }
}

/* The stem path (bt_stem_ok): the buffer (buf, BT_STEM_BYTES) holds up to BT_STEM_GC channels' pairs (their
 * weights widened, doubled for fast 2: bt_rq2m's doubled sums at no cost), then kh rows A (and kh rows B for an
 * odd S). Per group of channels, per output row its kh input rows are widened again (or zeroed: outside the
 * image; the padding values stay 0 from the start), then per pair of channels the row's triples (bt_stem_row),
 * the 1-5 pixels after them by triples whose phantom pixels are dropped (their requantisation in C). unfold (the
 * middle form, bt_variants.h BT_CONV_PMM): the zero point always added (FOLD 0, as bt_stem_rowc: 0 in the pair's
 * word where the rounding words hold it), one copy of the row's and the tail's asm, not one per case of the fold. */
static inline __attribute__((always_inline)) void bt_conv_stem_form(const bt_conv_params *p, const int8_t *in,
                                                                  int32_t in_y0, int8_t *out, int32_t y0, int32_t y1,
                                                                  const int fast, int16_t *buf, const int unfold) {
  const int32_t cin = p->in.c, cout = p->out.c, ow = p->out.w, OPS = p->out.pixel_stride, kh = p->kh;
  const int32_t RL = BT_STEM_RL(p), W = RL / 2, NS = BT_STEM_NS(p), S = BT_STEM_S(p), RB = BT_STEM_ROWB(p);
  const int32_t ROWV = BT_STEM_ROWV(p), run = p->kw * cin, K = kh * run, KB = 4 * NS, PB = BT_STEM_PB(p);
  const int32_t GC = BT_STEM_GC(p), pl = p->pad_left, pt = p->pad_top, in_row = p->in.w * cin;
  const int32_t zp = p->output_offset, off = p->input_offset;
  const int32_t off2 = bt_dup16(off), dbl = fast == 2;
  /* the input values a row's windows read: pixels 0 .. nx - 1 */
  const int32_t reach = (ROWV / cin) - pl, nx = p->in.w < reach ? p->in.w : reach;
  char *const pairs = (char *)buf;
  int8_t *const sc = (int8_t *)buf + BT_STEM_BYTES - BT_STEM_SC(p);
  int16_t *const ra = (int16_t *)(pairs + GC / 2 * PB);   /* kh rows A, then kh rows B */
  const int32_t BOFF = kh * RB;                           /* bytes from rows A to rows B */
  const int8_t *const filter = p->filter;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  for (int32_t i = 0; i < BT_STEM_COPIES(p) * kh * ROWV; i += 2) {   /* the padding values stay 0 */
    const int32_t z = 0;
    __builtin_memcpy(ra + i, &z, 4);
  }
  for (int32_t g0 = 0; g0 < cout; g0 += GC) {
    const int32_t n = cout - g0 < GC ? cout - g0 : GC;
    uint32_t folded = 0;   /* bit i: pair i's zero point is in its rounding words */
    for (int32_t i = 0; i < n / 2; i++) {
      const int32_t oc = g0 + 2 * i;
      int32_t *const kw = (int32_t *)(pairs + i * PB);
      kw[1] = bias ? bias[oc] * (1 + dbl) : 0;
      kw[2] = bias ? bias[oc + 1] * (1 + dbl) : 0;
      folded |= (uint32_t)bt_pm_k6(kw + 3, mult[oc], mult[oc + 1], shift[oc], shift[oc + 1], zp, fast) << i;
      kw[0] = (BT_STEM_CP(p) == 2 || unfold) && ((folded >> i) & 1) ? 0 : zp;   /* bt_stem_rowc adds it always */
      for (int32_t r = 0; r < 2; r++) {
        const int8_t *const fr = filter + (oc + r) * K;
        int16_t *const wr = (int16_t *)(kw + 9 + r * NS);
        for (int32_t ky = 0; ky < kh; ky++)
          for (int32_t j = 0; j < RL; j++) wr[ky * RL + j] = (int16_t)(j < run ? fr[ky * run + j] * (1 + dbl) : 0);
      }
    }
    int8_t *orow = out + g0;
    for (int32_t y = y0; y < y1; y++, orow += ow * OPS) {
      for (int32_t ky = 0; ky < kh; ky++) {
        const int32_t iy = y * p->stride_h - pt + ky;
        int16_t *const d = ra + ky * ROWV;
        if ((uint32_t)iy < (uint32_t)p->in.h) {
          bt_stem_widen(in + (iy - in_y0) * in_row, d + pl * cin, nx * cin, off, off2);
        } else {
          for (int32_t i = pl * cin; i < (pl + nx) * cin; i++) d[i] = 0;
        }
        if (S & 1) {   /* rows B: by words from A's odd values (B's last value is never read) */
          int16_t *const e = d + kh * ROWV;
          for (int32_t i = 0; i < ROWV; i += 2) {
            uint32_t v;
            __builtin_memcpy(&v, d + 1 + i, 4);
            __builtin_memcpy(e + i, &v, 4);
          }
        }
      }
      for (int32_t i = 0; i < n / 2; i++) {
        const char *const f = pairs + i * PB + 36;
        int8_t *const o = orow + 2 * i;
        if (BT_STEM_CP(p) == 2) {
          bt_stem_rowc((const char *)ra, f, o, sc, ow, NS, W, RB, KB, S, BOFF, OPS, fast, (folded >> i) & 1 ? 0 : zp);
          continue;
        }
        const int32_t zpi = (folded >> i) & 1 ? 0 : zp;   /* unfold's zero point */
        int32_t x = unfold ? bt_stem_row((const char *)ra, f, o, ow, NS, W, RB, KB, S, BOFF, OPS, fast, 0, zpi)
                    : (folded >> i) & 1 ? bt_stem_row((const char *)ra, f, o, ow, NS, W, RB, KB, S, BOFF, OPS, fast, 1, zp)
                                        : bt_stem_row((const char *)ra, f, o, ow, NS, W, RB, KB, S, BOFF, OPS, fast, 0, zp);
        for (int32_t h = 0; x < ow; h++, x += 3) {   /* 1 to 5 pixels left: triples with phantom pixels, stored
                                                         in sc (past the row: into the next row's, or the tensor's
                                                         end), the real ones copied (kws's 5 pixels a row: 2) */
          const char *const cx = (const char *)ra + bt_stem_pos(x - 3 * h, S, BOFF);
          if (unfold && h) {
            bt_stem_tri(cx + 2 * ((3 * S) & ~1), f, sc, NS, W, RB, KB, S, BOFF, OPS, 1, fast, 0, zpi);
          } else if (unfold) {
            bt_stem_tri(cx, f, sc, NS, W, RB, KB, S, BOFF, OPS, 0, fast, 0, zpi);
          } else if (h) {
            if ((folded >> i) & 1) bt_stem_tri(cx + 2 * ((3 * S) & ~1), f, sc, NS, W, RB, KB, S, BOFF, OPS, 1, fast, 1, zp);
            else bt_stem_tri(cx + 2 * ((3 * S) & ~1), f, sc, NS, W, RB, KB, S, BOFF, OPS, 1, fast, 0, zp);
          } else {
            if ((folded >> i) & 1) bt_stem_tri(cx, f, sc, NS, W, RB, KB, S, BOFF, OPS, 0, fast, 1, zp);
            else bt_stem_tri(cx, f, sc, NS, W, RB, KB, S, BOFF, OPS, 0, fast, 0, zp);
          }
          for (int32_t q = 0; q < 3 && x + q < ow; q++) {
            o[(x + q) * OPS] = sc[q * OPS];
            o[(x + q) * OPS + 1] = sc[q * OPS + 1];
          }
        }
      }
    }
  }
}
#endif

/* model.c's BT_CONV_PM (bt_variants.h): the stem path when bt_stem_ok takes the layer (decided at compile time,
 * the other branch dropped: the frame holds one of the two buffers), else bt_conv_pm. */
static inline __attribute__((always_inline)) void bt_conv_pm_stem(const bt_conv_params *p, const int8_t *in,
                                                                int32_t in_y0, int8_t *out, int32_t y0, int32_t y1,
                                                                const int fast, const int act) {
#if BT_PM_RQ6_ASM
  if (bt_stem_ok(p, fast, act)) {   /* a constant: it asks for a layer's constant shape */
    int16_t buf[BT_STEM_BYTES / 2] __attribute__((aligned(4)));
    bt_conv_stem_form(p, in, in_y0, out, y0, y1, fast, buf, 0);
    return;
  }
#endif
  bt_conv_pm(p, in, in_y0, out, y0, y1, fast, act);
}
/* model.c's BT_CONV_PMM: the middle form, of the stem path (unfold) or of bt_conv_pm's (compact 2). */
static inline __attribute__((always_inline)) void bt_conv_pm_mid(const bt_conv_params *p, const int8_t *in,
                                                               int32_t in_y0, int8_t *out, int32_t y0, int32_t y1,
                                                               const int fast, const int act) {
#if BT_PM_RQ6_ASM
  if (bt_stem_ok(p, fast, act)) {
    int16_t buf[BT_STEM_BYTES / 2] __attribute__((aligned(4)));
    bt_conv_stem_form(p, in, in_y0, out, y0, y1, fast, buf, 1);
    return;
  }
#endif
  bt_conv_pm_form(p, in, in_y0, out, y0, y1, fast, act, 2);
}
#endif
