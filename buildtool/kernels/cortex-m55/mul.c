/* MUL int8 for Cortex-M55 Helium (MVE): TFLM reference_integer_ops::Mul, byte for byte. A dense call (both
 * inputs and the output one run, no broadcast) runs four elements per vector in a loop whose last iteration
 * is tail-predicated (VCTP.32: zeroing VLDRB.S32 loads, predicated VSTRB.32): each input + its offset,
 * VMUL.I32, MultiplyByQuantizedMultiplier as mve.h's requantisation (VSHL by max(shift, 0), VQRDMULH, the
 * negative-tie fix-up, VRSHL by min(shift, 0)), + output offset, clamp. Broadcast calls and int16 take the
 * reference code. */
#include "bt_kernels.h"
#include "requant.h"
#include "mve.h"

#define bt_mul_s8 bt_ref_mul_s8
#include "../reference/mul_ref.h"
#undef bt_mul_s8

/* 1 when the three operands are one dense tensor of q->dims (no broadcast, no stride gaps). */
static int mul_one_run(const bt_bcast4 *q) {
  int32_t s = 1;
  for (int k = 3; k >= 0; k--) {
    if (q->dims[k] > 1 && (q->a_stride[k] != s || q->b_stride[k] != s || q->out_stride[k] != s)) return 0;
    s *= q->dims[k];
  }
  return 1;
}

void bt_mul_s8(const bt_mul_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  const bt_bcast4 *q = &p->b;
  if (!mul_one_run(q)) {
    bt_ref_mul_s8(p, a, b, out);
    return;
  }
  int32_t n = q->dims[0] * q->dims[1] * q->dims[2] * q->dims[3];
  const mve_rq rq = mve_rq_dup(p->output_multiplier, p->output_shift);
  const int32_t o1 = p->input1_offset, o2 = p->input2_offset, zp = p->output_offset;
  const int32_t lo = p->act_min, hi = p->act_max;
  for (; n > 0; n -= 4, a += 4, b += 4, out += 4) {
    const mve_pred16_t pr = vctp32q((uint32_t)n);
    const int32x4_t x = vmulq_s32(vaddq_n_s32(vldrbq_z_s32(a, pr), o1), vaddq_n_s32(vldrbq_z_s32(b, pr), o2));
    vstrbq_p_s32(out, mve_requant(x, rq, zp, lo, hi), pr);
  }
}
