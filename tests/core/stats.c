/* Statistics against hand-computed vectors (definitions in core/stats.h). */
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "tap.h"

#include <math.h>
#include <string.h>

#define EPS 1e-9

static void check(const char *name, const double *v, size_t n, double min, double p50,
		  double mean, double p99, double max, double stdev, double ci_lo, double ci_hi)
{
	struct ibc_stats s;
	int rc = ibc_stats_compute(v, n, &s);

	tap_is_int(rc, IBC_OK, "%s: compute ok", name);
	tap_is_int((long long)s.n, (long long)n, "%s: n", name);
	tap_is_double_within(s.min, min, EPS, "%s: min", name);
	tap_is_double_within(s.p50, p50, EPS, "%s: median", name);
	tap_is_double_within(s.mean, mean, EPS, "%s: mean", name);
	tap_is_double_within(s.p99, p99, EPS, "%s: p99", name);
	tap_is_double_within(s.max, max, EPS, "%s: max", name);
	tap_is_double_within(s.stdev, stdev, 1e-7, "%s: stdev", name);
	tap_is_double_within(s.ci_lo, ci_lo, EPS, "%s: ci_lo", name);
	tap_is_double_within(s.ci_hi, ci_hi, EPS, "%s: ci_hi", name);
}

/* the line fit: an exact line, a noisy one with known residuals, bad input */
static void test_line_fit(void)
{
	double x[] = { 1, 2, 3, 4 }, y[] = { 5, 7, 9, 11 }, yn[] = { 5.1, 6.9, 9.1, 10.9 };
	double same[] = { 2, 2, 2 }, a = 0, b = 0, r = -1;

	tap_is_int(ibc_stats_line_fit(x, y, 4, &a, &b, &r), IBC_OK, "line fit: ok");
	tap_is_double_within(a, 3, 1e-12, "line fit: intercept 3");
	tap_is_double_within(b, 2, 1e-12, "line fit: slope 2");
	tap_is_double_within(r, 0, 1e-12, "line fit: no residual");
	ibc_stats_line_fit(x, yn, 4, &a, &b, &r);
	tap_is_double_within(b, 1.96, 1e-12, "line fit: noisy slope 1.96");
	tap_is_double_within(a, 3.1, 1e-12, "line fit: noisy intercept 3.1");
	tap_is_double_within(r, sqrt(0.032 / 2), 1e-12, "line fit: residual sd over n - 2");
	tap_is_int(ibc_stats_line_fit(same, y, 3, &a, &b, NULL), IBC_ERR_INVAL,
		   "line fit: equal x refused");
	tap_is_int(ibc_stats_line_fit(x, y, 1, &a, &b, NULL), IBC_ERR_INVAL,
		   "line fit: one point refused");
}

