/* calltree.c - self time, the per-thread call tree and where syncs happen,
 * built from region records as they arrive.
 *
 * A thread's region records come in END order: a region is written when it
 * ends, so its children (depth + 1) arrive before it and its parent after
 * it. Each arriving region therefore adopts what is waiting one level below
 * it: its self time is its duration minus theirs, and their subtrees hang
 * under it. What waits is merged by operation as it arrives (a "floating"
 * node per path below a parent that has not arrived), so a long outermost
 * region wrapping the whole run holds one node per distinct path below it,
 * not one per event. A region of depth 0 has no parent to wait for: it and
 * everything it adopted go into the thread's tree at once. Finding the
 * node of an operation in a waiting list is a short search, or, in a list
 * found long (a parent of hundreds of distinct children), a lookup in the
 * floating index, so that time stays linear in the events.
 *
 * Waiting regions whose parent never comes are attached to the thread's
 * root: those still waiting at the end of a cut-short file (their parent
 * was still open), and orphans whose parent was not recorded (it began in a
 * step that sampling skipped, or it was dropped). An orphan is recognised
 * when a region at its parent's depth arrives that began after every call
 * of the orphan's operation waiting there ended; calls of one operation
 * from both sides of such a boundary share a floating node and go with the
 * newer parent (an approximation for recordings with skipped parents).
 *
 * Syncs: regions of kind SYNC count as syncs at their place in the tree
 * (counted in mb_tree_finish, once the tree is whole), sited at the nearest
 * enclosing non-SYNC region; a SYNC region nested in another is part of
 * the outer wait and not counted again. A CUDA sync record is sited at the
 * innermost region of its thread whose interval contains it. When that
 * region is itself of kind SYNC, the record is the same wait seen twice
 * (e.g. `loss.item` around cudaStreamSynchronize), so only the region
 * counts and the record is dropped from sync_count, sync_blocked_ns and
 * sync_records alike.
 *
 * Most outermost regions of a training loop repeat one read before, region
 * for region; those take a shorter path to the same tree (the repeat path,
 * below the general way). */
#include <stdlib.h>
#include <string.h>

#include "model/build.h"
#include "prof.h" /* prof_kind */

/* ---- floating nodes --------------------------------------------------------- */

/* A free node of the pool, set to init. Written whole: a node written
 * field by field and then added to made the loads of the adds wait on the
 * stores before them (a load spanning two stores is not forwarded). */
static uint32_t fnode_new(model_builder *b, const mb_fnode *init)
{
    uint32_t i = b->free_node;
    if (i != MODEL_NONE) {
        b->free_node = b->pool[i].next_sibling;
    } else {
        if (b->npool >= MODEL_NONE - 1 ||
            vec_grow(&b->pool, &b->cap_pool, b->npool, sizeof *b->pool) < 0)
            return MODEL_NONE;
        i = (uint32_t)b->npool++;
    }
    if (++b->live > b->m->peak_pending_nodes)
        b->m->peak_pending_nodes = b->live;
    b->pool[i] = *init;
    return i;
}

static void fnode_free(model_builder *b, uint32_t i)
{
    b->pool[i].next_sibling = b->free_node;
    b->free_node = i;
    b->live--;
}

/* ---- the floating index (build.h) ----------------------------------------------
 * Every list searched node by node made a parent with hundreds of distinct
 * children (a model of 260 layers) quadratic in them; lists of up to
 * FLIST_SCAN nodes, most of them, are still searched. */

#define FLIST_SCAN 8

static size_t fidx_slot(uint64_t gen, uint32_t op, size_t cap)
{
    return hash_top(gen ^ (uint64_t)op << 40 ^ op, (unsigned)__builtin_ctzll(cap));
}

