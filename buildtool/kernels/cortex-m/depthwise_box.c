/* Depthwise, any layer: bt_dw_box_rq2, bt_dw_box (the 3x3 interior loop, the general pixels); a fused tile's bt_dw_pix_rq2, bt_dw_pix4_rq2 (depthwise_core.h: the helpers, the layout of the files) */
#include "depthwise_core.h"

#define BT_DW_PATH(name) \
  void name(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1)
BT_DW_PATH(bt_dw_box_rq2) { dw_box(&dp->conv, in, in_y0, out, y0, y1, 1); }
BT_DW_PATH(bt_dw_box) { dw_box(&dp->conv, in, in_y0, out, y0, y1, 0); }
/* a fused tile's calls of a pixel or two (tile_kernels.dw_path_of_calls): the general pixels alone, without the 3x3
 * interior's code (its nine weights unpacked a call buy nothing on a pixel) */
BT_DW_PATH(bt_dw_pix_rq2) {
  for (int32_t y = y0; y < y1; y++)
    dw_pixels_q(&dp->conv, in, in_y0, out + (y - y0) * dp->conv.out.w * dp->conv.out.pixel_stride, y, 0,
                dp->conv.out.w, 1);
}
/* bt_dw_pix_rq2 where every pixel of every call has two or three valid taps a tap row (a 3-wide filter, its
 * columns inside the input but at a border: tile_kernels.dw_pix4) and channels come in fours: its two straight-line
 * tap rows alone, no general tap loop and no remainder channels (a fused tile's calls of a pixel or two:
 * tile_kernels.dw_path_of_calls; vww's least-RAM plan, ops 5 and 7: 1,952 -> 1,378 bytes, `nm -S`) */
BT_DW_PATH(bt_dw_pix4_rq2) {
  const bt_conv_params *p = &dp->conv;
  const int32_t c_n = p->out.c, kh = p->kh, kw = p->kw, ips = p->in.pixel_stride, in_row = p->in.w * ips;
  const int32_t off2 = bt_dup16(p->input_offset), zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int32_t dy = p->dil_h * in_row, dx = p->dil_w * ips, fy = kw * c_n;
  for (int32_t y = y0; y < y1; y++) {
    int8_t *const orow = out + (y - y0) * p->out.w * p->out.pixel_stride;
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    int32_t ky0, ky1;   /* valid tap rows */
    BT_DW_VALID(iy0, kh, p->dil_h, p->in.h, ky0, ky1);
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int32_t kx0, kx1;
      BT_DW_VALID(ix0, kw, p->dil_w, p->in.w, kx0, kx1);
      int8_t *o = orow + x * p->out.pixel_stride;
      const int8_t *ibase = in + (iy0 - in_y0) * in_row + ix0 * ips;
      for (int32_t c = 0; c < c_n; c += 4) {
        int32_t a[4] = {0, 0, 0, 0};
        const int8_t *irow = ibase + ky0 * dy + kx0 * dx + c;
        const int8_t *frow = p->filter + (ky0 * kw + kx0) * c_n + c;
#define BT_DW_TAP(ip, fp) BT_DW_TAP4(ip, fp, a[0], a[1], a[2], a[3])
        if (kx1 - kx0 == 3) {   /* full 3-wide rows: straight-line taps */
          for (int32_t ky = ky0; ky < ky1; ky++, irow += dy, frow += fy) {
            BT_DW_TAP(irow, frow);
            BT_DW_TAP(irow + dx, frow + c_n);
            BT_DW_TAP(irow + 2 * dx, frow + 2 * c_n);
          }
        } else {   /* two (a 3-wide filter at a left or right border: code generation proved every pixel's) */
          for (int32_t ky = ky0; ky < ky1; ky++, irow += dy, frow += fy) {
            BT_DW_TAP(irow, frow);
            BT_DW_TAP(irow + dx, frow + c_n);
          }
        }
#undef BT_DW_TAP
        if (bias) { a[0] += bias[c]; a[1] += bias[c + 1]; a[2] += bias[c + 2]; a[3] += bias[c + 3]; }
        const uint32_t r0 = dw_out(a[0], mult[c], shift[c], zp, lo, hi, 1);
        const uint32_t r1 = dw_out(a[1], mult[c + 1], shift[c + 1], zp, lo, hi, 1);
        const uint32_t r2 = dw_out(a[2], mult[c + 2], shift[c + 2], zp, lo, hi, 1);
        const uint32_t r3 = dw_out(a[3], mult[c + 3], shift[c + 3], zp, lo, hi, 1);
        const uint32_t word = r0 | (r1 << 8) | (r2 << 16) | (r3 << 24);
        __builtin_memcpy(o + c, &word, 4);   /* one (unaligned) store: int8 stores would alias p */
      }
    }
  }
}
#undef BT_DW_PATH
