/* rules.c - the rules that read per-operation, per-thread, sync and
 * completeness totals (formats/rules.md §4.1, §4.3, §4.4, §4.8; the GPU
 * rules are in gpurules.c). Each appends zero or more findings to the
 * report; none changes the model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/report_keys.h"

/* rules.md §1: the steps the program made with prof_step(), not the part
 * after the last one, which prof_stop closed as incomplete; counted over
 * every step, kept in the model or not. */
double counted_steps(const profile_model *m)
{
    return (double)m->step_totals.complete;
}

double sampled_steps(const profile_model *m)
{
    return (double)m->step_totals.sampled;
}

/* ---- hot_operation -------------------------------------------------------- */

static const char *kind_fix(uint32_t kind)
{
    switch (kind) {
    case PROF_KIND_DATA:
        return "load ahead of the loop: more DataLoader workers, pinned memory, prefetching, "
               "cheaper decoding";
    case PROF_KIND_SYNC:
        return "remove the host-device synchronisation inside it (.item(), .cpu(), printing "
               "tensors)";
    case PROF_KIND_COMM:
        return "overlap communication with computation (gradient bucketing, async "
               "collectives)";
    case PROF_KIND_IO:
        return "cache, read ahead, or move the I/O off the training thread";
    case MODEL_KIND_GPU:
        return "this kernel dominates GPU time: check its shapes and precision and whether a "
               "fused or library implementation exists";
    default:
        return "profile inside it with nested regions; look for Python-level loops, small "
               "kernels that could be fused (torch.compile) and fp32 work that could use "
               "mixed precision";
    }
}

/* By what the op is when its class says (rules.md §4.1), else by its kind;
 * a class prof does not know is the program's own code. */
static const char *hot_fix(const model_op *op, char *buf, size_t size)
{
    const char *fix = opclass_fix(op, buf, size);
    if (fix)
        return fix;
    if (op->cls && *op->cls && op->kind == PROF_KIND_COMPUTE)
        return fmt_text(buf, size, "it is %s, the program's own code: %s", op->cls,
                        kind_fix(op->kind));
    return kind_fix(op->kind);
}

static void hot_finding(analysis_ctx *c, const model_op *op, double base)
{
    double self = (double)op->self_ns / base, incl = (double)op->incl_ns / base;
    char title[200], rec[1200], fix[800], a[32], b[32], with[80] = "";
    const char *basis = op->kind == MODEL_KIND_GPU ? "GPU busy time" : "profiled time";
    fmt_text(title, sizeof title, "%s takes %s of %s in its own code", op->name,
             fmt_pct(a, sizeof a, self), basis);
    if (op->incl_ns > op->self_ns)
        fmt_text(with, sizeof with, ", %s including what it calls", fmt_pct(b, sizeof b, incl));
    fmt_text(rec, sizeof rec, "%s spends %s of %s in its own code (%llu calls%s): %s.",
             op->name, fmt_pct(a, sizeof a, self), basis, (unsigned long long)op->calls, with,
             hot_fix(op, fix, sizeof fix));
    cJSON *e = finding_add(c, "hot_operation", severity_by(self, 0.30, 0.10), op->name, self,
                           title, rec);
    jnum(c, e, RK_SELF_SHARE, self);
    jnum(c, e, RK_INCL_SHARE, incl);
    jnum(c, e, RK_SELF_NS, (double)op->self_ns);
    jnum(c, e, RK_INCL_NS, (double)op->incl_ns);
    jnum(c, e, RK_CALLS, (double)op->calls);
    jnum(c, e, RK_MEAN_NS, op->mean_ns);
    jnum(c, e, RK_P95_NS, sketch_quantile(&op->dur, 0.95));
    jstr(c, e, RK_KIND, op_kind_name(op->kind));
    jstr(c, e, RK_BASIS, op->kind == MODEL_KIND_GPU ? "gpu_busy" : "profiled");
    if (op->cls)
        jstr(c, e, RK_MODULE_CLASS, op->cls);
}

int op_waits_for_others(const model_op *op)
{
    return op->kind != MODEL_KIND_GPU && op->incl_ns > 0 &&
           (double)op->self_ns >= OP_WAITS_OWN * (double)op->incl_ns &&
           (double)op->outer_long_ns >= OP_WAITS_OUTER * (double)op->incl_ns &&
           (double)op->others_ns >= OP_WAITS_COVERED * (double)op->outer_long_ns;
}

