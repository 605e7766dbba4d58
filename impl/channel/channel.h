/* The MPICH2 RDMA channel (Liu et al., "Design and Implementation of MPICH2
 * over InfiniBand with RDMA Support"): put/get over one logically shared
 * FIFO per direction, over the transport interface (impl/xport) only.
 *
 * An endpoint pairs this rank with one peer.  Each direction's FIFO lives in
 * the receiver's registered memory: a ring of params.ring_bytes, and head
 * and tail pointers of which both sides keep a copy, made consistent by RDMA
 * writes.  The channel is a byte stream:
 *   put(iov, n, &accepted)   copies what fits (accepted <= the iov's bytes;
 *                            0 when the ring is full: back-pressure, never
 *                            loss or overwrite); never waits for the peer
 *   get(iov, n, &delivered)  delivers what has arrived, in order; never waits
 *                            for the peer; a get that delivers nothing may
 *                            have lent its buffers to a zcopy rendezvous
 *                            (below): call it again with the same buffers
 *
 * Designs (one file each, one table):
 *   basic      put: copy into a registered staging buffer, RDMA write into
 *              the ring, then a second RDMA write of the head pointer; get:
 *              copy out, RDMA write of the tail pointer on every get
 *   piggyback  the head update rides in the data write: each write is a
 *              packet (header, payload, a trailer word with its sequence
 *              number, written last: xport.h's last-word rule); the receiver
 *              writes the tail back lazily, once params.lazy_bytes are free
 *   pipeline   piggyback with large puts cut into params.chunk_bytes packets,
 *              so copying the next chunk overlaps the RDMA of the last
 *   zcopy      piggyback for small puts; a put of at least params.zcopy_bytes
 *              sends only a control packet (address, rkey, length of the
 *              caller's buffer, registered through the registration cache)
 *              and the receiver's get pulls the data by RDMA read; the put
 *              returns 0 until the receiver has read it all (call it again
 *              with the same buffer), then the whole length.  Where the
 *              transport's write is a copy by the writer's CPU (shm), a get
 *              with room for it all asks the sender for the second half (a
 *              CTS), which the sender's next put writes into the receiver's
 *              buffer while the receiver reads the first: two cores copy
 *              (params.staged: the receiver reads it all, as the paper does)
 *
 * Use (collective over the transport's ranks; both ends of a pair call the
 * same sequence):
 *   ibc_channel_params_init(&p);
 *   ibc_channel_create(x, "piggyback", peer, &p, &ch);
 *   ibc_channel_setup(ch);            registration, descriptor exchange, connect
 *   ibc_channel_put(ch, iov, n, &acc); ibc_channel_get(ch, iov, n, &got);
 *   ibc_channel_destroy(ch);
 * One thread; several channels may share a transport (completions are told
 * apart by wr_id). */
#ifndef IBC_CHANNEL_H
#define IBC_CHANNEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

struct ibc_xport;
struct ibc_xport_wc;
struct ibc_regcache;
struct ibc_channel;

enum ibc_channel_mutant {
	IBC_CHANNEL_MUTANT_NONE = 0,
	IBC_CHANNEL_MUTANT_HEAD_FIRST = 1, /* basic publishes the head before the data */
	IBC_CHANNEL_MUTANT_ONE_READ = 2    /* basic trusts one read of the peer's pointers */
};

struct ibc_channel_params {
	size_t ring_bytes;    /* per direction, a multiple of 64 (default 256 KiB) */
	size_t chunk_bytes;   /* pipeline: packet payload (default 16 KiB) */
	size_t lazy_bytes;    /* piggyback, pipeline, zcopy: the receiver writes its
				 tail back once this many bytes are free (default
				 ring / 4; at most ring / 2) */
	size_t zcopy_bytes;   /* zcopy: puts of at least this go by RDMA read
				 (default 32 KiB) */
	double deadline_s;    /* waits inside the channel (completions) give up
				 after this (default 60) */
	int staged;           /* packet designs: always copy a packet's payload into the
				 staging buffer first, and zcopy's receiver reads a
				 rendezvous all, as the paper does (default 0: where the
				 transport's write is itself a copy by this CPU,
				 caps.write_is_copy, packets of 4 KiB and more are
				 written straight from the caller's buffers, and zcopy's
				 sender writes a rendezvous' second half) */
	struct ibc_regcache *rcache;  /* zcopy, direct packets; NULL = the endpoint's own */
	enum ibc_channel_mutant mutant;
};

