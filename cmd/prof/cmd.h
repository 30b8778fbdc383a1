/* cmd.h - what the command files share: their entry points, the exit
 * statuses of DESIGN §5 and the one-line error reporter. */
#ifndef PROF_CMD_H
#define PROF_CMD_H

#include <stdio.h>

#include "prof_reader.h"

enum {
    EXIT_OK = 0,
    EXIT_FINDINGS = 1, /* findings at --fail-on, or a regression         */
    EXIT_USAGE = 2,
    EXIT_INPUT = 3,    /* unreadable or corrupt input                    */
    EXIT_OUTPUT = 4    /* an output could not be written                 */
};

int cmd_analyze(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);

/* Prints "prof: CMD: MESSAGE" as one line on stderr. */
void cmd_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reports a usage error with a pointer to --help; returns EXIT_USAGE. */
int cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Flushes stdout and reports a failed write; returns EXIT_OK or EXIT_OUTPUT. */
int cmd_finish_stdout(const char *cmd);

/* The exit status for a reader error. */
int cmd_input_status(prof_err e);

#endif
