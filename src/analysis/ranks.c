/* ranks.c - the ranks of one job (ranks.h, formats/rules.md §4.9): each
 * rank's summary, built from its model alone so that the model can be
 * freed before the next rank is loaded, and the cross-rank part of the
 * report - the straggler, the rank described, the ranks table - built from
 * summaries only. The summary file (formats/rank-summary.md) carries the
 * same fields, so that ranks summarised on other machines merge into the
 * same report as the profiles analysed here. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/ranks.h"
#include "analysis/ranks_int.h"
#include "analysis/report_keys.h"
#include "analysis/sections.h"
#include "util/error.h"

struct ranks_analysis {
    analysis_ctx c;        /* ranks, options and the collectives matched   */
    size_t described;
};

/* ---- a rank's summary ---------------------------------------------------------------- */

static double memory_peak_weight(const void *series, size_t i)
{
    const model_series *s = &((const model_series *)series)[i];
    return s->is_memory ? s->peak : NAN;
}

/* The peak of each memory series, in the model's order: the ranks table
 * shows every rank's peak of the series that peaks highest on the rank
 * described. A rank of more than max_names series keeps its largest. */
static void summary_peaks(analysis_ctx *c, rank_summary *s, const profile_model *m)
{
    size_t cut;
    unsigned char *listed = report_listed(c, m->series, m->nseries, memory_peak_weight, &cut);
    s->peaks = cJSON_CreateObject();
    if (!s->peaks)
        c->ok = 0;
    for (size_t i = 0; s->peaks && i < m->nseries; i++)
        if (m->series[i].is_memory && (!listed || listed[i]))
            jnum(c, s->peaks, m->series[i].name, m->series[i].peak);
    free(listed);
}

/* What the rank's own report found: counts by severity and the first
 * (most severe) finding. */
static void summary_findings(analysis_ctx *c, rank_summary *s, const cJSON *report)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(report, RK_BOTTLENECKS), *f;
    double high = 0, medium = 0, low = 0;
    cJSON_ArrayForEach(f, arr) {
        const char *sev = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, RK_SEVERITY));
        high += sev && strcmp(sev, "high") == 0;
        medium += sev && strcmp(sev, "medium") == 0;
        low += sev && strcmp(sev, "low") == 0;
    }
    if (!(s->findings = cJSON_CreateObject())) {
        c->ok = 0;
        return;
    }
    jnum(c, s->findings, SK_HIGH, high);
    jnum(c, s->findings, SK_MEDIUM, medium);
    jnum(c, s->findings, SK_LOW, low);
    const cJSON *first = cJSON_GetArrayItem(arr, 0);
    if (first) {
        jstr(c, s->findings, RK_RULE,
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first, RK_RULE)));
        jstr(c, s->findings, RK_SEVERITY,
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first, RK_SEVERITY)));
        jstr(c, s->findings, RK_TITLE,
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first, RK_TITLE)));
    }
}

/* The kept steps' times in at most RANK_BUCKETS buckets of consecutive
 * numbers, the buckets as small as that allows (a power of two). */
