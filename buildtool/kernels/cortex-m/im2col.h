/* im2col.h -- the cortex-m set's patch-matrix convolution path: each output pixel's input patch
 * (kh*kw*c_in values, OHWI order) is gathered once, widened to int16 with the input offset added
 * (padding taps become 0). Three pixels at a time, their columns interleaved (bt_widenp), times two filter
 * rows read straight from flash (bt_mm3x2: 2 LDM + 2 LDR + 4 SXTB16 + 12 SMLAD per 24 MACs): patches of at
 * most BT_COL3 values, and up to BT_COL_MAX when none is gathered (conv_pm.h); other patches and two pixels
 * left over take bt_mm2x2 (their two columns interleaved the same way: 1 LDM + 2 LDR + 4 SXTB16 + 8 SMLAD
 * per 16 MACs), one pixel bt_mv1x4.
 * Requantisation takes bt_rq2 (one SMLAL-based rounding, exact for TFLite's multipliers) when every
 * channel allows it. Used by conv.c for any patch of at most BT_COL_MAX values. */
#ifndef BT_CORTEXM_IM2COL_H
#define BT_CORTEXM_IM2COL_H
#include <stdint.h>
#include "bt_kernels.h"
#include "requant.h"
#include "dsp.h"

#define BT_COL_MAX 640   /* int16 values per column of the patch-matrix path */

/* Column layout: within each group of 4 values k..k+3 the int16s are stored [k, k+2, k+1, k+3], so a
 * word at col+k pairs with SXTB16(w) (bytes 0, 2) and the word at col+k+2 with SXTB16(w ror 8);
 * the K % 4 tail values follow in order. */

/* dst[0..n) = the widened, reordered values of src[0..n) + off (off2 = bt_dup16(off)): SXTAB16 adds the offset
 * as it widens (the same int16 halves as SXTB16 then SADD16, one instruction instead of two); dbl 1 (conv_pm.h's
 * doubled sums): 2 (src + off), one SADD16 more per 2 values. */
static inline __attribute__((always_inline)) void bt_widen_x(const int8_t *src, int16_t *dst, int32_t n, int32_t off,
                                                              int32_t off2, const int dbl) {
  int32_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const uint32_t v = bt_ld4(src + k);
    int32_t a = (int32_t)bt_sxtab16((uint32_t)off2, v), b = (int32_t)bt_sxtab16_ror8((uint32_t)off2, v);
    if (dbl) { a = bt_sadd16(a, a); b = bt_sadd16(b, b); }
    __builtin_memcpy(dst + k, &a, 4);
    __builtin_memcpy(dst + k + 2, &b, 4);
  }
  for (; k < n; k++) dst[k] = (int16_t)((src[k] + off) * (1 + dbl));
}
static inline void bt_widen(const int8_t *src, int16_t *dst, int32_t n, int32_t off, int32_t off2) {
  bt_widen_x(src, dst, n, off, off2, 0);
}

/* dst[0..n) = src[0..n): word copies (unaligned LDR/STR), then bytes. */
static inline void bt_copy(int8_t *dst, const int8_t *src, int32_t n) {
  int32_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const uint32_t v = bt_ld4(src + k);
    __builtin_memcpy(dst + k, &v, 4);
  }
  for (; k < n; k++) dst[k] = src[k];
}

/* Gathers the patch of output pixel (y, x) as int8 codes into pb (K bytes): padding taps get the
 * input zero point (-off), which the widening turns into 0. A patch inside the image of a dense
 * input without horizontal dilation is kh copies of kw*c_in contiguous bytes. bt_gather below picks
 * the copy: inlined where the layer's shape is constant (model.c's instances fold it), else one
 * out-of-line copy (inlined into the run-time variants' loops it cost their stems 9 % more
 * instructions: benchmarks/kernels_vs_cmsis.py). */
static inline __attribute__((always_inline)) void bt_gather_inl(const bt_conv_params *p, const int8_t *in,
                                                                int32_t in_y0, int32_t y, int32_t x, int8_t *pb) {
  const int32_t cin = p->in.c, ips = p->in.pixel_stride, in_row = p->in.w * ips;
  const int8_t zp = (int8_t)(-p->input_offset);
  const int32_t iy0 = y * p->stride_h - p->pad_top, ix0 = x * p->stride_w - p->pad_left;
  if (ips == cin && p->dil_w == 1 && iy0 >= 0 && iy0 + (p->kh - 1) * p->dil_h < p->in.h && ix0 >= 0 &&
      ix0 + p->kw <= p->in.w) {
    const int32_t run = p->kw * cin, dy = p->dil_h * in_row;
    const int8_t *s = in + (iy0 - in_y0) * in_row + ix0 * ips;
    for (int32_t ky = 0; ky < p->kh; ky++, s += dy, pb += run) bt_copy(pb, s, run);
    return;
  }
  for (int32_t ky = 0; ky < p->kh; ky++) {
    const int32_t iy = iy0 + ky * p->dil_h;
    const int row_ok = (uint32_t)iy < (uint32_t)p->in.h;
    const int8_t *irow = in + (iy - in_y0) * in_row;
    for (int32_t kx = 0; kx < p->kw; kx++, pb += cin) {
      const int32_t ix = ix0 + kx * p->dil_w;
      if (row_ok && (uint32_t)ix < (uint32_t)p->in.w) {
        const int8_t *s = irow + ix * ips;
        for (int32_t c = 0; c < cin; c++) pb[c] = s[c];
      } else {
        for (int32_t c = 0; c < cin; c++) pb[c] = zp;
      }
    }
  }
}

