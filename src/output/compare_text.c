/* compare_text.c - the text of `prof compare` (see compare_text.h). It
 * reads only the comparison object, and answers in order: are these two
 * runs comparable, did the step get faster, which operations changed, which
 * problems went away or came, and did the run regress. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report_keys.h"
#include "output/compare_text.h"
#include "output/textout.h"
#include "util/fmt.h"

#define LABEL_COLS 22      /* "  mean step time      "                */
#define NAME_MAX_COLS 32   /* operation names beyond this are cut      */
#define VALUE_COLS 12      /* before / after / change columns          */

/* ---- reading the comparison --------------------------------------------- */

static const cJSON *get(const cJSON *o, const char *key)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static int has(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble);
}

static double num(const cJSON *o, const char *key)
{
    return has(o, key) ? get(o, key)->valuedouble : 0.0;
}

static const char *str(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(get(o, key));
    return s ? s : "";
}

/* ---- numbers ------------------------------------------------------------------ */

/* A value of a unit ("ns", "bytes", "count") into buf. */
static const char *value(char buf[FMT_BUF], const char *unit, double v)
{
    if (strcmp(unit, "ns") == 0)
        return fmt_duration(buf, (double)textout_u64(v));
    if (strcmp(unit, "bytes") == 0)
        return fmt_bytes(buf, textout_u64(v));
    return fmt_count(buf, textout_u64(v));
}

/* A change with its sign: "+1.20 ms", "-3", "+0". */
static const char *change(char buf[FMT_BUF], const char *unit, double v)
{
    char b[FMT_BUF];
    snprintf(buf, FMT_BUF, "%s%s", v < 0 ? "-" : "+", value(b, unit, fabs(v)));
    return buf;
}

static const char *percent(char buf[FMT_BUF], const cJSON *o, const char *key)
{
    if (!has(o, key))
        snprintf(buf, FMT_BUF, "-");
    else
        snprintf(buf, FMT_BUF, "%+.1f%%", 100.0 * num(o, key));
    return buf;
}

/* o.key as a p column: "<0.001", "0.024", "-". */
static const char *p_value(char buf[FMT_BUF], const cJSON *o, const char *key)
{
    if (!has(o, key))
        snprintf(buf, FMT_BUF, "-");
    else if (num(o, key) < 0.001)
        snprintf(buf, FMT_BUF, "<0.001");
    else
        snprintf(buf, FMT_BUF, "%.3f", num(o, key));
    return buf;
}

/* "p < 0.001", "p = 0.024" */
static const char *p_phrase(char buf[FMT_BUF], const cJSON *o)
{
    double p = num(o, RK_P_VALUE);
    if (!has(o, RK_P_VALUE))
        snprintf(buf, FMT_BUF, "no test");
    else if (p < 0.001)
        snprintf(buf, FMT_BUF, "p < 0.001");
    else
        snprintf(buf, FMT_BUF, "p = %.3f", p);
    return buf;
}

/* ---- styling ------------------------------------------------------------------ */

/* s in `width` columns (negative: left-aligned, 0: as it is), red for
 * worse, green for better. */
static void colored(textout *t, int worse, int better, int width, const char *s)
{
    if (worse || better)
        textout_sgr(t, worse ? "31" : "32");
    fprintf(t->out, "%*s", width, s);
    if (worse || better)
        textout_sgr(t, "0");
}

static void label(textout *t, const char *prefix, const char *name)
{
    char *safe = textout_sanitize(t, name);
    if (!safe)
        return;
    int c = (int)strlen(prefix) + textout_cols(safe);
    fprintf(t->out, "  %s%s%*s", prefix, safe, c < LABEL_COLS - 2 ? LABEL_COLS - 2 - c : 1, "");
    free(safe);
}

/* ---- the runs and the notes --------------------------------------------------------- */

/* ", steady step 17.1 ms to 27.6 ms": the range of a side's per-run step
 * times, where the step-time test's spread comes from; nothing with fewer
 * than two. */
