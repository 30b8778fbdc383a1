/* leak_battery_eval.h - runs the leak battery (leak_battery.h) through the
 * real analysis: writes each case, loads it, builds its report and compares
 * the memory_leak verdict and slope with what the case is. Header-only: it
 * needs the tool code, which only the programs that include it link. */
#ifndef PROF_TESTS_LEAK_BATTERY_EVAL_H
#define PROF_TESTS_LEAK_BATTERY_EVAL_H

#include <math.h>
#include <string.h>

#include "analysis/report.h"
#include "leak_battery.h"
#include "model/profile.h"


typedef struct lb_tally {
    unsigned runs, flagged;
    unsigned misses;       /* leaks not flagged                                 */
    unsigned false_alarms; /* flagged, but not a leak                           */
    unsigned slope_bad;    /* flagged leaks whose slope is off by more than
                              their tolerance (lb_truth)                        */
    double max_slope_err;  /* the largest relative error of a flagged leak      */
    double tolerance;      /* the class's limit on it (lb_truth.tolerance)      */
    unsigned errors;       /* cases that could not be written or analysed       */
} lb_tally;

static inline const cJSON *lb_member(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* Whether the report flags series, from its findings. */
static inline int lb_flagged(const cJSON *report, const char *series)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, lb_member(report, "bottlenecks")) {
        const char *rule = cJSON_GetStringValue(lb_member(f, "rule"));
        const char *subject = cJSON_GetStringValue(lb_member(f, "subject"));
        if (rule && subject && strcmp(rule, "memory_leak") == 0 && strcmp(subject, series) == 0)
            return 1;
    }
    return 0;
}

/* The fitted slope of series, per step or per second; NAN without one. */
static inline double lb_slope(const cJSON *report, const char *series, int per_s)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, lb_member(report, "memory")) {
        const char *name = cJSON_GetStringValue(lb_member(m, "series"));
        if (!name || strcmp(name, series) != 0)
            continue;
        const cJSON *v = lb_member(lb_member(m, "fit"), per_s ? "slope_bytes_per_s"
                                                              : "slope_bytes_per_step");
        return cJSON_IsNumber(v) ? v->valuedouble : NAN;
    }
    return NAN;
}

/* The report of one file with the default options, or NULL. */
static inline cJSON *lb_report(const char *path)
{
    profile_model m;
    prof_error err = { PROF_OK, "" };
    if (profile_model_load(path, NULL, &m, NULL, NULL, &err) != PROF_OK)
        return NULL;
    const profile_model *one[1] = { &m };
    cJSON *r = report_build(one, 1, NULL, &err);
    profile_model_free(&m);
    return r;
}

static inline void lb_count(lb_tally *t, const lb_truth *truth, int flagged, double slope)
{
    t->runs++;
    t->tolerance = truth->tolerance;
    t->flagged += (unsigned)flagged;
    if (truth->leak && !flagged)
        t->misses++;
    if (!truth->leak && flagged)
        t->false_alarms++;
    if (truth->leak && flagged) {
        double err = fabs(slope - truth->slope) / truth->slope;
        if (!(err <= truth->tolerance))
            t->slope_bad++;
        if (!(err <= t->max_slope_err))
            t->max_slope_err = isnan(err) ? INFINITY : err;
    }
}

/* Seeds [0, seeds) of class c, each written to path and analysed. */
static inline lb_tally lb_run(lb_class c, unsigned seeds, const char *path)
{
    lb_tally t = { 0 };
    for (unsigned s = 0; s < seeds; s++) {
        lb_truth truth;
        cJSON *r = lb_write(path, c, s, &truth) == 0 ? lb_report(path) : NULL;
        if (!r) {
            t.errors++;
            continue;
        }
        lb_count(&t, &truth, lb_flagged(r, truth.series),
                 lb_slope(r, truth.series, truth.per_s));
        cJSON_Delete(r);
    }
    return t;
}

#endif