int main(void)
{
	static double big[1000];
	double odd[] = { 5, 1, 3, 2, 4 };
	double odd_copy[5];
	double even[] = { 4, 1, 3, 2 };
	double dup[] = { 7, 2, 9, 2, 7, 2 };
	double one[] = { 3.5 };
	double two[] = { 8, 6 };
	double ten[] = { 7, 3, 10, 1, 5, 9, 2, 8, 4, 6 };
	double neg[] = { -1.5, 0, 1.5 };
	double sorted[] = { 1, 2, 3, 4, 5 };
	double bad[] = { 1, NAN, 3 };
	double inplace[] = { 3, 1, 2 };
	struct ibc_stats s;

	tap_plan_none();
	ibc_log_level_set(IBC_LOG_NONE); /* the rejected inputs log an error */

	/* odd length: 1..5; p99 at position 0.99*4 = 3.96 -> 4 + 0.96;
	 * stdev = sqrt(10/4); CI ranks floor(0.31)=0 -> 1 and ceil(5.69)=6 -> 5 */
	memcpy(odd_copy, odd, sizeof(odd));
	check("odd", odd, 5, 1, 3, 3, 4.96, 5, 1.5811388300841898, 1, 5);
	tap_ok(memcmp(odd, odd_copy, sizeof(odd)) == 0, "odd: input left unsorted");

	/* even length: median = mean of 2 and 3; p99 at 2.97 -> 3.97; stdev = sqrt(5/3) */
	check("even", even, 4, 1, 2.5, 2.5, 3.97, 4, 1.2909944487358056, 1, 4);

	/* duplicates: 2 2 2 7 7 9; median (2+7)/2; mean 29/6; p99 at 4.95 -> 7 + 0.95*2 */
	check("duplicates", dup, 6, 2, 4.5, 29.0 / 6.0, 8.9, 9, 3.1885210782848317, 2, 9);

	/* one sample: everything is the sample, stdev 0 */
	check("one", one, 1, 3.5, 3.5, 3.5, 3.5, 3.5, 0, 3.5, 3.5);

	/* two samples: p99 at 0.99 -> 6 + 0.99*2; stdev sqrt(2) */
	check("two", two, 2, 6, 7, 7, 7.98, 8, 1.4142135623730951, 6, 8);

	/* n = 10 (1..10): CI ranks floor((10-6.198)/2)=1, ceil(1+16.198/2)=10 */
	check("n=10", ten, 10, 1, 5.5, 5.5, 9.91, 10, 3.0276503540974917, 1, 10);

	/* n = 100 (100..1, reversed): CI ranks floor(80.4/2)=40, ceil(1+119.6/2)=61;
	 * p99 at 0.99*99 = 98.01 -> 99.01; stdev = sqrt(100*101/12) */
	for (int i = 0; i < 100; i++)
		big[i] = 100 - i;
	check("n=100", big, 100, 1, 50.5, 50.5, 99.01, 100, 29.011491975882016, 40, 61);

	/* n = 1000 (1..1000): CI ranks floor((1000-61.98)/2)=469, ceil(1+1061.98/2)=532 */
	for (int i = 0; i < 1000; i++)
		big[i] = i + 1;
	check("n=1000", big, 1000, 1, 500.5, 500.5, 990.01, 1000, 288.8194360957494, 469, 532);

	/* negative values and zero */
	check("negative", neg, 3, -1.5, 0, 0, 1.47, 1.5, 1.5, -1.5, 1.5);

	/* quantiles of a sorted array */
	tap_is_double_within(ibc_stats_quantile_sorted(sorted, 5, 0.0), 1, EPS, "quantile 0");
	tap_is_double_within(ibc_stats_quantile_sorted(sorted, 5, 1.0), 5, EPS, "quantile 1");
	tap_is_double_within(ibc_stats_quantile_sorted(sorted, 5, 0.25), 2, EPS, "quantile 0.25");
	tap_is_double_within(ibc_stats_quantile_sorted(sorted, 5, 0.1), 1.4, EPS, "quantile 0.1");
	tap_ok(isnan(ibc_stats_quantile_sorted(sorted, 0, 0.5)), "quantile of nothing is NaN");

	/* in place: sorts the caller's array */
	tap_is_int(ibc_stats_compute_inplace(inplace, 3, &s), IBC_OK, "inplace ok");
	tap_ok(inplace[0] == 1 && inplace[1] == 2 && inplace[2] == 3, "inplace sorted the input");
	tap_is_double_within(s.p50, 2, EPS, "inplace median");

	/* rejected input */
	tap_is_int(ibc_stats_compute(bad, 3, &s), IBC_ERR_INVAL, "NaN sample rejected");
	tap_is_int(ibc_stats_compute(odd, 0, &s), IBC_ERR_INVAL, "n = 0 rejected");
	tap_is_int(ibc_stats_compute_inplace(bad, 3, &s), IBC_ERR_INVAL, "NaN rejected in place");

	/* sort helper */
	{
		double v[] = { 3, -1, 2, 2, 0 };

		ibc_stats_sort(v, 5);
		tap_ok(v[0] == -1 && v[1] == 0 && v[2] == 2 && v[3] == 2 && v[4] == 3,
		       "ibc_stats_sort ascending");
	}
	test_line_fit();
	return tap_done();
}
