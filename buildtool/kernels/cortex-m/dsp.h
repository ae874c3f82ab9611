/* dsp.h -- Armv7E-M / Armv8-M DSP helpers for the cortex-m kernel set (CMSIS-NN style int8 -> int16
 * pairs). With __ARM_FEATURE_DSP the ACLE intrinsics (arm_acle.h) are used; otherwise an exact C
 * model of the same instructions, so the set's logic can also be tested on the host. */
#ifndef BT_CORTEXM_DSP_H
#define BT_CORTEXM_DSP_H
#include <stdint.h>

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#define bt_sxtb16(x) __sxtb16((int32_t)(x))
#define bt_sadd16(a, b) __sadd16((a), (b))
#define bt_smlad(a, b, c) __smlad((a), (b), (c))
#define bt_smlabb(a, b, c) __smlabb((a), (b), (c))
#define bt_smlatt(a, b, c) __smlatt((a), (b), (c))
#else
static inline int32_t bt_pack16(int32_t lo, int32_t hi) { return (int32_t)(((uint32_t)(uint16_t)lo) | ((uint32_t)(uint16_t)hi << 16)); }
static inline int32_t bt_lo16(int32_t a) { return (int16_t)(uint16_t)((uint32_t)a & 0xffffu); }
static inline int32_t bt_hi16(int32_t a) { return (int16_t)(uint16_t)((uint32_t)a >> 16); }
static inline int32_t bt_sxtb16(uint32_t x) { return bt_pack16((int8_t)(x & 0xffu), (int8_t)((x >> 16) & 0xffu)); }
static inline int32_t bt_sadd16(int32_t a, int32_t b) { return bt_pack16(bt_lo16(a) + bt_lo16(b), bt_hi16(a) + bt_hi16(b)); }
static inline int32_t bt_smlad(int32_t a, int32_t b, int32_t c) {
  return (int32_t)((uint32_t)c + (uint32_t)(bt_lo16(a) * bt_lo16(b)) + (uint32_t)(bt_hi16(a) * bt_hi16(b)));
}
static inline int32_t bt_smlabb(int32_t a, int32_t b, int32_t c) { return (int32_t)((uint32_t)c + (uint32_t)(bt_lo16(a) * bt_lo16(b))); }
static inline int32_t bt_smlatt(int32_t a, int32_t b, int32_t c) { return (int32_t)((uint32_t)c + (uint32_t)(bt_hi16(a) * bt_hi16(b))); }
#endif

/* GCC 12's arm_acle.h has no __ror: this form folds into "sxtb16 rd, rm, ror #8". */
static inline uint32_t bt_ror8(uint32_t x) { return (x >> 8) | (x << 24); }
/* SXTB16 of bytes 1 and 3: "sxtb16 rd, rm, ror #8" (GCC 12 does not fold the rotate itself). */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
static inline int32_t bt_sxtb16_ror8(uint32_t x) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
#else
static inline int32_t bt_sxtb16_ror8(uint32_t x) { return bt_sxtb16(bt_ror8(x)); }
#endif
/* SMMLAR: acc + floor((x y + 2^31) / 2^32), i.e. (acc 2^32 + x y + 2^31) >> 32 (the high word). */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
static inline __attribute__((always_inline)) int32_t bt_smmlar(int32_t x, int32_t y, int32_t acc) {
  int32_t r;
  __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(x), "r"(y), "r"(acc));
  return r;
}
#else
static inline int32_t bt_smmlar(int32_t x, int32_t y, int32_t acc) {
  return (int32_t)((int64_t)(((uint64_t)(uint32_t)acc << 32) + (uint64_t)((int64_t)x * y) + 0x80000000u) >> 32);
}
#endif
/* Unaligned 32-bit load (ldr: v7-M/v8-M Mainline allow unaligned normal-memory word loads). */
static inline uint32_t bt_ld4(const int8_t *p) { uint32_t v; __builtin_memcpy(&v, p, 4); return v; }
/* v saturated to [-128, 127] (SSAT #8). */
#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
static inline int32_t bt_ssat8(int32_t v) { return __ssat(v, 8); }
#else
static inline int32_t bt_ssat8(int32_t v) { return v < -128 ? -128 : (v > 127 ? 127 : v); }
#endif
/* Both 16-bit halves set to v. */
static inline int32_t bt_dup16(int32_t v) { return (int32_t)(((uint32_t)(uint16_t)v << 16) | (uint16_t)v); }

/* acc[k] += sum_{i<n4} f0[k*fs + i] * (ip[i] + off) for k = 0..3; n4 a positive multiple of 4.
 * off2 = bt_dup16(off). The DSP version is hand-scheduled asm: 30 instructions per 16 MACs and no
 * spills (GCC's own allocation of this loop spilled pointers and accumulators to the stack). It
 * needs 12 registers (fine with a frame pointer); unoptimised (-O0) builds use the C version. */