static __attribute__((noinline, unused)) void bt_gather_call(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                             int32_t y, int32_t x, int8_t *pb) {
  bt_gather_inl(p, in, in_y0, y, x, pb);
}
/* BT_GATHER_INLINE (model.c defines it, templates/variants.c.in): its instances' and fused tile kernels' shapes are
 * build-time constants, also where a tile kernel's parameters are a local struct __builtin_constant_p does not see
 * through (kws's grouped tile kernel: 14.7 KB with the out-of-line copy's general loops, 4.8 KB inlined). */
static inline __attribute__((always_inline)) void bt_gather(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                            int32_t y, int32_t x, int8_t *pb) {
#ifdef BT_GATHER_INLINE
  bt_gather_inl(p, in, in_y0, y, x, pb);
#else
  if (__builtin_constant_p(p->in.c) && __builtin_constant_p(p->kh) && __builtin_constant_p(p->kw))
    bt_gather_inl(p, in, in_y0, y, x, pb);
  else
    bt_gather_call(p, in, in_y0, y, x, pb);
#endif
}

#define BT_STR_(x) #x
#define BT_STR(x) BT_STR_(x)

/* column c . filter row f (n values). */
static inline int32_t bt_mv1x1(const int16_t *c, const int8_t *f, int32_t n, int32_t acc) {
  int32_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const uint32_t w = bt_ld4(f + k);
    int32_t x, y;
    __builtin_memcpy(&x, c + k, 4);
    __builtin_memcpy(&y, c + k + 2, 4);
    acc = bt_smlad(bt_sxtb16_ror8(w), y, bt_smlad(bt_sxtb16(w), x, acc));
  }
  for (; k < n; k++) acc += f[k] * c[k];
  return acc;
}

#define BT_COL3 512   /* values per column on the 3-pixel path with several triples widened at once or a gathered
                         patch (conv_pm.h: 3 columns = 3072 bytes, the patch after them in the 3 columns of
                         BT_COL_MAX, 3840 bytes: the frame stays under 4 KB, where the asm's end pointer has an
                         SP-relative address, the 14 registers being taken) */

/* Columns of P = 2 or 3 pixels interleaved (a "pair" or a "triple"): per group g of 4 values k..k+3,
 * 2P words at c + 4Pg (int16 units): pixel q's word (k, k+2) at c + 4Pg + 2q, its (k+1, k+3) at
 * c + 4Pg + 2P + 2q, so one LDM reads a word of each pixel; the K % 4 tail values of pixel q make one
 * more group the same way, zeros after them. BT_GROUPED(P, K) int16 values in all. */
#define BT_GROUPED(P, K) ((P) * ((K) & ~3) + (((K) & 3) ? 4 * (P) : 0))

/* Widens src[0..n) + off (off2 = bt_dup16(off)) into pixel q's place of the P pixels at c (bt_widen's SXTAB16;
 * dbl 1: doubled). */
static inline __attribute__((always_inline)) void bt_widenp_x(const int8_t *src, int16_t *c, int32_t q, int32_t n,
                                                               const int32_t P, int32_t off, int32_t off2,
                                                               const int dbl) {
  int16_t *d = c + 2 * q;
  int32_t k = 0;
#pragma GCC unroll 4
  for (; k + 4 <= n; k += 4, d += 4 * P) {
    const uint32_t v = bt_ld4(src + k);
    int32_t a = (int32_t)bt_sxtab16((uint32_t)off2, v), b = (int32_t)bt_sxtab16_ror8((uint32_t)off2, v);
    if (dbl) { a = bt_sadd16(a, a); b = bt_sadd16(b, b); }
    __builtin_memcpy(d, &a, 4);
    __builtin_memcpy(d + 2 * P, &b, 4);
  }
  if (k < n) {   /* the tail group: values k..n-1, zeros after them */
    const int32_t r = n - k;
    d[0] = (int16_t)((src[k] + off) * (1 + dbl));
    d[2 * P] = (int16_t)(r > 1 ? (src[k + 1] + off) * (1 + dbl) : 0);
    d[1] = (int16_t)(r > 2 ? (src[k + 2] + off) * (1 + dbl) : 0);
    d[2 * P + 1] = 0;
  }
}
static inline void bt_widenp(const int8_t *src, int16_t *c, int32_t q, int32_t n, const int32_t P, int32_t off,
                             int32_t off2) {
  bt_widenp_x(src, c, q, n, P, off, off2, 0);
}

/* The K % 4 (1..3) weights of filter row f after its K & ~3 whole groups as one word, zero bytes after
 * them: from the row's last 4 bytes when K >= 4 (one unaligned LDR and a shift), else byte by byte. */
static inline __attribute__((always_inline)) uint32_t bt_tailw(const int8_t *f, int32_t K) {
  const int32_t r = K & 3;
  if (K >= 4) return bt_ld4(f + K - 4) >> (8 * (4 - r));
  uint32_t w = (uint8_t)f[0];
  if (r > 1) w |= (uint32_t)(uint8_t)f[1] << 8;
  if (r > 2) w |= (uint32_t)(uint8_t)f[2] << 16;
  return w;
}

/* The tail group's sums (BT_GROUPED layout) of pixel q of P at t (c + P*K4) with weight word w. */
static inline __attribute__((always_inline)) int32_t bt_tail_dot(const int16_t *t, int32_t q, const int32_t P, uint32_t w, int32_t acc) {
  int32_t x, y;
  __builtin_memcpy(&x, t + 2 * q, 4);
  __builtin_memcpy(&y, t + 2 * P + 2 * q, 4);
  return bt_smlad(bt_sxtb16_ror8(w), y, bt_smlad(bt_sxtb16(w), x, acc));
}

