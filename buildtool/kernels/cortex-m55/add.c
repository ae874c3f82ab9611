/* ADD and SUB for Cortex-M55 Helium (MVE): TFLM's int8 ADD/SUB (reference add.c's add_one), byte for byte.
 *
 * A dense call (both inputs and the output one run, no broadcast) runs four elements per vector, one int32
 * lane each, in a loop whose last iteration is tail-predicated (VCTP.32: zeroing loads, predicated store):
 * VLDRB.S32 of four bytes of each input, + its offset, VSHL by left_shift, then each input's
 * MultiplyByQuantizedMultiplierSmallerThanOneExp as mve.h's requantisation (VQRDMULH, the negative-tie
 * fix-up and VRSHL by the shift), the two summed (or subtracted), the output's the same way, + output
 * offset, clamp and VSTRB.32; with TFLite's left_shift 20 that loop is add_run20, in registers (DLSTP.32/
 * LETP). Anything broadcast, shifts outside -31..0, and int16 take reference/add_dense.h / add.c (scalar). */
#include "bt_kernels.h"
#include "requant.h"
#include "mve.h"

#define BT_ADD_S8_DENSE
#define bt_add_s8 bt_dense_add_s8
#define bt_sub_s8 bt_dense_sub_s8
#include "../reference/add_ref.h"
#undef bt_add_s8
#undef bt_sub_s8

/* MultiplyByQuantizedMultiplierSmallerThanOneExp lane by lane (shift <= 0): mve_requant without the left
 * shift, the offset and the clamp. */
MVE_INLINE int32x4_t mve_mbqm(int32x4_t x, mve_rq r) {
  x = vqrdmulhq_s32(x, r.mult);
  x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, r.right), 31));
  return vrshlq_s32(x, r.right);
}

static void add_mve(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *o, int32_t n, const int sub) {
  const mve_rq r1 = mve_rq_dup(p->input1_multiplier, p->input1_shift);
  const mve_rq r2 = mve_rq_dup(p->input2_multiplier, p->input2_shift);
  const mve_rq ro = mve_rq_dup(p->output_multiplier, p->output_shift);
  const int32x4_t ls = vdupq_n_s32(p->left_shift);
  const int32_t o1 = p->input1_offset, o2 = p->input2_offset, zp = p->output_offset;
  const int32_t lo = p->act_min, hi = p->act_max;
  for (; n > 0; n -= 4, a += 4, b += 4, o += 4) {
    const mve_pred16_t pr = vctp32q((uint32_t)n);
    const int32x4_t x1 = mve_mbqm(vshlq_s32(vaddq_n_s32(vldrbq_z_s32(a, pr), o1), ls), r1);
    const int32x4_t x2 = mve_mbqm(vshlq_s32(vaddq_n_s32(vldrbq_z_s32(b, pr), o2), ls), r2);
    int32x4_t v = mve_mbqm(sub ? vsubq_s32(x1, x2) : vaddq_s32(x1, x2), ro);
    v = vminq_s32(vmaxq_s32(vaddq_n_s32(v, zp), vdupq_n_s32(lo)), vdupq_n_s32(hi));
    vstrbq_p_s32(o, v, pr);
  }
}

/* The same for TFLite's left_shift 20, in registers: one DLSTP.32/LETP loop whose last iteration is
 * tail-predicated (the widening loads and the narrowing store of its inactive lanes do nothing), the two
 * inputs' multipliers and shifts held in q4-q7, VSHL #20 as an immediate: 31 instructions per four
 * elements. */
typedef struct {
  int32x4_t mo, ro, lo, hi;      /* 0 .. 48: output multiplier, its shift (<= 0), clamp */
  int32x4_t m1, r1, m2, r2;      /* 64 .. 112 */
} add_job;

