/* import.c - `prof import TRACE... [-o OUT]`: traces that torch.profiler
 * (Kineto JSON, plain or gzip) or Nsight Systems (SQLite export) wrote,
 * converted into profiles that every other command reads. The conversion
 * is src/import/; this file names the outputs and says what was read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "import/import.h"
#include "util/error.h"

static const char usage[] =
    "usage: prof import [--python-stacks] [-o OUT] TRACE...\n"
    "\n"
    "Converts traces other tools wrote into profiles: torch.profiler (Kineto)\n"
    "JSON, plain or gzip, and Nsight Systems SQLite exports ('nsys export\n"
    "--type sqlite'), recognised by their content. analyze, compare, export,\n"
    "info and view also read such traces directly; importing once saves\n"
    "converting at every command. A cut or damaged trace is imported up to the\n"
    "damage, with a warning. The traces of the ranks of one job become profiles\n"
    "that the other commands take as ranks (from the trace's distributedInfo).\n"
    "\n"
    "  -o, --output OUT     the profile to write (one TRACE; '-' is standard\n"
    "                       output), or the directory to write into (several);\n"
    "                       default: each TRACE's name with its .json, .json.gz\n"
    "                       or .sqlite ending replaced by .prof, in the current\n"
    "                       directory; two traces that would get one name\n"
    "                       (a/x.json, b/x.sqlite) are refused before anything\n"
    "                       is written\n"
    "      --python-stacks  keep torch.profiler's python_function events as\n"
    "                       regions (left out by default: most of a trace's\n"
    "                       bytes, little of its value for the rules)\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit status: 0 success (also for a trace read up to its damage), 2 usage\n"
    "error (two traces for one output among them), 3 unreadable input, not a\n"
    "trace prof imports, or a trace past what a profile holds (4,194,303\n"
    "distinct names, 256 MiB of names, 1,048,576 threads), 4 output error (no\n"
    "partial profile is left behind), 5 out of memory.\n";

#define CMD "import"

typedef struct import_args {
    const char *output;
    import_options opts;
} import_args;

enum { OPT_PYTHON_STACKS = CMD_FIRST_LONG };

static const struct option long_options[] = {
    { "output", required_argument, NULL, 'o' },
    { "python-stacks", no_argument, NULL, OPT_PYTHON_STACKS },
    { 0, 0, 0, 0 }
};

static int parse_option(void *args, int c, const char *arg)
{
    import_args *a = args;
    switch (c) {
    case 'o': a->output = arg; return EXIT_OK;
    case OPT_PYTHON_STACKS: a->opts.python_stacks = 1; return EXIT_OK;
    }
    return EXIT_USAGE;
}

/* The default name of TRACE's profile: its base name, its trace ending
 * replaced by ".prof". */
static char *default_name(const char *trace)
{
    static const char *const endings[] = { ".pt.trace.json.gz", ".pt.trace.json", ".json.gz",
                                           ".json", ".sqlite", ".gz" };
    const char *base = strrchr(trace, '/');
    base = base ? base + 1 : trace;
    size_t n = strlen(base);
    for (size_t i = 0; i < sizeof endings / sizeof endings[0]; i++) {
        size_t e = strlen(endings[i]);
        if (n > e && strcmp(base + n - e, endings[i]) == 0) {
            n -= e;
            break;
        }
    }
    char *out = NULL;
    return asprintf(&out, "%.*s.prof", (int)n, base) < 0 ? NULL : out;
}

/* Copies the profile in fd (from its start) to out. */
static prof_err copy_profile(int fd, FILE *out, prof_error *err)
{
    char buf[1 << 16];
    off_t at = 0;
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return prof_error_set(err, PROF_ERR_IO, "cannot read the imported profile: %s",
                                  strerror(errno));
        if (n == 0)
            return PROF_OK;
        if (fwrite(buf, 1, (size_t)n, out) != (size_t)n)
            return prof_error_set(err, PROF_ERR_IO, "write failed: %s",
                                  strerror(errno ? errno : EIO));
        at += n;
    }
}

static void say_counts(const char *trace, const char *out, import_format f,
                       const import_counts *c)
{
    fprintf(stderr,
            "prof: import: %s (%s): %llu regions, %llu steps, %llu kernels, %llu copies, "
            "%llu memsets, %llu syncs, %llu API calls, %llu memory samples -> %s\n",
            trace, import_format_name(f), (unsigned long long)c->regions,
            (unsigned long long)c->steps, (unsigned long long)c->kernels,
            (unsigned long long)c->copies, (unsigned long long)c->memsets,
            (unsigned long long)c->syncs, (unsigned long long)c->api_calls,
            (unsigned long long)c->memory_samples, out ? out : "standard output");
    if (c->skipped)
        fprintf(stderr, "prof: import: note: %llu events left out by design (%s)%s\n",
                (unsigned long long)c->skipped, c->skipped_kinds,
                strstr(c->skipped_kinds, "python_function") ? "; --python-stacks keeps "
                                                              "python_function" : "");
    if (c->unknown)
        fprintf(stderr, "prof: import: note: %llu events of kinds prof does not know were "
                        "left out (%s)\n",
                (unsigned long long)c->unknown, c->unknown_kinds);
    if (c->unplaced)
        fprintf(stderr, "prof: import: note: %llu synchronizations had no CPU thread (their "
                        "API call is not in the trace) and were left out\n",
                (unsigned long long)c->unplaced);
}

