/* ovl process grids: 2D p x q, 3D p x p x p (Huang-Chow), 2.5D s x s x c,
 * and HSUMMA's I x J groups over a 2D grid.
 *
 * Grids own their communicators; kernels borrow them. A grid is created from
 * a parent communicator. When the parent has more ranks than the grid needs
 * and the caller passes OVL_GRID_ALLOW_IDLE, the extra ranks (the highest
 * ranks of the parent) stay idle: they get a valid handle whose
 * ovl_grid*_active() is 0 and whose communicators are MPI_COMM_NULL. Without
 * the flag, a rank count that does not fit is OVL_ERR_GRID on every rank.
 *
 * Rank order (natural order of the Huang-Chow paper): in a 2D grid rank
 * r = i*q + j (row by row); in a 3D/2.5D grid r = k*s*s + i*s + j (row by row
 * in a plane, then plane by plane), where (i, j, k) are the coordinates.
 */
#ifndef OVL_GRID_H
#define OVL_GRID_H

#include "ovl/algo.h"
#include "ovl/comm.h"
#include "ovl/core.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { OVL_GRID_ALLOW_IDLE = 1 };

/* Directions of a grid's communicators. */
typedef enum ovl_grid_dir {
  OVL_DIR_ROW = 0,       /* 2D: same i; 3D: row_comm P(:,j,k) */
  OVL_DIR_COL = 1,       /* 2D: same j; 3D: col_comm P(i,:,k) */
  OVL_DIR_GRD = 2,       /* 3D: grd_comm P(i,j,:) */
  OVL_DIR_OUTER_ROW = 3, /* HSUMMA groups (see ovl_hgroups_create) */
  OVL_DIR_OUTER_COL = 4,
  OVL_DIR_INNER_ROW = 5,
  OVL_DIR_INNER_COL = 6
} ovl_grid_dir;

/* ---- 2D ---------------------------------------------------------------- */

typedef struct ovl_grid2d_s *ovl_grid2d;

/* Create a p x q grid over parent. p = q = 0 picks the most square shape
 * with p <= q and p*q = size(parent) (any P works: a prime P gives 1 x P).
 * Exactly one of p, q zero derives it from size(parent). COLLECTIVE over
 * parent. Errors: OVL_ERR_ARG (out NULL, parent MPI_COMM_NULL; agreed:
 * negative dims, p, q or flags that differ between ranks, p q beyond an int),
 * OVL_ERR_GRID (does not fit). */
ovl_err ovl_grid2d_create(MPI_Comm parent, int p, int q, int flags, ovl_grid2d *out);

/* Free the grid and its communicators; NULL-safe, nulls *g. COLLECTIVE over
 * the parent communicator. */
ovl_err ovl_grid2d_destroy(ovl_grid2d *g);

/* Accessors (LOCAL). Communicators are MPI_COMM_NULL on idle ranks; a NULL
 * handle answers as an idle rank (not active, dims 0, coords -1, no
 * communicators), here and for the 3D grid and the groups.
 *   comm     : the p*q active ranks, rank = i*q + j
 *   row_comm : ranks with the same i (size q, rank = j)
 *   col_comm : ranks with the same j (size p, rank = i)
 *   parent   : the communicator the grid was created from (a duplicate) */
int ovl_grid2d_active(ovl_grid2d g);
void ovl_grid2d_dims(ovl_grid2d g, int *p, int *q);
void ovl_grid2d_coords(ovl_grid2d g, int *i, int *j); /* -1, -1 when idle */
MPI_Comm ovl_grid2d_comm(ovl_grid2d g);
MPI_Comm ovl_grid2d_row_comm(ovl_grid2d g);
MPI_Comm ovl_grid2d_col_comm(ovl_grid2d g);
MPI_Comm ovl_grid2d_parent(ovl_grid2d g);

