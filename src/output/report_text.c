/* report_text.c - the text of `prof analyze` (see report_text.h). It reads
 * only the JSON report, as every other view does, and writes sections in
 * the order a person asks the questions: what was recorded, how fast a
 * step is, where the time goes, what is wrong, what is missing. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "analysis/report_keys.h"
#include "output/report_json.h"
#include "output/report_text.h"
#include "output/textout.h"
#include "util/fmt.h"

#define LABEL_COLS 17      /* summary labels: "  profiled time  " */
#define NAME_MAX_COLS 32   /* operation names beyond this are cut  */
#define BAR_CELLS 10       /* a full bar is 100% of profiled time  */
#define FINDING_INDENT 10  /* bottleneck text under "  MEDIUM  "   */

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

static const char *dur(char buf[FMT_BUF], double ns)
{
    return fmt_duration(buf, (double)textout_u64(ns));
}

static const char *bytes(char buf[FMT_BUF], double b)
{
    return fmt_bytes(buf, textout_u64(b));
}

static const char *count(char buf[FMT_BUF], double n)
{
    return fmt_count(buf, textout_u64(n));
}

/* ---- styling -------------------------------------------------------------------- */

static void label(textout *t, const char *name)
{
    fprintf(t->out, "  %-*s", LABEL_COLS - 2, name);
}

/* A bar of BAR_CELLS columns for a share 0..1: eighths of a block on a
 * Unicode terminal, '#' per whole cell otherwise. */
static void put_bar(textout *t, double share)
{
    share = fmin(1.0, fmax(0.0, share));
    int used;
    textout_sgr(t, "32");
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
    textout_sgr(t, "0");
    fprintf(t->out, "%*s", BAR_CELLS - used, "");
}

/* ---- header: the profiles ------------------------------------------------------- */

static void put_when(textout *t, const cJSON *meta)
{
    double epoch = num(get(meta, MK_CLOCK), MK_ORIGIN_EPOCH_NS);
    char when[64];
    struct tm tm;
    /* Metadata is user data: keep the conversion to time_t in range. A
     * time before 2000 is a trace's base time never read (a cut trace
     * whose times are relative to it), not a date. */
    if (epoch >= 946684800e9 && epoch < 253402300800e9) {
        time_t secs = (time_t)(epoch / 1e9);
        if (gmtime_r(&secs, &tm) && strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm))
            fprintf(t->out, " %s", when);
    }
}

static void render_completeness(textout *t, const cJSON *p)
{
    char b[FMT_BUF];
    fprintf(t->out, "format %s, ", str(p, RK_FORMAT_VERSION));
    if (*str(p, RK_SOURCE_DAMAGED)) {
        fputs("imported from a trace cut short or damaged (", t->out);
        textout_put_safe(t, str(p, RK_SOURCE_DAMAGED));
        fputs("): what came before", t->out);
        if (!cJSON_IsTrue(get(p, RK_CLEAN)))
            fputs(", and the profile itself is not whole", t->out);
    } else if (cJSON_IsTrue(get(p, RK_CLEAN))) {
        fputs("closed cleanly", t->out);
    } else if (cJSON_IsTrue(get(p, RK_TRUNCATED))) {
        fprintf(t->out, "cut short (%s unreadable: ", bytes(b, num(p, RK_BYTES_LOST)));
        textout_put_safe(t, str(p, RK_DETAIL));
        fputs(")", t->out);
    } else {
        fputs("not closed cleanly (no footer), every block intact", t->out);
    }
}

static void render_origin(textout *t, const cJSON *meta)
{
    fputs("  recorded", t->out);
    put_when(t, meta);
    const char *host = str(meta, MK_HOST);
    if (*host) {
        fputs(" on ", t->out);
        textout_put_safe(t, host);
    }
    if (cJSON_IsNumber(get(meta, MK_PID)))
        fprintf(t->out, ", pid %.0f", num(meta, MK_PID));
    if (cJSON_IsNumber(get(meta, MK_RANK)))
        fprintf(t->out, ", rank %.0f of %.0f", num(meta, MK_RANK),
                fmax(1.0, num(meta, MK_WORLD_SIZE)));
    fputc('\n', t->out);
    const cJSON *argv = get(meta, MK_ARGV), *a;
    if (!cJSON_IsArray(argv) || !argv->child)
        return;
    fputs("  command ", t->out);
    cJSON_ArrayForEach(a, argv) {
        if (cJSON_IsString(a)) {
            fputc(' ', t->out);
            textout_put_safe(t, a->valuestring);
        }
    }
    fputc('\n', t->out);
}

