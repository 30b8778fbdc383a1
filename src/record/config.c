/* config.c - the recording configuration: a prof_config's non-zero fields,
 * then the environment (PROF_*; RANK, WORLD_SIZE, LOCAL_RANK as torchrun
 * sets them), then defaults. Values are checked strictly: a malformed
 * PROF_* variable makes prof_start fail with -EINVAL rather than record
 * with a setting the user did not ask for. The output path may hold %p
 * (pid) and %r (rank), expanded here because only the recording process
 * knows its pid (`prof record -o 'run.%p.prof'`). Also the step sampling
 * rule. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "record/runtime.h"
#include "util/vec.h"

#define DEFAULT_OUTPUT "run.prof"
#define DEFAULT_BUFFER ((size_t)64 << 20)
#define DEFAULT_FLUSH_MS 1000u

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* A whole decimal number in [0, max]. */
static int parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > max)
        return -EINVAL;
    *out = v;
    return 0;
}

/* -EINVAL, naming the variable in *bad (when bad is not NULL). */
static int bad_var(const char **bad, const char *name)
{
    if (bad)
        *bad = name;
    return -EINVAL;
}

static int env_unsigned(const char *name, unsigned *out, const char **bad)
{
    const char *s = env(name);
    unsigned long v;
    if (!s)
        return 0;
    if (parse_ulong(s, UINT32_MAX, &v))
        return bad_var(bad, name);
    *out = (unsigned)v;
    return 0;
}

static int parse_bool(const char *s, int *out)
{
    static const char *const yes[] = { "1", "true", "yes", "on" };
    static const char *const no[] = { "0", "false", "no", "off" };
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(s, yes[i]))
            return *out = 1, 0;
        if (!strcasecmp(s, no[i]))
            return *out = 0, 0;
    }
    return -EINVAL;
}

int rt_config_parse_schedule(const char *s, unsigned out[4])
{
    for (size_t i = 0; i < 4; i++) {
        char part[16];
        size_t n = strcspn(s, ":");
        unsigned long v;
        if (n == 0 || n >= sizeof part)
            return -EINVAL;
        memcpy(part, s, n);
        part[n] = '\0';
        if (parse_ulong(part, UINT32_MAX, &v))
            return -EINVAL;
        out[i] = (unsigned)v;
        s += n;
        if (i < 3 && *s++ != ':')
            return -EINVAL;
    }
    return *s ? -EINVAL : 0;
}

int rt_config_rate_ok(double r)
{
    return r > 0 && r <= 1;
}

int rt_config_parse_rate(const char *s, double *out)
{
    char *end;
    errno = 0;
    double r = strtod(s, &end);
    if (errno || *end || end == s || !rt_config_rate_ok(r))
        return -EINVAL;
    *out = r;
    return 0;
}

static int add_tag(rt_config *c, const char *item, size_t len)
{
    const char *eq = memchr(item, '=', len);
    if (!eq || eq == item)
        return -EINVAL;
    if (vec_grow(&c->tags, &c->cap_tags, c->ntags, sizeof *c->tags) < 0)
        return -ENOMEM;
    rt_tag *t = &c->tags[c->ntags];
    t->key = strndup(item, (size_t)(eq - item));
    t->value = strndup(eq + 1, len - (size_t)(eq - item) - 1);
    c->ntags++;
    return t->key && t->value ? 0 : -ENOMEM;
}

/* "k=v,k2=v2": empty items (a trailing comma) are allowed, keys are not. */
static int parse_tags(const char *s, rt_config *c)
{
    while (*s) {
        size_t n = strcspn(s, ",");
        int e = n ? add_tag(c, s, n) : 0;
        if (e)
            return e;
        s += n;
        if (*s == ',')
            s++;
    }
    return 0;
}

/* torchrun's variables are not ours: a malformed one is ignored. */
static long env_long_or(const char *name, long dflt)
{
    const char *s = env(name);
    unsigned long v;
    return s && parse_ulong(s, 1u << 30, &v) == 0 ? (long)v : dflt;
}

static int resolve_rank(rt_config *c, const char **bad)
{
    const char *s = env("PROF_RANK");
    unsigned long v;
    c->world_size = env_long_or("WORLD_SIZE", 1);
    c->local_rank = env_long_or("LOCAL_RANK", 0);
    if (!s) {
        c->rank = env_long_or("RANK", 0);
        return 0;
    }
    if (parse_ulong(s, 1u << 30, &v))
        return bad_var(bad, "PROF_RANK");
    c->rank = (long)v;
    return 0;
}

/* The output pattern with %p (pid), %r (rank) and %% expanded; any other
 * %-sequence stays as written. */
static int expand_output(const char *pattern, long rank, char **out)
{
    size_t cap = strlen(pattern) + 1, n = 0;
    for (const char *p = pattern; *p; p++)
        cap += *p == '%' ? 20 : 0;
    char *s = malloc(cap);
    if (!s)
        return -ENOMEM;
    for (const char *p = pattern; *p; p++) {
        if (*p == '%' && (p[1] == 'p' || p[1] == 'r')) {
            n += (size_t)snprintf(s + n, cap - n, "%ld", p[1] == 'p' ? (long)getpid() : rank);
            p++;
        } else {
            s[n++] = *p;
            p += *p == '%' && p[1] == '%';
        }
    }
    s[n] = '\0';
    *out = s;
    return 0;
}

