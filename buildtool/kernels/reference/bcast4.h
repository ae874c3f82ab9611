/* bcast4.h -- the broadcast walk of the element-wise pairs over a bt_bcast4 (dims and the strides of a, b and
   out, innermost last): BT_BCAST4_BODY(TA, TB, TO, EXPR) sets po[] = (TO)(EXPR) with x = pa[], y = pb[], for a
   function whose locals are q (the bt_bcast4), a, b and out. */
#ifndef BT_BCAST4_H
#define BT_BCAST4_H

#define BT_BCAST4_BODY(TA, TB, TO, EXPR) \
  for (int32_t i0 = 0; i0 < q->dims[0]; i0++) \
    for (int32_t i1 = 0; i1 < q->dims[1]; i1++) \
      for (int32_t i2 = 0; i2 < q->dims[2]; i2++) { \
        const TA *pa = a + i0 * q->a_stride[0] + i1 * q->a_stride[1] + i2 * q->a_stride[2]; \
        const TB *pb = b + i0 * q->b_stride[0] + i1 * q->b_stride[1] + i2 * q->b_stride[2]; \
        TO *po = out + i0 * q->out_stride[0] + i1 * q->out_stride[1] + i2 * q->out_stride[2]; \
        for (int32_t i3 = 0; i3 < q->dims[3]; i3++) { \
          const TA x = pa[i3 * q->a_stride[3]]; \
          const TB y = pb[i3 * q->b_stride[3]]; \
          po[i3 * q->out_stride[3]] = (TO)(EXPR); \
        } \
      }

#endif
