/* dw_inplace_rows.h -- in-place depthwise row by row for the optimised sets: each output row
 * computed by the including set's bt_depthwise_s8 into a ring of rows in scratch, and written back
 * (its channel bytes only) once no later row reads the input rows it covers. Include it after the
 * set's bt_depthwise_s8; use it when bt_dw_rows_pending(p) <= the rows scratch holds. */
#ifndef BT_DW_INPLACE_ROWS_H
#define BT_DW_INPLACE_ROWS_H
#include "bt_kernels.h"

/* Output row y of an in-place depthwise may be written over its input once no row still to compute
 * reads the input rows it overlaps: row `next` is the first still to compute. */
static int bt_dw_row_free(const bt_conv_params *p, int32_t y, int32_t next) {
  const int32_t last_in = (int32_t)(((y + 1) * p->out.w - 1) / p->in.w);   /* last input row it overlaps */
  return next >= p->out.h || next * p->stride_h - p->pad_top > last_in;
}

/* Rows held at once (computed, not yet written back), at most, when every row is written back as
 * soon as it may: the ring bt_dw_inplace_rows needs. */
static int32_t bt_dw_rows_pending(const bt_conv_params *p) {
  int32_t most = 0;
  for (int32_t next = 1, done = 0; next <= p->out.h; next++) {   /* rows [0, next) computed */
    if (next - done > most) most = next - done;
    while (done < next && bt_dw_row_free(p, done, next)) done++;
  }
  return most;
}

/* In place by rows, with a ring of `ring` output rows in scratch. */
static void bt_dw_inplace_rows(const bt_depthwise_params *dp, int8_t *buf, int8_t *scratch, int32_t ring) {
  const bt_conv_params *p = &dp->conv;
  const int32_t ps = p->out.pixel_stride, row = p->out.w * ps, c_n = p->out.c;
  int32_t done = 0;
  for (int32_t next = 0; next < p->out.h || done < next;) {
    if (next < p->out.h && next - done < ring) {
      bt_depthwise_s8(dp, buf, 0, scratch + (next % ring) * row, next, next + 1);
      next++;
      continue;
    }
    for (; done < next && bt_dw_row_free(p, done, next); done++) {
      const int8_t *src = scratch + (done % ring) * row;
      int8_t *dst = buf + done * row;
      for (int32_t i = 0; i < row; i += ps)
        for (int32_t c = 0; c < c_n; c++) dst[i + c] = src[i + c];
    }
  }
}
#endif
