/* Messages injected into an ofi endpoint by someone outside the job
 * (onicrun -n 3, ONIC_XPORT=ofi): rank 2 opens a second, raw libfabric
 * endpoint -- an address no rank of the job has -- and sends rank 0 a
 * well-formed onic message whose header names rank 1. Rank 0 must drop and
 * count it, and still get rank 1's real message. Prints "ofi_spoof: passed"
 * per rank; exit status 1 on failure. */
#include "base/clock.h"
#include "base/config.h"
#include "boot/boot.h"
#include "xport/xport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

typedef struct got {
    unsigned from1, forged;
} got_t;

static void on_message(void *arg, uint32_t src, const void *user_hdr, size_t user_len,
                       const void *payload, size_t len)
{
    got_t *g = arg;
    uint64_t tag = 0;

    (void)payload;
    (void)len;
    if (user_len == sizeof(tag))
        memcpy(&tag, user_hdr, sizeof(tag));
    if (src == 1 && tag == 1)
        g->from1++;
    if (tag == 666)
        g->forged++;
}

/* A raw endpoint, not the job's, sending rank 0 a message "from rank 1". */
static int forge(onic_boot_t *b)
{
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    struct fid_fabric *fab = NULL;
    struct fid_domain *dom = NULL;
    struct fid_av *av = NULL;
    struct fid_cq *cq = NULL;
    struct fid_ep *ep = NULL;
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT};
    struct fi_av_attr ava = {.type = FI_AV_TABLE};
    uint8_t addr[ONIC_BOOT_VAL_MAX], msg[16];
    size_t len = sizeof(addr);
    uint64_t tag = 666, deadline;
    fi_addr_t dest;
    struct fi_cq_entry e;
    int ok = 0;

    /* onic's header: sender rank, credits, kind (user), user header length */
    uint32_t src = 1;
    uint16_t credits = 0;
    memcpy(msg, &src, 4);
    memcpy(msg + 4, &credits, 2);
    msg[6] = 0;
    msg[7] = sizeof(tag);
    memcpy(msg + 8, &tag, sizeof(tag));
    if (hints == NULL || onic_boot_get(b, 0, "ofi-addr", addr, &len) != ONIC_OK || len <= 8)
        goto out;
    len -= 8; /* the key secret behind the address */
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    if (fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, hints, &info) != 0 ||
        fi_fabric(info->fabric_attr, &fab, NULL) != 0 ||
        fi_domain(fab, info, &dom, NULL) != 0 || fi_cq_open(dom, &cqa, &cq, NULL) != 0 ||
        fi_av_open(dom, &ava, &av, NULL) != 0 || fi_endpoint(dom, info, &ep, NULL) != 0 ||
        fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) != 0 ||
        fi_ep_bind(ep, &av->fid, 0) != 0 || fi_enable(ep) != 0 ||
        fi_av_insert(av, addr, 1, &dest, 0, NULL) != 1) {
        fprintf(stderr, "ofi_spoof: cannot open the raw endpoint\n");
        goto out;
    }
    deadline = onic_time_ns() + 10000000000ull;
    while (fi_send(ep, msg, sizeof(msg), NULL, dest, NULL) == -FI_EAGAIN) {
        (void)fi_cq_read(cq, &e, 1);
        if (onic_time_ns() > deadline)
            goto out;
    }
    while (fi_cq_read(cq, &e, 1) != 1 && onic_time_ns() < deadline)
        usleep(1000);
    ok = 1;
out:
    if (ep != NULL)
        fi_close(&ep->fid);
    if (av != NULL)
        fi_close(&av->fid);
    if (cq != NULL)
        fi_close(&cq->fid);
    if (dom != NULL)
        fi_close(&dom->fid);
    if (fab != NULL)
        fi_close(&fab->fid);
    if (info != NULL)
        fi_freeinfo(info);
    if (hints != NULL)
        fi_freeinfo(hints);
    return ok;
}

int main(void)
{
    onic_config_t cfg;
    onic_xport_params_t p = {0};
    onic_xport_t *x;
    onic_boot_t *b;
    got_t g = {0};
    uint64_t tag = 1, t;
    int ok = 1;

    if (onic_config_read(&cfg) != ONIC_OK || cfg.size != 3) {
        fprintf(stderr, "ofi_spoof: run me with onicrun -n 3 and ONIC_XPORT=ofi\n");
        return 2;
    }
    p.recv_cb = on_message;
    p.cb_arg = &g;
    p.cfg = &cfg;
    if (onic_xport_open(&p, &x) != ONIC_OK || onic_boot_open(&cfg, &b) != ONIC_OK) {
        fprintf(stderr, "ofi_spoof: rank %u cannot open its endpoint\n", cfg.rank);
        return 1;
    }
    if (cfg.rank == 2) {
        ok = forge(b);
    } else if (cfg.rank == 0) {
        /* The forged message first (it comes within 10 s), then rank 1's
         * real one, sent after a second. */
        fprintf(stderr, "(an error about a dropped message is expected next)\n");
        t = onic_time_ns() + 20000000000ull;
        while ((onic_xport_drops(x) == 0 || g.from1 == 0) && g.forged == 0 &&
               onic_time_ns() < t)
            onic_xport_wait(x, 10000000);
        ok = onic_xport_drops(x) == 1 && g.forged == 0 && g.from1 == 1;
        if (!ok)
            fprintf(stderr, "ofi_spoof: rank 0: %llu drops, %u forged and %u real messages "
                    "delivered\n", (unsigned long long)onic_xport_drops(x), g.forged, g.from1);
    } else {
        sleep(1);
        ok = onic_xport_send(x, 0, &tag, sizeof(tag), NULL, 0) == ONIC_OK;
        /* Kept if it found no room (not connected yet): it leaves by polls. */
        t = onic_time_ns() + 20000000000ull;
        while (onic_xport_backlog(x) > 0 && onic_time_ns() < t)
            onic_xport_wait(x, 10000000);
    }
    /* Everyone done before anyone closes: rank 1's message must get out. */
    (void)onic_boot_fence(b);
    onic_boot_close(b);
    onic_xport_close(x);
    printf("ofi_spoof rank %u: %s\n", cfg.rank, ok ? "passed" : "FAILED");
    return ok ? 0 : 1;
}
