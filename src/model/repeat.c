/* repeat.c - the call tree's repeat path (calltree.c builds the tree the
 * general way): the outermost regions of a training loop repeat one read
 * before, region for region, and once learned their places in the tree
 * take their sums without the general way's floating nodes. The model is
 * the general way's to the bit. */
#include <stdlib.h>
#include <string.h>

#include "model/build.h"
#include "prof.h" /* prof_kind */

/* ---- the repeat path ----------------------------------------------------------------
 * A training loop's outermost regions repeat: each step brings the same
 * regions in the same order, the same operations at the same depths. The
 * general way still makes, merges and attaches floating nodes for each of
 * them, some 200 instructions a region. So once an outermost region has
 * been read the general way with no orphan, the places of its regions in
 * the tree are learned (rep.learned: each region's node is its operation's
 * child of its parent's, the parent being the next region to arrive one
 * level up, as adopt has it), up to MB_REP_KINDS kinds of them told apart
 * by their first region. While the next outermost region brings the
 * same operations of the same kinds at the same depths and no region would
 * be an orphan, its regions are only kept (rep.cur), their self times from
 * a sum of waiting durations per level, and added to the sums of their
 * places (mb_rep_path.dur and .self); when it arrives, the places count
 * one repeat more. The places' sums go into the nodes, their operations'
 * self times and their kinds' only when the places are learned anew and
 * when the file ends: no pass over the regions of each outermost region
 * but the one that keeps them. The first region that differs takes what
 * was kept back out of the sums and replays it through the general way,
 * which reads the rest; so does the end of the file. Every figure of the
 * tree is an integer sum (modulo 2^64, so taking back is exact), and syncs
 * and recent regions are met on arrival either way, so the model is the
 * general way's to the bit. */

/* Level l with no region waiting: nothing summed, and an earliest end
 * past every region's start, so that the test for orphans below needs no
 * test of whether any region waits. */
static void rep_level_empty(mb_rep *r, uint32_t l)
{
    r->sum[l] = 0;
    r->min_end[l] = UINT64_MAX;
}

void mb_rep_init(mb_rep *r)
{
    for (uint32_t l = 0; l < MB_REP_DEPTH; l++)
        rep_level_empty(r, l);
}

/* Room for kind k (learned in order, 0 first): the kinds grown to hold
 * it, at least 4. 0, or -1 when memory ran out (then nothing is learned). */
static int rep_kinds_room(mb_rep *r, uint32_t k)
{
    if (k < r->cap_kinds)
        return 0;
    uint32_t cap = r->cap_kinds ? 2 * r->cap_kinds : 4;
    if (cap > MB_REP_KINDS)
        cap = MB_REP_KINDS;
    mb_rep_learned *l = realloc(r->learned, cap * sizeof *l);
    if (!l)
        return -1;
    r->learned = l;
    uint64_t *f = realloc(r->first, cap * sizeof *f);
    if (!f)
        return -1;
    r->first = f;
    for (uint32_t i = r->cap_kinds; i < cap; i++) {
        l[i] = (mb_rep_learned){ NULL, 0, 0, 0 };
        f[i] = UINT64_MAX;
    }
    r->cap_kinds = cap;
    return 0;
}

/* The key of a kind of outermost region: its first region's. No depth
 * reaches 2^32 - 1 (MB_MAX_DEPTH), so no key is UINT64_MAX. */
static uint64_t rep_key(uint32_t depth, uint32_t op)
{
    return (uint64_t)op << 32 | depth;
}

/* The kind of outermost region learned whose first region is reg's, or
 * MB_REP_KINDS. */
static uint32_t rep_kind_of(const mb_rep *r, uint32_t depth, uint32_t op)
{
    uint64_t key = rep_key(depth, op);
    for (uint32_t k = 0; k < r->cap_kinds; k++)
        if (r->first[k] == key)
            return k;
    return MB_REP_KINDS;
}

