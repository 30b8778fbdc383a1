/* compare_ops.c - the operations of the two sides: paired by name, each
 * tested (between runs, or within one run a side from batch means), held
 * to a level, and their rows built one at a time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare_int.h"
#include "analysis/report_keys.h"

/* ---- a test's fields ------------------------------------------------------------- */

/* What a test says (rules.md §6.3): slower or faster when significant;
 * no change when its interval lies within the noise floor; inconclusive
 * when it reaches past the floor but not wholly; untested without one. */
static const char *test_verdict(const cmp_ctx *c, const cmp_result *r)
{
    double f = c->o.noise_pct / 100.0;
    if (r->method == CMP_NO_TEST || !isfinite(r->rel_low) || !isfinite(r->rel_high))
        return "untested";
    if (r->significant)
        return r->estimate > 0 ? "slower" : "faster";
    return r->rel_low >= -f && r->rel_high <= f ? "no_change" : "inconclusive";
}

/* For an inconclusive test between runs: about how many runs a side would
 * settle it, the interval narrowing as the square root of the runs until
 * it clears the floor on the side the estimate lies (beyond it: a change;
 * within it: none). NaN when it cannot be told (within one run a side, or
 * an estimate on the floor itself); at most 1000. */
static double runs_needed(const cmp_ctx *c, const cmp_result *r)
{
    double f = c->o.noise_pct / 100.0, half = (r->rel_high - r->rel_low) / 2;
    double margin = fabs(fabs(r->estimate) - f);
    size_t n = r->runs_before < r->runs_after ? r->runs_before : r->runs_after;
    if (r->method == CMP_WITHIN_RUN || r->method == CMP_NO_TEST || n < 2 || !(margin > 0) ||
        !isfinite(half))
        return NAN;
    double k = ceil((double)n * (half / margin) * (half / margin));
    return k > 1000 ? 1000 : k > (double)n ? k : (double)n + 1;
}

/* The test's fields shared by the step-time test and every operation. */
void cmp_put_test(cmp_ctx *c, cJSON *o, const cmp_result *r)
{
    const char *v = test_verdict(c, r);
    cmp_put_str(c, o, RK_VERDICT, v);
    cmp_put_num(c, o, RK_RUNS_NEEDED, strcmp(v, "inconclusive") == 0 ? runs_needed(c, r) : NAN);
    cmp_put_str(c, o, RK_METHOD, cmp_method_name(r->method));
    cmp_put_num(c, o, RK_RUNS_BEFORE, (double)r->runs_before);
    cmp_put_num(c, o, RK_RUNS_AFTER, (double)r->runs_after);
    cmp_put_num(c, o, RK_T, r->t);
    cmp_put_num(c, o, RK_DF, r->df);
    cmp_put_num(c, o, RK_P_VALUE, r->p);
    cmp_put_num(c, o, RK_RELATIVE_LOW, r->rel_low);
    cmp_put_num(c, o, RK_RELATIVE_HIGH, r->rel_high);
}

/* ---- operations ------------------------------------------------------------------ */

static int by_weight(const void *x, const void *y)
{
    const op_pair *p = x, *q = y;
    if (p->weight != q->weight)
        return p->weight < q->weight ? 1 : -1;
    return strcmp(p->name, q->name);
}

static int by_pair_name(const void *x, const void *y)
{
    return strcmp(((const op_pair *)x)->name, ((const op_pair *)y)->name);
}

/* Mean over a side's runs of the op's field, over the runs that have it. */
double cmp_op_side_mean(const cmp_side *s, const char *name, size_t field, size_t *runs)
{
    double sum = 0;
    *runs = 0;
    for (size_t r = 0; r < s->nruns; r++) {
        const cmp_op *op = cmp_side_op(s, r, name);
        if (op) {
            double v;
            memcpy(&v, (const char *)op + field, sizeof v);
            sum += v;
            (*runs)++;
        }
    }
    return *runs ? sum / (double)*runs : 0.0;
}