/* acc[q] = pixel q of the P at c . filter row f (K values), q < P (the last channel of an odd count). */
static inline void bt_mmpx1(const int16_t *c, const int8_t *f, int32_t K, const int32_t P, int32_t *acc) {
  const int32_t K4 = K & ~3;
  int32_t a0 = 0, a1 = 0, a2 = 0, k = 0;
  for (; k < K4; k += 4, c += 4 * P) {
    const uint32_t w = bt_ld4(f + k);
    const int32_t l = bt_sxtb16(w), h = bt_sxtb16_ror8(w);
    int32_t x, y;
    __builtin_memcpy(&x, c, 4); __builtin_memcpy(&y, c + 2 * P, 4); a0 = bt_smlad(h, y, bt_smlad(l, x, a0));
    __builtin_memcpy(&x, c + 2, 4); __builtin_memcpy(&y, c + 2 * P + 2, 4); a1 = bt_smlad(h, y, bt_smlad(l, x, a1));
    if (P == 3) {
      __builtin_memcpy(&x, c + 4, 4); __builtin_memcpy(&y, c + 10, 4); a2 = bt_smlad(h, y, bt_smlad(l, x, a2));
    }
  }
  if (K & 3) {
    const uint32_t w = bt_tailw(f, K);
    a0 = bt_tail_dot(c, 0, P, w, a0); a1 = bt_tail_dot(c, 1, P, w, a1);
    if (P == 3) a2 = bt_tail_dot(c, 2, P, w, a2);
  }
  acc[0] = a0; acc[1] = a1;
  if (P == 3) acc[2] = a2;
}

/* One group of bt_mm2x2's asm loop: 4 values of the pair's two pixels times 4 weights of two filter
 * rows (f, f + K): 1 LDM (a word of each pixel and half) + 2 LDR + 4 SXTB16 + 8 SMLAD per 16 MACs. */
#define BT_MM2X2_STEP                                         \
  "ldm %[c]!, {%[x0], %[x1], %[y0], %[y1]}\n\t"               \
  "ldr %[wb], [%[f], %[K]]\n\t"                               \
  "ldr %[wa], [%[f]], #4\n\t"                                 \
  "sxtb16 %[t], %[wa]\n\t"                                    \
  "smlad %[a00], %[t], %[x0], %[a00]\n\t"                     \
  "smlad %[a10], %[t], %[x1], %[a10]\n\t"                     \
  "sxtb16 %[t], %[wb]\n\t"                                    \
  "smlad %[a01], %[t], %[x0], %[a01]\n\t"                     \
  "smlad %[a11], %[t], %[x1], %[a11]\n\t"                     \
  "sxtb16 %[wa], %[wa], ror #8\n\t"                           \
  "smlad %[a00], %[wa], %[y0], %[a00]\n\t"                    \
  "smlad %[a10], %[wa], %[y1], %[a10]\n\t"                    \
  "sxtb16 %[wb], %[wb], ror #8\n\t"                           \
  "smlad %[a01], %[wb], %[y0], %[a01]\n\t"                    \
  "smlad %[a11], %[wb], %[y1], %[a11]\n\t"

/* acc = {b0 + p0*f0, b1 + p0*f1, b0 + p1*f0, b1 + p1*f1}: the pair at c0 (bt_widenp, P = 2), filter rows
 * f0 and f0 + K. The DSP version's main loop is asm, four groups (16 values) a pass: 60 + 3 instructions
 * per 64 MACs (the loop's end test, 7 cycles at the Cortex-M4's high end, once per 64 MACs); K % 16 >= 8
 * two steps and K % 8 >= 4 one more straight after it, the K % 4 tail one more group in C (bt_tailw:
 * the row's last weights, zeros after them; the column's tail group has zeros there). 13 registers (14 with K not a
 * constant); the LDM destinations are fixed (r8-r11, in register order), the end pointer in memory. */
static inline void bt_mm2x2(const int16_t *c0, const int8_t *f0, int32_t K, int32_t b0, int32_t b1, int32_t *acc) {
  int32_t a00 = b0, a01 = b1, a10 = b0, a11 = b1;
  const int32_t K4 = K & ~3;
  const int8_t *f = f0;
  const int16_t *c = c0;
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)   /* -O0 lacks the registers */
  const int32_t K16 = K & ~15;
  register uint32_t x0 __asm__("r8"), x1 __asm__("r9"), y0 __asm__("r10"), y1 __asm__("r11");
  uint32_t wa, wb, t;
