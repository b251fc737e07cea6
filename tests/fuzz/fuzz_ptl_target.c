/* libFuzzer target: arbitrary bytes as incoming messages to the Portals
 * target side (onic_ptl_target_recv), against an NI with entries, MDs of
 * every kind of option (an I/O vector too, on portal 3), small event
 * queues, an overflow list and a get waiting for its reply. Each input is a sequence of records:
 *   ctl:1  src = ctl & 7 (the job has 4 ranks: 4..7 are strangers)
 *          0x08 replace the MD word with a live handle, 0x10 the EQ word,
 *          0x20 feed the answer back as the initiator would see it,
 *          0x40 search the overflow headers afterwards,
 *          0x80 a large put's or get's RMA fails (else it succeeds)
 *   hdr:48 the wire header, as is
 *   plen:1 payload bytes that follow (at most what is left)
 * Built only with clang (-DONIC_FUZZ=ON); `make fuzz` runs it. */
#include "../ptl/ptl_harness.h"
#include "base/mem.h"

#include <stdlib.h>

#define NBUF 6

static ptl_md_t desc(void *buf, size_t len, int threshold, unsigned options, ptl_handle_eq_t eq)
{
    ptl_md_t md = {buf, len, threshold, 0, options, NULL, eq};
    return md;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const ptl_process_id_t any = {PTL_NID_ANY, PTL_PID_ANY};
    ptl_handle_ni_t nih;
    onic_ptl_ni_t *ni;
    ptl_handle_eq_t eq[2];
    ptl_handle_me_t me[4];
    ptl_handle_md_t md[6];
    uint8_t *buf[NBUF];
    ptl_md_t d;
    ptl_ni_limits_t lim = {64, 64, 8, 7, 7, 4, 64, 0};
    ptl_md_iovec_t v[3];
    ptl_handle_me_t vme;
    ptl_handle_md_t vmd;

    ni = harness_open(0, 4, "hash", &lim, &nih);
    if (ni == NULL)
        abort();
    for (int i = 0; i < NBUF; i++)   /* separate blocks: ASan sees any overrun */
        buf[i] = malloc(64);
    PtlEQAlloc(nih, 2, PTL_EQ_HANDLER_NONE, &eq[0]);
    PtlEQAlloc(nih, 16, PTL_EQ_HANDLER_NONE, &eq[1]);
    PtlMEAttach(nih, 1, any, 0, 0xff, PTL_UNLINK, PTL_INS_AFTER, &me[0]);
    PtlMDAttach(me[0], desc(buf[0], 64, 3, PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_TRUNCATE, eq[0]),
                PTL_UNLINK, &md[0]);
    PtlMDAttach(me[0], desc(buf[1], 64, PTL_MD_THRESH_INF,
                            PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_TRUNCATE, eq[1]),
                PTL_RETAIN, &md[1]);
    PtlMEAttach(nih, 2, ((ptl_process_id_t){0, 1}), 5, 0, PTL_RETAIN, PTL_INS_BEFORE, &me[1]);
    d = desc(buf[2], 64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MAX_SIZE | PTL_MD_TRUNCATE,
             eq[1]);
    d.max_size = 20;
    PtlMDAttach(me[1], d, PTL_UNLINK, &md[2]);
    PtlMEAttachOverflow(nih, 1, any, 0, ~(ptl_match_bits_t)0, PTL_RETAIN, PTL_INS_AFTER, &me[2]);
    PtlMDAttach(me[2], desc(buf[3], 64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_TRUNCATE, eq[1]),
                PTL_RETAIN, &md[3]);
    PtlMDBind(nih, desc(buf[4], 64, 4, 0, eq[0]), PTL_UNLINK, &md[4]);
    PtlGetRegion(md[4], 8, 16, ((ptl_process_id_t){0, 2}), 1, 0, 3, 0);
    md[5] = PTL_EQ_NONE;
    PtlACEntry(nih, 3, ((ptl_process_id_t){0, 2}), PTL_UID_ANY, PTL_JID_ANY, 2);
    /* An I/O vector MD with gaps between its entries (49 bytes of buf[5]),
     * every operation, offsets from the request. */
    v[0] = (ptl_md_iovec_t){buf[5], 10};
    v[1] = (ptl_md_iovec_t){buf[5] + 20, 30};
    v[2] = (ptl_md_iovec_t){buf[5] + 55, 9};
    PtlMEAttach(nih, 3, any, 0, 0xff, PTL_RETAIN, PTL_INS_AFTER, &vme);
    PtlMDAttach(vme, desc(v, 3, PTL_MD_THRESH_INF,
                          PTL_MD_IOVEC | PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE |
                              PTL_MD_TRUNCATE, eq[1]),
                PTL_RETAIN, &vmd);

    while (size >= 2 + sizeof(onic_ptl_wire_t)) {
        uint8_t ctl = data[0];
        onic_ptl_wire_t w;
        onic_ptl_out_t out;
        size_t plen;

        memcpy(&w, data + 1, sizeof(w));
        plen = data[1 + sizeof(w)];
        data += 2 + sizeof(w);
        size -= 2 + sizeof(w);
        if (plen > size)
            plen = size;
        if (ctl & 0x08)
            w.w[4] = md[w.w[4] % 6];
        if (ctl & 0x10)
            w.w[5] = eq[w.w[5] % 2];
        /* An odd payload length byte sends only the first 32 bytes of the
         * header: a small put's own length, which takes its straight line. */
        onic_ptl_target_recv(ni, ctl & 7, &w, (data[-1] & 1) ? 32 : sizeof(w),
                             plen > 0 ? data : NULL, plen, &out);
        while (out.rma) {
            /* A large put or get: end its RMA at once, as if the transport
             * had moved the data (0x80: as if it had failed); an I/O
             * vector's asks for its next piece until the last. */
            onic_ptl_target_rma_done(ni, out.rma_ctx, (ctl & 0x80) ? ONIC_ERR_IO : ONIC_OK, &out);
        }
        if (out.send && (ctl & 0x20)) {
            onic_ptl_out_t in = out;
            onic_ptl_target_recv(ni, in.dest, &in.hdr, sizeof(in.hdr), in.payload, in.len, &out);
        }
        if (ctl & 0x40) {
            ptl_handle_me_t nme;
            ptl_handle_md_t nmd;
            ptl_ovf_header_t hdr;
            int rc = PtlMEAttachSearch(nih, 1, any, w.w[0], w.w[1], PTL_UNLINK, PTL_INS_BEFORE,
                                       desc(buf[2], 8, 1, PTL_MD_OP_PUT, eq[1]), PTL_UNLINK, &nme,
                                       &nmd, &hdr);
            /* A kept header must describe bytes inside its overflow MD. */
            if (rc == PTL_OVF_MATCHED && hdr.mlength > 0 &&
                ((uint8_t *)hdr.start < buf[3] || (uint8_t *)hdr.start + hdr.mlength > buf[3] + 64))
                abort();
        }
        data += plen;
        size -= plen;
        if (ni->dropped > ni->drops[0] + ni->drops[1] + ni->drops[2] + ni->drops[3] +
                              ni->drops[4] + ni->drops[5] + ni->drops[6] + ni->drops[7] +
                              ni->drops[8] + ni->drops[9])
            abort();
    }
    PtlFini();
    for (int i = 0; i < NBUF; i++)
        free(buf[i]);
    return 0;
}
