/* report_text.c - the text of `prof analyze` (see report_text.h). It reads
 * only the JSON report, as every other view does, and writes sections in
 * the order a person asks the questions: what was recorded, how fast a
 * step is, where the time goes, what is wrong, what is missing. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/report_json.h"
#include "output/report_text.h"
#include "util/fmt.h"
#include "util/jsonesc.h"

#define DEFAULT_WIDTH 100
#define LABEL_COLS 17      /* summary labels: "  profiled time  " */
#define NAME_MAX_COLS 32   /* operation names beyond this are cut  */
#define BAR_CELLS 10       /* a full bar is 100% of profiled time  */
#define FINDING_INDENT 10  /* bottleneck text under "  MEDIUM  "   */

typedef struct text_ctx {
    FILE *out;
    report_style st;
    int width;
    int nomem;             /* an allocation failed: output incomplete */
} text_ctx;

/* ---- reading the report ---------------------------------------------------- */

static const cJSON *get(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0.0;
}

static const char *str(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(get(o, key));
    return s ? s : "";
}

static uint64_t to_u64(double v)
{
    if (!(v > 0))
        return 0;
    return v >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(v);
}

static const char *dur(char buf[FMT_BUF], double ns)
{
    return fmt_duration(buf, to_u64(ns));
}

static const char *bytes(char buf[FMT_BUF], double b)
{
    return fmt_bytes(buf, to_u64(b));
}

static const char *count(char buf[FMT_BUF], double n)
{
    return fmt_count(buf, to_u64(n));
}

/* ---- safe strings ------------------------------------------------------------- */

/* A copy of s with control characters (C0, DEL, C1) and bytes that are not
 * valid UTF-8 written as \xNN; NULL when out of memory (noted in t). */
static char *sanitize(text_ctx *t, const char *s)
{
    size_t n = strlen(s);
    char *r = malloc(4 * n + 1);
    if (!r) {
        t->nomem = 1;
        return NULL;
    }
    size_t o = 0;
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

/* Columns taken by a sanitized string: one per code point. */
static int cols(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Bytes of the first `want` code points of s. */
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

/* Writes s word by word from column `col`, breaking lines before `width`
 * and indenting continuation lines by `indent`; ends the line. */
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

/* ---- styling -------------------------------------------------------------------- */

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

static void label(text_ctx *t, const char *name)
{
    fprintf(t->out, "  %-*s", LABEL_COLS - 2, name);
}

/* A bar of BAR_CELLS columns for a share 0..1: eighths of a block on a
 * Unicode terminal, '#' per whole cell otherwise. */
static void put_bar(text_ctx *t, double share)
{
    share = fmin(1.0, fmax(0.0, share));
    int used;
    sgr(t, "32");
    if (t->st.unicode) {
        int eighths = (int)lround(share * BAR_CELLS * 8);
        for (int i = 0; i < eighths / 8; i++)
            fputs("\xe2\x96\x88", t->out); /* U+2588 full block */
        used = eighths / 8;
        if (eighths % 8) {
            /* U+258F (one eighth) down to U+2589 (seven eighths) */
            fprintf(t->out, "\xe2\x96%c", (char)(0x90 - eighths % 8));
            used++;
        }
    } else {
        used = (int)lround(share * BAR_CELLS);
        for (int i = 0; i < used; i++)
            fputc('#', t->out);
    }
    sgr(t, "0");
    fprintf(t->out, "%*s", BAR_CELLS - used, "");
}

/* ---- header: the profiles ------------------------------------------------------- */

static void put_when(text_ctx *t, const cJSON *meta)
{
    double epoch = num(get(meta, "clock"), "origin_epoch_ns");
    char when[64];
    struct tm tm;
    /* Metadata is user data: keep the conversion to time_t in range. */
    if (epoch > 0 && epoch < 253402300800e9) {
        time_t secs = (time_t)(epoch / 1e9);
        if (gmtime_r(&secs, &tm) && strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm))
            fprintf(t->out, " %s", when);
    }
}

static void render_completeness(text_ctx *t, const cJSON *p)
{
    char b[FMT_BUF];
    fprintf(t->out, "format %s, ", str(p, "format_version"));
    if (cJSON_IsTrue(get(p, "clean"))) {
        fputs("closed cleanly", t->out);
    } else if (cJSON_IsTrue(get(p, "truncated"))) {
        fprintf(t->out, "cut short (%s unreadable: ", bytes(b, num(p, "bytes_lost")));
        put_safe(t, str(p, "detail"));
        fputs(")", t->out);
    } else {
        fputs("not closed cleanly (no footer), every block intact", t->out);
    }
}

static void render_origin(text_ctx *t, const cJSON *meta)
{
    fputs("  recorded", t->out);
    put_when(t, meta);
    const char *host = str(meta, "host");
    if (*host) {
        fputs(" on ", t->out);
        put_safe(t, host);
    }
    if (cJSON_IsNumber(get(meta, "pid")))
        fprintf(t->out, ", pid %.0f", num(meta, "pid"));
    if (cJSON_IsNumber(get(meta, "rank")))
        fprintf(t->out, ", rank %.0f of %.0f", num(meta, "rank"),
                fmax(1.0, num(meta, "world_size")));
    fputc('\n', t->out);
    const cJSON *argv = get(meta, "argv"), *a;
    if (!cJSON_IsArray(argv) || !argv->child)
        return;
    fputs("  command ", t->out);
    cJSON_ArrayForEach(a, argv) {
        if (cJSON_IsString(a)) {
            fputc(' ', t->out);
            put_safe(t, a->valuestring);
        }
    }
    fputc('\n', t->out);
}

static void render_profiles(text_ctx *t, const cJSON *r)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, get(r, "profiles")) {
        sgr(t, "1");
        fputs("prof analyze ", t->out);
        put_safe(t, str(p, "path"));
        sgr(t, "0");
        fputs(": ", t->out);
        render_completeness(t, p);
        fputc('\n', t->out);
        render_origin(t, get(p, "metadata"));
    }
}

