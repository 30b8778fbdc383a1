/* trend.c - the trend statistics of memory series (formats/rules.md §2.6,
 * §2.7): growth tested as noise about a line or as a sum of increments,
 * whichever a unit-root test says the series is, each allowing for
 * correlated noise; and the onset of growth found by a hinge (flat, then
 * linear) fitted at every candidate in one pass. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "analysis/trend.h"

/* An orthonormal basis of constant, line and parabola over x (Gram-Schmidt),
 * held as the constants that give its members at each point rather than as
 * arrays: q1_i = (x_i - mean) / n1, q2_i = (q1_i^2 - (a0 c + a1 q1_i)) / n2,
 * c = 1 / sqrt(n). k is 3, or 2 when x has too few distinct values for a
 * parabola (then q2 is not used). */
typedef struct basis {
    const double *x;
    double mean, n1, a0, a1, n2, c;
    int k;
} basis;

static double q1_at(const basis *q, size_t i)
{
    return (q->x[i] - q->mean) / q->n1;
}

/* q2 before its normalisation */
static double q2_raw_at(const basis *q, size_t i)
{
    double q1 = q1_at(q, i);
    return q1 * q1 - (q->a0 * q->c + q->a1 * q1);
}

static double q_at(const basis *q, int which, size_t i)
{
    return which == 1 ? q1_at(q, i) : q2_raw_at(q, i) / q->n2;
}

/* sum_i sum_j u_i u_j phi^|i - j| in two passes, u basis member `which`:
 * sum_i u_i (F_i + B_i - u_i), F and B the u filtered forwards and
 * backwards with phi. */
static double ar1_form(const basis *q, int which, size_t n, double phi)
{
    double fwd = 0.0, bwd = 0.0, sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        double u = q_at(q, which, i);
        fwd = u + phi * fwd;
        sum += u * fwd;
    }
    for (size_t i = n; i-- > 0;) {
        double u = q_at(q, which, i);
        bwd = u + phi * bwd;
        sum += u * (bwd - u);
    }
    return sum;
}

/* The same for the constant 1/sqrt(n), in closed form. */
static double ar1_form_const(size_t n, double phi)
{
    double m = (double)n, geo = (1.0 - pow(phi, m)) / (1.0 - phi);
    return ((1.0 + phi) / (1.0 - phi) * m - 2.0 * phi * geo / (1.0 - phi)) / m;
}

static basis quadratic_basis(const double *x, size_t n)
{
    basis q = { .x = x, .c = 1.0 / sqrt((double)n), .n1 = 1.0, .n2 = 1.0, .k = 3 };
    for (size_t i = 0; i < n; i++)
        q.mean += x[i] / (double)n;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - q.mean) * (x[i] - q.mean);
    q.n1 = sqrt(ss);
    double a1 = 0.0, before = 0.0, a0 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double q1 = q1_at(&q, i);
        a1 += q1 * q1 * q1;
        before += q1 * q1 * (q1 * q1);
    }
    for (size_t i = 0; i < n; i++) {
        double q1 = q1_at(&q, i);
        a0 += q1 * q1 * q.c;
    }
    q.a0 = a0;
    q.a1 = a1;
    before = sqrt(before);
    double n2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double v = q2_raw_at(&q, i);
        n2 += v * v;
    }
    q.n2 = sqrt(n2);
    if (!(q.n2 > 1e-9 * before)) /* x^2 is a line in x: two distinct x */
        q.k = 2;
    return q;
}

/* The noise about the series' course (rules.md §2.6): residuals about the
 * least-squares parabola, so that a rate that changes slowly - steps that
 * slow down as a leak grows - counts as course, not as correlated noise.
 * Their lag-1 autocorrelation, corrected for its small-sample bias, is phi;
 * their variance, corrected for what the fit absorbs given phi
 * (E[SSE] = sigma^2 (n - tr(HR)), H the fit's projection, R the AR(1)
 * correlations), is sigma^2. Returns the slope's variance under that noise,
 * sigma^2 q1'Rq1 / Sxx, and sets *iid to its value were phi 0. */
static double noise_slope_variance(const double *x, const double *y, size_t n, double *r1,
                                   double *phi_out, double *iid)
{
    basis q = quadratic_basis(x, n);
    int k = q.k;
    double sy = 0.0, b1 = 0.0, b2 = 0.0;
    for (size_t i = 0; i < n; i++)
        b1 += q1_at(&q, i) * y[i];
    for (size_t i = 0; k == 3 && i < n; i++)
        b2 += q_at(&q, 2, i) * y[i];
    for (size_t i = 0; i < n; i++)
        sy += y[i] / (double)n;
    double sse = 0.0, lag = 0.0, prev = 0.0, sxx = 0.0, mean = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - sy - b1 * q1_at(&q, i) - (k == 3 ? b2 * q_at(&q, 2, i) : 0.0);
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
    double trace = ar1_form_const(n, phi) + ar1_form(&q, 1, n, phi) +
                   (k == 3 ? ar1_form(&q, 2, n, phi) : 0.0);
    double dof = (double)n - trace;
    return dof > 0 ? sse / dof * ar1_form(&q, 1, n, phi) / sxx : INFINITY;
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
    double iid, phi = 0.0;
    double var = noise_slope_variance(x, y, n, &out->r1, &phi, &iid);
    if (phi >= TREND_PHI_MAX)
        return 1;
    if (!(var > iid)) /* no more evidence than independent noise gives */
        var = iid;
    double n_eff = 2.0 + (double)(n - 2) * iid / var;
    out->n_eff = n_eff < 3.0 ? 3.0 : n_eff;
    retest(&out->fit, sqrt(var), out->n_eff - 2.0);
    return 0;
}