#define BT_MM2X2_OUTPUTS                                                                                  \
  : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [c] "+r"(c), [f] "+r"(f),        \
    [wa] "=&r"(wa), [wb] "=&r"(wb), [t] "=&r"(t), [x0] "=&r"(x0), [x1] "=&r"(x1), [y0] "=&r"(y0),         \
    [y1] "=&r"(y1)
  if (__builtin_constant_p(K) && K < 4096) {   /* a layer's constant patch: the row offset an immediate */
    if (K16) {
      const int16_t *const end = c + 2 * K16;
      __asm__ volatile("1:\n\t" BT_MM2X2_STEP BT_MM2X2_STEP BT_MM2X2_STEP BT_MM2X2_STEP
                       "ldr %[t], %[end]\n\tcmp %[c], %[t]\n\tbne 1b\n\t"
                       BT_MM2X2_OUTPUTS : [K] "i"(K), [end] "m"(end) : "cc", "memory");
    }
    if (K & 8) __asm__ volatile(BT_MM2X2_STEP BT_MM2X2_STEP BT_MM2X2_OUTPUTS : [K] "i"(K) : "cc", "memory");
    if (K & 4) __asm__ volatile(BT_MM2X2_STEP BT_MM2X2_OUTPUTS : [K] "i"(K) : "cc", "memory");
  } else {
    if (K16) {
      const int16_t *const end = c + 2 * K16;
      __asm__ volatile("1:\n\t" BT_MM2X2_STEP BT_MM2X2_STEP BT_MM2X2_STEP BT_MM2X2_STEP
                       "ldr %[t], %[end]\n\tcmp %[c], %[t]\n\tbne 1b\n\t"
                       BT_MM2X2_OUTPUTS : [K] "r"(K), [end] "m"(end) : "cc", "memory");
    }
    if (K & 8) __asm__ volatile(BT_MM2X2_STEP BT_MM2X2_STEP BT_MM2X2_OUTPUTS : [K] "r"(K) : "cc", "memory");
    if (K & 4) __asm__ volatile(BT_MM2X2_STEP BT_MM2X2_OUTPUTS : [K] "r"(K) : "cc", "memory");
  }
#undef BT_MM2X2_OUTPUTS
#else
  for (const int16_t *const end = c + 2 * K4; c != end; c += 8, f += 4) {
    const uint32_t wa = bt_ld4(f), wb = bt_ld4(f + K);
    const int32_t al = bt_sxtb16(wa), ah = bt_sxtb16_ror8(wa), bl = bt_sxtb16(wb), bh = bt_sxtb16_ror8(wb);
    int32_t x;
    __builtin_memcpy(&x, c, 4); a00 = bt_smlad(al, x, a00); a01 = bt_smlad(bl, x, a01);
    __builtin_memcpy(&x, c + 4, 4); a00 = bt_smlad(ah, x, a00); a01 = bt_smlad(bh, x, a01);
    __builtin_memcpy(&x, c + 2, 4); a10 = bt_smlad(al, x, a10); a11 = bt_smlad(bl, x, a11);
    __builtin_memcpy(&x, c + 6, 4); a10 = bt_smlad(ah, x, a10); a11 = bt_smlad(bh, x, a11);
  }
#endif
  if (K & 3) {
    const int16_t *const t = c0 + 2 * K4;
    const uint32_t w0 = bt_tailw(f0, K), w1 = bt_tailw(f0 + K, K);
    a00 = bt_tail_dot(t, 0, 2, w0, a00); a01 = bt_tail_dot(t, 0, 2, w1, a01);
    a10 = bt_tail_dot(t, 1, 2, w0, a10); a11 = bt_tail_dot(t, 1, 2, w1, a11);
  }
  acc[0] = a00; acc[1] = a01; acc[2] = a10; acc[3] = a11;
}

/* The first half of a group: the weights' low halves (wa, wb) times the pixels' words x0-x2 into the six sums
 * (BT_MM3X2_LO), or, in a first group, the sums started from the biases in a00 (b0) and a01 (b1), each read by
 * the first SMLAD of its row before a00 / a01 themselves (BT_MM3X2_LO0: no copies of the biases). */
#define BT_MM3X2_LO                                           \
  "sxtb16 %[t], %[wa]\n\t"                                    \
  "smlad %[a00], %[t], %[x0], %[a00]\n\t"                     \
  "smlad %[a10], %[t], %[x1], %[a10]\n\t"                     \
  "smlad %[a20], %[t], %[x2], %[a20]\n\t"                     \
  "sxtb16 %[t], %[wb]\n\t"                                    \
  "smlad %[a01], %[t], %[x0], %[a01]\n\t"                     \
  "smlad %[a11], %[t], %[x1], %[a11]\n\t"                     \
  "smlad %[a21], %[t], %[x2], %[a21]\n\t"
#define BT_MM3X2_LO0                                          \
  "sxtb16 %[t], %[wa]\n\t"                                    \
  "smlad %[a10], %[t], %[x1], %[a00]\n\t"                     \
  "smlad %[a20], %[t], %[x2], %[a00]\n\t"                     \
  "smlad %[a00], %[t], %[x0], %[a00]\n\t"                     \
  "sxtb16 %[t], %[wb]\n\t"                                    \
  "smlad %[a11], %[t], %[x1], %[a01]\n\t"                     \
  "smlad %[a21], %[t], %[x2], %[a01]\n\t"                     \
  "smlad %[a01], %[t], %[x0], %[a01]\n\t"
/* The second half of each group of bt_mm3x2's asm (BT_MM3X2_STEP, STEP0, STEPT): the pixels' next word and the
 * weights' high halves (wa, wb as the first half left them). */
#define BT_MM3X2_HI                                           \
  "ldm %[c]!, {%[x0], %[x1], %[x2]}\n\t"                      \
  BT_MM3X2_MACS_HI
/* The multiply-accumulates of that second half, its words loaded (conv_pm.h's compact loop loads them its own way). */
#define BT_MM3X2_MACS_HI                                      \
  "sxtb16 %[wa], %[wa], ror #8\n\t"                           \
  "smlad %[a00], %[wa], %[x0], %[a00]\n\t"                    \
  "smlad %[a10], %[wa], %[x1], %[a10]\n\t"                    \
  "smlad %[a20], %[wa], %[x2], %[a20]\n\t"                    \
  "sxtb16 %[wb], %[wb], ror #8\n\t"                           \
  "smlad %[a01], %[wb], %[x0], %[a01]\n\t"                    \
  "smlad %[a11], %[wb], %[x1], %[a11]\n\t"                    \
  "smlad %[a21], %[wb], %[x2], %[a21]\n\t"
