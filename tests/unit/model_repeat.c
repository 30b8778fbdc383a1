/* model_repeat.c - the repeat path of the call tree (src/model/repeat.c),
 * which adds an outermost region that repeats a learned one straight to the
 * learned nodes, gives the model of the general way (PROF_MODEL_REPEAT=0),
 * field for field and bit for bit: on testdata/demo.prof, on the
 * synthesized run of model_threads, crashed and cut at many offsets, on
 * every file of the analyze fuzz corpus, and on runs drawn from many seeds
 * where steps of several shapes come in random order and some are mutated
 * the ways that make the path give up: a region missing (orphans), one
 * more, another operation, a child ending before its parent began, a child
 * of no duration at its parent's start, a duration past 2^64, a chain
 * deeper than the path keeps, sync records in between, and a thread whose
 * one outermost region wraps the whole run; and steps of a dozen or more
 * short outermost regions (a serving or RL loop). Also that the path is
 * taken: it holds fewer floating nodes at once than the general way.
 * Run from the repository root. */
#include "model/build.h" /* MB_REP_KINDS */
#include "model_compare.h"

#define DEMO "testdata/demo.prof"
#define SEEDS 40
#define SHAPES 3
#define MAX_NODES 40

static void teardown(void)
{
    fu_dir_remove();
}

TestSuite(model_repeat, .fini = teardown);

static int assert_same_build(const char *path)
{
    return mc_assert_same_build(path, &mc_general_way, NULL, 0);
}

/* ---- drawn runs ------------------------------------------------------------------ */

/* A step's shape: a tree of regions, node 0 the outermost. */
typedef struct shape_node {
    char name[8];
    prof_kind kind;
    int parent; /* -1 for node 0 */
} shape_node;

typedef struct shape {
    shape_node n[MAX_NODES];
    int count;
} shape;

typedef enum {
    MUT_NONE,
    MUT_DROP,        /* a region is not written: its children are orphans */
    MUT_EXTRA,       /* one more leaf */
    MUT_RENAME,      /* a region of another operation */
    MUT_EARLY_CHILD, /* a child that ended before its parent began */
    MUT_ZERO_CHILD,  /* a child of no duration at its parent's start */
    MUT_WRAP,        /* a leaf whose end passes 2^64 */
    MUT_DEEP,        /* a chain of 40 below a leaf */
    MUT_KIND,        /* a region of its operation, of another kind */
    MUT_KINDS
} mutation;

static void draw_shape(shape *sh, synth_rng *rng)
{
    static const char *names[] = { "fwd", "bwd", "attn", "mlp", "norm", "loss", "opt", "data" };
    sh->count = 1 + (int)(synth_rand(rng) % (MAX_NODES - 8));
    for (int i = 0; i < sh->count; i++) {
        shape_node *n = &sh->n[i];
        snprintf(n->name, sizeof n->name, "%s", names[synth_rand(rng) % 8]);
        n->kind = (prof_kind)(synth_rand(rng) % 3);
        n->parent = i == 0 ? -1 : (int)(synth_rand(rng) % (uint64_t)i);
    }
}

typedef struct emitter {
    synth *s;
    synth_rng *rng;
    uint32_t thread;
    const shape *sh;
    mutation mut;
    int target;     /* the node the mutation is about */
    uint32_t base;  /* depth of node 0 */
} emitter;

/* A chain of n regions below depth d within [start, end), deepest first. */
static void emit_chain(const emitter *em, uint32_t d, uint64_t start, uint64_t end, int n)
{
    if (n == 0 || end - start < 4)
        return;
    emit_chain(em, d + 1, start + 1, end - 1, n - 1);
    synth_region(em->s, em->thread, "deep", PROF_KIND_COMPUTE, d, start, end - start);
}

