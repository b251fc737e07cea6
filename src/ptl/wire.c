/* The wire header: six words, laid out in ptl.h, of which a message sends
 * only those its op uses (a put without ack: four, so an 8-byte put is one
 * cache line on shm). Unpacking checks only what the layout itself can get
 * wrong (size, op, flags); the target side checks every value against its
 * state. */
#include "ptl/ptl.h"

#include <string.h>

#define LOW48(_v) ((_v) & ONIC_PTL_MAX_LEN)

size_t onic_ptl_wire_len(unsigned op, unsigned flags)
{
    switch (op) {
    case ONIC_PTL_OP_PUT:
        /* Only an ack or a large put needs the MD and event queue words. */
        return (flags & (ONIC_PTL_FLAG_ACK | ONIC_PTL_FLAG_LARGE)) ? 48 : 32;
    case ONIC_PTL_OP_GET:
        return 40;
    default:
        return 48;
    }
}

size_t onic_ptl_msg_pack(const onic_ptl_msg_t *m, onic_ptl_wire_t *w)
{
    w->w[3] = w->w[5] = 0;
    w->w[0] = LOW48(m->rlength) | (uint64_t)(m->op & 0xf) << 48 |
              (uint64_t)(m->flags & 0xf) << 52 | (uint64_t)(m->ac_index & 0xff) << 56;
    w->w[1] = LOW48(m->offset) | (uint64_t)(m->pt_index & 0xffff) << 48;
    w->w[2] = m->match_bits;
    w->w[4] = m->md;
    switch (m->op) {
    case ONIC_PTL_OP_PUT:
        w->w[3] = m->hdr_data;
        w->w[5] = m->eq;
        break;
    case ONIC_PTL_OP_GET:
        w->w[3] = m->local_offset;
        break;
    case ONIC_PTL_OP_ACK:
        w->w[3] = m->mlength;
        w->w[5] = m->eq;
        break;
    case ONIC_PTL_OP_REPLY:
        w->w[3] = m->mlength;
        w->w[5] = (m->flags & ONIC_PTL_FLAG_LARGE) ? m->cookie : m->local_offset;
        break;
    case ONIC_PTL_OP_DONE:
        w->w[3] = m->mlength;
        w->w[5] = m->cookie;
        break;
    default:
        break;
    }
    return onic_ptl_wire_len(m->op, m->flags);
}

/* Read word i of the header, zero if the header is shorter. */
static inline uint64_t wire_word(const unsigned char *buf, size_t len, unsigned i)
{
    uint64_t v = 0;

    if (len >= (i + 1) * sizeof(v))
        memcpy(&v, buf + i * sizeof(v), sizeof(v)); /* the buffer may be unaligned */
    return v;
}

onic_status_t onic_ptl_msg_unpack(const void *buf, size_t len, onic_ptl_msg_t *m_p)
{
    const unsigned char *b = buf;
    uint64_t w0, w3, w5;
    unsigned op, flags;

    /* Runs for every message: no copy of the header, no memset; every field
     * of *m_p is written once, and only after the checks passed. */
    if (buf == NULL || len < sizeof(uint64_t) || len > sizeof(onic_ptl_wire_t))
        return ONIC_ERR_INVALID_PARAM;
    w0 = wire_word(b, len, 0);
    /* Most messages are small puts without ack: their own four words, read
     * straight (op PUT with flags 0 needs no other check). */
    if (len == 32 && (w0 >> 48 & 0xff) == ONIC_PTL_OP_PUT) {
        uint64_t w[4];

        memcpy(w, b, sizeof(w));
        m_p->op = ONIC_PTL_OP_PUT;
        m_p->flags = 0;
        m_p->rlength = LOW48(w0);
        m_p->ac_index = (ptl_ac_index_t)(w0 >> 56);
        m_p->offset = LOW48(w[1]);
        m_p->pt_index = (ptl_pt_index_t)(w[1] >> 48);
        m_p->match_bits = w[2];
        m_p->hdr_data = w[3];
        m_p->md = 0;
        m_p->mlength = m_p->local_offset = m_p->cookie = 0;
        m_p->eq = PTL_EQ_NONE;
        return ONIC_OK;
    }
    op = (unsigned)(w0 >> 48) & 0xf;
    flags = (unsigned)(w0 >> 52) & 0xf;
    /* The op's own length, or the whole header (what the words do not
     * use is ignored). */
    if ((len != sizeof(onic_ptl_wire_t) && len != onic_ptl_wire_len(op, flags)) ||
        (flags & ~ONIC_PTL_FLAGS_ALL) != 0 || op < ONIC_PTL_OP_PUT || op > ONIC_PTL_OP_DONE)
        return ONIC_ERR_INVALID_PARAM;
    /* ACK: a put asks for one, a DONE brings one; LARGE: put, get, reply;
     * FAIL: a DONE or large reply whose RMA failed. */
    if (((flags & ONIC_PTL_FLAG_ACK) && op != ONIC_PTL_OP_PUT && op != ONIC_PTL_OP_DONE) ||
        ((flags & ONIC_PTL_FLAG_LARGE) && op != ONIC_PTL_OP_PUT && op != ONIC_PTL_OP_GET &&
         op != ONIC_PTL_OP_REPLY) ||
        ((flags & ONIC_PTL_FLAG_FAIL) && op != ONIC_PTL_OP_DONE &&
         !(op == ONIC_PTL_OP_REPLY && (flags & ONIC_PTL_FLAG_LARGE))))
        return ONIC_ERR_INVALID_PARAM;
    w3 = wire_word(b, len, 3);
    w5 = wire_word(b, len, 5);
    m_p->op = op;
    m_p->flags = flags;
    m_p->rlength = LOW48(w0);
    m_p->ac_index = (ptl_ac_index_t)(w0 >> 56);
    m_p->offset = LOW48(wire_word(b, len, 1));
    m_p->pt_index = (ptl_pt_index_t)(wire_word(b, len, 1) >> 48);
    m_p->match_bits = wire_word(b, len, 2);
    m_p->md = wire_word(b, len, 4);
    m_p->hdr_data = op == ONIC_PTL_OP_PUT ? w3 : 0;
    m_p->mlength = op >= ONIC_PTL_OP_ACK ? w3 : 0;
    m_p->local_offset = 0;
    m_p->cookie = 0;
    m_p->eq = 0;
    switch (op) {
    case ONIC_PTL_OP_PUT:
        /* Only an ack or a large put sends its event queue word. */
        m_p->eq = len > 32 ? w5 : PTL_EQ_NONE;
        break;
    case ONIC_PTL_OP_GET:
        m_p->local_offset = w3;
        break;
    case ONIC_PTL_OP_ACK:
        m_p->eq = w5;
        break;
    case ONIC_PTL_OP_REPLY:
        if (flags & ONIC_PTL_FLAG_LARGE)
            m_p->cookie = w5;
        else
            m_p->local_offset = w5;
        break;
    default: /* DONE */
        m_p->cookie = w5;
        break;
    }
    return ONIC_OK;
}
