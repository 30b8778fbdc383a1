/* import.c - which importer a file needs, judged by its first bytes (a
 * trace's name says little: `.json` may be gzip, `.prof` files are often
 * renamed), and the two ways an import is written: to a file the user
 * names, or to an unlinked temporary file that a command reads in place. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"
#include "import/import.h"
#include "util/error.h"

#define SQLITE_MAGIC "SQLite format 3" /* and a NUL: 16 bytes */

/* Up to cap first bytes of a regular file; -1 when it cannot be read or is
 * not a regular file (a FIFO is opened without waiting for a writer). */
static ssize_t head_bytes(const char *path, unsigned char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0)
        return -1;
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        n = read(fd, buf, cap);
    close(fd);
    return n;
}

import_format import_detect(const char *path)
{
    unsigned char b[64];
    ssize_t n = head_bytes(path, b, sizeof b);
    if (n <= 0)
        return IMPORT_NONE;
    if ((size_t)n >= PF_MAGIC_LEN && memcmp(b, PF_MAGIC, PF_MAGIC_LEN) == 0)
        return IMPORT_NONE;
    if (pf_rank_summary_head((const char *)b, (size_t)n))
        return IMPORT_NONE; /* a rank summary: read by analyze, not imported */
    if (n >= 16 && memcmp(b, SQLITE_MAGIC, 16) == 0)
        return IMPORT_NSYS;
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return IMPORT_KINETO; /* gzip: Kineto traces are the JSON prof reads gzipped */
    ssize_t i = 0;
    if (n >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF) /* a UTF-8 byte order mark */
        i = 3;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
        i++;
    return i < n && b[i] == '{' ? IMPORT_KINETO : IMPORT_NONE;
}

const char *import_format_name(import_format f)
{
    switch (f) {
    case IMPORT_KINETO: return "kineto";
    case IMPORT_NSYS: return "nsys";
    default: return "prof";
    }
}

prof_err import_trace(const char *path, int out_fd, const import_options *o,
                      import_counts *counts, prof_error *err)
{
    static const import_options defaults = { 0 };
    if (counts)
        memset(counts, 0, sizeof *counts);
    import_format f = import_detect(path);
    if (f == IMPORT_NONE) {
        close(out_fd);
        int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            return prof_error_set(err, PROF_ERR_IO, "cannot open: %s", strerror(errno));
        close(fd);
        return prof_error_set(err, PROF_ERR_NOT_PROF,
                              "not a trace prof imports (torch.profiler JSON, plain or "
                              "gzip, or an Nsight Systems SQLite export)");
    }
    import_sink *s;
    prof_err e = sink_open(&s, out_fd, import_format_name(f), path, err);
    if (e) {
        if (counts) /* the header's write, or out of memory */
            counts->output_failed = e == PROF_ERR_IO;
        return e;
    }
    e = f == IMPORT_KINETO ? kineto_read(path, s, o ? o : &defaults, err)
                           : nsys_read(path, s, o ? o : &defaults, err);
    if (e) {
        if (counts)
            sink_describe(s, counts);
        sink_abandon(s);
        return e;
    }
    return sink_finish(s, counts, err);
}

prof_err import_temp_file(const prof_tuning *t, int *fd, prof_error *err)
{
    const char *dir = t ? t->tmpdir : NULL;
    if (!dir || !*dir)
        dir = "/tmp";
#ifdef O_TMPFILE
    *fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (*fd >= 0)
        return PROF_OK;
#endif
    char *tmpl = NULL;
    if (asprintf(&tmpl, "%s/prof-import.XXXXXX", dir) < 0)
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    *fd = mkostemp(tmpl, O_CLOEXEC);
    int saved = errno;
    if (*fd >= 0)
        unlink(tmpl);
    free(tmpl);
    if (*fd < 0)
        return prof_error_set(err, PROF_ERR_IO, "cannot create a temporary file in '%s': %s",
                              dir, strerror(saved));
    return PROF_OK;
}

prof_err import_to_temp(const char *path, const import_options *o, int *fd,
                        char *profile_path, size_t cap, int *output_failed, prof_error *err)
{
    int t;
    *fd = -1;
    if (output_failed)
        *output_failed = 0;
    if (import_detect(path) == IMPORT_NONE)
        return PROF_OK;
    if (output_failed)
        *output_failed = 1;
    prof_err e = import_temp_file(o ? o->tuning : NULL, &t, err);
    if (e)
        return e;
    /* the import closes the descriptor it writes; this one stays open */
    int w = dup(t);
    if (w < 0) {
        int saved = errno;
        close(t);
        return prof_error_set(err, PROF_ERR_IO, "cannot duplicate a descriptor: %s",
                              strerror(saved));
    }
    import_counts c;
    if ((e = import_trace(path, w, o, &c, err)) != PROF_OK) {
        if (output_failed)
            *output_failed = c.output_failed;
        close(t);
        return e;
    }
    if (output_failed)
        *output_failed = 0;
    snprintf(profile_path, cap, "/proc/self/fd/%d", t);
    *fd = t;
    return PROF_OK;
}