/* Every operation of any run, once, largest first. */
static op_pair *pair_ops(cmp_ctx *c, size_t *n)
{
    size_t cap = 0, k = 0;
    for (int i = 0; i < 2; i++)
        for (size_t r = 0; r < c->side[i].nruns; r++)
            cap += c->side[i].runs[r]->nops;
    op_pair *v = calloc(cap ? cap : 1, sizeof *v);
    if (!v) {
        c->ok = 0;
        return NULL;
    }
    for (int i = 0; i < 2; i++)
        for (size_t r = 0; r < c->side[i].nruns; r++)
            for (size_t j = 0; j < c->side[i].runs[r]->nops; j++)
                v[k++].name = c->side[i].runs[r]->ops[j].name;
    qsort(v, k, sizeof *v, by_pair_name);
    *n = 0;
    for (size_t j = 0; j < k; j++)
        if (*n == 0 || strcmp(v[*n - 1].name, v[j].name) != 0)
            v[(*n)++] = v[j];
    for (size_t j = 0; j < *n; j++) {
        size_t runs;
        v[j].weight = fmax(cmp_op_side_mean(&c->side[0], v[j].name, OPF(incl_ns), &runs),
                           cmp_op_side_mean(&c->side[1], v[j].name, OPF(incl_ns), &runs));
    }
    qsort(v, *n, sizeof *v, by_weight);
    return v;
}

/* How many of the side's runs report GPU time for the operation. */
static size_t op_gpu_runs(const cmp_side *s, const char *name)
{
    size_t n = 0;
    for (size_t r = 0; r < s->nruns; r++) {
        const cmp_op *op = cmp_side_op(s, r, name);
        n += op && op->has_gpu;
    }
    return n;
}

/* A side of an operation's row: means over the runs that have it. */
static void add_side(cmp_ctx *c, cJSON *row, int which, const char *name, double mean)
{
    const cmp_side *s = &c->side[which];
    size_t runs;
    double calls = cmp_op_side_mean(s, name, OPF(calls), &runs);
    if (!runs) {
        jb_null(&c->ok, row, cmp_side_name(which));
        return;
    }
    cJSON *o = cmp_put_obj(c, row, cmp_side_name(which));
    cmp_put_num(c, o, RK_RUNS, (double)runs);
    cmp_put_num(c, o, RK_CALLS, calls);
    cmp_put_num(c, o, RK_TOTAL_NS, cmp_op_side_mean(s, name, OPF(incl_ns), &runs));
    cmp_put_num(c, o, RK_SELF_NS, cmp_op_side_mean(s, name, OPF(self_ns), &runs));
    cmp_put_num(c, o, RK_MEAN_NS,
                isfinite(mean) ? mean : cmp_op_side_mean(s, name, OPF(mean_ns), &runs));
    cmp_put_num(c, o, RK_STDDEV_NS, cmp_op_side_mean(s, name, OPF(stddev_ns), &runs));
    cmp_put_num(c, o, RK_SHARE, cmp_op_side_mean(s, name, OPF(incl_share), &runs));
    if (op_gpu_runs(s, name)) { /* GPU time launched in it (rules.md §3.2) */
        cmp_put_num(c, o, RK_GPU_NS, cmp_op_side_mean(s, name, OPF(gpu_ns), &runs));
        cmp_put_num(c, o, RK_GPU_SELF_NS, cmp_op_side_mean(s, name, OPF(gpu_self_ns), &runs));
        cmp_put_num(c, o, RK_GPU_KERNELS, cmp_op_side_mean(s, name, OPF(gpu_kernels), &runs));
    }
}

/* The change of an operation's GPU time per call (rules.md §6.1) into
 * *v; 0 unless both sides launched some in it. */
int cmp_gpu_change(const cmp_ctx *c, const char *name, double *v)
{
    double per_call[2];
    for (int i = 0; i < 2; i++) {
        size_t runs;
        const cmp_side *s = &c->side[i];
        double calls = cmp_op_side_mean(s, name, OPF(calls), &runs);
        double gpu = cmp_op_side_mean(s, name, OPF(gpu_ns), &runs);
        if (!op_gpu_runs(s, name) || calls <= 0 || gpu <= 0)
            return 0;
        per_call[i] = gpu / calls;
    }
    *v = cmp_relative(per_call[0], per_call[1]);
    return 1;
}

static void add_gpu_change(cmp_ctx *c, cJSON *row, const char *name)
{
    double v;
    if (cmp_gpu_change(c, name, &v))
        cmp_put_num(c, row, RK_GPU_RELATIVE, v);
}

/* ---- testing the operations ------------------------------------------------------ */

/* An operation's share of the time that weighs its test below this counts
 * as this much (rules.md §6.3): none is left untestable, while the smallest,
 * whose time per process is most often a coin toss, are held strictest. */
#define CMP_MIN_WEIGHT_SHARE 0.001

/* What the operations' tests need: each operation's log steady mean in
 * every run of both sides (before first) and the runs' speeds. */