void rule_hot_operation(analysis_ctx *c)
{
    const profile_model *m = c->m;
    double threshold = c->o.hot_threshold_pct / 100.0;
    for (size_t i = 0; i < m->nops; i++) {
        const model_op *op = &m->ops[i];
        int gpu = op->kind == MODEL_KIND_GPU;
        double base = gpu ? c->gpu_busy_ns : (double)m->profiled_ns;
        if (op->comm) /* its time is judged by exposed_comm (rules.md §4.10) */
            continue;
        if (op_waits_for_others(op)) /* said in a note (report.c) */
            continue;
        if (base > 0 && (double)op->self_ns / base >= threshold && op->self_ns > 0)
            hot_finding(c, op, base);
    }
}

/* ---- cpu_gpu_sync ------------------------------------------------------------- */

double sync_share(const analysis_ctx *c, const char **basis)
{
    const profile_model *m = c->m;
    int gpu = m->has_gpu && c->gpu_busy_ns > 0;
    double base = gpu ? c->gpu_busy_ns : (double)m->profiled_ns;
    if (basis)
        *basis = gpu ? "gpu_busy" : "profiled";
    return base > 0 ? (double)m->sync_blocked_ns / base : 0.0;
}

uint64_t sync_waited(const uint64_t waits[MODEL_WAIT_BANDS])
{
    uint64_t n = 0;
    for (unsigned k = 1; k < MODEL_WAIT_BANDS; k++)
        n += waits[k];
    return n;
}

void sync_waits_json(analysis_ctx *c, cJSON *o, const uint64_t waits[MODEL_WAIT_BANDS])
{
    static const double bounds[MODEL_WAIT_BANDS + 1] = { 0, MODEL_WAIT_SHORT_NS,
                                                         MODEL_WAIT_LONG_NS, -1 };
    jnum(c, o, RK_WAITED, (double)sync_waited(waits));
    cJSON *a = jarr(c, o, RK_WAITS);
    for (unsigned k = 0; k < MODEL_WAIT_BANDS; k++) {
        cJSON *b = jpush_obj(c, a);
        jnum(c, b, RK_MIN_NS, bounds[k]);
        if (bounds[k + 1] < 0)
            jnull(c, b, RK_MAX_NS);
        else
            jnum(c, b, RK_MAX_NS, bounds[k + 1]);
        jnum(c, b, RK_COUNT, (double)waits[k]);
    }
}

/* "111 syncs, 11 of them waited 10 us or more (5 over 1 ms)": a sync
 * that found the GPU done cost only its call (rules.md §4.3). */
static const char *sync_counts_text(char *buf, size_t size, const uint64_t waits[MODEL_WAIT_BANDS],
                                    uint64_t count)
{
    uint64_t waited = sync_waited(waits), long_waits = waits[MODEL_WAIT_BANDS - 1];
    if (waited == count)
        return fmt_text(buf, size, "%llu syncs, %llu of them over 1 ms",
                        (unsigned long long)count, (unsigned long long)long_waits);
    return fmt_text(buf, size, "%llu syncs, of which %llu waited 10 us or more (%llu over 1 ms) "
                    "and %llu found the GPU done", (unsigned long long)count,
                    (unsigned long long)waited, (unsigned long long)long_waits,
                    (unsigned long long)(count - waited));
}

static const char *site_name(const profile_model *m, const model_sync_site *s)
{
    return s->op < m->nops ? m->ops[s->op].name : "(outside any region)";
}

/* Indexes of the sync sites by blocked time, largest first (at most 5). */
static size_t top_sites(const profile_model *m, size_t out[5])
{
    size_t n = 0;
    for (size_t i = 0; i < m->nsync_sites; i++) {
        size_t j = n < 5 ? n++ : 5;
        if (j == 5 && m->sync_sites[i].blocked_ns <= m->sync_sites[out[4]].blocked_ns)
            continue;
        if (j == 5)
            j = 4;
        while (j > 0 && m->sync_sites[out[j - 1]].blocked_ns < m->sync_sites[i].blocked_ns) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = i;
    }
    return n;
}