/* The sums of the repeats of l into the tree, and l's sums to 0. */
void mb_rep_flush_sums(profile_model *m, mb_rep_learned *l)
{
    for (size_t i = 0; l->commits && i < l->n; i++) {
        mb_rep_path *p = &l->v[i];
        model_node *node = &m->nodes[p->node];
        node->calls += l->commits;
        node->incl_ns += p->dur;
        node->self_ns += p->self;
        node->gpu_self_ns += p->gpu_ns;
        node->kernels_self += p->kernels;
        m->ops[p->op].self_ns += p->self;
        if (p->kind < sizeof m->kind_ns / sizeof m->kind_ns[0])
            m->kind_ns[p->kind] += p->self;
        p->dur = p->self = p->gpu_ns = p->kernels = 0;
    }
    l->commits = 0;
}

/* The first region of an outermost region: repeat a kind learned, or read
 * the general way and learn it. */
static void rep_begin(const model_builder *b, mb_thread *t, const mb_reg *reg, uint32_t op)
{
    mb_rep *r = &t->rep;
    for (uint32_t l = 0; l < r->top; l++)
        rep_level_empty(r, l);
    r->top = 0;
    r->ncur = 0;
    r->started = 1;
    r->following = rep_kind_of(r, reg->depth, op);
    r->speculating = b->repeat && r->following < MB_REP_KINDS && t->top == 0 && r->skip == 0;
    if (r->skip)
        r->skip--;
    r->learnable = b->repeat && !r->speculating && t->top == 0;
}

/* What was kept goes the general way, which reads the rest of this
 * outermost region (and may learn it: it began with nothing waiting). A
 * repeat that fails is tried again only after 1, 2, 4 ... 64 outermost
 * regions, so that steps that alternate cost little. */
static int rep_replay(model_builder *b, uint32_t tpos)
{
    mb_rep *r = &b->threads[tpos].rep;
    mb_rep_path *v = r->learned[r->following].v;
    for (size_t i = 0; i < r->ncur; i++) { /* out of the sums, modulo 2^64 */
        v[i].dur -= r->cur[i].dur;
        v[i].self -= r->cur[i].self;
        v[i].gpu_ns -= r->cur[i].gpu_ns;
        v[i].kernels -= r->cur[i].kernels;
    }
    r->speculating = 0;
    r->learnable = 1;
    r->backoff = r->backoff ? (r->backoff < 64 ? 2 * r->backoff : 64) : 1;
    r->skip = r->backoff;
    for (size_t i = 0; i < r->ncur; i++) {
        const mb_rep_region *x = &r->cur[i];
        mb_reg reg = { x->start, x->dur, x->depth, x->kind, x->gpu_ns, x->kernels };
        if (mb_region_general(b, tpos, &reg, x->op) < 0)
            return -1;
    }
    return 0;
}

/* A repeat of the kind followed committed: n regions, the outermost of
 * them [start, start + dur) of op, in their places' sums, which count one
 * repeat more. */
static void rep_counted(model_builder *b, uint32_t tpos, size_t n, uint64_t start, uint64_t dur,
                        uint32_t op)
{
    profile_model *m = b->m;
    mb_rep *r = &b->threads[tpos].rep;
    r->learned[r->following].commits++;
    r->backoff = 0;
    m->threads[tpos].regions += n;
    m->repeated_regions += n;
    m->threads[tpos].busy_ns += dur;
    m->profiled_ns += dur;
    mb_overlap_region(b, tpos, start, dur, op);
}

/* The outermost region arrived: its kept regions are in their places'
 * sums, which count one repeat more. */
static void rep_commit(model_builder *b, uint32_t tpos)
{
    mb_rep *r = &b->threads[tpos].rep;
    const mb_rep_region *outer = &r->cur[r->ncur - 1];
    rep_counted(b, tpos, r->ncur, outer->start, outer->dur, outer->op);
    r->started = 0;
    r->speculating = 0;
}

/* Keeps a region of op and kind at depth d, [s, s + dur), as cur[*ncur],
 * the next of the learned outermost region, whose place for it is p
 * (NULL: it has no more regions), when it is that place's, and adds it to
 * the place's sums: -1 it is not (nothing changed), 0 kept, 1 kept and it
 * is the outermost region, to be committed. cur and *ncur are r's, or
 * copies a loop keeps (in registers) and writes back; room for the
 * region in cur was made. */