typedef struct op_tests {
    size_t n, nruns;       /* operations, runs of both sides                       */
    double *logs;          /* n x nruns; NaN where the run lacks a steady mean     */
    size_t *ref;           /* each operation's index among the reference ones     */
    cmp_speeds speeds;     /* empty with one run a side                           */
    cmp_result *r;
    double *level;         /* each one's level (rules.md §6.3)                     */
} op_tests;

static const cmp_op *op_in_run(const cmp_ctx *c, size_t run, const char *name)
{
    size_t nb = c->side[0].nruns;
    return run < nb ? cmp_side_op(&c->side[0], run, name)
                    : cmp_side_op(&c->side[1], run - nb, name);
}

static double op_log_mean(const cmp_ctx *c, size_t run, const char *name)
{
    const cmp_op *op = op_in_run(c, run, name);
    double m = op ? op->steady.mean : NAN;
    return m > 0 && isfinite(m) ? log(m) : NAN;
}

/* The runs' speeds from the operations with a steady mean in every run;
 * only between runs, where a run's speed is something to take out. */
static int find_speeds(op_tests *t)
{
    size_t nref = 0;
    double *ref_logs = malloc((t->n ? t->n : 1) * t->nruns * sizeof *ref_logs);
    if (!ref_logs)
        return -1;
    for (size_t j = 0; j < t->n; j++) {
        int all = 1;
        for (size_t r = 0; r < t->nruns && all; r++)
            all = isfinite(t->logs[j * t->nruns + r]);
        t->ref[j] = all ? nref : SIZE_MAX;
        if (all)
            memcpy(&ref_logs[nref++ * t->nruns], &t->logs[j * t->nruns],
                   t->nruns * sizeof *ref_logs);
    }
    int rc = cmp_speeds_init(&t->speeds, ref_logs, nref, t->nruns);
    free(ref_logs);
    return rc;
}

static void op_tests_free(op_tests *t)
{
    free(t->logs);
    free(t->ref);
    free(t->r);
    free(t->level);
    cmp_speeds_free(&t->speeds);
}

static int op_tests_init(cmp_ctx *c, op_tests *t, const op_pair *v, size_t n)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    t->nruns = c->side[0].nruns + c->side[1].nruns;
    size_t k = n ? n : 1;
    t->logs = malloc(k * t->nruns * sizeof *t->logs);
    t->ref = malloc(k * sizeof *t->ref);
    t->r = calloc(k, sizeof *t->r);
    t->level = malloc(k * sizeof *t->level);
    if (!t->logs || !t->ref || !t->r || !t->level)
        return -1;
    for (size_t j = 0; j < n; j++) {
        t->ref[j] = SIZE_MAX;
        t->level[j] = c->o.alpha;
        for (size_t r = 0; r < t->nruns; r++)
            t->logs[j * t->nruns + r] = op_log_mean(c, r, v[j].name);
    }
    if (c->side[0].nruns < 2 && c->side[1].nruns < 2)
        return 0;
    return find_speeds(t);
}

/* The test of operation j against its runs' speeds (rules.md §6.3). */
static cmp_result adjusted_test(const cmp_ctx *c, const op_tests *t, size_t j,
                                const compare_options *o)
{
    size_t nb = c->side[0].nruns, k[2] = { 0, 0 };
    double *y = malloc(t->nruns * sizeof *y), mean[2] = { 0, 0 };
    if (!y)
        return cmp_no_test();
    for (size_t r = 0; r < t->nruns; r++) {
        double l = t->logs[j * t->nruns + r];
        int side = r >= nb;
        if (!isfinite(l))
            continue;
        mean[side] += exp(l);
        y[side ? nb + k[1] : k[0]] = l - cmp_speed_of(&t->speeds, r, t->ref[j]);
        k[side]++;
    }
    cmp_result res = cmp_test_adjusted(y, k[0], &y[nb], k[1], k[0] ? mean[0] / (double)k[0] : NAN,
                                       k[1] ? mean[1] / (double)k[1] : NAN, o);
    free(y);
    return res;
}

/* The operation's test at level alpha: against its runs' speeds where
 * there are several runs a side and enough other operations, else of its
 * steady means as they are. */
static cmp_result op_test(const cmp_ctx *c, const op_tests *t, size_t j, const char *name,
                          double alpha)
{
    compare_options o = c->o;
    o.alpha = alpha;
    if (cmp_speeds_usable(&t->speeds, t->ref[j]))
        return adjusted_test(c, t, j, &o);
    size_t n[2] = { c->side[0].nruns, c->side[1].nruns };
    cmp_steady *st[2] = { calloc(n[0], sizeof *st[0]), calloc(n[1], sizeof *st[1]) };
    cmp_result r;
    for (int i = 0; i < 2; i++)
        for (size_t k = 0; st[i] && k < n[i]; k++) {
            const cmp_op *op = cmp_side_op(&c->side[i], k, name);
            st[i][k] = op ? op->steady : (cmp_steady){ NAN, NULL, 0 };
        }
    if (st[0] && st[1]) {
        r = cmp_test_steady(st[0], n[0], st[1], n[1], &o);
    } else {
        r = cmp_no_test();
    }
    free(st[0]);
    free(st[1]);
    return r;
}

