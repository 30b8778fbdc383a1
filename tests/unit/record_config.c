/* record_config.c - the output path's %p (pid) and %r (rank) expansion,
 * which `prof record -o 'run.%p.%r.prof'` relies on: from the environment
 * and from prof_config, with %% and unknown sequences, and end to end
 * through prof_start writing the file under the expanded name; and the
 * step schedule at the edge of its arithmetic; and the one set of limits
 * of the sample rate and the schedule. */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "record/runtime.h"
#include "record_util.h"

static void setup(void)
{
    clean_env();
}

static void teardown(void)
{
    prof_stop();
    test_dir_remove();
}

TestSuite(record_config, .init = setup, .fini = teardown);

static char *resolved_output(const prof_config *cfg)
{
    rt_config c;
    cr_assert_eq(rt_config_resolve(cfg, &c), 0);
    char *out = strdup(c.output);
    rt_config_free(&c);
    return out;
}

Test(record_config, pid_and_rank_from_environment)
{
    char want[128];
    setenv("PROF_OUTPUT", "run.%p.%r.prof", 1);
    setenv("RANK", "3", 1);
    snprintf(want, sizeof want, "run.%ld.3.prof", (long)getpid());
    char *got = resolved_output(NULL);
    cr_expect_str_eq(got, want);
    free(got);
}

Test(record_config, prof_rank_wins_over_rank)
{
    setenv("PROF_OUTPUT", "rank%r.prof", 1);
    setenv("RANK", "3", 1);
    setenv("PROF_RANK", "7", 1);
    char *got = resolved_output(NULL);
    cr_expect_str_eq(got, "rank7.prof");
    free(got);
}

Test(record_config, percent_escape_and_unknown_sequences)
{
    prof_config cfg = { 0 };
    cfg.output = "a%%p-%x-%-%r%";
    char *got = resolved_output(&cfg);
    cr_expect_str_eq(got, "a%p-%x-%-0%");
    free(got);
}

Test(record_config, no_pattern_is_unchanged)
{
    char *got = resolved_output(NULL);
    cr_expect_str_eq(got, "run.prof");
    free(got);
}

Test(record_config, prof_start_writes_expanded_name)
{
    char want[256];
    prof_config cfg = { 0 };
    cfg.output = test_path("out.%p.prof");
    snprintf(want, sizeof want, "%s", test_path(""));
    snprintf(want + strlen(want), sizeof want - strlen(want), "out.%ld.prof", (long)getpid());
    cr_assert_eq(prof_start(&cfg), 0);
    prof_step();
    cr_assert_eq(prof_stop(), 0);
    cr_expect(file_exists(want), "no file %s", want);
    cr_expect(!file_exists(test_path("out.%p.prof")));
}

/* wait + warmup + active times repeat may pass 2^64: the schedule must not
 * wrap around and drop the active steps of its first cycles. */
Test(record_config, schedule_past_64_bits_keeps_its_active_steps)
{
    rt_config c;
    setenv("PROF_SCHEDULE", "4294967295:4294967295:2:2147483648", 1);
    cr_assert_eq(rt_config_resolve(NULL, &c), 0);
    uint64_t first_active = 2ull * 4294967295u;
    cr_expect(!rt_step_sampled(&c, first_active - 1));
    cr_expect(rt_step_sampled(&c, first_active));
    cr_expect(rt_step_sampled(&c, first_active + 1));
    cr_expect(!rt_step_sampled(&c, first_active + 2)); /* the next cycle's wait */
    rt_config_free(&c);
}

/* One set of limits for the sample rate, whether it comes from a
 * prof_config, PROF_SAMPLE_RATE or `prof record --sample-rate` (which
 * parses with rt_config_parse_rate before the command runs). */
Test(record_config, sample_rate_limits_are_one_set)
{
    static const struct {
        const char *text;
        double value;
        int ok;
    } cases[] = { { "1", 1.0, 1 },      { "0.25", 0.25, 1 }, { "1e-9", 1e-9, 1 },
                  { "0", 0.0, 0 },      { "-0.5", -0.5, 0 }, { "1.0001", 1.0001, 0 },
                  { "nan", NAN, 0 },    { "inf", INFINITY, 0 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double r;
        rt_config c;
        prof_config cfg = { 0 };
        cr_expect_eq(rt_config_rate_ok(cases[i].value), cases[i].ok, "%s", cases[i].text);
        cr_expect_eq(rt_config_parse_rate(cases[i].text, &r) == 0, cases[i].ok, "%s",
                     cases[i].text);
        setenv("PROF_SAMPLE_RATE", cases[i].text, 1);
        int e = rt_config_resolve(NULL, &c);
        cr_expect_eq(e == 0, cases[i].ok, "PROF_SAMPLE_RATE=%s", cases[i].text);
        if (!e)
            rt_config_free(&c);
        unsetenv("PROF_SAMPLE_RATE");
        cfg.sample_rate = cases[i].value; /* 0 in a prof_config: not set, so 1 */
        e = rt_config_resolve(&cfg, &c);
        cr_expect_eq(e == 0, cases[i].ok || cases[i].value == 0, "prof_config %s", cases[i].text);
        if (!e) {
            cr_expect_eq(c.sample_rate, cases[i].value == 0 ? 1.0 : cases[i].value);
            rt_config_free(&c);
        }
    }
}

Test(record_config, schedule_limits)
{
    unsigned s[4];
    cr_expect_eq(rt_config_parse_schedule("1:1:3:2", s), 0);
    cr_expect(s[0] == 1 && s[1] == 1 && s[2] == 3 && s[3] == 2);
    cr_expect_eq(rt_config_parse_schedule("0:0:4294967295:0", s), 0);
    cr_expect_eq(s[2], 4294967295u);
    const char *bad[] = { "", "1:1:3", "1:1:3:2:0", "1:1:4294967296:0", "1:-1:3:2", "1::3:2",
                          "1:1:3:2x", " 1:1:3:2", "1:1:3:+2" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(rt_config_parse_schedule(bad[i], s), -EINVAL, "'%s'", bad[i]);
}
