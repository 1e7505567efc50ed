/* ovl algorithms: one identifier and one name for every distributed kernel,
 * shared by the kernels, the cost models, the planner and every entry.
 *
 * Three families: the multiplication C = A B (SUMMA, HSUMMA, Cannon, 3D,
 * 2.5D), SymmSquareCube D -> D^2, D^3 (Huang & Chow, Algorithms 3-6) and
 * the symmetric square D -> D^2 (ovl/sq.h, the kernel of SP2 and TRS4). All
 * functions are LOCAL and pure. */
#ifndef OVL_ALGO_H
#define OVL_ALGO_H

#include "ovl/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ovl_algo {
  OVL_ALGO_AUTO = -1, /* not chosen yet: the planner decides (ovl/plan.h) */
  OVL_ALGO_SUMMA = 0, /* 2D grid p x q */
  OVL_ALGO_HSUMMA,    /* 2D grid split into I x J groups */
  OVL_ALGO_CANNON,    /* square 2D grid */
  OVL_ALGO_3D,        /* p x p x p grid; operands on plane k = 0 */
  OVL_ALGO_25D,       /* s x s x c grid (c | s); operands on plane k = 0 */
  OVL_ALGO_SSC3,      /* SymmSquareCube, GTFock's original (p x p x p) */
  OVL_ALGO_SSC4,      /* SymmSquareCube, blocking collectives (p x p x p) */
  OVL_ALGO_SSC5,      /* SymmSquareCube, N_DUP lanes in arrival order (p x p x p) */
  OVL_ALGO_SSC6,      /* SymmSquareCube, 2.5D (s x s x c, c | s) */
  OVL_ALGO_SQ,        /* the symmetric square (ovl/sq.h): s x s x c with c | s, or 1 x 1 x c */
  OVL_ALGO_N
} ovl_algo;

typedef enum ovl_family {
  OVL_FAMILY_GEMM = 0, /* C = A B */
  OVL_FAMILY_SSC,      /* D -> D^2, D^3 (canonical and McWeeny purification on top) */
  OVL_FAMILY_SQ        /* D -> D^2, symmetric (SP2 and TRS4 purification on top) */
} ovl_family;

/* "summa", "hsumma", "cannon", "3d", "2.5d", "alg3", "alg4", "alg5", "alg6",
 * "sq" ("auto" for OVL_ALGO_AUTO, "unknown" outside the range). LOCAL. */
const char *ovl_algo_name(ovl_algo a);
/* The inverse of ovl_algo_name for the ten algorithms ("auto" is not
 * parsed here: it is a planner constraint). OVL_ERR_ARG naming the valid
 * names otherwise. LOCAL. */
ovl_err ovl_algo_parse(const char *name, ovl_algo *out);
/* A comma-separated list of algorithm names ("alg3,alg5") into out[0..cap-1]
 * and *n. LOCAL. Errors: OVL_ERR_ARG (an empty list or item, a trailing
 * comma, an unknown name, more than cap names), naming the list; out may
 * then be partly written, *n is not. */
ovl_err ovl_algo_parse_list(const char *list, ovl_algo *out, int cap, int *n);
/* The family of an algorithm. LOCAL. */
ovl_family ovl_algo_family(ovl_algo a);
/* 1 for the 3D-grid algorithms (3D, 2.5D, every SymmSquareCube one and the
 * symmetric square). LOCAL. */
int ovl_algo_is_3d(ovl_algo a);
/* "gemm", "ssc", "sq" and the inverse. LOCAL. */
const char *ovl_family_name(ovl_family f);
ovl_err ovl_family_parse(const char *name, ovl_family *out);

#ifdef __cplusplus
}
#endif
#endif