static void render_profiles(textout *t, const cJSON *r)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, get(r, RK_PROFILES)) {
        textout_sgr(t, "1");
        fputs("prof analyze ", t->out);
        textout_put_safe(t, str(p, RK_PATH));
        textout_sgr(t, "0");
        fputs(": ", t->out);
        render_completeness(t, p);
        fputc('\n', t->out);
        render_origin(t, get(p, RK_METADATA));
    }
}

/* ---- summary ---------------------------------------------------------------------- */

/* The step count and what it leaves out (rules.md §1): steps that kept no
 * events, and the part after the last prof_step, which is no step ("200"
 * alone would leave a reader of 201 step records wondering). */
static void render_step_count(textout *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF];
    double steps = num(s, RK_STEPS), sampled = num(s, RK_SAMPLED_STEPS);
    double incomplete = num(s, RK_INCOMPLETE_STEPS);
    const char *sep = " (";
    label(t, "steps");
    fputs(count(b1, steps), t->out);
    if (sampled != steps) {
        fprintf(t->out, "%s%s sampled", sep, count(b2, sampled));
        sep = "; ";
    }
    if (incomplete > 0) {
        fprintf(t->out, "%s%s incomplete not counted", sep, count(b2, incomplete));
        sep = "; ";
    }
    fputs(sep[0] == ';' ? ")\n" : "\n", t->out);
}

static void render_steps(textout *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF];
    render_step_count(t, s);
    if (num(s, RK_STEPS) == 0)
        return;
    const cJSON *st = get(s, RK_STEP_TIME);
    label(t, "step time");
    fprintf(t->out, "mean %s, p50 %s, p95 %s", dur(b1, num(st, RK_MEAN_NS)),
            dur(b2, num(st, RK_P50_NS)), dur(b3, num(st, RK_P95_NS)));
    fprintf(t->out, " (min %s, max %s)\n", dur(b1, num(st, RK_MIN_NS)),
            dur(b2, num(st, RK_MAX_NS)));
}

static void render_times(textout *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF];
    label(t, "wall time");
    fprintf(t->out, "%s\n", dur(b1, num(s, RK_WALL_NS)));
    label(t, "profiled time");
    double threads = num(s, RK_THREADS);
    fprintf(t->out, "%s in regions on %s thread%s\n", dur(b1, num(s, RK_PROFILED_NS)),
            count(b2, threads), threads == 1 ? "" : "s");
    static const char *const kinds[] = { RK_COMPUTE, RK_DATA, RK_SYNC, RK_COMM, RK_IO };
    const cJSON *by_kind = get(s, RK_TIME_BY_KIND);
    label(t, "time by kind");
    int shown = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        double share = num(get(by_kind, kinds[i]), RK_SHARE);
        if (share <= 0)
            continue;
        fprintf(t->out, "%s%s %.1f%%", shown++ ? ", " : "", kinds[i], 100.0 * share);
    }
    fputs(shown ? "\n" : "none\n", t->out);
}

static void render_memory_peaks(textout *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF];
    const cJSON *m, *series = get(s, RK_MEMORY);
    int width = textout_name_width(t, series, RK_SERIES, 0, NAME_MAX_COLS);
    int first = 1;
    cJSON_ArrayForEach(m, series) {
        label(t, first ? "memory peak" : "");
        first = 0;
        textout_put_cell(t, str(m, RK_SERIES), width);
        fprintf(t->out, "  %s at %s (final %s)\n", bytes(b1, num(m, RK_PEAK_BYTES)),
                dur(b2, num(m, RK_PEAK_T_NS)), bytes(b3, num(m, RK_FINAL_BYTES)));
    }
}

/* What a device's idle and exposed shares are of (rules.md §4.5). */
static const char *basis_words(const cJSON *g)
{
    return strcmp(str(g, RK_BASIS), "steps") == 0 ? "of step time" : "of its active span";
}