/* The node of op in the list named gen, or MODEL_NONE. */
static uint32_t fidx_find(const model_builder *b, uint64_t gen, uint32_t op)
{
    size_t mask = b->fidx_cap - 1;
    for (size_t k = fidx_slot(gen, op, b->fidx_cap); b->fidx[k].gen; k = (k + 1) & mask)
        if (b->fidx[k].gen == gen && b->fidx[k].op == op)
            return b->fidx[k].node;
    return MODEL_NONE;
}

/* Records node as op's in the list named gen. Room was made beforehand
 * (fidx_reserve), so this cannot fail. */
static void fidx_put(model_builder *b, uint64_t gen, uint32_t op, uint32_t node)
{
    size_t mask = b->fidx_cap - 1, k = fidx_slot(gen, op, b->fidx_cap);
    while (b->fidx[k].gen && !(b->fidx[k].gen == gen && b->fidx[k].op == op))
        k = (k + 1) & mask;
    if (!b->fidx[k].gen)
        b->fidx_used++;
    b->fidx[k] = (mb_fslot){ gen, op, node };
}

/* Enters the list at head under gen (0: not indexed), and below it every
 * indexed list of its nodes' children. */
static void fidx_put_tree(model_builder *b, uint64_t gen, uint32_t head)
{
    for (; head != MODEL_NONE; head = b->pool[head].next_sibling) {
        if (gen)
            fidx_put(b, gen, b->pool[head].op, head);
        fidx_put_tree(b, b->pool[head].gen, b->pool[head].first_child);
    }
}

/* What one region can add to the index. Each live node is entered at
 * most once per region (when its list is indexed or when it joins an
 * indexed list), and the region's own node once: live + 1 at most. The
 * room is twice that and a list's worth more, for margin. */
static size_t fidx_room(const model_builder *b)
{
    return 2 * (b->live + 1) + FLIST_SCAN;
}

/* Before a region is placed, while every floating node hangs in a level
 * list: room for fidx_room entries more, the index at most half full.
 * Short of it, the index is rebuilt from the live lists, which drops the
 * entries of lists that are gone; a rebuild leaves room for more entries
 * than there are live nodes, so its cost is spread over at least as many
 * entries. */
static int fidx_reserve(model_builder *b)
{
    size_t room = fidx_room(b);
    if (2 * (b->fidx_used + room) <= b->fidx_cap)
        return 0;
    size_t cap = 1024;
    while (cap < 4 * room)
        cap *= 2;
    if (cap != b->fidx_cap) {
        mb_fslot *v = calloc(cap, sizeof *v);
        if (!v)
            return -1;
        free(b->fidx);
        b->fidx = v;
        b->fidx_cap = cap;
    } else {
        memset(b->fidx, 0, cap * sizeof *b->fidx);
    }
    b->fidx_used = 0;
    for (uint32_t i = 0; i < b->m->nthreads; i++) {
        const mb_thread *t = &b->threads[i];
        for (uint32_t d = 0; d < t->top; d++)
            if (t->level[d].head != MODEL_NONE)
                fidx_put_tree(b, t->level[d].gen, t->level[d].head);
    }
    return 0;
}

/* op's node in the list at head, named *gen in the index (0: not in it).
 * A list longer than FLIST_SCAN is entered in the index, under a new
 * name, on the first search that reaches past that, found or not: a long
 * list whose searches all succeed (the children of one step after
 * another) would otherwise be searched half through each time. */
static uint32_t flist_find(model_builder *b, uint32_t head, uint64_t *gen, uint32_t op)
{
    if (!*gen) {
        uint32_t k = head;
        for (uint32_t n = 0; k != MODEL_NONE && n < FLIST_SCAN; k = b->pool[k].next_sibling, n++)
            if (b->pool[k].op == op)
                return k;
        if (k == MODEL_NONE)
            return MODEL_NONE;
        *gen = ++b->next_gen;
        for (k = head; k != MODEL_NONE; k = b->pool[k].next_sibling)
            fidx_put(b, *gen, b->pool[k].op, k);
    }
    return fidx_find(b, *gen, op);
}