static int resolve_sizes(const prof_config *cfg, rt_config *c, const char **bad)
{
    const char *s;
    unsigned long v;
    c->buffer_bytes = cfg->buffer_bytes;
    if (!c->buffer_bytes && (s = env("PROF_BUFFER_MB"))) {
        if (parse_ulong(s, 1u << 20, &v) || v == 0)
            return bad_var(bad, "PROF_BUFFER_MB");
        c->buffer_bytes = (size_t)v << 20;
    }
    if (!c->buffer_bytes)
        c->buffer_bytes = DEFAULT_BUFFER;
    c->flush_interval_ms = cfg->flush_interval_ms;
    if (!c->flush_interval_ms && env_unsigned("PROF_FLUSH_MS", &c->flush_interval_ms, bad))
        return -EINVAL;
    if (!c->flush_interval_ms)
        c->flush_interval_ms = DEFAULT_FLUSH_MS;
    c->memory_interval_ms = cfg->memory_interval_ms;
    if (!c->memory_interval_ms && env_unsigned("PROF_MEMORY_INTERVAL_MS", &c->memory_interval_ms, bad))
        return -EINVAL;
    return 0;
}

static int resolve_sampling(const prof_config *cfg, rt_config *c, const char **bad)
{
    const char *s;
    if (cfg->sample_rate != 0 && !rt_config_rate_ok(cfg->sample_rate))
        return -EINVAL; /* 0: not set, the environment's or 1 */
    c->sample_rate = cfg->sample_rate;
    if (c->sample_rate == 0 && (s = env("PROF_SAMPLE_RATE")) &&
        rt_config_parse_rate(s, &c->sample_rate))
        return bad_var(bad, "PROF_SAMPLE_RATE");
    if (c->sample_rate == 0)
        c->sample_rate = 1.0;
    if (cfg->wait || cfg->warmup || cfg->active || cfg->repeat) {
        c->wait = cfg->wait;
        c->warmup = cfg->warmup;
        c->active = cfg->active;
        c->repeat = cfg->repeat;
    } else if ((s = env("PROF_SCHEDULE"))) {
        unsigned f[4];
        if (rt_config_parse_schedule(s, f))
            return bad_var(bad, "PROF_SCHEDULE");
        c->wait = f[0];
        c->warmup = f[1];
        c->active = f[2];
        c->repeat = f[3];
    }
    return 0;
}

static int resolve_all(const prof_config *cfg, rt_config *c, const char **bad)
{
    const char *s;
    int e;
    if ((s = env("PROF_ENABLE"))) {
        int on;
        if (parse_bool(s, &on))
            return bad_var(bad, "PROF_ENABLE");
        if (!on)
            return -ECANCELED;
    }
    if ((e = resolve_sampling(cfg, c, bad)) || (e = resolve_sizes(cfg, c, bad)) ||
        (e = resolve_rank(c, bad)))
        return e;
    s = cfg->output ? cfg->output : env("PROF_OUTPUT");
    if ((e = expand_output(s ? s : DEFAULT_OUTPUT, c->rank, &c->output)))
        return e;
    c->cuda = cfg->cuda != 0;
    if (!c->cuda && (s = env("PROF_CUDA")) && parse_bool(s, &c->cuda))
        return bad_var(bad, "PROF_CUDA");
    if ((s = env("PROF_TAGS")) && (e = parse_tags(s, c)))
        return e == -EINVAL ? bad_var(bad, "PROF_TAGS") : e;
    return 0;
}

int rt_config_resolve_why(const prof_config *cfg, rt_config *out, const char **bad)
{
    static const prof_config none;
    memset(out, 0, sizeof *out);
    if (bad)
        *bad = NULL;
    int e = resolve_all(cfg ? cfg : &none, out, bad);
    if (e)
        rt_config_free(out);
    return e;
}

int rt_config_resolve(const prof_config *cfg, rt_config *out)
{
    return rt_config_resolve_why(cfg, out, NULL);
}

void rt_config_free(rt_config *c)
{
    for (size_t i = 0; i < c->ntags; i++) {
        free(c->tags[i].key);
        free(c->tags[i].value);
    }
    free(c->tags);
    free(c->output);
    memset(c, 0, sizeof *c);
}

/* The schedule as torch.profiler.schedule (warmup steps are traced there
 * but discarded, so here they keep nothing), then the rate: step n is kept
 * when floor((n + 1) r) > floor(n r), which spreads the kept steps evenly
 * and needs no state shared between threads. */
int rt_step_sampled(const rt_config *c, uint64_t n)
{
    if (c->active) {
        uint64_t cycle = (uint64_t)c->wait + c->warmup + c->active;
        if (c->repeat && n / cycle >= c->repeat) /* cycle * repeat may not fit */
            return 0;
        if (n % cycle < (uint64_t)c->wait + c->warmup)
            return 0;
    }
    if (c->sample_rate >= 1)
        return 1;
    return floor((double)(n + 1) * c->sample_rate) > floor((double)n * c->sample_rate);
}
