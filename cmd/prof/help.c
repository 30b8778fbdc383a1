/* help.c - `prof help [COMMAND]` and `prof version`. help lists the
 * commands, or shows one command's manual page, found beside the binary
 * before `make install` (the source tree's man/) and after it
 * (PREFIX/share/man), as git's help opens its pages; where the page cannot
 * be shown (no terminal, no man, no page) it prints the command's --help. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "format/format.h"
#include "prof.h"

void cmd_help_overview(FILE *out)
{
    fputs("usage: prof COMMAND [ARGS]\n\n"
          "prof reads the profiles that libprof records in training programs.\n\n"
          "commands:\n",
          out);
    for (size_t i = 0; i < cmd_ncommands; i++)
        fprintf(out, "  %-9s %s\n", cmd_commands[i].name, cmd_commands[i].summary);
    fputs("\n'prof COMMAND --help' shows a command's options; 'prof help COMMAND' on a\n"
          "terminal shows its manual page, which has the whole story.\n",
          out);
}

/* ---- manual pages ------------------------------------------------------------ */

/* Where the pages are, relative to the binary: build/prof and
 * build/asan/prof in the source tree, PREFIX/bin/prof installed. */
static const char *const page_dirs[] = { "../man", "../../man", "../share/man/man1" };

/* The page of command name (prof-NAME.1, else prof.1, which describes the
 * commands without a page of their own) into path (PATH_MAX bytes); 0 when
 * found, -1 when not. */
static int find_page(const char *name, char *path)
{
    char exe[PATH_MAX];
    if (cmd_exe_dir(exe) != 0)
        return -1;
    for (int own = 1; own >= 0; own--) {
        for (size_t i = 0; i < sizeof page_dirs / sizeof page_dirs[0]; i++) {
            int n = own ? snprintf(path, PATH_MAX, "%s/%s/prof-%s.1", exe, page_dirs[i], name)
                        : snprintf(path, PATH_MAX, "%s/%s/prof.1", exe, page_dirs[i]);
            if (n > 0 && n < PATH_MAX && access(path, R_OK) == 0)
                return 0;
        }
    }
    return -1;
}

/* Replaces prof with man(1) showing the page of c, when standard output
 * is a terminal (a person reading) and man and the page are there; returns
 * when it cannot. */
static void show_page(const cmd_command *c)
{
    char page[PATH_MAX];
    if (!isatty(STDOUT_FILENO) || find_page(c->name, page) != 0)
        return;
    fflush(stdout);
    execlp("man", "man", "-l", page, (char *)NULL);
}

/* ---- help -------------------------------------------------------------------- */

static const char help_usage[] =
    "usage: prof help [COMMAND]\n"
    "\n"
    "Without COMMAND, lists the commands. With one, shows its manual page when\n"
    "standard output is a terminal and man(1) and the page are there (the source\n"
    "tree's man/ beside a built prof, or the installed pages), else the command's\n"
    "--help.\n";

static int help_run(void *args, const prof_tuning *t, int argc, char **argv)
{
    (void)args;
    (void)t;
    const cmd_command *c = argc > 0 ? cmd_find(argv[0]) : NULL;
    if (argc > 0 && !c)
        return cmd_usage_error("help", "unknown command '%s'", argv[0]);
    if (!c || c->spec == &cmd_help) {
        cmd_help_overview(stdout);
        return cmd_finish_stdout("help");
    }
    show_page(c);
    char *help[] = { argv[0], "--help", NULL };
    return cmd_run(c, 2, help);
}

const cmd_spec cmd_help = { help_usage, "+", NULL, 0, NULL, NULL, help_run };

/* ---- version ------------------------------------------------------------------- */

static const char version_usage[] =
    "usage: prof version\n"
    "\n"
    "Prints the version of prof and of the .prof format it writes.\n";

static int version_run(void *args, const prof_tuning *t, int argc, char **argv)
{
    (void)args;
    (void)t;
    if (argc > 0)
        return cmd_usage_error("version", "unexpected argument '%s'", argv[0]);
    printf("prof %s (file format %d.%d)\n", PROF_VERSION_STRING, PF_VERSION_MAJOR,
           PF_VERSION_MINOR);
    return cmd_finish_stdout("version");
}

const cmd_spec cmd_version = { version_usage, NULL, NULL, 0, NULL, NULL, version_run };
