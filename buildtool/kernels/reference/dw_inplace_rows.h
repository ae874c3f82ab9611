/* dw_inplace_rows.h -- in-place depthwise by rows for the optimised sets: the output rows
 * computed by the including set's bt_depthwise_s8 into a ring of rows in scratch, as many rows a call
 * as the ring has free slots in a row for (a set's fast paths take several rows at once), and each
 * row written back (its channel bytes only; a dense row by words) once no later row reads the input
 * rows it covers. Include it after the set's bt_depthwise_s8: it also defines that set's
 * bt_depthwise_s8_inplace (below), which takes this path when bt_dw_rows_pending(p) <= the rows
 * scratch holds. A call of several rows leaves the ring in the states rows one at a time would: rows
 * are written back only when the ring is full or every row is computed, either way. */
#ifndef BT_DW_INPLACE_ROWS_H
#define BT_DW_INPLACE_ROWS_H
#include "bt_kernels.h"
#include "bt_copy.h"

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
    if (next < p->out.h && next - done < ring) {   /* as many rows as the ring has free slots in a row for */
      const int32_t slot = next % ring;
      int32_t k = ring - (next - done);
      if (k > ring - slot) k = ring - slot;
      if (k > p->out.h - next) k = p->out.h - next;
      bt_depthwise_s8(dp, buf, 0, scratch + slot * row, next, next + k);
      next += k;
      continue;
    }
    for (; done < next && bt_dw_row_free(p, done, next); done++) {
      const int8_t *src = scratch + (done % ring) * row;
      int8_t *dst = buf + done * row;
      if (ps == c_n) {   /* dense pixels: the whole row, by words when aligned (bt_copy_bytes) */
        bt_copy_bytes(dst, src, row);
        continue;
      }
      for (int32_t i = 0; i < row; i += ps)
        for (int32_t c = 0; c < c_n; c++) dst[i + c] = src[i + c];
    }
  }
}

/* bt_depthwise_s8_inplace for a set that includes this file (after its own bt_depthwise_s8): by rows
 * when scratch (in.h * in.w bytes) holds the rows that must wait; else per channel, the input plane
 * copied to scratch, then the set's bt_depthwise_s8 on a one-channel view (dense plane in, channel c
 * of buf out, the channel's taps copied into a dense filter). Depth multipliers above 1 and filters
 * of more than 64 taps keep the reference code. */
void bt_depthwise_s8_inplace(const bt_depthwise_params *dp, int8_t *buf, int8_t *scratch) {
  const bt_conv_params *p = &dp->conv;
  const int32_t taps = p->kh * p->kw, n = p->in.h * p->in.w, ps = p->in.pixel_stride, c_n = p->out.c;
  if (dp->depth_multiplier != 1 || taps > 64) {
    bt_ref_depthwise_inplace_s8(dp, buf, scratch);
    return;
  }
  const int32_t ring = n / (p->out.w * p->out.pixel_stride);
  if (ring >= 1 && bt_dw_rows_pending(p) <= ring) {
    bt_dw_inplace_rows(dp, buf, scratch, ring);
    return;
  }
  int8_t f[64];
  bt_depthwise_params v;   /* set field by field: a struct copy may become a memcpy call (no libc here) */
  bt_conv_params *q = &v.conv;
  q->in.h = p->in.h; q->in.w = p->in.w; q->in.c = 1; q->in.pixel_stride = 1;
  q->out.h = p->out.h; q->out.w = p->out.w; q->out.c = 1; q->out.pixel_stride = p->out.pixel_stride;
  q->kh = p->kh; q->kw = p->kw; q->stride_h = p->stride_h; q->stride_w = p->stride_w;
  q->dil_h = p->dil_h; q->dil_w = p->dil_w; q->pad_top = p->pad_top; q->pad_left = p->pad_left;
  q->input_offset = p->input_offset; q->output_offset = p->output_offset;
  q->act_min = p->act_min; q->act_max = p->act_max;
  q->filter = f;
  v.depth_multiplier = 1;
  for (int32_t c = 0; c < c_n; c++) {
    const int8_t *src = buf + c;
    for (int32_t i = 0; i < n; i++, src += ps) scratch[i] = *src;
    for (int32_t t = 0; t < taps; t++) f[t] = p->filter[t * c_n + c];
    q->bias = p->bias ? p->bias + c : 0;
    q->multiplier = p->multiplier + c;
    q->shift = p->shift + c;
    bt_depthwise_s8(&v, scratch, 0, buf + c, 0, p->out.h);
  }
}
#endif
