/* The README's C example of ovl_pdpurify (section "Use it from your code"),
 * compiled from the code block of README.md (pdpurify_readme_c.inc, made at
 * configure time) and run on the water case: a 2 x (P/2) grid (1 x 1 on one
 * rank), NB = 4, S = I, W requested; the energy must match the eigenvalue
 * sum stored with the case (meta.json "e_trace"), mu must lie in the gap and
 * W's trace must be that sum too (tr(D F D) = sum eps_occ). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/pdpurify.h"
#include "ovltest.h"

#include "scalapack.h" /* BLACS prototypes (bench/peers) */

static int numroc(int n, int nb, int ip, int np) {
  int nblocks = n / nb, num = nblocks / np * nb, extra = nblocks % np;
  if (ip < extra) num += nb;
  else if (ip == extra) num += n % nb;
  return num;
}

static double meta_num(const char *buf, const char *key) {
  const char *p = strstr(buf, key);
  return p ? atof(p + strlen(key)) : NAN;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const char *dir = getenv("OVL_TEST_DATA");
  char path[4096], buf[8192];
  snprintf(path, sizeof path, "%s/water_ccpvdz/meta.json", dir ? dir : "data");
  FILE *fp = fopen(path, "r");
  size_t len = fp ? fread(buf, 1, sizeof buf - 1, fp) : 0;
  buf[len] = 0;
  if (fp) fclose(fp);
  int n = (int)meta_num(buf, "\"n\":"), nocc_i = (int)meta_num(buf, "\"n_occ\":");
  double etr = meta_num(buf, "\"e_trace\":"), homo = meta_num(buf, "\"homo\":"), lumo = meta_num(buf, "\"lumo\":");
  T_CHECK(n == 24 && nocc_i == 5 && isfinite(etr), "cannot read %s", path);
  int64_t nocc = nocc_i;
  double *G = malloc(sizeof(double) * 24 * 24);
  snprintf(path, sizeof path, "%s/water_ccpvdz/fock.raw", dir ? dir : "data");
  fp = fopen(path, "rb");
  T_CHECK(fp && fread(G, sizeof(double), 24 * 24, fp) == 24 * 24, "cannot read %s", path);
  if (fp) fclose(fp);
  int ctxt = 0, pr, pc, mr, mc, p = P > 1 ? 2 : 1;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", p, P / p);
  Cblacs_gridinfo(ctxt, &pr, &pc, &mr, &mc);
  int ml = numroc(n, 4, mr, pr), nl = numroc(n, 4, mc, pc), lld = ml > 1 ? ml : 1;
  int descf[9] = {1, ctxt, n, n, 4, 4, 0, 0, lld}, descs[9], descd[9], descw[9];
  memcpy(descs, descf, sizeof descf), memcpy(descd, descf, sizeof descf), memcpy(descw, descf, sizeof descf);
  size_t loc = (size_t)lld * (size_t)(nl > 0 ? nl : 1);
  double *f = calloc(loc, sizeof(double)), *s = calloc(loc, sizeof(double)), *d = calloc(loc, sizeof(double));
  double *w = calloc(loc, sizeof(double));
  for (int c = 0; c < nl; c++)
    for (int r = 0; r < ml; r++) {
      int gr = (r / 4 * pr + mr) * 4 + r % 4, gc = (c / 4 * pc + mc) * 4 + c % 4;
      f[r + c * lld] = G[gr * n + gc]; /* row-major file */
      s[r + c * lld] = gr == gc;
    }
  {
#include "pdpurify_readme_c.inc"
    T_CHECK(rc == OVL_OK, "README example: %s", ovl_errmsg());
    T_CHECK(fabs(energy - etr) <= 1e-8 * fabs(etr), "energy %.15g vs e_trace %.15g", energy, etr);
    T_CHECK(mu > homo && mu < lumo && fabs(mu - 0.5 * (homo + lumo)) < 1e-6, "mu %.12g, gap [%.12g, %.12g]", mu, homo,
            lumo);
  }
  double trw = 0;
  for (int c = 0; c < nl; c++)
    for (int r = 0; r < ml; r++)
      if ((r / 4 * pr + mr) * 4 + r % 4 == (c / 4 * pc + mc) * 4 + c % 4) trw += w[r + c * lld];
  MPI_Allreduce(MPI_IN_PLACE, &trw, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  T_CHECK(fabs(trw - etr) <= 1e-8 * fabs(etr), "tr W %.15g vs %.15g", trw, etr);
  free(f), free(s), free(d), free(w), free(G);
  Cblacs_gridexit(ctxt);
  int rc = t_finish("test_pdpurify_readme");
  Cblacs_exit(1);
  MPI_Finalize();
  return rc;
}