static void summary_buckets(rank_summary *s, const profile_model *m, const step_stats *st)
{
    s->bucket_size = 1;
    if (st->n == 0)
        return;
    uint64_t lo = UINT64_MAX, hi = 0, size = 1;
    for (size_t i = 0; i < st->n; i++) {
        uint64_t k = m->steps[st->index[i]].number;
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    while (hi / size - lo / size >= RANK_BUCKETS)
        size *= 2;
    s->bucket_size = size;
    s->bucket_first = lo / size;
    s->nbuckets = (size_t)(hi / size - s->bucket_first + 1);
    s->has_gpu = m->ngpus > 0;
    for (size_t i = 0; i < st->n; i++) {
        const model_step *step = &m->steps[st->index[i]];
        size_t k = (size_t)(step->number / size - s->bucket_first);
        s->bucket_sum[k] += st->dur[i];
        s->bucket_count[k]++;
        if (s->has_gpu && (step->flags & PROF_STEP_SAMPLED) &&
            !(step->flags & PROF_STEP_INCOMPLETE)) {
            s->bucket_gpu[k] += (double)step->dur_ns * (double)m->ngpus;
            s->bucket_busy[k] += (double)step->gpu_busy_ns;
        }
    }
}

/* Room for n >= 1 operations and their names (len bytes with their NULs), in
 * one block: a summary outlives the model it was built from, and one block
 * left between the model's allocations fragments the heap less than many. */
rank_op *ranks_ops_alloc(size_t n, size_t len)
{
    rank_op *ops = malloc(n * sizeof *ops + len);
    if (ops)
        ops[0].name = (char *)(ops + n);
    return ops;
}

/* The operations and kernels a rank spends most of its work on, per step,
 * for the cross-rank rules to say where two ranks differ (rules.md §4.12).
 * Communication is left out: its time is mostly waiting for other ranks. */
static void summary_ops(analysis_ctx *c, rank_summary *s, const profile_model *m, double basis)
{
    if (basis <= 0 || m->nops == 0 || m->nops > UINT32_MAX)
        return;
    uint32_t *order = xcalloc(c, m->nops, sizeof *order);
    if (!order)
        return;
    for (size_t i = 0; i < m->nops; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, m->nops, sizeof *order, ops_by_self_desc, m->ops);
    const model_op *kept[2 * RANK_OPS];
    size_t n = 0, len = 0, per_class[2] = { 0, 0 };
    for (size_t i = 0; i < m->nops && n < 2 * RANK_OPS; i++) {
        const model_op *op = &m->ops[order[i]];
        int gpu = op->kind == MODEL_KIND_GPU;
        if (op->comm || op->kind == PROF_KIND_COMM || op->self_ns == 0 ||
            per_class[gpu] == RANK_OPS)
            continue;
        per_class[gpu]++;
        kept[n++] = op;
        len += strlen(op->name) + 1;
    }
    free(order);
    if (n == 0)
        return;
    if (!(s->ops = ranks_ops_alloc(n, len))) {
        c->ok = 0;
        return;
    }
    char *name = s->ops[0].name;
    for (size_t i = 0; i < n; i++) {
        rank_op *o = &s->ops[s->nops++];
        o->gpu = kept[i]->kind == MODEL_KIND_GPU;
        o->ns_per_step = (double)kept[i]->self_ns / basis;
        o->name = strcpy(name, kept[i]->name);
        name += strlen(name) + 1;
    }
}

static void summary_steps_and_row(analysis_ctx *c, rank_summary *s, const profile_model *m)
{
    step_stats st;
    memset(&st, 0, sizeof st);
    if (steps_analyze(m, &st) != 0) {
        c->ok = 0;
        return;
    }
    s->steps_n = st.n;
    s->steps_count = st.count;
    s->step_mean = st.mean;
    s->step_p50 = st.p50;
    s->comm_per_step = rank_comm_per_step(m, &st);
    summary_buckets(s, m, &st);
    if (st.n > 0)
        summary_ops(c, s, m, rank_step_basis(m, &st));
    step_stats_free(&st);
    cJSON *o = s->row = cJSON_CreateObject();
    if (!o)
        c->ok = 0;
    jnum(c, o, RK_RANK, m->rank);
    jstr(c, o, RK_PATH, s->path);
    jnum(c, o, RK_STEPS, (double)s->steps_count);
    jnum(c, o, RK_MEAN_STEP_NS, s->step_mean);
    jnum(c, o, RK_P50_STEP_NS, s->step_p50);
    jnum(c, o, RK_COMM_NS_PER_STEP, s->comm_per_step);
    jnum(c, o, RK_WORK_NS_PER_STEP, s->step_mean - s->comm_per_step);
    rank_gpu_fields(c, o, m);
    if (m->launch_all.launches) { /* each rank's kernel launch statistics (rules.md §3.2) */
        if (!(s->launches = cJSON_CreateObject()))
            c->ok = 0;
        else
            launch_stats(c, s->launches, &m->launch_all);
    }
}

prof_err rank_summary_build(const profile_model *m, cJSON *report, int keep_report,
                            collective_store *store, rank_summary *out, prof_error *err)
{
    analysis_ctx c = { .m = m, .ok = 1 };
    analysis_options_default(&c.o);
    memset(out, 0, sizeof *out);
    out->rank = m->rank;
    out->world_size = m->world_size;
    out->profile = report_profile_entry(&c, m);
    out->path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(out->profile, RK_PATH));
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(out->profile, RK_METADATA);
    const char *host = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, MK_HOST));
    out->host = strdup(host ? host : "");
    if (!out->path || !out->host)
        c.ok = 0;
    if (c.ok)
        summary_steps_and_row(&c, out, m);
    summary_peaks(&c, out, m);
    if (report)
        summary_findings(&c, out, report);
    if (keep_report)
        out->report = report;
    else
        cJSON_Delete(report);
    if (!c.ok) {
        rank_summary_free(out);
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory summarising '%s'",
                              m->path ? m->path : "");
    }
    out->store = store;
    prof_err e = collective_list_store(store, m->comm_kernels, m->ncomm_kernels, &out->kernels,
                                       err);
    if (e == PROF_OK)
        e = collective_list_store(store, m->comm_regions, m->ncomm_regions, &out->regions, err);
    if (e != PROF_OK)
        rank_summary_free(out);
    return e;
}

