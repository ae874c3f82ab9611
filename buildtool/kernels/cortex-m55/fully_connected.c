/* FULLY_CONNECTED int8 for Cortex-M55 Helium (MVE): TFLM FullyConnected(PerChannel), byte for byte.
 * Four outputs at a time: the input row is loaded once per 16 bytes and multiplied against four weight
 * rows (VMLADAVA.S8) in a low-overhead loop whose last iteration is tail-predicated (DLSTP.8/LETP,
 * mve_dot4_lob), the rows' weights summed for the input offset in a second such loop (VADDVA.S8,
 * mve_sum4_lob; skipped when the offset is 0); the last 1-3 outputs take mve_dot4_sum (VCTP.8
 * predicated loads, the sums alongside). With sum_x the input row's sum and n its length:
 *   sum (w + fo)(x + io) = sum w x + io sum w + fo sum x + n fo io   (mod 2^32, as the reference's int32)
 * then four outputs requantised per vector (mve.h) and stored by one predicated VSTRB.32. */
#include "bt_kernels.h"
#include "requant.h"
#include "mve.h"

void bt_fully_connected_s8(const bt_fc_params *p, const int8_t *in, int8_t *out) {
  const int32_t n = p->n_in, io = p->input_offset, fo = p->filter_offset;
  const mve_rq one = mve_rq_dup(p->multiplier[0], p->shift[0]);
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t *x = in + b * n;
    const int32_t sx = fo ? mve_sum(x, n) : 0;
    const int32_t k = (int32_t)((uint32_t)fo * (uint32_t)sx + (uint32_t)n * (uint32_t)fo * (uint32_t)io);
    int8_t *o = out + b * p->n_out;
    for (int32_t oc = 0; oc < p->n_out; oc += 4) {
      const int32_t nr = p->n_out - oc < 4 ? p->n_out - oc : 4;
      const mve_pred16_t pr = vctp32q((uint32_t)nr);
      const int8_t *w[4];
      for (int32_t r = 0; r < 4; r++) w[r] = p->weights + (oc + (r < nr ? r : 0)) * n;
      int32_t acc[4] = {0, 0, 0, 0}, sw[4] = {0, 0, 0, 0};
      if (nr == 4 && n > 0) {
        mve_dot4_lob(x, w[0], n, n, acc);
        if (io) mve_sum4_lob(w[0], n, n, sw);
      } else {
        mve_dot4_sum(x, w, n, acc, sw);
      }
      int32x4_t v = vaddq_s32(mve_vec4(acc), vmulq_n_s32(mve_vec4(sw), io));
      v = vaddq_n_s32(v, k);
      if (p->bias) v = vaddq_s32(v, vldrwq_z_s32(p->bias + oc, pr));
      const mve_rq rq = p->per_channel ? mve_rq_load(p->multiplier + oc, p->shift + oc, pr) : one;
      vstrbq_p_s32(o + oc, mve_requant(v, rq, p->output_offset, p->act_min, p->act_max), pr);
    }
  }
}
