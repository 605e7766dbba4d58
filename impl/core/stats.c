/* Sample statistics: see stats.h for the exact definitions. */
#include "core/stats.h"
#include "core/log.h"
#include "core/status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void ibc_stats_sort(double *v, size_t n)
{
	if (v && n > 1)
		qsort(v, n, sizeof(*v), cmp_double);
}

double ibc_stats_quantile_sorted(const double *sorted, size_t n, double q)
{
	double pos, frac;
	size_t lo;

	if (!sorted || n == 0 || isnan(q))
		return NAN;
	if (q <= 0.0)
		return sorted[0];
	if (q >= 1.0)
		return sorted[n - 1];
	pos = q * (double)(n - 1);
	lo = (size_t)floor(pos);
	if (lo >= n - 1)
		return sorted[n - 1];
	frac = pos - (double)lo;
	if (frac == 0.0)
		return sorted[lo];
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/* 1-based rank clamped to [1, n], returned 0-based. */
static size_t rank_index(double rank, size_t n)
{
	if (rank < 1.0)
		return 0;
	if (rank > (double)n)
		return n - 1;
	return (size_t)rank - 1;
}

int ibc_stats_compute_inplace(double *samples, size_t n, struct ibc_stats *out)
{
	double sum = 0.0, ss = 0.0, mean, half;

	if (!samples || !out || n == 0) {
		ibc_error("stats: no samples");
		return IBC_ERR_INVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (isnan(samples[i])) {
			ibc_error("stats: sample %zu of %zu is NaN", i, n);
			return IBC_ERR_INVAL;
		}
	}
	ibc_stats_sort(samples, n);

	for (size_t i = 0; i < n; i++)
		sum += samples[i];
	mean = sum / (double)n;
	for (size_t i = 0; i < n; i++) {
		double d = samples[i] - mean;

		ss += d * d;
	}

	memset(out, 0, sizeof(*out));
	out->n = n;
	out->min = samples[0];
	out->max = samples[n - 1];
	out->mean = mean;
	out->p50 = ibc_stats_quantile_sorted(samples, n, 0.5);
	out->p99 = ibc_stats_quantile_sorted(samples, n, 0.99);
	out->stdev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;

	/* 95% CI of the median from order statistics (binomial, normal approx.) */
	half = 1.96 * sqrt((double)n);
	out->ci_lo = samples[rank_index(floor(((double)n - half) / 2.0), n)];
	out->ci_hi = samples[rank_index(ceil(1.0 + ((double)n + half) / 2.0), n)];
	return IBC_OK;
}

int ibc_stats_compute(const double *samples, size_t n, struct ibc_stats *out)
{
	double *copy;
	int status;

	if (!samples || !out || n == 0) {
		ibc_error("stats: no samples");
		return IBC_ERR_INVAL;
	}
	copy = malloc(n * sizeof(*copy));
	if (!copy) {
		ibc_error("stats: cannot copy %zu samples", n);
		return IBC_ERR_NOMEM;
	}
	memcpy(copy, samples, n * sizeof(*copy));
	status = ibc_stats_compute_inplace(copy, n, out);
	free(copy);
	return status;
}

int ibc_stats_line_fit(const double *x, const double *y, size_t n, double *a, double *b,
		       double *resid)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, ss = 0;
	size_t i;

	if (n < 2)
		return IBC_ERR_INVAL;
	for (i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
	}
	if (!(sxx > 0))
		return IBC_ERR_INVAL;
	*b = sxy / sxx;
	*a = my - *b * mx;
	for (i = 0; i < n; i++) {
		double e = y[i] - (*a + *b * x[i]);

		ss += e * e;
	}
	if (resid)
		*resid = n > 2 ? sqrt(ss / (double)(n - 2)) : 0;
	return IBC_OK;
}
