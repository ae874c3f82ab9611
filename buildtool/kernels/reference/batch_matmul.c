/* BATCH_MATMUL on int8 and int16, TFLM reference_ops::BatchMatMul (see bt_kernels.h). */
#include "bt_kernels.h"
#include "requant.h"

#define BMM_LOOP(T, ACC, REQ)                                                                               \
  int32_t o = 0;                                                                                            \
  for (int32_t b0 = 0; b0 < p->batch[0]; b0++)                                                              \
    for (int32_t b1 = 0; b1 < p->batch[1]; b1++)                                                            \
      for (int32_t b2 = 0; b2 < p->batch[2]; b2++) {                                                        \
        const T *l = lhs + b0 * p->lhs_batch_stride[0] + b1 * p->lhs_batch_stride[1] +                       \
                     b2 * p->lhs_batch_stride[2];                                                           \
        const T *r = rhs + b0 * p->rhs_batch_stride[0] + b1 * p->rhs_batch_stride[1] +                       \
                     b2 * p->rhs_batch_stride[2];                                                           \
        for (int32_t i = 0; i < p->rows; i++)                                                               \
          for (int32_t j = 0; j < p->cols; j++) {                                                           \
            ACC acc = 0;                                                                                    \
            for (int32_t k = 0; k < p->depth; k++)                                                          \
              acc += (ACC)(l[i * p->lhs_row_stride + k * p->lhs_depth_stride] + p->lhs_offset) *            \
                     (ACC)(r[k * p->rhs_depth_stride + j * p->rhs_col_stride] + p->rhs_offset);             \
            out[o++] = (T)bt_clamp(REQ(acc, p->output_multiplier, p->output_shift) + p->output_offset,      \
                                   p->act_min, p->act_max);                                                 \
          }                                                                                                 \
      }

void bt_batch_matmul_s8(const bt_batch_matmul_params *p, const int8_t *lhs, const int8_t *rhs, int8_t *out) {
  BMM_LOOP(int8_t, int32_t, bt_mbqm)
}

void bt_batch_matmul_s16(const bt_batch_matmul_params *p, const int16_t *lhs, const int16_t *rhs, int16_t *out) {
  BMM_LOOP(int16_t, int64_t, bt_mbqm64)
}

#undef BMM_LOOP
