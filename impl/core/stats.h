/* Statistics of a sample vector, in floating point.  Quantiles use linear
 * interpolation between order statistics (the median of an even count is the
 * mean of the two middle values); stdev is the sample standard deviation
 * (n - 1; 0 for one sample); the 95% confidence interval of the median comes
 * from order statistics: ranks floor((n - 1.96 sqrt(n)) / 2) and
 * ceil(1 + (n + 1.96 sqrt(n)) / 2), 1-based, clamped to [1, n]. */
#ifndef IBC_CORE_STATS_H
#define IBC_CORE_STATS_H

#include <stddef.h>

struct ibc_stats {
	size_t n;
	double min, p50, mean, p99, max, stdev;
	double ci_lo, ci_hi;
};

/* Summarises n >= 1 samples; the input is not modified.  IBC_ERR_INVAL for
 * n == 0 or a NaN sample, IBC_ERR_NOMEM when the copy fails. */
int ibc_stats_compute(const double *samples, size_t n, struct ibc_stats *out);
/* The same on samples the caller lets it sort in place. */
int ibc_stats_compute_inplace(double *samples, size_t n, struct ibc_stats *out);
/* Quantile q in [0, 1] of an ascending array (linear interpolation). */
double ibc_stats_quantile_sorted(const double *sorted, size_t n, double q);
void ibc_stats_sort(double *v, size_t n);
/* Ordinary least squares y = a + b x through n >= 2 points with distinct x:
 * *a, *b, and *resid (may be NULL) = the residuals' standard deviation
 * (n - 2 degrees of freedom; 0 for two points).  IBC_ERR_INVAL otherwise. */
int ibc_stats_line_fit(const double *x, const double *y, size_t n, double *a, double *b,
		       double *resid);

#endif
