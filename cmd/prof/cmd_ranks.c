/* cmd_ranks.c - the ranks of one job, for the commands that take a
 * directory of them (see cmd.h): each rank loaded, analysed and reduced to
 * its summary (src/analysis/ranks.h) on as many threads as there are
 * cores, one model per thread at a time, so that memory follows the
 * threads, not the ranks; and the summary files written on other machines
 * found and read in their place; and the inputs of a query opened as one
 * connection over every rank (query.c, export.c's SQLite file). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/ranks.h"
#include "cmd.h"
#include "import/import.h"
#include "util/error.h"
#include "util/progress.h"
#include "util/vec.h"

/* The ranks' collectives wait in a temporary file (collstore.c). */
#define TMPDIR_HINT " (the collectives of the ranks wait in a temporary file under $TMPDIR, " \
                    "or /tmp: point TMPDIR at a writable directory with room)"

/* A summary holds its rank's report: far below this. */
#define SUMMARY_MAX_BYTES (1u << 30)

typedef struct rank_pool {
    char **paths;
    size_t n;
    analysis_options opts;      /* of each rank's own report               */
    collective_store *store;
    rank_summary *out;
    atomic_size_t next;
    atomic_int stop;
    pthread_mutex_t lock;       /* guards what follows                      */
    size_t failed_at;           /* the first path that failed, or n         */
    int failed_status;
    char failed_msg[CMD_MESSAGE_MAX];
    progress bar;
    uint64_t done_bytes, total_bytes;
    const uint64_t *bytes;      /* each path's size                         */
} rank_pool;

/* Loads rank i, builds its own report (for its findings) and its summary,
 * and frees the model. EXIT_OK or the status, with the message. */
static int summarize_one(rank_pool *p, size_t i, char *msg, size_t size)
{
    profile_model m;
    memset(&m, 0, sizeof m);
    int status = cmd_load_quiet(p->paths[i], p->opts.tuning, &m, NULL, NULL, msg, size);
    if (status == EXIT_OK) {
        prof_error err = { PROF_OK, "" };
        const profile_model *one = &m;
        cJSON *report = report_build(&one, 1, &p->opts, &err);
        if (!report ||
            rank_summary_build(&m, report, 0, p->store, &p->out[i], &err) != PROF_OK) {
            snprintf(msg, size, "cannot analyze '%s': %s%s", p->paths[i], err.message,
                     err.code == PROF_ERR_IO ? TMPDIR_HINT : "");
            status = err.code == PROF_ERR_IO ? EXIT_OUTPUT : cmd_input_status(err.code);
        }
    }
    profile_model_free(&m);
    prof_error err = { PROF_OK, "" };
    if (status == EXIT_OK && rank_summary_compact(&p->out[i], &err) != PROF_OK) {
        snprintf(msg, size, "cannot analyze '%s': %s", p->paths[i], err.message);
        status = EXIT_NOMEM;
    }
    return status;
}

static void summarize_some(void *arg)
{
    rank_pool *p = arg;
    char msg[CMD_MESSAGE_MAX];
    while (!atomic_load(&p->stop)) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n)
            break;
        int status = summarize_one(p, i, msg, sizeof msg);
        pthread_mutex_lock(&p->lock);
        if (status != EXIT_OK && i < p->failed_at) {
            p->failed_at = i;
            p->failed_status = status;
            memcpy(p->failed_msg, msg, sizeof msg);
            atomic_store(&p->stop, 1);
        }
        p->done_bytes += p->bytes[i];
        progress_update(p->done_bytes, p->total_bytes, &p->bar);
        pthread_mutex_unlock(&p->lock);
    }
}

int cmd_rank_summaries(const char *cmd, char **paths, size_t n, const analysis_options *o,
                       collective_store *store, rank_summary *out)
{
    rank_pool p = { .paths = paths, .n = n, .opts = *o, .store = store, .out = out,
                    .failed_at = n };
    uint64_t *bytes = calloc(n ? n : 1, sizeof *bytes);
    if (!bytes)
        return cmd_error(cmd, EXIT_NOMEM, "out of memory");
    /* each rank's own report: the rank as it is, its series unlisted */
    p.opts.rank = ANALYSIS_RANK_FIRST;
    p.opts.list_points = 0;
    p.opts.op_row = NULL;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        bytes[i] = stat(paths[i], &st) == 0 ? (uint64_t)st.st_size : 0;
        p.total_bytes += bytes[i];
    }
    p.bytes = bytes;
    pthread_mutex_init(&p.lock, NULL);
    char label[64];
    snprintf(label, sizeof label, "%zu ranks", n);
    progress_init(&p.bar, stderr, isatty(STDERR_FILENO), label);
    int limit_set;
    struct sigaction limit = cmd_file_limit_fails(&limit_set);
    /* one rank per core at a time, no more than ranks */
    unsigned width = tuning_threads(o->tuning);
    pool_fan_out(tuning_pool(o->tuning), n < width ? (unsigned)n : width, summarize_some, &p);
    cmd_file_limit_restore(&limit, limit_set);
    progress_done(&p.bar);
    pthread_mutex_destroy(&p.lock);
    free(bytes);
    if (p.failed_at < n)
        return cmd_error(cmd, p.failed_status, "%s", p.failed_msg);
    return EXIT_OK;
}