/* Communication kernels of a device: their time, how much computation
 * overlaps, and what is left exposed (rules.md §4.10). */
static void render_gpu_comm(textout *t, const cJSON *g)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF];
    label(t, "");
    fprintf(t->out, "  communication: %s kernels, %s, %.1f%% overlapped; exposed %s = %.1f%% %s\n",
            count(b1, num(g, RK_COMM_KERNELS)), dur(b2, num(g, RK_COMM_NS)),
            100.0 * num(g, RK_COMM_OVERLAP_SHARE), dur(b3, num(g, RK_COMM_EXPOSED_NS)),
            100.0 * num(g, RK_COMM_EXPOSED_SHARE), basis_words(g));
}

/* A kernel type's name for the text: HTA's "A overlapping B" as "A & B". */
static void put_kernel_type(FILE *out, const char *type)
{
    static const char sep[] = " overlapping ";
    for (const char *p = type; *p;) {
        if (strncmp(p, sep, sizeof sep - 1) == 0) {
            fputs(" & ", out);
            p += sizeof sep - 1;
        } else {
            fputc(*p++, out);
        }
    }
}

/* A device's time as HTA counts it (rules.md §3.1): the temporal
 * breakdown, the overlap of communication, and the kernel types that ran,
 * three to a line. */
static void render_gpu_hta(textout *t, const cJSON *g)
{
    char b1[FMT_BUF], b2[FMT_BUF];
    const cJSON *h = get(g, RK_HTA);
    if (!h || num(h, RK_WINDOW_NS) <= 0)
        return;
    label(t, "");
    fprintf(t->out, "  as HTA counts it, over %s", dur(b1, num(h, RK_WINDOW_NS)));
    if (cJSON_IsTrue(get(h, RK_FINAL_STEP_LEFT_OUT)))
        fprintf(t->out, " (the final step's %s records left out)", count(b2, num(h, RK_LEFT_OUT)));
    else if (cJSON_IsTrue(get(h, RK_FINAL_STEP_UNKNOWN)))
        fputs(" (every record: which the final step launched is not known)", t->out);
    fputs(":\n", t->out);
    label(t, "");
    fprintf(t->out, "    idle %.1f%%, compute %.1f%%, non-compute %.1f%%",
            100.0 * num(h, RK_IDLE_SHARE), 100.0 * num(h, RK_COMPUTE_SHARE),
            100.0 * num(h, RK_NON_COMPUTE_SHARE));
    if (num(h, RK_COMM_NS) > 0)
        fprintf(t->out, "; communication overlapped %.1f%%", 100.0 * num(h, RK_COMM_OVERLAP_SHARE));
    fputc('\n', t->out);
    const cJSON *k;
    int n = 0;
    cJSON_ArrayForEach(k, get(h, RK_KERNEL_TYPES)) {
        if (num(k, RK_NS) <= 0)
            continue;
        if (n % 3 == 0) {
            if (n)
                fputs(",\n", t->out);
            label(t, "");
            fputs(n ? "      " : "    kernel types: ", t->out);
        } else {
            fputs(", ", t->out);
        }
        put_kernel_type(t->out, str(k, RK_TYPE));
        fprintf(t->out, " %.1f%%", 100.0 * num(k, RK_SHARE));
        n++;
    }
    if (n)
        fputc('\n', t->out);
}

static void render_gpu(textout *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF], b4[FMT_BUF];
    label(t, "GPU");
    if (!cJSON_IsTrue(get(s, RK_HAS_GPU))) {
        fputs("no activity recorded\n", t->out);
        return;
    }
    const cJSON *g;
    int first = 1;
    cJSON_ArrayForEach(g, get(s, RK_GPU)) {
        if (!first)
            label(t, "");
        first = 0;
        fprintf(t->out, "device %.0f: %s kernels (%s), busy %s = %.1f%% of its active span",
                num(g, RK_DEVICE), count(b1, num(g, RK_KERNELS)), dur(b2, num(g, RK_KERNEL_NS)),
                dur(b3, num(g, RK_BUSY_NS)), 100.0 * num(g, RK_BUSY_SHARE));
        fprintf(t->out, ", copies %s\n", bytes(b1, num(g, RK_MEMCPY_BYTES)));
        label(t, "");
        fprintf(t->out, "  idle %.1f%% %s%s; %s gaps of 1 ms or more (%s)\n",
                100.0 * num(g, RK_IDLE_SHARE), basis_words(g),
                cJSON_IsTrue(get(g, RK_INTERPOLATED)) ? " (interpolated)" : "",
                count(b3, num(g, RK_IDLE_GAPS)), dur(b4, num(g, RK_IDLE_GAP_NS)));
        if (num(g, RK_COMM_KERNELS) > 0)
            render_gpu_comm(t, g);
        render_gpu_hta(t, g);
    }
}