static void render_run_steps(textout *t, const cJSON *r)
{
    double lo = INFINITY, hi = -INFINITY;
    int n = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, get(r, RK_RUN_STEP_MEANS_NS))
        if (cJSON_IsNumber(m)) {
            lo = fmin(lo, m->valuedouble);
            hi = fmax(hi, m->valuedouble);
            n++;
        }
    if (n < 2)
        return;
    char a[FMT_BUF], b[FMT_BUF];
    fprintf(t->out, ", steady step %s to %s", fmt_duration(a, lo), fmt_duration(b, hi));
}

static void render_run(textout *t, const char *which, const cJSON *r)
{
    char b[FMT_BUF];
    fprintf(t->out, "  %-8s ", which);
    textout_put_safe(t, str(r, RK_PATH));
    if (num(r, RK_RUNS) > 1) {
        fprintf(t->out, " (%s runs", fmt_count(b, textout_u64(num(r, RK_RUNS))));
        render_run_steps(t, r);
        fputs(")", t->out);
    }
    fputs(": ", t->out);
    if (*str(r, RK_COMMAND)) {
        textout_put_safe(t, str(r, RK_COMMAND));
        fputs(", ", t->out);
    }
    fprintf(t->out, "%s steps%s", fmt_count(b, textout_u64(num(r, RK_STEPS))),
            num(r, RK_RUNS) > 1 ? " a run" : "");
    if (num(r, RK_SAMPLED_STEPS) != num(r, RK_STEPS))
        fprintf(t->out, " (%s sampled)", fmt_count(b, textout_u64(num(r, RK_SAMPLED_STEPS))));
    fputs(cJSON_IsFalse(get(r, RK_CLEAN)) ? ", not closed cleanly\n" : "\n", t->out);
}

static void render_header(textout *t, const cJSON *c)
{
    textout_sgr(t, "1");
    fputs("prof compare ", t->out);
    textout_put_safe(t, str(get(c, RK_BEFORE), RK_PATH));
    fputs(t->st.unicode ? " \xe2\x86\x92 " : " -> ", t->out);
    textout_put_safe(t, str(get(c, RK_AFTER), RK_PATH));
    textout_sgr(t, "0");
    fputc('\n', t->out);
    render_run(t, "before", get(c, RK_BEFORE));
    render_run(t, "after", get(c, RK_AFTER));
}

/* ---- summary ----------------------------------------------------------------------------- */

static const struct {
    const char *metric, *label;
} labels[] = {
    { "steps", "steps" },
    { "sampled_steps", "sampled steps" },
    { "wall_ns", "wall time" },
    { "profiled_ns", "profiled time" },
    { "step_mean_ns", "mean step time" },
    { "step_p50_ns", "p50 step time" },
    { "step_p95_ns", "p95 step time" },
};

static const char *label_of(const char *metric)
{
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
        if (strcmp(labels[i].metric, metric) == 0)
            return labels[i].label;
    return metric;
}

/* before, after and change columns of a row; missing values as "-". */
static void put_values(textout *t, const char *unit, const cJSON *row, const char *kb,
                       const char *ka, const char *kc, int lower_is_better)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF], b4[FMT_BUF];
    fprintf(t->out, "%*s %*s ", VALUE_COLS, has(row, kb) ? value(b1, unit, num(row, kb)) : "-",
            VALUE_COLS, has(row, ka) ? value(b2, unit, num(row, ka)) : "-");
    double d = num(row, kc);
    int worse = lower_is_better && d > 0, better = lower_is_better && d < 0;
    colored(t, worse, better, VALUE_COLS, has(row, kc) ? change(b3, unit, d) : "-");
    fprintf(t->out, " %8s", percent(b4, row, RK_RELATIVE));
}

static void render_step_test(textout *t, const cJSON *c)
{
    char b[FMT_BUF];
    const cJSON *test = get(c, RK_STEP_TIME_TEST);
    if (!has(test, RK_RELATIVE))
        return;
    const char *v = str(test, RK_VERDICT);
    if (cJSON_IsTrue(get(test, RK_SIGNIFICANT))) {
        fputc(' ', t->out);
        colored(t, num(test, RK_RELATIVE) > 0, num(test, RK_RELATIVE) < 0, 0,
                num(test, RK_RELATIVE) > 0 ? "slower" : "faster");
    } else if (strcmp(v, "inconclusive") == 0) { /* the interval reaches past the floor */
        char lo[FMT_BUF], hi[FMT_BUF];
        fprintf(t->out, " inconclusive: %s to %s", percent(lo, test, RK_RELATIVE_LOW),
                percent(hi, test, RK_RELATIVE_HIGH));
    } else {
        fputs(" no change beyond the noise floor", t->out);
    }
    fprintf(t->out, " (%s", p_phrase(b, test));
    if (has(test, RK_RUNS_NEEDED))
        fprintf(t->out, "; about %.0f runs a side would settle it", num(test, RK_RUNS_NEEDED));
    fputc(')', t->out);
}

