/* Where each rank is, for the runner that launched it.
 *
 * `ibchar run` makes a file of one record per rank and names it in
 * IBC_PROGRESS; each rank maps its own record (the first time it enters a
 * bootstrap collective) and stores there, with plain stores, which
 * bootstrap collective it is in and which step of which point it is at.
 * When a launch writes no row until its deadline, the runner reads the
 * records and names the ranks that did not answer: those that never
 * entered the bootstrap collective the others wait in (the rule the tree
 * launcher's agents apply to the ranks they hold).  Nothing is written
 * without IBC_PROGRESS, or when the rank's host does not see the file (the
 * runner puts it in the run's directory, shared on a cluster): a rank
 * without a record is named as such.  A record is read while its rank may
 * still write it; it says where a rank was, not a protocol. */
#ifndef IBC_CORE_PROGRESS_H
#define IBC_CORE_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#define IBC_PROGRESS_MAGIC 0x69626370u /* "ibcp" */

struct ibc_progress_rec {
	uint32_t magic;    /* IBC_PROGRESS_MAGIC once the rank has written it */
	int32_t pid;
	uint32_t coll_in;  /* bootstrap collectives entered */
	uint32_t coll_out; /* ... and left: in one while coll_in != coll_out */
	uint32_t point;    /* points begun (one per point of the sweep) */
	uint32_t bytes;    /* the point's message size */
	char coll[16];     /* the last bootstrap collective entered */
	char step[16];     /* "setup", "warm-up", "measure", "validate", "extra phase"
			    * (the back-to-back loop, counters), "gather" */
	char variant[32];  /* the step's variant, or "N variants" */
	char host[40];
};
_Static_assert(sizeof(struct ibc_progress_rec) == 128, "a record is 128 bytes");

/* The rank enters the bootstrap collective op; ... and leaves it, with rc
 * its status, returned. */
void ibc_progress_in(int rank, const char *op);
int ibc_progress_out(int rc);

/* The rank began step of a point (point: 1, 2, ... in sweep order). */
void ibc_progress_step(unsigned point, const char *variant, size_t bytes, const char *step);

/* The runner's side: makes path (mode 0600) with n zeroed records.
 * IBC_OK or IBC_ERR_IO, logged. */
int ibc_progress_create(const char *path, int n);

/* Writes into out (cap bytes) who did not answer, from the n records of
 * path, in one or more lines each starting with prefix; returns the number
 * of ranks named as not answering (0: none could be told apart; out then
 * says where each rank was), -1 when path cannot be read (out empty). */
int ibc_progress_blame(const char *path, int n, const char *prefix, char *out, size_t cap);

#endif
