/* The packet designs (piggyback, pipeline, zcopy): the ring holds records.
 *
 *   header word: payload length (32 bits) | type (8)
 *   sequence word: the record's sequence number XOR a constant
 *   payload, padded to 8 bytes
 *   trailer word: the sequence number mixed with the length and the salt of
 *   the receiving region (trailer_of)
 *
 * A record is one RDMA write from the staging buffer, so its trailer lands
 * last (xport.h's last-word rule).  The receiver expects the next record at
 * its tail: it is there when the sequence word there is the one it expects,
 * the header gives a length that fits, the trailer at that length holds the
 * trailer due, and the header has not changed meanwhile (a header read
 * while the write was landing is never trusted).  The trailer is no plain
 * sequence number: a record landing lowest address first (Soft-RoCE) has
 * its header and sequence word in while its trailer's place still holds
 * what an earlier lap left there, and a payload word equal to the sequence
 * number (a counter, a small integer) passed for the plain trailer, so the
 * receiver took a half-written record (ibc_channel_test_torn_record makes
 * one; tests/channel/trailer.c).  Mixed with the length and the salt, a
 * stale word matches by chance only (2^-64), and a header torn to another
 * length points at a place whose word is not that length's trailer.  Two
 * multiplications per record each side.  Whatever the ring held
 * from an earlier lap (old records, payload bytes) fails these checks, so
 * nothing is ever cleared: a payload would have to hold, 8-aligned, the
 * exact 64-bit words of a future record to pass for one (the channel is a
 * benchmark, not a security boundary).  A record never straddles the ring's
 * end: a WRAP record (header and sequence word, one 16-byte write whose
 * last word is the sequence word) sends the receiver back to the start.
 *
 * zcopy: a RNDV record carries the address, length and rkey of the sender's
 * buffer (registered through the cache); the receiver's get reads the data
 * straight into its own buffers (RDMA read), and when it has read all of it,
 * writes its count of finished rendezvous into the sender's zdone word; the
 * sender's put returns 0 until then and the whole length after.
 *
 * zcopy, split (c->direct: the transport's write is a copy by the writer's
 * CPU, so the sender's core would only spin while the receiver's copies):
 * the receiver's get, given room for the whole rendezvous with its second
 * half in one buffer, writes a CTS into the sender's region (the address,
 * rkey, offset and length of that half; its sequence word, the rendezvous'
 * number, written last), reads the first half itself, writes zdone (it
 * reads no more of the sender's buffer), and returns with nothing delivered
 * until the sender's wdone word says the rest is in.  The sender's put,
 * called again as a pending rendezvous asks, sees the CTS, writes that half
 * from its buffer straight into the receiver's, waits for the write, writes
 * wdone, and returns the whole length once zdone is in (the CTS precedes
 * zdone, so a put that sees zdone sees the CTS too).  Both halves are copied
 * at once, by two cores.  Like the sender's buffer for put, the receiver's buffers belong to
 * the rendezvous until the get delivers it: the get is called again with
 * the same buffers (a get of others is refused).  With params.staged the
 * receiver reads it all, as the paper does. */
#include "channel/channel_impl.h"

#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/wait.h"
#include "regcache/regcache.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#define PAD8(n) (((n) + 7) & ~(uint64_t)7)
#define SEQ_MAGIC CH_SEQ_MAGIC
#define TRAILER_K1 0xd6e8feb86659fd93ull
#define TRAILER_K2 0xc2b2ae3d27d4eb4full
#define REC_OVERHEAD 24 /* header, sequence word, trailer */
/* the bytes a record's write carries, and the ring space it takes: records
 * start 16-aligned, so a WRAP record always fits before the end */
#define REC_BYTES(len) (REC_OVERHEAD + PAD8(len))
#define REC_SPAN(len) ((REC_BYTES(len) + 15) & ~(uint64_t)15)

struct rndv {
	uint64_t addr, len;
	uint32_t rkey, pad;
};

/* the receiver's request for the second half: one write, seq last */
struct cts {
	uint64_t addr, off, len;
	uint32_t rkey, pad;
	uint64_t seq;
};

/* a split's halves: the receiver's at least this, and 64-aligned */
#define SPLIT_MIN 4096

static uint64_t hdr_make(uint64_t len, unsigned type)
{
	return (len & 0xffffffffull) | ((uint64_t)type << 32);
}