/* GPU work joined to its launches, and HTA's launch statistics
 * (rules.md §3.2). */
static void render_launches(textout *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF], b4[FMT_BUF], b5[FMT_BUF];
    const cJSON *l = get(s, RK_LAUNCHES), *all = get(l, RK_ALL);
    if (!l || num(l, RK_RECORDS) == 0)
        return;
    label(t, "launches");
    fprintf(t->out, "%s of %s GPU records joined to their launch (%.1f%% of GPU time)",
            count(b1, num(l, RK_JOINED)), count(b2, num(l, RK_RECORDS)),
            num(l, RK_NS) > 0 ? 100.0 * num(l, RK_JOINED_NS) / num(l, RK_NS) : 0.0);
    if (num(l, RK_OUTSIDE_NS) > 0)
        fprintf(t->out, ", %s launched outside every region", dur(b3, num(l, RK_OUTSIDE_NS)));
    if (num(l, RK_LATE) > 0)
        fprintf(t->out, ", %s came late", count(b4, num(l, RK_LATE)));
    fputc('\n', t->out);
    if (num(all, RK_COUNT) > 0) {
        const cJSON *cpu = get(all, RK_CPU), *delay = get(all, RK_DELAY);
        label(t, "");
        fprintf(t->out, "  %s kernel launches: launch call %s mean, %s p95; launch delay %s "
                "median, %s p95\n", count(b1, num(all, RK_COUNT)), dur(b2, num(cpu, RK_MEAN_NS)),
                dur(b3, num(cpu, RK_P95_NS)), dur(b4, num(delay, RK_P50_NS)),
                dur(b5, num(delay, RK_P95_NS)));
    }
    const cJSON *st;
    int shown = 0;
    cJSON_ArrayForEach(st, get(l, RK_STREAMS)) { /* most launches first */
        const cJSON *q = get(st, RK_QUEUE);
        if (!q || shown++ == 4)
            continue;
        label(t, "");
        fprintf(t->out, "  stream %.0f:%.0f launch queue: mean %.1f, median %g, max %.0f (%s at it)\n",
                num(st, RK_DEVICE), num(st, RK_STREAM), num(q, RK_MEAN), num(q, RK_P50),
                num(q, RK_MAX), dur(b1, num(q, RK_AT_MAX_NS)));
    }
    double kernels = 0;
    const cJSON *g;
    cJSON_ArrayForEach(g, get(s, RK_GPU)) kernels += num(g, RK_KERNELS);
    if (num(l, RK_SHORT_KERNELS) > 0) {
        label(t, "");
        fprintf(t->out, "  %s kernels (%.1f%%) shorter than 10 us, taking %s\n",
                count(b1, num(l, RK_SHORT_KERNELS)),
                kernels > 0 ? 100.0 * num(l, RK_SHORT_KERNELS) / kernels : 0.0,
                dur(b2, num(l, RK_SHORT_KERNEL_NS)));
    }
}

static void render_sync(textout *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF];
    const cJSON *sync = get(s, RK_SYNC);
    if (num(sync, RK_COUNT) == 0)
        return;
    label(t, "CPU-GPU sync");
    int gpu = strcmp(str(sync, RK_BASIS), "gpu_busy") == 0;
    fprintf(t->out, "%s syncs (%.2f per step), blocked %s = %.1f%% of %s time\n",
            count(b1, num(sync, RK_COUNT)), num(sync, RK_PER_STEP),
            dur(b2, num(sync, RK_BLOCKED_NS)), 100.0 * num(sync, RK_SHARE),
            gpu ? "GPU busy" : "profiled");
    /* the bands: a sync that found the GPU done cost only its call */
    const cJSON *w = get(sync, RK_WAITS);
    if (cJSON_GetArraySize(w) == 3) {
        char b3[FMT_BUF];
        label(t, "");
        fprintf(t->out, "by wait: %s under 10 us (GPU done), %s to 1 ms, %s of 1 ms or more\n",
                count(b1, num(cJSON_GetArrayItem(w, 0), RK_COUNT)),
                count(b2, num(cJSON_GetArrayItem(w, 1), RK_COUNT)),
                count(b3, num(cJSON_GetArrayItem(w, 2), RK_COUNT)));
    }
}