/* Merges the floating list into the children of floating node parent. */
static void fnode_merge(model_builder *b, uint32_t parent, uint32_t list)
{
    while (list != MODEL_NONE) {
        mb_fnode *f = &b->pool[list], *p = &b->pool[parent];
        uint32_t next = f->next_sibling;
        uint32_t same = flist_find(b, p->first_child, &p->gen, f->op);
        if (same == MODEL_NONE) {
            f->next_sibling = p->first_child;
            p->first_child = list;
            if (p->gen)
                fidx_put(b, p->gen, f->op, list);
        } else {
            mb_fnode *g = &b->pool[same];
            g->calls += f->calls;
            g->incl_ns += f->incl_ns;
            g->self_ns += f->self_ns;
            g->gpu_ns += f->gpu_ns;
            g->kernels += f->kernels;
            fnode_merge(b, same, f->first_child);
            fnode_free(b, list);
        }
        list = next;
    }
}

/* Moves the floating list into the tree below node real (recursively, by
 * path) and frees it. Each node is first sought where the list found it
 * the time before (b->guess): a child of real, so one of op f.op is the
 * one the index holds. */
static int attach_real(model_builder *b, uint32_t real, uint32_t list)
{
    uint32_t guess = b->guess[real].first, prev = MODEL_NONE;
    while (list != MODEL_NONE) {
        mb_fnode f = b->pool[list];
        uint32_t n = guess != MODEL_NONE && b->m->nodes[guess].op == f.op
                         ? guess : mb_node_child(b, real, f.op);
        if (n == MODEL_NONE)
            return -1;
        if (prev == MODEL_NONE)
            b->guess[real].first = n;
        else
            b->guess[prev].next = n;
        prev = n;
        guess = b->guess[n].next;
        model_node *node = &b->m->nodes[n];
        node->calls += f.calls;
        node->incl_ns += f.incl_ns;
        node->self_ns += f.self_ns;
        node->gpu_self_ns += f.gpu_ns;
        node->kernels_self += f.kernels;
        /* most nodes are leaves: no call for their empty list */
        if (f.first_child != MODEL_NONE && attach_real(b, n, f.first_child) < 0)
            return -1;
        fnode_free(b, list);
        list = f.next_sibling;
    }
    return 0;
}

/* ---- levels of a thread --------------------------------------------------------- */

static int levels_reserve(mb_thread *t, uint32_t n)
{
    size_t old = t->nlevels;
    if (vec_grow(&t->level, &t->nlevels, n - 1, sizeof *t->level) < 0)
        return -1;
    for (size_t i = old; i < t->nlevels; i++)
        t->level[i] = (mb_level){ MODEL_NONE, 0, 0 };
    return 0;
}

/* Levels from `from` up: nothing can adopt them any more. */
static int orphans_to_root(model_builder *b, uint32_t tpos, uint32_t from)
{
    mb_thread *t = &b->threads[tpos];
    for (uint32_t l = from; l < t->top; l++) {
        uint32_t list = t->level[l].head;
        t->level[l].head = MODEL_NONE;
        t->level[l].ops = 0;
        if (attach_real(b, b->m->threads[tpos].root, list) < 0)
            return -1;
    }
    return 0;
}

/* The children a region adopted: a list of floating nodes. */
typedef struct adopted {
    uint32_t head;
    uint64_t gen;          /* the list's name in the floating index, 0 none */
    uint64_t ns;           /* their total time                             */
} adopted;

/* Takes what waits at level d + 1 for a region that began at start: its
 * children into *kids; orphans, whose every call ended before it began,
 * to the root. The children keep the level's name in the floating index
 * when they are its whole list (no orphan was taken out of it). */
