/* Deprecated, removed next release: the distributed matrix is declared in ovl/dmat.h (src/dmat). */
#include "ovl/dmat.h"
