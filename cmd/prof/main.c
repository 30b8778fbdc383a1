/* main.c - the prof command: a table of subcommands, each in its own file
 * with a cmd_NAME(argc, argv) entry, as git and perf do it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "format/format.h"
#include "prof.h"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    { "analyze", cmd_analyze, "find where the time goes, what leaks and what stalls" },
    { "compare", cmd_compare, "compare two runs: what got faster, slower, fixed or new" },
    { "export", cmd_export, "export events as a Chrome trace, CSV, JSON or folded stacks" },
    { "import", cmd_import, "convert torch.profiler and Nsight Systems traces into profiles" },
    { "info", cmd_info, "show a profile's origin, completeness and event counts" },
    { "record", cmd_record, "run a command with libprof preloaded and write its profile" },
    { "view", cmd_view, "show the analysis as a dashboard in the browser" },
    { "help", cmd_help, "show help for prof or one of its commands" },
    { "version", cmd_version, "show the version of prof and of its file format" },
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

void cmd_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "prof: %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "prof: %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'prof %s --help')\n", cmd);
    return EXIT_USAGE;
}

int cmd_finish_stdout(const char *cmd)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cmd_error(cmd, "cannot write to standard output: %s", strerror(errno ? errno : EIO));
        return EXIT_OUTPUT;
    }
    return EXIT_OK;
}

int cmd_input_status(prof_err e)
{
    switch (e) {
    case PROF_OK: return EXIT_OK;
    case PROF_ERR_NOMEM: return EXIT_NOMEM;
    case PROF_ERR_INVALID: return EXIT_USAGE;
    default: return EXIT_INPUT;
    }
}

static void print_overview(FILE *out)
{
    fputs("usage: prof COMMAND [ARGS]\n\n"
          "prof reads the profiles that libprof records in training programs.\n\n"
          "commands:\n",
          out);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fputs("\n'prof COMMAND --help' or 'prof help COMMAND' shows a command's options;\n"
          "'man prof' has the whole story.\n",
          out);
}

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

int cmd_help(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_overview(stdout);
        return cmd_finish_stdout("help");
    }
    const struct command *c = find_command(argv[1]);
    if (!c || c->fn == cmd_help)
        return c ? cmd_help(1, argv) : cmd_usage_error("help", "unknown command '%s'", argv[1]);
    char *args[] = { argv[1], "--help", NULL };
    return c->fn(2, args);
}

int cmd_version(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        puts("usage: prof version\n\nPrints the version of prof and of the .prof format it writes.");
        return cmd_finish_stdout("version");
    }
    if (argc > 1)
        return cmd_usage_error("version", "unexpected argument '%s'", argv[1]);
    printf("prof %s (file format %d.%d)\n", PROF_VERSION_STRING, PF_VERSION_MAJOR,
           PF_VERSION_MINOR);
    return cmd_finish_stdout("version");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_overview(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return cmd_help(1, argv + 1);
    if (strcmp(argv[1], "--version") == 0)
        return cmd_version(1, argv + 1);
    const struct command *c = find_command(argv[1]);
    if (!c) {
        fprintf(stderr, "prof: '%s' is not a prof command (see 'prof help')\n", argv[1]);
        return EXIT_USAGE;
    }
    return c->fn(argc - 1, argv + 1);
}
