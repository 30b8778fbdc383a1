/* export.c - `prof export RUN.prof --format FORMAT [-o FILE]`: a profile's
 * events in a format other tools read (Chrome trace, CSV, JSON lines,
 * folded stacks), streamed from the reader by src/output/export.c. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "format/format.h"
#include "output/export.h"
#include "util/outfile.h"

static const char usage[] =
    "usage: prof export RUN.prof --format FORMAT [-o FILE] [--thread-frames] [--gpu]\n"
    "       prof export INPUT... --format sqlite -o FILE.db\n"
    "\n"
    "Writes every event of a profile in a format other tools read, streaming:\n"
    "memory stays flat however large the profile.\n"
    "\n"
    "  -f, --format FORMAT  chrome-trace  Trace Event Format JSON for Perfetto UI,\n"
    "                                     chrome://tracing and speedscope\n"
    "                       csv           one row per event (formats/export-csv.md)\n"
    "                       json          JSON lines: metadata, one line per event,\n"
    "                                     an end line (formats/export-json.md)\n"
    "                       folded        collapsed stacks 'a;b;c SELF_NS' of the\n"
    "                                     regions, for flame graphs\n"
    "                       sqlite        the tables of prof query (formats/query.md)\n"
    "                                     in a SQLite file, for pandas, Datasette or\n"
    "                                     DuckDB; INPUT may be the ranks of one job\n"
    "                                     (profiles, or their directory): one file\n"
    "                                     with a rank column. Needs -o FILE\n"
    "  -o, --output FILE    write FILE (whole or not at all); '-' or none: stdout\n"
    "      --thread-frames  folded: start each stack with its thread's name\n"
    "      --gpu            folded: weigh each stack by the GPU time launched\n"
    "                       directly in it (kernels, copies and memsets joined\n"
    "                       to their launch, formats/rules.md 3.2) instead of\n"
    "                       its self time; reads the profile whole, as analyze\n"
    "  -h, --help           show this help\n"
    "\n"
    "A profile cut short is exported up to its last intact block, with one\n"
    "warning line on stderr.\n"
    "\n"
    "Exit status: 0 success, 2 usage error, 3 unreadable or corrupt input,\n"
    "4 output error (no output file is left behind), 5 out of memory.\n";

#define CMD "export"

typedef struct export_args {
    const char *input, *output;
    const char *format_name;  /* as given; NULL: none */
    export_format format;
    unsigned options;
    int gpu;                  /* folded stacks of GPU time */
    int sqlite;               /* the tables of prof query   */
} export_args;

enum { OPT_THREAD_FRAMES = CMD_FIRST_LONG, OPT_GPU };

static const struct option long_options[] = {
    { "format", required_argument, NULL, 'f' },
    { "output", required_argument, NULL, 'o' },
    { "thread-frames", no_argument, NULL, OPT_THREAD_FRAMES },
    { "gpu", no_argument, NULL, OPT_GPU },
    { 0, 0, 0, 0 }
};

/* One option's value into a; EXIT_OK. */
static int parse_option(void *args, int c, const char *arg)
{
    export_args *a = args;
    switch (c) {
    case 'f': a->format_name = arg; return EXIT_OK;
    case 'o': a->output = arg; return EXIT_OK;
    case OPT_THREAD_FRAMES: a->options |= EXPORT_OPT_THREAD_FRAMES; return EXIT_OK;
    case OPT_GPU: a->gpu = 1; return EXIT_OK;
    }
    return EXIT_USAGE;
}

/* The operands and the format: EXIT_OK or a usage error. */
static int check_args(export_args *a, int argc, char **argv)
{
    if (a->format_name && strcmp(a->format_name, "sqlite") == 0) {
        a->sqlite = 1;
        if (argc == 0)
            return cmd_usage_error(CMD, "no profile given");
        if (!a->output || strcmp(a->output, "-") == 0)
            return cmd_usage_error(CMD, "--format sqlite writes a database file: give -o FILE");
        if (a->gpu || a->options)
            return cmd_usage_error(CMD, "--gpu and --thread-frames apply to --format folded");
        return EXIT_OK;
    }
    if (argc != 1)
        return cmd_usage_error(CMD, argc == 0 ? "no profile given" : "takes exactly one profile");
    a->input = argv[0];
    if (!a->format_name)
        return cmd_usage_error(CMD, "no --format given (chrome-trace, csv, json, folded or sqlite)");
    if (export_format_parse(a->format_name, &a->format) < 0)
        return cmd_usage_error(CMD,
                               "unknown format '%s' (chrome-trace, csv, json, folded or sqlite)",
                               a->format_name);
    if (a->gpu && a->format != EXPORT_FOLDED)
        return cmd_usage_error(CMD, "--gpu applies to --format folded");
    return EXIT_OK;
}

/* Says once on stderr what a profile cut short lost. */
static void warn_truncated(const char *path, const prof_read_status *st)
{
    cmd_warning(CMD, "'%s' was cut short (%s); exported the %llu events before it", path,
                st->detail[0] ? st->detail : "unreadable end", (unsigned long long)st->events);
}

