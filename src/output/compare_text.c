/* compare_text.c - the text of `prof compare` (see compare_text.h). It
 * reads only the comparison object, and answers in order: are these two
 * runs comparable, did the step get faster, which operations changed, which
 * problems went away or came, and did the run regress. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output/compare_text.h"
#include "util/fmt.h"
#include "util/jsonesc.h"

#define DEFAULT_WIDTH 100
#define LABEL_COLS 22      /* "  mean step time      "                */
#define NAME_MAX_COLS 32   /* operation names beyond this are cut      */
#define VALUE_COLS 12      /* before / after / change columns          */

typedef struct text_ctx {
    FILE *out;
    report_style st;
    int width;
    int nomem;
} text_ctx;

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

static uint64_t to_u64(double v)
{
    if (!(v > 0))
        return 0;
    return v >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(v);
}

/* A value of a unit ("ns", "bytes", "count") into buf. */
static const char *value(char buf[FMT_BUF], const char *unit, double v)
{
    if (strcmp(unit, "ns") == 0)
        return fmt_duration(buf, to_u64(v));
    if (strcmp(unit, "bytes") == 0)
        return fmt_bytes(buf, to_u64(v));
    return fmt_count(buf, to_u64(v));
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

static const char *p_value(char buf[FMT_BUF], const cJSON *o)
{
    if (!has(o, "p_value"))
        snprintf(buf, FMT_BUF, "-");
    else if (num(o, "p_value") < 0.001)
        snprintf(buf, FMT_BUF, "<0.001");
    else
        snprintf(buf, FMT_BUF, "%.3f", num(o, "p_value"));
    return buf;
}

/* "p < 0.001", "p = 0.024" */
static const char *p_phrase(char buf[FMT_BUF], const cJSON *o)
{
    double p = num(o, "p_value");
    if (!has(o, "p_value"))
        snprintf(buf, FMT_BUF, "no test");
    else if (p < 0.001)
        snprintf(buf, FMT_BUF, "p < 0.001");
    else
        snprintf(buf, FMT_BUF, "p = %.3f", p);
    return buf;
}

/* ---- safe strings ----------------------------------------------------------- */

/* A copy of s with control characters and bytes that are not valid UTF-8
 * written as \xNN; NULL when out of memory (noted in t). */
static char *sanitize(text_ctx *t, const char *s)
{
    size_t n = strlen(s), o = 0;
    char *r = malloc(4 * n + 1);
    if (!r) {
        t->nomem = 1;
        return NULL;
    }
    const char *end = s + n;
    while (*s) {
        size_t len = jsonesc_utf8_len((const unsigned char *)s, (size_t)(end - s));
        unsigned char c = (unsigned char)s[0];
        int c1 = len == 2 && c == 0xC2 && (unsigned char)s[1] < 0xA0;
        if (len == 0 || c1 || (len == 1 && (c < 0x20 || c == 0x7F))) {
            size_t k = c1 ? 2 : 1;
            for (size_t i = 0; i < k; i++)
                o += (size_t)sprintf(r + o, "\\x%02x", (unsigned char)s[i]);
            s += k;
            continue;
        }
        memcpy(r + o, s, len);
        o += len;
        s += len;
    }
    r[o] = '\0';
    return r;
}

static int cols(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static size_t prefix_bytes(const char *s, int want)
{
    size_t i = 0;
    int n = 0;
    while (s[i]) {
        if (((unsigned char)s[i] & 0xC0) != 0x80 && n++ == want)
            break;
        i++;
    }
    return i;
}

static void put_safe(text_ctx *t, const char *s)
{
    char *safe = sanitize(t, s);
    if (safe)
        fputs(safe, t->out);
    free(safe);
}

/* s in a cell of `width` columns, left-aligned, cut with an ellipsis. */
static void put_cell(text_ctx *t, const char *s, int width)
{
    char *safe = sanitize(t, s);
    if (!safe)
        return;
    int c = cols(safe);
    if (c > width) {
        fwrite(safe, 1, prefix_bytes(safe, width - 1), t->out);
        fputs(t->st.unicode ? "\xe2\x80\xa6" : "~", t->out);
        c = width;
    } else {
        fputs(safe, t->out);
    }
    fprintf(t->out, "%*s", width - c, "");
    free(safe);
}

/* Writes s word by word from column `col`, breaking before the width and
 * indenting continuation lines by `indent`; ends the line. */
static void put_wrapped(text_ctx *t, const char *s, int col, int indent)
{
    char *safe = sanitize(t, s);
    if (!safe)
        return;
    int start = col;
    for (char *w = safe; *w;) {
        size_t len = strcspn(w, " ");
        if (len == 0) {
            w++;
            continue;
        }
        char saved = w[len];
        w[len] = '\0';
        int wc = cols(w);
        if (col > start && col + 1 + wc > t->width) {
            fprintf(t->out, "\n%*s", indent, "");
            col = start = indent;
        } else if (col > start) {
            fputc(' ', t->out);
            col++;
        }
        fputs(w, t->out);
        col += wc;
        w[len] = saved;
        w += len;
    }
    fputc('\n', t->out);
    free(safe);
}

/* ---- styling ------------------------------------------------------------------ */

static void sgr(text_ctx *t, const char *code)
{
    if (t->st.color)
        fprintf(t->out, "\033[%sm", code);
}

static void heading(text_ctx *t, const char *title)
{
    fputc('\n', t->out);
    sgr(t, "1");
    fputs(title, t->out);
    sgr(t, "0");
}

/* s in `width` columns (negative: left-aligned, 0: as it is), red for
 * worse, green for better. */
static void colored(text_ctx *t, int worse, int better, int width, const char *s)
{
    if (worse || better)
        sgr(t, worse ? "31" : "32");
    fprintf(t->out, "%*s", width, s);
    if (worse || better)
        sgr(t, "0");
}

static void label(text_ctx *t, const char *prefix, const char *name)
{
    char *safe = sanitize(t, name);
    if (!safe)
        return;
    int c = (int)strlen(prefix) + cols(safe);
    fprintf(t->out, "  %s%s%*s", prefix, safe, c < LABEL_COLS - 2 ? LABEL_COLS - 2 - c : 1, "");
    free(safe);
}

/* ---- the runs and the notes --------------------------------------------------------- */

static void render_run(text_ctx *t, const char *which, const cJSON *r)
{
    char b[FMT_BUF];
    fprintf(t->out, "  %-8s ", which);
    put_safe(t, str(r, "path"));
    fputs(": ", t->out);
    if (*str(r, "command")) {
        put_safe(t, str(r, "command"));
        fputs(", ", t->out);
    }
    fprintf(t->out, "%s steps", fmt_count(b, to_u64(num(r, "steps"))));
    if (num(r, "sampled_steps") != num(r, "steps"))
        fprintf(t->out, " (%s sampled)", fmt_count(b, to_u64(num(r, "sampled_steps"))));
    fputs(cJSON_IsFalse(get(r, "clean")) ? ", not closed cleanly\n" : "\n", t->out);
}

static void render_header(text_ctx *t, const cJSON *c)
{
    sgr(t, "1");
    fputs("prof compare ", t->out);
    put_safe(t, str(get(c, "before"), "path"));
    fputs(t->st.unicode ? " \xe2\x86\x92 " : " -> ", t->out);
    put_safe(t, str(get(c, "after"), "path"));
    sgr(t, "0");
    fputc('\n', t->out);
    render_run(t, "before", get(c, "before"));
    render_run(t, "after", get(c, "after"));
}

static void render_notes(text_ctx *t, const cJSON *c)
{
    const cJSON *notes = get(c, "notes"), *n;
    if (!cJSON_IsArray(notes) || !notes->child)
        return;
    heading(t, "Notes\n");
    cJSON_ArrayForEach(n, notes) {
        if (!cJSON_IsString(n))
            continue;
        fputs("  - ", t->out);
        put_wrapped(t, n->valuestring, 4, 4);
    }
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
static void put_values(text_ctx *t, const char *unit, const cJSON *row, const char *kb,
                       const char *ka, const char *kc, int lower_is_better)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF], b4[FMT_BUF];
    fprintf(t->out, "%*s %*s ", VALUE_COLS, has(row, kb) ? value(b1, unit, num(row, kb)) : "-",
            VALUE_COLS, has(row, ka) ? value(b2, unit, num(row, ka)) : "-");
    double d = num(row, kc);
    int worse = lower_is_better && d > 0, better = lower_is_better && d < 0;
    colored(t, worse, better, VALUE_COLS, has(row, kc) ? change(b3, unit, d) : "-");
    fprintf(t->out, " %8s", percent(b4, row, "relative"));
}

static void render_step_test(text_ctx *t, const cJSON *c)
{
    char b[FMT_BUF];
    const cJSON *test = get(c, "step_time_test");
    if (!has(test, "relative"))
        return;
    if (cJSON_IsTrue(get(test, "significant"))) {
        fputc(' ', t->out);
        colored(t, num(test, "relative") > 0, num(test, "relative") < 0, 0,
                num(test, "relative") > 0 ? "slower" : "faster");
    } else {
        fputs(" no significant change", t->out);
    }
    fprintf(t->out, " (%s)", p_phrase(b, test));
}

static void render_metrics(text_ctx *t, const cJSON *c)
{
    const cJSON *row;
    cJSON_ArrayForEach(row, get(c, "summary")) {
        const char *metric = str(row, "metric");
        if (strcmp(metric, "sampled_steps") == 0 && num(row, "before") == num(row, "after"))
            continue; /* every step or the same ones sampled: no news */
        label(t, "", label_of(metric));
        int timed = strcmp(str(row, "unit"), "ns") == 0 && strncmp(metric, "step_", 5) == 0;
        put_values(t, str(row, "unit"), row, "before", "after", "change", timed);
        if (strcmp(metric, "step_mean_ns") == 0)
            render_step_test(t, c);
        fputc('\n', t->out);
    }
}

static void render_memory(text_ctx *t, const cJSON *c)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, get(c, "memory")) {
        label(t, "peak ", str(m, "series"));
        put_values(t, "bytes", m, "before_peak_bytes", "after_peak_bytes", "change_bytes", 1);
        fputc('\n', t->out);
    }
    cJSON_ArrayForEach(m, get(c, "memory")) {
        const char *v = str(m, "leak");
        if (strcmp(v, "none") == 0)
            continue;
        label(t, "leak ", str(m, "series"));
        fprintf(t->out, "%*s %*s ", VALUE_COLS, cJSON_IsTrue(get(m, "leak_before")) ? "leak" : "no",
                VALUE_COLS, cJSON_IsTrue(get(m, "leak_after")) ? "leak" : "no");
        colored(t, strcmp(v, "fixed") != 0, strcmp(v, "fixed") == 0, VALUE_COLS, v);
        fputc('\n', t->out);
    }
}

