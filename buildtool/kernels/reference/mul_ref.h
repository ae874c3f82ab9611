/* MUL int8 and int16 with broadcasting and strided operands, TFLM reference_integer_ops::Mul arithmetic. */
#include "bt_kernels.h"
#include "requant.h"

/* wide: int16 elements (strides count elements either way) */
BT_INLINE void mul(const bt_mul_params *p, const void *a, const void *b, void *out, int wide) {
  const bt_bcast4 *q = &p->b;
  for (int32_t i0 = 0; i0 < q->dims[0]; i0++)
    for (int32_t i1 = 0; i1 < q->dims[1]; i1++)
      for (int32_t i2 = 0; i2 < q->dims[2]; i2++) {
        const int32_t oa = i0 * q->a_stride[0] + i1 * q->a_stride[1] + i2 * q->a_stride[2];
        const int32_t ob = i0 * q->b_stride[0] + i1 * q->b_stride[1] + i2 * q->b_stride[2];
        const int32_t oo = i0 * q->out_stride[0] + i1 * q->out_stride[1] + i2 * q->out_stride[2];
        for (int32_t i3 = 0; i3 < q->dims[3]; i3++) {
          const int32_t ka = oa + i3 * q->a_stride[3], kb = ob + i3 * q->b_stride[3];
          const int32_t va = wide ? ((const int16_t *)a)[ka] : ((const int8_t *)a)[ka];
          const int32_t vb = wide ? ((const int16_t *)b)[kb] : ((const int8_t *)b)[kb];
          const int32_t x = (va + p->input1_offset) * (vb + p->input2_offset);
          const int32_t r = bt_clamp(bt_mbqm(x, p->output_multiplier, p->output_shift) + p->output_offset,
                                     p->act_min, p->act_max);
          if (wide) ((int16_t *)out)[oo + i3 * q->out_stride[3]] = (int16_t)r;
          else ((int8_t *)out)[oo + i3 * q->out_stride[3]] = (int8_t)r;
        }
      }
}

void bt_mul_s8(const bt_mul_params *p, const int8_t *a, const int8_t *b, int8_t *out) { mul(p, a, b, out, 0); }
void bt_mul_s16(const bt_mul_params *p, const int16_t *a, const int16_t *b, int16_t *out) { mul(p, a, b, out, 1); }