/* ---- summary ---------------------------------------------------------------------- */

static void render_steps(text_ctx *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF];
    label(t, "steps");
    fprintf(t->out, "%s", count(b1, num(s, "steps")));
    if (num(s, "sampled_steps") != num(s, "steps"))
        fprintf(t->out, " (%s sampled)", count(b2, num(s, "sampled_steps")));
    fputc('\n', t->out);
    if (num(s, "steps") == 0)
        return;
    const cJSON *st = get(s, "step_time");
    label(t, "step time");
    fprintf(t->out, "mean %s, p50 %s, p95 %s", dur(b1, num(st, "mean_ns")),
            dur(b2, num(st, "p50_ns")), dur(b3, num(st, "p95_ns")));
    fprintf(t->out, " (min %s, max %s)\n", dur(b1, num(st, "min_ns")),
            dur(b2, num(st, "max_ns")));
}

static void render_times(text_ctx *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF];
    label(t, "wall time");
    fprintf(t->out, "%s\n", dur(b1, num(s, "wall_ns")));
    label(t, "profiled time");
    double threads = num(s, "threads");
    fprintf(t->out, "%s in regions on %s thread%s\n", dur(b1, num(s, "profiled_ns")),
            count(b2, threads), threads == 1 ? "" : "s");
    static const char *const kinds[] = { "compute", "data", "sync", "comm", "io" };
    const cJSON *by_kind = get(s, "time_by_kind");
    label(t, "time by kind");
    int shown = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        double share = num(get(by_kind, kinds[i]), "share");
        if (share <= 0)
            continue;
        fprintf(t->out, "%s%s %.1f%%", shown++ ? ", " : "", kinds[i], 100.0 * share);
    }
    fputs(shown ? "\n" : "none\n", t->out);
}

