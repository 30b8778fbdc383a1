/* info.c - `prof info RUN.prof`: where a profile came from, whether it was
 * closed cleanly, and how many events of each type it holds. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "model/summary.h"
#include "output/info_text.h"

static const char usage[] =
    "usage: prof info RUN.prof\n"
    "\n"
    "Shows a profile's origin (host, pid, command, rank), whether it was closed\n"
    "cleanly or cut short and how much was lost, its threads, and its events\n"
    "counted by type.\n"
    "\n"
    "  -h, --help   show this help\n"
    "\n"
    "Exit status: 0 success (also for a cut-short profile, which is read up to\n"
    "its last intact block), 2 usage error, 3 unreadable or corrupt input,\n"
    "4 output error, 5 out of memory.\n";

int cmd_info(int argc, char **argv)
{
    static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0, 0, 0, 0 } };
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return cmd_finish_stdout("info");
        }
        return cmd_usage_error("info", "unknown option '%s'", argv[optind - 1]);
    }
    if (argc - optind != 1)
        return cmd_usage_error("info", argc == optind ? "no profile given"
                                                      : "takes exactly one profile");
    const char *path = argv[optind], *readable;
    profile_summary s;
    prof_error err = { PROF_OK, "" };
    cmd_trace t;
    int status = cmd_trace_open("info", path, &t, &readable);
    if (status != EXIT_OK)
        return status;
    prof_err e = profile_summary_read(readable, &s, &err);
    cmd_trace_release(&t);
    if (e != PROF_OK) {
        cmd_error("info", "cannot read '%s': %s", path, err.message);
        profile_summary_free(&s);
        return cmd_input_status(e);
    }
    e = info_render_text(stdout, path, &s);
    profile_summary_free(&s);
    if (e != PROF_OK) {
        cmd_error("info", "cannot write to standard output");
        return EXIT_OUTPUT;
    }
    return cmd_finish_stdout("info");
}