/* ---- summary files -------------------------------------------------------------------- */

int cmd_is_rank_summary(const char *path)
{
    char head[64];
    struct stat st;
    /* a FIFO or a device is left to the reader, which refuses it at once */
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return rank_summary_sniff(head, n);
}

collective_store *cmd_collective_store(const char *cmd, const prof_tuning *t, int *status)
{
    int fd;
    prof_error err = { PROF_OK, "" };
    prof_err e = import_temp_file(t, &fd, &err);
    collective_store *s = e == PROF_OK ? collective_store_open(fd) : NULL;
    if (e != PROF_OK)
        *status = cmd_error(cmd, e == PROF_ERR_NOMEM ? EXIT_NOMEM : EXIT_OUTPUT, "%s%s",
                            err.message, TMPDIR_HINT);
    else if (!s)
        *status = cmd_error(cmd, EXIT_NOMEM, "out of memory");
    return s;
}

int cmd_read_rank_summary(const char *cmd, const char *path, int keep_report,
                          collective_store *store, rank_summary *out)
{
    char shown[PROF_SUBJECT_MAX];
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return cmd_error(cmd, EXIT_INPUT, "cannot read '%s': %s",
                         prof_error_subject(shown, path), strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    int status = EXIT_OK;
    for (;;) {
        if (len == cap && vec_grow(&text, &cap, len + 1, 1) < 0) {
            status = cmd_error(cmd, EXIT_NOMEM, "out of memory");
            break;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0 || len > SUMMARY_MAX_BYTES)
            break;
    }
    if (status == EXIT_OK && ferror(f))
        status = cmd_error(cmd, EXIT_INPUT, "cannot read '%s': %s",
                           prof_error_subject(shown, path), strerror(errno));
    else if (status == EXIT_OK && len > SUMMARY_MAX_BYTES)
        status = cmd_error(cmd, EXIT_INPUT, "cannot read '%s': a rank summary of over 1 GiB",
                           prof_error_subject(shown, path));
    fclose(f);
    prof_error err = { PROF_OK, "" };
    if (status == EXIT_OK &&
        rank_summary_parse(text, len, keep_report, store, out, &err) != PROF_OK)
        status = err.code == PROF_ERR_IO
                     ? cmd_error(cmd, EXIT_OUTPUT, "%s%s", err.message, TMPDIR_HINT)
                     : cmd_error(cmd, cmd_input_status(err.code), "cannot read '%s': %s",
                                 prof_error_subject(shown, path), err.message);
    free(text);
    return status;
}

int cmd_find_rank_summaries(const char *cmd, const char *dir, char ***paths, size_t *n)
{
    char **files;
    size_t nfiles;
    prof_error err = { PROF_OK, "" };
    *paths = NULL;
    *n = 0;
    prof_err e = runset_list_files(dir, &files, &nfiles, &err);
    if (e != PROF_OK)
        return cmd_error(cmd, cmd_input_status(e), "%s", err.message);
    for (size_t i = 0; i < nfiles; i++) { /* in place: those kept move down */
        if (cmd_is_rank_summary(files[i]))
            files[(*n)++] = files[i];
        else
            free(files[i]);
    }
    *paths = files;
    return EXIT_OK;
}

/* ---- a job's operands and report ------------------------------------------------------ */

int cmd_analysis_failed(const char *cmd, const prof_error *err)
{
    if (err->code == PROF_ERR_INVALID)
        return cmd_usage_error(cmd, "%s", err->message);
    return cmd_error(cmd, err->code == PROF_ERR_IO ? EXIT_OUTPUT : cmd_input_status(err->code),
                     "cannot analyze: %s%s", err->message,
                     err->code == PROF_ERR_IO ? TMPDIR_HINT : "");
}

int cmd_summary_report(const char *cmd, const char *path, cJSON **report, int *rank)
{
    rank_summary s;
    collective_store *mem = collective_store_open(-1); /* its collectives go unread */
    *report = NULL;
    if (!mem)
        return cmd_error(cmd, EXIT_NOMEM, "out of memory");
    int status = cmd_read_rank_summary(cmd, path, 1, mem, &s);
    if (status == EXIT_OK) {
        *report = s.report;
        s.report = NULL;
        if (rank)
            *rank = s.rank;
        if (!*report)
            status = cmd_error(cmd, EXIT_INPUT, "cannot read '%s': a rank summary without its "
                               "report", path);
        rank_summary_free(&s);
    }
    collective_store_close(mem);
    return status;
}

/* A rank's own report, from its profile, as each rank's is built for its
 * summary; with msg, nothing is printed and a failure's message goes there. */
static int own_report(const char *cmd, const char *path, const analysis_options *o,
                      cJSON **report, char *msg, size_t size)
{
    profile_model m;
    memset(&m, 0, sizeof m);
    analysis_options own = *o;
    own.rank = ANALYSIS_RANK_FIRST;
    int status = msg ? cmd_load_quiet(path, o->tuning, &m, NULL, NULL, msg, size)
                     : cmd_load_profile(cmd, o->tuning, path, &m);
    if (status == EXIT_OK) {
        prof_error err = { PROF_OK, "" };
        const profile_model *one = &m;
        if (!(*report = report_build(&one, 1, &own, &err))) {
            if (msg)
                snprintf(msg, size, "cannot analyze '%s': %s", path, err.message);
            status = msg ? cmd_input_status(err.code) : cmd_analysis_failed(cmd, &err);
        }
    }
    profile_model_free(&m);
    return status;
}

/* A job's ranks as summaries, kept for the report of any of them. */
struct cmd_job_state {
    char **paths;
    size_t n;
    int summary_files;
    analysis_options opts;
    collective_store *store;
    rank_summary *s;
    ranks_analysis *ra;
};

int cmd_job_open(const char *cmd, char **paths, size_t n, int summary_files,
                 const analysis_options *o, cmd_job_state **out)
{
    int status = EXIT_OK;
    cmd_job_state *j = *out = calloc(1, sizeof *j);
    if (!j || !(j->s = calloc(n, sizeof *j->s))) {
        free(j);
        *out = NULL;
        return cmd_error(cmd, EXIT_NOMEM, "out of memory");
    }
    j->paths = paths;
    j->n = n;
    j->summary_files = summary_files;
    j->opts = *o;
    if (!(j->store = cmd_collective_store(cmd, o->tuning, &status)))
        goto fail;
    if (summary_files) {
        for (size_t i = 0; status == EXIT_OK && i < n; i++)
            status = cmd_read_rank_summary(cmd, paths[i], 0, j->store, &j->s[i]);
    } else {
        status = cmd_rank_summaries(cmd, paths, n, o, j->store, j->s);
    }
    if (status != EXIT_OK)
        goto fail;
    prof_error err = { PROF_OK, "" };
    if (!(j->ra = ranks_analyze(j->s, n, o, &err))) {
        status = cmd_analysis_failed(cmd, &err);
        goto fail;
    }
    return EXIT_OK;
fail:
    cmd_job_close(j);
    *out = NULL;
    return status;
}

size_t cmd_job_described(const cmd_job_state *j)
{
    return ranks_described(j->ra);
}

size_t cmd_job_rank_index(const cmd_job_state *j, long rank)
{
    for (size_t i = 0; i < j->n; i++)
        if (j->s[i].rank == rank)
            return i;
    return SIZE_MAX;
}

int cmd_job_rank(const cmd_job_state *j, size_t index)
{
    return j->s[index].rank;
}

int cmd_job_rank_report(const char *cmd, cmd_job_state *j, size_t index, cJSON **report,
                        char *msg, size_t size)
{
    prof_error err = { PROF_OK, "" };
    *report = NULL;
    int status = j->summary_files ? cmd_summary_report(cmd, j->paths[index], report, NULL)
                                  : own_report(cmd, j->paths[index], &j->opts, report, msg,
                                               size);
    if (!*report)
        return status;
    *report = index == ranks_described(j->ra) ? ranks_report(j->ra, *report, &err)
                                              : ranks_report_rank(j->ra, index, *report, &err);
    if (*report)
        return EXIT_OK;
    if (!msg)
        return cmd_analysis_failed(cmd, &err);
    snprintf(msg, size, "cannot analyze: %s", err.message);
    return cmd_input_status(err.code);
}

void cmd_job_close(cmd_job_state *j)
{
    if (!j)
        return;
    ranks_analysis_free(j->ra);
    for (size_t i = 0; i < j->n; i++)
        rank_summary_free(&j->s[i]);
    free(j->s);
    collective_store_close(j->store);
    free(j);
}

int cmd_job_report(const char *cmd, char **paths, size_t n, int summary_files,
                   const analysis_options *o, cJSON **report, size_t *described)
{
    cmd_job_state *j;
    *report = NULL;
    int status = cmd_job_open(cmd, paths, n, summary_files, o, &j);
    if (status != EXIT_OK)
        return status;
    size_t d = cmd_job_described(j);
    status = cmd_job_rank_report(cmd, j, d, report, NULL, 0);
    if (described)
        *described = d;
    cmd_job_close(j);
    return status;
}

/* A directory stands for the ranks of one job in it (runset.h), or for
 * the rank summaries in it when it holds no profile. */
static int job_directory(const char *cmd, const prof_tuning *t, const char *dir, cmd_job *j)
{
    prof_error err = { PROF_OK, "" };
    prof_err e = runset_find(dir, t, &j->rs, &err);
    if (e == PROF_ERR_EMPTY) {
        int status = cmd_find_rank_summaries(cmd, dir, &j->found, &j->nfound);
        if (status != EXIT_OK || j->nfound > 0) {
            j->paths = j->found;
            j->n = j->nfound;
            j->summary_files = 1;
            return status;
        }
    }
    if (e != PROF_OK)
        return cmd_error(cmd, cmd_input_status(e), "%s", err.message);
    if (j->rs.nruns != 1) {
        char shown[PROF_SUBJECT_MAX];
        return cmd_usage_error(cmd, "'%s' holds %zu runs, not the ranks of one job: analyze "
                               "one run's profiles, or compare the runs with prof compare",
                               prof_error_subject(shown, dir), j->rs.nruns);
    }
    j->paths = j->rs.runs[0].paths;
    j->n = j->rs.runs[0].npaths;
    return EXIT_OK;
}

int cmd_job_operands(const char *cmd, const prof_tuning *t, int argc, char **argv, cmd_job *j)
{
    struct stat st;
    int dirs = 0, summaries = 0;
    memset(j, 0, sizeof *j);
    j->paths = argv;
    j->n = (size_t)argc;
    for (int i = 0; i < argc; i++) {
        dirs += stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode);
        summaries += cmd_is_rank_summary(argv[i]);
    }
    int status = EXIT_OK;
    if (dirs && argc > 1)
        status = cmd_usage_error(cmd, "a directory is analyzed alone: give the directory or "
                                 "profiles, not both");
    else if (summaries && summaries != argc)
        status = cmd_usage_error(cmd, "give profiles or rank summaries, not both");
    else if (dirs)
        status = job_directory(cmd, t, argv[0], j);
    j->summary_files |= summaries > 0;
    if (status != EXIT_OK)
        cmd_job_free(j);
    return status;
}

