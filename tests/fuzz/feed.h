/* A thread that writes a fuzz input into one end of a socketpair, so a
 * client reading the other end gets it as a peer's replies and then end of
 * file (never a hang); the client's own writes go unread. */
#ifndef IBC_FUZZ_FEED_H
#define IBC_FUZZ_FEED_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

struct fuzz_feed {
	int sv[2];   /* sv[0]: the client's end; sv[1]: the feeder's */
	const uint8_t *data;
	size_t size;
	pthread_t t;
};

static void *fuzz_feeder(void *arg)
{
	struct fuzz_feed *f = arg;
	size_t off = 0;

	while (off < f->size) {
		ssize_t w = send(f->sv[1], f->data + off, f->size - off, MSG_NOSIGNAL);

		if (w <= 0)
			break;
		off += (size_t)w;
	}
	shutdown(f->sv[1], SHUT_WR);
	return NULL;
}

static inline void fuzz_feed_start(struct fuzz_feed *f, const uint8_t *data, size_t size)
{
	f->data = data;
	f->size = size;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, f->sv) != 0 || pthread_create(&f->t, NULL, fuzz_feeder, f) != 0)
		abort();
}

/* after the client closed or gave up on sv[0] */
static inline void fuzz_feed_end(struct fuzz_feed *f)
{
	shutdown(f->sv[1], SHUT_RD);
	pthread_join(f->t, NULL);
	close(f->sv[1]);
}

#endif
