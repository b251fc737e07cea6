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

onic_status_t onic_ptl_msg_unpack(const void *buf, size_t len, onic_ptl_msg_t *m_p)
{
    onic_ptl_wire_t w;
    onic_ptl_msg_t m;

    if (buf == NULL || len < sizeof(uint64_t) || len > sizeof(w))
        return ONIC_ERR_INVALID_PARAM;
    memset(&w, 0, sizeof(w));
    memcpy(&w, buf, len); /* the buffer may be unaligned */
    memset(&m, 0, sizeof(m));
    m.rlength = LOW48(w.w[0]);
    m.op = (unsigned)(w.w[0] >> 48) & 0xf;
    m.flags = (unsigned)(w.w[0] >> 52) & 0xf;
    m.ac_index = (ptl_ac_index_t)(w.w[0] >> 56);
    /* The op's own length, or the whole header (what the words do not
     * use is ignored). */
    if (len != sizeof(w) && len != onic_ptl_wire_len(m.op, m.flags))
        return ONIC_ERR_INVALID_PARAM;
    m.offset = LOW48(w.w[1]);
    m.pt_index = (ptl_pt_index_t)(w.w[1] >> 48);
    m.match_bits = w.w[2];
    m.md = w.w[4];
    if ((m.flags & ~ONIC_PTL_FLAGS_ALL) != 0)
        return ONIC_ERR_INVALID_PARAM;
    switch (m.op) {
    case ONIC_PTL_OP_PUT:
        m.hdr_data = w.w[3];
        m.eq = len > 32 ? w.w[5] : PTL_EQ_NONE;
        break;
    case ONIC_PTL_OP_GET:
        m.local_offset = w.w[3];
        break;
    case ONIC_PTL_OP_ACK:
        m.mlength = w.w[3];
        m.eq = w.w[5];
        break;
    case ONIC_PTL_OP_REPLY:
        m.mlength = w.w[3];
        if (m.flags & ONIC_PTL_FLAG_LARGE)
            m.cookie = w.w[5];
        else
            m.local_offset = w.w[5];
        break;
    case ONIC_PTL_OP_DONE:
        m.mlength = w.w[3];
        m.cookie = w.w[5];
        break;
    default:
        return ONIC_ERR_INVALID_PARAM;
    }
    /* ACK: a put asks for one, a DONE brings one; LARGE: put, get, reply. */
    if (((m.flags & ONIC_PTL_FLAG_ACK) && m.op != ONIC_PTL_OP_PUT && m.op != ONIC_PTL_OP_DONE) ||
        ((m.flags & ONIC_PTL_FLAG_LARGE) && m.op != ONIC_PTL_OP_PUT && m.op != ONIC_PTL_OP_GET &&
         m.op != ONIC_PTL_OP_REPLY))
        return ONIC_ERR_INVALID_PARAM;
    *m_p = m;
    return ONIC_OK;
}
