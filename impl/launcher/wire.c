/* Framing and bounded payload encoding for the launcher tree (WIRE.md). */
#include "launcher/wire.h"
#include "core/status.h"

#include <stdlib.h>
#include <string.h>

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void ibc_launch_hdr_encode(const struct ibc_launch_hdr *h, unsigned char out[IBC_LAUNCH_WIRE_HDR])
{
	out[0] = IBC_LAUNCH_WIRE_MAGIC & 0xff;
	out[1] = IBC_LAUNCH_WIRE_MAGIC >> 8;
	out[2] = h->version;
	out[3] = h->type;
	put_le32(out + 4, h->len);
	put_le32(out + 8, h->src);
	put_le32(out + 12, h->dst);
	put_le32(out + 16, h->seq);
	put_le32(out + 20, h->aux);
}

int ibc_launch_hdr_decode(const void *buf, size_t avail, uint32_t max, struct ibc_launch_hdr *out)
{
	const unsigned char *p = buf;

	/* judge what is there as early as possible: a bad magic is an error
	 * even before the whole header arrived */
	if (avail >= 1 && p[0] != (IBC_LAUNCH_WIRE_MAGIC & 0xff))
		return IBC_ERR_PROTO;
	if (avail >= 2 && p[1] != (IBC_LAUNCH_WIRE_MAGIC >> 8))
		return IBC_ERR_PROTO;
	if (avail >= 3 && p[2] != IBC_LAUNCH_WIRE_VERSION)
		return IBC_ERR_PROTO;
	if (avail >= 4 && (p[3] == 0 || p[3] >= IBC_LAUNCH_MSG_MAX_))
		return IBC_ERR_PROTO;
	if (avail >= 8 && get_le32(p + 4) > max)
		return IBC_ERR_PROTO;
	if (avail < IBC_LAUNCH_WIRE_HDR)
		return IBC_ERR_AGAIN;
	out->version = p[2];
	out->type = p[3];
	out->len = get_le32(p + 4);
	out->src = get_le32(p + 8);
	out->dst = get_le32(p + 12);
	out->seq = get_le32(p + 16);
	out->aux = get_le32(p + 20);
	if (avail - IBC_LAUNCH_WIRE_HDR < out->len)
		return IBC_ERR_AGAIN;
	return IBC_OK;
}

const char *ibc_launch_msg_name(int type)
{
	static const char *const names[] = {
		"?", "HELLO", "JOB", "COLL_UP", "COLL_DOWN", "P2P", "PUT", "GET_REQ",
		"GET_RESP", "OUTPUT", "STDIN", "FAIL", "TERMINATE", "DONE",
	};
	if (type <= 0 || type >= IBC_LAUNCH_MSG_MAX_)
		return "?";
	return names[type];
}

int ibc_launch_buf_append(struct ibc_launch_buf *b, const void *p, size_t n)
{
	if (b->err)
		return b->err;
	if (b->off > 0 && b->off == b->len) {
		b->off = 0;
		b->len = 0;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		unsigned char *d;

		if (b->off > 0 && b->len - b->off + n <= b->cap) {
			memmove(b->data, b->data + b->off, b->len - b->off);
			b->len -= b->off;
			b->off = 0;
		} else {
			while (cap < b->len + n)
				cap *= 2;
			d = realloc(b->data, cap);
			if (d == NULL) {
				b->err = IBC_ERR_NOMEM;
				return b->err;
			}
			b->data = d;
			b->cap = cap;
		}
	}
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return IBC_OK;
}

void ibc_launch_buf_put_u32(struct ibc_launch_buf *b, uint32_t v)
{
	unsigned char t[4];

	put_le32(t, v);
	ibc_launch_buf_append(b, t, 4);
}

void ibc_launch_buf_put_u64(struct ibc_launch_buf *b, uint64_t v)
{
	ibc_launch_buf_put_u32(b, (uint32_t)v);
	ibc_launch_buf_put_u32(b, (uint32_t)(v >> 32));
}

void ibc_launch_buf_put_bytes(struct ibc_launch_buf *b, const void *p, size_t n)
{
	ibc_launch_buf_put_u32(b, (uint32_t)n);
	ibc_launch_buf_append(b, p, n);
}

void ibc_launch_buf_put_str(struct ibc_launch_buf *b, const char *s)
{
	ibc_launch_buf_put_bytes(b, s, strlen(s));
}

int ibc_launch_buf_put_frame(struct ibc_launch_buf *b, struct ibc_launch_hdr *h, const void *payload, size_t n)
{
	unsigned char hdr[IBC_LAUNCH_WIRE_HDR];

	h->version = IBC_LAUNCH_WIRE_VERSION;
	h->len = (uint32_t)n;
	ibc_launch_hdr_encode(h, hdr);
	ibc_launch_buf_append(b, hdr, sizeof(hdr));
	return ibc_launch_buf_append(b, payload, n);
}

void ibc_launch_buf_consume(struct ibc_launch_buf *b, size_t n)
{
	b->off += n;
	if (b->off >= b->len) {
		b->off = 0;
		b->len = 0;
	}
}

void ibc_launch_buf_free(struct ibc_launch_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void ibc_launch_rd_init(struct ibc_launch_rd *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->pos = 0;
	r->err = IBC_OK;
}

uint32_t ibc_launch_rd_u32(struct ibc_launch_rd *r)
{
	uint32_t v;

	if (r->err || r->len - r->pos < 4) {
		r->err = IBC_ERR_PROTO;
		return 0;
	}
	v = get_le32(r->p + r->pos);
	r->pos += 4;
	return v;
}

uint64_t ibc_launch_rd_u64(struct ibc_launch_rd *r)
{
	uint64_t lo = ibc_launch_rd_u32(r);
	uint64_t hi = ibc_launch_rd_u32(r);

	return lo | hi << 32;
}

const void *ibc_launch_rd_bytes(struct ibc_launch_rd *r, size_t *len)
{
	uint32_t n = ibc_launch_rd_u32(r);
	const void *p;

	*len = 0;
	if (r->err || r->len - r->pos < n) {
		r->err = IBC_ERR_PROTO;
		return NULL;
	}
	p = r->p + r->pos;
	r->pos += n;
	*len = n;
	return p;
}

char *ibc_launch_rd_strdup(struct ibc_launch_rd *r)
{
	size_t n;
	const char *p = ibc_launch_rd_bytes(r, &n);
	char *s;

	if (p == NULL)
		return NULL;
	if (memchr(p, '\0', n) != NULL) {
		r->err = IBC_ERR_PROTO;
		return NULL;
	}
	s = malloc(n + 1);
	if (s == NULL) {
		r->err = IBC_ERR_NOMEM;
		return NULL;
	}
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}