/* One group of bt_mm3x2's asm loop: 4 values of the triple's three pixels times 4 weights of two
 * filter rows (f, f + K): 2 LDM (a word of each pixel) + 2 LDR + 4 SXTB16 + 12 SMLAD per 24 MACs
 * (K a constant: the row offset an immediate, a register left for the unpacked low halves). */
#define BT_MM3X2_STEP                                         \
  "ldm %[c]!, {%[x0], %[x1], %[x2]}\n\t"                      \
  "ldr %[wb], [%[f], %[K]]\n\t"                               \
  "ldr %[wa], [%[f]], #4\n\t"                                 \
  BT_MM3X2_LO                                                 \
  BT_MM3X2_HI
/* The first group of bt_mm3x2's asm with a layer's constant K: the sums start from the biases in a00 (b0) and
 * a01 (b1), read by the first SMLAD of each row before a00 / a01 themselves (no copies of the biases into the
 * other four sums). */
#define BT_MM3X2_STEP0                                        \
  "ldm %[c]!, {%[x0], %[x1], %[x2]}\n\t"                      \
  "ldr %[wb], [%[f], %[K]]\n\t"                               \
  "ldr %[wa], [%[f]], #4\n\t"                                 \
  BT_MM3X2_LO0                                                \
  BT_MM3X2_HI
/* The K % 4 tail group of bt_mm3x2's asm (K a constant of at least 4, f at f0 + K4): row f0's word from f (its
 * last K % 4 weights, then row f0 + K's first ones), row f0 + K's the word ending at the row's end (KT = 2K - 4 -
 * K4 bytes on) shifted down by SH = 8 (4 - K % 4) bits (zero bytes after its weights). */
#define BT_MM3X2_STEPT                                        \
  "ldm %[c]!, {%[x0], %[x1], %[x2]}\n\t"                      \
  "ldr %[wb], [%[f], %[KT]]\n\t"                              \
  "ldr %[wa], [%[f]], #4\n\t"                                 \
  "lsr %[wb], %[wb], %[SH]\n\t"                               \
  BT_MM3X2_LO                                                 \
  BT_MM3X2_HI
/* The same with K in a register (no register left for the unpacked low halves, the 15th): each half group's
 * loads one chain of single LDRs (the Cortex-M4 pipelines an LDR after an LDR whose destination its address does not
 * use: 1 cycle each after the first), the pixels' three words by LDR instead of LDM (an LDM is not pipelined with
 * the loads around it): row f + K's word, row f's, the pixels' low words (2 + 4 estimated cycles against the LDM's 4
 * and the two loads' 3); row f's low halves in place in wa, then row f + K's from wb into wa; the second half
 * reloads row f's word (f moves on) at the head of the pixels' high words' chain (2 + 3, the LDM's 4 and no reload
 * against it). 27 estimated cycles per 24 MACs, the constant-K group's (BT_MM3X2_STEP: 2 LDM + 2 LDR), for 6 more
 * instructions. */
#define BT_MM3X2_LD3                                          \
  "ldr %[x1], [%[c], #4]\n\t"                                 \
  "ldr %[x2], [%[c], #8]\n\t"                                 \
  "ldr %[x0], [%[c]], #12\n\t"
#define BT_MM3X2_STEP_R                                       \
  "ldr %[wb], [%[f], %[K]]\n\t"                               \
  "ldr %[wa], [%[f]]\n\t"                                     \
  BT_MM3X2_LD3                                                \
  "sxtb16 %[wa], %[wa]\n\t"                                   \
  "smlad %[a00], %[wa], %[x0], %[a00]\n\t"                    \
  "smlad %[a10], %[wa], %[x1], %[a10]\n\t"                    \
  "smlad %[a20], %[wa], %[x2], %[a20]\n\t"                    \
  "sxtb16 %[wa], %[wb]\n\t"                                   \
  "smlad %[a01], %[wa], %[x0], %[a01]\n\t"                    \
  "smlad %[a11], %[wa], %[x1], %[a11]\n\t"                    \
  "smlad %[a21], %[wa], %[x2], %[a21]\n\t"                    \
  BT_MM3X2_STEP_R2
/* BT_MM3X2_STEP_R's second half (the high halves; conv_pm.h's BT_MM3X2_STEP0_R ends with it too) */
#define BT_MM3X2_STEP_R2                                      \
  "ldr %[wa], [%[f]], #4\n\t"                                 \
  BT_MM3X2_LD3                                                \
  "sxtb16 %[wb], %[wb], ror #8\n\t"                           \
  "smlad %[a01], %[wb], %[x0], %[a01]\n\t"                    \
  "smlad %[a11], %[wb], %[x1], %[a11]\n\t"                    \
  "smlad %[a21], %[wb], %[x2], %[a21]\n\t"                    \
  "sxtb16 %[wa], %[wa], ror #8\n\t"                           \
  "smlad %[a00], %[wa], %[x0], %[a00]\n\t"                    \
  "smlad %[a10], %[wa], %[x1], %[a10]\n\t"                    \
  "smlad %[a20], %[wa], %[x2], %[a20]\n\t"