static int adopt(model_builder *b, uint32_t tpos, uint32_t level, uint64_t start, adopted *kids)
{
    mb_thread *t = &b->threads[tpos];
    uint32_t list = level < t->top ? t->level[level].head : MODEL_NONE, orphans = MODEL_NONE;
    *kids = (adopted){ MODEL_NONE, list != MODEL_NONE ? t->level[level].gen : 0, 0 };
    if (level < t->top) {
        t->level[level].head = MODEL_NONE;
        t->level[level].ops = 0;
    }
    while (list != MODEL_NONE) {
        mb_fnode *f = &b->pool[list];
        uint32_t next = f->next_sibling;
        if (f->min_start < start && f->max_end <= start) {
            f->next_sibling = orphans;
            orphans = list;
            kids->gen = 0; /* the index still lists the orphans under that name */
        } else {
            kids->ns += f->incl_ns;
            f->next_sibling = kids->head;
            kids->head = list;
        }
        list = next;
    }
    if (orphans == MODEL_NONE)
        return 0;
    t->rep.learnable = 0; /* their place is not their parent's */
    return attach_real(b, b->m->threads[tpos].root, orphans);
}

/* ---- sync records ------------------------------------------------------------------ */

static int site_add(model_builder *b, uint32_t op, uint64_t count, uint64_t blocked_ns,
                    const uint64_t waits[MODEL_WAIT_BANDS])
{
    profile_model *m = b->m;
    size_t i = 0;
    while (i < m->nsync_sites && m->sync_sites[i].op != op)
        i++;
    if (i == m->nsync_sites) {
        if (vec_grow(&m->sync_sites, &b->cap_sites, i, sizeof *m->sync_sites) < 0)
            return -1;
        m->sync_sites[i] = (model_sync_site){ .op = op };
        m->nsync_sites++;
    }
    m->sync_sites[i].count += count;
    m->sync_sites[i].blocked_ns += blocked_ns;
    for (unsigned k = 0; k < MODEL_WAIT_BANDS; k++) {
        m->sync_sites[i].waits[k] += waits[k];
        m->sync_waits[k] += waits[k];
    }
    m->sync_count += count;
    m->sync_blocked_ns += blocked_ns;
    return 0;
}

/* Sync records g whose innermost enclosing region is op of kind kind
 * (MODEL_NONE: outside every region). */
static int sync_resolve(model_builder *b, const mb_sync *g, uint32_t op, uint32_t kind)
{
    if (op != MODEL_NONE && kind == PROF_KIND_SYNC)
        return 0; /* the SYNC region counts this wait (see the top of the file) */
    b->m->sync_records += g->count;
    return site_add(b, op, g->count, g->blocked_ns, g->waits);
}

static void sync_remove(mb_thread *t, size_t i)
{
    memmove(&t->syncs[i], &t->syncs[i + 1], (t->nsyncs - i - 1) * sizeof *t->syncs);
    t->nsyncs--;
}

static int contains(uint64_t s, uint64_t e, const mb_sync *g)
{
    return g->start >= s && g->end <= e;
}

/* A region [s, e) of op arrived: it is the innermost region around the
 * waiting sync records it contains (they ended before it did). Records are
 * waiting in time order, so the scan stops at the first that began before
 * it, except for an outermost region: nothing arriving later can contain
 * what lies before it, so those records were outside every region. */
static int syncs_on_region(model_builder *b, mb_thread *t, uint64_t s, uint64_t e, uint32_t depth,
                           uint32_t op, uint32_t kind)
{
    size_t i = t->nsyncs;
    while (i-- > 0) {
        mb_sync g = t->syncs[i];
        if (contains(s, e, &g)) {
            if (sync_resolve(b, &g, op, kind) < 0)
                return -1;
            sync_remove(t, i);
        } else if (g.start < s) {
            if (depth != 0)
                break;
            if (sync_resolve(b, &g, MODEL_NONE, 0) < 0)
                return -1;
            sync_remove(t, i);
        }
    }
    return 0;
}