/* Imports one trace into out (a file, or "-"). */
static int import_one(const char *trace, const char *out, const import_options *o)
{
    char shown[PROF_SUBJECT_MAX];
    prof_error err = { PROF_OK, "" };
    import_format f = import_detect(trace);
    int fd, w;
    if (import_temp_file(o->tuning, &fd, &err) != PROF_OK)
        return cmd_error(CMD, cmd_import_status(err.code, 1), "cannot import '%s': %s%s",
                         prof_error_subject(shown, trace), err.message,
                         cmd_import_hint(err.code, 1));
    if ((w = dup(fd)) < 0) {
        int dup_errno = errno;
        close(fd);
        return cmd_error(CMD, EXIT_OUTPUT, "cannot duplicate a descriptor: %s",
                         strerror(dup_errno));
    }
    import_counts c;
    int limit_set;
    struct sigaction limit = cmd_file_limit_fails(&limit_set);
    prof_err e = import_trace(trace, w, o, &c, &err);
    cmd_file_limit_restore(&limit, limit_set);
    if (e != PROF_OK) {
        close(fd);
        return cmd_error(CMD, cmd_import_status(e, c.output_failed), "cannot import '%s': %s%s",
                         prof_error_subject(shown, trace), err.message,
                         cmd_import_hint(e, c.output_failed));
    }
    outfile of;
    if (cmd_output_open(&of, strcmp(out, "-") == 0 ? NULL : out, &err) != PROF_OK) {
        close(fd);
        return cmd_error(CMD, EXIT_OUTPUT, "%s", err.message);
    }
    if ((e = copy_profile(fd, of.fp, &err)) != PROF_OK)
        cmd_output_abort(&of); /* commit closes the output whether it succeeds or not */
    else
        e = cmd_output_commit(&of, &err);
    if (e != PROF_OK) {
        close(fd);
        return cmd_error(CMD, EXIT_OUTPUT, "cannot write '%s': %s",
                         prof_error_subject(shown, out), err.message);
    }
    close(fd);
    say_counts(trace, strcmp(out, "-") == 0 ? NULL : out, f, &c);
    if (c.damaged)
        cmd_warning(CMD, "'%s' is cut short or damaged; imported what came before the damage",
                    prof_error_subject(shown, trace));
    return EXIT_OK;
}

/* Where TRACE's profile goes: OUT itself for one trace, else a file in the
 * directory OUT (or the current one). */
static char *output_of(const char *trace, const char *out, size_t ntraces)
{
    if (out && ntraces == 1)
        return strdup(out);
    char *name = default_name(trace), *path = NULL;
    if (!name || !out)
        return name;
    if (asprintf(&path, "%s/%s", out, name) < 0)
        path = NULL;
    free(name);
    return path;
}

/* A trace's output and its place on the command line, for finding two
 * traces that would be written to one file. */
typedef struct planned {
    char *out;
    size_t arg;
} planned;

static int planned_cmp(const void *a, const void *b)
{
    const planned *x = a, *y = b;
    int c = strcmp(x->out, y->out);
    return c ? c : (x->arg > y->arg) - (x->arg < y->arg);
}

static void plan_free(planned *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++)
        free(p[i].out);
    free(p);
}

/* Every trace's output, named before anything is written: two traces
 * with one name (a/x.json.gz and b/x.sqlite) would write one file, and
 * only the last would survive, so that is a usage error. The first such
 * pair in output order is named, the earlier argument first. */
static int plan_outputs(char **argv, size_t n, const char *out, planned **plan)
{
    planned *p = calloc(n, sizeof *p), *sorted = NULL;
    int status = EXIT_OK;
    *plan = NULL;
    if (!p)
        return cmd_error(CMD, EXIT_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        p[i].arg = i;
        if (!(p[i].out = output_of(argv[i], out, n))) {
            plan_free(p, n);
            return cmd_error(CMD, EXIT_NOMEM, "out of memory");
        }
    }
    if (n > 1) {
        if (!(sorted = malloc(n * sizeof *sorted))) {
            plan_free(p, n);
            return cmd_error(CMD, EXIT_NOMEM, "out of memory");
        }
        memcpy(sorted, p, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, planned_cmp);
        for (size_t i = 1; i < n; i++) {
            if (strcmp(sorted[i - 1].out, sorted[i].out) != 0)
                continue;
            char a[PROF_SUBJECT_MAX], b[PROF_SUBJECT_MAX], o[PROF_SUBJECT_MAX];
            status = cmd_usage_error(
                CMD, "'%s' and '%s' would both be written to '%s'; import them one at a time "
                     "with -o FILE, or into different directories",
                prof_error_subject(a, argv[sorted[i - 1].arg]),
                prof_error_subject(b, argv[sorted[i].arg]),
                prof_error_subject(o, sorted[i].out));
            break;
        }
        free(sorted);
    }
    if (status != EXIT_OK)
        plan_free(p, n);
    else
        *plan = p;
    return status;
}

static int import_main(void *args, const prof_tuning *t, int argc, char **argv)
{
    import_args *a = args;
    a->opts.tuning = t;
    size_t n = (size_t)argc;
    int status = EXIT_OK;
    if (n == 0)
        return cmd_usage_error(CMD, "no trace given");
    struct stat st;
    if (n > 1 && a->output && (stat(a->output, &st) != 0 || !S_ISDIR(st.st_mode)))
        return cmd_usage_error(CMD, "several traces need -o to name a directory, not '%s'",
                               a->output);
    if (n > 1 && a->output && strcmp(a->output, "-") == 0)
        return cmd_usage_error(CMD, "several traces cannot go to standard output");
    planned *plan;
    if ((status = plan_outputs(argv, n, a->output, &plan)) != EXIT_OK)
        return status;
    for (size_t i = 0; i < n && status == EXIT_OK; i++)
        status = import_one(argv[i], plan[i].out, &a->opts);
    plan_free(plan, n);
    return status;
}

const cmd_spec cmd_import = { usage, "o:", long_options, sizeof(import_args), NULL,
                              parse_option, import_main };
