/* compare_busy.c - how `prof compare` does on a busy machine (formats/rules.md
 * §6.3), from real runs stored in the repository so that the figures repeat:
 * DIR/base holds runs of tests/python/cnn.py as it is, DIR/heavier runs whose
 * forward pass does a fixed amount of extra work (about 30% of the forward,
 * which is over a third of the step), recorded in turns by
 * tests/bench/busy_runs.sh while 0 to 2 busy loops competed for the cores,
 * so that whole runs differ in speed by up to twice.
 *
 * Each run is analyzed once, as `prof compare` analyzes it; then, for 3 and
 * 5 runs a side, SPLITS random draws of distinct runs are compared in
 * process: two sides of base runs (identical sides: every significant
 * verdict and every failed check is a false positive), and base against
 * heavier (the forward pass should be found slower and the check at 10%
 * should fail). Deterministic: a fixed seed.
 *
 * usage: compare_busy [SPLITS [DIR]]   (default 1000 and testdata/busy) */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis/compare.h"
#include "analysis/report.h"
#include "model/profile.h"

#define MAX_RUNS 256
#define CHANGED_OP "forward"
#define FAIL_PCT 10.0

typedef struct runs {
    cJSON *report[MAX_RUNS];
    double step_ns[MAX_RUNS];
    size_t n;
} runs;

typedef struct rates {
    unsigned some_op, step, any, failed; /* identical sides                 */
    unsigned found, caught, others; /* base against heavier                 */
} rates;

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static double steady_step(const cJSON *report)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(report, "summary");
    s = cJSON_GetObjectItemCaseSensitive(s, "step_time");
    s = cJSON_GetObjectItemCaseSensitive(s, "steady");
    s = cJSON_GetObjectItemCaseSensitive(s, "mean_ns");
    return cJSON_IsNumber(s) ? s->valuedouble : NAN;
}

static int analyze(const char *path, const analysis_options *o, cJSON **out)
{
    profile_model m;
    prof_error err = { PROF_OK, "" };
    if (profile_model_load(path, NULL, &m, NULL, NULL, &err) != PROF_OK) {
        fprintf(stderr, "compare_busy: cannot read '%s': %s\n", path, err.message);
        return -1;
    }
    const profile_model *mp = &m;
    *out = report_build(&mp, 1, o, &err);
    profile_model_free(&m);
    if (!*out)
        fprintf(stderr, "compare_busy: cannot analyze '%s': %s\n", path, err.message);
    return *out ? 0 : -1;
}

/* Every profile of dir/side, analyzed, in name order. */
static int load_runs(const char *dir, const char *side, runs *r)
{
    char path[4096], *names[MAX_RUNS];
    size_t n = 0;
    snprintf(path, sizeof path, "%s/%s", dir, side);
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "compare_busy: cannot open '%s': no stored runs\n", path);
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_RUNS) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".prof") == 0 && !(names[n] = strdup(e->d_name)))
            break;
        n += len > 5 && strcmp(e->d_name + len - 5, ".prof") == 0;
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    analysis_options o;
    analysis_options_default(&o);
    o.top = 0;         /* as prof compare: every operation */
    o.list_points = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s/%s", dir, side, names[i]);
        if (rc == 0 && analyze(path, &o, &r->report[r->n]) == 0)
            r->step_ns[r->n] = steady_step(r->report[r->n]), r->n++;
        else
            rc = -1;
        free(names[i]);
    }
    return rc;
}

/* k distinct runs of `from` into out[] (a partial Fisher-Yates shuffle of
 * idx, room for from->n). */
static void draw(const runs *from, size_t k, const cJSON **out, size_t *idx)
{
    for (size_t i = 0; i < from->n; i++)
        idx[i] = i;
    for (size_t i = 0; i < k; i++) {
        size_t j = i + (size_t)(next_random() % (from->n - i)), t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
        out[i] = from->report[idx[i]];
    }
}

static const cJSON *find_op(const cJSON *cmp, const char *name)
{
    const cJSON *op;
    cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(cmp, "operations")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(op, "name");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
            return op;
    }
    return NULL;
}

static int significant(const cJSON *o)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "significant"));
}

/* Operations other than `except` found significant. */
static unsigned flagged(const cJSON *cmp, const char *except)
{
    unsigned n = 0;
    const cJSON *op;
    cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(cmp, "operations")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(op, "name");
        n += significant(op) && !(except && cJSON_IsString(name) &&
                                  strcmp(name->valuestring, except) == 0);
    }
    return n;
}

static cJSON *compare(const cJSON **b, const cJSON **a, size_t k)
{
    compare_options o;
    compare_options_default(&o);
    o.regression_pct = FAIL_PCT;
    compare_side sb = { b, k, "before" }, sa = { a, k, "after" };
    prof_error err = { PROF_OK, "" };
    cJSON *cmp = compare_build_sides(&sb, &sa, &o, &err);
    if (!cmp) {
        fprintf(stderr, "compare_busy: %s\n", err.message);
        exit(1);
    }
    return cmp;
}