/* The ring's k-th oldest SYNC region. */
static const mb_interval *sync_region_at(const mb_thread *t, uint32_t k)
{
    uint32_t first = t->nsync_regions < MB_SYNC_REGIONS ? 0 : t->next_sync_region;
    return &t->sync_regions[(first + k) % MB_SYNC_REGIONS];
}

/* Whether [s, e) lies in one of the thread's kept SYNC regions. Sorted by
 * end, the first that ends at or after e and a few after it (nesting) are
 * looked at; else every one. */
static int in_sync_region(const mb_thread *t, uint64_t s, uint64_t e)
{
    uint32_t n = t->nsync_regions, lo = 0, hi = n;
    if (!t->sync_regions_sorted) {
        for (uint32_t k = 0; k < n; k++) {
            const mb_interval *r = sync_region_at(t, k);
            if (r->start <= s && e <= r->end)
                return 1;
        }
        return 0;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sync_region_at(t, mid)->end < e)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint32_t k = lo; k < n && k < lo + 8; k++) {
        const mb_interval *r = sync_region_at(t, k);
        if (r->start <= s && e <= r->end)
            return 1;
    }
    return 0;
}

/* A region of kind SYNC arrived on t: kept for the records that come
 * after it. -1 when memory ran out. */
static int sync_region_push(mb_thread *t, uint64_t s, uint64_t e)
{
    if (!t->sync_regions) {
        t->sync_regions = malloc(MB_SYNC_REGIONS * sizeof *t->sync_regions);
        if (!t->sync_regions)
            return -1;
        t->sync_regions_sorted = 1;
    }
    if (t->nsync_regions && e < sync_region_at(t, t->nsync_regions - 1)->end)
        t->sync_regions_sorted = 0;
    t->sync_regions[t->next_sync_region] = (mb_interval){ s, e };
    t->next_sync_region = (t->next_sync_region + 1) % MB_SYNC_REGIONS;
    if (t->nsync_regions < MB_SYNC_REGIONS)
        t->nsync_regions++;
    return 0;
}

int mb_sync_record(model_builder *b, uint32_t tpos, const prof_event *ev)
{
    /* cudaStreamWaitEvent makes a stream wait on the GPU and returns at
     * once: the CPU is not blocked (rules.md §4.3) */
    if (ev->subkind == PROF_SYNC_STREAM_WAIT)
        return 0;
    mb_thread *t = &b->threads[tpos];
    uint64_t e = ev->start_ns + ev->dur_ns;
    mb_sync g = { ev->start_ns, e < ev->start_ns ? UINT64_MAX : e, 1, ev->dur_ns, { 0 } };
    g.waits[model_wait_band(ev->dur_ns)] = 1;
    if (in_sync_region(t, g.start, g.end))
        return 0; /* the SYNC region counts this wait */
    /* A record that arrives after its region (written late by an activity
     * buffer) finds it among the recent ones; the deepest is the innermost. */
    const mb_recent *best = NULL;
    for (uint32_t i = 0; i < t->nrecent; i++) {
        const mb_recent *r = &t->recent[i];
        if (r->start <= g.start && g.end <= r->end && (!best || r->depth > best->depth))
            best = r;
    }
    if (best)
        return sync_resolve(b, &g, best->op, best->kind);
    if (t->nsyncs == MB_SYNC_PENDING_MAX) {
        /* Bounded: the two oldest become one group spanning both, resolved
         * by the first region that contains the whole span. */
        mb_sync *a = &t->syncs[0], *c = &t->syncs[1];
        a->end = a->end > c->end ? a->end : c->end;
        a->start = a->start < c->start ? a->start : c->start;
        a->count += c->count;
        a->blocked_ns += c->blocked_ns;
        for (unsigned k = 0; k < MODEL_WAIT_BANDS; k++)
            a->waits[k] += c->waits[k];
        sync_remove(t, 1);
    }
    if (vec_grow(&t->syncs, &t->cap_syncs, t->nsyncs, sizeof *t->syncs) < 0)
        return -1;
    t->syncs[t->nsyncs++] = g;
    return 0;
}