static void render_metrics(textout *t, const cJSON *c)
{
    const cJSON *row;
    cJSON_ArrayForEach(row, get(c, RK_SUMMARY)) {
        const char *metric = str(row, RK_METRIC);
        if (strcmp(metric, "sampled_steps") == 0 && num(row, RK_BEFORE) == num(row, RK_AFTER))
            continue; /* every step or the same ones sampled: no news */
        label(t, "", label_of(metric));
        int timed = strcmp(str(row, RK_UNIT), "ns") == 0 && strncmp(metric, "step_", 5) == 0;
        put_values(t, str(row, RK_UNIT), row, RK_BEFORE, RK_AFTER, RK_CHANGE, timed);
        if (strcmp(metric, "step_mean_ns") == 0)
            render_step_test(t, c);
        fputc('\n', t->out);
    }
}

/* "+1.2 MiB/step" or "+35.0 KiB/s" in a value column. */
static void render_slope(textout *t, const cJSON *m, const char *key)
{
    char b[FMT_BUF], cell[FMT_BUF + 16];
    const char *per = strcmp(str(m, RK_SLOPE_UNIT), "bytes_per_s") == 0 ? "/s" : "/step";
    if (!has(m, key))
        snprintf(cell, sizeof cell, "-");
    else
        snprintf(cell, sizeof cell, "%s%s", change(b, "bytes", num(m, key)), per);
    fprintf(t->out, "%*s ", VALUE_COLS, cell);
}

static const char *leak_phrase(const char *verdict)
{
    if (strcmp(verdict, "fixed") == 0)
        return "leak fixed";
    if (strcmp(verdict, "new") == 0)
        return "new leak";
    if (strcmp(verdict, "persisting") == 0)
        return "leak persists";
    return "no leak";
}

static void render_memory(textout *t, const cJSON *c)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, get(c, RK_MEMORY)) {
        label(t, "peak ", str(m, RK_SERIES));
        put_values(t, "bytes", m, RK_BEFORE_PEAK_BYTES, RK_AFTER_PEAK_BYTES, RK_CHANGE_BYTES, 1);
        fputc('\n', t->out);
    }
    cJSON_ArrayForEach(m, get(c, RK_MEMORY)) {
        if (!has(m, RK_BEFORE_SLOPE) && !has(m, RK_AFTER_SLOPE))
            continue;
        label(t, "slope ", str(m, RK_SERIES));
        render_slope(t, m, RK_BEFORE_SLOPE);
        render_slope(t, m, RK_AFTER_SLOPE);
        const char *v = str(m, RK_LEAK);
        colored(t, strcmp(v, "new") == 0 || strcmp(v, "persisting") == 0,
                strcmp(v, "fixed") == 0, 0, leak_phrase(v));
        fputc('\n', t->out);
    }
}

static void render_speedup(textout *t, const cJSON *c)
{
    const cJSON *s = get(c, RK_SPEEDUP);
    if (!has(s, RK_VALUE))
        return;
    double v = num(s, RK_VALUE);
    label(t, "", "speedup");
    char buf[FMT_BUF];
    snprintf(buf, sizeof buf, "%.2fx", v);
    colored(t, v < 0.995, v > 1.005, 0, buf);
    fprintf(t->out, " by %s\n",
            strcmp(str(s, RK_BASIS), "step_time") == 0 ? "mean step time" : "profiled time");
}

static void render_summary(textout *t, const cJSON *c)
{
    textout_heading(t, "Summary");
    fprintf(t->out, "%*s%*s %*s %*s\n", LABEL_COLS - 7, "", VALUE_COLS, "before", VALUE_COLS,
            "after", VALUE_COLS, "change");
    render_metrics(t, c);
    render_memory(t, c);
    render_speedup(t, c);
}