static void render_events(textout *t, const cJSON *s)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF];
    label(t, "events");
    fprintf(t->out, "%s (%s regions, %s dropped)\n", count(b1, num(s, RK_EVENTS)),
            count(b2, num(s, RK_REGION_EVENTS)), count(b3, num(s, RK_DROPPED_EVENTS)));
}

static void render_summary(textout *t, const cJSON *r)
{
    const cJSON *s = get(r, RK_SUMMARY);
    textout_heading(t, "Summary\n");
    render_steps(t, s);
    render_times(t, s);
    render_memory_peaks(t, s);
    render_gpu(t, s);
    render_launches(t, s);
    render_sync(t, s);
    render_events(t, s);
}

/* ---- operations ---------------------------------------------------------------------- */

static void render_op(textout *t, const cJSON *op, const textout_names *names, size_t i,
                      int gpu)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF], b4[FMT_BUF], b5[FMT_BUF], b6[FMT_BUF];
    fputs("  ", t->out);
    textout_names_put(t, names, i);
    fprintf(t->out, "  %-7s %10s  %5.1f%% ", str(op, RK_KIND), dur(b1, num(op, RK_SELF_NS)),
            100.0 * num(op, RK_SELF_SHARE));
    put_bar(t, num(op, RK_SELF_SHARE));
    fprintf(t->out, " %10s %9s %9s %9s", dur(b2, num(op, RK_INCL_NS)),
            count(b3, num(op, RK_CALLS)), dur(b4, num(op, RK_MEAN_NS)),
            dur(b5, num(op, RK_P95_NS)));
    if (gpu)
        fprintf(t->out, " %10s", num(op, RK_GPU_NS) > 0 ? dur(b6, num(op, RK_GPU_NS)) : "-");
    fputc('\n', t->out);
}

static int is_kernel(const cJSON *op)
{
    return strcmp(str(op, RK_KIND), "gpu") == 0;
}

/* The CPU operations: kernels have their own table (render_kernels). */
static void render_operations(textout *t, const cJSON *r)
{
    const cJSON *ops = get(r, RK_OPERATIONS), *op;
    int n = 0;
    cJSON_ArrayForEach(op, ops) n += !is_kernel(op);
    double total = num(r, RK_OPERATIONS_TOTAL) - num(r, RK_KERNELS_TOTAL);
    int by_gpu = strcmp(str(r, RK_OPERATIONS_ORDER), "gpu") == 0, gpu = 0;
    cJSON_ArrayForEach(op, ops) gpu |= get(op, RK_GPU_NS) != NULL;
    textout_heading(t, by_gpu ? "Top operations by GPU time" : "Top operations by self time");
    if (n == 0) {
        fputs("\n  no regions recorded\n", t->out);
        return;
    }
    if (total > n)
        fprintf(t->out, " (%d of %.0f)", n, total);
    fputc('\n', t->out);
    int nw = textout_name_width(t, ops, RK_NAME, (int)strlen("operation"), NAME_MAX_COLS);
    textout_sgr(t, "2");
    fprintf(t->out, "  %-*s  %-7s %10s  %-*s %10s %9s %9s %9s", nw, "operation", "kind", "self",
            7 + BAR_CELLS, "share", "incl", "calls", "mean", "p95");
    if (gpu)
        fprintf(t->out, " %10s", "GPU");
    textout_sgr(t, "0");
    fputc('\n', t->out);
    textout_names names;
    if (textout_names_init(t, &names, ops, RK_NAME, nw) < 0)
        return;
    size_t i = 0;
    cJSON_ArrayForEach(op, ops) {
        if (!is_kernel(op))
            render_op(t, op, &names, i, gpu);
        i++;
    }
    textout_names_free(&names);
}

