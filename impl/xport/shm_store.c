/* The shm transport's torn store (shm_store.h): IBCHAR_SHM_TORN=1 makes
 * every store into mapped memory go a byte at a time, as Soft-RoCE places a
 * write. */
#include "xport/shm_store.h"

#include "core/timer.h"

int ibc_xport_shm_torn;

void ibc_xport_shm_store_torn(char *d, const void *src, uint64_t len)
{
	const unsigned char *s = src;
	uint64_t i;

	for (i = 0; i < len; i++) {
		__atomic_store_n((unsigned char *)d + i, s[i], __ATOMIC_RELEASE);
		if (len <= 16)   /* a window a reader on another PU can fall into */
			ibc_timer_spin_us(0.3);
	}
}