/* A copy of *p in a block of its own, the original freed; 0, or -1 out
 * of memory (*p left as it was). */
static int move_json(cJSON **p)
{
    if (!*p)
        return 0;
    cJSON *copy = cJSON_Duplicate(*p, 1);
    if (!copy)
        return -1;
    cJSON_Delete(*p);
    *p = copy;
    return 0;
}

static int move_block(void **p, size_t size)
{
    if (!*p || !size)
        return 0;
    void *copy = malloc(size);
    if (!copy)
        return -1;
    memcpy(copy, *p, size);
    free(*p);
    *p = copy;
    return 0;
}

prof_err rank_summary_compact(rank_summary *s, prof_error *err)
{
    size_t ops = 0;
    for (size_t i = 0; i < s->nops; i++)
        ops += sizeof *s->ops + strlen(s->ops[i].name) + 1;
    char *old_ops = (char *)s->ops;
    int bad = move_json(&s->profile) || move_json(&s->row) || move_json(&s->launches) ||
              move_json(&s->peaks) || move_json(&s->findings) ||
              move_block((void **)&s->host, strlen(s->host) + 1) ||
              move_block((void **)&s->ops, ops) ||
              move_block((void **)&s->kernels.runs, s->kernels.nruns * sizeof *s->kernels.runs) ||
              move_block((void **)&s->regions.runs, s->regions.nruns * sizeof *s->regions.runs);
    /* the names point into the block moved */
    for (size_t i = 0; s->ops && (char *)s->ops != old_ops && i < s->nops; i++)
        s->ops[i].name = (char *)s->ops + (s->ops[i].name - old_ops);
    s->path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s->profile, RK_PATH));
    if (bad)
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    return PROF_OK;
}

void rank_summary_free(rank_summary *s)
{
    cJSON_Delete(s->profile);
    cJSON_Delete(s->row);
    cJSON_Delete(s->launches);
    cJSON_Delete(s->peaks);
    cJSON_Delete(s->findings);
    cJSON_Delete(s->report);
    free(s->ops);
    free(s->host);
    collective_list_free(&s->kernels);
    collective_list_free(&s->regions);
    memset(s, 0, sizeof *s);
}

/* ---- the cross-rank analysis --------------------------------------------------------- */

/* Several summaries must be distinct ranks of one world. */
static prof_err check_ranks(const rank_summary *s, size_t n, prof_error *err)
{
    for (size_t i = 0; i < n; i++) {
        /* Paths shortened, two at most: the reason always fits the message. */
        char shown[PROF_SUBJECT_MAX], other[PROF_SUBJECT_MAX];
        const char *path = prof_error_subject(shown, s[i].path);
        if (s[i].rank < 0 || s[i].world_size <= 0)
            return prof_error_set(err, PROF_ERR_INVALID, "not ranks of one job: '%s' has no "
                                  "rank in its metadata", path);
        if (s[i].world_size != s[0].world_size)
            return prof_error_set(err, PROF_ERR_INVALID, "not ranks of one job: world size %d "
                                  "in '%s', %d in '%s'", s[i].world_size, path, s[0].world_size,
                                  prof_error_subject(other, s[0].path));
        if (s[i].rank >= s[i].world_size)
            return prof_error_set(err, PROF_ERR_INVALID, "not ranks of one job: '%s' has rank "
                                  "%d of world size %d", path, s[i].rank, s[i].world_size);
        for (size_t j = 0; j < i; j++)
            if (s[j].rank == s[i].rank)
                return prof_error_set(err, PROF_ERR_INVALID, "not ranks of one job: both rank "
                                      "%d, '%s' and '%s'", s[i].rank,
                                      prof_error_subject(other, s[j].path), path);
    }
    return PROF_OK;
}

