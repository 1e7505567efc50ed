/* Symmetric square: X -> X^2 for a symmetric X (stand-in; see the kernel). */
#ifndef OVL_SQ_H
#define OVL_SQ_H
#include "ovl/comm.h"
#include "ovl/core.h"
#include "ovl/dist.h"
#include "ovl/grid.h"
#include "ovl/kernels.h"
#ifdef __cplusplus
extern "C" {
#endif
typedef enum ovl_prec { OVL_PREC_DOUBLE = 0, OVL_PREC_SINGLE = 1 } ovl_prec;
typedef struct ovl_sq_s *ovl_sq;
ovl_err ovl_sq_create(ovl_grid3d g, int64_t n, int ndup, const ovl_coll_cfg *cfg, ovl_sq *out);
ovl_err ovl_sq_destroy(ovl_sq *s);
ovl_err ovl_sq_run(ovl_sq s, ovl_dmat X, ovl_dmat X2, ovl_prec prec, double *tr_out, ovl_kstats *st);
int64_t ovl_sq_memory(int64_t n, int s, int c);
int64_t ovl_sq_workspace(ovl_sq s);
int ovl_sq_str(ovl_sq s, char *buf, size_t n);
const char *ovl_prec_name(ovl_prec p);
ovl_err ovl_prec_parse(const char *name, ovl_prec *out);
#ifdef __cplusplus
}
#endif
#endif
