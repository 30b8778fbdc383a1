/* runset.c - a side of a comparison as runs (runset.h). A directory is
 * scanned in name order, traces of other tools read through their import;
 * its profiles' metadata says which are ranks of
 * one job. Repeated runs of one job are told apart by their start times:
 * the ranks of a job start together, its repetitions a run's length apart. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "format/meta_keys.h"
#include "import/import.h"
#include "model/profile.h"
#include "model/runset.h"
#include "util/error.h"
#include "util/vec.h"

typedef struct member {
    char *path;
    int rank, world;       /* -1 when the profile has none or they are invalid */
    double start;          /* start_epoch_ns                                   */
    size_t run;            /* index of its run                                 */
} member;

static double meta_num(const cJSON *meta, const char *key, double fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, key);
    if (cJSON_IsNumber(v))
        return v->valuedouble;
    if (cJSON_IsString(v) && v->valuestring) /* exact decimal text for big epochs */
        return strtod(v->valuestring, NULL);
    return fallback;
}

/* *is_profile set with *m filled when path is a profile or a trace that
 * imports into one (its rank is in the imported metadata), cleared when it
 * is neither; or the reader's or the import's error. */
static prof_err probe(const char *path, const prof_tuning *t, member *m, int *is_profile,
                      prof_error *err)
{
    prof_reader *r = NULL;
    prof_error e = { PROF_OK, "" };
    char shown[PROF_SUBJECT_MAX], readable[32];
    int fd = -1;
    *is_profile = 0;
    prof_err rc = PROF_OK;
    import_options io = { .tuning = t };
    if ((rc = import_to_temp(path, &io, &fd, readable, sizeof readable, NULL, &e)) != PROF_OK)
        return prof_error_set(err, rc, "cannot import '%s': %s", prof_error_subject(shown, path),
                              e.message);
    rc = prof_reader_open(fd >= 0 ? readable : path, &r, &e);
    if (fd >= 0)
        close(fd); /* the reader holds the file open */
    if (rc == PROF_ERR_NOT_PROF || rc == PROF_ERR_EMPTY)
        return PROF_OK;
    if (rc != PROF_OK)
        return prof_error_set(err, rc, "cannot read '%s': %s", prof_error_subject(shown, path),
                              e.message);
    cJSON *meta = cJSON_Parse(prof_reader_metadata(r));
    model_metadata_rank(meta, &m->rank, &m->world);
    m->start = meta_num(meta, MK_START_EPOCH_NS, 0);
    cJSON_Delete(meta);
    prof_reader_close(r);
    *is_profile = 1;
    return PROF_OK;
}