static void render_speedup(text_ctx *t, const cJSON *c)
{
    const cJSON *s = get(c, "speedup");
    if (!has(s, "value"))
        return;
    double v = num(s, "value");
    label(t, "", "speedup");
    char buf[FMT_BUF];
    snprintf(buf, sizeof buf, "%.2fx", v);
    colored(t, v < 0.995, v > 1.005, 0, buf);
    fprintf(t->out, " by %s\n",
            strcmp(str(s, "basis"), "step_time") == 0 ? "mean step time" : "profiled time");
}

static void render_summary(text_ctx *t, const cJSON *c)
{
    heading(t, "Summary");
    fprintf(t->out, "%*s%*s %*s %*s\n", LABEL_COLS - 7, "", VALUE_COLS, "before", VALUE_COLS,
            "after", VALUE_COLS, "change");
    render_metrics(t, c);
    render_memory(t, c);
    render_speedup(t, c);
}

/* ---- operations ---------------------------------------------------------------------------- */

static int is_status(const cJSON *op, const char *status)
{
    return strcmp(str(op, "status"), status) == 0;
}

static int name_width(text_ctx *t, const cJSON *ops)
{
    int width = (int)strlen("operation");
    const cJSON *op;
    cJSON_ArrayForEach(op, ops) {
        char *safe = sanitize(t, str(op, "name"));
        if (safe && cols(safe) > width)
            width = cols(safe);
        free(safe);
    }
    return width > NAME_MAX_COLS ? NAME_MAX_COLS : width;
}

