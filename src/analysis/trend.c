/* trend.c - the trend statistics of memory series (formats/rules.md §2.6,
 * §2.7): growth tested as noise about a line or as a sum of increments,
 * whichever a unit-root test says the series is, each allowing for
 * correlated noise; and the onset of growth found by a hinge (flat, then
 * linear) fitted at every candidate in one pass. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "analysis/trend.h"

/* sum_i sum_j u_i u_j phi^|i - j| in two passes: sum_i u_i (F_i + B_i - u_i),
 * F and B the u filtered forwards and backwards with phi. */
static double ar1_form(const double *u, size_t n, double phi)
{
    double fwd = 0.0, bwd = 0.0, sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        fwd = u[i] + phi * fwd;
        sum += u[i] * fwd;
    }
    for (size_t i = n; i-- > 0;) {
        bwd = u[i] + phi * bwd;
        sum += u[i] * (bwd - u[i]);
    }
    return sum;
}

/* The same for the constant 1/sqrt(n), in closed form. */
static double ar1_form_const(size_t n, double phi)
{
    double m = (double)n, geo = (1.0 - pow(phi, m)) / (1.0 - phi);
    return ((1.0 + phi) / (1.0 - phi) * m - 2.0 * phi * geo / (1.0 - phi)) / m;
}

static double dot(const double *u, const double *v, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += u[i] * v[i];
    return s;
}

/* An orthonormal basis of constant, line and parabola over x (Gram-Schmidt):
 * q1, q2 into the caller's arrays; returns 3, or 2 when x has too few
 * distinct values for a parabola. */
static int quadratic_basis(const double *x, size_t n, double *q1, double *q2)
{
    double mean = 0.0, c = 1.0 / sqrt((double)n);
    for (size_t i = 0; i < n; i++)
        mean += x[i] / (double)n;
    for (size_t i = 0; i < n; i++)
        q1[i] = x[i] - mean;
    double n1 = sqrt(dot(q1, q1, n));
    for (size_t i = 0; i < n; i++) {
        q1[i] /= n1;
        q2[i] = q1[i] * q1[i];
    }
    double a0 = 0.0, a1 = dot(q2, q1, n), before = sqrt(dot(q2, q2, n));
    for (size_t i = 0; i < n; i++)
        a0 += q2[i] * c;
    for (size_t i = 0; i < n; i++)
        q2[i] -= a0 * c + a1 * q1[i];
    double n2 = sqrt(dot(q2, q2, n));
    if (!(n2 > 1e-9 * before)) /* x^2 is a line in x: two distinct x */
        return 2;
    for (size_t i = 0; i < n; i++)
        q2[i] /= n2;
    return 3;
}

/* The noise about the series' course (rules.md §2.6): residuals about the
 * least-squares parabola, so that a rate that changes slowly - steps that
 * slow down as a leak grows - counts as course, not as correlated noise.
 * Their lag-1 autocorrelation, corrected for its small-sample bias, is phi;
 * their variance, corrected for what the fit absorbs given phi
 * (E[SSE] = sigma^2 (n - tr(HR)), H the fit's projection, R the AR(1)
 * correlations), is sigma^2. Returns the slope's variance under that noise,
 * sigma^2 q1'Rq1 / Sxx, and sets *iid to its value were phi 0. */
static double noise_slope_variance(const double *x, const double *y, size_t n, double *q1,
                                   double *q2, double *r1, double *phi_out, double *iid)
{
    int k = quadratic_basis(x, n, q1, q2);
    double sy = 0.0, b1 = dot(q1, y, n), b2 = k == 3 ? dot(q2, y, n) : 0.0;
    for (size_t i = 0; i < n; i++)
        sy += y[i] / (double)n;
    double sse = 0.0, lag = 0.0, prev = 0.0, sxx = 0.0, mean = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - sy - b1 * q1[i] - (k == 3 ? b2 * q2[i] : 0.0);
        sse += e * e;
        lag += i ? prev * e : 0.0;
        prev = e;
        mean += x[i] / (double)n;
    }
    for (size_t i = 0; i < n; i++)
        sxx += (x[i] - mean) * (x[i] - mean);
    *r1 = sse > 0 ? lag / sse : 0.0;
    *iid = sse / (double)(n - (size_t)k) / sxx;
    double phi = fmin(TREND_PHI_MAX, *r1 + ((double)k + (double)(k + 2) * *r1) / (double)n);
    *phi_out = phi;
    if (*r1 <= 0 || phi <= 0)
        return *iid;
    double trace = ar1_form_const(n, phi) + ar1_form(q1, n, phi) +
                   (k == 3 ? ar1_form(q2, n, phi) : 0.0);
    double dof = (double)n - trace;
    return dof > 0 ? sse / dof * ar1_form(q1, n, phi) / sxx : INFINITY;
}

