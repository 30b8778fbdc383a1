/* record_config.c - the output path's %p (pid) and %r (rank) expansion,
 * which `prof record -o 'run.%p.%r.prof'` relies on: from the environment
 * and from prof_config, with %% and unknown sequences, and end to end
 * through prof_start writing the file under the expanded name; and the
 * step schedule at the edge of its arithmetic. */
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