static void render_kernel(textout *t, const cJSON *k, const textout_names *names, size_t i)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF], b4[FMT_BUF];
    fputs("  ", t->out);
    textout_names_put(t, names, i);
    fprintf(t->out, "  %10s  %5.1f%% ", dur(b1, num(k, RK_GPU_NS)), 100.0 * num(k, RK_SHARE));
    put_bar(t, num(k, RK_SHARE));
    fprintf(t->out, " %9s %9s %9s  %s\n", count(b2, num(k, RK_CALLS)), dur(b3, num(k, RK_MEAN_NS)),
            dur(b4, num(k, RK_P95_NS)), cJSON_IsTrue(get(k, RK_COMM)) ? "comm" : "");
}

/* GPU time by kernel, share of the devices' busy time (rules.md §3). */
static void render_kernels(textout *t, const cJSON *r)
{
    const cJSON *ks = get(r, RK_KERNELS), *k;
    int n = cJSON_GetArraySize(ks);
    double total = num(r, RK_KERNELS_TOTAL);
    if (n == 0)
        return;
    textout_heading(t, "Top kernels by GPU time");
    if (total > n)
        fprintf(t->out, " (%d of %.0f)", n, total);
    fputc('\n', t->out);
    int nw = textout_name_width(t, ks, RK_NAME, (int)strlen("kernel"), NAME_MAX_COLS);
    textout_sgr(t, "2");
    fprintf(t->out, "  %-*s  %10s  %-*s %9s %9s %9s", nw, "kernel", "GPU time",
            7 + BAR_CELLS, "share", "calls", "mean", "p95");
    textout_sgr(t, "0");
    fputc('\n', t->out);
    textout_names names;
    if (textout_names_init(t, &names, ks, RK_NAME, nw) < 0)
        return;
    size_t i = 0;
    cJSON_ArrayForEach(k, ks)
        render_kernel(t, k, &names, i++);
    textout_names_free(&names);
}

/* ---- bottlenecks, ranks, notes ---------------------------------------------------------- */

static void put_severity(textout *t, const char *severity)
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
    textout_sgr(t, color);
    fprintf(t->out, "%-*s", FINDING_INDENT - 2, up);
    textout_sgr(t, "0");
}

static void render_bottlenecks(textout *t, const cJSON *r)
{
    const cJSON *list = get(r, RK_BOTTLENECKS), *f;
    int n[3] = { 0, 0, 0 };
    cJSON_ArrayForEach(f, list) {
        const char *sev = str(f, RK_SEVERITY);
        n[strcmp(sev, "high") == 0 ? 0 : strcmp(sev, "medium") == 0 ? 1 : 2]++;
    }
    textout_heading(t, "Bottlenecks");
    if (!list || !list->child) {
        fputs("\n  none found at the current thresholds\n", t->out);
        return;
    }
    fprintf(t->out, " (%d high, %d medium, %d low)\n", n[0], n[1], n[2]);
    cJSON_ArrayForEach(f, list) {
        put_severity(t, str(f, RK_SEVERITY));
        char title[512];
        snprintf(title, sizeof title, "%s [%s]", str(f, RK_TITLE), str(f, RK_RULE));
        textout_put_wrapped(t, title, FINDING_INDENT, FINDING_INDENT);
        fprintf(t->out, "%*s", FINDING_INDENT, "");
        textout_put_wrapped(t, str(f, RK_RECOMMENDATION), FINDING_INDENT, FINDING_INDENT);
    }
}

/* Whether any rank's row has the member key. */
static int any_rank_has(const cJSON *ranks, const char *key)
{
    const cJSON *k;
    cJSON_ArrayForEach(k, ranks) {
        if (get(k, key))
            return 1;
    }
    return 0;
}

/* A row per rank: its steps, GPU time and memory peak where the profiles
 * have them, and, with collectives matched across ranks (rules.md §4.9),
 * in how many each rank arrived last and how long the others waited for it
 * there, and the findings of its own report by severity when each rank
 * was analysed. A '*' marks the rank the sections above describe. */