const char *cmp_op_status(const cmp_result *r, int hb, int ha)
{
    if (!hb)
        return "added";
    if (!ha)
        return "removed";
    return !r->significant ? "unchanged" : r->estimate > 0 ? "slower" : "faster";
}

/* How many runs of each side have the operation. */
void cmp_op_runs(const cmp_ctx *c, const char *name, size_t *rb, size_t *ra)
{
    cmp_op_side_mean(&c->side[0], name, OPF(calls), rb);
    cmp_op_side_mean(&c->side[1], name, OPF(calls), ra);
}

/* An operation's row of the comparison; NULL (and c->ok 0) out of memory. */
cJSON *cmp_op_row(cmp_ctx *c, const op_pair *p, const cmp_result *r, double level)
{
    size_t rb, ra;
    cmp_op_runs(c, p->name, &rb, &ra);
    int both = rb && ra && isfinite(r->relative);
    const char *kind = "";
    for (int i = 0; i < 2 && !*kind; i++)
        for (size_t k = 0; k < c->side[i].nruns && !*kind; k++) {
            const cmp_op *op = cmp_side_op(&c->side[i], k, p->name);
            kind = op ? op->kind : "";
        }
    cJSON *row = cJSON_CreateObject();
    c->ok &= row != NULL;
    cmp_put_str(c, row, RK_NAME, p->name);
    cmp_put_str(c, row, RK_KIND, kind);
    cmp_put_str(c, row, RK_STATUS, cmp_op_status(r, rb > 0, ra > 0));
    add_side(c, row, 0, p->name, r->before);
    add_side(c, row, 1, p->name, r->after);
    cmp_put_opt(c, row, RK_MEAN_CHANGE_NS, both, r->after - r->before);
    cmp_put_opt(c, row, RK_RELATIVE, both, r->relative);
    cmp_put_opt(c, row, RK_RELATIVE_TO_RUN, both && isfinite(r->estimate), r->estimate);
    cmp_result shown = *r;
    if (!rb || !ra) /* on one side only: nothing was tested */
        shown.t = shown.df = shown.p = NAN;
    cmp_put_test(c, row, &shown);
    cmp_put_opt(c, row, RK_ALPHA, r->method != CMP_NO_TEST, level);
    cmp_put_bool(c, row, RK_SIGNIFICANT, r->significant);
    add_gpu_change(c, row, p->name);
    if (!c->ok) {
        cJSON_Delete(row);
        return NULL;
    }
    return row;
}

/* An operation's weight in the false discovery rate: its mean share of the
 * time over the runs of both sides that have it (the same whichever side a
 * run is on, so it does not favour a change), at least
 * CMP_MIN_WEIGHT_SHARE. */
static double op_weight(const cmp_ctx *c, const char *name)
{
    size_t rb, ra;
    double b = cmp_op_side_mean(&c->side[0], name, OPF(incl_share), &rb);
    double a = cmp_op_side_mean(&c->side[1], name, OPF(incl_share), &ra);
    double share = rb + ra ? (b * (double)rb + a * (double)ra) / (double)(rb + ra) : 0.0;
    return fmax(isfinite(share) ? share : 0.0, CMP_MIN_WEIGHT_SHARE);
}

/* The level each tested operation is held to (rules.md §6.3): some thirty
 * operations tested at alpha each turned up a chance change in 1.6-1.8% of
 * comparisons of repeated runs of one program, so the share of chance
 * findings among all flagged is held under alpha instead, each operation's
 * part of it weighted by its share of the time: the large operations that
 * make up the step are the ones a user needs judged, and few runs a side
 * leave too few degrees of freedom to judge them at alpha over the number
 * of operations. The tests are run again at their levels for their
 * intervals. Returns the number tested, and the level of weight 1. */