/* Node i and what is below it within [start, end), children first. */
static void emit_node(const emitter *em, int i, uint32_t d, uint64_t start, uint64_t end)
{
    const shape *sh = em->sh;
    int kids = 0;
    for (int c = i + 1; c < sh->count; c++)
        kids += sh->n[c].parent == i;
    uint64_t width = kids ? (end - start) / (uint64_t)kids : 0, at = start;
    for (int c = i + 1; c < sh->count; c++) {
        if (sh->n[c].parent != i)
            continue;
        uint64_t cs = at, ce = at + width - width / 8;
        if (em->mut == MUT_EARLY_CHILD && c == em->target && start > 200) {
            cs = start - 200;
            ce = start - 100;
        }
        if (em->mut == MUT_ZERO_CHILD && c == em->target)
            ce = cs = start;
        emit_node(em, c, d + 1, cs, ce);
        at += width;
    }
    if (em->mut == MUT_DEEP && i == em->target)
        emit_chain(em, d + 1, start, end, 40);
    if (em->mut == MUT_EXTRA && i == em->target)
        synth_region(em->s, em->thread, "extra", PROF_KIND_COMPUTE, d + 1, start, 1);
    if (em->mut == MUT_DROP && i == em->target && i != 0)
        return;
    const char *name = em->mut == MUT_RENAME && i == em->target ? "renamed" : sh->n[i].name;
    uint64_t dur = end - start;
    if (em->mut == MUT_WRAP && i == em->target && !kids)
        dur = UINT64_MAX - start / 2;
    prof_kind kind = sh->n[i].kind;
    if (em->mut == MUT_KIND && i == em->target)
        kind = (prof_kind)((kind + 1) % 3);
    synth_region(em->s, em->thread, name, kind, d, start, dur);
}

/* SHAPES shapes drawn from seed; steps of each of three threads take one
 * in a random order, a tenth of them mutated. Thread 2's steps are wrapped
 * in one outermost region of the whole run when wrapped. */
static void write_drawn(const char *path, uint64_t seed, int steps, int wrapped)
{
    synth *s = synth_open(path, "{}");
    cr_assert_not_null(s);
    synth_rng rng = { seed };
    synth_block_records(s, 61);
    shape shapes[SHAPES];
    for (int k = 0; k < SHAPES; k++)
        draw_shape(&shapes[k], &rng);
    uint64_t t0 = 1000000;
    for (int step = 0; step < steps; step++, t0 += 1000000) {
        for (uint32_t t = 0; t < 3; t++) {
            const shape *sh = &shapes[synth_rand(&rng) % SHAPES];
            emitter em = { s, &rng, t, sh, MUT_NONE, 0, wrapped && t == 2 };
            if (synth_rand(&rng) % 10 == 0) {
                em.mut = (mutation)(1 + synth_rand(&rng) % (MUT_KINDS - 1));
                em.target = (int)(synth_rand(&rng) % (uint64_t)sh->count);
            }
            uint64_t start = t0 + 1000 * t, end = start + synth_jitter(&rng, 800000, 0.1);
            emit_node(&em, 0, em.base, start, end);
            if (synth_rand(&rng) % 4 == 0)
                synth_sync(s, t, 1, 0, 7, (uint64_t)step, start + 10, 50);
        }
        synth_step(s, 0, (uint64_t)step, 0, t0, 990000);
    }
    if (wrapped)
        synth_region(s, 2, "run", PROF_KIND_COMPUTE, 0, 1000000, t0);
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "writing %s: %s", path, err.message);
}

/* A serving or RL loop: each step is `kinds` short outermost regions of
 * their own operations, the third of them with two children, then a
 * memory sample; a tenth of the steps take one region more. */
static void write_flat_steps(const char *path, int steps, int kinds)
{
    synth *s = synth_open(path, "{}");
    cr_assert_not_null(s);
    synth_rng rng = { 5 };
    char name[32], kid[32];
    uint64_t t = 1000000;
    for (int step = 0; step < steps; step++) {
        uint64_t t0 = t;
        for (int k = 0; k < kinds; k++) {
            uint64_t dur = synth_jitter(&rng, 20000, 0.2);
            snprintf(name, sizeof name, "phase%d", k);
            if (k == 2)
                for (int c = 0; c < 2; c++) {
                    snprintf(kid, sizeof kid, "phase2.%d", c);
                    synth_region(s, 0, kid, PROF_KIND_COMPUTE, 1, t + 1 + 9000 * (uint64_t)c,
                                 8000);
                }
            synth_region(s, 0, name, (prof_kind)(k % 3), 0, t, dur);
            t += dur + 500;
        }
        if (synth_rand(&rng) % 10 == 0) {
            synth_region(s, 0, "rare", PROF_KIND_COMPUTE, 0, t, 3000);
            t += 3500;
        }
        synth_step(s, 0, (uint64_t)step, 0, t0, t - t0);
        synth_memory(s, 0, "host.rss", t, 1000000 + (uint64_t)step);
    }
    prof_error err;
    cr_assert_eq(synth_close(s, &err), 0, "writing %s: %s", path, err.message);
}