static inline int rep_keep(mb_rep *r, mb_rep_region *cur, size_t *ncur, mb_rep_path *p,
                           uint32_t op, uint32_t d, uint32_t kind, uint64_t s, uint64_t dur,
                           const mb_gself *g)
{
    uint64_t e = s + dur;
    /* as the general way would place it: no orphan below it (every child
     * waiting one level down ended after it began; an empty level's
     * earliest end is UINT64_MAX, which only a region that starts then
     * reaches: the general way takes it); none further down, as the depths
     * so far are those of the learned region, which had none. d indexes
     * only once it is a learned depth. */
    if (!p || p->op != op || p->depth != d || p->kind != kind || e < s ||
        r->min_end[d + 1] <= s)
        return -1;
    uint64_t kids = r->sum[d + 1], self = kids < dur ? dur - kids : 0;
    rep_level_empty(r, d + 1);
    uint64_t gns = g ? g->ns : 0, gk = g ? g->kernels : 0;
    cur[(*ncur)++] = (mb_rep_region){ s, dur, self, gns, gk, op, d, kind };
    p->dur += dur;
    p->self += self;
    p->gpu_ns += gns;
    p->kernels += gk;
    if (d == 0) {
        r->top = 0;
        return 1;
    }
    r->sum[d] += dur;
    r->min_end[d] = e < r->min_end[d] ? e : r->min_end[d];
    r->top = d + 1;
    return 0;
}

/* The learned place of region ncur of the outermost region, or NULL past
 * the last. */
static mb_rep_path *rep_place(const mb_rep_learned *l, size_t ncur)
{
    return ncur < l->n ? &l->v[ncur] : NULL;
}

/* A region while the outermost region repeats the learned one: 1 kept (or
 * committed), 0 it differs and what was kept was replayed, -1 no memory. */
static int rep_follow(model_builder *b, uint32_t tpos, const mb_reg *reg, uint32_t op)
{
    mb_rep *r = &b->threads[tpos].rep;
    int k;
    if (vec_grow(&r->cur, &r->cap_cur, r->ncur, sizeof *r->cur) < 0 ||
        (k = rep_keep(r, r->cur, &r->ncur, rep_place(&r->learned[r->following], r->ncur), op,
                      reg->depth, reg->kind, reg->start_ns, reg->dur_ns,
                      &(mb_gself){ reg->gpu_ns, reg->kernels })) < 0)
        return rep_replay(b, tpos) < 0 ? -1 : 0;
    if (k == 1)
        rep_commit(b, tpos);
    return 1;
}

/* A region read the general way, noted to be learned; learning stops past
 * the depth and the number of regions the repeat path keeps. */
static void rep_note(mb_rep *r, const mb_reg *reg, uint32_t op)
{
    if (reg->depth >= MB_REP_DEPTH - 1 || r->ncur >= MB_REP_MAX ||
        vec_grow(&r->cur, &r->cap_cur, r->ncur, sizeof *r->cur) < 0) {
        r->learnable = 0;
        return;
    }
    r->cur[r->ncur++] = (mb_rep_region){ .op = op, .depth = reg->depth, .kind = reg->kind };
}

/* An outermost region read the general way, with no orphan: its regions'
 * nodes, found from the last region back (the parents first), learned as
 * the kind its first region names (replacing one learned before). */
static void rep_learn(model_builder *b, uint32_t tpos)
{
    mb_rep *r = &b->threads[tpos].rep;
    uint32_t k = rep_kind_of(r, r->cur[0].depth, r->cur[0].op);
    if (k == MB_REP_KINDS) {
        if (rep_kinds_room(r, r->next_learned % MB_REP_KINDS) < 0)
            return;
        k = r->next_learned++ % MB_REP_KINDS;
    }
    mb_rep_learned *l = &r->learned[k];
    uint32_t above[MB_REP_DEPTH]; /* the node of the region that adopts at each level */
    for (uint32_t d = 0; d < MB_REP_DEPTH; d++)
        above[d] = MODEL_NONE;
    mb_rep_flush_sums(b->m, l); /* what the places it replaces hold */
    l->n = 0;
    r->first[k] = UINT64_MAX;
    if (vec_grow(&l->v, &l->cap, r->ncur - 1, sizeof *l->v) < 0)
        return;
    for (size_t i = r->ncur; i-- > 0;) {
        uint32_t d = r->cur[i].depth, op = r->cur[i].op, kind = r->cur[i].kind;
        uint32_t parent = d == 0 ? b->m->threads[tpos].root : above[d - 1];
        const uint32_t *node =
            parent == MODEL_NONE ? NULL : hmap_find(&b->node_index, (uint64_t)parent << 32 | op);
        if (!node)
            return; /* not as adopt placed it: nothing learned */
        l->v[i] = (mb_rep_path){ op, d, kind, *node, 0, 0, 0, 0 };
        above[d] = *node;
        for (uint32_t c = d + 1; c < MB_REP_DEPTH && above[c] != MODEL_NONE; c++)
            above[c] = MODEL_NONE;
    }
    l->n = r->ncur;
    r->first[k] = rep_key(r->cur[0].depth, r->cur[0].op);
}