/* ---- operations ---------------------------------------------------------------------------- */

static int is_status(const cJSON *op, const char *status)
{
    return strcmp(str(op, RK_STATUS), status) == 0;
}

/* The rows the operations' passes read: the comparison's own, or with ops
 * each row's brief (name, status, GPU change), the whole row built only
 * where it is written. */
typedef struct op_rows {
    const cJSON *rows;
    const compare_ops *ops;
    cJSON *briefs;         /* owned, with ops                                  */
} op_rows;

static int op_rows_init(textout *t, op_rows *r, const cJSON *c, const compare_ops *ops)
{
    *r = (op_rows){ get(c, RK_OPERATIONS), ops, NULL };
    if (!ops)
        return 0;
    if (!(r->briefs = cJSON_CreateArray()))
        goto nomem;
    for (size_t i = 0; i < compare_ops_count(ops); i++) {
        cJSON *b = compare_ops_brief(ops, i);
        if (!b || !cJSON_AddItemToArray(r->briefs, b)) {
            cJSON_Delete(b);
            goto nomem;
        }
    }
    r->rows = r->briefs;
    return 0;
nomem:
    cJSON_Delete(r->briefs);
    r->briefs = NULL;
    t->nomem = 1;
    return -1;
}

/* Row i (op, as the passes read it) whole; what it built goes to *built
 * for the caller to free. NULL out of memory. */
static const cJSON *op_rows_full(textout *t, const op_rows *r, const cJSON *op, size_t i,
                                 cJSON **built)
{
    *built = NULL;
    if (!r->ops)
        return op;
    if (!(*built = compare_ops_row(r->ops, i)))
        t->nomem = 1;
    return *built;
}

static void render_matched(textout *t, const cJSON *op, const textout_names *names, size_t i,
                           int adjusted, int gpu)
{
    char b[6][FMT_BUF], calls[2 * FMT_BUF + 8];
    const cJSON *bf = get(op, RK_BEFORE), *af = get(op, RK_AFTER);
    fputs("  ", t->out);
    textout_names_put(t, names, i);
    snprintf(calls, sizeof calls, "%s/%s", fmt_count(b[0], textout_u64(num(bf, RK_CALLS))),
             fmt_count(b[1], textout_u64(num(af, RK_CALLS))));
    fprintf(t->out, "  %15s %10s %10s %10s %10s ", calls, value(b[2], "ns", num(bf, RK_TOTAL_NS)),
            value(b[3], "ns", num(af, RK_TOTAL_NS)), value(b[4], "ns", num(bf, RK_MEAN_NS)),
            value(b[5], "ns", num(af, RK_MEAN_NS)));
    int sig = cJSON_IsTrue(get(op, RK_SIGNIFICANT));
    int slower = sig && is_status(op, "slower"), faster = sig && is_status(op, "faster");
    fprintf(t->out, "%8s", percent(b[0], op, RK_RELATIVE));
    if (adjusted) { /* what was tested: the change against the runs' speeds */
        fputc(' ', t->out);
        colored(t, slower, faster, 8, strcmp(str(op, RK_METHOD), "speed_adjusted") == 0
                                          ? percent(b[3], op, RK_RELATIVE_TO_RUN)
                                          : "");
    }
    fprintf(t->out, " %7s", p_value(b[1], op, RK_P_VALUE));
    if (gpu)
        fprintf(t->out, " %9s", percent(b[2], op, RK_GPU_RELATIVE));
    if (sig) {
        fputs("  ", t->out);
        colored(t, slower, faster, 0, str(op, RK_STATUS));
    }
    fputc('\n', t->out);
}

static void render_one_sided(textout *t, const op_rows *rows, const char *status,
                             const char *title, const char *side, const textout_names *names)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF];
    int n = 0;
    const cJSON *op, *ops = rows->rows;
    cJSON_ArrayForEach(op, ops)
        n += is_status(op, status);
    if (n == 0)
        return;
    textout_heading(t, title);
    fprintf(t->out, " (%d)\n", n);
    size_t i = 0;
    cJSON_ArrayForEach(op, ops) {
        size_t at = i++;
        if (!is_status(op, status))
            continue;
        cJSON *built;
        const cJSON *s = get(op_rows_full(t, rows, op, at, &built), side);
        fputs("  ", t->out);
        textout_names_put(t, names, at);
        fprintf(t->out, "  %s calls, total %s, mean %s\n", value(b1, "count", num(s, RK_CALLS)),
                value(b2, "ns", num(s, RK_TOTAL_NS)), value(b3, "ns", num(s, RK_MEAN_NS)));
        cJSON_Delete(built);
    }
}

