/* rvv.h -- RISC-V Vector 1.0 building blocks (inline asm; GCC 12 has no RVV intrinsics) for the riscv
 * kernel set, compiled only with -DBT_RVV. Needs V or Zve32x (QEMU: -cpu rv32,v=true,vlen=128,...)
 * and mstatus.VS enabled by the start-up code. The code stays -march=rv32imac (multilib) and
 * enables the extensions per asm block with ".option arch". Vector registers are not known to
 * GCC 12 (it never vectorises), so values in v8..v11 survive between the asm statements of one
 * kernel invocation. Register use: v8-v11 int32 accumulators (e32,m4 = 16 lanes at VLEN=128),
 * v12-v15 / v16-v19 int16 operands (e16,m2), v0 mask, v20-v31 requantisation temporaries. */
#ifndef BT_RISCV_RVV_H
#define BT_RISCV_RVV_H
#include <stdint.h>

#define BT_RVV_BEGIN ".option push\n.option arch,+zve32x,+zicsr\n"
#define BT_RVV_END ".option pop\n"

/* Set vtype e16,m2 for min(n, 16) lanes (VLEN=128; longer VLEN still capped at 16 lanes so every
 * register group above stays within its reserved registers); returns vl. */
static inline int32_t bt_rvv_setvl16(int32_t n) {
  int32_t vl, cap = n < 16 ? n : 16;
  __asm__ volatile(BT_RVV_BEGIN "vsetvli %0, %1, e16, m2, ta, ma\n" BT_RVV_END : "=r"(vl) : "r"(cap));
  return vl;
}

/* v8..v11 (int32 accumulators) = 0 for the current vl. */
static inline void bt_rvv_acc_zero(int32_t vl) {
  __asm__ volatile(BT_RVV_BEGIN "vsetvli zero, %0, e32, m4, ta, ma\n vmv.v.i v8, 0\n vsetvli zero, %0, e16, m2, ta, ma\n"
                   BT_RVV_END ::"r"(vl) : "memory");
}

/* acc[lane] += (x[lane] + off) * w[lane] for vl contiguous int8 x and w (depthwise tap). */
static inline void bt_rvv_mac_vv(const int8_t *x, const int8_t *w, int32_t off) {
  __asm__ volatile(BT_RVV_BEGIN
                   "vle8.v v20, (%0)\n vle8.v v21, (%1)\n"
                   "vsext.vf2 v12, v20\n vadd.vx v12, v12, %2\n vsext.vf2 v16, v21\n"
                   "vwmacc.vv v8, v12, v16\n" BT_RVV_END ::"r"(x), "r"(w), "r"(off) : "memory");
}

/* acc[lane] += xs * w[lane * wstride] for vl int8 weights wstride bytes apart (conv/FC across
 * output channels); xs = input + offset (int16 range). */
static inline void bt_rvv_mac_vx_strided(const int8_t *w, int32_t wstride, int32_t xs) {
  __asm__ volatile(BT_RVV_BEGIN
                   "vlse8.v v20, (%0), %1\n vsext.vf2 v16, v20\n vwmacc.vx v8, %2, v16\n" BT_RVV_END
                   ::"r"(w), "r"(wstride), "r"(xs) : "memory");
}

/* out[lane] = clamp(MBQM(acc + bias, mult[lane], shift[lane]) + zp, lo, hi) for vl lanes, stored
 * as vl contiguous int8. Bit-exact with bt_mbqm: vsmul with vxrm=rnu computes
 * floor((a*m + 2^30) / 2^31) with the INT32_MIN*INT32_MIN saturation (= SRDHM, see requant.h),
 * then gemmlowp's RoundingDivideByPOT (ties away from zero) built from shifts and masks. */
static inline void bt_rvv_requant_store(int32_t vl, const int32_t *bias, const int32_t *mult, const int32_t *shift,
                                        int32_t zp, int32_t lo, int32_t hi, int8_t *out) {
  if (bias)
    __asm__ volatile(BT_RVV_BEGIN "vsetvli zero, %0, e32, m4, ta, ma\n vle32.v v20, (%1)\n vadd.vv v8, v8, v20\n"
                     BT_RVV_END ::"r"(vl), "r"(bias) : "memory");
  __asm__ volatile(BT_RVV_BEGIN
                   "vsetvli zero, %0, e32, m4, ta, mu\n"
                   "csrwi vxrm, 0\n"                  /* round-to-nearest-up */
                   "vle32.v v20, (%2)\n"              /* shift */
                   "vmax.vx v24, v20, zero\n"         /* left = max(shift, 0) */
                   "vsll.vv v8, v8, v24\n"
                   "vle32.v v24, (%1)\n"              /* multiplier */
                   "vsmul.vv v8, v8, v24\n"           /* SRDHM */
                   "vrsub.vx v20, v20, zero\n"
                   "vmax.vx v20, v20, zero\n"         /* right = max(-shift, 0) */
                   "vsra.vv v24, v8, v20\n"           /* q = x >> right */
                   "vmv.v.i v28, 1\n vsll.vv v28, v28, v20\n vadd.vi v28, v28, -1\n"   /* mask */
                   "vand.vv v12, v8, v28\n"           /* remainder */
                   "vsra.vi v28, v28, 1\n"            /* threshold = mask >> 1 ... */
                   "vmslt.vx v0, v24, zero\n"
                   "vadd.vi v28, v28, 1, v0.t\n"      /* ... + (q < 0) */
                   "vmslt.vv v0, v28, v12\n"
                   "vadd.vi v24, v24, 1, v0.t\n"      /* round */
                   "vadd.vx v24, v24, %3\n"
                   "vmax.vx v24, v24, %4\n vmin.vx v24, v24, %5\n"
                   "vsetvli zero, %0, e16, m2, ta, ma\n vnsra.wi v20, v24, 0\n"
                   "vsetvli zero, %0, e8, m1, ta, ma\n vnsra.wi v12, v20, 0\n"
                   "vse8.v v12, (%6)\n"
                   "vsetvli zero, %0, e16, m2, ta, ma\n" BT_RVV_END
                   ::"r"(vl), "r"(mult), "r"(shift), "r"(zp), "r"(lo), "r"(hi), "r"(out) : "memory");
}
#endif