/* Replays what a repeat kept when the file ends before its outermost
 * region arrives. */
int mb_rep_flush(model_builder *b, uint32_t tpos)
{
    mb_rep *r = &b->threads[tpos].rep;
    int kept = r->started && r->speculating;
    r->started = 0;
    return kept && rep_replay(b, tpos) < 0 ? -1 : 0;
}

/* A region placed in the tree or kept by the repeat path: all of
 * mb_region but what is met on arrival. */
static int region_place(model_builder *b, uint32_t tpos, const mb_reg *reg, uint32_t op)
{
    mb_thread *t = &b->threads[tpos];
    int kept = 0;
    if (!t->rep.started)
        rep_begin(b, t, reg, op);
    if (t->rep.speculating && (kept = rep_follow(b, tpos, reg, op)) < 0)
        return -1;
    if (kept)
        return 0;
    if (mb_region_general(b, tpos, reg, op) < 0)
        return -1;
    t = &b->threads[tpos];
    if (t->rep.learnable)
        rep_note(&t->rep, reg, op);
    if (t->top == 0) { /* an outermost region: the tree holds it all */
        t->rep.started = 0;
        if (t->rep.learnable && t->rep.ncur)
            rep_learn(b, tpos);
    }
    return 0;
}

/* The clamped depth and saturated end mb_region meets a region with. */
static uint32_t arrival_depth(uint32_t depth)
{
    return depth < MB_MAX_DEPTH ? depth : MB_MAX_DEPTH - 1;
}

static uint64_t arrival_end(uint64_t s, uint64_t dur)
{
    uint64_t e = s + dur;
    return e < s ? UINT64_MAX : e;
}

int mb_region(model_builder *b, uint32_t tpos, const mb_reg *reg, uint32_t op)
{
    if (region_place(b, tpos, reg, op) < 0)
        return -1;
    /* met on arrival, whichever way the region goes */
    mb_thread *t = &b->threads[tpos];
    uint32_t d = arrival_depth(reg->depth);
    uint64_t s = reg->start_ns, e = arrival_end(s, reg->dur_ns);
    if (t->nsyncs && mb_syncs_on_region(b, t, s, e, d, op, reg->kind) < 0)
        return -1;
    if (reg->kind == PROF_KIND_SYNC && mb_sync_region_push(t, s, e) < 0)
        return -1;
    mb_recent_push(t, s, e, op, reg->kind, d);
    return 0;
}

/* rep_follow for as many of the run's regions as repeat the learned
 * outermost region, up to and with its last (which commits it): the
 * repeat path's common case, in one loop. Returns how many were kept; the
 * first region that differs is left for rep_follow to replay with. */
static size_t rep_follow_run(model_builder *b, uint32_t tpos, const pf_slim *v, size_t n,
                             const mb_gself *g)
{
    mb_rep *r = &b->threads[tpos].rep;
    /* a copy, which the stores into r and cur cannot change: its array
     * and length stay in registers */
    const mb_rep_learned l = r->learned[r->following];
    if (l.n == 0 || vec_grow(&r->cur, &r->cap_cur, l.n - 1, sizeof *r->cur) < 0)
        return 0; /* rep_follow meets it */
    mb_rep_region *cur = r->cur;
    size_t ncur = r->ncur, i = 0;
    int k = 0;
    for (; i < n && k == 0; i++)
        if ((k = rep_keep(r, cur, &ncur, rep_place(&l, ncur), v[i].tag, pf_slim_depth(&v[i]),
                          pf_slim_kind(&v[i]), v[i].start_ns, v[i].dur_ns,
                          g ? &g[i] : NULL)) < 0)
            break;
    r->ncur = ncur;
    if (k == 1)
        rep_commit(b, tpos);
    return i;
}

