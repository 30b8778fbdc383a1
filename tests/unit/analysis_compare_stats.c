/* analysis_compare_stats.c - the level that holds a comparison's
 * operations together (cmp_level_each, formats/rules.md §6.3) against
 * Benjamini-Hochberg worked by hand: the largest k whose k-th smallest p is
 * below alpha * k / m sets the level, even when smaller ps miss their own
 * bound (step-up); a p on the bound is not below it; no such k leaves
 * alpha / m; one test or none keeps alpha; the ps are not reordered. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "analysis/compare_stats.h"

static void near(double got, double want)
{
    cr_assert(fabs(got - want) <= 1e-15, "%.17g, want %.17g", got, want);
}

Test(analysis_compare_stats, one_test_or_none_keeps_alpha)
{
    double p[1] = { 0.5 };
    near(cmp_level_each(p, 0, 0.01), 0.01);
    near(cmp_level_each(p, 1, 0.01), 0.01);
}

Test(analysis_compare_stats, nothing_below_its_bound_leaves_alpha_over_m)
{
    double p[4] = { 0.9, 0.02, 0.5, 0.3 }; /* bounds 0.0125 0.025 0.0375 0.05 */
    near(cmp_level_each(p, 4, 0.05), 0.0125);
}

Test(analysis_compare_stats, the_largest_k_below_its_bound_sets_the_level)
{
    double p[4] = { 0.2, 0.03, 0.01, 0.04 }; /* sorted 0.01 0.03 0.04 0.2: k = 1 */
    near(cmp_level_each(p, 4, 0.05), 0.0125);
}

Test(analysis_compare_stats, a_larger_k_below_its_bound_takes_the_smaller_ps_with_it)
{
    /* 0.02 misses 0.0125 and 0.021 misses 0.025, but 0.03 < 0.05: all four */
    double p[4] = { 0.021, 0.03, 0.02, 0.022 };
    near(cmp_level_each(p, 4, 0.05), 0.05);
    double q[5] = { 0.001, 0.5, 0.007, 0.011, 0.9 }; /* bounds by 0.01: 0.011 < 0.03 */
    near(cmp_level_each(q, 5, 0.05), 0.03);
}

Test(analysis_compare_stats, a_p_on_its_bound_is_not_below_it)
{
    double p[2] = { 0.5, 0.025 };
    near(cmp_level_each(p, 2, 0.05), 0.025); /* k = 1 fails: alpha / m, and 0.025 is not < it */
}

Test(analysis_compare_stats, the_ps_are_left_as_they_were)
{
    double p[5] = { 0.3, 0.001, 0.04, 0.002, 1.0 }, copy[5];
    memcpy(copy, p, sizeof p);
    cmp_level_each(p, 5, 0.01);
    cr_assert_arr_eq(p, copy, sizeof p);
}