struct ibc_channel_counters {
	uint64_t puts, gets;              /* calls that moved bytes */
	uint64_t put_full;                /* puts that accepted nothing (back-pressure: no
					     room, or a zcopy put not read yet) */
	uint64_t bytes_put, bytes_got;
	uint64_t packets;                 /* writes of data (chunks, packets) */
	uint64_t head_writes, tail_writes;
	uint64_t zcopy_reads;
	uint64_t zcopy_writes;            /* halves of split rendezvous the sender wrote */
};

struct ibc_channel_design {
	const char *name;
	const char *desc;
	/* private (channel_impl.h) */
	int (*put)(struct ibc_channel *c, const struct iovec *iov, int n, size_t *accepted);
	int (*get)(struct ibc_channel *c, const struct iovec *iov, int n, size_t *delivered);
	int packets;   /* 1: the ring holds packets (all but basic) */
	size_t (*packet_max)(const struct ibc_channel *c); /* packets: the payload of one */
};

size_t ibc_channel_design_count(void);
const struct ibc_channel_design *ibc_channel_design_get(size_t i);
const struct ibc_channel_design *ibc_channel_design_find(const char *name);
void ibc_channel_list_print(FILE *out);
/* IBC_OK when x can carry the channel (RDMA write, inline 8-byte writes;
 * zcopy: RDMA read of user memory), else IBC_ERR_UNSUPPORTED and why. */
int ibc_channel_usable(const struct ibc_channel_design *d, const struct ibc_xport *x, char *why,
		       size_t cap);

void ibc_channel_params_init(struct ibc_channel_params *p);
/* 1 when c writes packets of 4 KiB and more straight from the caller's
 * buffers, and zcopy splits a rendezvous (ibc_channel_params.staged) */
int ibc_channel_direct(const struct ibc_channel *c);
int ibc_channel_create(struct ibc_xport *x, const char *design, int peer,
		       const struct ibc_channel_params *p, struct ibc_channel **out);
int ibc_channel_setup(struct ibc_channel *c);        /* collective */
int ibc_channel_put(struct ibc_channel *c, const struct iovec *iov, int n, size_t *accepted);
int ibc_channel_get(struct ibc_channel *c, const struct iovec *iov, int n, size_t *delivered);
/* Someone else who polls the transport's send queue (e.g. a benchmark's
 * own writes) hands each completion it does not own to the instance that
 * posted it, a channel's or another family's (impl/family/family.h): 1 when
 * it was an instance's, else 0. */
int ibc_channel_completion(const struct ibc_xport_wc *wc);
/* Reaps completions; put and get call it. */
int ibc_channel_progress(struct ibc_channel *c);
int ibc_channel_destroy(struct ibc_channel *c);      /* collective; frees c */
/* For tests of the packet designs: leaves in the peer's ring what a write
 * of the next record (len bytes of buf, one DATA record) leaves while it
 * lands lowest address first, as Soft-RoCE places it, stopped short of its
 * trailer: header, sequence word and payload in, and in the trailer's place
 * a stale word equal to the record's sequence number (which the plain
 * sequence trailer of before took for the trailer).  The record counts as
 * not sent: the next put writes it whole.  Returns once the write has
 * completed.  IBC_ERR_UNSUPPORTED for basic, IBC_ERR_INVAL when it does not
 * fit at once. */
int ibc_channel_test_torn_record(struct ibc_channel *c, const void *buf, size_t len);
void ibc_channel_counters_get(const struct ibc_channel *c, struct ibc_channel_counters *out);

/* Helpers for callers: put / get all of a buffer, spinning (with the
 * transport's wait strategy) until done or timeout_ns (< 0: none). */
int ibc_channel_send_all(struct ibc_channel *c, const void *buf, size_t len, int64_t timeout_ns);
int ibc_channel_recv_all(struct ibc_channel *c, void *buf, size_t len, int64_t timeout_ns);

#endif
