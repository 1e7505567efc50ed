/* SymmSquareCube: D -> D^2, D^3 for a symmetric D (Huang & Chow, Section IV).
 *
 * D, D^2 and D^3 live on plane k = 0 of a 3D grid, in the dist layer's 2D
 * block layout (ovl_grid3d_plane; uneven blocks allowed). Every rank of the
 * grid takes part; on planes k > 0 the matrix handles exist (they are created
 * on ovl_grid3d_plane like on plane 0) but their contents are not used.
 *
 *  OVL_ALGO_SSC3  the original GTFock algorithm (D^2 transposed with
 *                point-to-point messages before its broadcast);
 *  OVL_ALGO_SSC4  the baseline: blocking collectives, no transpose;
 *  OVL_ALGO_SSC5  the optimized one: Algorithm 4's three communication phases
 *                split over N_DUP lanes and pipelined in arrival order
 *                (grd bcast(c) -> row bcast(c); reduce(c) -> bcast(c);
 *                reduce(c) -> send(c) with the D^2 sends overlapped);
 *                with plan->arrival the two products run by lane as
 *                each lane's part arrives (whole columns per lane; else one
 *                product after each phase), and phase 3 (no product of its
 *                own) reduces and sends each lane's columns of D^3 as soon
 *                as their product is done, in that order, instead of after
 *                the last one; N_DUP = 1 is Algorithm 4's communication;
 *  OVL_ALGO_SSC6  2.5D on an s x s x c grid (c | s): grd bcast, s/c Cannon
 *                steps per layer, allreduce of D^2 over grd_comm, s/c Cannon
 *                steps, reduce of D^3; each collective split over N_DUP lanes.
 * Algorithms 3-5 need a p x p x p grid.
 *
 * An ovl_ssc holds the plan and the workspace of one (grid, n) pair: several
 * sizes and several instances may coexist in one program (no global state).
 */
#ifndef OVL_SSC_H
#define OVL_SSC_H

#include "ovl/comm.h"
#include "ovl/core.h"
#include "ovl/dmat.h"
#include "ovl/grid.h"
#include "ovl/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ovl_ssc_s *ovl_ssc;

/* Allocate for plan->n with plan->algo (OVL_ALGO_SSC3..6), plan->ndup and
 * plan->coll (the other fields are not used: the grid is g). COLLECTIVE over
 * the grid's parent. Errors (agreed): OVL_ERR_ARG (algorithm, ndup, n; any
 * of the three differing between ranks; a NULL grid or out: local),
 * OVL_ERR_GRID (grid shape), OVL_ERR_NOMEM. */
ovl_err ovl_ssc_create(ovl_grid3d g, const ovl_plan *plan, ovl_ssc *out);
/* NULL-safe, nulls *s. LOCAL (frees memory; the grid's lanes stay). */
ovl_err ovl_ssc_destroy(ovl_ssc *s);

/* D2 = D*D and D3 = D*D*D (D symmetric, n x n, on plane 0). D2 and D3 are
 * n x n matrices on the same plane grid. Repeatable; no allocation except
 * Algorithm 6's Cannon buffers. st (may be NULL) receives phase times.
 * COLLECTIVE over the grid's parent. */
ovl_err ovl_ssc_run(ovl_ssc s, ovl_dmat D, ovl_dmat D2, ovl_dmat D3, ovl_kstats *st);

/* Bytes of workspace this object holds on this rank (besides D, D2, D3).
 * LOCAL. */
int64_t ovl_ssc_workspace(ovl_ssc s);
/* Memory query before creating: the most bytes of workspace any rank of an
 * s x s x c grid holds during ovl_ssc_create + ovl_ssc_run for n (the blocks
 * of P(0,0,0), including Algorithm 6's Cannon buffers that each run
 * allocates and frees), besides D, D2 and D3. Scratch inside the MPI library
 * is not counted. -1 for invalid arguments (the grid shapes ovl_ssc_create
 * refuses) or 2^62 bytes or more. LOCAL; pure function. */
int64_t ovl_ssc_memory(int64_t n, int s, int c, ovl_algo alg);
/* "alg5 ndup=4 grid=2x2x2 n=1000 backend=mpi". LOCAL. */
int ovl_ssc_str(ovl_ssc s, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