/* ---- regions ------------------------------------------------------------------------- */

static void recent_push(mb_thread *t, uint64_t s, uint64_t e, uint32_t op, uint32_t kind,
                        uint32_t depth)
{
    t->recent[t->next_recent] = (mb_recent){ s, e, op, kind, depth };
    t->next_recent = (t->next_recent + 1) % MB_RECENT;
    if (t->nrecent < MB_RECENT)
        t->nrecent++;
}

/* An outermost region: straight into the tree with what it adopted. */
static int place_outermost(model_builder *b, uint32_t tpos, uint32_t op, uint64_t dur,
                           uint64_t self, const mb_reg *reg, uint32_t kids)
{
    model_thread *mt = &b->m->threads[tpos];
    uint32_t n = mb_node_child(b, mt->root, op);
    if (n == MODEL_NONE)
        return -1;
    model_node *node = &b->m->nodes[n];
    node->calls++;
    node->incl_ns += dur;
    node->self_ns += self;
    node->gpu_self_ns += reg->gpu_ns;
    node->kernels_self += reg->kernels;
    mt->busy_ns += dur;
    b->m->profiled_ns += dur;
    b->threads[tpos].top = 0;
    mb_overlap_region(b, tpos, reg->start_ns, dur, op);
    return attach_real(b, n, kids);
}

/* A nested region: merged into the floating node of its operation at its
 * level, to wait for its parent. */
static int place_nested(model_builder *b, uint32_t tpos, uint32_t d, uint32_t op, uint64_t s,
                        uint64_t e, uint64_t self, const mb_reg *reg, const adopted *kids)
{
    mb_thread *t = &b->threads[tpos];
    uint64_t bit = UINT64_C(1) << (op & 63);
    int listed = d < t->top && t->level[d].head != MODEL_NONE;
    /* most arrivals of a new path are told apart by the bit alone */
    uint32_t f = listed && (t->level[d].ops & bit)
                     ? flist_find(b, t->level[d].head, &t->level[d].gen, op) : MODEL_NONE;
    if (f == MODEL_NONE) {
        mb_fnode init = {
            .op = op,
            .first_child = kids->head,
            .next_sibling = listed ? t->level[d].head : MODEL_NONE,
            .gen = kids->gen, /* a whole level list keeps its entries */
            .calls = 1,
            .incl_ns = e - s,
            .self_ns = self,
            .gpu_ns = reg->gpu_ns,
            .kernels = reg->kernels,
            .min_start = s,
            .max_end = e,
        };
        if ((f = fnode_new(b, &init)) == MODEL_NONE)
            return -1;
        if (!listed) {
            t->level[d].ops = 0;
            t->level[d].gen = 0;
        }
        t->level[d].head = f;
        t->level[d].ops |= bit;
        if (t->level[d].gen)
            fidx_put(b, t->level[d].gen, op, f);
    } else {
        mb_fnode *n = &b->pool[f];
        if (s < n->min_start)
            n->min_start = s;
        fnode_merge(b, f, kids->head);
        n->calls++;
        n->incl_ns += e - s;
        n->self_ns += self;
        n->gpu_ns += reg->gpu_ns;
        n->kernels += reg->kernels;
        if (e > n->max_end)
            n->max_end = e;
    }
    t->top = d + 1;
    return 0;
}

/* The general way: a region adopts what waits one level below it and
 * goes into the tree (outermost) or waits for its parent itself. Its
 * syncs and its place among the recent regions are mb_region's. */
