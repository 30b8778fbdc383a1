/* fuzz_view_query.c - libFuzzer target over what `prof view` makes of a
 * request: the input is "PATH?QUERY" as a browser would send it; the query
 * is split into key=value pairs the way the HTTP library does (first
 * value of a key wins; no percent-decoding is needed for these keys), and
 * the path is looked up among the page's files. Checks: an accepted
 * request's numbers read back as the decimal text it gave, the window is
 * ordered, and the profile, thread and rank are in range. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/server.h"
#include "output/viewer_assets.h"
#include "fuzz_util.h"

#define NKEYS 5
static const char *const keys[NKEYS] = { "profile", "t0", "t1", "thread", "rank" };

/* Points vals[i] at the first value of keys[i] in query (split in place). */
static void split_query(char *query, const char *vals[NKEYS])
{
    for (char *item = query; item;) {
        char *next = strchr(item, '&');
        if (next)
            *next++ = '\0';
        char *eq = strchr(item, '=');
        if (eq)
            *eq++ = '\0';
        for (size_t i = 0; i < NKEYS; i++)
            if (!vals[i] && strcmp(item, keys[i]) == 0)
                vals[i] = eq ? eq : "";
        item = next;
    }
}

/* An accepted number is a whole decimal and means what strtoull says. */
static void check_number(const char *text, uint64_t v)
{
    CHECK(text[0] >= '0' && text[0] <= '9');
    char *end;
    CHECK(strtoull(text, &end, 10) == v && *end == '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *req = malloc(size + 1);
    CHECK(req != NULL);
    memcpy(req, data, size);
    req[size] = '\0'; /* the library hands over C strings: stop at a NUL */
    const char *vals[NKEYS] = { NULL, NULL, NULL, NULL, NULL };
    char *q = strchr(req, '?');
    if (q) {
        *q++ = '\0';
        split_query(q, vals);
    }
    const viewer_asset *a = viewer_asset_find(req);
    CHECK(!a || (strcmp(a->path, req) == 0 && a->data != NULL && a->content_type != NULL));

    long rank = -2;
    if (view_parse_rank(vals[4], &rank) == 0) {
        CHECK(vals[4] ? rank >= 0 && rank <= INT32_MAX : rank == -1);
        if (vals[4])
            check_number(vals[4], (uint64_t)rank);
    } else {
        CHECK(vals[4] != NULL && rank == -1);
    }
    for (size_t n = 1; n <= VIEW_MAX_PROFILES; n++) {
        long p = view_parse_profile(vals[0], n);
        CHECK(p >= -1 && p < (long)n);
        if (p > 0)
            check_number(vals[0], (uint64_t)p);
        timeline_query tq;
        long profile = -2;
        int rc = view_parse_events(vals[0], vals[1], vals[2], vals[3], n, &profile, &tq);
        CHECK(rc == 0 || rc == VIEW_BAD_WINDOW || rc == VIEW_BAD_THREAD);
        if (rc == VIEW_BAD_WINDOW)
            continue;
        CHECK(profile == p && profile >= 0);
        CHECK(tq.t0_ns <= tq.t1_ns);
        if (vals[1])
            check_number(vals[1], tq.t0_ns);
        if (vals[2])
            check_number(vals[2], tq.t1_ns);
        if (rc != 0)
            continue;
        CHECK(tq.limit == VIEW_EVENTS_LIMIT);
        if (!vals[3])
            CHECK(tq.thread == TIMELINE_ALL_THREADS);
        else if (strcmp(vals[3], "gpu") == 0)
            CHECK(tq.thread == TIMELINE_GPU_ONLY);
        else {
            CHECK(tq.thread >= 0 && tq.thread <= (long)UINT32_MAX);
            check_number(vals[3], (uint64_t)tq.thread);
        }
    }
    free(req);
    return 0;
}
