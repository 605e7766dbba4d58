/* A verbs port's own counters, as the kernel exports them: one decimal per
 * file in /sys/class/infiniband/DEV/ports/PORT/hw_counters/ (rxe: packets
 * sent and received, retries, duplicate requests, sequence errors, RNR
 * NAKs; other drivers their own names).  The suite driver reads them
 * around a row's timed loop and the row says what changed
 * (dev_NAME=DELTA), so a Soft-RoCE session whose rows ran slow because the
 * guest's rxe retransmitted reads differently from one whose host was
 * busy.  The counters are the port's, not a process's: one rank per node
 * reads them. */
#ifndef IBC_DEVCOUNT_H
#define IBC_DEVCOUNT_H

#include <stddef.h>
#include <stdint.h>

#define IBC_DEVCOUNT_ROOT "/sys/class/infiniband"
#define IBC_DEVCOUNT_MAX 48   /* counters kept of a port (rxe has 16) */
#define IBC_DEVCOUNT_NAME 48  /* a counter's name, with its NUL */
#define IBC_DEVCOUNT_TEXT 1024 /* a row's dev_ keys */

struct ibc_devcount {
	char dir[512];
	size_t n;
	char name[IBC_DEVCOUNT_MAX][IBC_DEVCOUNT_NAME]; /* sorted */
};

/* The counters of device "DEV:PORT" (ibc_xport_caps.device) under root
 * (IBC_DEVCOUNT_ROOT; tests give a directory of their own): every file of
 * the port's hw_counters that holds a decimal, but lifespan (a setting of
 * rxe's, not a count).  IBC_OK; IBC_ERR_UNSUPPORTED when the port has no
 * such directory or no counter in it (shm; a driver without them);
 * IBC_ERR_INVAL for a device without ":PORT". */
int ibc_devcount_open(struct ibc_devcount *d, const char *root, const char *device);

/* vals[i] = counter name[i] now.  IBC_ERR_IO when one cannot be read. */
int ibc_devcount_read(const struct ibc_devcount *d, uint64_t *vals);

/* "dev_NAME=DELTA;..." of the counters that moved from before to after
 * (after - before, in name order); "" when none did. */
void ibc_devcount_format(const struct ibc_devcount *d, const uint64_t *before, const uint64_t *after,
			 char *buf, size_t cap);

/* n texts of ibc_devcount_format, stride bytes apart (one per rank; "" for
 * a rank that read none), as one: each key once, its deltas summed, keys in
 * the order first seen.  A malformed part is skipped. */
void ibc_devcount_merge(const char *texts, size_t stride, int n, char *buf, size_t cap);

#endif
