/* A main() for the fuzz targets without libFuzzer: runs the target once on
 * each file named on the command line (directories: each file inside), so
 * the seed corpus and the regression inputs replay in every build, with gcc,
 * under ASan/UBSan and under valgrind. Prints one line per directory. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "replay: cannot open '%s'\n", path);
    return 1;
  }
  size_t cap = 1 << 16, len = 0;
  unsigned char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) {
      unsigned char *nb = realloc(buf, cap *= 2);
      if (nb == NULL) free(buf);
      buf = nb;
    }
  }
  fclose(f);
  if (buf == NULL) return 1;
  LLVMFuzzerTestOneInput(buf, len);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int bad = 0;
  for (int a = 1; a < argc; a++) {
    struct stat st;
    if (stat(argv[a], &st) != 0) {
      fprintf(stderr, "replay: no such file or directory '%s'\n", argv[a]);
      bad = 1;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      bad |= run_file(argv[a]);
      continue;
    }
    DIR *d = opendir(argv[a]);
    int count = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
      bad |= run_file(path);
      count++;
    }
    if (d) closedir(d);
    printf("replay: %d inputs from %s\n", count, argv[a]);
  }
  return bad;
}
