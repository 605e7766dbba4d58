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

/* meta.csv: one section per run (from its key bench), each key written
 * when it differs from the section before (meta.c); a run not
 * oversubscribed whose probe at its end is another placement than at its
 * start */
static void meta_load(struct ibc_logp_place *pl, const char *dir)
{
	struct ibc_csv_table *t = NULL;
	char path[4200], suite[16] = "";
	double start = NAN;
	int ranks = 0, over = 0;
	size_t r;

	snprintf(path, sizeof(path), "%s/meta.csv", dir);
	if (access(path, R_OK) != 0 || ibc_csv_read(path, &t) != IBC_OK)
		return;   /* none: nothing known of the runs' ends */
	for (r = 0; r + 1 < t->nrows; r++) {
		const char *k = ibc_csv_str(t, r, "key"), *v = ibc_csv_str(t, r, "value");

		if (strcmp(k, "bench") == 0)
			start = NAN;
		else if (strcmp(k, "suite") == 0)
			snprintf(suite, sizeof(suite), "%s", v);
		else if (strcmp(k, "ranks") == 0)
			ranks = atoi(v);
		else if (strcmp(k, "oversubscribed") == 0)
			over = strcmp(v, "1") == 0;
		else if (strcmp(k, "probe_start_us") == 0)
			start = *v ? strtod(v, NULL) : NAN;
		else if (strcmp(k, "probe_end_us") == 0 && *v && !over &&
			 apart(start, strtod(v, NULL)) && pl->nmoved < IBC_LOGP_PLACE_MAX) {
			snprintf(pl->moved[pl->nmoved].suite, sizeof(pl->moved[0].suite), "%s", suite);
			pl->moved[pl->nmoved].ranks = ranks;
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
		int n = ibc_csv_int(kt, r, "ranks");

		if (strcmp(ibc_csv_str(kt, r, "suite"), "logp") != 0 || !(p > 0) ||
		    strcmp(ibc_csv_str(kt, r, "oversub"), "1") == 0)
			continue;
		for (i = 0; i < pl->nk && (strcmp(pl->k[i].xport, x) != 0 || pl->k[i].ranks != n); i++)
			;
		if (i == pl->nk) {
			if (pl->nk == IBC_LOGP_PLACE_MAX)
				continue;
			snprintf(pl->k[i].xport, sizeof(pl->k[i].xport), "%s", x);
			pl->k[i].ranks = n;
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
				 const char *xport, int ranks, double probe_us, char *b, size_t cap)
{
	double lo = INFINITY, hi = 0;
	int i, at_n = 0;

	for (i = 0; i < pl->nmoved; i++) {
		int kernels = strcmp(pl->moved[i].suite, "logp") == 0;

		if ((pl->moved[i].ranks == 0 || pl->moved[i].ranks == ranks) &&
		    (kernels || strcmp(pl->moved[i].suite, suite) == 0)) {
			snprintf(b, cap, "not modelled (placement: the probe moved during %s run, "
				 "%.3f -> %.3f us)", kernels ? "the kernels'" : "this row's",
				 pl->moved[i].start, pl->moved[i].end);
			return b;
		}
	}
	/* the kernels at this N when there are any, else at every N */
	for (i = 0; i < pl->nk; i++)
		at_n |= strcmp(pl->k[i].xport, xport) == 0 && pl->k[i].ranks == ranks;
	for (i = 0; i < pl->nk; i++)
		if (strcmp(pl->k[i].xport, xport) == 0 && (!at_n || pl->k[i].ranks == ranks)) {
			lo = fmin(lo, pl->k[i].lo);
			hi = fmax(hi, pl->k[i].hi);
		}
	if (!(hi > 0) || !(probe_us > 0))
		return NULL;
	if (apart(lo, hi)) {
		snprintf(b, cap, "not modelled (placement: the kernels were measured at two, probe "
			 "%.3f and %.3f us)", lo, hi);
		return b;
	}
	if (apart(probe_us, lo) || apart(probe_us, hi)) {
		snprintf(b, cap, "not modelled (placement: this row's probe %.3f us, the kernels' "
			 "%.3f us)", probe_us, lo);
		return b;
	}
	return NULL;
}

void ibc_logp_place_say(const struct ibc_logp_place *pl, FILE *out)
{
	int i;

	fprintf(out, "placement: the kernels' probe");
	for (i = 0; i < pl->nk; i++)
		fprintf(out, "%s %s %.3f us at N = %d", i ? "," : "", pl->k[i].xport, pl->k[i].lo,
			pl->k[i].ranks);
	if (pl->nk == 0)
		fprintf(out, " unknown");
	else
		fprintf(out, "; a row whose probe is more than %gx from its N's (oversubscribed runs "
			"left out) is not modelled", IBC_LOGP_PLACE_FACTOR);
	for (i = 0; i < pl->nmoved; i++)
		fprintf(out, "; the %s run's probe moved %.3f -> %.3f us", pl->moved[i].suite,
			pl->moved[i].start, pl->moved[i].end);
	fprintf(out, "\n");
}
