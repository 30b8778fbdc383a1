/* export.c - `prof export RUN.prof --format FORMAT [-o FILE]`: a profile's
 * events in a format other tools read (Chrome trace, CSV, JSON lines,
 * folded stacks), streamed from the reader by src/output/export.c. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "output/export.h"
#include "util/outfile.h"

static const char usage[] =
    "usage: prof export RUN.prof --format FORMAT [-o FILE] [--thread-frames]\n"
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
    "  -o, --output FILE    write FILE (whole or not at all); '-' or none: stdout\n"
    "      --thread-frames  folded: start each stack with its thread's name\n"
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
} export_args;

enum { OPT_THREAD_FRAMES = 256 };

/* One option's value into a; EXIT_OK. */
static int parse_option(int c, const char *arg, void *args)
{
    export_args *a = args;
    switch (c) {
    case 'f': a->format_name = arg; return EXIT_OK;
    case 'o': a->output = arg; return EXIT_OK;
    case OPT_THREAD_FRAMES: a->options |= EXPORT_OPT_THREAD_FRAMES; return EXIT_OK;
    }
    return EXIT_USAGE;
}

/* Parses the command line. EXIT_OK, a usage status, or -1 when --help was
 * answered (with its status in *status). */
static int parse_args(int argc, char **argv, export_args *a, int *status)
{
    static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
                                          { "output", required_argument, NULL, 'o' },
                                          { "thread-frames", no_argument, NULL,
                                            OPT_THREAD_FRAMES },
                                          { "help", no_argument, NULL, 'h' },
                                          { 0, 0, 0, 0 } };
    static const cmd_options o = { CMD, usage, ":f:o:h", opts, parse_option };
    memset(a, 0, sizeof *a);
    int rc = cmd_parse_options(&o, argc, argv, a, status);
    if (rc != EXIT_OK)
        return rc;
    if (argc - optind != 1)
        return cmd_usage_error(CMD, argc == optind ? "no profile given"
                                                   : "takes exactly one profile");
    a->input = argv[optind];
    if (!a->format_name)
        return cmd_usage_error(CMD, "no --format given (chrome-trace, csv, json or folded)");
    if (export_format_parse(a->format_name, &a->format) < 0)
        return cmd_usage_error(CMD, "unknown format '%s' (chrome-trace, csv, json or folded)",
                               a->format_name);
    return EXIT_OK;
}

/* Says once on stderr what a profile cut short lost. */
static void warn_truncated(const char *path, const prof_read_status *st)
{
    fprintf(stderr,
            "prof: export: warning: '%s' was cut short (%s); exported the %llu events "
            "before it\n",
            path, st->detail[0] ? st->detail : "unreadable end",
            (unsigned long long)st->events);
}

static int run_export(const export_args *a, prof_reader *r)
{
    outfile out;
    prof_error err = { PROF_OK, "" };
    if (cmd_output_open(&out, a->output, &err) != PROF_OK) {
        cmd_error(CMD, "%s", err.message);
        return EXIT_OUTPUT;
    }
    export_result res;
    int to_stdout = out.fp == stdout;
    prof_err e = export_profile(r, a->format, a->options, out.fp, &res, &err);
    if (e != PROF_OK) {
        cmd_output_abort(&out);
        if (!res.output_failed) {
            cmd_error(CMD, "cannot read '%s': %s", a->input, err.message);
            return cmd_input_status(e);
        }
        if (to_stdout)
            cmd_error(CMD, "cannot write to standard output: %s", err.message);
        else
            cmd_error(CMD, "cannot write '%s': %s", a->output, err.message);
        return EXIT_OUTPUT;
    }
    if (cmd_output_commit(&out, &err) != PROF_OK) {
        cmd_error(CMD, "%s", err.message);
        return EXIT_OUTPUT;
    }
    if (res.status.truncated)
        warn_truncated(a->input, &res.status);
    return EXIT_OK;
}

int cmd_export(int argc, char **argv)
{
    export_args a;
    int status = EXIT_OK;
    int rc = parse_args(argc, argv, &a, &status);
    if (rc != EXIT_OK)
        return rc < 0 ? status : rc;
    prof_reader *r = NULL;
    prof_error err = { PROF_OK, "" };
    cmd_trace t;
    const char *readable;
    if ((status = cmd_trace_open(CMD, a.input, &t, &readable)) != EXIT_OK)
        return status;
    prof_err e = prof_reader_open(readable, &r, &err);
    if (e != PROF_OK) {
        cmd_error(CMD, "cannot read '%s': %s", a.input, err.message);
        cmd_trace_release(&t);
        return cmd_input_status(e);
    }
    status = run_export(&a, r);
    prof_reader_close(r);
    cmd_trace_release(&t);
    return status;
}