static void render_operations(textout *t, const cJSON *c, const compare_ops *all)
{
    op_rows rows;
    if (op_rows_init(t, &rows, c, all) < 0)
        return;
    const cJSON *ops = rows.rows, *op, *o = get(c, RK_OPTIONS);
    const cJSON *tests = get(c, RK_OPERATION_TESTS);
    int nw = textout_name_width(t, ops, RK_NAME, (int)strlen("operation"), NAME_MAX_COLS);
    textout_names names;
    if (textout_names_init(t, &names, ops, RK_NAME, nw) < 0) {
        cJSON_Delete(rows.briefs);
        return;
    }
    int matched = 0, gpu = 0;
    cJSON_ArrayForEach(op, ops) {
        matched += !is_status(op, "added") && !is_status(op, "removed");
        gpu |= has(op, RK_GPU_RELATIVE);
    }
    int adjusted = num(tests, RK_SPEED_ADJUSTED) > 0;
    textout_heading(t, "Operations");
    fprintf(t->out, " (mean per call after warm-up; significant: %sbeyond the %g%% noise floor%s",
            adjusted ? "the change against the runs' speed " : "", num(o, RK_NOISE_PCT),
            strcmp(str(c, RK_METHOD), "within_run") == 0 ? " within each run" : "");
    if (num(tests, RK_TESTED) > 1)
        fprintf(t->out, ", at a false discovery rate of %g%% over %.0f tested, weighted by share "
                "of the time", 100.0 * num(o, RK_ALPHA), num(tests, RK_TESTED));
    else
        fprintf(t->out, " at p < %.2g", num(tests, RK_ALPHA_EACH));
    fputs(")\n", t->out);
    if (matched == 0) {
        fputs("  none in both runs\n", t->out);
    } else {
        textout_sgr(t, "2");
        fprintf(t->out, "  %-*s  %15s %10s %10s %10s %10s %8s", nw, "operation", "calls",
                "total", "total", "mean", "mean", "change");
        if (adjusted)
            fprintf(t->out, " %8s", "vs run");
        fprintf(t->out, " %7s", "p");
        if (gpu)
            fprintf(t->out, " %9s", "GPU/call");
        fprintf(t->out, "\n  %-*s  %15s %10s %10s %10s %10s", nw, "", "before/after", "before",
                "after", "before", "after");
        if (gpu)
            fprintf(t->out, " %8s%s %7s %9s", "", adjusted ? "         " : "", "", "change");
        textout_sgr(t, "0");
        fputc('\n', t->out);
        size_t i = 0;
        cJSON_ArrayForEach(op, ops) {
            if (!is_status(op, "added") && !is_status(op, "removed")) {
                cJSON *built;
                const cJSON *row = op_rows_full(t, &rows, op, i, &built);
                if (row)
                    render_matched(t, row, &names, i, adjusted, gpu);
                cJSON_Delete(built);
            }
            i++;
        }
    }
    render_one_sided(t, &rows, "added", "Operations only in after", "after", &names);
    render_one_sided(t, &rows, "removed", "Operations only in before", "before", &names);
    textout_names_free(&names);
    cJSON_Delete(rows.briefs);
}

/* ---- bottlenecks and the regression check ------------------------------------------------------ */

static void render_findings(textout *t, const cJSON *list, const char *what, const char *color)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, list) {
        fputs("  ", t->out);
        textout_sgr(t, color);
        fprintf(t->out, "%-11s", what);
        textout_sgr(t, "0");
        char line[640];
        snprintf(line, sizeof line, "%s [%s]", str(f, RK_TITLE), str(f, RK_RULE));
        if (*str(f, RK_SEVERITY_BEFORE) && strcmp(str(f, RK_SEVERITY_BEFORE), str(f, RK_SEVERITY)))
            snprintf(line + strlen(line), sizeof line - strlen(line), " (%s, was %s)",
                     str(f, RK_SEVERITY), str(f, RK_SEVERITY_BEFORE));
        textout_put_wrapped(t, line, 13, 13);
    }
}

