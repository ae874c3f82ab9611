/* ADD and SUB: the reference kernels, int8 from reference/add_dense.h (requantisations chosen once
 * per call, contiguous runs in one loop). */
#define BT_ADD_S8_DENSE
#include "../reference/add_ref.h"