static void render_memory_peaks(text_ctx *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF];
    const cJSON *m, *series = get(s, "memory");
    int width = 0;
    cJSON_ArrayForEach(m, series) {
        char *safe = sanitize(t, str(m, "series"));
        if (safe && cols(safe) > width)
            width = cols(safe);
        free(safe);
    }
    width = width > NAME_MAX_COLS ? NAME_MAX_COLS : width;
    int first = 1;
    cJSON_ArrayForEach(m, series) {
        label(t, first ? "memory peak" : "");
        first = 0;
        put_cell(t, str(m, "series"), width);
        fprintf(t->out, "  %s at %s (final %s)\n", bytes(b1, num(m, "peak_bytes")),
                dur(b2, num(m, "peak_t_ns")), bytes(b3, num(m, "final_bytes")));
    }
}

static void render_gpu(text_ctx *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF], b4[FMT_BUF];
    label(t, "GPU");
    if (!cJSON_IsTrue(get(s, "has_gpu"))) {
        fputs("no activity recorded\n", t->out);
        return;
    }
    const cJSON *g;
    int first = 1;
    cJSON_ArrayForEach(g, get(s, "gpu")) {
        if (!first)
            label(t, "");
        first = 0;
        fprintf(t->out, "device %.0f: %s kernels (%s), busy %.1f%%, %s idle gaps (%s)", num(g, "device"),
                count(b1, num(g, "kernels")), dur(b2, num(g, "kernel_ns")),
                100.0 * num(g, "busy_share"), count(b3, num(g, "idle_gaps")),
                dur(b4, num(g, "idle_gap_ns")));
        fprintf(t->out, ", copies %s\n", bytes(b1, num(g, "memcpy_bytes")));
    }
}

static void render_sync(text_ctx *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF];
    const cJSON *sync = get(s, "sync");
    if (num(sync, "count") == 0)
        return;
    label(t, "CPU-GPU sync");
    int gpu = strcmp(str(sync, "basis"), "gpu_busy") == 0;
    fprintf(t->out, "%s syncs (%.2f per step), blocked %s = %.1f%% of %s time\n",
            count(b1, num(sync, "count")), num(sync, "per_step"),
            dur(b2, num(sync, "blocked_ns")), 100.0 * num(sync, "share"),
            gpu ? "GPU busy" : "profiled");
}

static void render_events(text_ctx *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF];
    label(t, "events");
    fprintf(t->out, "%s (%s regions, %s dropped)\n", count(b1, num(s, "events")),
            count(b2, num(s, "region_events")), count(b3, num(s, "dropped_events")));
}

static void render_summary(text_ctx *t, const cJSON *r)
{
    const cJSON *s = get(r, "summary");
    heading(t, "Summary\n");
    render_steps(t, s);
    render_times(t, s);
    render_memory_peaks(t, s);
    render_gpu(t, s);
    render_sync(t, s);
    render_events(t, s);
}

/* ---- operations ---------------------------------------------------------------------- */

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

static void render_op(text_ctx *t, const cJSON *op, int nw)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF], b4[FMT_BUF], b5[FMT_BUF];
    fputs("  ", t->out);
    put_cell(t, str(op, "name"), nw);
    fprintf(t->out, "  %-7s %10s  %5.1f%% ", str(op, "kind"), dur(b1, num(op, "self_ns")),
            100.0 * num(op, "self_share"));
    put_bar(t, num(op, "self_share"));
    fprintf(t->out, " %10s %9s %9s %9s\n", dur(b2, num(op, "incl_ns")),
            count(b3, num(op, "calls")), dur(b4, num(op, "mean_ns")), dur(b5, num(op, "p95_ns")));
}