/* acc = {b0 + p0*f0, b1 + p0*f1, b0 + p1*f0, b1 + p1*f1, b0 + p2*f0, b1 + p2*f1}: the three pixels of
 * triple c (K <= BT_COL_MAX values each, bt_widenp with P = 3), filter rows f0 and f0 + K. The DSP version's main
 * loop is asm, eight groups (32 values) a pass (with a layer's constant K: 160 + 3 instructions per 192 MACs;
 * else 176 + 3), an odd count of 16 values entering at its second half (one B, or TST + BNE), K % 16 >= 8 two
 * steps and K % 8 >= 4 one more straight after it (no loop for a patch of 8 or 12 values), the K % 4 tail one
 * more group in C as bt_mm2x2's. With a layer's constant K (at least 4) the first group starts the sums from the
 * biases (BT_MM3X2_STEP0), the first 16 values are straight code before the loop (a patch of 16 values has
 * no loop), and the K % 4 tail is one more asm step (BT_MM3X2_STEPT): row f0's tail word read on into row
 * f0 + K, row f0 + K's the word ending at its end shifted down (every load inside the two rows); the column's
 * tail group holds zeros after the K % 4 values, so the weights after them add nothing. Always inlined (the
 * longer asm made gcc's size estimate outline it in model.c). It takes 14 registers: the three LDM
 * destinations are fixed (r8-r10: an LDM list is in register order), the end pointer in memory. A constant K16
 * of at most BT_MM3X2_FLAT is straight code to its end (no loop): the loop's end pointer stored and reloaded per
 * pass, the branch into its second half and the back branch cost ~18 estimated high cycles a call (kws's 1x1
 * layers of 64 values, 1333 calls each: 745.7 K -> 722.1 K est. high; vww's 6x6 1x1 layers of 128 values ~789 K
 * -> ~762 K) for ~84 bytes of code per 4 values more (vww's firmware 366 -> 385 KB, kws's 109 -> 110 KB). */
#define BT_MM3X2_FLAT 128
static inline __attribute__((always_inline)) void bt_mm3x2(const int16_t *c0, const int8_t *f0, int32_t K, int32_t b0,
                                                            int32_t b1, int32_t *acc) {
  int32_t a00 = b0, a01 = b1, a10 = b0, a11 = b1, a20 = b0, a21 = b1;
  const int32_t K4 = K & ~3;
  const int8_t *f = f0;
  const int16_t *c = c0;
#define BT_MM3X2_CTAIL()                                                                     \
  do {                                                                                       \
    const int16_t *const t_ = c0 + 3 * K4;                                                   \
    const uint32_t w0_ = bt_tailw(f0, K), w1_ = bt_tailw(f0 + K, K);                         \
    a00 = bt_tail_dot(t_, 0, 3, w0_, a00); a01 = bt_tail_dot(t_, 0, 3, w1_, a01);            \
    a10 = bt_tail_dot(t_, 1, 3, w0_, a10); a11 = bt_tail_dot(t_, 1, 3, w1_, a11);            \
    a20 = bt_tail_dot(t_, 2, 3, w0_, a20); a21 = bt_tail_dot(t_, 2, 3, w1_, a21);            \
  } while (0)
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)   /* -O0 lacks the registers */
  const int32_t K16 = K & ~15;
  register uint32_t x0 __asm__("r8"), x1 __asm__("r9"), x2 __asm__("r10");
  uint32_t wa, wb;
#define BT_MM3X2_OUTPUTS                                                                                \
  : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [a20] "+r"(a20), [a21] "+r"(a21), \
    [c] "+r"(c), [f] "+r"(f), [wa] "=&r"(wa), [wb] "=&r"(wb), [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2)
