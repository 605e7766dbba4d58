/* The launcher's tree wire format (see WIRE.md): every message between the
 * launcher and the node launch agents (NLAs), and between NLAs, is one frame
 *
 *   offset size field
 *   0      2    magic   0x4943 ("IC"), little endian
 *   2      1    version IBC_LAUNCH_WIRE_VERSION
 *   3      1    type    enum ibc_launch_msg
 *   4      4    len     payload bytes that follow the header, <= the receiver's max
 *   8      4    src     type-dependent (a rank or a tree index)
 *   12     4    dst     type-dependent
 *   16     4    seq     collective sequence number / tag
 *   20     4    aux     type-dependent (collective op, stream, status ...)
 *   24     len  payload
 *
 * All integers little endian.  Payloads are built and read with the bounded
 * writer/reader below: u32, u64, and byte strings as u32 length + bytes; a
 * reader never reads past its end (it latches an error instead). */
#ifndef IBC_LAUNCH_WIRE_H
#define IBC_LAUNCH_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define IBC_LAUNCH_WIRE_MAGIC 0x4943u
#define IBC_LAUNCH_WIRE_VERSION 1u
#define IBC_LAUNCH_WIRE_HDR 24u
#define IBC_LAUNCH_WIRE_MAX (64u << 20) /* largest payload accepted by default */

enum ibc_launch_msg {
	IBC_LAUNCH_MSG_HELLO = 1,     /* child -> parent: src = tree index (or rank in flat mode) */
	IBC_LAUNCH_MSG_JOB,           /* parent -> child: the job description */
	IBC_LAUNCH_MSG_COLL_UP,       /* aggregated contributions of a subtree */
	IBC_LAUNCH_MSG_COLL_DOWN,     /* result of a collective */
	IBC_LAUNCH_MSG_P2P,           /* src rank -> dst rank, seq = tag */
	IBC_LAUNCH_MSG_PUT,           /* bulletin board put (HCS: forwarded at once) */
	IBC_LAUNCH_MSG_GET_REQ,       /* bulletin board get that missed below */
	IBC_LAUNCH_MSG_GET_RESP,      /* answer to GET_REQ, aux = found */
	IBC_LAUNCH_MSG_OUTPUT,        /* a line of a process: src = rank, aux = 1 stdout / 2 stderr */
	IBC_LAUNCH_MSG_STDIN,         /* stdin bytes for dst rank; len 0 = EOF */
	IBC_LAUNCH_MSG_FAIL,          /* a process failed: src = rank, aux = wait status or abort code */
	IBC_LAUNCH_MSG_TERMINATE,     /* end the job now */
	IBC_LAUNCH_MSG_DONE,          /* subtree finished; payload = counters */
	IBC_LAUNCH_MSG_MAX_
};

struct ibc_launch_hdr {
	uint8_t version;
	uint8_t type;
	uint32_t len;
	uint32_t src, dst, seq, aux;
};

/* Writes the 24-byte header for h into out. */
void ibc_launch_hdr_encode(const struct ibc_launch_hdr *h, unsigned char out[IBC_LAUNCH_WIRE_HDR]);
/* Parses a header from buf (avail bytes).  IBC_OK when a whole frame
 * (header + payload) is present, IBC_ERR_AGAIN when more bytes are needed,
 * IBC_ERR_PROTO for a bad magic, version or type, or len > max. */
int ibc_launch_hdr_decode(const void *buf, size_t avail, uint32_t max, struct ibc_launch_hdr *out);
const char *ibc_launch_msg_name(int type);

/* A growable byte buffer (also the output queue of a connection). */
struct ibc_launch_buf {
	unsigned char *data;
	size_t len, cap, off; /* off: bytes already consumed from the front */
	int err;              /* latched IBC_ERR_NOMEM */
};
int ibc_launch_buf_append(struct ibc_launch_buf *b, const void *p, size_t n);
void ibc_launch_buf_put_u32(struct ibc_launch_buf *b, uint32_t v);
void ibc_launch_buf_put_u64(struct ibc_launch_buf *b, uint64_t v);
void ibc_launch_buf_put_bytes(struct ibc_launch_buf *b, const void *p, size_t n);
void ibc_launch_buf_put_str(struct ibc_launch_buf *b, const char *s);
/* Appends header + payload as one frame (h->len is set from n). */
int ibc_launch_buf_put_frame(struct ibc_launch_buf *b, struct ibc_launch_hdr *h, const void *payload, size_t n);
void ibc_launch_buf_consume(struct ibc_launch_buf *b, size_t n);
void ibc_launch_buf_free(struct ibc_launch_buf *b);
static inline size_t ibc_launch_buf_avail(const struct ibc_launch_buf *b) { return b->len - b->off; }
/* never NULL (an empty buffer's head is a static byte: no arithmetic on NULL) */
static inline unsigned char *ibc_launch_buf_head(const struct ibc_launch_buf *b)
{
	static unsigned char none;

	return b->data != NULL ? b->data + b->off : &none;
}

/* Bounded reader over a payload. */
struct ibc_launch_rd {
	const unsigned char *p;
	size_t len, pos;
	int err; /* IBC_ERR_PROTO once anything read past the end */
};
void ibc_launch_rd_init(struct ibc_launch_rd *r, const void *p, size_t len);
uint32_t ibc_launch_rd_u32(struct ibc_launch_rd *r);
uint64_t ibc_launch_rd_u64(struct ibc_launch_rd *r);
/* A length-prefixed byte string: returns a pointer into the payload (NULL on error). */
const void *ibc_launch_rd_bytes(struct ibc_launch_rd *r, size_t *len);
/* A byte string copied into a new NUL-terminated string (NULL on error; embedded NUL rejected). */
char *ibc_launch_rd_strdup(struct ibc_launch_rd *r);

#endif