/* Lanes (N_DUP duplicates) of the row or column communicator, made on first
 * use and owned by the grid until it is destroyed (one set per (dir, ndup)).
 * COLLECTIVE over the grid's active ranks, which must ask in the same order;
 * idle ranks get NULL and OVL_OK. Errors: OVL_ERR_ARG (ndup, dir). */
ovl_err ovl_grid2d_lanes(ovl_grid2d g, ovl_grid_dir dir, int ndup, ovl_lanes *out);

/* Pick the most square p x q (p <= q) with p*q == P. LOCAL. */
void ovl_grid2d_auto_dims(int P, int *p, int *q);

/* ---- 3D (p x p x p) and 2.5D (s x s x c) -------------------------------- */

typedef struct ovl_grid3d_s *ovl_grid3d;

/* Create a 3D grid with s x s x c processes: c == s is the Huang-Chow p^3
 * grid, c < s is a 2.5D grid; c > s only for s = 1 (a stack of c single
 * ranks, which ovl_sq uses on rank counts that form no 2.5D grid). Pass s = 0 to derive s from the parent size
 * and c (c = 0 too: cube root, the 3D grid). Communicators, in the paper's
 * names, for process P(i,j,k):
 *   row_comm = P(:,j,k)  (size s, rank i)
 *   col_comm = P(i,:,k)  (size s, rank j)
 *   grd_comm = P(i,j,:)  (size c, rank k)
 *   plane    = P(:,:,k) as a 2D s x s grid (ovl_grid3d_plane), the layout
 *              of matrices that live on plane k = 0.
 * COLLECTIVE over parent. Errors: OVL_ERR_ARG (out NULL, parent
 * MPI_COMM_NULL; agreed: negative dims, s, c or flags that differ between
 * ranks, s s c beyond an int), OVL_ERR_GRID. */
ovl_err ovl_grid3d_create(MPI_Comm parent, int s, int c, int flags, ovl_grid3d *out);
ovl_err ovl_grid3d_destroy(ovl_grid3d *g);
/* The 2.5D grid for P ranks: the largest c with c | s and s * s * c == P
 * (c = 1, s = sqrt(P) when P is a square; *s = *c = 0 when no such grid
 * exists). LOCAL. */
void ovl_grid25d_dims(int P, int *s, int *c);

/* The shape rules, in one place (the planner, the cost model and every
 * entry use them): the grid algorithm a runs on with P ranks when the
 * caller does not give one. SUMMA, HSUMMA and the block-sparse bsumma: the
 * squarest p x q with p q = P (ovl_grid2d_auto_dims); Cannon: the largest
 * square s x s <= P; 3D and SymmSquareCube Alg. 3-5: the largest cube
 * s x s x s <= P; 2.5D, Alg. 6 and the block-sparse bs2.5d: the 2.5D grid of
 * ovl_grid25d_dims, else the largest square with c = 1;
 * the symmetric square (OVL_ALGO_SQ): the 2.5D grid, else 1 x 1 x P.
 * Ranks beyond the grid stay idle (OVL_GRID_ALLOW_IDLE). 2D algorithms set
 * *p, *q (and *s = *c = 0), the others *s, *c (and *p = *q = s). P < 1
 * counts as 1. LOCAL. */
void ovl_grid_shape(ovl_algo a, int P, int *p, int *q, int *s, int *c);
/* HSUMMA's default groups on a p x q grid: the largest G <= sqrt(p q) that
 * tiles it (ovl_hgroups_auto_dims; G = 1 always does). LOCAL. */
void ovl_hgroups_default(int p, int q, int *gI, int *gJ);

