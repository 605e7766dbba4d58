#include "core/status.h"

const char *ibc_status_str(ibc_status_t s)
{
	switch (s) {
	case IBC_OK: return "ok";
	case IBC_ERR_INVAL: return "invalid argument";
	case IBC_ERR_NOMEM: return "out of memory";
	case IBC_ERR_SYS: return "system call failed";
	case IBC_ERR_IO: return "input/output error";
	case IBC_ERR_UNSUPPORTED: return "not supported";
	case IBC_ERR_TIMEOUT: return "timed out";
	case IBC_ERR_PROTO: return "protocol error";
	case IBC_ERR_NOTFOUND: return "not found";
	case IBC_ERR_REMOTE: return "remote error";
	case IBC_ERR_AGAIN: return "try again";
	case IBC_ERR_CLOSED: return "connection closed";
	case IBC_ERR_VALIDATE: return "validation failed";
	case IBC_ERR_INTERRUPTED: return "interrupted";
	}
	return "unknown status";
}

int ibc_status_exit_code(ibc_status_t s)
{
	switch (s) {
	case IBC_OK: return 0;
	case IBC_ERR_INVAL: return 2;
	case IBC_ERR_UNSUPPORTED: return 77;
	default: return 1;
	}
}