static size_t level_operations(cmp_ctx *c, const op_pair *v, op_tests *t, double *level)
{
    double *p = malloc((t->n ? t->n : 1) * sizeof *p), *w = malloc((t->n ? t->n : 1) * sizeof *w);
    double sum = 0;
    size_t m = 0;
    *level = NAN;
    if (!p || !w) {
        free(p);
        free(w);
        c->ok = 0;
        return 0;
    }
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].method != CMP_NO_TEST) {
            p[m] = isnan(t->r[i].p) ? 1.0 : t->r[i].p;
            sum += w[m++] = op_weight(c, v[i].name);
        }
    for (size_t i = 0; i < m; i++)
        w[i] *= (double)m / sum;
    *level = cmp_level_each(p, w, m, c->o.alpha);
    for (size_t i = 0, k = 0; i < t->n && !isnan(*level); i++) {
        if (t->r[i].method == CMP_NO_TEST)
            continue;
        t->level[i] = m > 1 ? *level * w[k] : c->o.alpha;
        k++;
        if (t->level[i] != c->o.alpha)
            t->r[i] = op_test(c, t, i, v[i].name, t->level[i]);
    }
    free(p);
    free(w);
    if (isnan(*level))
        c->ok = 0;
    return m;
}

/* How much faster or slower the after side's runs ran everything than the
 * before side's (exp of the difference of their mean log speeds, minus 1);
 * NaN without speeds. */
static double speed_change(const cmp_ctx *c, const op_tests *t)
{
    size_t nb = c->side[0].nruns;
    double sum[2] = { 0, 0 };
    if (!cmp_speeds_usable(&t->speeds, SIZE_MAX))
        return NAN;
    for (size_t r = 0; r < t->nruns; r++)
        sum[r >= nb] += cmp_speed_of(&t->speeds, r, SIZE_MAX);
    return expm1(sum[1] / (double)(t->nruns - nb) - sum[0] / (double)nb);
}

/* When every operation moved alike past the floor, the operations' tests
 * take that out: say so, and what it may be. */
static void note_speed_change(cmp_ctx *c, const cJSON *cmp, const op_tests *t, double change)
{
    if (!(fabs(change) > c->o.noise_pct / 100.0))
        return;
    cmp_note(c, cJSON_GetObjectItemCaseSensitive(cmp, RK_NOTES),
             "every operation's time per call moved alike by %+.1f%% from before to after (the "
             "runs' speed: the median change of the %zu operations found in every run), and each "
             "operation is tested against it: this is a change to the whole program, or a machine "
             "that ran one side's processes %s; the step-time test says whether it is beyond the "
             "variation between runs",
             100.0 * change, t->speeds.nref, change > 0 ? "slower" : "faster");
}

static void add_operation_tests(cmp_ctx *c, cJSON *cmp, const op_tests *t, size_t tested,
                                double level)
{
    size_t flagged = 0, adjusted = 0;
    for (size_t i = 0; i < t->n; i++) {
        flagged += t->r[i].significant ? 1u : 0u;
        adjusted += t->r[i].method == CMP_SPEED_ADJUSTED ? 1u : 0u;
    }
    cJSON *o = cmp_put_obj(c, cmp, RK_OPERATION_TESTS);
    cmp_put_num(c, o, RK_TESTED, (double)tested);
    cmp_put_num(c, o, RK_FLAGGED, (double)flagged);
    cmp_put_num(c, o, RK_ALPHA_EACH, level);
    cmp_put_num(c, o, RK_SPEED_ADJUSTED, (double)adjusted);
    cmp_put_num(c, o, RK_REFERENCE_OPERATIONS, (double)t->speeds.nref);
    double change = speed_change(c, t);
    cmp_put_opt(c, o, RK_SPEED_CHANGE, isfinite(change), change);
    note_speed_change(c, cmp, t, change);
}

/* Tests every operation into ops; the rows stay to be built, an empty
 * array holding their place. */
void cmp_add_operations(cmp_ctx *c, cJSON *cmp, compare_ops *ops)
{
    size_t n = 0;
    op_pair *v = pair_ops(c, &n);
    op_tests t;
    if (!v || op_tests_init(c, &t, v, n) != 0) {
        c->ok = 0;
        if (v)
            op_tests_free(&t);
        free(v);
        return;
    }
    for (size_t i = 0; i < n; i++)
        t.r[i] = op_test(c, &t, i, v[i].name, c->o.alpha);
    double level;
    size_t tested = level_operations(c, v, &t, &level);
    if (c->ok) {
        add_operation_tests(c, cmp, &t, tested, level);
        cmp_put_arr(c, cmp, RK_OPERATIONS);
    }
    ops->v = v;
    ops->n = n;
    ops->r = t.r;
    ops->level = t.level;
    t.r = NULL;
    t.level = NULL;
    op_tests_free(&t);
}