/* The run's regions as recent ones: what pushing each would leave, the
 * last MB_RECENT of them in the slots they would have taken; its SYNC
 * regions kept as such. -1 when memory ran out. */
static int recent_push_run(mb_thread *t, const pf_slim *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (pf_slim_kind(&v[i]) == PROF_KIND_SYNC &&
            mb_sync_region_push(t, v[i].start_ns, arrival_end(v[i].start_ns, v[i].dur_ns)) < 0)
            return -1;
    size_t from = n > MB_RECENT ? n - MB_RECENT : 0;
    t->next_recent = (uint32_t)((t->next_recent + from) % MB_RECENT);
    for (size_t i = from; i < n; i++)
        mb_recent_push(t, v[i].start_ns, arrival_end(v[i].start_ns, v[i].dur_ns), v[i].tag,
                       pf_slim_kind(&v[i]), arrival_depth(pf_slim_depth(&v[i])));
    return 0;
}

/* An outermost region that is a whole learned kind by itself (a leaf at
 * depth 0: a serving or RL loop's short phases): rep_begin, rep_follow_run
 * and rep_commit in one, for the case they would keep it. 1 kept, 0 left
 * for them. */
static int rep_leaf(model_builder *b, uint32_t tpos, const mb_reg *reg, uint32_t op)
{
    mb_thread *t = &b->threads[tpos];
    mb_rep *r = &t->rep;
    uint64_t s = reg->start_ns, e = s + reg->dur_ns;
    if (reg->depth != 0 || r->started || t->top != 0 || r->skip || !b->repeat || e < s ||
        r->min_end[1] <= s)
        return 0;
    uint32_t k = rep_kind_of(r, 0, op);
    if (k == MB_REP_KINDS || r->learned[k].n != 1 || r->learned[k].v[0].kind != reg->kind)
        return 0;
    for (uint32_t l = 0; l < r->top; l++)
        rep_level_empty(r, l);
    r->top = 0;
    r->ncur = 0;
    r->following = k;
    mb_rep_path *p = &r->learned[k].v[0];
    p->dur += reg->dur_ns;
    p->self += reg->dur_ns; /* nothing waits below it */
    p->gpu_ns += reg->gpu_ns;
    p->kernels += reg->kernels;
    rep_counted(b, tpos, 1, s, reg->dur_ns, op);
    return 1;
}

/* Regions handed over slim, in a row with nothing else of their thread
 * between them: mb_region for each. With no sync record waiting, none
 * can come before the run ends (records are whole events), so only the
 * last MB_RECENT regions need noting as recent, once, and the regions
 * that repeat the learned outermost region go through rep_follow_run. */
int mb_region_run(model_builder *b, uint32_t tpos, const pf_slim *v, size_t n,
                  const mb_gself *g)
{
    if (b->threads[tpos].nsyncs) {
        for (size_t i = 0; i < n; i++) {
            mb_reg reg = { v[i].start_ns, v[i].dur_ns, pf_slim_depth(&v[i]), pf_slim_kind(&v[i]),
                           g ? g[i].ns : 0, g ? g[i].kernels : 0 };
            if (mb_region(b, tpos, &reg, v[i].tag) < 0)
                return -1;
        }
        return 0;
    }
    for (size_t i = 0; i < n;) {
        mb_thread *t = &b->threads[tpos];
        mb_reg reg = { v[i].start_ns, v[i].dur_ns, pf_slim_depth(&v[i]), pf_slim_kind(&v[i]),
                       g ? g[i].ns : 0, g ? g[i].kernels : 0 };
        if (rep_leaf(b, tpos, &reg, v[i].tag)) {
            i++;
            continue;
        }
        if (!t->rep.started)
            rep_begin(b, t, &reg, v[i].tag);
        size_t kept =
            t->rep.speculating ? rep_follow_run(b, tpos, v + i, n - i, g ? g + i : NULL) : 0;
        if (kept) {
            i += kept;
            continue;
        }
        if (region_place(b, tpos, &reg, v[i].tag) < 0)
            return -1;
        i++;
    }
    return recent_push_run(&b->threads[tpos], v, n);
}