static void render_bottlenecks(textout *t, const cJSON *c)
{
    const cJSON *b = get(c, RK_BOTTLENECKS);
    int nf = cJSON_GetArraySize(get(b, RK_FIXED)), nn = cJSON_GetArraySize(get(b, RK_NEW));
    int np = cJSON_GetArraySize(get(b, RK_PERSISTING));
    textout_heading(t, "Bottlenecks");
    fprintf(t->out, " (%d fixed, %d new, %d persisting)\n", nf, nn, np);
    if (nf + nn + np == 0) {
        fputs("  none in either run\n", t->out);
        return;
    }
    render_findings(t, get(b, RK_FIXED), "fixed", "32");
    render_findings(t, get(b, RK_NEW), "new", "31");
    render_findings(t, get(b, RK_PERSISTING), "persisting", "33");
}

/* The slowdowns that failed the check. */
static void render_reasons(textout *t, const cJSON *reasons)
{
    char b1[FMT_BUF], b2[FMT_BUF];
    const cJSON *why;
    textout_names names;
    if (textout_names_init(t, &names, reasons, RK_NAME, NAME_MAX_COLS) < 0)
        return;
    size_t i = 0;
    cJSON_ArrayForEach(why, reasons) {
        fputs("  ", t->out);
        textout_names_put(t, &names, i++);
        fprintf(t->out, "  %s slower (%s", percent(b1, why, RK_RELATIVE), p_phrase(b2, why));
        if (strcmp(str(why, RK_METHOD), "within_run") == 0)
            fprintf(t->out, "; at least %s", percent(b1, why, RK_RELATIVE_LOW));
        else if (strcmp(str(why, RK_METHOD), "speed_adjusted") == 0)
            fputs(", against the runs' speed", t->out);
        fputs(")\n", t->out);
    }
    textout_names_free(&names);
}

static void render_regression(textout *t, const cJSON *c)
{
    const cJSON *r = get(c, RK_REGRESSION);
    if (!has(r, RK_THRESHOLD_PCT))
        return;
    textout_heading(t, "Regression check");
    fprintf(t->out, " (--fail-on-regression %g%%): ", num(r, RK_THRESHOLD_PCT));
    double uncounted = num(r, RK_WITHIN_RUN_UNCOUNTED);
    if (!cJSON_IsTrue(get(r, RK_REGRESSED))) {
        colored(t, 0, 1, 0, "passed");
        fprintf(t->out, ", nothing significantly slower by more than %g%%\n",
                num(r, RK_THRESHOLD_PCT));
    } else {
        colored(t, 1, 0, 0, "FAILED");
        fputc('\n', t->out);
        render_reasons(t, get(r, RK_REASONS));
    }
    if (uncounted > 0) { /* the default stays conservative: say why */
        char why[320];
        snprintf(why, sizeof why, "%.0f operation%s slower past %g%% within the runs not "
                 "counted: with one run a side, one process may simply have run slower (repeat "
                 "the runs, or --ops-within-run to count them)", uncounted,
                 uncounted == 1 ? "" : "s", num(r, RK_THRESHOLD_PCT));
        fputs("  ", t->out);
        textout_put_wrapped(t, why, 2, 2);
    }
}



prof_err compare_render_text(FILE *out, const cJSON *cmp, const report_style *style)
{
    return compare_render_text_ops(out, cmp, NULL, style);
}

prof_err compare_render_text_ops(FILE *out, const cJSON *cmp, const compare_ops *ops,
                                 const report_style *style)
{
    textout t;
    textout_init(&t, out, style);
    render_header(&t, cmp);
    /* why the sides should not be compared, before anything else */
    textout_list(&t, "Warnings: these runs do not compare", get(cmp, RK_WARNINGS), "!", "1;31");
    textout_notes(&t, get(cmp, RK_NOTES));
    render_summary(&t, cmp);
    render_operations(&t, cmp, ops);
    render_bottlenecks(&t, cmp);
    render_regression(&t, cmp);
    return textout_finish(&t);
}