#define BT_MM3X2_OUTPUTS0                                                                                 \
  : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), [a20] "=&r"(a20), [a21] "=&r"(a21), \
    [c] "+r"(c), [f] "+r"(f), [wa] "=&r"(wa), [wb] "=&r"(wb), [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2)
  if (__builtin_constant_p(K) && K < 4096 && K >= 4) {   /* a layer's constant patch */
    uint32_t t;
#define BT_MM3X2_IN : [K] "i"(K)
    if (K16) {
      __asm__ volatile(BT_MM3X2_STEP0 BT_MM3X2_STEP BT_MM3X2_STEP BT_MM3X2_STEP
                       BT_MM3X2_OUTPUTS0, [t] "=&r"(t) BT_MM3X2_IN : "cc", "memory");
      if (K16 > 16 && K16 <= BT_MM3X2_FLAT) {   /* straight code to the end: no end pointer, no loop */
#define BT_MM3X2_S4 BT_MM3X2_STEP BT_MM3X2_STEP BT_MM3X2_STEP BT_MM3X2_STEP
        if (K16 == 32)
          __asm__ volatile(BT_MM3X2_S4 BT_MM3X2_OUTPUTS, [t] "=&r"(t) BT_MM3X2_IN : "cc", "memory");
        else if (K16 == 48)
          __asm__ volatile(BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_OUTPUTS, [t] "=&r"(t) BT_MM3X2_IN : "cc", "memory");
        else if (K16 == 64)
          __asm__ volatile(BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_OUTPUTS, [t] "=&r"(t) BT_MM3X2_IN
                           : "cc", "memory");
        else if (K16 == 80)
          __asm__ volatile(BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_OUTPUTS, [t] "=&r"(t)
                           BT_MM3X2_IN : "cc", "memory");
        else if (K16 == 96)
          __asm__ volatile(BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_OUTPUTS, [t] "=&r"(t)
                           BT_MM3X2_IN : "cc", "memory");
        else if (K16 == 112)
          __asm__ volatile(BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_OUTPUTS,
                           [t] "=&r"(t) BT_MM3X2_IN : "cc", "memory");
        else
          __asm__ volatile(BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4 BT_MM3X2_S4
                           BT_MM3X2_OUTPUTS, [t] "=&r"(t) BT_MM3X2_IN : "cc", "memory");
#undef BT_MM3X2_S4
      } else if (K16 > 16) {
        const int16_t *const end = c + 3 * (K16 - 16);
        if ((K16 - 16) & 16)   /* an odd count of 16 values left: the first pass enters at the loop's second half */
          __asm__ volatile("b 2f\n1:\n\t" BT_MM3X2_STEP BT_MM3X2_STEP BT_MM3X2_STEP BT_MM3X2_STEP
                           "2:\n\t" BT_MM3X2_STEP BT_MM3X2_STEP BT_MM3X2_STEP BT_MM3X2_STEP
                           "ldr %[t], %[end]\n\tcmp %[c], %[t]\n\tbne 1b\n\t"
                           BT_MM3X2_OUTPUTS, [t] "=&r"(t) BT_MM3X2_IN, [end] "m"(end) : "cc", "memory");
        else
          __asm__ volatile("1:\n\t" BT_MM3X2_STEP BT_MM3X2_STEP BT_MM3X2_STEP BT_MM3X2_STEP
                           BT_MM3X2_STEP BT_MM3X2_STEP BT_MM3X2_STEP BT_MM3X2_STEP
                           "ldr %[t], %[end]\n\tcmp %[c], %[t]\n\tbne 1b\n\t"
                           BT_MM3X2_OUTPUTS, [t] "=&r"(t) BT_MM3X2_IN, [end] "m"(end) : "cc", "memory");
      }
    }
    if (K & 8) {
      if (K16) __asm__ volatile(BT_MM3X2_STEP BT_MM3X2_STEP BT_MM3X2_OUTPUTS, [t] "=&r"(t) BT_MM3X2_IN : "cc", "memory");
      else __asm__ volatile(BT_MM3X2_STEP0 BT_MM3X2_STEP BT_MM3X2_OUTPUTS0, [t] "=&r"(t) BT_MM3X2_IN : "cc", "memory");
    }
    if (K & 4) {
      if (K & ~7) __asm__ volatile(BT_MM3X2_STEP BT_MM3X2_OUTPUTS, [t] "=&r"(t) BT_MM3X2_IN : "cc", "memory");
      else __asm__ volatile(BT_MM3X2_STEP0 BT_MM3X2_OUTPUTS0, [t] "=&r"(t) BT_MM3X2_IN : "cc", "memory");
    }
    if (K & 3)
      __asm__ volatile(BT_MM3X2_STEPT BT_MM3X2_OUTPUTS, [t] "=&r"(t)
                       : [KT] "i"(2 * K - 4 - K4), [SH] "i"(8 * (4 - (K & 3))) : "cc", "memory");
#undef BT_MM3X2_IN
    acc[0] = a00; acc[1] = a01; acc[2] = a10; acc[3] = a11; acc[4] = a20; acc[5] = a21;
    return;
  } else if (__builtin_constant_p(K) && K < 4096) {   /* K < 4: the tail in C below */
  } else {
#define BT_MM3X2_IN : [K] "r"(K)
    if (K4) {   /* 32 values a pass, the first pass entered by TBH at the group (K / 4) % 8 from its end */
      const int16_t *const end = c + 3 * K4;
      __asm__ volatile("ubfx %[wa], %[K], #2, #3\n\t"
                       "tbh [pc, %[wa], lsl #1]\n"
                       "0:\n\t"
                       ".hword (1f - 0b) / 2, (7f - 0b) / 2, (6f - 0b) / 2, (5f - 0b) / 2\n\t"
                       ".hword (4f - 0b) / 2, (3f - 0b) / 2, (2f - 0b) / 2, (8f - 0b) / 2\n"
                       "1:\n\t" BT_MM3X2_STEP_R "8:\n\t" BT_MM3X2_STEP_R "2:\n\t" BT_MM3X2_STEP_R
                       "3:\n\t" BT_MM3X2_STEP_R "4:\n\t" BT_MM3X2_STEP_R "5:\n\t" BT_MM3X2_STEP_R
                       "6:\n\t" BT_MM3X2_STEP_R "7:\n\t" BT_MM3X2_STEP_R
                       "ldr %[wa], %[end]\n\tcmp %[c], %[wa]\n\tbne 1b\n\t"
                       BT_MM3X2_OUTPUTS BT_MM3X2_IN, [end] "m"(end) : "cc", "memory");
    }
#undef BT_MM3X2_IN
  }
#undef BT_MM3X2_OUTPUTS0
#undef BT_MM3X2_OUTPUTS
#else
  for (const int16_t *const end = c + 3 * K4; c != end; c += 12, f += 4) {
    const uint32_t wa = bt_ld4(f), wb = bt_ld4(f + K);
    const int32_t al = bt_sxtb16(wa), ah = bt_sxtb16_ror8(wa), bl = bt_sxtb16(wb), bh = bt_sxtb16_ror8(wb);
    int32_t x;
    __builtin_memcpy(&x, c, 4); a00 = bt_smlad(al, x, a00); a01 = bt_smlad(bl, x, a01);
    __builtin_memcpy(&x, c + 6, 4); a00 = bt_smlad(ah, x, a00); a01 = bt_smlad(bh, x, a01);
    __builtin_memcpy(&x, c + 2, 4); a10 = bt_smlad(al, x, a10); a11 = bt_smlad(bl, x, a11);
    __builtin_memcpy(&x, c + 8, 4); a10 = bt_smlad(ah, x, a10); a11 = bt_smlad(bh, x, a11);
    __builtin_memcpy(&x, c + 4, 4); a20 = bt_smlad(al, x, a20); a21 = bt_smlad(bl, x, a21);
    __builtin_memcpy(&x, c + 10, 4); a20 = bt_smlad(ah, x, a20); a21 = bt_smlad(bh, x, a21);
  }