#define ADD_RUN(NAME, OP)                                                                                     \
  static __attribute__((noinline)) void NAME(const int8_t *a, const int8_t *b, int8_t *o, int32_t n,          \
                                             int32_t o1, int32_t o2, int32_t zp, const add_job *j) {          \
    __asm__ volatile(                                                                                         \
        "vldrw.32 q4, [%[j], #64]\n"                                                                          \
        "vldrw.32 q5, [%[j], #80]\n"                                                                          \
        "vldrw.32 q6, [%[j], #96]\n"                                                                          \
        "vldrw.32 q7, [%[j], #112]\n"                                                                         \
        "dlstp.32 lr, %[n]\n"                                                                                 \
        "1:\n"                                                                                                \
        "vldrb.s32 q0, [%[a]], #4\n"                                                                          \
        "vldrb.s32 q1, [%[b]], #4\n"                                                                          \
        "vadd.i32 q0, q0, %[o1]\n"                                                                            \
        "vadd.i32 q1, q1, %[o2]\n"                                                                            \
        "vshl.s32 q0, q0, #20\n"                                                                              \
        "vshl.s32 q1, q1, #20\n"                                                                              \
        "vqrdmulh.s32 q0, q0, q4\n"                                                                           \
        "vand q2, q0, q5\n"                                                                                   \
        "vshr.s32 q2, q2, #31\n"                                                                              \
        "vqadd.s32 q0, q0, q2\n"                                                                              \
        "vrshl.s32 q0, q0, q5\n"                                                                              \
        "vqrdmulh.s32 q1, q1, q6\n"                                                                           \
        "vand q2, q1, q7\n"                                                                                   \
        "vshr.s32 q2, q2, #31\n"                                                                              \
        "vqadd.s32 q1, q1, q2\n"                                                                              \
        "vrshl.s32 q1, q1, q7\n"                                                                              \
        OP " q0, q0, q1\n"                                                                                    \
        "vldrw.32 q1, [%[j]]\n"                                                                               \
        "vqrdmulh.s32 q0, q0, q1\n"                                                                           \
        "vldrw.32 q1, [%[j], #16]\n"                                                                          \
        "vand q2, q0, q1\n"                                                                                   \
        "vshr.s32 q2, q2, #31\n"                                                                              \
        "vqadd.s32 q0, q0, q2\n"                                                                              \
        "vrshl.s32 q0, q0, q1\n"                                                                              \
        "vadd.i32 q0, q0, %[zp]\n"                                                                            \
        "vldrw.32 q1, [%[j], #32]\n"                                                                          \
        "vmax.s32 q0, q0, q1\n"                                                                               \
        "vldrw.32 q1, [%[j], #48]\n"                                                                          \
        "vmin.s32 q0, q0, q1\n"                                                                               \
        "vstrb.32 q0, [%[o]], #4\n"                                                                           \
        "letp lr, 1b\n"                                                                                       \
        : [a] "+l"(a), [b] "+l"(b), [o] "+l"(o)                                                               \
        : [n] "r"(n), [o1] "r"(o1), [o2] "r"(o2), [zp] "r"(zp), [j] "r"(j)                                    \
        : "memory", "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12",    \
          "d13", "d14", "d15");                                                                               \
  }

ADD_RUN(add_run20, "vadd.i32")
ADD_RUN(sub_run20, "vsub.i32")

static void add_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out, const int sub) {
  const bt_bcast4 *q = &p->b;
  const int32_t s1 = p->input1_shift, s2 = p->input2_shift, so = p->output_shift;
  if (!ad_one_run(q) || p->left_shift < 0 || p->left_shift > 30 || s1 > 0 || s1 < -31 || s2 > 0 || s2 < -31 ||
      so > 0 || so < -31) {
    (sub ? bt_dense_sub_s8 : bt_dense_add_s8)(p, a, b, out);
    return;
  }
  const int32_t n = q->dims[0] * q->dims[1] * q->dims[2] * q->dims[3];
  if (p->left_shift == 20 && n > 0) {
    add_job j __attribute__((aligned(16)));
    j.mo = vdupq_n_s32(p->output_multiplier); j.ro = vdupq_n_s32(so);
    j.lo = vdupq_n_s32(p->act_min); j.hi = vdupq_n_s32(p->act_max);
    j.m1 = vdupq_n_s32(p->input1_multiplier); j.r1 = vdupq_n_s32(s1);
    j.m2 = vdupq_n_s32(p->input2_multiplier); j.r2 = vdupq_n_s32(s2);
    (sub ? sub_run20 : add_run20)(a, b, out, n, p->input1_offset, p->input2_offset, p->output_offset, &j);
    return;
  }
  add_mve(p, a, b, out, n, sub);
}

void bt_add_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) { add_s8(p, a, b, out, 0); }
void bt_sub_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) { add_s8(p, a, b, out, 1); }