/* How much rank i holds the job back, as two keys compared in turn: the
 * other ranks' wait it caused in the collectives matched across ranks
 * (none when too few were matched), then its mean step time (-1 without
 * steps). */
static int holds_back_more(const analysis_ctx *c, size_t i, size_t than)
{
    const collective_match *coll = &c->coll;
    double a = coll->source ? coll->ranks[i].caused_ns : 0.0;
    double b = coll->source ? coll->ranks[than].caused_ns : 0.0;
    if (a != b)
        return a > b;
    double ma = c->ranks[i].steps_count > 0 ? c->ranks[i].step_mean : -1.0;
    double mb = c->ranks[than].steps_count > 0 ? c->ranks[than].step_mean : -1.0;
    return ma > mb;
}

/* The rank the sections describe (rules.md §1): the one asked for, the
 * first given, or the one that holds the job back most (the first of
 * equals: the first given when no rank has steps or collectives). */
static size_t described_rank(const analysis_ctx *c)
{
    size_t pick = 0;
    for (size_t i = 0; c->o.rank != ANALYSIS_RANK_FIRST && i < c->nranks; i++)
        if (c->o.rank >= 0 ? c->ranks[i].rank == c->o.rank : holds_back_more(c, i, pick))
            pick = i;
    return pick;
}

ranks_analysis *ranks_analyze(const rank_summary *s, size_t n, const analysis_options *o,
                              prof_error *err)
{
    if (check_ranks(s, n, err) != PROF_OK)
        return NULL;
    int found = !o || o->rank < 0;
    for (size_t i = 0; !found && i < n; i++)
        found = s[i].rank == o->rank;
    if (!found)
        return prof_error_set(err, PROF_ERR_INVALID, "--rank %d: no profile of that rank among "
                              "the %zu given", o->rank, n), NULL;
    ranks_analysis *a = calloc(1, sizeof *a);
    if (!a)
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory"), NULL;
    a->c.ranks = s;
    a->c.nranks = n;
    a->c.ok = 1;
    if (o)
        a->c.o = *o;
    else
        analysis_options_default(&a->c.o);
    if (straggler_match(&a->c) != 0) {
        int e = n ? collective_store_error(s[0].store) : 0;
        ranks_analysis_free(a);
        if (e && e != ENOMEM)
            return prof_error_set(err, PROF_ERR_IO, "cannot read the collectives back from "
                                  "their temporary file: %s", strerror(e)), NULL;
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory matching collectives"), NULL;
    }
    a->described = described_rank(&a->c);
    return a;
}

size_t ranks_described(const ranks_analysis *a)
{
    return a->described;
}

void ranks_analysis_free(ranks_analysis *a)
{
    if (!a)
        return;
    free(a->c.coll.ranks);
    free(a->c.coll.ends);
    free(a);
}

static void add_copy(analysis_ctx *c, cJSON *o, const char *key, const cJSON *item)
{
    jb_attach(&c->ok, o, key, cJSON_Duplicate(item, 1));
}

/* The memory series the ranks table compares: the one with the largest
 * peak on the rank described, so that every row's figure is of the same
 * series (gpu.allocated beside gpu.allocated); NULL without one. */
static const char *ranks_memory_series(const rank_summary *d)
{
    const cJSON *p, *top = NULL;
    cJSON_ArrayForEach(p, d->peaks) if (!top || p->valuedouble > top->valuedouble) top = p;
    return top ? top->string : NULL;
}

/* The counts of a rank's own findings, and the first (most severe). */
static void rank_findings(analysis_ctx *c, cJSON *o, const cJSON *f)
{
    static const char *const keys[][2] = { { SK_HIGH, RK_FINDINGS_HIGH },
                                           { SK_MEDIUM, RK_FINDINGS_MEDIUM },
                                           { SK_LOW, RK_FINDINGS_LOW } };
    for (size_t i = 0; i < 3; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, keys[i][0]);
        jnum(c, o, keys[i][1], cJSON_IsNumber(v) ? v->valuedouble : 0.0);
    }
    const char *title = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, RK_TITLE));
    const char *rule = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, RK_RULE));
    if (title && rule) {
        jstr(c, o, RK_TOP_FINDING, title);
        jstr(c, o, RK_TOP_FINDING_RULE, rule);
    }
}