void rule_cpu_gpu_sync(analysis_ctx *c)
{
    const profile_model *m = c->m;
    const char *basis;
    double share = sync_share(c, &basis);
    if (m->sync_count == 0 || share < c->o.sync_threshold_pct / 100.0)
        return;
    size_t idx[5], n = top_sites(m, idx);
    double steps = sampled_steps(m), per_step = steps > 0 ? (double)m->sync_count / steps : 0;
    const char *where = n ? site_name(m, &m->sync_sites[idx[0]]) : "(unknown)";
    char title[240], rec[900], a[32], b[48] = "", subject[160], counts[160];
    double lost = m->profiled_ns ? (double)m->sync_blocked_ns / (double)m->profiled_ns : share;
    int gpu_basis = strcmp(basis, "gpu_busy") == 0;
    if (gpu_basis) { /* the bar shows the time lost: the title says both figures */
        char l[32];
        fmt_text(b, sizeof b, " (%s of profiled time)", fmt_pct(l, sizeof l, fmin(1.0, lost)));
    }
    fmt_text(subject, sizeof subject, "%s", where);
    fmt_text(title, sizeof title, "the CPU waits for the GPU %s of %s%s, mostly in %s",
             fmt_pct(a, sizeof a, share), gpu_basis ? "GPU busy time" : "profiled time", b,
             where);
    fmt_text(rec, sizeof rec,
             "The CPU waits for the GPU %s of the time, mostly in %s (%s; %.1f per "
             "step). Avoid reading GPU values on the host inside the loop (.item(), .cpu(), "
             ".numpy(), printing tensors, Python conditions on tensors): accumulate metrics on "
             "the GPU and read them every N steps; use non_blocking copies from pinned memory.",
             fmt_pct(a, sizeof a, share), where,
             sync_counts_text(counts, sizeof counts, m->sync_waits, m->sync_count), per_step);
    cJSON *e = finding_add(c, "cpu_gpu_sync", severity_by(share, 0.30, 0.10), subject, lost,
                           title, rec);
    jnum(c, e, RK_SHARE, share);
    jstr(c, e, RK_BASIS, basis);
    jnum(c, e, RK_BLOCKED_NS, (double)m->sync_blocked_ns);
    jnum(c, e, RK_COUNT, (double)m->sync_count);
    jnum(c, e, RK_PER_STEP, per_step);
    sync_waits_json(c, e, m->sync_waits);
    cJSON *sites = jarr(c, e, "sites");
    for (size_t i = 0; i < n; i++) {
        const model_sync_site *s = &m->sync_sites[idx[i]];
        cJSON *o = jpush_obj(c, sites);
        jstr(c, o, RK_NAME, site_name(m, s));
        jnum(c, o, RK_COUNT, (double)s->count);
        jnum(c, o, RK_WAITED, (double)sync_waited(s->waits));
        jnum(c, o, RK_BLOCKED_NS, (double)s->blocked_ns);
        jnum(c, o, RK_SHARE, m->sync_blocked_ns ? (double)s->blocked_ns /
                                                     (double)m->sync_blocked_ns : 0.0);
    }
}

/* ---- data_loading ---------------------------------------------------------------- */

typedef struct thread_kinds {
    double kind_ns[5];
    double *op_ns;          /* DATA/IO self time per operation on this thread */
    uint32_t op[3];         /* the three largest of them                      */
} thread_kinds;

static void pick_top_data_ops(const profile_model *m, thread_kinds *k)
{
    for (int i = 0; i < 3; i++)
        k->op[i] = MODEL_NONE;
    for (uint32_t o = 0; o < m->nops; o++) {
        if (k->op_ns[o] <= 0)
            continue;
        int j = 3;
        while (j > 0 && (k->op[j - 1] == MODEL_NONE || k->op_ns[k->op[j - 1]] < k->op_ns[o]))
            j--;
        if (j == 3)
            continue;
        for (int i = 2; i > j; i--)
            k->op[i] = k->op[i - 1];
        k->op[j] = o;
    }
}

/* Self time by kind over the subtree below node (iterative, the tree can be
 * deep). */
static void thread_kind_time(const profile_model *m, uint32_t root, thread_kinds *k)
{
    uint32_t n = m->nodes[root].first_child;
    while (n != MODEL_NONE && n != root) {
        const model_node *node = &m->nodes[n];
        if (node->op < m->nops && m->ops[node->op].kind < 5) {
            uint32_t kind = m->ops[node->op].kind;
            k->kind_ns[kind] += (double)node->self_ns;
            if (kind == PROF_KIND_DATA || kind == PROF_KIND_IO)
                k->op_ns[node->op] += (double)node->self_ns;
        }
        if (node->first_child != MODEL_NONE) {
            n = node->first_child;
            continue;
        }
        while (n != root && m->nodes[n].next_sibling == MODEL_NONE)
            n = m->nodes[n].parent;
        if (n == root || n == MODEL_NONE)
            break;
        n = m->nodes[n].next_sibling;
    }
}

