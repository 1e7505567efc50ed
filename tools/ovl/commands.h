/* The sub-commands of ovl, for the dispatchers (main.c, cmd_bench.c). Each
 * parses its options, calls the library and prints; none calls another. */
#ifndef OVL_COMMANDS_H
#define OVL_COMMANDS_H

int cmd_gemm(int argc, char **argv);
int cmd_purify(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_bench_progress(int argc, char **argv);
int cmd_bench_pingpong(int argc, char **argv);
int cmd_bench_coll(int argc, char **argv);
int cmd_bench_nbc(int argc, char **argv);
int cmd_bench_ssc(int argc, char **argv);
int cmd_bench_machine(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_tune(int argc, char **argv);

#endif
