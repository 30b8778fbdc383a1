/* fuzz_config.c - libFuzzer target over the recording configuration read
 * from the environment (src/record/config.c): the input's lines are the
 * values of the PROF_* variables and torchrun's, in the order of vars[]
 * (an empty or missing line leaves the variable unset). The configuration
 * is resolved, the step-sampling rule asked about a few steps, and the
 * metadata libprof would write is built and parsed back. Checks: a
 * resolved configuration is in its ranges, a schedule with repeat keeps
 * no step past its last cycle, every tag comes back from the metadata as
 * it was given, and an output without % is used as written. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "record/runtime.h"
#include "fuzz_util.h"

static const char *const vars[] = {
    "PROF_ENABLE", "PROF_SAMPLE_RATE", "PROF_SCHEDULE", "PROF_BUFFER_MB", "PROF_FLUSH_MS",
    "PROF_MEMORY_INTERVAL_MS", "PROF_RANK", "WORLD_SIZE", "LOCAL_RANK", "RANK",
    "PROF_OUTPUT", "PROF_CUDA", "PROF_TAGS",
};
#define NVARS (sizeof vars / sizeof vars[0])

extern char **environ;

/* Makes vars[i] line i of the input, and nothing else, the environment.
 * environ is replaced rather than setenv called: glibc keeps every value
 * setenv ever replaced, which over millions of inputs is unbounded. */
static void set_env(const uint8_t *data, size_t size)
{
    static char *entries[NVARS + 1];
    const char *p = (const char *)data, *end = p + size;
    size_t k = 0;
    for (size_t i = 0; i < NVARS; i++) {
        free(entries[i]);
        entries[i] = NULL;
    }
    for (size_t i = 0; i < NVARS && p < end; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        char *v = strndup(p, n); /* a NUL ends it early, as in a real environment */
        CHECK(v != NULL);
        if (*v)
            CHECK(asprintf(&entries[k++], "%s=%s", vars[i], v) > 0);
        free(v);
        p += n + (nl != NULL);
    }
    entries[k] = NULL;
    environ = entries;
}

/* The schedule: past wait + warmup + active steps times repeat, nothing. */
static void check_sampling(const rt_config *c, uint64_t salt)
{
    uint64_t cycle = (uint64_t)c->wait + c->warmup + c->active;
    unsigned __int128 last = (unsigned __int128)cycle * c->repeat;
    uint64_t probes[] = { 0, 1, salt, cycle, UINT64_MAX, (uint64_t)last, (uint64_t)last - 1,
                          (uint64_t)c->wait + c->warmup };
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        uint64_t n = probes[i];
        int kept = rt_step_sampled(c, n);
        CHECK(kept == 0 || kept == 1);
        if (c->active && c->repeat && n >= last)
            CHECK(!kept);
        if (c->active && n % cycle < (uint64_t)c->wait + c->warmup)
            CHECK(!kept);
        int in_schedule = !c->active || ((!c->repeat || n < last) &&
                                         n % cycle >= (uint64_t)c->wait + c->warmup);
        if (in_schedule && c->sample_rate >= 1)
            CHECK(kept);
    }
}

static void check_metadata(const rt_config *c)
{
    rt_clock clk;
    memset(&clk, 0, sizeof clk);
    char *text = rt_metadata(c, &clk);
    CHECK(text != NULL);
    cJSON *meta = cJSON_Parse(text);
    CHECK(meta != NULL);
    const cJSON *tags = cJSON_GetObjectItemCaseSensitive(meta, "tags"), *t = NULL;
    CHECK(cJSON_IsObject(tags));
    size_t i = 0;
    cJSON_ArrayForEach(t, tags) {
        CHECK(i < c->ntags);
        CHECK(strcmp(t->string, c->tags[i].key) == 0);
        CHECK(cJSON_IsString(t) && strcmp(t->valuestring, c->tags[i].value) == 0);
        i++;
    }
    CHECK(i == c->ntags);
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(meta, "config");
    const char *out = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cfg, "output"));
    CHECK(out && strcmp(out, c->output) == 0);
    cJSON_Delete(meta);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    set_env(data, size);
    rt_config c;
    int e = rt_config_resolve(NULL, &c);
    if (e) {
        CHECK(e == -EINVAL || e == -ECANCELED);
        CHECK(c.output == NULL && c.tags == NULL); /* nothing left to free */
        return 0;
    }
    CHECK(c.sample_rate > 0 && c.sample_rate <= 1);
    CHECK(c.buffer_bytes > 0 && c.flush_interval_ms > 0);
    CHECK(c.rank >= 0 && c.world_size >= 0 && c.local_rank >= 0);
    CHECK(c.output != NULL);
    const char *given = getenv("PROF_OUTPUT");
    if (given && *given && !strchr(given, '%'))
        CHECK(strcmp(c.output, given) == 0);
    uint64_t salt = 0;
    memcpy(&salt, data, size < sizeof salt ? size : sizeof salt);
    check_sampling(&c, salt);
    check_metadata(&c);
    rt_config_free(&c);
    return 0;
}