/* The test of §2.1 again with the standard error se and df degrees of
 * freedom. */
static void retest(stats_fit *f, double se, double df)
{
    f->se_slope = se;
    f->t = f->slope / se;
    double p = 2.0 * gsl_cdf_tdist_Q(fabs(f->t), df);
    f->p_value = p > 1.0 ? 1.0 : p;
    f->ci95 = gsl_cdf_tdist_Qinv(0.025, df) * se;
}

/* Noise about the line: the least-squares line, tested with the slope's
 * variance under the AR(1) noise about the series' course. 1 when that
 * noise cannot be told from a unit root (phi at its cap): then the line's
 * test has nothing to say, and the caller tests increments. */
static int about_line(const double *x, const double *y, size_t n, trend_line *out)
{
    double *q = malloc(2 * n * sizeof *q), iid, phi = 0.0;
    if (!q)
        return -2;
    double var = noise_slope_variance(x, y, n, q, q + n, &out->r1, &phi, &iid);
    free(q);
    if (phi >= TREND_PHI_MAX)
        return 1;
    if (!(var > iid)) /* no more evidence than independent noise gives */
        var = iid;
    double n_eff = 2.0 + (double)(n - 2) * iid / var;
    out->n_eff = n_eff < 3.0 ? 3.0 : n_eff;
    retest(&out->fit, sqrt(var), out->n_eff - 2.0);
    return 0;
}

/* Least squares of v on [1, x] over i in [1, n): coefficients from sums. */
typedef struct on_line {
    double a, b;
} on_line;

static on_line fit_on_x(const double *x, const double *v, size_t n)
{
    double xm = 0.0, vm = 0.0, sxx = 0.0, sxv = 0.0, m = (double)(n - 1);
    for (size_t i = 1; i < n; i++) {
        xm += x[i] / m;
        vm += v[i] / m;
    }
    for (size_t i = 1; i < n; i++) {
        sxx += (x[i] - xm) * (x[i] - xm);
        sxv += (x[i] - xm) * (v[i] - vm);
    }
    double b = sxx > 0 ? sxv / sxx : 0.0;
    return (on_line){ vm - b * xm, b };
}

/* The Dickey-Fuller statistic with constant and trend: the t of g in
 * dy_i = a + b x_i + g y_(i-1) + e, by Frisch-Waugh - dy and y_(i-1) each
 * freed of [1, x], then one regressed on the other - so that it needs sums,
 * not a matrix. The differences and lags are written to d and l (n each). */
static double dickey_fuller(const double *x, const double *y, size_t n, double *d, double *l)
{
    for (size_t i = 1; i < n; i++) {
        d[i] = y[i] - y[i - 1];
        l[i] = y[i - 1];
    }
    on_line fd = fit_on_x(x, d, n), fl = fit_on_x(x, l, n);
    double sdl = 0.0, sll = 0.0, sdd = 0.0;
    for (size_t i = 1; i < n; i++) {
        double dr = d[i] - fd.a - fd.b * x[i], lr = l[i] - fl.a - fl.b * x[i];
        sdl += dr * lr;
        sll += lr * lr;
        sdd += dr * dr;
    }
    if (!(sll > 0))
        return 0.0;
    double g = sdl / sll, s2 = (sdd - g * sdl) / (double)(n - 4);
    return s2 > 0 ? g / sqrt(s2 / sll) : -INFINITY;
}

/* Increments: the mean growth per unit of x, dy = b dx + e through the
 * origin, tested with the effective number of increments when they are
 * correlated (a rate that wanders). The line is drawn through the means. */
static void increments(const double *x, const double *y, size_t n, trend_line *out)
{
    size_t m = n - 1;
    double sxx = 0.0, sxy = 0.0, sse = 0.0, lag = 0.0, prev = 0.0, xm = 0.0, ym = 0.0;
    for (size_t i = 1; i < n; i++) {
        sxx += (x[i] - x[i - 1]) * (x[i] - x[i - 1]);
        sxy += (x[i] - x[i - 1]) * (y[i] - y[i - 1]);
    }
    double b = sxy / sxx;
    for (size_t i = 1; i < n; i++) {
        double e = (y[i] - y[i - 1]) - b * (x[i] - x[i - 1]);
        sse += e * e;
        lag += i > 1 ? prev * e : 0.0;
        prev = e;
    }
    for (size_t i = 0; i < n; i++) {
        xm += x[i] / (double)n;
        ym += y[i] / (double)n;
    }
    out->fit.slope = b;
    out->fit.intercept = ym - b * xm;
    out->r1 = sse > 0 ? lag / sse : 0.0;
    double n_eff = out->r1 > 0 ? (double)m * (1.0 - out->r1) / (1.0 + out->r1) : (double)m;
    n_eff = n_eff < 3.0 ? 3.0 : n_eff;
    out->n_eff = n_eff + 1.0; /* points: one more than increments */
    retest(&out->fit, sqrt(sse / sxx / (n_eff - 1.0)), n_eff - 1.0);
}