static void section_ranks(analysis_ctx *c, cJSON *report, size_t described)
{
    cJSON *arr = jarr(c, report, RK_RANKS);
    const char *memory = ranks_memory_series(&c->ranks[described]);
    for (size_t i = 0; i < c->nranks; i++) {
        const rank_summary *s = &c->ranks[i];
        cJSON *o = jb_attach(&c->ok, arr, NULL, cJSON_Duplicate(s->row, 1));
        if (!o)
            return;
        const cJSON *peak = memory ? cJSON_GetObjectItemCaseSensitive(s->peaks, memory) : NULL;
        if (cJSON_IsNumber(peak)) {
            jnum(c, o, RK_MEMORY_PEAK_BYTES, peak->valuedouble);
            jstr(c, o, RK_MEMORY_PEAK_SERIES, memory);
        }
        if (s->launches)
            add_copy(c, o, RK_LAUNCHES, s->launches);
        straggler_rank_fields(c, o, i);
        if (s->findings)
            rank_findings(c, o, s->findings);
        jbool(c, o, RK_DESCRIBED, i == described);
    }
}

/* The steps' span of a rank, in step numbers: [*lo, *hi]; 0 without. */
static int bucket_span(const rank_summary *s, uint64_t *lo, uint64_t *hi)
{
    if (!s->nbuckets)
        return 0;
    *lo = s->bucket_first * s->bucket_size;
    *hi = (s->bucket_first + s->nbuckets) * s->bucket_size - 1;
    return 1;
}

/* Appends num / den to arr, null when den is 0; a share when share,
 * kept within [0, 1] (busy time shared out between steps may pass it). */
static void push_ratio(analysis_ctx *c, cJSON *arr, double num, double den, int share)
{
    double v = den > 0 ? num / den : 0.0;
    if (share)
        v = v < 0 ? 0.0 : v > 1 ? 1.0 : v;
    jb_num(&c->ok, arr, NULL, den > 0 ? v : NAN);
}

/* One rank's row of the heat map: its buckets added into cols columns of
 * size step numbers from column first. */
static void rank_steps_row(analysis_ctx *c, const rank_summary *s, cJSON *row, uint64_t first,
                           uint64_t size, size_t cols, int gpu)
{
    double sum[RANK_BUCKETS] = { 0 }, dev[RANK_BUCKETS] = { 0 }, busy[RANK_BUCKETS] = { 0 };
    uint64_t count[RANK_BUCKETS] = { 0 };
    for (size_t k = 0; k < s->nbuckets; k++) {
        size_t col = (size_t)((s->bucket_first + k) / (size / s->bucket_size) - first);
        sum[col] += s->bucket_sum[k];
        count[col] += s->bucket_count[k];
        dev[col] += s->bucket_gpu[k];
        busy[col] += s->bucket_busy[k];
    }
    jnum(c, row, RK_RANK, s->rank);
    cJSON *means = jarr(c, row, RK_MEAN_NS);
    for (size_t k = 0; k < cols; k++)
        push_ratio(c, means, sum[k], (double)count[k], 0);
    if (!gpu)
        return;
    cJSON *idle = jarr(c, row, RK_GPU_IDLE_SHARE);
    for (size_t k = 0; k < cols; k++)
        push_ratio(c, idle, dev[k] - busy[k], dev[k], 1);
}

/* The rank x step heat map (rules.md §4.9): every rank's mean step time in
 * at most RANK_BUCKETS columns of steps_per_column consecutive step
 * numbers, a power of two no smaller than any rank's own buckets; null
 * where a rank has no step. */
