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
 * repeat.c). */
#include <stdlib.h>
#include <string.h>

#include "model/build.h"
#include "prof.h" /* prof_kind */

/* ---- nodes ----------------------------------------------------------------------------- */

static uint32_t node_new(model_builder *b, uint32_t parent, uint32_t op)
{
    profile_model *m = b->m;
    if (m->nnodes >= MODEL_NONE - 1 ||
        vec_grow(&m->nodes, &b->cap_nodes, m->nnodes, sizeof *m->nodes) < 0 ||
        vec_grow(&b->guess, &b->cap_guess, m->nnodes, sizeof *b->guess) < 0)
        return MODEL_NONE;
    b->guess[m->nnodes] = (mb_guess){ MODEL_NONE, MODEL_NONE };
    model_node *n = &m->nodes[m->nnodes];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->parent = parent;
    n->first_child = n->next_sibling = MODEL_NONE;
    if (parent != MODEL_NONE) { /* newest first; mb_tree_finish restores first-seen order */
        n->next_sibling = m->nodes[parent].first_child;
        m->nodes[parent].first_child = (uint32_t)m->nnodes;
    }
    return (uint32_t)m->nnodes++;
}

/* The parent is in the key's upper half: the index takes its slots from
 * the top bits of the mixed key (util/hash.h), which depend on it. (Slots
 * from the middle bits ignored the parent, so the same operation under
 * many parents - layer_norm in each of 260 layers - piled up in one probe
 * run.) */
uint32_t mb_node_child(model_builder *b, uint32_t parent, uint32_t op)
{
    int added;
    uint32_t *n = hmap_slot(&b->node_index, (uint64_t)parent << 32 | op, &added);
    if (!n)
        return MODEL_NONE;
    if (added) {
        uint32_t node = node_new(b, parent, op);
        if (node == MODEL_NONE) {
            hmap_remove(&b->node_index, n);
            return MODEL_NONE;
        }
        *n = node;
    }
    return *n;
}

/* A thread's root: the node its outermost regions hang under. */
uint32_t mb_node_root(model_builder *b)
{
    return node_new(b, MODEL_NONE, MODEL_NONE);
}

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
int mb_syncs_on_region(model_builder *b, mb_thread *t, uint64_t s, uint64_t e, uint32_t depth,
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
int mb_sync_region_push(mb_thread *t, uint64_t s, uint64_t e)
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
int mb_region_general(model_builder *b, uint32_t tpos, const mb_reg *reg, uint32_t op)
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
        if (mb_rep_flush(b, i) < 0 || orphans_to_root(b, i, 0) < 0)
            return -1;
        for (uint32_t k = 0; k < t->rep.cap_kinds; k++)
            mb_rep_flush_sums(m, &t->rep.learned[k]);
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
