/* ADD int8 with broadcasting and strided operands, TFLM reference_integer_ops::Add arithmetic. */
#include "bt_kernels.h"
#include "requant.h"

BT_INLINE int8_t add_one(const bt_add_params *p, int8_t a, int8_t b) {
  const int32_t sa = ((int32_t)a + p->input1_offset) * (1 << p->left_shift);
  const int32_t sb = ((int32_t)b + p->input2_offset) * (1 << p->left_shift);
  const int32_t ra = bt_mbqm_lt1(sa, p->input1_multiplier, p->input1_shift);
  const int32_t rb = bt_mbqm_lt1(sb, p->input2_multiplier, p->input2_shift);
  const int32_t r = bt_mbqm_lt1(ra + rb, p->output_multiplier, p->output_shift) + p->output_offset;
  return (int8_t)bt_clamp(r, p->act_min, p->act_max);
}

void bt_add_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  const bt_bcast4 *q = &p->b;
  for (int32_t i0 = 0; i0 < q->dims[0]; i0++)
    for (int32_t i1 = 0; i1 < q->dims[1]; i1++)
      for (int32_t i2 = 0; i2 < q->dims[2]; i2++) {
        const int8_t *pa = a + i0 * q->a_stride[0] + i1 * q->a_stride[1] + i2 * q->a_stride[2];
        const int8_t *pb = b + i0 * q->b_stride[0] + i1 * q->b_stride[1] + i2 * q->b_stride[2];
        int8_t *po = out + i0 * q->out_stride[0] + i1 * q->out_stride[1] + i2 * q->out_stride[2];
        for (int32_t i3 = 0; i3 < q->dims[3]; i3++)
          po[i3 * q->out_stride[3]] = add_one(p, pa[i3 * q->a_stride[3]], pb[i3 * q->b_stride[3]]);
      }
}