static void section_rank_steps(analysis_ctx *c, cJSON *report)
{
    uint64_t lo = UINT64_MAX, hi = 0, size = 1, a, b;
    for (size_t i = 0; i < c->nranks; i++) {
        const rank_summary *s = &c->ranks[i];
        size = s->bucket_size > size ? s->bucket_size : size;
        if (bucket_span(s, &a, &b)) {
            lo = a < lo ? a : lo;
            hi = b > hi ? b : hi;
        }
    }
    if (lo > hi)
        return;
    while (hi / size - lo / size >= RANK_BUCKETS)
        size *= 2;
    size_t cols = (size_t)(hi / size - lo / size + 1);
    cJSON *o = jobj(c, report, RK_RANK_STEPS), *arr;
    jnum(c, o, RK_FIRST_STEP, (double)(lo / size * size));
    jnum(c, o, RK_STEPS_PER_COLUMN, (double)size);
    jnum(c, o, RK_COLUMNS, (double)cols);
    arr = jarr(c, o, RK_RANKS);
    int gpu = 0;
    for (size_t i = 0; i < c->nranks; i++)
        gpu |= c->ranks[i].has_gpu;
    for (size_t i = 0; i < c->nranks; i++)
        rank_steps_row(c, &c->ranks[i], jpush_obj(c, arr), lo / size, size, cols, gpu);
}

static void ranks_note(analysis_ctx *c, cJSON *report, size_t described)
{
    const rank_summary *d = &c->ranks[described];
    char buf[600];
    cJSON *notes = cJSON_GetObjectItemCaseSensitive(report, RK_NOTES);
    cJSON *note = cJSON_CreateString(fmt_text(buf, sizeof buf,
        "%zu ranks: every section but ranks describes rank %d (%s), %s", c->nranks, d->rank,
        d->path,
        c->o.rank >= 0                     ? "as --rank asked"
        : c->o.rank == ANALYSIS_RANK_FIRST ? "the first given"
        : c->coll.source ? "the one the others wait for most in collectives (--rank N "
                           "describes another)"
        : d->steps_count > 0 ? "the slowest, by mean step time (--rank N describes another)"
                             : "the first given, as no rank has steps (--rank N describes "
                               "another)"));
    jb_attach(&c->ok, notes, NULL, note);
    straggler_clock_note(c, buf, sizeof buf);
    if (buf[0])
        jb_str(&c->ok, notes, NULL, buf);
}

/* Every rank's entry of "profiles", in the order given. */
static void ranks_profiles(analysis_ctx *c, cJSON *report)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < c->nranks; i++)
        jb_attach(&c->ok, arr, NULL, cJSON_Duplicate(c->ranks[i].profile, 1));
    if (!arr || !cJSON_ReplaceItemInObjectCaseSensitive(report, RK_PROFILES, arr)) {
        cJSON_Delete(arr);
        c->ok = 0;
    }
}

cJSON *ranks_report(ranks_analysis *a, cJSON *report, prof_error *err)
{
    analysis_ctx *c = &a->c;
    c->ok = 1;
    c->bottlenecks = cJSON_GetObjectItemCaseSensitive(report, RK_BOTTLENECKS);
    if (!cJSON_IsArray(c->bottlenecks) ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(report, RK_NOTES)) ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(report, RK_PROFILES))) {
        cJSON_Delete(report);
        return prof_error_set(err, PROF_ERR_CORRUPT, "rank %d's report lacks its sections",
                              c->ranks[a->described].rank), NULL;
    }
    /* a summary's report is another machine's: no cross-rank part of its own */
    cJSON_DeleteItemFromObjectCaseSensitive(report, RK_RANKS);
    cJSON_DeleteItemFromObjectCaseSensitive(report, RK_RANK_STEPS);
    ranks_profiles(c, report);
    rule_straggler(c);
    rule_rank_spread(c);
    rule_rank_outliers(c, ranks_memory_series(&c->ranks[a->described]));
    report_sort_bottlenecks(c, c->bottlenecks);
    ranks_note(c, report, a->described);
    section_ranks(c, report, a->described);
    section_rank_steps(c, report);
    c->bottlenecks = NULL;
    if (!c->ok) {
        cJSON_Delete(report);
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory building the report"), NULL;
    }
    return report;
}

cJSON *ranks_report_rank(ranks_analysis *a, size_t index, cJSON *report, prof_error *err)
{
    size_t described = a->described;
    int rank = a->c.o.rank;
    a->described = index;
    a->c.o.rank = a->c.ranks[index].rank;
    report = ranks_report(a, report, err);
    a->described = described;
    a->c.o.rank = rank;
    return report;
}