static int region_general(model_builder *b, uint32_t tpos, const mb_reg *reg, uint32_t op)
{
    profile_model *m = b->m;
    mb_thread *t = &b->threads[tpos];
    /* A depth past any real nesting is treated as the deepest level kept. */
    uint32_t d = reg->depth < MB_MAX_DEPTH ? reg->depth : MB_MAX_DEPTH - 1;
    uint64_t s = reg->start_ns, dur = reg->dur_ns, e = s + dur, self;
    adopted kids;
    if (e < s) { /* modulo 2^64 in the format; saturate here */
        e = UINT64_MAX;
        dur = e - s;
    }
    /* levels past d + 1 are mostly empty already: no call for them */
    if (d + 2 < t->top)
        t->rep.learnable = 0; /* orphans: their place is not their parent's */
    if (fidx_reserve(b) < 0 || levels_reserve(t, d + 2) < 0 ||
        (d + 2 < t->top && orphans_to_root(b, tpos, d + 2) < 0) ||
        adopt(b, tpos, d + 1, s, &kids) < 0)
        return -1;
    self = kids.ns < dur ? dur - kids.ns : 0;
    m->ops[op].self_ns += self;
    if (reg->kind < sizeof m->kind_ns / sizeof m->kind_ns[0])
        m->kind_ns[reg->kind] += self;
    m->threads[tpos].regions++;
    return d == 0 ? place_outermost(b, tpos, op, dur, self, reg, kids.head)
                  : place_nested(b, tpos, d, op, s, e, self, reg, &kids);
}

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
static void rep_flush_sums(profile_model *m, mb_rep_learned *l)
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

/* PROF_MODEL_REPEAT=0 reads every region the general way: the reference
 * the repeat path must match, and a way to take it out when measuring. */
