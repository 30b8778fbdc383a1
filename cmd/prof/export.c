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
    "4 output error (no output file is left behind).\n";

#define CMD "export"

typedef struct export_args {
    const char *input, *output;
    export_format format;
    unsigned options;
} export_args;

/* Parses the command line; returns -1 when the command is done (help) or
 * an exit status >= 0 for a usage error, into *status. */
static int parse_args(int argc, char **argv, export_args *a, int *status)
{
    enum { OPT_THREAD_FRAMES = 256 };
    static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
                                          { "output", required_argument, NULL, 'o' },
                                          { "thread-frames", no_argument, NULL,
                                            OPT_THREAD_FRAMES },
                                          { "help", no_argument, NULL, 'h' },
                                          { 0, 0, 0, 0 } };
    const char *format = NULL;
    int c;
    optind = 1;
    opterr = 0;
    memset(a, 0, sizeof *a);
    while ((c = getopt_long(argc, argv, ":f:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f': format = optarg; break;
        case 'o': a->output = optarg; break;
        case OPT_THREAD_FRAMES: a->options |= EXPORT_OPT_THREAD_FRAMES; break;
        case 'h':
            fputs(usage, stdout);
            *status = cmd_finish_stdout(CMD);
            return -1;
        case ':':
            *status = cmd_usage_error(CMD, "option '%s' needs a value", argv[optind - 1]);
            return -1;
        default:
            *status = cmd_usage_error(CMD, "unknown option '%s'", argv[optind - 1]);
            return -1;
        }
    }
    if (argc - optind != 1) {
        *status = cmd_usage_error(CMD, argc == optind ? "no profile given"
                                                      : "takes exactly one profile");
        return -1;
    }
    a->input = argv[optind];
    if (!format) {
        *status = cmd_usage_error(CMD, "no --format given (chrome-trace, csv, json or folded)");
        return -1;
    }
    if (export_format_parse(format, &a->format) < 0) {
        *status = cmd_usage_error(CMD, "unknown format '%s' (chrome-trace, csv, json or folded)",
                                  format);
        return -1;
    }
    return 0;
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
    if (outfile_open(&out, a->output, &err) != PROF_OK) {
        cmd_error(CMD, "%s", err.message);
        return EXIT_OUTPUT;
    }
    export_result res;
    int to_stdout = out.fp == stdout;
    prof_err e = export_profile(r, a->format, a->options, out.fp, &res, &err);
    if (e != PROF_OK) {
        outfile_abort(&out);
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
    if (outfile_commit(&out, &err) != PROF_OK) {
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
    if (parse_args(argc, argv, &a, &status) < 0)
        return status;
    prof_reader *r = NULL;
    prof_error err = { PROF_OK, "" };
    prof_err e = prof_reader_open(a.input, &r, &err);
    if (e != PROF_OK) {
        cmd_error(CMD, "cannot read '%s': %s", a.input, err.message);
        return cmd_input_status(e);
    }
    status = run_export(&a, r);
    prof_reader_close(r);
    return status;
}
