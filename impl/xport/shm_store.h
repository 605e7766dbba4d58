/* The shm transport's store into mapped memory (shm_store, inline: every
 * write, send and copy into a peer's segment goes through it) and its torn
 * test mode (shm_store.c).  Private to impl/xport/{xport_shm,shm_*}.c. */
#ifndef IBC_XPORT_SHM_STORE_H
#define IBC_XPORT_SHM_STORE_H

#include <stdint.h>
#include <string.h>

/* IBCHAR_SHM_TORN=1 (read at open): every write is stored a byte at a time,
 * lowest address first, with a pause between the bytes of a short one, as
 * Soft-RoCE places a write (xport.h: words may be read torn).  A test mode:
 * make check runs the channel test so, which a reader that trusts one read of
 * a growing word fails. */
extern int ibc_xport_shm_torn;
void ibc_xport_shm_store_torn(char *d, const void *src, uint64_t len);

/* One contiguous store of len bytes into mapped memory.  When the write ends
 * on an 8-byte boundary its last word is stored last, untorn, with release
 * (xport.h: a reader that polls a write's last word sees the rest of it, as
 * on an RDMA device that places a write's bytes in order); an aligned 8-byte
 * write is that one store. */
static inline void shm_store(char *d, const void *src, uint64_t len)
{
	if (__builtin_expect(ibc_xport_shm_torn, 0)) {
		ibc_xport_shm_store_torn(d, src, len);
		return;
	}
	if (len >= 8 && (((uintptr_t)d + len) & 7) == 0) {
		uint64_t v;

		if (len <= 64 && (len & 7) == 0) {
			/* a short write of whole words (a channel record, a flag):
			 * word stores, no call */
			for (uint64_t i = 0; i + 8 < len; i += 8) {
				memcpy(&v, (const char *)src + i, 8);
				memcpy(d + i, &v, 8);
			}
		} else {
			memcpy(d, src, len - 8);
		}
		memcpy(&v, (const char *)src + len - 8, 8);
		__atomic_store_n((uint64_t *)(void *)(d + len - 8), v, __ATOMIC_RELEASE);
		return;
	}
	memcpy(d, src, len);
}

#endif