static int run_export(const export_args *a, prof_reader *r)
{
    outfile out;
    prof_error err = { PROF_OK, "" };
    if (cmd_output_open(&out, a->output, &err) != PROF_OK)
        return cmd_error(CMD, EXIT_OUTPUT, "%s", err.message);
    export_result res;
    int to_stdout = out.fp == stdout;
    prof_err e = export_profile(r, a->format, a->options, out.fp, &res, &err);
    if (e != PROF_OK) {
        cmd_output_abort(&out);
        if (!res.output_failed)
            return cmd_error(CMD, cmd_input_status(e), "cannot read '%s': %s", a->input,
                             err.message);
        if (to_stdout)
            return cmd_error(CMD, EXIT_OUTPUT, "cannot write to standard output: %s",
                             err.message);
        return cmd_error(CMD, EXIT_OUTPUT, "cannot write '%s': %s", a->output, err.message);
    }
    if (cmd_output_commit(&out, &err) != PROF_OK)
        return cmd_error(CMD, EXIT_OUTPUT, "%s", err.message);
    if (res.status.truncated)
        warn_truncated(a->input, &res.status);
    return EXIT_OK;
}

/* Writes the output of a->gpu: the folded stacks of GPU time, from the
 * loaded model (export_folded_gpu). */
static int run_export_gpu(const export_args *a, const prof_tuning *t)
{
    profile_model m;
    int status = cmd_load_profile(CMD, t, a->input, &m);
    if (status == EXIT_OK) {
        outfile out;
        prof_error err = { PROF_OK, "" };
        export_result res;
        if (cmd_output_open(&out, a->output, &err) != PROF_OK) {
            status = cmd_error(CMD, EXIT_OUTPUT, "%s", err.message);
        } else if (export_folded_gpu(&m, a->options, out.fp, &res, &err) != PROF_OK) {
            cmd_output_abort(&out);
            status = cmd_error(CMD, res.output_failed ? EXIT_OUTPUT : EXIT_NOMEM,
                               "cannot write %s%s%s: %s", a->output ? "'" : "standard output",
                               a->output ? a->output : "", a->output ? "'" : "", err.message);
        } else if (cmd_output_commit(&out, &err) != PROF_OK) {
            status = cmd_error(CMD, EXIT_OUTPUT, "%s", err.message);
        } else if (m.status.truncated) {
            cmd_warning(CMD, "'%s' was cut short (%s); exported what came before it", a->input,
                        m.status.detail[0] ? m.status.detail : "unreadable end");
        }
    }
    profile_model_free(&m);
    return status;
}

/* Writes the tables of prof query over argv's inputs into a->output, a
 * SQLite database built under the output's temporary name and renamed. */
static int run_export_sqlite(const export_args *a, const prof_tuning *t, int argc, char **argv)
{
    cmd_query_inputs in;
    query_db *q;
    analysis_options o;
    analysis_options_default(&o);
    struct stat st; /* a FIFO or a device: not opened, a database needs seeking */
    if (stat(a->output, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return cmd_usage_error(CMD, "'%s' is not a regular file: a SQLite database cannot be "
                               "written through it", a->output);
    int status = cmd_query_open(CMD, t, argc, argv, &o, &in, &q);
    if (status == EXIT_OK) {
        outfile out;
        prof_error err = { PROF_OK, "" };
        if (cmd_output_open(&out, a->output, &err) != PROF_OK) {
            status = cmd_error(CMD, EXIT_OUTPUT, "%s", err.message);
        } else {
            prof_err e = query_export_sqlite(q, out.tmp, &err);
            if (e != PROF_OK) {
                cmd_output_abort(&out);
                if (query_table_error(q)->code != PROF_OK)
                    status = cmd_error(CMD, cmd_input_status(e), "%s", err.message);
                else
                    status = cmd_error(CMD, e == PROF_ERR_NOMEM ? EXIT_NOMEM : EXIT_OUTPUT,
                                       "cannot write '%s': %s", a->output, err.message);
            } else if (cmd_output_commit(&out, &err) != PROF_OK) {
                status = cmd_error(CMD, EXIT_OUTPUT, "%s", err.message);
            }
        }
    }
    query_close(q);
    cmd_query_inputs_free(&in);
    return status;
}

static int export_main(void *args, const prof_tuning *tuning, int argc, char **argv)
{
    export_args *a = args;
    int status = check_args(a, argc, argv);
    if (status != EXIT_OK)
        return status;
    if (a->sqlite)
        return run_export_sqlite(a, tuning, argc, argv);
    if (a->gpu)
        return run_export_gpu(a, tuning);
    prof_reader *r = NULL;
    prof_error err = { PROF_OK, "" };
    cmd_trace t;
    const char *readable;
    if ((status = cmd_trace_open(CMD, tuning, a->input, &t, &readable)) != EXIT_OK)
        return status;
    prof_err e = prof_reader_open(readable, &r, &err);
    if (e != PROF_OK) {
        status = cmd_error(CMD, cmd_input_status(e), "cannot read '%s': %s", a->input,
                           err.message);
    } else {
        pf_reader_tune(r, tuning);
        status = run_export(a, r);
    }
    prof_reader_close(r);
    cmd_trace_release(&t);
    return status;
}

const cmd_spec cmd_export = { usage, "f:o:", long_options, sizeof(export_args), NULL,
                              parse_option, export_main };
