/* main.c - the prof command's front door: the table of subcommands, each
 * in its own file with the spec of its options (cmd.h), and the one option
 * loop that runs them all, as git's run_builtin does. --help, a missing
 * value and an unknown option are answered here for every command, so
 * each command sees only its own options and its operands. */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cmd.h"

const cmd_command cmd_commands[] = {
    { "analyze", &cmd_analyze, "find where the time goes, what leaks and what stalls" },
    { "compare", &cmd_compare, "compare two runs: what got faster, slower, fixed or new" },
    { "export", &cmd_export, "export events as a Chrome trace, CSV, JSON, folded stacks or SQLite" },
    { "import", &cmd_import, "convert torch.profiler and Nsight Systems traces into profiles" },
    { "info", &cmd_info, "show a profile's origin, completeness and event counts" },
    { "query", &cmd_query, "ask a profile's events and analysis questions in SQL" },
    { "record", &cmd_record, "run a command with libprof preloaded and write its profile" },
    { "view", &cmd_view, "show the analysis as a dashboard in the browser" },
    { "help", &cmd_help, "show help for prof or one of its commands" },
    { "version", &cmd_version, "show the version of prof and of its file format" },
};

const size_t cmd_ncommands = sizeof cmd_commands / sizeof cmd_commands[0];

/* ---- the option loop ------------------------------------------------------- */

#define HELP_SHOWN (-1) /* parse_options answered --help */

/* After getopt_long answered '?' with arg = argv[optind - 1]: a long option
 * is that argument; a short one is optopt, and arg may be the argument
 * before it when it sits inside a cluster ("-xq"). */
static int bad_option(const char *cmd, const char *arg)
{
    int is_long = strncmp(arg, "--", 2) == 0 &&
                  (optopt == 0 || optopt >= CMD_FIRST_LONG || strchr(arg, '=') != NULL);
    if (!is_long)
        return cmd_usage_error(cmd, "unknown option '-%c'", optopt);
    if (optopt != 0) /* a known one, given a value it does not take */
        return cmd_usage_error(cmd, "option '%s' takes no value", arg);
    return cmd_usage_error(cmd, "unknown option '%s'", arg);
}

/* The spec's options with -h and --help added, and getopt_long's ':' (a
 * missing value answered apart from an unknown option). */
static struct option *all_options(const cmd_spec *s, char *shortopts, size_t cap)
{
    const char *own = s->shortopts ? s->shortopts : "";
    int stop = own[0] == '+';
    if ((size_t)snprintf(shortopts, cap, "%s:h%s", stop ? "+" : "", own + stop) >= cap)
        return NULL;
    size_t n = 0;
    while (s->longopts && s->longopts[n].name)
        n++;
    struct option *all = calloc(n + 2, sizeof *all);
    if (!all)
        return NULL;
    if (n)
        memcpy(all, s->longopts, n * sizeof *all);
    all[n] = (struct option){ "help", no_argument, NULL, 'h' };
    return all;
}

/* EXIT_OK with *first at the first operand, HELP_SHOWN with the status of
 * showing it in *status, or a reported usage error. */
static int parse_options(const cmd_command *c, int argc, char **argv, void *args, int *first,
                         int *status)
{
    char shortopts[64];
    struct option *all = all_options(c->spec, shortopts, sizeof shortopts);
    if (!all)
        return cmd_error(c->name, EXIT_NOMEM, "out of memory");
    int opt, rc = EXIT_OK;
    optind = 1;
    opterr = 0;
    while (rc == EXIT_OK && (opt = getopt_long(argc, argv, shortopts, all, NULL)) != -1) {
        if (opt == 'h') {
            fputs(c->spec->usage, stdout);
            *status = cmd_finish_stdout(c->name);
            rc = HELP_SHOWN;
        } else if (opt == ':') {
            rc = cmd_usage_error(c->name, "option '%s' needs a value", argv[optind - 1]);
        } else if (opt == '?') {
            rc = bad_option(c->name, argv[optind - 1]);
        } else {
            rc = c->spec->option(args, opt, optarg);
        }
    }
    free(all);
    *first = optind;
    return rc;
}

const cmd_command *cmd_find(const char *name)
{
    for (size_t i = 0; i < cmd_ncommands; i++)
        if (strcmp(cmd_commands[i].name, name) == 0)
            return &cmd_commands[i];
    return NULL;
}

int cmd_run(const cmd_command *c, int argc, char **argv)
{
    const cmd_spec *s = c->spec;
    void *args = calloc(1, s->args_size ? s->args_size : 1);
    if (!args)
        return cmd_error(c->name, EXIT_NOMEM, "out of memory");
    if (s->init)
        s->init(args);
    int first = argc, status = EXIT_OK;
    int rc = parse_options(c, argc, argv, args, &first, &status);
    if (rc == EXIT_OK) {
        prof_tuning t;
        cmd_tuning_init(c->name, &t);
        status = s->run(args, &t, argc - first, argv + first);
        cmd_tuning_free(&t);
    } else if (rc != HELP_SHOWN) {
        status = rc;
    }
    free(args);
    return status;
}

/* A command runs in phases, each freeing much of what the one before
 * allocated: the reader's buffers and the model's growing arrays while
 * loading, then the report's fits and JSON. By default glibc hands freed
 * large blocks, and the top of the heap, back to the system at once, and
 * each page used again costs a page fault: on a virtual machine several
 * microseconds, a third of building the report of 10 million events (make
 * bench). A command is one short run (view and record mostly wait), so it
 * keeps freed memory for its next phase instead; its peak resident memory
 * grows by what the next phase does not reuse (about 2 MiB of 18 at 10
 * million events). */
static void keep_freed_memory(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

int main(int argc, char **argv)
{
    keep_freed_memory();
    if (argc < 2) {
        cmd_help_overview(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return cmd_run(cmd_find("help"), 1, argv + 1);
    if (strcmp(argv[1], "--version") == 0)
        return cmd_run(cmd_find("version"), 1, argv + 1);
    const cmd_command *c = cmd_find(argv[1]);
    if (!c) {
        fprintf(stderr, "prof: '%s' is not a prof command (see 'prof help')\n", argv[1]);
        return EXIT_USAGE;
    }
    return cmd_run(c, argc - 1, argv + 1);
}