static rates measure(const runs *base, const runs *heavier, size_t k, unsigned splits)
{
    rates r = { 0, 0, 0, 0, 0, 0, 0 };
    const cJSON *side[2 * 8];
    size_t idx[MAX_RUNS];
    for (unsigned i = 0; i < splits; i++) {
        draw(base, 2 * k, side, idx); /* identical: two sides of base runs */
        cJSON *cmp = compare(side, side + k, k);
        int ops = flagged(cmp, NULL) > 0;
        int step = significant(cJSON_GetObjectItemCaseSensitive(cmp, "step_time_test"));
        r.some_op += ops ? 1u : 0u;
        r.step += step ? 1u : 0u;
        r.any += ops || step ? 1u : 0u;
        r.failed += (unsigned)compare_regressed(cmp);
        cJSON_Delete(cmp);

        draw(base, k, side, idx); /* base against heavier */
        draw(heavier, k, side + k, idx);
        cmp = compare(side, side + k, k);
        const cJSON *op = find_op(cmp, CHANGED_OP);
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(op, "status");
        r.found += significant(op) && cJSON_IsString(st) && strcmp(st->valuestring, "slower") == 0;
        r.caught += (unsigned)compare_regressed(cmp);
        r.others += flagged(cmp, CHANGED_OP) > 0;
        cJSON_Delete(cmp);
    }
    return r;
}

static void range(const runs *r, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = 0;
    for (size_t i = 0; i < r->n; i++) {
        *lo = fmin(*lo, r->step_ns[i]);
        *hi = fmax(*hi, r->step_ns[i]);
    }
}

static double pct(unsigned n, unsigned of)
{
    return 100.0 * n / of;
}

int main(int argc, char **argv)
{
    unsigned splits = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1000;
    const char *dir = argc > 2 ? argv[2] : "testdata/busy";
    static runs base, heavier;
    if (splits == 0 || load_runs(dir, "base", &base) != 0 ||
        load_runs(dir, "heavier", &heavier) != 0)
        return 1;
    if (base.n < 10 || heavier.n < 5) {
        fprintf(stderr, "compare_busy: %zu base and %zu heavier runs in %s; 10 and 5 needed\n",
                base.n, heavier.n, dir);
        return 1;
    }
    double blo, bhi, hlo, hhi;
    range(&base, &blo, &bhi);
    range(&heavier, &hlo, &hhi);
    printf("stored real runs of tests/python/cnn.py on a busy machine (%s): %zu base, steady step "
           "%.1f to %.1f ms (%.2fx); %zu with a heavier forward, %.1f to %.1f ms (%.2fx)\n",
           dir, base.n, blo / 1e6, bhi / 1e6, bhi / blo, heavier.n, hlo / 1e6, hhi / 1e6,
           hhi / hlo);
    printf("%u comparisons a row, --fail-on-regression %.0f\n\n", splits, FAIL_PCT);
    printf("%-12s | %-51s | %s\n", "", "identical sides (false positives)",
           "heavier forward (+30% of it, power)");
    printf("%-12s | %9s %10s %12s %13s | %13s %13s %10s\n", "runs a side", "some op", "step time",
           "either", "check failed", "forward found", "check failed", "other ops");
    rates at[2];
    for (size_t i = 0; i < 2; i++) {
        size_t k = i ? 5 : 3;
        rates r = at[i] = measure(&base, &heavier, k, splits);
        printf("%-12zu | %8.1f%% %9.1f%% %11.1f%% %12.1f%% | %12.1f%% %12.1f%% %9.1f%%\n", k,
               pct(r.some_op, splits), pct(r.step, splits), pct(r.any, splits),
               pct(r.failed, splits), pct(r.found, splits), pct(r.caught, splits),
               pct(r.others, splits));
    }
    int met = pct(at[0].any, splits) <= 1 && pct(at[1].any, splits) <= 1 &&
              pct(at[0].failed, splits) <= 1 && pct(at[1].failed, splits) <= 1 &&
              pct(at[0].found, splits) >= 70 && pct(at[0].caught, splits) >= 70 &&
              pct(at[1].found, splits) >= 90 && pct(at[1].caught, splits) >= 90;
    printf("\nbusy compare rates: identical sides with some verdict significant %.1f%% / %.1f%%, "
           "heavier forward found %.1f%% / %.1f%% (3 / 5 runs a side); targets (at most 1%%; "
           "at least 70%% / 90%%) %s\n",
           pct(at[0].any, splits), pct(at[1].any, splits), pct(at[0].found, splits),
           pct(at[1].found, splits), met ? "met" : "NOT met");
    for (size_t i = 0; i < base.n; i++)
        cJSON_Delete(base.report[i]);
    for (size_t i = 0; i < heavier.n; i++)
        cJSON_Delete(heavier.report[i]);
    return 0;
}