#endif
  if (K & 3) BT_MM3X2_CTAIL();
#undef BT_MM3X2_CTAIL
  acc[0] = a00; acc[1] = a01; acc[2] = a10; acc[3] = a11; acc[4] = a20; acc[5] = a21;
}

/* One step of bt_mv1x4's asm loop: 4 values of the column times 4 weights of each of the four rows. */
#define BT_MV1X4_STEP                           \
  "ldrd %[x], %[y], [%[c]], #8\n\t"             \
  "ldr %[w], [%[f], %[n]]\n\t"                  \
  "sxtb16 %[t], %[w]\n\t"                       \
  "smlad %[a1], %[t], %[x], %[a1]\n\t"          \
  "sxtb16 %[t], %[w], ror #8\n\t"               \
  "smlad %[a1], %[t], %[y], %[a1]\n\t"          \
  "ldr %[w], [%[f]], #4\n\t"                    \
  "sxtb16 %[t], %[w]\n\t"                       \
  "smlad %[a0], %[t], %[x], %[a0]\n\t"          \
  "sxtb16 %[t], %[w], ror #8\n\t"               \
  "smlad %[a0], %[t], %[y], %[a0]\n\t"          \
  "ldr %[w], [%[f2], %[n]]\n\t"                 \
  "sxtb16 %[t], %[w]\n\t"                       \
  "smlad %[a3], %[t], %[x], %[a3]\n\t"          \
  "sxtb16 %[t], %[w], ror #8\n\t"               \
  "smlad %[a3], %[t], %[y], %[a3]\n\t"          \
  "ldr %[w], [%[f2]], #4\n\t"                   \
  "sxtb16 %[t], %[w]\n\t"                       \
  "smlad %[a2], %[t], %[x], %[a2]\n\t"          \
  "sxtb16 %[t], %[w], ror #8\n\t"               \
  "smlad %[a2], %[t], %[y], %[a2]\n\t"

/* acc[r] = column c . filter row f0 + r*n for r = 0..3 (fully connected: one widened input vector,
 * four weight rows n bytes apart). The asm loop takes 8 values a pass (42 + 3 instructions per 32
 * MACs, the column's two words by one LDRD; the end pointer stays in memory: 12 registers fit every optimisation level), an odd 4 values
 * one more step, the n % 4 tail runs in C. */
static inline void bt_mv1x4(const int16_t *c, const int8_t *f0, int32_t n, int32_t *acc) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  const int32_t n4 = n & ~3;
  const int8_t *f = f0, *f2 = f0 + 2 * n;
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)
  const int32_t n8 = n & ~7;
  uint32_t x, y, w, t;
#define BT_MV1X4_OUTPUTS                                                                                   \
  : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [c] "+r"(c), [f] "+r"(f), [f2] "+r"(f2), \
    [x] "=&r"(x), [y] "=&r"(y), [w] "=&r"(w), [t] "=&r"(t)
  if (n8) {
    const int16_t *const end = c + n8;
    __asm__ volatile("1:\n\t" BT_MV1X4_STEP BT_MV1X4_STEP "ldr %[t], %[end]\n\tcmp %[c], %[t]\n\tbne 1b\n\t"
                     BT_MV1X4_OUTPUTS : [n] "r"(n), [end] "m"(end) : "cc", "memory");
  }
  if (n4 != n8) __asm__ volatile(BT_MV1X4_STEP BT_MV1X4_OUTPUTS : [n] "r"(n) : "cc", "memory");
#undef BT_MV1X4_OUTPUTS
#else
  const int16_t *const end = c + n4;
  for (; c != end; c += 4, f += 4, f2 += 4) {
    int32_t x, y;
    __builtin_memcpy(&x, c, 4);
    __builtin_memcpy(&y, c + 2, 4);
    const uint32_t w0 = bt_ld4(f), w1 = bt_ld4(f + n), w2 = bt_ld4(f2), w3 = bt_ld4(f2 + n);
    a0 = bt_smlad(bt_sxtb16_ror8(w0), y, bt_smlad(bt_sxtb16(w0), x, a0));
    a1 = bt_smlad(bt_sxtb16_ror8(w1), y, bt_smlad(bt_sxtb16(w1), x, a1));
    a2 = bt_smlad(bt_sxtb16_ror8(w2), y, bt_smlad(bt_sxtb16(w2), x, a2));
    a3 = bt_smlad(bt_sxtb16_ror8(w3), y, bt_smlad(bt_sxtb16(w3), x, a3));
  }
#endif
  for (int32_t k = n4; k < n; k++, c++, f++, f2++) {
    a0 += f[0] * c[0]; a1 += f[n] * c[0]; a2 += f2[0] * c[0]; a3 += f2[n] * c[0];
  }
  acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
}

/* bt_rq2, bt_rq2_ok, bt_rq2_p2, bt_rq2_e1: requant.h (shared with the riscv set). */

#endif
