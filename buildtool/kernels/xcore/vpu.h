/* vpu.h -- the xcore.ai (XS3) vector unit instructions the xcore kernel set uses.
 *
 * Without __XS3A__ (host, QEMU targets): an executable C model of the XS3 VPU in 8-bit mode,
 * written from XMOS's documented semantics (XS3 architecture manual, lib_nn's VPU simulator):
 *   - vR, vD, vC: 256-bit registers; 8-bit mode has 32 int8 lanes.
 *   - 16 accumulators of 32 bits, accumulator i = vD.s16[i] (high half) : vR.u16[i] (low half).
 *   - VLMACC  a: acc[i] += vC.s8[i] * a[i] for i < 16 (element-wise).
 *   - VLMACCR a: t = acc[15] + sum_{i<32} vC.s8[i] * a[i]; accumulators rotate up one place
 *               (acc[i] <- acc[i-1], acc[0] <- acc[15]) and acc[0] = t. Sixteen VLMACCRs over rows
 *               r_0..r_15 leave row r_k's dot product in acc[15-k].
 *   - accumulator updates saturate symmetrically to +-(2^31 - 1).
 *   - VLSAT a: vR.s8[i] = sat8((acc[i] + 2^(s-1)) >> s), s = a.u16[i], i < 16, sat8 = [-127, 127]
 *              (XS3 saturates symmetrically); vR bytes 16..31 and vD cleared.
 *   - VLASHR a,s: vR.s8[i] = sat8(a[i] >> s) (no rounding); VLADD a: vR.s8[i] = sat8(vR.s8[i] + a[i]);
 *   - VSTRPV a,m: store vR byte i to a[i] where bit i of m is set. VLDC/VLDR/VLDD/VSTR/VSTD move
 *     32 bytes. Every memory operand must be word aligned (checked: bt_vpu_align_faults).
 * bt_vpu_ops counts executed VPU instructions (model only).
 *
 * With __XS3A__ (xcc for xcore.ai): the same names expand to the real instructions through inline
 * asm. UNTESTED: the XMOS toolchain cannot be installed here; the mapping follows the XS3 assembly
 * syntax (vldc rX[0], vlmaccr rX[0], ...) and lib_nn's use of VSETC (0x0200 = 8-bit mode).
 * The kernels keep the VPU state between these statements, so on hardware they rely on the compiler
 * not touching the vector unit in between (xcc never does). */
#ifndef BT_XCORE_VPU_H
#define BT_XCORE_VPU_H
#include <stdint.h>

#ifdef __XS3A__
#define VSETC_S8() __asm__ volatile("ldc r11, 0x0200\n\tvsetc r11" ::: "r11")
#define VCLRDR() __asm__ volatile("vclrdr")
#define VLDC(a) __asm__ volatile("vldc %0[0]" ::"r"(a) : "memory")
#define VLDR(a) __asm__ volatile("vldr %0[0]" ::"r"(a) : "memory")
#define VLDD(a) __asm__ volatile("vldd %0[0]" ::"r"(a) : "memory")
#define VSTR(a) __asm__ volatile("vstr %0[0]" ::"r"(a) : "memory")
#define VSTD(a) __asm__ volatile("vstd %0[0]" ::"r"(a) : "memory")
#define VLMACC(a) __asm__ volatile("vlmacc %0[0]" ::"r"(a) : "memory")
#define VLMACCR(a) __asm__ volatile("vlmaccr %0[0]" ::"r"(a) : "memory")
#define VLSAT(a) __asm__ volatile("vlsat %0[0]" ::"r"(a) : "memory")
#define VLASHR(a, s) __asm__ volatile("vlashr %0[0], %1" ::"r"(a), "r"(s) : "memory")
#define VLADD(a) __asm__ volatile("vladd %0[0]" ::"r"(a) : "memory")
#define VSTRPV(a, m) __asm__ volatile("vstrpv %0[0], %1" ::"r"(a), "r"(m) : "memory")
#define BT_VPU_COUNT() 0u
#else

typedef union {
  int8_t s8[32];
  uint8_t u8[32];
  int16_t s16[16];
  uint16_t u16[16];
  int32_t s32[8];
} bt_vreg;

typedef struct {
  bt_vreg vR, vD, vC;
} bt_vpu_state;

/* One model instance per translation unit: kernels never share VPU state across calls. */
static bt_vpu_state bt_vpu;
extern uint32_t bt_vpu_ops, bt_vpu_align_faults;   /* defined in xcore/conv.c */

