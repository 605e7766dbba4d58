/* Internals of impl/channel/.  Not for use elsewhere. */
#ifndef IBC_CHANNEL_IMPL_H
#define IBC_CHANNEL_IMPL_H

#include "channel/channel.h"
#include "family/family.h"
#include "xport/xport.h"

#include <stdint.h>

/* the endpoint's registered region: [ring | head copy | tail copy | zdone |
 * cts | wdone], each word on a line of its own (zcopy's split rendezvous:
 * channel_packet.c) */
#define CH_OFF_HEAD(R) ((R))
#define CH_OFF_TAIL(R) ((R) + 64)
#define CH_OFF_ZDONE(R) ((R) + 128)
#define CH_OFF_CTS(R) ((R) + 192)
#define CH_OFF_WDONE(R) ((R) + 256)
#define CH_REGION(R) ((R) + 320)

/* wr_id kinds (the layout: family.h) */
enum ch_wr_kind { CH_WR_SIGNALED = 1, CH_WR_READ = 2, CH_WR_DIRECT = 3 };

/* packet records: header word = len (32) | type (8); sequence word; DATA
 * and RNDV end with a trailer word = the sequence number mixed with the
 * length and the receiving region's salt (channel_packet.c) */
enum ch_rec { CH_REC_DATA = 1, CH_REC_WRAP = 2, CH_REC_RNDV = 3 };

struct ibc_channel {
	const struct ibc_channel_design *d;
	struct ibc_xport *x;
	int peer;
	struct ibc_family_member fm;       /* registry index (family.h) */
	struct ibc_channel_params p;
	size_t R;
	uint64_t R_mask;      /* R - 1 when R is a power of two, else 0 (ch_pos) */
	int ready, failed;
	int64_t deadline_ns;
	struct ibc_channel_counters cnt;
	struct ibc_xport_mr *mr;           /* the region above */
	struct ibc_xport_mr *stage;        /* R bytes of staging (what is written from) */
	struct ibc_xport_rdesc peer_rd;    /* the peer's region */
	unsigned char *ring;
	volatile uint64_t *head_copy, *tail_copy, *zdone, *cts, *wdone;
	/* send side */
	uint64_t head;        /* ring bytes used (monotonic) */
	uint64_t tail_seen;   /* the peer's tail, as ch_pointer_read last accepted it */
	uint64_t tx_seq;      /* records sent */
	uint64_t tx_salt;     /* the peer's region's: its records' trailers */
	uint32_t since_sig;   /* writes since the last signaled one */
	uint32_t sig_every;
	int outstanding;
	size_t small;         /* messages of 1 .. small bytes take the small path (channel_packet.c) */
	/* zcopy send */
	int z_pending;
	const void *z_buf;
	size_t z_len;
	uint64_t z_seq;       /* rendezvous sent */
	struct ibc_xport_mr *z_mr;
	int z_wrote;          /* its second half written at the receiver's request */
	/* receive side */
	uint64_t tail;        /* ring bytes freed (monotonic) */
	uint64_t head_seen;   /* basic: the peer's head, as ch_pointer_read last accepted it */
	uint64_t tail_sent;   /* last tail written to the peer */
	uint64_t rx_seq;      /* next record expected */
	uint64_t rx_salt;     /* this region's: the trailers of the records in it */
	size_t rx_off;        /* bytes of the current record delivered */
	uint64_t z_done;      /* rendezvous read to the end */
	int read_done;        /* the pending read's completion arrived */
	/* zcopy receive, split: the sender writes the rendezvous' second half
	 * into rx_split_at + its offset while this side reads the first */
	int rx_split;
	const void *rx_split_at;          /* the get's first buffer */
	void *rx_split_half;              /* where the sender writes */
	int rx_zdone_sent;                /* its zdone written once the first half was read */
	struct ibc_xport_mr *rx_split_mr;
	int direct;           /* DATA packets of CH_DIRECT_MIN bytes and more go straight
				 from the caller's buffers, and zcopy's sender writes a
				 rendezvous' second half (channel_packet.c) */
	int direct_done;      /* the pending direct write's completion arrived */
	struct ibc_regcache *rc;
	int rc_own;
};

/* A monotonic ring count (head, tail) as an offset in the ring: a mask, not
 * a 64-bit division (tens of cycles on the latency path), when R allows. */
static inline uint64_t ch_pos(const struct ibc_channel *c, uint64_t v)
{
	return c->R_mask != 0 ? v & c->R_mask : v % c->R;
}

