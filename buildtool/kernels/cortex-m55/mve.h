/* mve.h -- Helium (MVE) building blocks of the cortex-m55 kernel set (arm_mve.h intrinsics).
 *
 * Dot products: int8 x int8 over 16 lanes, summed across the vector into a scalar accumulator
 * (VMLADAVA.S8, 16 MACs per instruction); a run of n bytes is n/16 whole vectors and one tail vector
 * whose lanes past n are masked (VCTP.8 predicate, zeroing predicated loads: the masked lanes read no
 * memory and contribute 0).
 *
 * Requantisation, four outputs per vector (one int32 lane each), exactly TFLM's
 * MultiplyByQuantizedMultiplier:
 *   left shift (VSHL by max(shift, 0)),
 *   SaturatingRoundingDoublingHighMul = VQRDMULH (round(2ab / 2^32) with the half rounded up, i.e.
 *     floor((ab + 2^30) / 2^31), which equals gemmlowp's nudge-then-truncate for every product:
 *     requant.h, bt_mbqm_fast; the one overflowing case INT32_MIN * INT32_MIN saturates the same),
 *   RoundingDivideByPOT (ties away from zero) = VRSHL by min(shift, 0) (ties upwards) after adding -1
 *     to negative lanes when the shift is a right shift (VQADD of (x & shift) >> 31: a negative tie
 *     then rounds down, every other value is unchanged).
 * Then + output offset, clamp (VMAX/VMIN), and VSTRB.32 of the low byte of each lane (predicated for
 * the last 1-3 channels). */
#ifndef BT_MVE_H
#define BT_MVE_H
#include <stdint.h>
#include <arm_mve.h>
#include "bt_kernels.h"
#include "requant.h"

#if !defined(__ARM_FEATURE_MVE)
#error "the cortex-m55 kernel set needs Helium (MVE): compile with -mcpu=cortex-m55 (arm-none-eabi-gcc 10.2 or later)"
#endif

#define MVE_INLINE static inline __attribute__((always_inline))

/* acc[r] += sum_{i<n} w[r][i] * x[i] for four rows (a row may repeat another: the last 1-3 channels). */
MVE_INLINE void mve_dot4(const int8_t *x, const int8_t *const w[4], int32_t n, int32_t acc[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  const int8_t *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3];
  for (; n >= 16; n -= 16, x += 16, w0 += 16, w1 += 16, w2 += 16, w3 += 16) {
    const int8x16_t v = vldrbq_s8(x);
    a0 = vmladavaq_s8(a0, vldrbq_s8(w0), v);
    a1 = vmladavaq_s8(a1, vldrbq_s8(w1), v);
    a2 = vmladavaq_s8(a2, vldrbq_s8(w2), v);
    a3 = vmladavaq_s8(a3, vldrbq_s8(w3), v);
  }
  if (n > 0) {
    const mve_pred16_t p = vctp8q((uint32_t)n);
    const int8x16_t v = vldrbq_z_s8(x, p);
    a0 = vmladavaq_s8(a0, vldrbq_z_s8(w0, p), v);
    a1 = vmladavaq_s8(a1, vldrbq_z_s8(w1, p), v);
    a2 = vmladavaq_s8(a2, vldrbq_z_s8(w2, p), v);
    a3 = vmladavaq_s8(a3, vldrbq_z_s8(w3, p), v);
  }
  acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
}

/* mve_dot4 for four rows at a stride (w + r * ws), as one low-overhead loop with tail predication:
 * DLSTP.8 sets the loop count from n and LETP runs the last iteration with only n % 16 lanes active
 * (the loads and VMLADAVA of that iteration ignore the rest), so no separate tail code. Per 16 inputs:
 * five loads (post-incremented), four VMLADAVA.S8 and the LETP. VMLADAVA needs even accumulator
 * registers (r0, r2, r4, r6 here); the loop counter is LR. */
MVE_INLINE void mve_dot4_lob(const int8_t *x, const int8_t *w, int32_t ws, int32_t n, int32_t acc[4]) {
  register int32_t a0 __asm__("r0") = acc[0];
  register int32_t a1 __asm__("r2") = acc[1];
  register int32_t a2 __asm__("r4") = acc[2];
  register int32_t a3 __asm__("r6") = acc[3];
  const int8_t *p1, *p2, *p3;
  __asm__ volatile(
      "add %[p1], %[w], %[ws]\n"
      "add %[p2], %[p1], %[ws]\n"
      "add %[p3], %[p2], %[ws]\n"
      "dlstp.8 lr, %[n]\n"
      "1:\n"
      "vldrb.8 q0, [%[x]], #16\n"
      "vldrb.8 q1, [%[w]], #16\n"
      "vmladava.s8 %[a0], q1, q0\n"
      "vldrb.8 q2, [%[p1]], #16\n"
      "vmladava.s8 %[a1], q2, q0\n"
      "vldrb.8 q1, [%[p2]], #16\n"
      "vmladava.s8 %[a2], q1, q0\n"
      "vldrb.8 q2, [%[p3]], #16\n"
      "vmladava.s8 %[a3], q2, q0\n"
      "letp lr, 1b\n"
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [w] "+r"(w),
        [p1] "=&r"(p1), [p2] "=&r"(p2), [p3] "=&r"(p3)
      : [ws] "r"(ws), [n] "r"(n)
      : "memory", "lr", "d0", "d1", "d2", "d3", "d4", "d5");
  acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
}

