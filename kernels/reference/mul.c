/* MUL int8 with broadcasting and strided operands, TFLM reference_integer_ops::Mul arithmetic. */
#include "bt_kernels.h"
#include "requant.h"

void bt_mul_s8(const bt_mul_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  const bt_bcast4 *q = &p->b;
  for (int32_t i0 = 0; i0 < q->dims[0]; i0++)
    for (int32_t i1 = 0; i1 < q->dims[1]; i1++)
      for (int32_t i2 = 0; i2 < q->dims[2]; i2++) {
        const int8_t *pa = a + i0 * q->a_stride[0] + i1 * q->a_stride[1] + i2 * q->a_stride[2];
        const int8_t *pb = b + i0 * q->b_stride[0] + i1 * q->b_stride[1] + i2 * q->b_stride[2];
        int8_t *po = out + i0 * q->out_stride[0] + i1 * q->out_stride[1] + i2 * q->out_stride[2];
        for (int32_t i3 = 0; i3 < q->dims[3]; i3++) {
          const int32_t x = ((int32_t)pa[i3 * q->a_stride[3]] + p->input1_offset) *
                            ((int32_t)pb[i3 * q->b_stride[3]] + p->input2_offset);
          const int32_t r = bt_mbqm(x, p->output_multiplier, p->output_shift) + p->output_offset;
          po[i3 * q->out_stride[3]] = (int8_t)bt_clamp(r, p->act_min, p->act_max);
        }
      }
}