static void render_ranks(textout *t, const cJSON *r)
{
    char b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF], b4[FMT_BUF];
    const cJSON *ranks = get(r, RK_RANKS), *k;
    if (!cJSON_IsArray(ranks) || !ranks->child)
        return;
    int coll = get(ranks->child, RK_LAST_ARRIVALS) != NULL;
    int gpu = any_rank_has(ranks, RK_GPU_BUSY_SHARE), mem = any_rank_has(ranks, RK_MEMORY_PEAK_BYTES);
    int found = any_rank_has(ranks, RK_FINDINGS_HIGH);
    int clock = any_rank_has(ranks, RK_CLOCK_OFFSET_NS);
    textout_heading(t, "Ranks (* the rank described above)\n");
    textout_sgr(t, "2");
    fprintf(t->out, "  %-6s %9s %10s %10s  ", "rank", "steps", "mean step", "p50 step");
    if (gpu)
        fprintf(t->out, "%8s %6s %8s  ", "GPU busy", "idle", "exposed");
    if (mem)
        fprintf(t->out, "%10s  ", "mem peak");
    if (coll)
        fprintf(t->out, "%9s %11s  ", "last in", "others wait");
    if (found)
        fprintf(t->out, "%12s  ", "high/med/low");
    if (clock)
        fprintf(t->out, "%12s  ", "clock offset");
    fputs("file", t->out);
    textout_sgr(t, "0");
    fputc('\n', t->out);
    cJSON_ArrayForEach(k, ranks) {
        char rank[32];
        snprintf(rank, sizeof rank, "%.0f%s", num(k, RK_RANK),
                 cJSON_IsTrue(get(k, RK_DESCRIBED)) ? "*" : "");
        fprintf(t->out, "  %-6s %9s %10s %10s  ", rank, count(b1, num(k, RK_STEPS)),
                dur(b2, num(k, RK_MEAN_STEP_NS)), dur(b3, num(k, RK_P50_STEP_NS)));
        if (gpu && get(k, RK_GPU_BUSY_SHARE))
            fprintf(t->out, "%7.1f%% %5.1f%% %7.1f%%  ", 100.0 * num(k, RK_GPU_BUSY_SHARE),
                    100.0 * num(k, RK_GPU_IDLE_SHARE), 100.0 * num(k, RK_COMM_EXPOSED_SHARE));
        else if (gpu)
            fprintf(t->out, "%8s %6s %8s  ", "-", "-", "-");
        if (mem)
            fprintf(t->out, "%10s  ", get(k, RK_MEMORY_PEAK_BYTES)
                                          ? bytes(b4, num(k, RK_MEMORY_PEAK_BYTES)) : "-");
        if (coll) {
            char last[48];
            snprintf(last, sizeof last, "%.0f/%.0f", num(k, RK_LAST_ARRIVALS),
                     num(k, RK_COLLECTIVES));
            fprintf(t->out, "%9s %11s  ", last, dur(b4, num(k, RK_CAUSED_WAIT_NS)));
        }
        if (found) {
            char sev[64] = "-";
            if (get(k, RK_FINDINGS_HIGH))
                snprintf(sev, sizeof sev, "%.0f/%.0f/%.0f", num(k, RK_FINDINGS_HIGH),
                         num(k, RK_FINDINGS_MEDIUM), num(k, RK_FINDINGS_LOW));
            fprintf(t->out, "%12s  ", sev);
        }
        if (clock) {
            double off = num(k, RK_CLOCK_OFFSET_NS);
            char signed_dur[FMT_BUF + 1];
            snprintf(signed_dur, sizeof signed_dur, "%s%s", off < 0 ? "-" : "",
                     dur(b4, fabs(off)));
            fprintf(t->out, "%12s  ", get(k, RK_CLOCK_OFFSET_NS) ? signed_dur : "-");
        }
        textout_put_safe(t, str(k, RK_PATH));
        fputc('\n', t->out);
    }
}

prof_err report_render_text(FILE *out, const cJSON *report, const report_style *style)
{
    textout t;
    textout_init(&t, out, style);
    render_profiles(&t, report);
    render_summary(&t, report);
    render_operations(&t, report);
    render_kernels(&t, report);
    render_bottlenecks(&t, report);
    render_ranks(&t, report);
    textout_notes(&t, get(report, RK_NOTES));
    return textout_finish(&t);
}
