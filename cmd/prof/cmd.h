/* cmd.h - what the command files share: the spec each gives the front door
 * (main.c), the exit statuses of DESIGN §5, the one-line error reporter,
 * and the steps several commands take alike (cmd_util.c). */
#ifndef PROF_CMD_H
#define PROF_CMD_H

#include <getopt.h>
#include <signal.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "analysis/ranks.h"
#include "analysis/report.h"
#include "model/profile.h"
#include "model/runset.h"
#include "output/textout.h"
#include "prof_reader.h"
#include "query/query.h"
#include "util/outfile.h"
#include "util/tuning.h"

enum {
    EXIT_OK = 0,
    EXIT_FINDINGS = 1, /* findings at --fail-on, or a regression         */
    EXIT_USAGE = 2,
    EXIT_INPUT = 3,    /* unreadable or corrupt input                    */
    EXIT_OUTPUT = 4,   /* an output could not be written                 */
    EXIT_NOMEM = 5     /* out of memory, whatever was being done         */
};

/* A command as the front door (main.c) runs it, like git's run_builtin:
 * it answers -h and --help with usage, runs getopt_long with shortopts and
 * longopts (a missing value or an unknown option is a usage error), hands
 * each option to option() and the operands to run(), with the tuning of
 * the environment (cmd_tuning_init) that every read and import below takes.
 * The arguments struct
 * of args_size bytes, zeroed then set by init() when there is one, is the
 * command's own; its pointers into argv stay valid until run returns. */
typedef struct cmd_spec {
    const char *usage;             /* --help's text                              */
    const char *shortopts;         /* without h; a leading '+' stops at the first
                                      operand (record: COMMAND's own options)     */
    const struct option *longopts; /* zero-terminated, without help; long-only
                                      ones numbered from CMD_FIRST_LONG           */
    size_t args_size;
    void (*init)(void *args);      /* NULL: the zeroed struct is the defaults    */
    /* c's value into args: EXIT_OK or a reported usage error; NULL for a
     * command without options of its own */
    int (*option)(void *args, int c, const char *arg);
    /* the command on its operands: the exit status, its error reported */
    int (*run)(void *args, const prof_tuning *t, int argc, char **argv);
} cmd_spec;

/* The tuning of the environment (util/tuning.h): PROF_THREADS=N (cores to
 * keep busy, 1: one thread), PROF_READER_HELP=0|always, PROF_MODEL_REPEAT=0,
 * PROF_MODEL_JOIN=0, PROF_MODEL_KEEP=N and TMPDIR, as prof-analyze(1)
 * lists them, with a pool of threads for the command's helpers. The one
 * place below libprof's own configuration where the environment is read.
 * A value that is not one of those is left at its default, with a
 * warning. */
void cmd_tuning_init(const char *cmd, prof_tuning *t);
void cmd_tuning_free(prof_tuning *t);

/* The first value getopt_long returns for a long option without a short
 * one; every command numbers those from here. */
#define CMD_FIRST_LONG 256

/* The command table (main.c): what `prof help` lists and main runs. */
typedef struct cmd_command {
    const char *name;
    const cmd_spec *spec;
    const char *summary;
} cmd_command;

extern const cmd_command cmd_commands[];
extern const size_t cmd_ncommands;

/* The command called name; NULL when there is none. */
const cmd_command *cmd_find(const char *name);

/* The front door: parses argv (argv[0] the command's name) as c's spec
 * says and runs it. The exit status. */
int cmd_run(const cmd_command *c, int argc, char **argv);

/* The list of commands `prof help` and a bare `prof` print (help.c). */
void cmd_help_overview(FILE *out);

extern const cmd_spec cmd_analyze, cmd_compare, cmd_export, cmd_import, cmd_info, cmd_query,
    cmd_record, cmd_view, cmd_help, cmd_version;

/* Prints "prof: CMD: MESSAGE" as one line on stderr; returns status, so
 * that a failure is one line: return cmd_error(CMD, EXIT_INPUT, ...). */