/* the trailer of record seq of len payload bytes in a region of this salt */
static uint64_t trailer_of(uint64_t seq, uint64_t len, uint64_t salt)
{
	return ((seq ^ salt) * TRAILER_K1) ^ (len * TRAILER_K2);
}

static uint64_t load_acq(const void *p)
{
	return atomic_load_explicit((const _Atomic uint64_t *)p, memory_order_acquire);
}

/* Waits for a completion of c's own (*flag: direct_done, read_done), not
 * for the peer: the data is there. */
static int own_wait(struct ibc_channel *c, const int *flag)
{
	struct ibc_wait_deadline dl = IBC_WAIT_DEADLINE(c->deadline_ns);
	unsigned long polls = 0;
	int rc = IBC_OK;

	while (rc == IBC_OK && !*flag) {
		rc = ch_service(c);
		if (rc == IBC_OK && !*flag) {
			ibc_wait_relax(c->x->wait, &polls);
			if ((polls & 255) == 0)
				rc = ibc_wait_check(&dl);
		}
	}
	return rc;
}

/* c->direct: the record whose header, sequence word, pad and trailer are in
 * place in the staging buffer at st, with its payload straight from iov
 * (from skip, len bytes): one gather write [header, sequence word | the
 * payload's pieces, registered through the cache | pad, trailer], so the
 * trailer still lands last.  On a transport whose write is a copy by this
 * CPU (shm) the staging copy would be a second copy on the same CPU; on an
 * HCA the DMA engine makes the second, which is why the paper stages.  The
 * write is signaled and waited for: the caller may reuse its buffers when
 * put returns.  *taken 0 (nothing written): the payload has more pieces
 * than the gather list holds, or one will not register; stage it. */
