/* FULLY_CONNECTED int8 for Cortex-M55 Helium (MVE): TFLM FullyConnected(PerChannel), byte for byte.
 * Four outputs at a time: the input row is loaded once per 16 bytes and multiplied against four weight
 * rows (VMLADAVA.S8) in a low-overhead loop whose last iteration is tail-predicated (DLSTP.8/LETP,
 * mve_dot4io_lob), each row also multiplied against a vector of the input offset into the same
 * accumulator (io = 128: twice against 64); an offset outside -127..128 sums the rows' weights in a second
 * such loop (VADDVA.S8, mve_sum4_lob); the last 1-3 outputs are the last four's group (the
 * ones before computed and stored again), or with fewer than four outputs mve_dot4_sum (VCTP.8
 * predicated loads, the sums alongside). With sum_x the input row's sum and n its length:
 *   sum (w + fo)(x + io) = sum w x + io sum w + fo sum x + n fo io   (mod 2^32, as the reference's int32)
 * then four outputs requantised per vector (mve.h) and stored by one predicated VSTRB.32. */
#include "bt_kernels.h"
#include "requant.h"
#include "mve.h"

void bt_fully_connected_s8(const bt_fc_params *p, const int8_t *in, int8_t *out) {
  /* every parameter a local: the output's stores could alias the parameter block for the compiler */
  const int32_t n = p->n_in, io = p->input_offset, fo = p->filter_offset, n_out = p->n_out;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max, per_channel = p->per_channel;
  const int8_t *const weights = p->weights;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const mve_rq one = mve_rq_dup(mult[0], shift[0]);
  const int io_loop = n > 0 && io >= -127 && io <= 128 && io != 0;   /* the offset in the dot loop */
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t *x = in + b * n;
    const int32_t sx = fo ? mve_sum(x, n) : 0;
    const int32_t k = (int32_t)((uint32_t)fo * (uint32_t)sx + (uint32_t)n * (uint32_t)fo * (uint32_t)io);
    int8_t *o = out + b * n_out;
    for (int32_t oc0 = 0; oc0 < n_out; oc0 += 4) {
      /* the last 1-3 outputs: the group of the last four (the ones before them computed again, the same
         bytes stored again: the output never aliases the input or the weights) */
      const int32_t oc = n_out - oc0 < 4 && n_out >= 4 ? n_out - 4 : oc0;
      const int32_t nr = n_out - oc < 4 ? n_out - oc : 4;
      int32_t acc[4] = {0, 0, 0, 0};
      if (nr == 4 && io_loop) {
        if (io == 128) mve_dot4io2_lob(x, weights + oc * n, n, n, 64, acc);
        else mve_dot4io_lob(x, weights + oc * n, n, n, (int8_t)io, acc);
        int32x4_t v = mve_vec4(acc);
        if (k) v = vaddq_n_s32(v, k);
        if (bias) v = vaddq_s32(v, vldrwq_s32(bias + oc));
        const mve_rq rq = per_channel ? mve_rq_load(mult + oc, shift + oc, vctp32q(4)) : one;
        vstrbq_s32(o + oc, mve_requant(v, rq, zp, lo, hi));
        continue;
      }
      const mve_pred16_t pr = vctp32q((uint32_t)nr);
      const int8_t *w[4];
      for (int32_t r = 0; r < 4; r++) w[r] = weights + (oc + (r < nr ? r : 0)) * n;
      int32_t sw[4] = {0, 0, 0, 0};
      if (nr == 4 && n > 0) {
        mve_dot4_lob(x, w[0], n, n, acc);
        if (io) mve_sum4_lob(w[0], n, n, sw);
      } else {
        mve_dot4_sum(x, w, n, acc, sw);
      }
      int32x4_t v = vaddq_s32(mve_vec4(acc), vmulq_n_s32(mve_vec4(sw), io));
      v = vaddq_n_s32(v, k);
      if (bias) v = vaddq_s32(v, vldrwq_z_s32(bias + oc, pr));
      const mve_rq rq = per_channel ? mve_rq_load(mult + oc, shift + oc, pr) : one;
      vstrbq_p_s32(o + oc, mve_requant(v, rq, zp, lo, hi), pr);
    }
  }
}
