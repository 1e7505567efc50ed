/* Internal to the kernels and ovl_pdgemm (entry): SUMMA on ScaLAPACK's 2D
 * block-cyclic layout itself, without converting A, B or C.
 *
 * sub(C) := alpha op(sub(A)) op(sub(B)) + beta sub(C) on the caller's local
 * arrays. The inner dimension is cut into panels of at most plan->b indices,
 * clipped at the block boundaries of op(A)'s columns and op(B)'s rows, so
 * each panel of op(A) lives in one process column of A's layout (or one
 * process row when A is transposed) and each panel of op(B) in one process
 * row of B's (or column). Each process gathers the rows of the op(A) panel
 * that match its local rows of sub(C) and the columns of the op(B) panel that
 * match its local columns, and multiplies them into its local part of sub(C)
 * (which is one rectangle of its local array) with one dgemm.
 *
 * How a panel travels depends on the operand's layout against C's:
 *  - aligned (op = N and the operand's rows (A) or columns (B) are laid out
 *    as C's: same block size, same offset inside a block, same owner of the
 *    first index): the owner packs its local rectangle of the panel and
 *    broadcasts it along the grid row (A) or column (B), split over
 *    plan->ndup lanes; with plan->lookahead the next panel's broadcasts are
 *    in flight while the current panel is multiplied, and the product is cut
 *    into column chunks that progress them;
 *  - otherwise (transposed operands, different blocks or offsets): the
 *    processes that hold the panel gather it whole (MPI_Allgatherv along the
 *    dimension it is spread over), broadcast it along the other dimension,
 *    and each process picks (and transposes) the entries it needs. This
 *    moves the whole panel to every process and has no overlap.
 *
 * Workspace: two buffers of each operand's local panel (one when lookahead
 * is off or K fits one panel; an owner whose panel is contiguous in its
 * own array broadcasts it from there), plus one whole panel for an operand
 * that is not aligned; allocated and freed inside the call
 * (ovl_i_bcsumma_memory bounds it).
 */
#ifndef OVL_BCSUMMA_H
#define OVL_BCSUMMA_H

#include <stdint.h>

#include "dmat/bcyclic.h"
#include "ovl/grid.h"
#include "ovl/kernels.h"

/* op(sub(A)) is M x K (va: sub(A), ta: transposed), op(sub(B)) K x N, sub(C)
 * M x N; the views as ovl_bcyclic_view makes them from checked descriptors,
 * on g, the grid whose process (i, j) is the block-cyclic process (i, j).
 * plan: b (> 0), ndup, lookahead and coll are used; the rest is ignored.
 * COLLECTIVE over g's processes. Errors (agreed, before data moves):
 * OVL_ERR_ARG (plan), OVL_ERR_NOMEM, OVL_ERR_SIZE (a panel over 2^31 - 1
 * doubles). stats may be NULL. */
ovl_err ovl_i_bcsumma(ovl_grid2d g, int ta, int tb, int64_t M, int64_t N, int64_t K, double alpha, const ovl_bcview *va,
                      const ovl_bcview *vb, double beta, const ovl_bcview *vc, const ovl_plan *plan, ovl_kstats *stats);

/* 1 when the operand's panels broadcast straight from their owner (aligned,
 * above): A (which 0, transposed ta) or B (which 1) against C. LOCAL. */
int ovl_i_bcsumma_aligned(int which, int trans, const ovl_bcview *v, const ovl_bcview *vc, int p, int q);

/* The panel width ovl_i_bcsumma uses at most: plan's b capped by K. The
 * workspace bytes per rank of a call with panel width b on a p x q grid
 * (an upper bound: local parts rounded up to whole blocks). LOCAL. */
double ovl_i_bcsumma_memory(int64_t M, int64_t N, int64_t K, int64_t b, int p, int q, int aligned_a, int aligned_b,
                            int lookahead);

#endif