static void render_matched(text_ctx *t, const cJSON *op, int nw)
{
    char b[6][FMT_BUF], calls[2 * FMT_BUF + 8];
    const cJSON *bf = get(op, "before"), *af = get(op, "after");
    fputs("  ", t->out);
    put_cell(t, str(op, "name"), nw);
    snprintf(calls, sizeof calls, "%s/%s", fmt_count(b[0], to_u64(num(bf, "calls"))),
             fmt_count(b[1], to_u64(num(af, "calls"))));
    fprintf(t->out, "  %15s %10s %10s %10s %10s ", calls, value(b[2], "ns", num(bf, "total_ns")),
            value(b[3], "ns", num(af, "total_ns")), value(b[4], "ns", num(bf, "mean_ns")),
            value(b[5], "ns", num(af, "mean_ns")));
    int sig = cJSON_IsTrue(get(op, "significant"));
    int slower = sig && is_status(op, "slower"), faster = sig && is_status(op, "faster");
    colored(t, slower, faster, 8, percent(b[0], op, "relative"));
    fprintf(t->out, " %7s", p_value(b[1], op));
    if (sig) {
        fputs("  ", t->out);
        colored(t, slower, faster, 0, str(op, "status"));
    }
    fputc('\n', t->out);
}

static void render_one_sided(text_ctx *t, const cJSON *ops, const char *status, const char *title,
                             const char *side, int nw)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF];
    int n = 0;
    const cJSON *op;
    cJSON_ArrayForEach(op, ops)
        n += is_status(op, status);
    if (n == 0)
        return;
    heading(t, title);
    fprintf(t->out, " (%d)\n", n);
    cJSON_ArrayForEach(op, ops) {
        if (!is_status(op, status))
            continue;
        const cJSON *s = get(op, side);
        fputs("  ", t->out);
        put_cell(t, str(op, "name"), nw);
        fprintf(t->out, "  %s calls, total %s, mean %s\n", fmt_count(b1, to_u64(num(s, "calls"))),
                value(b2, "ns", num(s, "total_ns")), value(b3, "ns", num(s, "mean_ns")));
    }
}