/* acc[r] += sum_{i<n} w[r * ws + i] * (x[i] + io) for four rows, io in -127..128, in one loop: per 16 inputs
 * VMLADAVA.S8 of each row against the input and against a vector of io (io = 128: twice against 64), into
 * the same accumulator (the input offset's products need no register of their own). */
#define MVE_DOT4IO(NAME, TWICE)                                                                              \
  MVE_INLINE void NAME(const int8_t *x, const int8_t *w, int32_t ws, int32_t n, int8_t iv, int32_t acc[4]) {  \
    register int32_t a0 __asm__("r0") = acc[0];                                                            \
    register int32_t a1 __asm__("r2") = acc[1];                                                            \
    register int32_t a2 __asm__("r4") = acc[2];                                                            \
    register int32_t a3 __asm__("r6") = acc[3];                                                            \
    const int8_t *p1, *p2, *p3;                                                                            \
    __asm__ volatile(                                                                                      \
        "vdup.8 q3, %[iv]\n"                                                                               \
        "add %[p1], %[w], %[ws]\n"                                                                         \
        "add %[p2], %[p1], %[ws]\n"                                                                        \
        "add %[p3], %[p2], %[ws]\n"                                                                        \
        "dlstp.8 lr, %[n]\n"                                                                               \
        "1:\n"                                                                                             \
        "vldrb.8 q0, [%[x]], #16\n"                                                                        \
        "vldrb.8 q1, [%[w]], #16\n"                                                                        \
        "vmladava.s8 %[a0], q1, q0\n"                                                                      \
        "vmladava.s8 %[a0], q1, q3\n"                                                                      \
        TWICE("%[a0]", "q1")                                                                               \
        "vldrb.8 q2, [%[p1]], #16\n"                                                                       \
        "vmladava.s8 %[a1], q2, q0\n"                                                                      \
        "vmladava.s8 %[a1], q2, q3\n"                                                                      \
        TWICE("%[a1]", "q2")                                                                               \
        "vldrb.8 q1, [%[p2]], #16\n"                                                                       \
        "vmladava.s8 %[a2], q1, q0\n"                                                                      \
        "vmladava.s8 %[a2], q1, q3\n"                                                                      \
        TWICE("%[a2]", "q1")                                                                               \
        "vldrb.8 q2, [%[p3]], #16\n"                                                                       \
        "vmladava.s8 %[a3], q2, q0\n"                                                                      \
        "vmladava.s8 %[a3], q2, q3\n"                                                                      \
        TWICE("%[a3]", "q2")                                                                               \
        "letp lr, 1b\n"                                                                                    \
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [w] "+r"(w),            \
          [p1] "=&r"(p1), [p2] "=&r"(p2), [p3] "=&r"(p3)                                                   \
        : [ws] "r"(ws), [n] "r"(n), [iv] "r"((int32_t)iv)                                                  \
        : "memory", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7");                                 \
    acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;                                                    \
  }
#define MVE_IO_ONCE(A, Q)
#define MVE_IO_TWICE(A, Q) "vmladava.s8 " A ", " Q ", q3\n"
MVE_DOT4IO(mve_dot4io_lob, MVE_IO_ONCE)
MVE_DOT4IO(mve_dot4io2_lob, MVE_IO_TWICE)

/* sw[r] += sum_{i<n} w[r * ws + i] for four rows: the low-overhead tail-predicated loop of
 * mve_dot4_lob with VADDVA.S8 (four loads, four VADDVA and the LETP per 16 weights). */
MVE_INLINE void mve_sum4_lob(const int8_t *w, int32_t ws, int32_t n, int32_t sw[4]) {
  register int32_t s0 __asm__("r0") = sw[0];
  register int32_t s1 __asm__("r2") = sw[1];
  register int32_t s2 __asm__("r4") = sw[2];
  register int32_t s3 __asm__("r6") = sw[3];
  const int8_t *p1, *p2, *p3;
  __asm__ volatile(
      "add %[p1], %[w], %[ws]\n"
      "add %[p2], %[p1], %[ws]\n"
      "add %[p3], %[p2], %[ws]\n"
      "dlstp.8 lr, %[n]\n"
      "1:\n"
      "vldrb.8 q0, [%[w]], #16\n"
      "vaddva.s8 %[s0], q0\n"
      "vldrb.8 q1, [%[p1]], #16\n"
      "vaddva.s8 %[s1], q1\n"
      "vldrb.8 q0, [%[p2]], #16\n"
      "vaddva.s8 %[s2], q0\n"
      "vldrb.8 q1, [%[p3]], #16\n"
      "vaddva.s8 %[s3], q1\n"
      "letp lr, 1b\n"
      : [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3), [w] "+r"(w),
        [p1] "=&r"(p1), [p2] "=&r"(p2), [p3] "=&r"(p3)
      : [ws] "r"(ws), [n] "r"(n)
      : "memory", "lr", "d0", "d1", "d2", "d3");
  sw[0] = s0; sw[1] = s1; sw[2] = s2; sw[3] = s3;
}

/* acc[r] += sum_{i<n} w[r][i] * x[i] and sw[r] += sum_{i<n} w[r][i] (for the input offset). */
MVE_INLINE void mve_dot4_sum(const int8_t *x, const int8_t *const w[4], int32_t n, int32_t acc[4],
                             int32_t sw[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  int32_t s0 = sw[0], s1 = sw[1], s2 = sw[2], s3 = sw[3];
  const int8_t *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3];
  while (n > 0) {
    const mve_pred16_t p = vctp8q((uint32_t)n);
    const int8x16_t v = vldrbq_z_s8(x, p);
    const int8x16_t q0 = vldrbq_z_s8(w0, p), q1 = vldrbq_z_s8(w1, p);
    const int8x16_t q2 = vldrbq_z_s8(w2, p), q3 = vldrbq_z_s8(w3, p);
    a0 = vmladavaq_s8(a0, q0, v); s0 = vaddvaq_s8(s0, q0);
    a1 = vmladavaq_s8(a1, q1, v); s1 = vaddvaq_s8(s1, q1);
    a2 = vmladavaq_s8(a2, q2, v); s2 = vaddvaq_s8(s2, q2);
    a3 = vmladavaq_s8(a3, q3, v); s3 = vaddvaq_s8(s3, q3);
    n -= 16; x += 16; w0 += 16; w1 += 16; w2 += 16; w3 += 16;
  }
  acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
  sw[0] = s0; sw[1] = s1; sw[2] = s2; sw[3] = s3;
}

/* sum_{i<n} w[i] */
MVE_INLINE int32_t mve_sum(const int8_t *w, int32_t n) {
  int32_t s = 0;
  for (; n > 0; n -= 16, w += 16) s = vaddvaq_s8(s, vldrbq_z_s8(w, vctp8q((uint32_t)n)));
  return s;
}

/* Per-channel requantisation constants of four channels (lanes past `p` zero). */
typedef struct {
  int32x4_t mult, left, right;
} mve_rq;

MVE_INLINE mve_rq mve_rq_load(const int32_t *mult, const int32_t *shift, mve_pred16_t p) {
  mve_rq r;
  const int32x4_t s = vldrwq_z_s32(shift, p);
  r.mult = vldrwq_z_s32(mult, p);
  r.left = vmaxq_s32(s, vdupq_n_s32(0));
  r.right = vminq_s32(s, vdupq_n_s32(0));
  return r;
}

/* The same constants for one multiplier and shift in every lane (per-tensor quantisation). */
MVE_INLINE mve_rq mve_rq_dup(int32_t mult, int32_t shift) {
  mve_rq r;
  r.mult = vdupq_n_s32(mult);
  r.left = vdupq_n_s32(shift > 0 ? shift : 0);
  r.right = vdupq_n_s32(shift > 0 ? 0 : shift);
  return r;
}

/* MultiplyByQuantizedMultiplier lane by lane, + output offset, clamped to [lo, hi]. */
MVE_INLINE int32x4_t mve_requant(int32x4_t acc, mve_rq r, int32_t zp, int32_t lo, int32_t hi) {
  acc = vshlq_s32(acc, r.left);
  acc = vqrdmulhq_s32(acc, r.mult);
  acc = vqaddq_s32(acc, vshrq_n_s32(vandq_s32(acc, r.right), 31));
  acc = vrshlq_s32(acc, r.right);
  acc = vaddq_n_s32(acc, zp);
  return vminq_s32(vmaxq_s32(acc, vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

/* Four scalars as one vector. */
MVE_INLINE int32x4_t mve_vec4(const int32_t a[4]) {
  int32x4_t v = vdupq_n_s32(a[0]);
  v = vsetq_lane_s32(a[1], v, 1);
  v = vsetq_lane_s32(a[2], v, 2);
  return vsetq_lane_s32(a[3], v, 3);
}
#endif