static inline uint64_t ch_wrid(const struct ibc_channel *c, unsigned kind, uint32_t index)
{
	return ibc_family_wrid(&c->fm, kind, index);
}

/* Posts one RDMA write of len bytes of local memory (lkey) to offset off of
 * the peer's region; inline when it fits and asked for; signaled now and
 * then (send queue slots). */
int ch_write(struct ibc_channel *c, const void *src, uint32_t lkey, size_t len, uint64_t off,
	     int inl);
/* An 8-byte value into the peer's region at off (inline). */
int ch_write_word(struct ibc_channel *c, uint64_t off, uint64_t value);
/* Polls the send completions once and routes them, whatever their family. */
static inline int ch_service(struct ibc_channel *c)
{
	int rc = ibc_family_service(c->x, IBC_XPORT_CQ_SEND);

	return rc ? rc : c->failed;
}
/* A word the peer writes and only ever raises (head, tail), read once.  On
 * Soft-RoCE a write lands a byte at a time, lowest address first, so a read
 * may see the new value's low-order bytes under the old one's high-order
 * bytes: never above the value being written, but perhaps below the one
 * before (xport.h).  Keeps in *seen the largest value read that is at most
 * limit (what the peer can have written) and returns it; the mutant
 * IBC_CHANNEL_MUTANT_ONE_READ returns the read as it is. */
uint64_t ch_pointer_read(const struct ibc_channel *c, const volatile uint64_t *w,
			 uint64_t *seen, uint64_t limit);
/* Room left in the peer's ring. */
uint64_t ch_tx_space(struct ibc_channel *c);
/* Copies up to len bytes of iov from byte offset skip into dst; returns how many. */
size_t ch_iov_gather(void *dst, const struct iovec *iov, int n, size_t skip, size_t len);
size_t ch_iov_scatter(const struct iovec *iov, int n, size_t skip, const void *src, size_t len);
size_t ch_iov_total(const struct iovec *iov, int n);
/* The receiver's lazy (or, threshold 0, immediate) tail update. */
int ch_tail_update(struct ibc_channel *c, uint64_t threshold);

/* channel_packet.c: the small path, which ibc_channel_put/get and their
 * blocking forms take for one buffer of 1 .. c->small bytes on a packet
 * design (c->small: the largest message whose record the transport inlines,
 * at most CH_SMALL_MAX and the design's packet; 0 for basic) with no
 * rendezvous pending: put composes the record on the stack; get takes the
 * record at the tail when it is a DATA record of at most cap bytes and none
 * of it is delivered yet, returning 1 and *rc, *delivered (0: nothing has
 * landed), else 0 (the general get decides). */
int ch_packet_small_put(struct ibc_channel *c, const void *buf, size_t len, size_t *accepted);
int ch_packet_small_get(struct ibc_channel *c, void *buf, size_t cap, size_t *delivered, int *rc);
static inline int ch_small(const struct ibc_channel *c, size_t len)
{
	return len - 1 < c->small && !c->z_pending;
}
/* len (at most CH_SMALL_MAX) bytes: words, then the bytes left; no call */
static inline void ch_copy_small(void *dst, const void *src, size_t len)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8)
		__builtin_memcpy((char *)dst + i, (const char *)src + i, 8);
	for (; i < len; i++)
		((char *)dst)[i] = ((const char *)src)[i];
}
/* channel_packet.c: the packet designs' put and get (maxpkt: payload per
 * packet; zcopy: large puts by rendezvous) */
int ch_packet_put(struct ibc_channel *c, const struct iovec *iov, int n, size_t *accepted,
		  size_t maxpkt, int zcopy);
int ch_packet_get(struct ibc_channel *c, const struct iovec *iov, int n, size_t *delivered);
/* the largest message of the small path, when the transport inlines its
 * record (channel_packet.c) */
#define CH_SMALL_MAX 104
/* the smallest packet written straight from the caller's buffers (c->direct) */
#define CH_DIRECT_MIN 4096
/* mixed into sequence words and salts */
#define CH_SEQ_MAGIC 0x9e3779b97f4a7c15ull

extern const struct ibc_channel_design ibc_channel_basic;
extern const struct ibc_channel_design ibc_channel_piggyback;
extern const struct ibc_channel_design ibc_channel_pipeline;
extern const struct ibc_channel_design ibc_channel_zcopy;

#endif