/* Least squares of v on [1, x] over i in [1, n): coefficients from sums.
 * v is the difference y_i - y_(i-1) (lag 0) or the lag y_(i-1) (lag 1),
 * read from y as it goes rather than written out. */
typedef struct on_line {
    double a, b;
} on_line;

static double df_term(const double *y, size_t i, int lag)
{
    return lag ? y[i - 1] : y[i] - y[i - 1];
}

static on_line fit_on_x(const double *x, const double *y, int lag, size_t n)
{
    double xm = 0.0, vm = 0.0, sxx = 0.0, sxv = 0.0, m = (double)(n - 1);
    for (size_t i = 1; i < n; i++) {
        xm += x[i] / m;
        vm += df_term(y, i, lag) / m;
    }
    for (size_t i = 1; i < n; i++) {
        sxx += (x[i] - xm) * (x[i] - xm);
        sxv += (x[i] - xm) * (df_term(y, i, lag) - vm);
    }
    double b = sxx > 0 ? sxv / sxx : 0.0;
    return (on_line){ vm - b * xm, b };
}

/* The Dickey-Fuller statistic with constant and trend: the t of g in
 * dy_i = a + b x_i + g y_(i-1) + e, by Frisch-Waugh - dy and y_(i-1) each
 * freed of [1, x], then one regressed on the other - so that it needs sums,
 * not a matrix, and no memory per point. */
static double dickey_fuller(const double *x, const double *y, size_t n)
{
    on_line fd = fit_on_x(x, y, 0, n), fl = fit_on_x(x, y, 1, n);
    double sdl = 0.0, sll = 0.0, sdd = 0.0;
    for (size_t i = 1; i < n; i++) {
        double dr = df_term(y, i, 0) - fd.a - fd.b * x[i];
        double lr = df_term(y, i, 1) - fl.a - fl.b * x[i];
        sdl += dr * lr;
        sll += lr * lr;
        sdd += dr * dr;
    }
    if (!(sll > 0))
        return 0.0;
    double g = sdl / sll, s2 = (sdd - g * sdl) / (double)(n - 4);
    return s2 > 0 ? g / sqrt(s2 / sll) : -INFINITY;
}

/* Increments: the growth per unit of x of a sum of increments whose
 * variance grows with the x they span (a random walk with drift: dy ~
 * b dx + sigma sqrt(dx) z), so b is the weighted least squares of dy on dx
 * through the origin with weights 1 / dx - the whole rise over the whole
 * span - and each residual counts standardised by sqrt(dx). Evenly spaced,
 * that is the plain least squares through the origin; unevenly, plain
 * least squares lets the longest intervals decide alone (a process off the
 * CPU for seconds, neither sampled nor growing, would read as no growth).
 * Tested with the effective number of increments when they are correlated
 * (a rate that wanders). The line is drawn through the means. */
static void increments(const double *x, const double *y, size_t n, trend_line *out)
{
    size_t m = n - 1;
    double span = x[n - 1] - x[0], swe = 0.0, lag = 0.0, prev = 0.0, xm = 0.0, ym = 0.0;
    double b = (y[n - 1] - y[0]) / span;
    for (size_t i = 1; i < n; i++) {
        double dx = x[i] - x[i - 1];
        if (!(dx > 0)) /* samples at one x: their increment is noise alone */
            dx = span / (double)m * 1e-3;
        double z = ((y[i] - y[i - 1]) - b * dx) / sqrt(dx);
        swe += z * z;
        lag += i > 1 ? prev * z : 0.0;
        prev = z;
    }
    for (size_t i = 0; i < n; i++) {
        xm += x[i] / (double)n;
        ym += y[i] / (double)n;
    }
    out->fit.slope = b;
    out->fit.intercept = ym - b * xm;
    out->r1 = swe > 0 ? lag / swe : 0.0;
    double n_eff = out->r1 > 0 ? (double)m * (1.0 - out->r1) / (1.0 + out->r1) : (double)m;
    n_eff = n_eff < 3.0 ? 3.0 : n_eff;
    out->n_eff = n_eff + 1.0; /* points: one more than increments */
    /* evenly spaced by d: swe / span = SSE / Sxx, the plain test's */
    retest(&out->fit, sqrt(swe / span / (n_eff - 1.0)), n_eff - 1.0);
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
    out->df_tau = dickey_fuller(x, y, n);
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