static double fabs_diff(double a, double b)
{
    return a > b ? a - b : b - a;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

prof_err runset_list_files(const char *dir, char ***out, size_t *n, prof_error *err)
{
    DIR *d = opendir(dir);
    char shown[PROF_SUBJECT_MAX];
    *out = NULL;
    *n = 0;
    if (!d)
        return prof_error_set(err, PROF_ERR_IO, "cannot read directory '%s': %s",
                              prof_error_subject(shown, dir), strerror(errno));
    size_t cap = 0;
    prof_err rc = PROF_OK;
    struct dirent *ent;
    while (rc == PROF_OK && (ent = readdir(d))) {
        struct stat st;
        char *path = NULL;
        if (ent->d_name[0] == '.')
            continue;
        if (asprintf(&path, "%s/%s", dir, ent->d_name) < 0) {
            rc = prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
            break;
        }
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        if (vec_grow(out, &cap, *n, sizeof **out) < 0) {
            free(path);
            rc = prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
            break;
        }
        (*out)[(*n)++] = path;
    }
    closedir(d);
    if (*out)
        qsort(*out, *n, sizeof **out, by_name);
    return rc;
}

/* Every file probed, on as many threads as the tuning has: a directory of
 * traces is imported once each to learn their ranks, which is most of its
 * scan. */
typedef struct probe_work {
    char **paths;
    member *m;
    int *is_profile;
    prof_err *rc;
    prof_error *err;
    size_t n;
    const prof_tuning *tuning;
    atomic_size_t next;
} probe_work;

static void probe_some(void *arg)
{
    probe_work *w = arg;
    for (size_t i; (i = atomic_fetch_add(&w->next, 1)) < w->n;) {
        w->m[i] = (member){ w->paths[i], -1, -1, 0, 0 };
        w->rc[i] = probe(w->paths[i], w->tuning, &w->m[i], &w->is_profile[i], &w->err[i]);
    }
}

/* The regular files of dir that are profiles, sorted by name. */
static prof_err scan(const char *dir, const prof_tuning *t, member **out, size_t *n,
                     size_t *skipped, prof_error *err)
{
    char **paths;
    size_t npaths;
    *out = NULL;
    prof_err rc = runset_list_files(dir, &paths, &npaths, err);
    probe_work w = { .paths = paths, .n = npaths, .tuning = t };
    atomic_init(&w.next, 0);
    if (rc == PROF_OK) {
        w.m = calloc(npaths ? npaths : 1, sizeof *w.m);
        w.is_profile = calloc(npaths ? npaths : 1, sizeof *w.is_profile);
        w.rc = calloc(npaths ? npaths : 1, sizeof *w.rc);
        w.err = calloc(npaths ? npaths : 1, sizeof *w.err);
        if (!w.m || !w.is_profile || !w.rc || !w.err)
            rc = prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    }
    unsigned width = tuning_threads(t);
    if (rc == PROF_OK)
        pool_fan_out(tuning_pool(t), npaths < width ? (unsigned)npaths : width, probe_some, &w);
    size_t kept = 0;
    for (size_t i = 0; rc == PROF_OK && i < npaths; i++) {
        if (w.rc[i] != PROF_OK) { /* the first failure in name order */
            *err = w.err[i];
            rc = w.rc[i];
        } else if (w.is_profile[i]) {
            w.m[kept++] = w.m[i];
            paths[i] = NULL;
        } else {
            (*skipped)++;
        }
    }
    for (size_t i = 0; i < npaths; i++)
        free(paths[i]);
    free(paths);
    free(w.is_profile);
    free(w.rc);
    free(w.err);
    if (rc != PROF_OK) {
        for (size_t i = 0; i < kept; i++)
            free(w.m[i].path);
        free(w.m);
        return rc;
    }
    *out = w.m;
    *n = kept;
    return PROF_OK;
}

/* The run of an earlier member that m joins as another rank, or SIZE_MAX. */
static size_t job_of(const member *v, size_t i)
{
    const member *m = &v[i];
    if (m->world <= 1 || m->rank < 0 || m->rank >= m->world)
        return SIZE_MAX;
    for (size_t j = 0; j < i; j++) {
        const member *o = &v[j];
        if (o->world != m->world || o->rank < 0 || fabs_diff(o->start, m->start) >
                                                       (double)RUNSET_JOB_WINDOW_NS)
            continue;
        int taken = 0; /* is m's rank already in o's run? */
        for (size_t k = 0; k < i && !taken; k++)
            taken = v[k].run == o->run && v[k].rank == m->rank;
        if (!taken)
            return o->run;
    }
    return SIZE_MAX;
}

static int by_run_rank(const void *a, const void *b)
{
    const member *x = a, *y = b;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Gathers the members of each run, rank 0 first (v is reordered). */
static prof_err assemble(member *v, size_t n, size_t nruns, runset *out, prof_error *err)
{
    out->runs = calloc(nruns ? nruns : 1, sizeof *out->runs);
    if (!out->runs)
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    out->nruns = nruns;
    qsort(v, n, sizeof *v, by_run_rank);
    for (size_t i = 0, r = 0; r < nruns; r++) {
        runset_run *run = &out->runs[r];
        size_t k = 0;
        while (i + k < n && v[i + k].run == r)
            k++;
        if (!(run->paths = calloc(k ? k : 1, sizeof *run->paths)))
            return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
        for (; run->npaths < k; i++) {
            run->paths[run->npaths++] = v[i].path;
            v[i].path = NULL;
        }
    }
    return PROF_OK;
}

static prof_err find_dir(const char *path, const prof_tuning *t, runset *out, prof_error *err)
{
    member *v = NULL;
    size_t n = 0, nruns = 0;
    char shown[PROF_SUBJECT_MAX];
    prof_err rc = scan(path, t, &v, &n, &out->skipped, err);
    if (rc == PROF_OK && n == 0)
        rc = prof_error_set(err, PROF_ERR_EMPTY, "no profiles in directory '%s'",
                            prof_error_subject(shown, path));
    for (size_t i = 0; rc == PROF_OK && i < n; i++) {
        size_t run = job_of(v, i);
        v[i].run = run != SIZE_MAX ? run : nruns++;
    }
    if (rc == PROF_OK)
        rc = assemble(v, n, nruns, out, err);
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
    free(v);
    return rc;
}

prof_err runset_find(const char *path, const prof_tuning *t, runset *out, prof_error *err)
{
    struct stat st;
    memset(out, 0, sizeof *out);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        out->is_dir = 1;
        prof_err rc = find_dir(path, t, out, err);
        if (rc != PROF_OK)
            runset_free(out);
        return rc;
    }
    out->runs = calloc(1, sizeof *out->runs);
    char **paths = calloc(1, sizeof *paths);
    char *copy = strdup(path);
    if (!out->runs || !paths || !copy) {
        free(paths);
        free(copy);
        runset_free(out);
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    }
    paths[0] = copy;
    out->runs[0] = (runset_run){ paths, 1 };
    out->nruns = 1;
    return PROF_OK;
}

void runset_free(runset *s)
{
    for (size_t r = 0; s->runs && r < s->nruns; r++) {
        for (size_t i = 0; i < s->runs[r].npaths; i++)
            free(s->runs[r].paths[i]);
        free(s->runs[r].paths);
    }
    free(s->runs);
    memset(s, 0, sizeof *s);
}