int mb_repeat_allowed(void)
{
    const char *v = getenv("PROF_MODEL_REPEAT");
    return !(v && strcmp(v, "0") == 0);
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
        if (region_general(b, tpos, &reg, x->op) < 0)
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
    rep_flush_sums(b->m, l); /* what the places it replaces hold */
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
static int rep_flush(model_builder *b, uint32_t tpos)
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
    if (region_general(b, tpos, reg, op) < 0)
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
    if (t->nsyncs && syncs_on_region(b, t, s, e, d, op, reg->kind) < 0)
        return -1;
    if (reg->kind == PROF_KIND_SYNC && sync_region_push(t, s, e) < 0)
        return -1;
    recent_push(t, s, e, op, reg->kind, d);
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
            sync_region_push(t, v[i].start_ns, arrival_end(v[i].start_ns, v[i].dur_ns)) < 0)
            return -1;
    size_t from = n > MB_RECENT ? n - MB_RECENT : 0;
    t->next_recent = (uint32_t)((t->next_recent + from) % MB_RECENT);
    for (size_t i = from; i < n; i++)
        recent_push(t, v[i].start_ns, arrival_end(v[i].start_ns, v[i].dur_ns), v[i].tag,
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

/* ---- the end ------------------------------------------------------------------------------ */

/* Children were linked newest first; first-seen order reads better. */
static void children_in_order(profile_model *m)
{
    for (size_t i = 0; i < m->nnodes; i++) {
        uint32_t prev = MODEL_NONE, c = m->nodes[i].first_child;
        while (c != MODEL_NONE) {
            uint32_t next = m->nodes[c].next_sibling;
            m->nodes[c].next_sibling = prev;
            prev = c;
            c = next;
        }
        m->nodes[i].first_child = prev;
    }
}

/* The calls of a SYNC region's node by how long each waited: the node
 * keeps no durations, its operation's sketch does; the node's calls take
 * the operation's shares (all of them, when the node holds every call). */
static void node_waits(const profile_model *m, const model_node *node,
                       uint64_t waits[MODEL_WAIT_BANDS])
{
    const quantile_sketch *d = &m->ops[node->op].dur;
    uint64_t n = d->count, calls = node->calls;
    uint64_t below[2] = { sketch_count_below(d, MODEL_WAIT_SHORT_NS),
                          sketch_count_below(d, MODEL_WAIT_LONG_NS) };
    if (n == 0) { /* no sketch: banded by the mean */
        memset(waits, 0, MODEL_WAIT_BANDS * sizeof *waits);
        waits[model_wait_band(calls ? node->incl_ns / calls : 0)] = calls;
        return;
    }
    uint64_t short_calls = (uint64_t)((double)calls * (double)below[0] / (double)n + 0.5);
    uint64_t upto_long = (uint64_t)((double)calls * (double)below[1] / (double)n + 0.5);
    if (upto_long > calls)
        upto_long = calls;
    if (short_calls > upto_long)
        short_calls = upto_long;
    waits[0] = short_calls;
    waits[1] = upto_long - short_calls;
    waits[2] = calls - upto_long;
}

/* SYNC regions below node n: counted at the nearest non-SYNC ancestor
 * (site), unless inside another SYNC region. */
static int sync_regions(model_builder *b, uint32_t n, uint32_t site, int in_sync)
{
    profile_model *m = b->m;
    for (uint32_t c = m->nodes[n].first_child; c != MODEL_NONE; c = m->nodes[c].next_sibling) {
        const model_node *node = &m->nodes[c];
        int is_sync = m->ops[node->op].kind == PROF_KIND_SYNC;
        if (is_sync && !in_sync) {
            uint64_t waits[MODEL_WAIT_BANDS];
            node_waits(m, node, waits);
            if (site_add(b, site, node->calls, node->incl_ns, waits) < 0)
                return -1;
        }
        if (sync_regions(b, c, is_sync ? site : node->op, in_sync || is_sync) < 0)
            return -1;
    }
    return 0;
}

static int site_cmp(const void *pa, const void *pb)
{
    const model_sync_site *a = pa, *b = pb;
    if (a->blocked_ns != b->blocked_ns)
        return a->blocked_ns > b->blocked_ns ? -1 : 1;
    return (a->op > b->op) - (a->op < b->op);
}

int mb_tree_finish(model_builder *b)
{
    profile_model *m = b->m;
    for (uint32_t i = 0; i < m->nthreads; i++) {
        mb_thread *t = &b->threads[i];
        /* Still waiting: their parents never ended (a cut-short file). */
        if (rep_flush(b, i) < 0 || orphans_to_root(b, i, 0) < 0)
            return -1;
        for (uint32_t k = 0; k < t->rep.cap_kinds; k++)
            rep_flush_sums(m, &t->rep.learned[k]);
        t->top = 0;
        for (size_t k = 0; k < t->nsyncs; k++)
            if (sync_resolve(b, &t->syncs[k], MODEL_NONE, 0) < 0)
                return -1;
        t->nsyncs = 0;
    }
    children_in_order(m);
    for (uint32_t i = 0; i < m->nthreads; i++) {
        model_node *root = &m->nodes[m->threads[i].root];
        root->incl_ns = 0;
        for (uint32_t c = root->first_child; c != MODEL_NONE; c = m->nodes[c].next_sibling)
            root->incl_ns += m->nodes[c].incl_ns;
        if (sync_regions(b, m->threads[i].root, MODEL_NONE, 0) < 0)
            return -1;
    }
    mb_sort(m->sync_sites, m->nsync_sites, sizeof *m->sync_sites, site_cmp);
    return 0;
}

void mb_tree_free(model_builder *b)
{
    for (size_t i = 0; b->threads && i < b->m->nthreads; i++) {
        free(b->threads[i].level);
        free(b->threads[i].syncs);
        free(b->threads[i].sync_regions);
        free(b->threads[i].rep.cur);
        for (uint32_t k = 0; k < b->threads[i].rep.cap_kinds; k++)
            free(b->threads[i].rep.learned[k].v);
        free(b->threads[i].rep.learned);
        free(b->threads[i].rep.first);
    }
    free(b->threads);
    free(b->pool);
    free(b->fidx);
}