static inline void bt_dot4x4(const int8_t *ip, const int8_t *f0, int32_t fs, int32_t n4, int32_t off2, int32_t *acc) {
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)   /* -O0 lacks the registers */
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  const int8_t *end = ip + n4;
  uint32_t xa, xb, w, t;
  __asm__ volatile(
      "1:\n\t"
      "ldr %[w], [%[ip]], #4\n\t"
      "sxtb16 %[xa], %[w]\n\t"
      "sxtb16 %[xb], %[w], ror #8\n\t"
      "sadd16 %[xa], %[xa], %[off2]\n\t"
      "sadd16 %[xb], %[xb], %[off2]\n\t"
      "ldr %[w], [%[f0], %[fs]]\n\t"            /* channel 1 */
      "sxtb16 %[t], %[w]\n\t"
      "smlad %[a1], %[t], %[xa], %[a1]\n\t"
      "sxtb16 %[t], %[w], ror #8\n\t"
      "smlad %[a1], %[t], %[xb], %[a1]\n\t"
      "add %[t], %[f0], %[fs], lsl #1\n\t"
      "ldr %[w], [%[t]]\n\t"                     /* channel 2 */
      "sxtb16 %[t], %[w]\n\t"
      "smlad %[a2], %[t], %[xa], %[a2]\n\t"
      "sxtb16 %[t], %[w], ror #8\n\t"
      "smlad %[a2], %[t], %[xb], %[a2]\n\t"
      "add %[t], %[f0], %[fs], lsl #1\n\t"
      "ldr %[w], [%[t], %[fs]]\n\t"              /* channel 3 */
      "sxtb16 %[t], %[w]\n\t"
      "smlad %[a3], %[t], %[xa], %[a3]\n\t"
      "sxtb16 %[t], %[w], ror #8\n\t"
      "smlad %[a3], %[t], %[xb], %[a3]\n\t"
      "ldr %[w], [%[f0]], #4\n\t"                /* channel 0 */
      "sxtb16 %[t], %[w]\n\t"
      "smlad %[a0], %[t], %[xa], %[a0]\n\t"
      "sxtb16 %[t], %[w], ror #8\n\t"
      "smlad %[a0], %[t], %[xb], %[a0]\n\t"
      "ldr %[t], %[end]\n\t"
      "cmp %[ip], %[t]\n\t"
      "bne 1b\n\t"
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [ip] "+r"(ip), [f0] "+r"(f0),
        [xa] "=&r"(xa), [xb] "=&r"(xb), [w] "=&r"(w), [t] "=&r"(t)
      : [fs] "r"(fs), [off2] "r"(off2), [end] "m"(end)
      : "cc", "memory");
  acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
#else
  const int8_t *f[4] = {f0, f0 + fs, f0 + 2 * fs, f0 + 3 * fs};
  for (int32_t i = 0; i < n4; i += 4) {
    const uint32_t x = bt_ld4(ip + i);
    const int32_t xa = bt_sadd16(bt_sxtb16(x), off2), xb = bt_sadd16(bt_sxtb16_ror8(x), off2);
    for (int k = 0; k < 4; k++) {
      const uint32_t w = bt_ld4(f[k] + i);
      acc[k] = bt_smlad(bt_sxtb16(w), xa, acc[k]);
      acc[k] = bt_smlad(bt_sxtb16_ror8(w), xb, acc[k]);
    }
  }
#endif
}

/* Halfword multiplies for int16 pairs (depthwise.c): c + bottom(a) * top(b) (SMLABT), c + top(a) *
 * bottom(b) (SMLATB). */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define bt_smlabt(a, b, c) __smlabt((a), (b), (c))
#define bt_smlatb(a, b, c) __smlatb((a), (b), (c))
#else
static inline int32_t bt_smlabt(int32_t a, int32_t b, int32_t c) { return (int32_t)((uint32_t)c + (uint32_t)(bt_lo16(a) * bt_hi16(b))); }
static inline int32_t bt_smlatb(int32_t a, int32_t b, int32_t c) { return (int32_t)((uint32_t)c + (uint32_t)(bt_hi16(a) * bt_lo16(b))); }
#endif
/* Halfword packs (depthwise.c): bottom(a) | bottom(b) << 16 (PKHBT), top(b) | top(a) >> 16 as the low
 * half (PKHTB with ASR #16; the C form alone becomes UXTH/AND + ORR in GCC 12). */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
static inline uint32_t bt_pkhbt16(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
static inline uint32_t bt_pkhtb16(uint32_t b, uint32_t a) {
  uint32_t r;
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(b), "r"(a));
  return r;
}
#else
static inline uint32_t bt_pkhbt16(uint32_t a, uint32_t b) { return (a & 0xffffu) | (b << 16); }
static inline uint32_t bt_pkhtb16(uint32_t b, uint32_t a) { return (b & 0xffff0000u) | (a >> 16); }
#endif
/* SXTAB16 (pooling.c): acc + SXTB16(x) and acc + SXTB16(x ROR 8): two int16 halves each, modulo 2^16. */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
static inline uint32_t bt_sxtab16(uint32_t acc, uint32_t x) {
  uint32_t r;
  __asm__("sxtab16 %0, %1, %2" : "=r"(r) : "r"(acc), "r"(x));
  return r;
}
static inline uint32_t bt_sxtab16_ror8(uint32_t acc, uint32_t x) {
  uint32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(x));
  return r;
}
#else
static inline uint32_t bt_sxtab16(uint32_t acc, uint32_t x) {
  const uint32_t lo = (acc + (uint32_t)(int32_t)(int8_t)(x & 0xffu)) & 0xffffu;
  const uint32_t hi = ((acc >> 16) + (uint32_t)(int32_t)(int8_t)((x >> 16) & 0xffu)) & 0xffffu;
  return lo | (hi << 16);
}
static inline uint32_t bt_sxtab16_ror8(uint32_t acc, uint32_t x) { return bt_sxtab16(acc, bt_ror8(x)); }
#endif
#endif
