/* fuzz_rank_summary.c - libFuzzer target over what `prof analyze` does
 * with rank summary files (formats/rank-summary.md), which come from other
 * machines: the input is read as a summary (its collectives into a store
 * in memory); an accepted one is written back out, and must read back;
 * from the second write on, what is read back writes out the same bytes
 * (the first write makes strings valid UTF-8, escaping what was not; the
 * next writes those characters as they are), then it is merged with copies
 * of itself as other ranks, one slowed down, and the
 * report it holds rendered as text, JSON and CSV (every table), as
 * `prof analyze SUMMARY...` would. Output goes to /dev/null. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis/ranks.h"
#include "output/report_csv.h"
#include "output/report_json.h"
#include "output/report_text.h"
#include "fuzz_util.h"

static void render_all(const cJSON *report)
{
    FILE *devnull = fopen("/dev/null", "w");
    CHECK(devnull != NULL);
    report_style st = { 0, 0, 0, 0 };
    report_render_text(devnull, report, &st);
    st.color = st.unicode = 1;
    report_render_text(devnull, report, &st);
    report_render_json(devnull, report);
    for (int t = 0; t <= REPORT_TABLE_RANKS; t++)
        report_render_csv(devnull, report, (report_table)t);
    fclose(devnull);
}

/* The summary written out as prof writes it, and read back. */
static char *written(const rank_summary *s, size_t *len)
{
    cJSON *doc = rank_summary_json(s);
    CHECK(doc != NULL);
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    CHECK(f != NULL);
    CHECK(report_render_json(f, doc) == PROF_OK);
    fclose(f);
    cJSON_Delete(doc);
    return text;
}

/* The copy made the slow rank: its steps and operations half as long
 * again, so that the cross-rank rules (spread, outliers) have a rank to
 * set apart. */
static void slow_down(rank_summary *s)
{
    s->step_mean *= 1.5;
    for (size_t i = 0; i < s->nops; i++)
        s->ops[i].ns_per_step *= 1.5;
}

/* s and COPIES copies of it as the next ranks of a world that holds them,
 * the first copy slowed down, merged. */
#define COPIES 3
static void merge_with_copies(rank_summary *s, const char *text, size_t len,
                              collective_store *store)
{
    rank_summary all[COPIES + 1];
    prof_error err = { PROF_OK, "" };
    for (size_t i = 1; i <= COPIES; i++)
        CHECK(rank_summary_parse(text, len, 0, store, &all[i], &err) == PROF_OK);
    slow_down(&all[1]);
    all[0] = *s;
    int rank = s->rank >= 0 && s->rank < 1000000 ? s->rank : 0;
    for (size_t i = 0; i <= COPIES; i++) {
        all[i].rank = rank + (int)i;
        all[i].world_size = rank + COPIES + 1;
    }
    cJSON *report = s->report;
    s->report = NULL;
    all[0].report = NULL;
    analysis_options o;
    analysis_options_default(&o);
    o.rank = ANALYSIS_RANK_SLOWEST;
    ranks_analysis *a = ranks_analyze(all, COPIES + 1, &o, &err);
    CHECK(a != NULL);
    CHECK(ranks_described(a) <= COPIES);
    if (report && (report = ranks_report(a, report, &err)) != NULL) {
        render_all(report);
        cJSON_Delete(report);
    }
    ranks_analysis_free(a);
    for (size_t i = 1; i <= COPIES; i++)
        rank_summary_free(&all[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    collective_store *store = collective_store_open(-1);
    CHECK(store != NULL);
    rank_summary s;
    prof_error err = { PROF_OK, "" };
    if (rank_summary_parse((const char *)data, size, 1, store, &s, &err) != PROF_OK) {
        CHECK(err.code == PROF_ERR_CORRUPT || err.code == PROF_ERR_NOMEM);
        collective_store_close(store);
        return 0;
    }
    CHECK(s.path != NULL && s.host != NULL && s.row != NULL && s.peaks != NULL);
    if (s.report)
        render_all(s.report);
    size_t len;
    char *text = written(&s, &len);
    rank_summary again;
    CHECK(rank_summary_parse(text, len, 1, store, &again, &err) == PROF_OK);
    CHECK(again.rank == s.rank && again.world_size == s.world_size);
    CHECK(again.kernels.n == s.kernels.n && again.regions.n == s.regions.n);
    size_t len2, len3;
    char *text2 = written(&again, &len2);
    rank_summary third;
    CHECK(rank_summary_parse(text2, len2, 1, store, &third, &err) == PROF_OK);
    char *text3 = written(&third, &len3);
    CHECK(len3 == len2 && memcmp(text2, text3, len2) == 0);
    free(text2);
    free(text3);
    rank_summary_free(&third);
    rank_summary_free(&again);
    merge_with_copies(&s, text, len, store);
    free(text);
    rank_summary_free(&s);
    collective_store_close(store);
    return 0;
}