static void data_finding(analysis_ctx *c, const model_thread *t, const thread_kinds *k,
                         double data, double share)
{
    const profile_model *m = c->m;
    char name[64], ops[200] = "", title[200], rec[800], a[32];
    fmt_text(name, sizeof name, "%s", t->name ? t->name : "");
    if (!t->name)
        fmt_text(name, sizeof name, "thread %u", t->index);
    for (int i = 0; i < 3 && k->op[i] != MODEL_NONE; i++) {
        size_t len = strlen(ops);
        fmt_text(ops + len, sizeof ops - len, "%s%s", i ? ", " : "", m->ops[k->op[i]].name);
    }
    fmt_text(title, sizeof title, "thread %s spends %s of its time loading data", name,
             fmt_pct(a, sizeof a, share));
    fmt_text(rec, sizeof rec,
             "Thread %s spends %s of its time loading data (in %s). Load ahead of the "
             "training loop: more DataLoader workers, pin_memory, prefetch_factor, persistent "
             "workers; move decoding and augmentation to the loader processes or the GPU.",
             name, fmt_pct(a, sizeof a, share), ops[0] ? ops : "regions of kind data/io");
    double impact = m->profiled_ns ? data / (double)m->profiled_ns : share;
    cJSON *e = finding_add(c, "data_loading", severity_by(share, 0.30, 0.10),
                           k->op[0] != MODEL_NONE ? m->ops[k->op[0]].name : name, impact,
                           title, rec);
    jnum(c, e, RK_THREAD, t->index);
    jstr(c, e, "thread_name", name);
    jnum(c, e, RK_SHARE, share);
    jnum(c, e, "data_ns", data);
    jnum(c, e, RK_BUSY_NS, (double)t->busy_ns);
    cJSON *list = jarr(c, e, RK_OPERATIONS);
    for (int i = 0; i < 3 && k->op[i] != MODEL_NONE; i++) {
        cJSON *it = cJSON_CreateString(m->ops[k->op[i]].name);
        if (!it || !list || !cJSON_AddItemToArray(list, it)) {
            cJSON_Delete(it);
            c->ok = 0;
        }
    }
}

void rule_data_loading(analysis_ctx *c)
{
    const profile_model *m = c->m;
    for (size_t i = 0; i < m->nthreads; i++) {
        const model_thread *t = &m->threads[i];
        if (t->busy_ns == 0 || t->root >= m->nnodes)
            continue;
        thread_kinds k = { .op_ns = xcalloc(c, m->nops, sizeof(double)) };
        if (!k.op_ns)
            return;
        thread_kind_time(m, t->root, &k);
        pick_top_data_ops(m, &k);
        double data = k.kind_ns[PROF_KIND_DATA] + k.kind_ns[PROF_KIND_IO];
        double share = data / (double)t->busy_ns;
        /* a dedicated loader thread (share >= 90%): loading in parallel is the goal */
        if (share >= 0.10 && share < 0.90)
            data_finding(c, t, &k, data, share);
        free(k.op_ns);
    }
}

/* ---- dropped_events --------------------------------------------------------------------- */

void rule_dropped_events(analysis_ctx *c)
{
    const profile_model *m = c->m;
    if (m->dropped_events == 0)
        return;
    double total = (double)m->events + (double)m->dropped_events;
    double frac = (double)m->dropped_events / total;
    char title[160], rec[600], a[32];
    fmt_text(title, sizeof title, "the recording lost %llu events (%s)",
             (unsigned long long)m->dropped_events, fmt_pct(a, sizeof a, frac));
    fmt_text(rec, sizeof rec,
             "The recording lost %llu events: every time and share in this report undercounts. "
             "Raise PROF_BUFFER_MB, lower PROF_SAMPLE_RATE or record a schedule "
             "(PROF_SCHEDULE) so fewer steps are kept in full.",
             (unsigned long long)m->dropped_events);
    cJSON *e = finding_add(c, "dropped_events", severity_by(frac, 0.10, 0.01), "recording",
                           frac, title, rec);
    jnum(c, e, RK_DROPPED_EVENTS, (double)m->dropped_events);
    jnum(c, e, RK_EVENTS, (double)m->events);
    jnum(c, e, "fraction", frac);
}
