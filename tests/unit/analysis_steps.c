/* analysis_steps.c - what counts as a step (formats/rules.md §1): the
 * incomplete step prof_stop closes is not counted, not in step times, not
 * the divisor of per-step rates, and the text report says it was left out;
 * yet its events count in totals and it stays listed, flagged. A run that
 * never called prof_step has no steps; sampling counts complete steps. */
#include <stdio.h>
#include <stdlib.h>

#include "analysis_util.h"
#include "output/report_text.h"

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(analysis_steps, .fini = teardown);

/* n steps of 10 ms (every other one sampled when half), each with a 1 ms
 * SYNC region in train_step and host.rss sampled at its end, then, as
 * prof_stop leaves a run, a 2 ms incomplete step holding one more sync. */
static const char *write_run(const char *name, uint64_t n, int half)
{
    const char *path = fx_path(name);
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 1, "train");
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < n; i++) {
        int kept = !half || i % 2 == 0;
        if (kept) {
            synth_region(s, 0, "loss.item", PROF_KIND_SYNC, 1, t + 8 * FX_MS, FX_MS);
            synth_region(s, 0, "train_step", PROF_KIND_COMPUTE, 0, t, 10 * FX_MS);
        }
        synth_step(s, 0, i, kept ? PROF_STEP_SAMPLED : 0, t, 10 * FX_MS);
        t += 10 * FX_MS;
        synth_memory(s, 0, "host.rss", t, 1u << 30);
    }
    synth_region(s, 0, "final.item", PROF_KIND_SYNC, 0, t, FX_MS);
    synth_step(s, 0, n, PROF_STEP_SAMPLED | PROF_STEP_INCOMPLETE, t, 2 * FX_MS);
    synth_memory(s, 0, "host.rss", t + 2 * FX_MS, 1u << 30);
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

/* The text report's "steps" line. */
static void steps_line(const cJSON *report, char *line, size_t size)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    cr_assert_eq(report_render_text(out, report, NULL), PROF_OK);
    fclose(out);
    const char *at = strstr(text, "\n  steps ");
    cr_assert_not_null(at, "no steps line in\n%s", text);
    size_t n = strcspn(at + 1, "\n");
    snprintf(line, size, "%.*s", (int)n, at + 1);
    free(text);
}

Test(analysis_steps, the_incomplete_step_is_not_counted)
{
    cJSON *r = au_report(write_run("run.prof", 200, 0), NULL);
    au_assert_valid(r, "formats/report.schema.json", "report");
    const cJSON *sum = au_get(r, "summary");
    cr_assert_eq(au_num(sum, "steps"), 200, "200 prof_step calls, 200 steps");
    cr_assert_eq(au_num(sum, "incomplete_steps"), 1);
    cr_assert_eq(au_num(sum, "sampled_steps"), 200);
    cr_assert_eq(au_num(sum, "complete_steps"), 200);
    const cJSON *st = au_get(sum, "step_time");
    cr_assert_eq(au_num(st, "min_ns"), 10 * FX_MS, "the 2 ms tail is no step time");
    const cJSON *sync = au_get(sum, "sync");
    cr_assert_eq(au_num(sync, "count"), 201, "the tail's events still count");
    au_near(au_num(sync, "per_step"), 201.0 / 200, 1e-9, "per complete step");
    const cJSON *steps = au_get(r, "steps");
    cr_assert_eq(cJSON_GetArraySize(steps), 201, "listed, flagged");
    cr_assert(cJSON_IsTrue(au_get(cJSON_GetArrayItem(steps, 200), "incomplete")));
    cr_assert(cJSON_IsFalse(au_get(cJSON_GetArrayItem(steps, 199), "incomplete")));
    cr_assert_not(au_note(r, "no steps"));
    cr_assert_not(au_note(r, "sampling"));
    char line[200];
    steps_line(r, line, sizeof line);
    cr_assert_str_eq(line, "  steps          200 (1 incomplete not counted)");
    cJSON_Delete(r);
}

Test(analysis_steps, sampling_counts_complete_steps)
{
    cJSON *r = au_report(write_run("half.prof", 10, 1), NULL);
    const cJSON *sum = au_get(r, "summary");
    cr_assert_eq(au_num(sum, "steps"), 10);
    cr_assert_eq(au_num(sum, "sampled_steps"), 5, "the sampled tail is no step");
    au_near(au_num(au_get(sum, "sync"), "per_step"), 6.0 / 5, 1e-9, "per sampled step");
    cr_assert(au_note(r, "kept for 5 of 10 steps"));
    char line[200];
    steps_line(r, line, sizeof line);
    cr_assert_str_eq(line, "  steps          10 (5 sampled; 1 incomplete not counted)");
    cJSON_Delete(r);
}

/* prof_start, work, prof_stop: one incomplete step and no step. Its step
 * times still describe the run (complete_steps says over how many). */
Test(analysis_steps, a_run_without_prof_step_has_no_steps)
{
    cJSON *r = au_report(write_run("none.prof", 0, 0), NULL);
    au_assert_valid(r, "formats/report.schema.json", "report");
    const cJSON *sum = au_get(r, "summary");
    cr_assert_eq(au_num(sum, "steps"), 0);
    cr_assert_eq(au_num(sum, "incomplete_steps"), 1);
    cr_assert_eq(au_num(sum, "sampled_steps"), 0);
    cr_assert_eq(au_num(sum, "complete_steps"), 1, "step times fall back to the incomplete one");
    cr_assert_eq(au_num(au_get(sum, "sync"), "per_step"), 0);
    cr_assert(au_note(r, "no steps recorded"));
    cr_assert(au_note(r, "prof_step() (or prof.step())"), "the note says how to get steps");
    cr_assert_not(au_note(r, "no regions recorded"));
    char line[200];
    steps_line(r, line, sizeof line);
    cr_assert_str_eq(line, "  steps          0 (1 incomplete not counted)");
    cJSON_Delete(r);
}

/* Steps and memory but no region (an unmodified program under prof record
 * that is not PyTorch): the note says how to get operation times. */
Test(analysis_steps, a_run_without_regions_says_how_to_get_them)
{
    const char *path = fx_path("noregions.prof");
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 1, "train");
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < 5; i++, t += 10 * FX_MS) {
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t, 10 * FX_MS);
        synth_memory(s, 0, "host.rss", t + 10 * FX_MS, 1u << 30);
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    cJSON *r = au_report(path, NULL);
    au_assert_valid(r, "formats/report.schema.json", "report");
    cr_assert(au_note(r, "no regions recorded"));
    cr_assert(au_note(r, "prof_region_begin/end or prof.region"));
    cr_assert_not(au_note(r, "no steps recorded"));
    cJSON_Delete(r);
}
