/* Placement: the kernels' and each row's (logp_place.h). */
#include "logp/logp_place.h"

#include "core/csv.h"
#include "core/status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int apart(double a, double b)
{
	return a > 0 && b > 0 && fmax(a, b) > IBC_LOGP_PLACE_FACTOR * fmin(a, b);
}

/* meta.csv's sections, one per suite's run: a run whose probe at its end
 * is another placement than at its start */
static void meta_load(struct ibc_logp_place *pl, const char *dir)
{
	struct ibc_csv_table *t = NULL;
	char path[4200], suite[16] = "";
	double start = NAN;
	size_t r;

	snprintf(path, sizeof(path), "%s/meta.csv", dir);
	if (access(path, R_OK) != 0 || ibc_csv_read(path, &t) != IBC_OK)
		return;   /* none: nothing known of the runs' ends */
	for (r = 0; r + 1 < t->nrows; r++) {
		const char *k = ibc_csv_str(t, r, "key"), *v = ibc_csv_str(t, r, "value");

		if (strcmp(k, "suite") == 0) {
			snprintf(suite, sizeof(suite), "%s", v);
			start = NAN;
		} else if (strcmp(k, "probe_start_us") == 0) {
			start = *v ? strtod(v, NULL) : NAN;
		} else if (strcmp(k, "probe_end_us") == 0 && *v && apart(start, strtod(v, NULL)) &&
			   pl->nmoved < IBC_LOGP_PLACE_MAX) {
			snprintf(pl->moved[pl->nmoved].suite, sizeof(pl->moved[0].suite), "%s", suite);
			pl->moved[pl->nmoved].start = start;
			pl->moved[pl->nmoved++].end = strtod(v, NULL);
		}
	}
	ibc_csv_table_free(t);
}

void ibc_logp_place_load(struct ibc_logp_place *pl, const struct ibc_csv_table *t,
			 const char *dir, const char *fits_dir)
{
	int other = fits_dir != NULL && strcmp(fits_dir, dir) != 0;
	struct ibc_csv_table *own = NULL;
	const struct ibc_csv_table *kt = t;
	char path[4200];
	size_t r;
	int i;

	memset(pl, 0, sizeof(*pl));
	if (other) {
		snprintf(path, sizeof(path), "%s/results.csv", fits_dir);
		kt = access(path, R_OK) == 0 && ibc_csv_read(path, &own) == IBC_OK ? own : NULL;
	}
	for (r = 0; kt != NULL && r + 1 < kt->nrows; r++) {
		const char *x = ibc_csv_str(kt, r, "xport");
		double p = ibc_csv_num(kt, r, "probe_us");

		if (strcmp(ibc_csv_str(kt, r, "suite"), "logp") != 0 || !(p > 0))
			continue;
		for (i = 0; i < pl->nk && strcmp(pl->k[i].xport, x) != 0; i++)
			;
		if (i == pl->nk) {
			if (pl->nk == IBC_LOGP_PLACE_MAX)
				continue;
			snprintf(pl->k[i].xport, sizeof(pl->k[i].xport), "%s", x);
			pl->k[i].lo = pl->k[i].hi = p;
			pl->nk++;
		}
		pl->k[i].lo = fmin(pl->k[i].lo, p);
		pl->k[i].hi = fmax(pl->k[i].hi, p);
	}
	if (own != NULL)
		ibc_csv_table_free(own);
	meta_load(pl, dir);
	if (other)
		meta_load(pl, fits_dir);
}

const char *ibc_logp_place_check(const struct ibc_logp_place *pl, const char *suite,
				 const char *xport, double probe_us, char *b, size_t cap)
{
	int i;

	for (i = 0; i < pl->nmoved; i++) {
		int kernels = strcmp(pl->moved[i].suite, "logp") == 0;

		if (kernels || strcmp(pl->moved[i].suite, suite) == 0) {
			snprintf(b, cap, "not modelled (placement: the probe moved during %s run, "
				 "%.3f -> %.3f us)", kernels ? "the kernels'" : "this row's",
				 pl->moved[i].start, pl->moved[i].end);
			return b;
		}
	}
	for (i = 0; i < pl->nk && strcmp(pl->k[i].xport, xport) != 0; i++)
		;
	if (i == pl->nk || !(probe_us > 0))
		return NULL;
	if (apart(pl->k[i].lo, pl->k[i].hi)) {
		snprintf(b, cap, "not modelled (placement: the kernels were measured at two, probe "
			 "%.3f and %.3f us)", pl->k[i].lo, pl->k[i].hi);
		return b;
	}
	if (apart(probe_us, pl->k[i].lo) || apart(probe_us, pl->k[i].hi)) {
		snprintf(b, cap, "not modelled (placement: this row's probe %.3f us, the kernels' "
			 "%.3f us)", probe_us, pl->k[i].lo);
		return b;
	}
	return NULL;
}

void ibc_logp_place_say(const struct ibc_logp_place *pl, FILE *out)
{
	int i;

	fprintf(out, "placement: the kernels' probe");
	for (i = 0; i < pl->nk; i++)
		fprintf(out, "%s %s %.3f", i ? "," : "", pl->k[i].xport, pl->k[i].lo);
	if (pl->nk == 0)
		fprintf(out, " unknown");
	else
		fprintf(out, " us; a row whose probe is more than %gx from it is not modelled",
			IBC_LOGP_PLACE_FACTOR);
	for (i = 0; i < pl->nmoved; i++)
		fprintf(out, "; the %s run's probe moved %.3f -> %.3f us", pl->moved[i].suite,
			pl->moved[i].start, pl->moved[i].end);
	fprintf(out, "\n");
}