static inline void bt_vpu_touch(const void *a) {
  bt_vpu_ops++;
  if ((uintptr_t)a & 3u) bt_vpu_align_faults++;
}
static inline int32_t bt_vpu_sat(int64_t v, int bits) {
  const int64_t mx = ((int64_t)1 << (bits - 1)) - 1;
  return (int32_t)(v > mx ? mx : (v < -mx ? -mx : v));
}
static inline int32_t bt_vpu_acc(int i) {
  return (int32_t)(((uint32_t)(uint16_t)bt_vpu.vD.s16[i] << 16) | bt_vpu.vR.u16[i]);
}
static inline void bt_vpu_set_acc(int i, int32_t v) {
  bt_vpu.vR.u16[i] = (uint16_t)((uint32_t)v & 0xffffu);
  bt_vpu.vD.u16[i] = (uint16_t)((uint32_t)v >> 16);
}
static inline void bt_vpu_copy(void *d, const void *s) {
  for (int i = 0; i < 32; i++) ((uint8_t *)d)[i] = ((const uint8_t *)s)[i];
}

static inline void VSETC_S8(void) { bt_vpu_ops++; }
static inline void VCLRDR(void) {
  bt_vpu_ops++;
  for (int i = 0; i < 32; i++) bt_vpu.vR.u8[i] = bt_vpu.vD.u8[i] = 0;
}
static inline void VLDC(const void *a) { bt_vpu_touch(a); bt_vpu_copy(bt_vpu.vC.u8, a); }
static inline void VLDR(const void *a) { bt_vpu_touch(a); bt_vpu_copy(bt_vpu.vR.u8, a); }
static inline void VLDD(const void *a) { bt_vpu_touch(a); bt_vpu_copy(bt_vpu.vD.u8, a); }
static inline void VSTR(void *a) { bt_vpu_touch(a); bt_vpu_copy(a, bt_vpu.vR.u8); }
static inline void VSTD(void *a) { bt_vpu_touch(a); bt_vpu_copy(a, bt_vpu.vD.u8); }
static inline void VLMACC(const void *a) {
  const int8_t *m = (const int8_t *)a;
  bt_vpu_touch(a);
  for (int i = 0; i < 16; i++) bt_vpu_set_acc(i, bt_vpu_sat((int64_t)bt_vpu_acc(i) + bt_vpu.vC.s8[i] * m[i], 32));
}
static inline void VLMACCR(const void *a) {
  const int8_t *m = (const int8_t *)a;
  bt_vpu_touch(a);
  int64_t t = bt_vpu_acc(15);
  for (int i = 0; i < 32; i++) t += bt_vpu.vC.s8[i] * m[i];
  for (int i = 15; i > 0; i--) bt_vpu_set_acc(i, bt_vpu_acc(i - 1));
  bt_vpu_set_acc(0, bt_vpu_sat(t, 32));
}
static inline void VLSAT(const void *a) {
  const uint16_t *s = (const uint16_t *)a;
  bt_vpu_touch(a);
  int8_t r[16];
  for (int i = 0; i < 16; i++) {
    int64_t v = bt_vpu_acc(i);
    const int sh = s[i] > 62 ? 62 : s[i];
    if (sh >= 32) v >>= sh;                      /* XS3: no rounding once the shift reaches 32 */
    else if (sh > 0) v = (v >> sh) + ((v >> (sh - 1)) & 1);
    r[i] = (int8_t)bt_vpu_sat(v, 8);
  }
  for (int i = 0; i < 32; i++) { bt_vpu.vR.s8[i] = i < 16 ? r[i] : 0; bt_vpu.vD.u8[i] = 0; }
}
static inline void VLASHR(const void *a, int32_t sh) {
  const int8_t *m = (const int8_t *)a;
  bt_vpu_touch(a);
  for (int i = 0; i < 32; i++) {
    int64_t v = m[i];
    if (sh >= 8) v >>= 7;
    else if (sh >= 0) v >>= sh;
    else v *= (int64_t)1 << (-sh >= 8 ? 7 : -sh);
    bt_vpu.vR.s8[i] = (int8_t)bt_vpu_sat(v, 8);
  }
}
static inline void VLADD(const void *a) {
  const int8_t *m = (const int8_t *)a;
  bt_vpu_touch(a);
  for (int i = 0; i < 32; i++) bt_vpu.vR.s8[i] = (int8_t)bt_vpu_sat((int32_t)bt_vpu.vR.s8[i] + m[i], 8);
}
static inline void VSTRPV(void *a, uint32_t mask) {
  bt_vpu_touch(a);
  for (int i = 0; i < 32; i++)
    if (mask & (1u << i)) ((int8_t *)a)[i] = bt_vpu.vR.s8[i];
}
#define BT_VPU_COUNT() bt_vpu_ops
#endif

/* The 16 accumulators as int32 (VSTR + VSTD, then scalar recombination of the halves). */
static inline void bt_vpu_read_acc(int32_t acc[16]) {
  int16_t r[16] __attribute__((aligned(4))), d[16] __attribute__((aligned(4)));
  VSTR(r);
  VSTD(d);
  for (int i = 0; i < 16; i++) acc[i] = (int32_t)(((uint32_t)(uint16_t)d[i] << 16) | (uint16_t)r[i]);
}
#endif
