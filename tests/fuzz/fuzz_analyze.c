/* fuzz_analyze.c - libFuzzer target over everything `prof analyze`,
 * `prof compare` and `prof view` do with a profile once it is read: the
 * model is built from the input (as given and with its checksums
 * repaired, through a memfd), its promises are checked (indexes in range, steps,
 * samples and sync sites in their order), then the report is built and
 * rendered as text (plain and styled), JSON (which must parse back), CSV
 * (every table) and HTML, the profile is compared with itself (which must
 * find no regression) and the comparison rendered, and the dashboard's
 * page data is built for one and for two profiles. Inputs whose last byte
 * is odd are read with the model's limit on kept steps and samples at its
 * least (model_keep 16), so that thinning a long run (series.c) is
 * fuzzed too. Output goes to /dev/null or memory; nothing touches the
 * disk. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis/compare.h"
#include "analysis/report.h"
#include "model/profile.h"
#include "output/compare_csv.h"
#include "output/compare_text.h"
#include "output/html.h"
#include "output/report_csv.h"
#include "output/report_json.h"
#include "output/report_text.h"
#include "prof_reader.h"
#include "fuzz_util.h"

/* The model's documented shape. */
static void check_model(const profile_model *m)
{
    for (size_t i = 0; i < m->nnodes; i++) {
        const model_node *n = &m->nodes[i];
        CHECK(n->op == MODEL_NONE || n->op < m->nops);
        CHECK(n->parent == MODEL_NONE || n->parent < m->nnodes);
        CHECK(n->first_child == MODEL_NONE || n->first_child < m->nnodes);
        CHECK(n->next_sibling == MODEL_NONE || n->next_sibling < m->nnodes);
    }
    for (size_t i = 0; i < m->nops; i++)
        CHECK(m->ops[i].name != NULL);
    for (size_t i = 0; i < m->nthreads; i++)
        CHECK(m->threads[i].root < m->nnodes);
    for (size_t i = 1; i < m->nsteps; i++)
        CHECK(m->steps[i - 1].number <= m->steps[i].number);
    CHECK(m->nsteps <= m->step_totals.steps);
    CHECK(m->step_totals.complete <= m->step_totals.steps);
    CHECK(m->step_totals.sampled <= m->step_totals.complete);
    CHECK(m->step_thinning || m->nsteps == m->step_totals.steps);
    for (size_t i = 0; i < m->nseries; i++) {
        const model_series *s = &m->series[i];
        CHECK(s->name != NULL);
        CHECK(s->nsamples <= s->total && (s->thinning || s->nsamples == s->total));
        for (size_t j = 0; j < s->nsamples; j++) {
            CHECK(j == 0 || s->samples[j - 1].t_ns <= s->samples[j].t_ns);
            CHECK(s->samples[j].step == MODEL_NONE || s->samples[j].step < m->nsteps);
        }
    }
    for (size_t i = 0; i < m->nsync_sites; i++) {
        CHECK(m->sync_sites[i].op == MODEL_NONE || m->sync_sites[i].op < m->nops);
        CHECK(i == 0 || m->sync_sites[i - 1].blocked_ns >= m->sync_sites[i].blocked_ns);
    }
    CHECK(m->priv == NULL);
}

/* report_render_json's promise: its output is always valid JSON. */
static void check_json(const cJSON *report)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    CHECK(report_render_json(f, report) == PROF_OK);
    CHECK(fclose(f) == 0);
    cJSON *back = cJSON_ParseWithLength(text, len);
    CHECK(back != NULL);
    cJSON_Delete(back);
    free(text);
}

static void render_report(const cJSON *report)
{
    FILE *sink = fuzz_sink();
    static const report_style styles[] = { { 0, 0, 0, 0 }, { 1, 1, 60, 1 } };
    prof_error err = { PROF_OK, "" };
    for (size_t i = 0; i < 2; i++)
        CHECK(report_render_text(sink, report, &styles[i]) == PROF_OK);
    check_json(report);
    for (int t = REPORT_TABLE_OPS; t <= REPORT_TABLE_GPU; t++)
        CHECK(report_render_csv(sink, report, (report_table)t) == PROF_OK);
    CHECK(report_render_html(sink, report, NULL, &err) == PROF_OK);
}

/* `prof compare A A` and `prof view A A`: a profile against itself. */
static void compare_self(const cJSON *full)
{
    FILE *sink = fuzz_sink();
    prof_error err = { PROF_OK, "" };
    compare_options o;
    compare_options_default(&o);
    o.regression_pct = 0;
    cJSON *cmp = compare_build(full, full, &o, &err);
    CHECK(cmp != NULL);
    CHECK(!compare_regressed(cmp));
    static const report_style styled = { 1, 1, 60, 0 };
    CHECK(compare_render_text(sink, cmp, NULL) == PROF_OK);
    CHECK(compare_render_text(sink, cmp, &styled) == PROF_OK);
    CHECK(compare_render_csv(sink, cmp) == PROF_OK);
    check_json(cmp);
    const cJSON *two[2] = { full, full };
    char *doc = view_document(two, 2, cmp, &err);
    CHECK(doc != NULL);
    free(doc);
    CHECK(view_render_html(sink, two, 2, cmp, &err) == PROF_OK);
    CHECK(report_render_html(sink, full, cmp, &err) == PROF_OK);
    cJSON_Delete(cmp);
}

static void analyze(const profile_model *m)
{
    prof_error err = { PROF_OK, "" };
    analysis_options o;
    analysis_options_default(&o);
    o.max_points = 4; /* series of a few points are thinned too */
    cJSON *report = report_build(&m, 1, &o, &err);
    CHECK(report != NULL);
    render_report(report);
    cJSON_Delete(report);

    o.max_points = REPORT_POINTS;
    o.top = 0; /* as compare and view build it */
    cJSON *full = report_build(&m, 1, &o, &err);
    CHECK(full != NULL);
    const cJSON *one[1] = { full };
    char *doc = view_document(one, 1, NULL, &err);
    CHECK(doc != NULL);
    free(doc);
    CHECK(view_render_html(fuzz_sink(), one, 1, NULL, &err) == PROF_OK);
    compare_self(full);
    cJSON_Delete(full);

    /* The same profile twice is never two ranks of one job. */
    const profile_model *twice[2] = { m, m };
    cJSON *ranks = report_build(twice, 2, NULL, &err);
    if (ranks) {
        render_report(ranks);
        cJSON_Delete(ranks);
    } else {
        CHECK(err.code == PROF_ERR_INVALID);
    }
}

/* odd last byte: the least limit on kept steps and samples */
static prof_tuning tuning;

static void load_and_analyze(const uint8_t *data, size_t size)
{
    prof_error err = { PROF_OK, "" };
    profile_model m;
    prof_err e = profile_model_load(fuzz_as_file(data, size), &tuning, &m, NULL, NULL, &err);
    if (e != PROF_OK) {
        CHECK(err.code == e && err.message[0] != '\0');
        profile_model_free(&m);
        return;
    }
    check_model(&m);
    analyze(&m);
    profile_model_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tuning.model_keep = size && (data[size - 1] & 1) ? 16 : 0;
    fuzz_as_given_and_repaired(data, size, load_and_analyze);
    return 0;
}
