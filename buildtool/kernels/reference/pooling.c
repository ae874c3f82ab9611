/* pooling.c -- the reference set's pooling kernels: pooling_ref.h, which other sets include under their own names
 * for the cases they leave to the reference code (a .c file in an export compiles on its own). */
#include "pooling_ref.h"
