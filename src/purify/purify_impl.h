/* Private to src/purify: the checkpoints of ovl_purify (checkpoint.c). */
#ifndef OVL_PURIFY_IMPL_H
#define OVL_PURIFY_IMPL_H

#include <stdint.h>

#include "ovl/purify.h"

/* Write D (plane 0) as PREFIX.itIT.raw and the state naming the problem
 * (F's checksum fsum, n, n_occ, the method, mu, the precision) atomically,
 * then remove the older data files. COLLECTIVE over D's plane. */
ovl_err ovl_i_ckpt_write(ovl_dmat D, const char *prefix, int it, const ovl_purify_opts *o, uint64_t fsum);
/* Read the checkpoint PREFIX into D (plane 0) and its iteration into *it,
 * refusing a state of another problem. COLLECTIVE over D's plane. */
ovl_err ovl_i_ckpt_read(ovl_dmat D, const char *prefix, const ovl_purify_opts *o, uint64_t fsum, int *it);

#endif
