/* The LoP closed loop's cost of a collective (private to impl/logp): an
 * algorithm's rounds (impl/pattern, through its family's table) summed by
 * three models from the fitted kernels (logp_fits.h), each round's copies
 * and writes into user memory added to every model; logp_model.c tables
 * and prints what this costs.  docs/model.md, "How ibchar composes it". */
#ifndef IBC_LOGP_COST_H
#define IBC_LOGP_COST_H

#include "logp/logp_fits.h"
#include "logp/logp_model.h"

#include <stddef.h>

enum { M_LOP, M_LRTT, M_LOGGP, NMOD };

/* the kernels whose rows the model says it costs a term by (terms_say) */
#define MC_KERNEL "rtt-mcast"
#define MC_BACK "rtt-write-1n"
#define XCHG_WRITE "xchg-write"
#define XCHG_POOL "xchg-pool"
#define XCHG_BLOCKS "xchg-write-readout-flag"
#define CP_FLAG "copy-peer-flag"

struct pred {
	double v[NMOD];         /* guarded: NAN = no prediction */
	const char *why[NMOD];  /* NULL, or why there is no prediction */
	unsigned notes;
	int rounds;
	double copy_us;         /* the copy term in every model; NAN: not costed */
	double user_us;         /* the writes into user memory, likewise */
};

/* The three models over the rounds of (fam, variant) on n ranks, messages
 * of up to eager bytes eager; each round's copies and writes into user
 * memory added to every model.  Every value leaves through one gate: one
 * that is not finite, or is <= 0, or sums a round of messages <= 0, is NAN
 * with why (the rows, the extrapolation and the fan-in all come through
 * here). */
int ibc_logp_predict(const struct ibc_logp_params *pr, const struct ibc_logp_family *fam,
		     const char *variant, const char *xport, int n, long fanin, size_t bytes,
		     size_t eager, struct pred *out);

/* a prediction's notes (and oversub) as the note column: names joined by ';' */
void ibc_logp_notes_fmt(unsigned n, int oversub, char *b, size_t cap);

#endif
