/* Status codes shared by every ibchar module.  IBC_OK is 0, errors are
 * negative; IBC_ERR_UNSUPPORTED is distinct so callers can skip, not fail. */
#ifndef IBC_CORE_STATUS_H
#define IBC_CORE_STATUS_H

typedef enum ibc_status {
	IBC_OK = 0,
	IBC_ERR_INVAL = -1,       /* bad argument, option or input */
	IBC_ERR_NOMEM = -2,       /* allocation failed */
	IBC_ERR_SYS = -3,         /* a system call failed (errno was logged) */
	IBC_ERR_IO = -4,          /* read/write of a file or stream failed */
	IBC_ERR_UNSUPPORTED = -5, /* not supported by this backend or device */
	IBC_ERR_TIMEOUT = -6,     /* gave up waiting */
	IBC_ERR_PROTO = -7,       /* a peer broke a protocol (malformed message) */
	IBC_ERR_NOTFOUND = -8,    /* no such name, device, key or file */
	IBC_ERR_REMOTE = -9,      /* error completion or failure reported by a peer */
	IBC_ERR_AGAIN = -10,      /* nothing ready yet / queue full: try again */
	IBC_ERR_CLOSED = -11,     /* the peer or the connection went away */
	IBC_ERR_VALIDATE = -12,   /* a correctness check failed */
	IBC_ERR_INTERRUPTED = -13 /* stopped by a signal or a job abort */
} ibc_status_t;

/* A short readable name for s ("invalid argument", ...); never NULL. */
const char *ibc_status_str(ibc_status_t s);

/* The exit status a main() returns for s: 0 ok, 2 bad input/usage,
 * 77 unsupported (skip), 1 anything else. */
int ibc_status_exit_code(ibc_status_t s);

#endif
