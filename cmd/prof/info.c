/* info.c - `prof info RUN.prof`: where a profile came from, whether it was
 * closed cleanly, and how many events of each type it holds. */
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

#define CMD "info"

static int info_main(void *args, const prof_tuning *tuning, int argc, char **argv)
{
    (void)args;
    if (argc != 1)
        return cmd_usage_error(CMD, argc == 0 ? "no profile given" : "takes exactly one profile");
    const char *path = argv[0], *readable;
    profile_summary s;
    prof_error err = { PROF_OK, "" };
    cmd_trace t;
    int status = cmd_trace_open(CMD, tuning, path, &t, &readable);
    if (status != EXIT_OK)
        return status;
    prof_err e = profile_summary_read(readable, tuning, &s, &err);
    cmd_trace_release(&t);
    if (e != PROF_OK) {
        profile_summary_free(&s);
        return cmd_error(CMD, cmd_input_status(e), "cannot read '%s': %s", path, err.message);
    }
    e = info_render_text(stdout, path, &s);
    profile_summary_free(&s);
    if (e != PROF_OK)
        return cmd_error(CMD, EXIT_OUTPUT, "cannot write to standard output");
    return cmd_finish_stdout(CMD);
}

const cmd_spec cmd_info = { usage, NULL, NULL, 0, NULL, NULL, info_main };