static int record_write_direct(struct ibc_channel *c, const unsigned char *st, uint64_t pos,
			       const struct iovec *iov, int n, size_t skip, uint64_t len, int *taken)
{
	struct ibc_xport_sge sge[IBC_XPORT_MAX_SGE];
	struct ibc_xport_mr *mr[IBC_XPORT_MAX_SGE];
	int k = 1, i, nmr = 0, max = (int)c->x->caps.max_sge, rc = IBC_OK;
	uint64_t want = len;

	*taken = 0;
	if (max > IBC_XPORT_MAX_SGE)
		max = IBC_XPORT_MAX_SGE;
	sge[0] = (struct ibc_xport_sge){ (uintptr_t)st, 16, c->stage->lkey };
	for (i = 0; i < n && want > 0; i++) {
		uint64_t l = iov[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		l = l - skip < want ? l - skip : want;
		/* the whole buffer, as the caller gave it: one registration for
		 * all its packets, and the cache's hit on the next put */
		if (k >= max - 1 || ibc_regcache_get(c->rc, iov[i].iov_base, iov[i].iov_len,
						     IBC_XPORT_ACCESS_LOCAL_WRITE, &mr[nmr], NULL))
			goto put;
		sge[k++] = (struct ibc_xport_sge){ (uintptr_t)iov[i].iov_base + skip, (uint32_t)l,
						   mr[nmr++]->lkey };
		want -= l;
		skip = 0;
	}
	sge[k++] = (struct ibc_xport_sge){ (uintptr_t)st + 16 + len, (uint32_t)(PAD8(len) - len + 8),
					   c->stage->lkey };
	*taken = 1;
	c->direct_done = 0;
	rc = ibc_xport_write(c->x, c->peer, sge, k, c->peer_rd.addr + pos, c->peer_rd.rkey,
			     IBC_XPORT_WR_SIGNALED, ch_wrid(c, CH_WR_DIRECT, 0));
	if (rc == IBC_OK)
		c->outstanding++;
	else
		ibc_error("channel %s rank %d: RDMA write to rank %d: %s", c->d->name, c->x->rank,
			  c->peer, ibc_status_str(rc));
	if (rc == IBC_OK)
		rc = own_wait(c, &c->direct_done);
put:
	for (i = 0; i < nmr; i++)
		ibc_regcache_put(c->rc, mr[i]);
	return rc;
}

/* One record of len payload bytes (from iov at skip, or src) at the head. */
static int record_write(struct ibc_channel *c, unsigned type, const struct iovec *iov, int n,
			size_t skip, const void *src, uint64_t len)
{
	uint64_t pos = ch_pos(c, c->head), need = REC_BYTES(len);
	unsigned char *st = (unsigned char *)c->stage->addr + pos;
	uint64_t hdr = hdr_make(len, type), sw = c->tx_seq ^ SEQ_MAGIC;
	uint64_t trailer = trailer_of(c->tx_seq, len, c->tx_salt);
	int rc, taken = 0;

	memcpy(st, &hdr, 8);
	memcpy(st + 8, &sw, 8);
	memset(st + 16 + len, 0, PAD8(len) - len);
	memcpy(st + 16 + PAD8(len), &trailer, 8);
	if (c->direct && src == NULL && len >= CH_DIRECT_MIN) {
		rc = record_write_direct(c, st, pos, iov, n, skip, len, &taken);
		if (taken)
			goto written;
	}
	if (src)
		memcpy(st + 16, src, len);
	else
		ch_iov_gather(st + 16, iov, n, skip, len);
	rc = ch_write(c, st, c->stage->lkey, need, pos, 1);
written:
	if (rc == IBC_OK) {
		c->head += REC_SPAN(len);
		c->tx_seq++;
		c->cnt.packets++;
	}
	return rc;
}

/* Room for a record of need bytes at the head, writing a WRAP first when it
 * would cross the end; 0 when the ring is too full. */
static int record_room(struct ibc_channel *c, uint64_t need, int *rc)
{
	uint64_t pos = ch_pos(c, c->head), skip = c->R - pos < need ? c->R - pos : 0;

	*rc = IBC_OK;
	if (ch_tx_space(c) < skip + need)
		return 0;
	if (skip > 0) {
		uint64_t w[2] = { hdr_make(0, CH_REC_WRAP), c->tx_seq ^ SEQ_MAGIC };

		*rc = ch_write(c, w, 0, sizeof(w), pos, 1);   /* inline: from the stack */
		if (*rc)
			return 0;
		c->head += skip;
		c->tx_seq++;
	}
	return 1;
}

/* The pending rendezvous' half that the receiver's CTS asks for, from the
 * sender's buffer into the receiver's, then wdone. */
static int zcopy_write_half(struct ibc_channel *c)
{
	struct cts q;
	struct ibc_xport_sge sge;
	int rc;

	memcpy(&q, (const void *)c->cts, sizeof(q));
	if (q.off > c->z_len || q.len > c->z_len - q.off || q.len > UINT32_MAX) {
		ibc_error("channel zcopy rank %d: rank %d asks for bytes %llu..%llu of a %zu-byte "
			  "rendezvous", c->x->rank, c->peer, (unsigned long long)q.off,
			  (unsigned long long)(q.off + q.len), c->z_len);
		return IBC_ERR_PROTO;
	}
	sge = (struct ibc_xport_sge){ (uintptr_t)c->z_buf + q.off, (uint32_t)q.len, c->z_mr->lkey };
	c->direct_done = 0;
	rc = ibc_xport_write(c->x, c->peer, &sge, 1, q.addr, q.rkey, IBC_XPORT_WR_SIGNALED,
			     ch_wrid(c, CH_WR_DIRECT, 0));
	if (rc == IBC_OK)
		c->outstanding++;
	else
		ibc_error("channel zcopy rank %d: RDMA write to rank %d: %s", c->x->rank, c->peer,
			  ibc_status_str(rc));
	if (rc == IBC_OK)
		rc = own_wait(c, &c->direct_done);
	if (rc == IBC_OK)
		rc = ch_write_word(c, CH_OFF_WDONE(c->R), c->z_seq);
	if (rc == IBC_OK) {
		c->z_wrote = 1;
		c->cnt.zcopy_writes++;
	}
	return rc;
}

static int zcopy_put(struct ibc_channel *c, const struct iovec *iov, size_t *accepted)
{
	const char *cts_seq = (const char *)c->cts + offsetof(struct cts, seq);
	struct rndv r;
	int rc, read;

	if (c->z_pending) {
		if (iov->iov_base != c->z_buf || iov->iov_len != c->z_len) {
			ibc_error("channel zcopy rank %d: a put of another buffer while %zu bytes at "
				  "%p are still being read", c->x->rank, c->z_len, c->z_buf);
			return IBC_ERR_INVAL;
		}
		/* a split's receiver writes its CTS before its zdone: once zdone
		 * is in, a CTS for this rendezvous is too */
		read = load_acq((const void *)c->zdone) >= c->z_seq;
		if (!c->z_wrote && load_acq(cts_seq) == c->z_seq) {
			rc = zcopy_write_half(c);
			if (rc != IBC_OK || !read)
				return rc;
		}
		if (!read) {
			c->cnt.put_full++;  /* not read yet (back-pressure): call again */
			return IBC_OK;
		}
		ibc_regcache_put(c->rc, c->z_mr);
		c->z_mr = NULL;
		c->z_pending = 0;
		*accepted = c->z_len;
		return IBC_OK;
	}
	if (!record_room(c, REC_SPAN(sizeof(r)), &rc)) {
		if (rc == IBC_OK)
			c->cnt.put_full++;
		return rc;
	}
	rc = ibc_regcache_get(c->rc, iov->iov_base, iov->iov_len,
			      IBC_XPORT_ACCESS_LOCAL_WRITE | IBC_XPORT_ACCESS_REMOTE_READ, &c->z_mr,
			      NULL);
	if (rc)
		return rc;
	memset(&r, 0, sizeof(r));
	r.addr = (uintptr_t)iov->iov_base;
	r.len = iov->iov_len;
	r.rkey = c->z_mr->rkey;
	rc = record_write(c, CH_REC_RNDV, NULL, 0, 0, &r, sizeof(r));
	if (rc == IBC_OK) {
		c->z_pending = 1;
		c->z_wrote = 0;
		c->z_buf = iov->iov_base;
		c->z_len = iov->iov_len;
		c->z_seq++;
	}
	return rc;
}

/* Small messages (one buffer of 1 .. c->small bytes: channel_impl.h) by the
 * shortest path: the record composed on the stack a word at a time and
 * written inline (ibc_xport_write_inline; the signaled write every
 * sig_every by ch_write), no staging copy, no iovec.  The same record as
 * record_write's.  A wrap or a full ring goes the general way. */
int ch_packet_small_put(struct ibc_channel *c, const void *buf, size_t len, size_t *accepted)
{
	uint64_t rec[(CH_SMALL_MAX + REC_OVERHEAD) / 8], span = REC_SPAN(len), pos = ch_pos(c, c->head);
	size_t words = PAD8(len) / 8;
	int rc;

	*accepted = 0;
	if (pos + span > c->R || c->head + span - c->tail_seen > c->R) {
		struct iovec v = { (void *)buf, len };

		return ch_packet_put(c, &v, 1, accepted, PAD8(len), 0);
	}
	rec[0] = hdr_make(len, CH_REC_DATA);
	rec[1] = c->tx_seq ^ SEQ_MAGIC;
	rec[1 + words] = 0;                /* the last payload word's pad */
	ch_copy_small(&rec[2], buf, len);
	rec[2 + words] = trailer_of(c->tx_seq, len, c->tx_salt);
	if (++c->since_sig < c->sig_every) {
		rc = ibc_xport_write_inline(c->x, c->peer, rec, (uint32_t)(REC_OVERHEAD + 8 * words),
					    c->peer_rd.addr + pos, c->peer_rd.rkey,
					    ch_wrid(c, CH_WR_SIGNALED, 0));
		if (rc)
			ibc_error("channel %s rank %d: RDMA write to rank %d: %s", c->d->name,
				  c->x->rank, c->peer, ibc_status_str(rc));
	} else {
		c->since_sig = c->sig_every - 1;   /* ch_write counts it and signals it */
		rc = ch_write(c, rec, 0, REC_OVERHEAD + 8 * words, pos, 1);
	}
	if (rc)
		return rc;
	c->head += span;
	c->tx_seq++;
	c->cnt.packets++;
	*accepted = len;
	return IBC_OK;
}

int ch_packet_put(struct ibc_channel *c, const struct iovec *iov, int n, size_t *accepted,
		  size_t maxpkt, int zcopy)
{
	size_t total, done = 0;
	int rc = IBC_OK;

	if (zcopy && (c->z_pending || (n > 0 && iov[0].iov_len >= c->p.zcopy_bytes)))
		return zcopy_put(c, iov, accepted);
	total = ch_iov_total(iov, n);
	maxpkt &= ~(size_t)7;
	while (rc == IBC_OK && done < total) {
		uint64_t len = total - done < maxpkt ? total - done : maxpkt;
		uint64_t space = ch_tx_space(c);

		/* a shorter record when that is what fits */
		if (space < REC_SPAN(len) && space >= REC_SPAN(8))
			len = (space - REC_OVERHEAD) & ~(uint64_t)15;
		if (!record_room(c, REC_SPAN(len), &rc))
			break;
		rc = record_write(c, CH_REC_DATA, iov, n, done, NULL, len);
		if (rc == IBC_OK)
			done += len;
	}
	if (rc == IBC_OK && done == 0 && total > 0)
		c->cnt.put_full++;
	*accepted = done;
	return rc;
}

/* The rendezvous' next part straight into iov (at most max_sge entries). */
static int zcopy_read(struct ibc_channel *c, const struct rndv *r, const struct iovec *iov, int n,
		      size_t *got)
{
	struct ibc_xport_sge sge[IBC_XPORT_MAX_SGE];
	struct ibc_xport_mr *mr[IBC_XPORT_MAX_SGE];
	uint64_t left = r->len - c->rx_off, want = 0;
	int k = 0, i, rc = IBC_OK;

	for (i = 0; i < n && k < (int)c->x->caps.max_sge && want < left; i++) {
		uint64_t l = iov[i].iov_len < left - want ? iov[i].iov_len : left - want;

		if (l == 0)
			continue;
		rc = ibc_regcache_get(c->rc, iov[i].iov_base, l, IBC_XPORT_ACCESS_LOCAL_WRITE, &mr[k],
				      NULL);
		if (rc)
			break;
		sge[k].addr = (uintptr_t)iov[i].iov_base;
		sge[k].len = (uint32_t)l;
		sge[k].lkey = mr[k]->lkey;
		k++;
		want += l;
	}
	if (rc == IBC_OK && k > 0) {
		c->read_done = 0;
		rc = ibc_xport_read(c->x, c->peer, sge, k, r->addr + c->rx_off, r->rkey,
				    IBC_XPORT_WR_SIGNALED,
				    ch_wrid(c, CH_WR_READ, 0));
		if (rc == IBC_OK)
			c->outstanding++;
		if (rc == IBC_OK)
			rc = own_wait(c, &c->read_done);
		c->cnt.zcopy_reads++;
	}
	for (i = 0; i < k; i++)
		ibc_regcache_put(c->rc, mr[i]);
	*got = rc == IBC_OK ? want : 0;
	return rc;
}

/* Where a rendezvous of len bytes is split: the receiver reads [0, h). */
static uint64_t split_point(uint64_t len)
{
	return (len / 2) & ~(uint64_t)63;
}

/* The address of byte h of sub when [h, len) lies in one entry (*entry) that
 * is at most the max_sge-th (so one read takes [0, h)), else NULL. */
static void *split_half_at(const struct ibc_channel *c, const struct iovec *sub, int ns,
			   uint64_t h, uint64_t len, int *entry)
{
	uint64_t off = 0;
	int i;

	for (i = 0; i < ns && i < (int)c->x->caps.max_sge; i++) {
		if (h < off + sub[i].iov_len) {
			*entry = i;
			return len <= off + sub[i].iov_len ? (char *)sub[i].iov_base + (h - off) : NULL;
		}
		off += sub[i].iov_len;
	}
	return NULL;
}

/* A split rendezvous (the comment at the top), when this one can be: the
 * CTS for the second half out, the first half read.  Only a get that has
 * delivered nothing yet (done) starts one, since it returns with nothing:
 * its caller calls again with the same buffers. */
static int split_start(struct ibc_channel *c, const struct rndv *r, const struct iovec *sub,
		       int ns, size_t done)
{
	uint64_t h = split_point(r->len);
	struct rndv first = *r;
	struct cts q;
	size_t got = 0;
	void *at;
	int rc, e = 0;

	/* the whole entry, as the caller gave it: the read of the first half
	 * and the next get of the same buffer hit this one registration */
	if (!c->direct || done != 0 || c->rx_off != 0 || h < SPLIT_MIN ||
	    c->x->caps.max_inline < sizeof(q) ||
	    (at = split_half_at(c, sub, ns, h, r->len, &e)) == NULL ||
	    ibc_regcache_get(c->rc, sub[e].iov_base, sub[e].iov_len,
			     IBC_XPORT_ACCESS_LOCAL_WRITE | IBC_XPORT_ACCESS_REMOTE_WRITE,
			     &c->rx_split_mr, NULL) != IBC_OK)
		return IBC_OK;                 /* read it all */
	memset(&q, 0, sizeof(q));
	q.addr = (uintptr_t)at;
	q.off = h;
	q.len = r->len - h;
	q.rkey = c->rx_split_mr->rkey;
	q.seq = c->z_done + 1;
	c->rx_split = 1;
	c->rx_split_at = sub[0].iov_base;
	c->rx_split_half = at;
	rc = ch_write(c, &q, 0, sizeof(q), CH_OFF_CTS(c->R), 1);
	first.len = h;
	if (rc == IBC_OK)
		rc = zcopy_read(c, &first, sub, ns, &got);
	if (rc == IBC_OK && got != h) {
		ibc_error("channel zcopy rank %d: read %zu of a split's first %llu bytes", c->x->rank,
			  got, (unsigned long long)h);
		rc = IBC_ERR_PROTO;
	}
	/* nothing more is read from the sender's buffer: its put may return
	 * once it has written its half, without waiting for this side's wdone */
	if (rc == IBC_OK)
		rc = ch_write_word(c, CH_OFF_ZDONE(c->R), c->z_done + 1);
	c->rx_zdone_sent = rc == IBC_OK;
	return rc;
}

/* The rendezvous r into sub: read, or split (split_start) and then, once the
 * sender's wdone says its half is in, delivered; *got: bytes delivered now
 * (0 while a split waits for the sender). */
static int zcopy_take(struct ibc_channel *c, const struct rndv *r, const struct iovec *sub, int ns,
		      size_t done, size_t *got)
{
	int rc, e;

	*got = 0;
	if (!c->rx_split) {
		rc = split_start(c, r, sub, ns, done);
		if (rc != IBC_OK || !c->rx_split)
			return rc != IBC_OK ? rc : zcopy_read(c, r, sub, ns, got);
	} else if (ns == 0 || sub[0].iov_base != c->rx_split_at ||
		   split_half_at(c, sub, ns, split_point(r->len), r->len, &e) !=
			   c->rx_split_half) {
		ibc_error("channel zcopy rank %d: a get into other buffers while rank %d writes the "
			  "rendezvous' second half at %p (call get again with the same buffers)",
			  c->x->rank, c->peer, c->rx_split_half);
		return IBC_ERR_INVAL;
	}
	if (load_acq((const void *)c->wdone) != c->z_done + 1)
		return IBC_OK;                 /* the sender's half is still to come */
	ibc_regcache_put(c->rc, c->rx_split_mr);
	c->rx_split_mr = NULL;
	c->rx_split = 0;
	*got = r->len;
	return IBC_OK;
}

/* The small path's get (channel_impl.h). */
int ch_packet_small_get(struct ibc_channel *c, void *buf, size_t cap, size_t *delivered, int *rc)
{
	uint64_t pos = ch_pos(c, c->tail), hdr, len;
	const unsigned char *p = c->ring + pos;

	*delivered = 0;
	*rc = IBC_OK;
	if (load_acq(p + 8) != (c->rx_seq ^ SEQ_MAGIC))
		return 1;                     /* nothing new */
	hdr = load_acq(p);
	len = hdr & 0xffffffffull;
	if (c->rx_off != 0 || (hdr >> 32) != CH_REC_DATA || len > cap)
		return 0;
	if (pos + REC_BYTES(len) > c->R ||
	    load_acq(p + 16 + PAD8(len)) != trailer_of(c->rx_seq, len, c->rx_salt) ||
	    load_acq(p) != hdr)
		return 1;                     /* still landing */
	ch_copy_small(buf, p + 16, len);
	c->tail += REC_SPAN(len);
	c->rx_seq++;
	*delivered = len;
	*rc = ch_tail_update(c, c->p.lazy_bytes);
	return 1;
}

int ch_packet_get(struct ibc_channel *c, const struct iovec *iov, int n, size_t *delivered)
{
	size_t room, done = 0;
	int rc = IBC_OK;

	room = ch_iov_total(iov, n);

	while (rc == IBC_OK && done < room) {
		uint64_t pos = ch_pos(c, c->tail), hdr, len, need;
		unsigned type;
		const unsigned char *payload = c->ring + pos + 16;

		if (load_acq(c->ring + pos + 8) != (c->rx_seq ^ SEQ_MAGIC))
			break;                        /* nothing new */
		hdr = load_acq(c->ring + pos);
		type = (unsigned)((hdr >> 32) & 0xff);
		if (type == CH_REC_WRAP && (hdr & 0xffffffffull) == 0) {
			/* its sequence word is its last word: the header is there */
			c->tail += c->R - pos;
			c->rx_seq++;
			continue;
		}
		len = hdr & 0xffffffffull;
		need = REC_SPAN(len);
		/* a header that does not fit may be one still landing: wait */
		if (pos + REC_BYTES(len) > c->R || (type != CH_REC_DATA && type != CH_REC_RNDV) ||
		    load_acq(payload + PAD8(len)) != trailer_of(c->rx_seq, len, c->rx_salt) ||
		    load_acq(c->ring + pos) != hdr)
			break;
		if (type == CH_REC_DATA) {
			size_t take = len - c->rx_off < room - done ? len - c->rx_off : room - done;

			ch_iov_scatter(iov, n, done, payload + c->rx_off, take);
			c->rx_off += take;
			done += take;
			if (c->rx_off < len)
				break;                /* the caller's buffers are full */
		} else {
			struct rndv r;
			struct iovec sub[IBC_XPORT_MAX_SGE];
			int ns = 0, i;
			size_t skip = done, got = 0;

			memcpy(&r, payload, sizeof(r));
			/* the caller's buffers from offset done */
			for (i = 0; i < n && ns < IBC_XPORT_MAX_SGE; i++) {
				if (skip >= iov[i].iov_len) {
					skip -= iov[i].iov_len;
					continue;
				}
				sub[ns].iov_base = (char *)iov[i].iov_base + skip;
				sub[ns++].iov_len = iov[i].iov_len - skip;
				skip = 0;
			}
			rc = zcopy_take(c, &r, sub, ns, done, &got);
			if (rc)
				break;
			c->rx_off += got;
			done += got;
			if (c->rx_off < r.len)
				break;
			c->z_done++;
			/* a split's zdone went out when its first half was read */
			if (!c->rx_zdone_sent)
				rc = ch_write_word(c, CH_OFF_ZDONE(c->R), c->z_done);
			c->rx_zdone_sent = 0;
			if (rc)
				break;
		}
		c->tail += need;
		c->rx_seq++;
		c->rx_off = 0;
	}
	*delivered = done;
	if (rc == IBC_OK)
		rc = ch_tail_update(c, c->p.lazy_bytes);
	return rc;
}

/* ibc_channel_test_torn_record's half-landed record */
static int ch_packet_torn_record(struct ibc_channel *c, const void *buf, size_t len)
{
	uint64_t pos, hdr = hdr_make(len, CH_REC_DATA), sw, stale;
	unsigned char *st;
	int rc;

	if (!record_room(c, REC_SPAN(len), &rc))
		return rc != IBC_OK ? rc : IBC_ERR_INVAL;
	pos = ch_pos(c, c->head);
	st = (unsigned char *)c->stage->addr + pos;
	sw = c->tx_seq ^ SEQ_MAGIC;
	stale = c->tx_seq;
	memcpy(st, &hdr, 8);
	memcpy(st + 8, &sw, 8);
	memcpy(st + 16, buf, len);
	memset(st + 16 + len, 0, PAD8(len) - len);
	memcpy(st + 16 + PAD8(len), &stale, 8);
	/* signaled, and waited for: its bytes are in the peer's ring on return */
	c->since_sig = c->sig_every - 1;
	rc = ch_write(c, st, c->stage->lkey, REC_BYTES(len), pos, 1);
	while (rc == IBC_OK && c->outstanding > 0)
		rc = ch_service(c);
	return rc;
}

int ibc_channel_test_torn_record(struct ibc_channel *c, const void *buf, size_t len)
{
	if (!c->d->packets)
		return IBC_ERR_UNSUPPORTED;
	if (!c->ready || len == 0 || len > c->R / 4)
		return IBC_ERR_INVAL;
	return ch_packet_torn_record(c, buf, len);
}