/* ---- tests ------------------------------------------------------------------------- */

Test(model_repeat, demo)
{
    cr_assert(assert_same_build(DEMO), DEMO " did not load");
}

Test(model_repeat, large_run)
{
    const char *path = fu_path("run.prof");
    mc_write_run(path, 0);
    cr_assert(assert_same_build(path));
}

Test(model_repeat, crashed_run)
{
    const char *path = fu_path("crashed.prof");
    mc_write_run(path, 1);
    cr_assert(assert_same_build(path));
}

Test(model_repeat, cut_files)
{
    mc_assert_same_cuts(&mc_general_way, NULL, 0);
}

Test(model_repeat, fuzz_corpus)
{
    mc_assert_same_corpus(&mc_general_way, NULL, 0);
}

Test(model_repeat, drawn_runs)
{
    const char *path = fu_path("drawn.prof");
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        write_drawn(path, seed, 200, seed % 4 == 0);
        cr_assert(assert_same_build(path), "seed %llu did not load", (unsigned long long)seed);
    }
}

/* Thread 2's one outermost region holds more regions than the path keeps:
 * it is read the general way, the others still repeat. */
Test(model_repeat, run_longer_than_the_path_keeps)
{
    const char *path = fu_path("long.prof");
    write_drawn(path, 99, 1200, 1);
    cr_assert(assert_same_build(path));
}

/* The path is taken: almost every region of the demo's steps, which
 * repeat, and none with the general way (PROF_MODEL_REPEAT=0). */
Test(model_repeat, repeated_steps_take_the_path)
{
    built *general = malloc(sizeof *general), *repeat = malloc(sizeof *repeat);
    cr_assert(general && repeat);
    mc_build(DEMO, &mc_general_way, general);
    mc_build(DEMO, NULL, repeat);
    cr_assert_eq(general->rc, PROF_OK);
    cr_assert_eq(repeat->rc, PROF_OK);
    cr_assert_eq(general->m.repeated_regions, 0u);
    cr_assert_gt(repeat->m.repeated_regions, repeat->m.region_events * 9 / 10,
                 "the repeat path placed %llu of %llu regions",
                 (unsigned long long)repeat->m.repeated_regions,
                 (unsigned long long)repeat->m.region_events);
    profile_model_free(&general->m);
    profile_model_free(&repeat->m);
    free(general);
    free(repeat);
}

/* Steps of a dozen short outermost regions each: the path learns every
 * kind and places nearly every region; with more kinds than it keeps
 * (MB_REP_KINDS), it learns them anew in turn. Either way the model is
 * the general way's. */
Test(model_repeat, many_short_outermost_regions)
{
    const char *path = fu_path("flat.prof");
    static const int kinds[] = { 12, MB_REP_KINDS + 8 };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        write_flat_steps(path, 3000, kinds[i]);
        cr_assert(assert_same_build(path), "%d kinds did not load", kinds[i]);
        built *repeat = malloc(sizeof *repeat);
        cr_assert_not_null(repeat);
        mc_build(path, NULL, repeat);
        cr_assert_eq(repeat->rc, PROF_OK);
        uint64_t placed = repeat->m.repeated_regions, all = repeat->m.region_events;
        if (i == 0)
            cr_assert_gt(placed, all * 9 / 10, "%d kinds: the path placed %llu of %llu regions",
                         kinds[i], (unsigned long long)placed, (unsigned long long)all);
        profile_model_free(&repeat->m);
        free(repeat);
    }
}

/* And the drawn runs take it and leave it: some of their regions go each
 * way. */
Test(model_repeat, drawn_runs_take_the_path_and_leave_it)
{
    const char *path = fu_path("drawn.prof");
    write_drawn(path, 7, 400, 0);
    built *repeat = malloc(sizeof *repeat);
    cr_assert_not_null(repeat);
    mc_build(path, NULL, repeat);
    cr_assert_eq(repeat->rc, PROF_OK);
    cr_assert_gt(repeat->m.repeated_regions, repeat->m.region_events / 4,
                 "the repeat path placed %llu of %llu regions",
                 (unsigned long long)repeat->m.repeated_regions,
                 (unsigned long long)repeat->m.region_events);
    cr_assert_lt(repeat->m.repeated_regions, repeat->m.region_events * 19 / 20);
    profile_model_free(&repeat->m);
    free(repeat);
}
