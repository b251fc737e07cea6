/* The wire header: six words, laid out in ptl.h. Unpacking checks only what
 * the layout itself can get wrong (size, op, flags); the target side checks
 * every value against its state. */
#include "ptl/ptl.h"

#include <string.h>

#define LOW48(_v) ((_v) & ONIC_PTL_MAX_LEN)

void onic_ptl_msg_pack(const onic_ptl_msg_t *m, onic_ptl_wire_t *w)
{
    memset(w, 0, sizeof(*w));
    w->w[0] = m->match_bits;
    switch (m->op) {
    case ONIC_PTL_OP_PUT:
        w->w[1] = m->hdr_data;
        w->w[3] = m->eq;
        break;
    case ONIC_PTL_OP_GET:
        w->w[1] = m->local_offset;
        break;
    case ONIC_PTL_OP_ACK:
        w->w[1] = m->mlength;
        w->w[3] = m->eq;
        break;
    case ONIC_PTL_OP_REPLY:
        w->w[1] = m->mlength;
        w->w[3] = (m->flags & ONIC_PTL_FLAG_LARGE) ? m->cookie : m->local_offset;
        break;
    case ONIC_PTL_OP_DONE:
        w->w[1] = m->mlength;
        w->w[3] = m->cookie;
        break;
    default:
        break;
    }
    w->w[2] = m->md;
    w->w[4] = LOW48(m->offset) | (uint64_t)(m->pt_index & 0xffff) << 48;
    w->w[5] = LOW48(m->rlength) | (uint64_t)(m->op & 0xf) << 48 |
              (uint64_t)(m->flags & 0xf) << 52 | (uint64_t)(m->ac_index & 0xff) << 56;
}

onic_status_t onic_ptl_msg_unpack(const void *buf, size_t len, onic_ptl_msg_t *m_p)
{
    onic_ptl_wire_t w;
    onic_ptl_msg_t m;

    if (buf == NULL || len != sizeof(w))
        return ONIC_ERR_INVALID_PARAM;
    memcpy(&w, buf, sizeof(w)); /* the buffer may be unaligned */
    memset(&m, 0, sizeof(m));
    m.match_bits = w.w[0];
    m.md = w.w[2];
    m.offset = LOW48(w.w[4]);
    m.pt_index = (ptl_pt_index_t)(w.w[4] >> 48);
    m.rlength = LOW48(w.w[5]);
    m.op = (unsigned)(w.w[5] >> 48) & 0xf;
    m.flags = (unsigned)(w.w[5] >> 52) & 0xf;
    m.ac_index = (ptl_ac_index_t)(w.w[5] >> 56);
    if ((m.flags & ~ONIC_PTL_FLAGS_ALL) != 0)
        return ONIC_ERR_INVALID_PARAM;
    switch (m.op) {
    case ONIC_PTL_OP_PUT:
        m.hdr_data = w.w[1];
        m.eq = w.w[3];
        break;
    case ONIC_PTL_OP_GET:
        m.local_offset = w.w[1];
        break;
    case ONIC_PTL_OP_ACK:
        m.mlength = w.w[1];
        m.eq = w.w[3];
        break;
    case ONIC_PTL_OP_REPLY:
        m.mlength = w.w[1];
        if (m.flags & ONIC_PTL_FLAG_LARGE)
            m.cookie = w.w[3];
        else
            m.local_offset = w.w[3];
        break;
    case ONIC_PTL_OP_DONE:
        m.mlength = w.w[1];
        m.cookie = w.w[3];
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
