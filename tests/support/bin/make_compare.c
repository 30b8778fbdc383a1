/* make_compare.c - writes the profiles of tests/cli/compare.sh into a
 * directory: a base run, the same program re-run (another seed), one with
 * "backward" 30% slower, one with it 2% slower, one with the small
 * "log_metrics" 50% slower, one with an operation renamed (removed and
 * added), one with half the steps, one sampling a step in four, one from
 * another command, and one whose memory grows 20 MB a step. */
#include <stdio.h>
#include <string.h>

#include "compare_fixtures.h"

static int write_one(const char *dir, const char *name, const cf_spec *spec)
{
    char path[4096];
    prof_error err = { PROF_OK, "" };
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (cf_write(path, spec, &err) < 0) {
        fprintf(stderr, "make_compare: cannot write '%s': %s\n", path, err.message);
        return -1;
    }
    return 0;
}

static int write_scaled(const char *dir, const char *name, const char *op, double factor)
{
    char path[4096];
    prof_error err = { PROF_OK, "" };
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (cf_write_scaled(path, 2, 300, op, factor, &err) < 0) {
        fprintf(stderr, "make_compare: cannot write '%s': %s\n", path, err.message);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: make_compare DIR\n", stderr);
        return 2;
    }
    const char *dir = argv[1];
    cf_spec base = cf_base(1), rerun = cf_base(2), half = cf_base(3), sampled = cf_base(4);
    cf_spec other = cf_base(5), leaky = cf_base(6), renamed = cf_base(7);
    half.steps = 150;
    sampled.sample_every = 4;
    other.command = "bench.py";
    leaky.leak_mb = 20.0;
    cf_op ops[CF_BASE_NOPS];
    memcpy(ops, cf_base_ops, sizeof ops);
    ops[3].name = "fused_optimizer";
    renamed.ops = ops;
    int rc = write_one(dir, "base.prof", &base) | write_one(dir, "rerun.prof", &rerun) |
             write_scaled(dir, "slow30.prof", "backward", 1.30) |
             write_scaled(dir, "slow2.prof", "backward", 1.02) |
             write_scaled(dir, "small50.prof", "log_metrics", 1.50) |
             write_one(dir, "renamed.prof", &renamed) | write_one(dir, "half.prof", &half) |
             write_one(dir, "sampled.prof", &sampled) | write_one(dir, "other.prof", &other) |
             write_one(dir, "leaky.prof", &leaky);
    return rc ? 1 : 0;
}