static void render_operations(text_ctx *t, const cJSON *c)
{
    const cJSON *ops = get(c, "operations"), *op, *o = get(c, "options");
    int nw = name_width(t, ops), matched = 0;
    cJSON_ArrayForEach(op, ops)
        matched += !is_status(op, "added") && !is_status(op, "removed");
    heading(t, "Operations");
    fprintf(t->out, " (mean per call; significant: p < %g and change > %g%%)\n",
            num(o, "alpha"), num(o, "noise_pct"));
    if (matched == 0) {
        fputs("  none in both runs\n", t->out);
    } else {
        sgr(t, "2");
        fprintf(t->out, "  %-*s  %15s %10s %10s %10s %10s %8s %7s", nw, "operation", "calls",
                "total", "total", "mean", "mean", "change", "p");
        fprintf(t->out, "\n  %-*s  %15s %10s %10s %10s %10s", nw, "", "before/after", "before",
                "after", "before", "after");
        sgr(t, "0");
        fputc('\n', t->out);
        cJSON_ArrayForEach(op, ops)
            if (!is_status(op, "added") && !is_status(op, "removed"))
                render_matched(t, op, nw);
    }
    render_one_sided(t, ops, "added", "Operations only in after", "after", nw);
    render_one_sided(t, ops, "removed", "Operations only in before", "before", nw);
}

/* ---- bottlenecks and the regression check ------------------------------------------------------ */

static void render_findings(text_ctx *t, const cJSON *list, const char *what, const char *color)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, list) {
        fputs("  ", t->out);
        sgr(t, color);
        fprintf(t->out, "%-11s", what);
        sgr(t, "0");
        char line[640];
        snprintf(line, sizeof line, "%s [%s]", str(f, "title"), str(f, "rule"));
        if (*str(f, "severity_before") && strcmp(str(f, "severity_before"), str(f, "severity")))
            snprintf(line + strlen(line), sizeof line - strlen(line), " (%s, was %s)",
                     str(f, "severity"), str(f, "severity_before"));
        put_wrapped(t, line, 13, 13);
    }
}

static void render_bottlenecks(text_ctx *t, const cJSON *c)
{
    const cJSON *b = get(c, "bottlenecks");
    int nf = cJSON_GetArraySize(get(b, "fixed")), nn = cJSON_GetArraySize(get(b, "new"));
    int np = cJSON_GetArraySize(get(b, "persisting"));
    heading(t, "Bottlenecks");
    fprintf(t->out, " (%d fixed, %d new, %d persisting)\n", nf, nn, np);
    if (nf + nn + np == 0) {
        fputs("  none in either run\n", t->out);
        return;
    }
    render_findings(t, get(b, "fixed"), "fixed", "32");
    render_findings(t, get(b, "new"), "new", "31");
    render_findings(t, get(b, "persisting"), "persisting", "33");
}

static void render_regression(text_ctx *t, const cJSON *c)
{
    char b1[FMT_BUF], b2[FMT_BUF];
    const cJSON *r = get(c, "regression"), *why;
    if (!has(r, "threshold_pct"))
        return;
    heading(t, "Regression check");
    fprintf(t->out, " (--fail-on-regression %g%%): ", num(r, "threshold_pct"));
    if (!cJSON_IsTrue(get(r, "regressed"))) {
        colored(t, 0, 1, 0, "passed");
        fprintf(t->out, ", nothing significantly slower by more than %g%%\n",
                num(r, "threshold_pct"));
        return;
    }
    colored(t, 1, 0, 0, "FAILED");
    fputc('\n', t->out);
    cJSON_ArrayForEach(why, get(r, "reasons")) {
        fputs("  ", t->out);
        put_cell(t, str(why, "name"), NAME_MAX_COLS);
        fprintf(t->out, "  %s slower (%s)\n", percent(b1, why, "relative"), p_phrase(b2, why));
    }
}

prof_err compare_render_text(FILE *out, const cJSON *cmp, const report_style *style)
{
    text_ctx t = { out, { 0, 0, 0 }, DEFAULT_WIDTH, 0 };
    if (style) {
        t.st = *style;
        if (style->width > 0)
            t.width = style->width;
    }
    render_header(&t, cmp);
    render_notes(&t, cmp);
    render_summary(&t, cmp);
    render_operations(&t, cmp);
    render_bottlenecks(&t, cmp);
    render_regression(&t, cmp);
    if (t.nomem)
        return PROF_ERR_NOMEM;
    return ferror(out) ? PROF_ERR_IO : PROF_OK;
}
