/* replay.c - the main() that turns a fuzz target into a plain program:
 * each file named on the command line (a directory stands for the files
 * in it) is read and handed to LLVMFuzzerTestOneInput once, as libFuzzer
 * replays a corpus. `make check` links every tests/fuzz/fuzz_*.c with this
 * and the plain build's objects, so the stored corpora are checked without
 * clang's sanitizers; `make check-all` replays them through libFuzzer's
 * own ASan+UBSan build as well. A target's CHECK aborts, which fails the
 * run; so does an input that cannot be read. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* a target may define it; none has to */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* The buffer is the input's exact size, as libFuzzer's is, so that a read
 * past its end is one in the sanitized builds. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0) {
        fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *data = malloc(size ? size : 1);
    int ok = data && fread(data, 1, size, f) == size && fgetc(f) == EOF && !ferror(f);
    fclose(f);
    if (!ok) {
        fprintf(stderr, "replay: cannot read '%s' (changed while read, or out of memory)\n", path);
        free(data);
        return -1;
    }
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of dir, in name order so that runs are repeatable. */
static int replay_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open '%s': %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) {
                rc = -1;
                break;
            }
            names = grown;
        }
        if (asprintf(&names[n], "%s/%s", dir, e->d_name) < 0)
            rc = -1;
        else
            n++;
    }
    closedir(d);
    if (names)
        qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            rc = replay_file(names[i]);
            *count += rc == 0;
        }
        free(names[i]);
    }
    free(names);
    if (rc)
        fprintf(stderr, "replay: reading '%s' failed\n", dir);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    size_t count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: cannot open '%s': %s\n", argv[i], strerror(errno));
            return 1;
        }
        int rc = S_ISDIR(st.st_mode) ? replay_dir(argv[i], &count) : replay_file(argv[i]);
        if (rc)
            return 1;
        count += !S_ISDIR(st.st_mode);
    }
    printf("replay: %zu inputs, all passed\n", count);
    return 0;
}