/* r2 of the reported line over the points. */
static double line_r2(const double *x, const double *y, size_t n, const stats_fit *f)
{
    double mean = 0.0, sst = 0.0, sse = 0.0;
    for (size_t i = 0; i < n; i++)
        mean += y[i] / (double)n;
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - f->intercept - f->slope * x[i];
        sst += (y[i] - mean) * (y[i] - mean);
        sse += e * e;
    }
    return sst > 0 ? 1.0 - sse / sst : 1.0;
}

int trend_fit(const double *x, const double *y, size_t n, trend_line *out)
{
    *out = (trend_line){ .n_eff = (double)n };
    if (stats_linear_fit(x, y, n, &out->fit) != 0)
        return -1;
    if (out->fit.se_slope <= 0 || n < 6) /* a perfect line, or too few for the tests */
        return 0;
    double *scratch = malloc(2 * n * sizeof *scratch);
    if (!scratch)
        return -2;
    out->df_tau = dickey_fuller(x, y, n, scratch, scratch + n);
    free(scratch);
    int rc = out->df_tau < TREND_DF_CRITICAL ? about_line(x, y, n, out) : 1;
    if (rc <= 0)
        return rc;
    out->increments = 1;
    increments(x, y, n, out);
    out->fit.r2 = line_r2(x, y, n, &out->fit);
    return 0;
}

/* The points before the onset are flat next to the growth after it: the
 * spread between their 10th and 90th percentiles is under half the growth.
 * A sawtooth's earlier teeth span as much as its last one. 1, 0, or -1 out
 * of memory. */
static int flat_before(const double *y, size_t k, double growth)
{
    double *v = malloc(k * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < k; i++)
        v[i] = y[i];
    double hi = stats_quantile_select(v, k, 0.90);
    double spread = hi - stats_quantile_select(v, k, 0.10);
    free(v);
    return spread < 0.5 * growth;
}

/* BIC of the hinge against the line: one parameter (the onset) more. */
static int hinge_preferred(double sse_hinge, double sse_line, size_t n)
{
    if (sse_line <= 0)
        return 0;
    if (sse_hinge <= 0)
        return 1;
    return (double)n * log(sse_line / sse_hinge) > log((double)n);
}

/* One pass from the end: with sums over the points at or after candidate k
 * (x shifted to start at 0, y centred), the hinge's regressor h = x - x[k]
 * there and 0 before has sum X1 - c t, sum of squares X2 - 2 t X1 + c t^2
 * and cross product XY - t Y1 (t = x[k], c = n - k); with sum(y) = 0 its
 * slope is Shy / (Shh - Sh^2 / n) and its error Syy - slope * Shy. Long
 * double keeps the differences of large sums exact enough. */
static void hinge_search(const double *x, const double *y, size_t n, size_t min_after,
                         trend_onset_result *out)
{
    double mean = 0.0;
    for (size_t i = 0; i < n; i++)
        mean += y[i] / (double)n;
    long double syy = 0, x1 = 0, x2 = 0, xy = 0, y1 = 0, best = INFINITY;
    for (size_t i = 0; i < n; i++)
        syy += (long double)(y[i] - mean) * (long double)(y[i] - mean);
    for (size_t i = n; i-- > 0;) {
        long double xi = (long double)(x[i] - x[0]), yi = (long double)(y[i] - mean);
        long double c = (long double)(n - i);
        x1 += xi;
        x2 += xi * xi;
        xy += xi * yi;
        y1 += yi;
        if (n - i < min_after)
            continue;
        long double sh = x1 - c * xi, shy = xy - xi * y1;
        long double sxx = x2 - 2 * xi * x1 + c * xi * xi - sh * sh / (long double)n;
        if (sxx <= 0)
            continue;
        long double b = shy / sxx, sse = syy - b * shy;
        if (sse < 0)
            sse = 0;
        if (i == 0)
            out->sse_line = (double)sse;
        if (sse <= best) { /* a tie goes to the earlier onset */
            best = sse;
            out->best = i;
            out->slope = (double)b;
            out->sse_hinge = (double)sse;
        }
    }
}

int trend_onset(const double *x, const double *y, size_t n, size_t min_after,
                trend_onset_result *out)
{
    *out = (trend_onset_result){ 0 };
    if (min_after < 3)
        min_after = 3;
    if (n < min_after)
        return 0;
    hinge_search(x, y, n, min_after, out);
    size_t k = out->best;
    if (k == 0 || out->slope <= 0 || !hinge_preferred(out->sse_hinge, out->sse_line, n))
        return 0;
    int flat = flat_before(y, k, out->slope * (x[n - 1] - x[k]));
    if (flat < 0)
        return -1;
    out->k = flat ? k : 0;
    return 0;
}
