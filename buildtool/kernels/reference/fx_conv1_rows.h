/* fx_conv1_rows.h -- conv1_rows for a kernel set whose one-channel conv runs row segments through its
   own conv1_row(p, st, s, orow, y, x0, x1, interior) over state FX_CONV1 (fields xi0, xi1: the
   interior columns): border rows whole, interior rows as left border, interior, right border.
   Included by the host, riscv and xcore sets' fused.c after their conv1_row. */
#ifndef FX_CONV1
#error "define FX_CONV1 (the set's one-channel conv state type) before including fx_conv1_rows.h"
#endif

/* Output rows [y0, y1) of a one-output-channel conv into d. */
static void conv1_rows(const bt_conv_params *p, const FX_CONV1 *st, const box_src *s, const box_dst *d, int32_t y0,
                       int32_t y1) {
  int32_t ya, yb;
  box_inside_rows(p, y0, y1, &ya, &yb);
  for (int32_t y = y0; y < y1; y++) {
    int8_t *orow = box_orow(d, y);
    if (y < ya || y >= yb) { conv1_row(p, st, s, orow, y, 0, p->out.w, 0); continue; }
    conv1_row(p, st, s, orow, y, 0, st->xi0, 0);
    conv1_row(p, st, s, orow, y, st->xi0, st->xi1, 1);
    conv1_row(p, st, s, orow, y, st->xi1 > st->xi0 ? st->xi1 : st->xi0, p->out.w, 0);
  }
}