void cmd_job_free(cmd_job *j)
{
    runset_free(&j->rs);
    for (size_t i = 0; i < j->nfound; i++)
        free(j->found[i]);
    free(j->found);
    memset(j, 0, sizeof *j);
}

/* ---- the inputs of a query (query.c, and export.c's SQLite file) ---- */

int cmd_query_open(const char *cmd, const prof_tuning *t, int argc, char **argv,
                   const analysis_options *o, cmd_query_inputs *in, query_db **q)
{
    memset(in, 0, sizeof *in);
    *q = NULL;
    int status = cmd_job_operands(cmd, t, argc, argv, &in->job);
    if (status != EXIT_OK)
        return status;
    if (in->job.summary_files)
        return cmd_usage_error(cmd, "rank summary files hold no events: give the profiles");
    size_t n = in->job.n;
    query_input *qi = calloc(n, sizeof *qi);
    if (!qi || !(in->traces = calloc(n, sizeof *in->traces))) {
        free(qi);
        return cmd_error(cmd, EXIT_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        in->traces[i].fd = -1;
    for (size_t i = 0; status == EXIT_OK && i < n; i++, in->n++) {
        qi[i].label = in->job.paths[i];
        status = cmd_trace_open(cmd, t, in->job.paths[i], &in->traces[i], &qi[i].path);
    }
    if (status == EXIT_OK) {
        prof_error err = { PROF_OK, "" };
        prof_err e = query_open(qi, n, o, t, q, &err);
        if (e == PROF_ERR_INVALID)
            status = cmd_usage_error(cmd, "%s", err.message);
        else if (e != PROF_OK)
            status = cmd_error(cmd, cmd_input_status(e), "%s", err.message);
    }
    free(qi);
    return status;
}

void cmd_query_inputs_free(cmd_query_inputs *in)
{
    for (size_t i = 0; i < in->n; i++)
        cmd_trace_release(&in->traces[i]);
    free(in->traces);
    cmd_job_free(&in->job);
    memset(in, 0, sizeof *in);
}