int ovl_grid3d_active(ovl_grid3d g);
void ovl_grid3d_dims(ovl_grid3d g, int *s, int *c);
void ovl_grid3d_coords(ovl_grid3d g, int *i, int *j, int *k); /* -1 when idle */
MPI_Comm ovl_grid3d_comm(ovl_grid3d g);
MPI_Comm ovl_grid3d_row_comm(ovl_grid3d g);
MPI_Comm ovl_grid3d_col_comm(ovl_grid3d g);
MPI_Comm ovl_grid3d_grd_comm(ovl_grid3d g);
MPI_Comm ovl_grid3d_parent(ovl_grid3d g);
/* The 2D grid of this rank's plane (never NULL on active ranks; an idle 2D
 * handle on idle ranks). Owned by the 3D grid. */
ovl_grid2d ovl_grid3d_plane(ovl_grid3d g);
/* Lanes of row_comm, col_comm or grd_comm, as ovl_grid2d_lanes. */
ovl_err ovl_grid3d_lanes(ovl_grid3d g, ovl_grid_dir dir, int ndup, ovl_lanes *out);
/* The three at once: row, col and grd lanes (any may be NULL to skip it).
 * Like ovl_grid3d_lanes (active ranks; collective over the communicators
 * the first time a count is asked for). */
ovl_err ovl_grid3d_lanes3(ovl_grid3d g, int ndup, ovl_lanes *row, ovl_lanes *col, ovl_lanes *grd);
/* Rank in ovl_grid3d_comm of P(i,j,k); -1 outside the grid. LOCAL. */
int ovl_grid3d_rank_of(ovl_grid3d g, int i, int j, int k);

/* ---- HSUMMA groups -------------------------------------------------------- */

typedef struct ovl_hgroups_s *ovl_hgroups;

/* Split a p x q 2D grid into I x J groups of (p/I) x (q/J) processes
 * (I divides p, J divides q; G = I*J). Process (i, j) is in group
 * (gi, gj) = (i / (p/I), j / (q/J)) at position (li, lj) = (i % (p/I),
 * j % (q/J)). Communicators:
 *   outer_row : same i, same lj, across the J group columns (size J, rank gj)
 *   outer_col : same j, same li, across the I group rows    (size I, rank gi)
 *   inner_row : same i, inside the group                    (size q/J, rank lj)
 *   inner_col : same j, inside the group                    (size p/I, rank li)
 * G = 1 makes the outer communicators of size 1; G = P makes the inner ones
 * of size 1. COLLECTIVE over the grid's parent. Errors: OVL_ERR_ARG (agreed;
 * I or J that differ between ranks too). */
ovl_err ovl_hgroups_create(ovl_grid2d g, int gI, int gJ, ovl_hgroups *out);
ovl_err ovl_hgroups_destroy(ovl_hgroups *h);
/* The I x J groups of g, made on first use and owned by g (cached per
 * (I, J)). COLLECTIVE over the grid's parent, in the same order on all
 * ranks. */
ovl_err ovl_grid2d_hgroups(ovl_grid2d g, int gI, int gJ, ovl_hgroups *out);
/* Lanes of one of the four group communicators (OVL_DIR_OUTER_ROW ...
 * OVL_DIR_INNER_COL), cached as ovl_grid2d_lanes. COLLECTIVE over the grid's
 * active ranks. */
ovl_err ovl_hgroups_lanes(ovl_hgroups h, ovl_grid_dir dir, int ndup, ovl_lanes *out);
void ovl_hgroups_dims(ovl_hgroups h, int *gI, int *gJ);
MPI_Comm ovl_hgroups_outer_row(ovl_hgroups h);
MPI_Comm ovl_hgroups_outer_col(ovl_hgroups h);
MPI_Comm ovl_hgroups_inner_row(ovl_hgroups h);
MPI_Comm ovl_hgroups_inner_col(ovl_hgroups h);
/* Choose I x J for a requested G (I*J == G, I | p, J | q, as square as
 * possible). LOCAL. Errors: OVL_ERR_ARG when no factorization fits. */
ovl_err ovl_hgroups_auto_dims(int p, int q, int G, int *gI, int *gJ);

#ifdef __cplusplus
}
#endif
#endif