static void render_operations(text_ctx *t, const cJSON *r)
{
    const cJSON *ops = get(r, "operations"), *op;
    int n = cJSON_GetArraySize(ops);
    double total = num(r, "operations_total");
    heading(t, "Top operations by self time");
    if (n == 0) {
        fputs("\n  no regions recorded\n", t->out);
        return;
    }
    if (total > n)
        fprintf(t->out, " (%d of %.0f)", n, total);
    fputc('\n', t->out);
    int nw = name_width(t, ops);
    sgr(t, "2");
    fprintf(t->out, "  %-*s  %-7s %10s  %-*s %10s %9s %9s %9s", nw, "operation", "kind", "self",
            7 + BAR_CELLS, "share", "incl", "calls", "mean", "p95");
    sgr(t, "0");
    fputc('\n', t->out);
    cJSON_ArrayForEach(op, ops)
        render_op(t, op, nw);
}

/* ---- bottlenecks, ranks, notes ---------------------------------------------------------- */

static void put_severity(text_ctx *t, const char *severity)
{
    const char *color = strcmp(severity, "high") == 0     ? "1;31"
                        : strcmp(severity, "medium") == 0 ? "33"
                                                          : "36";
    char up[16];
    size_t i = 0;
    for (; severity[i] && i < sizeof up - 1; i++)
        up[i] = (char)(severity[i] >= 'a' && severity[i] <= 'z' ? severity[i] - 32 : severity[i]);
    up[i] = '\0';
    fputs("  ", t->out);
    sgr(t, color);
    fprintf(t->out, "%-*s", FINDING_INDENT - 2, up);
    sgr(t, "0");
}

static void render_bottlenecks(text_ctx *t, const cJSON *r)
{
    const cJSON *list = get(r, "bottlenecks"), *f;
    int n[3] = { 0, 0, 0 };
    cJSON_ArrayForEach(f, list) {
        const char *sev = str(f, "severity");
        n[strcmp(sev, "high") == 0 ? 0 : strcmp(sev, "medium") == 0 ? 1 : 2]++;
    }
    heading(t, "Bottlenecks");
    if (!list || !list->child) {
        fputs("\n  none found at the current thresholds\n", t->out);
        return;
    }
    fprintf(t->out, " (%d high, %d medium, %d low)\n", n[0], n[1], n[2]);
    cJSON_ArrayForEach(f, list) {
        put_severity(t, str(f, "severity"));
        char title[512];
        snprintf(title, sizeof title, "%s [%s]", str(f, "title"), str(f, "rule"));
        put_wrapped(t, title, FINDING_INDENT, FINDING_INDENT);
        fprintf(t->out, "%*s", FINDING_INDENT, "");
        put_wrapped(t, str(f, "recommendation"), FINDING_INDENT, FINDING_INDENT);
    }
}

static void render_ranks(text_ctx *t, const cJSON *r)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF];
    const cJSON *ranks = get(r, "ranks"), *k;
    if (!cJSON_IsArray(ranks) || !ranks->child)
        return;
    heading(t, "Ranks\n");
    sgr(t, "2");
    fprintf(t->out, "  %-6s %9s %10s %10s  %s", "rank", "steps", "mean step", "p50 step", "file");
    sgr(t, "0");
    fputc('\n', t->out);
    cJSON_ArrayForEach(k, ranks) {
        fprintf(t->out, "  %-6.0f %9s %10s %10s  ", num(k, "rank"), count(b1, num(k, "steps")),
                dur(b2, num(k, "mean_step_ns")), dur(b3, num(k, "p50_step_ns")));
        put_safe(t, str(k, "path"));
        fputc('\n', t->out);
    }
}

static void render_notes(text_ctx *t, const cJSON *r)
{
    const cJSON *notes = get(r, "notes"), *n;
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

prof_err report_render_text(FILE *out, const cJSON *report, const report_style *style)
{
    text_ctx t = { out, { 0, 0, 0 }, DEFAULT_WIDTH, 0 };
    if (style) {
        t.st = *style;
        if (style->width > 0)
            t.width = style->width;
    }
    render_profiles(&t, report);
    render_summary(&t, report);
    render_operations(&t, report);
    render_bottlenecks(&t, report);
    render_ranks(&t, report);
    render_notes(&t, report);
    if (t.nomem)
        return PROF_ERR_NOMEM;
    return ferror(out) ? PROF_ERR_IO : PROF_OK;
}
