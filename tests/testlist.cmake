# (test, ranks, args). Keep tests small: 8 ranks run oversubscribed on 2 cores.
ovl_test(test_core RANKS 1 2 3)
ovl_test(test_grid RANKS 1 2 3 4 8)
ovl_test(test_dmat RANKS 1 2 3 4 8)