int cmd_error(const char *cmd, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prints "prof: CMD: warning: MESSAGE" as one line on stderr. */
void cmd_warning(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reports a usage error with a pointer to --help; returns EXIT_USAGE. */
int cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Flushes stdout and reports a failed write; returns EXIT_OK or EXIT_OUTPUT. */
int cmd_finish_stdout(const char *cmd);

/* The exit status for a reader error (EXIT_NOMEM for PROF_ERR_NOMEM). */
int cmd_input_status(prof_err e);

/* The directory of the running prof binary into dir (PATH_MAX bytes);
 * 0, or -1 when /proc cannot say. */
int cmd_exe_dir(char *dir);

/* ---- shared by the commands (cmd_util.c) ---- */

/* The index of arg in the NULL-terminated names; -1 when absent. */
int cmd_name_index(const char *const *names, const char *arg);

/* A finite number >= 0 (<= max when max > 0) into *out; -1 when arg is
 * not one. */
int cmd_parse_amount(const char *arg, double max, double *out);

/* A trace another tool wrote (torch.profiler JSON, Nsight SQLite),
 * recognised by its content, is read through a temporary profile imported
 * from it (import.h): *readable is then its path, valid until
 * cmd_trace_release; for anything else *readable is input itself. EXIT_OK
 * or the input status, reported. */
typedef struct cmd_trace {
    int fd;        /* the temporary profile's, or -1 */
    char path[32]; /* "/proc/self/fd/N"              */
} cmd_trace;
int cmd_trace_open(const char *cmd, const prof_tuning *tuning, const char *input, cmd_trace *t,
                   const char **readable);

/* While a trace is imported into a temporary profile, a file size limit
 * (ulimit -f) is a write that fails (EFBIG) instead of SIGXFSZ ending
 * prof: cmd_file_limit_fails ignores the signal and returns its old action
 * (*set: whether it changed), which cmd_file_limit_restore puts back. */
struct sigaction cmd_file_limit_fails(int *set);
void cmd_file_limit_restore(const struct sigaction *old, int set);

/* The status of a failed import: the output status when it was the
 * profile's write that failed (import.h), else the input status. */
int cmd_import_status(prof_err e, int output_failed);
/* The hint that goes with it: where the temporary is, when that failed. */
const char *cmd_import_hint(prof_err e, int output_failed);
void cmd_trace_release(cmd_trace *t);

/* Loads path (a profile or a trace) into *m with a progress bar on a
 * terminal's stderr. EXIT_OK,
 * or the input status with the error reported; *m is the caller's to free
 * either way. */
int cmd_load_profile(const char *cmd, const prof_tuning *t, const char *path, profile_model *m);
#define CMD_MESSAGE_MAX 4608 /* a message with a path (PATH_MAX) and an error */
/* The same without printing or touching signals (for loads on several
 * threads): the status, and the one-line message of a failure into msg;
 * progress may be NULL. */
int cmd_load_quiet(const char *path, const prof_tuning *t, profile_model *m,
                   model_progress_fn on_progress, void *arg, char *msg, size_t size);

/* ---- the ranks of one job (cmd_ranks.c) ---- */

/* Each of paths[0..n) (profiles or traces) loaded, analysed with o and
 * reduced to its summary in out[i] (ranks.h, its collectives in store),
 * on one thread per core (o->tuning's threads); one
 * model per thread in memory at a time. EXIT_OK, or the status of the
 * first path that failed, reported; out[] is the caller's to free. */
int cmd_rank_summaries(const char *cmd, char **paths, size_t n, const analysis_options *o,
                       collective_store *store, rank_summary *out);
/* Whether path is a rank summary file (formats/rank-summary.md). */
int cmd_is_rank_summary(const char *path);
/* Reads one into *out (keep_report: with the report it holds). EXIT_OK or
 * the status, reported. */
int cmd_read_rank_summary(const char *cmd, const char *path, int keep_report,
                          collective_store *store, rank_summary *out);
/* The operands of a command that takes the ranks of one job: profiles or
 * traces (paths), rank summary files (summary_files), or a directory of
 * either alone (a directory's profiles must be one run's ranks). EXIT_OK,
 * or a usage or input error reported. cmd_job_free in any case. */
typedef struct cmd_job {
    char **paths;
    size_t n;
    int summary_files;
    runset rs;             /* a directory's profiles    */
    char **found;          /* a directory's summaries   */
    size_t nfound;
} cmd_job;
int cmd_job_operands(const char *cmd, const prof_tuning *t, int argc, char **argv, cmd_job *j);
void cmd_job_free(cmd_job *j);
/* The report of several ranks of one job (n >= 2): each summarised (or its
 * summary read), merged, and the described rank's own report (from its
 * profile, or its summary file) completed with the cross-rank sections.
 * *described (when not NULL): its index in paths. EXIT_OK, or the status
 * reported. */
int cmd_job_report(const char *cmd, char **paths, size_t n, int summary_files,
                   const analysis_options *o, cJSON **report, size_t *described);
/* The same in steps, the ranks' summaries kept for the report of any rank
 * (prof view's click-through): cmd_job_open summarises and merges them
 * (EXIT_OK, or the status reported, *out NULL); cmd_job_rank_report gives
 * the job's report with paths[index] described, as --rank of its rank
 * would (with msg, nothing is printed: a failure's message goes there).
 * Not reentrant on one job: callers on several threads hold a lock. */
typedef struct cmd_job_state cmd_job_state;
int cmd_job_open(const char *cmd, char **paths, size_t n, int summary_files,
                 const analysis_options *o, cmd_job_state **out);
size_t cmd_job_described(const cmd_job_state *j);
size_t cmd_job_rank_index(const cmd_job_state *j, long rank); /* SIZE_MAX: none */
int cmd_job_rank(const cmd_job_state *j, size_t index);
int cmd_job_rank_report(const char *cmd, cmd_job_state *j, size_t index, cJSON **report,
                        char *msg, size_t size);
void cmd_job_close(cmd_job_state *j);

/* The inputs of a query (profiles, traces, or a directory of one job's
 * ranks, as cmd_job_operands takes them), traces imported into temporary
 * profiles, opened as one query connection (query.h). EXIT_OK, or the
 * status reported; cmd_query_inputs_free after query_close in any case. */
typedef struct cmd_query_inputs {
    cmd_job job;
    cmd_trace *traces;
    size_t n;
} cmd_query_inputs;
int cmd_query_open(const char *cmd, const prof_tuning *t, int argc, char **argv,
                   const analysis_options *o, cmd_query_inputs *in, query_db **q);
void cmd_query_inputs_free(cmd_query_inputs *in);

/* The one-line error of a failed analysis: a usage error for profiles that
 * are not ranks of one job, the output status for the collectives' file.
 * Returns the status. */
int cmd_analysis_failed(const char *cmd, const prof_error *err);
/* The report a rank summary file holds (*rank: its rank, when not NULL).
 * EXIT_OK or the status, reported. */
int cmd_summary_report(const char *cmd, const char *path, cJSON **report, int *rank);

/* The store of a job's collectives: an unlinked file under $TMPDIR (else
 * /tmp). NULL with the error reported (*status). */
collective_store *cmd_collective_store(const char *cmd, const prof_tuning *t, int *status);
/* The rank summary files of dir, by name, into *paths (the caller frees
 * each and the array). EXIT_OK or the status, reported. */
int cmd_find_rank_summaries(const char *cmd, const char *dir, char ***paths, size_t *n);

/* The analysis thresholds that analyze and compare both take: the long
 * options CMD_ANALYSIS_OPTIONS in a command's table, CMD_ANALYSIS_HELP in its
 * usage, and cmd_analysis_option() for their values. */
enum { CMD_OPT_HOT = 1000, CMD_OPT_LEAK, CMD_OPT_HORIZON, CMD_OPT_SYNC, CMD_OPT_CAPACITY };
#define CMD_ANALYSIS_OPTIONS                                        \
    { "hot-threshold", required_argument, NULL, CMD_OPT_HOT },     \
    { "leak-threshold", required_argument, NULL, CMD_OPT_LEAK },   \
    { "leak-horizon", required_argument, NULL, CMD_OPT_HORIZON },  \
    { "sync-threshold", required_argument, NULL, CMD_OPT_SYNC },   \
    { "capacity", required_argument, NULL, CMD_OPT_CAPACITY }
#define CMD_ANALYSIS_USAGE "[--hot-threshold PCT] [--leak-threshold MIB]\n" \
    "                    [--leak-horizon RUNS] [--sync-threshold PCT]\n"     \
    "                    [--capacity BYTES]\n"
#define CMD_ANALYSIS_HELP                                                          \
    "      --hot-threshold PCT  self-time share that makes an operation hot\n"     \
    "                           (default 10)\n"                                     \
    "      --leak-threshold MIB the least growth per step, in MiB, that can be a\n" \
    "                           leak (default 0: any rate whose consequence\n"     \
    "                           counts, see --leak-horizon)\n"                      \
    "      --leak-horizon RUNS  how far a memory series' growth is projected, in\n" \
    "                           lengths of the recorded run: it is a leak when\n"  \
    "                           by then it would reach capacity or grow by half\n" \
    "                           (default 10)\n"                                     \
    "      --sync-threshold PCT share of time blocked on the GPU that is flagged\n" \
    "                           (default 10)\n"                                     \
    "      --capacity BYTES     memory capacity for the out-of-memory projection,\n" \
    "                           with an optional K, M, G or T suffix (powers of\n" \
    "                           1024); default: from the profile's metadata\n"

/* c's value into o when c is one of CMD_ANALYSIS_OPTIONS: EXIT_OK or a
 * reported usage error; -1 when c is another option. */
int cmd_analysis_option(const char *cmd, int c, const char *arg, analysis_options *o);

/* The text style for output (NULL or "-": stdout): colour and Unicode only
 * on a terminal, no colour with no_color, NO_COLOR or TERM=dumb, the
 * terminal's width (DESIGN §5). */
report_style cmd_text_style(const char *output, int no_color);

/* outfile_open/commit/abort (util/outfile.h) for a command: while the
 * temporary file exists, every signal whose default action ends the
 * process (and that still has it when the output is opened) removes it
 * before the process dies by that signal, so an interrupted export leaves
 * nothing behind. A FIFO's wait for its reader is not shielded from
 * signals. While the output is open SIGXFSZ is ignored: a write past a
 * file size limit fails with EFBIG. One output at a time. */
prof_err cmd_output_open(outfile *o, const char *path, prof_error *err);
prof_err cmd_output_commit(outfile *o, prof_error *err);
void cmd_output_abort(outfile *o);

/* Renders doc into path (NULL or "-": stdout) whole or not at all; `what`
 * names it in the out-of-memory message. EXIT_OK or EXIT_OUTPUT, reported. */
typedef prof_err (*cmd_render_fn)(FILE *out, const cJSON *doc, const void *args);
int cmd_write_output(const char *cmd, const char *path, const char *what, cmd_render_fn render,
                     const cJSON *doc, const void *args);

#endif
