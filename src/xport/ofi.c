/* ofi: the processes of a job on other nodes, through libfabric reliable
 * datagram endpoints (FI_EP_RDM) -- tcp, verbs, whatever the provider is
 * (ONIC_OFI_PROVIDER, else FI_PROVIDER, else libfabric's first choice; the
 * interface by the provider's own variables, FI_TCP_IFACE for tcp).
 *
 * Messages: one libfabric send each, an 8-byte header (sender, user header
 * length, kind, credits returned, number), the user header, the payload.
 * Bundles: inside a bundle the layer above opened (ONIC_OFI_BUNDLE), a
 * message to a peer that already had one in this bundle is held in a send
 * buffer of that peer's, and the ones after it join it, each behind a
 * record header, until the buffer is full or the next poll, RMA with the
 * peer or end of the bundle sends them as one libfabric message: one system
 * call and one completion at each end for many messages. The first message
 * of a bundle to each peer leaves at once, so a lone send waits for
 * nothing; sends made while a poll runs are never held. A bundle
 * takes one credit and one number, and is handed up record by record within
 * the poll's budget.
 * Messages to one peer are delivered in order (FI_ORDER_SAS is required)
 * but providers may complete them in another (tcp's rxm promises no
 * completion order), so each is numbered per sender and receiver and one
 * that completes early waits in the sender's window (xport/seqwin.h) until
 * those before it are handed up. A process
 * may have ONIC_OFI_CREDITS messages in flight to each peer; the receiver
 * posts that many buffers per peer it serves, plus two for credit returns,
 * and gives credits back in the header of its own messages or, when half
 * are owed, in a message of their own. So every message finds a posted
 * buffer and none is ever dropped, whatever the provider does without one.
 * (Receive memory grows with the peers on other nodes: credits x 2 KB each.)
 *
 * RMA: libfabric reads and writes of memory registered under a key made from
 * the front end's key (so the key a peer names is the same for shm and ofi:
 * no provider-chosen keys, and a forged one names nothing). Providers whose data progress is manual
 * move RMA only while the target calls into libfabric: every poll reads the
 * completion queue, and a wait polls (or sleeps on the queue's file
 * descriptor, which such providers wake when data arrives), so a process
 * blocked in onic keeps serving its peers' reads.
 *
 * Waiting (ONIC_OFI_WAIT): a queue with a descriptor to sleep on costs every
 * message a signal from the provider (about 2 us with tcp), worth it only
 * when processes must sleep for others to run; by default the queue has one
 * only when this node's processes outnumber its cores, and otherwise a wait
 * that has spun and yielded naps (up to 50 us) between polls.
 *
 * Addresses: each process puts its endpoint name (and its key secret) in
 * the launcher's store before the job's fence; every served peer's is looked
 * up and inserted at the first poll or send, so that FI_SOURCE can name
 * each sender from its first message.
 * Every message's sender is the address the provider reports (FI_SOURCE),
 * which must be the address of the rank its header names, so nobody outside
 * the job injects messages as a rank. Everything a peer sent is checked
 * before use: a malformed message is
 * dropped and counted, and its sender's messages dropped from then on
 * (`malformed`). A peer we cannot reach (its address cannot be used, or a
 * send to it failed) is `unreachable`: our sends to it fail with an error,
 * but what it sends us is still delivered.
 *
 * Loading: libfabric is opened (base/dl.h) by the first endpoint open, so
 * a job that stays on one node never loads it nor the providers' libraries
 * it pulls in. Only the functions libfabric exports are called through
 * ofi_fn; the rest of its API (fi_domain, fi_send, fi_cq_read, ...) is
 * inline wrappers over the objects' ops tables in its headers. */
#include "xport/seqwin.h"
#include "xport/transport.h"

#include "base/clock.h"
#include "base/dl.h"
#include "base/log.h"
#include "base/mem.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

/* libfabric's exported functions onic calls, resolved by onic_xport_ofi_load. */
static struct ofi_fn {
    __typeof__(fi_getinfo)  *getinfo;
    __typeof__(fi_freeinfo) *freeinfo;
    __typeof__(fi_dupinfo)  *dupinfo;   /* fi_allocinfo is fi_dupinfo(NULL) */
    __typeof__(fi_fabric)   *fabric;
    __typeof__(fi_strerror) *strerror;
} ofi_fn;

/* Each at the version the build's libfabric binds by default, as a link
 * would (CMakeLists.txt reads them from the library): a newer libfabric
 * keeps the old versions, with the structures the headers describe. */
static const onic_dl_sym_t ofi_syms[] = {
    {"fi_getinfo",  ONIC_OFI_VER_fi_getinfo,  &ofi_fn.getinfo},
    {"fi_freeinfo", ONIC_OFI_VER_fi_freeinfo, &ofi_fn.freeinfo},
    {"fi_dupinfo",  ONIC_OFI_VER_fi_dupinfo,  &ofi_fn.dupinfo},
    {"fi_fabric",   ONIC_OFI_VER_fi_fabric,   &ofi_fn.fabric},
    {"fi_strerror", ONIC_OFI_VER_fi_strerror, &ofi_fn.strerror},
};

static onic_dl_lib_t ofi_lib = {
    .what      = "libfabric",
    .file      = "libfabric.so.1",
    .package   = "libfabric1",
    .needed_by = "the ofi transport (a job spanning nodes, or ONIC_XPORT=ofi)",
    .var       = "ONIC_OFI_LIB",
    .syms      = ofi_syms,
    .nsyms     = sizeof(ofi_syms) / sizeof(ofi_syms[0]),
};

onic_status_t onic_xport_ofi_load(const onic_config_t *cfg)
{
    return onic_dl_load(&ofi_lib, cfg->ofi_lib);
}

#define OFI_VERSION     FI_VERSION(1, 5)
#define OFI_SECRET_LEN  8    /* behind the address in the store: see ofi_key */
#define OFI_ADDR_MAX    (ONIC_BOOT_VAL_MAX - OFI_SECRET_LEN)
#define OFI_TX_BUFS     64   /* copies of messages too big to inject, in flight */
#define OFI_RMA_OPS     64   /* RMA operations in flight, all peers */
#define OFI_RMA_WINDOW  16   /* ... with one peer */
#define OFI_CQ_BATCH    32

enum { OFI_KIND_USER = 0, OFI_KIND_CREDIT = 1, OFI_KIND_BUNDLE = 2 };

/* 8 bytes, so that an 8-byte MPI message still fits tcp's 64-byte inject. */
typedef struct ofi_wire {
    uint32_t who;       /* the sender's rank (bits 0-23), user header length (24-29), kind (30-31) */
    uint16_t credits;   /* credits the sender gives back */
    uint16_t seq;       /* user messages: this one's number from sender to receiver */
} ofi_wire_t;

#define OFI_RANK_BITS   24
#define OFI_RANK_MAX    (1u << OFI_RANK_BITS)
#define OFI_WHO(_src, _ulen, _kind) \
    ((uint32_t)(_src) | (uint32_t)(_ulen) << OFI_RANK_BITS | (uint32_t)(_kind) << 30)
#define OFI_SRC(_w)     ((_w).who & (OFI_RANK_MAX - 1))
#define OFI_ULEN(_w)    (((_w).who >> OFI_RANK_BITS) & 63u)
#define OFI_KIND(_w)    ((_w).who >> 30)

static_assert(sizeof(ofi_wire_t) == 8, "the ofi header is 8 bytes");

/* In a bundle, before each message's user header and payload; each record
 * starts 8-byte aligned. */
typedef struct ofi_rec {
    uint16_t len;       /* payload bytes */
    uint8_t  ulen;      /* user header bytes */
    uint8_t  zero[5];
} ofi_rec_t;

static_assert(sizeof(ofi_rec_t) == 8, "a bundle record's header is 8 bytes");
#define OFI_ALIGN8(_n) (((size_t)(_n) + 7) & ~(size_t)7)
static_assert(ONIC_XPORT_USER_HDR < 64, "the user header length fits 6 bits");

#define OFI_MSG_MAX (sizeof(ofi_wire_t) + ONIC_XPORT_USER_HDR + ONIC_XPORT_MAX_PAYLOAD)
#define OFI_BUF_SIZE ((OFI_MSG_MAX + 63) / 64 * 64)
/* The largest message must fit an empty bundle too. */
static_assert(sizeof(ofi_wire_t) + OFI_ALIGN8(sizeof(ofi_rec_t) + ONIC_XPORT_USER_HDR +
                                              ONIC_XPORT_MAX_PAYLOAD) <= OFI_BUF_SIZE,
              "a bundle holds the largest message");

/* What a completion's op_context points to: a receive buffer, a send copy
 * or an RMA operation. The fi_context2 comes first for providers that want
 * FI_CONTEXT / FI_CONTEXT2. */
enum { OFI_CTX_RX = 1, OFI_CTX_TX, OFI_CTX_RMA };

typedef struct ofi_ctx {
    struct fi_context2 fi;
    uint8_t            type;
    uint32_t           peer;    /* TX and RMA */
    uint32_t           next;    /* free list */
    uint32_t           len;     /* RX held or a bundle: the message's length; TX bundle: records */
    uint32_t           off;     /* RX bundle: its next record; TX bundle: bytes so far */
    uint32_t           busy;    /* RX bundle: callbacks of its records running */
    void              *user;    /* RMA: the front end's ctx */
    uint8_t           *buf;     /* RX and TX */
} ofi_ctx_t;

typedef struct ofi_peer {
    fi_addr_t addr;
    uint8_t   resolved;
    uint8_t   unreachable; /* its address failed or a send to it did: sends fail */
    uint8_t   malformed;   /* it sent something malformed: its messages are dropped */
    uint8_t   credit_due;  /* a credit message could not go out yet */
    uint32_t  credits;     /* messages we may still send it */
    uint32_t  owed;        /* messages of its we consumed and not yet credited */
    uint32_t  window;      /* RMA operations in flight with it */
    uint16_t  tx_seq;      /* the number of our next message to it */
    uint32_t  stage;       /* the send buffer holding a bundle for it; OFI_NONE: none */
    uint32_t  sent_bundle; /* the bundle in which a message to it last left or was held */
    ofi_ctx_t *cur;        /* its bundle being handed up; NULL: none */
    onic_seqwin_t rx_win;  /* its messages that completed before their turn */
    uint8_t   release_due; /* some are due now, left for the next poll's budget */
    uint64_t  stalled_ns;  /* when a send first found no credit; 0: not waiting */
    uint64_t  secret;      /* its key secret, from the store with its address */
} ofi_peer_t;

typedef struct ofi_mr {
    uint64_t       id;
    struct fid_mr *mr;
} ofi_mr_t;

typedef struct ofi_state {
    size_t          max_payload;  /* ONIC_OFI_EAGER_LIMIT: what a message carries */
    uint32_t           rank, size, credits;
    uint64_t           send_timeout_ns; /* 0: wait for credits forever */
    uint64_t           secret;      /* mixed into our memory keys; only the job knows it */
    int                resolved_all; /* every served peer is in the address vector */
    int                opened;      /* open finished: close drains first */
    struct fi_info    *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av     *av;
    struct fid_cq     *cq;
    struct fid_ep     *ep;
    int                wait_fd;     /* -1: the queue has none; waits poll */
    int                virt_addr;   /* RMA addresses are virtual, not offsets */
    int                write_flags; /* FI_DELIVERY_COMPLETE where sends may pass writes */
    size_t             inject_max;
    onic_boot_t       *boot;
    const uint8_t     *serve;
    onic_xport_notify_t *notify;
    ofi_peer_t        *peers;       /* by rank */
    uint8_t           *rx_mem;
    ofi_ctx_t         *rx;          /* nrx receive buffers */
    uint32_t           nrx;
    uint8_t           *tx_mem;
    ofi_ctx_t          tx[OFI_TX_BUFS];
    uint32_t           tx_free;     /* list head, UINT32_MAX when empty */
    ofi_ctx_t          rma[OFI_RMA_OPS];
    uint32_t           rma_free;
    ofi_mr_t          *mrs;
    size_t             nmrs, mrs_cap;
    uint32_t           credit_pending;  /* peers with credit_due set */
    int                bundle_cfg;  /* ONIC_OFI_BUNDLE */
    int                bundle_on;   /* the layer above opened a bundle (and bundle_cfg) */
    uint32_t           bundle_id;   /* bundles opened so far */
    unsigned           in_poll;     /* sends from callbacks inside a poll are not held */
    uint32_t           staged[OFI_TX_BUFS]; /* peers whose stage holds a bundle */
    uint32_t           nstaged;
    uint64_t           bundled;     /* messages that left in a bundle with others */
    int                held_lost;   /* a bundle held for a peer was dropped with it since
                                     * the layer above opened its bundle */
    uint32_t           release_pending; /* peers with release_due set */
    /* Completions read but not yet handled, oldest first: a callback's send
     * may poll again, and the nested poll must take the next one, not read
     * past it. */
    struct fi_cq_msg_entry cqe[OFI_CQ_BATCH];
    fi_addr_t          cqsrc[OFI_CQ_BATCH]; /* who sent each (FI_SOURCE) */
    unsigned           cq_head, cq_tail;
    uint64_t           drops;
} ofi_state_t;

#define OFI_NONE UINT32_MAX

/* A send buffer back on the free list. */
static void ofi_tx_free(ofi_state_t *s, ofi_ctx_t *c)
{
    c->next = s->tx_free;
    s->tx_free = (uint32_t)(c - s->tx);
}

static uint64_t ofi_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The libfabric key of a registration: its id, address and length mixed
 * with the owner's secret, so a peer naming a live id with another range
 * names no key at all and the target's provider refuses it -- the check
 * mreg_find makes for shm, made by the network card. The secret (64 random
 * bits per process, published in the launcher's store beside the address)
 * means only the job's processes can compute a key: ids, addresses and
 * lengths are predictable. The mix is not a cryptographic MAC: someone who
 * sees keys on the wire could work the secret out; it keeps out hosts that
 * only reach the port. */
static uint64_t ofi_key(const onic_xport_mkey_t *k, uint64_t secret)
{
    uint64_t z = k->id ^ (k->addr * 0x9e3779b97f4a7c15ull) ^ (k->len * 0xbf58476d1ce4e5b9ull);

    return ofi_mix(ofi_mix(z + secret) ^ secret);
}

/* What a failed RMA means for the caller: a key or range the owner does not
 * have is the caller's mistake; anything else the network's. */
static onic_status_t ofi_rma_status(int err)
{
    return err == FI_EACCES || err == FI_EKEYREJECTED || err == FI_EINVAL || err == FI_ENOKEY
               ? ONIC_ERR_INVALID_PARAM : ONIC_ERR_IO;
}

static void ofi_perror(const char *what, int rc)
{
    onic_error("ofi: %s failed: %s (%d)", what, ofi_fn.strerror(-rc), rc);
}

static void ofi_close_fid(void *fid)
{
    if (fid != NULL)
        fi_close((struct fid *)fid);
}

static void ofi_credit_send(ofi_state_t *s, uint32_t peer);
static onic_status_t ofi_flush_all(ofi_state_t *s);

#define OFI_CLOSE_TIMEOUT_NS (5ull * 1000000000ull)

/* Before the endpoint goes: what we sent must leave (fi_close may discard
 * queued sends) and credits due must go out, so peers still sending to us
 * are not left waiting. Bounded, for peers already gone. Messages arriving
 * meanwhile are not delivered: the layer above has closed. */
static void ofi_endpoint_drain(ofi_state_t *s)
{
    uint64_t deadline = onic_time_ns() + OFI_CLOSE_TIMEOUT_NS;

    for (; s->cq_head != s->cq_tail; s->cq_head++) { /* read, not yet handled */
        ofi_ctx_t *c = s->cqe[s->cq_head].op_context;
        if (c != NULL && c->type == OFI_CTX_TX) {
            ofi_tx_free(s, c);
        }
    }
    for (;;) {
        struct fi_cq_msg_entry e[OFI_CQ_BATCH];
        unsigned nfree = 0, due = 0;
        ssize_t got;
        if (s->nstaged > 0)
            (void)ofi_flush_all(s);
        for (uint32_t i = s->tx_free; i != OFI_NONE && nfree <= OFI_TX_BUFS; i = s->tx[i].next)
            nfree++;
        for (uint32_t r = 0; r < s->size && s->credit_pending > 0; r++) {
            if (!s->peers[r].credit_due || s->peers[r].unreachable)
                continue;
            ofi_credit_send(s, r);
            due += s->peers[r].credit_due;
        }
        if ((nfree == OFI_TX_BUFS && due == 0 && s->nstaged == 0) || onic_time_ns() > deadline)
            break;
        got = fi_cq_read(s->cq, e, OFI_CQ_BATCH);
        if (got == -FI_EAVAIL) {
            struct fi_cq_err_entry err;
            memset(&err, 0, sizeof(err));
            if (fi_cq_readerr(s->cq, &err, 0) == 1 && err.op_context != NULL &&
                ((ofi_ctx_t *)err.op_context)->type == OFI_CTX_TX) {
                ofi_ctx_t *c = err.op_context;
                ofi_tx_free(s, c);
            }
            continue;
        }
        for (ssize_t i = 0; i < got; i++) {
            ofi_ctx_t *c = e[i].op_context;
            if (c != NULL && c->type == OFI_CTX_TX) {
                ofi_tx_free(s, c);
            }
        }
    }
}

static void ofi_endpoint_close(void *state)
{
    ofi_state_t *s = state;

    if (s == NULL)
        return;
    if (s->opened)
        ofi_endpoint_drain(s);
    ofi_close_fid(s->ep);
    for (size_t i = 0; i < s->nmrs; i++)
        ofi_close_fid(s->mrs[i].mr);
    ofi_close_fid(s->av);
    ofi_close_fid(s->cq);
    ofi_close_fid(s->domain);
    ofi_close_fid(s->fabric);
    if (s->info != NULL)
        ofi_fn.freeinfo(s->info);
    onic_free(s->mrs);
    for (uint32_t r = 0; s->peers != NULL && r < s->size; r++)
        onic_seqwin_fini(&s->peers[r].rx_win);
    onic_free(s->peers);
    onic_free(s->rx);
    onic_free(s->rx_mem);
    onic_free(s->tx_mem);
    onic_free(s);
}

/* A provider that gives reliable, ordered datagrams with RMA, lets us
 * choose memory keys and takes rx_size posted receives (0: any number). */
static struct fi_info *ofi_hints(const onic_config_t *cfg, size_t rx_size)
{
    struct fi_info *hints = ofi_fn.dupinfo(NULL);

    if (hints == NULL)
        return NULL;
    hints->ep_attr->type = FI_EP_RDM;
    /* FI_SOURCE: every message's sender as the provider saw it, so a header
     * naming another rank is caught. */
    hints->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE |
                  FI_SOURCE;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
    hints->rx_attr->size = rx_size;
    if (cfg->ofi_provider[0] != '\0') {
        hints->fabric_attr->prov_name = strdup(cfg->ofi_provider);
        if (hints->fabric_attr->prov_name == NULL) {
            ofi_fn.freeinfo(hints);
            return NULL;
        }
    }
    return hints;
}

/* The receive queue must hold every buffer posted at once (nrx): posting
 * more than it holds waits forever. */
static onic_status_t ofi_rx_size_error(ofi_state_t *s, size_t have)
{
    uint32_t peers = s->nrx / (s->credits + 2);
    size_t fit = peers > 0 ? have / peers : 0;

    onic_error("ofi: the %s provider cannot keep %u receive buffers posted (%u peers on other "
               "nodes x (ONIC_OFI_CREDITS=%u + 2)); its queue holds %zu: lower "
               "ONIC_OFI_CREDITS to at most %zu",
               s->info != NULL ? s->info->fabric_attr->prov_name : "chosen", s->nrx, peers,
               s->credits, have, fit > 2 ? fit - 2 : 0);
    return ONIC_ERR_NO_RESOURCE;
}

static onic_status_t ofi_getinfo(ofi_state_t *s, const onic_config_t *cfg)
{
    struct fi_info *hints = ofi_hints(cfg, s->nrx);
    int rc;

    if (hints == NULL)
        return ONIC_ERR_NO_MEMORY;
    rc = ofi_fn.getinfo(OFI_VERSION, NULL, NULL, 0, hints, &s->info);
    ofi_fn.freeinfo(hints);
    if ((rc != 0 || s->info == NULL) && s->nrx > 0 && (hints = ofi_hints(cfg, 0)) != NULL) {
        /* Is it only the queue's size? Then say so. */
        struct fi_info *any = NULL;
        int rc2 = ofi_fn.getinfo(OFI_VERSION, NULL, NULL, 0, hints, &any);
        ofi_fn.freeinfo(hints);
        if (rc2 == 0 && any != NULL && any->rx_attr->size < s->nrx) {
            s->info = any;
            return ofi_rx_size_error(s, any->rx_attr->size);
        }
        if (any != NULL)
            ofi_fn.freeinfo(any);
    }
    if (rc != 0 || s->info == NULL) {
        onic_error("ofi: no libfabric provider%s%s offers reliable datagrams with ordered "
                   "messages, RMA, senders' addresses (FI_SOURCE) and keys chosen by onic: "
                   "%s (%d); see fi_info, and set "
                   "ONIC_OFI_PROVIDER or FI_PROVIDER to one that does (tcp does)",
                   cfg->ofi_provider[0] != '\0' ? " named " : "", cfg->ofi_provider,
                   ofi_fn.strerror(-rc), rc);
        s->info = NULL;
        return ONIC_ERR_UNSUPPORTED;
    }
    s->virt_addr = (s->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    s->write_flags = (s->info->tx_attr->msg_order & FI_ORDER_SAW) ? 0 : FI_DELIVERY_COMPLETE;
    s->inject_max = s->info->tx_attr->inject_size;
    if (s->info->rx_attr->size < s->nrx)
        return ofi_rx_size_error(s, s->info->rx_attr->size);
    if (s->info->domain_attr->mr_key_size < sizeof(uint64_t)) {
        onic_error("ofi: the %s provider's memory keys have %zu bytes; onic needs 8",
                   s->info->fabric_attr->prov_name, s->info->domain_attr->mr_key_size);
        return ONIC_ERR_UNSUPPORTED;
    }
    onic_info("ofi: provider %s, fabric %s, domain %s", s->info->fabric_attr->prov_name,
              s->info->fabric_attr->name, s->info->domain_attr->name);
    return ONIC_OK;
}

#define OFI_POST_TIMEOUT_NS (10ull * 1000000000ull)

static onic_status_t ofi_post_rx(ofi_state_t *s, ofi_ctx_t *c)
{
    uint64_t deadline = 0;
    ssize_t rc;

    /* Nothing else to do while the receive queue is busy: it is sized for
     * all the buffers, so EAGAIN only means "progress first" -- for a
     * while; a provider that never takes it would hang us. */
    while ((rc = fi_recv(s->ep, c->buf, OFI_BUF_SIZE, NULL, FI_ADDR_UNSPEC, c)) == -FI_EAGAIN) {
        uint64_t now = onic_time_ns();
        if (deadline == 0) {
            deadline = now + OFI_POST_TIMEOUT_NS;
        } else if (now > deadline) {
            onic_error("ofi: the provider took no receive buffer for %llu s (%u are posted); "
                       "lower ONIC_OFI_CREDITS", OFI_POST_TIMEOUT_NS / 1000000000ull, s->nrx);
            return ONIC_ERR_NO_RESOURCE;
        }
        (void)fi_cq_read(s->cq, NULL, 0);
    }
    if (rc != 0) {
        ofi_perror("posting a receive buffer", (int)rc);
        return ONIC_ERR_IO;
    }
    return ONIC_OK;
}

/* ONIC_OFI_WAIT: whether the completion queue gets a descriptor to sleep on. */
static int ofi_wants_fd(const onic_config_t *cfg, const onic_boot_t *boot)
{
    long cores;

    if (cfg->ofi_wait != ONIC_OFI_WAIT_AUTO)
        return cfg->ofi_wait == ONIC_OFI_WAIT_FD;
    cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 && boot->nlocal > (uint32_t)cores;
}

static onic_status_t ofi_endpoint_open(const onic_xport_tparams_t *tp, void **state_p)
{
    const onic_xport_params_t *p = tp->p;
    ofi_state_t *s;
    struct fi_cq_attr cq_attr;
    struct fi_av_attr av_attr;
    uint8_t addr[ONIC_BOOT_VAL_MAX];
    size_t addrlen = OFI_ADDR_MAX;
    uint32_t nserve = 0;
    onic_status_t status;
    int rc;

    if (tp->boot == NULL || tp->serve == NULL) {
        onic_error("ofi: needs a job learnt from its launcher (mpirun, srun, mpiexec or "
                   "onicrun) to exchange addresses");
        return ONIC_ERR_INVALID_PARAM;
    }
    if (p->size > OFI_RANK_MAX || p->cfg->ofi_credits > ONIC_SEQWIN_MAX) {
        onic_error("ofi: a job of %u processes with ONIC_OFI_CREDITS=%u; ofi carries at most "
                   "%u processes and %u credits", p->size, p->cfg->ofi_credits, OFI_RANK_MAX,
                   ONIC_SEQWIN_MAX);
        return ONIC_ERR_INVALID_PARAM;
    }
    status = onic_xport_ofi_load(p->cfg);
    if (status != ONIC_OK)
        return status;
    s = onic_calloc(1, sizeof(*s));
    if (s == NULL)
        return ONIC_ERR_NO_MEMORY;
    s->rank = p->rank;
    s->size = p->size;
    s->credits = p->cfg->ofi_credits;
    s->max_payload = p->cfg->ofi_eager_limit;
    s->send_timeout_ns = (uint64_t)p->cfg->ofi_send_timeout * 1000000000ull;
    s->bundle_cfg = p->cfg->ofi_bundle != 0;
    s->bundle_id = 1; /* a peer's sent_bundle starts at 0: nothing sent yet */
    s->boot = tp->boot;
    s->serve = tp->serve;
    s->notify = tp->notify;
    s->wait_fd = -1;
    if (getrandom(&s->secret, sizeof(s->secret), 0) != sizeof(s->secret)) {
        onic_error("ofi: no random bytes for this process's memory key secret: %m");
        onic_free(s);
        return ONIC_ERR_IO;
    }
    for (uint32_t r = 0; r < s->size; r++)
        nserve += s->serve[r];
    s->nrx = nserve * (s->credits + 2);
    status = ofi_getinfo(s, p->cfg);
    if (status != ONIC_OK)
        goto err_close;
    status = ONIC_ERR_IO;
    if ((rc = ofi_fn.fabric(s->info->fabric_attr, &s->fabric, NULL)) != 0) {
        ofi_perror("opening the fabric", rc);
        goto err_close;
    }
    if ((rc = fi_domain(s->fabric, s->info, &s->domain, NULL)) != 0) {
        ofi_perror("opening the domain", rc);
        goto err_close;
    }
    memset(&cq_attr, 0, sizeof(cq_attr));
    cq_attr.format = FI_CQ_FORMAT_MSG;
    cq_attr.size = (size_t)s->nrx + OFI_TX_BUFS + OFI_RMA_OPS;
    cq_attr.wait_obj = ofi_wants_fd(p->cfg, tp->boot) ? FI_WAIT_FD : FI_WAIT_NONE;
    if (cq_attr.wait_obj == FI_WAIT_NONE ||
        fi_cq_open(s->domain, &cq_attr, &s->cq, NULL) != 0) {
        /* No descriptor to sleep on: waits will poll. */
        cq_attr.wait_obj = FI_WAIT_NONE;
        if ((rc = fi_cq_open(s->domain, &cq_attr, &s->cq, NULL)) != 0) {
            ofi_perror("opening the completion queue", rc);
            goto err_close;
        }
    } else if (fi_control(&s->cq->fid, FI_GETWAIT, &s->wait_fd) != 0) {
        s->wait_fd = -1;
    }
    memset(&av_attr, 0, sizeof(av_attr));
    av_attr.type = FI_AV_TABLE;
    if ((rc = fi_av_open(s->domain, &av_attr, &s->av, NULL)) != 0) {
        ofi_perror("opening the address vector", rc);
        goto err_close;
    }
    if ((rc = fi_endpoint(s->domain, s->info, &s->ep, NULL)) != 0 ||
        (rc = fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV)) != 0 ||
        (rc = fi_ep_bind(s->ep, &s->av->fid, 0)) != 0 || (rc = fi_enable(s->ep)) != 0) {
        ofi_perror("opening the endpoint", rc);
        goto err_close;
    }
    if ((rc = fi_getname(&s->ep->fid, addr, &addrlen)) != 0) {
        ofi_perror("reading the endpoint's address", rc);
        goto err_close;
    }
    status = ONIC_ERR_NO_MEMORY;
    s->peers = onic_calloc(s->size, sizeof(*s->peers));
    s->rx = onic_calloc(s->nrx > 0 ? s->nrx : 1, sizeof(*s->rx));
    s->rx_mem = onic_malloc((size_t)s->nrx * OFI_BUF_SIZE + 1);
    s->tx_mem = onic_malloc((size_t)OFI_TX_BUFS * OFI_BUF_SIZE);
    if (s->peers == NULL || s->rx == NULL || s->rx_mem == NULL || s->tx_mem == NULL)
        goto err_close;
    for (uint32_t r = 0; r < s->size; r++) {
        s->peers[r].credits = s->credits;
        s->peers[r].stage = OFI_NONE;
        onic_seqwin_init(&s->peers[r].rx_win, s->credits);
    }
    for (uint32_t i = 0; i < OFI_TX_BUFS; i++) {
        s->tx[i].type = OFI_CTX_TX;
        s->tx[i].buf = s->tx_mem + (size_t)i * OFI_BUF_SIZE;
        s->tx[i].next = i + 1 < OFI_TX_BUFS ? i + 1 : OFI_NONE;
    }
    s->tx_free = 0;
    for (uint32_t i = 0; i < OFI_RMA_OPS; i++) {
        s->rma[i].type = OFI_CTX_RMA;
        s->rma[i].next = i + 1 < OFI_RMA_OPS ? i + 1 : OFI_NONE;
    }
    s->rma_free = 0;
    for (uint32_t i = 0; i < s->nrx; i++) {
        s->rx[i].type = OFI_CTX_RX;
        s->rx[i].buf = s->rx_mem + (size_t)i * OFI_BUF_SIZE;
        status = ofi_post_rx(s, &s->rx[i]);
        if (status != ONIC_OK)
            goto err_close;
    }
    memcpy(addr + addrlen, &s->secret, OFI_SECRET_LEN);
    status = onic_boot_put(s->boot, "ofi-addr", addr, addrlen + OFI_SECRET_LEN);
    if (status != ONIC_OK)
        goto err_close;
    s->opened = 1;
    *state_p = s;
    return ONIC_OK;

err_close:
    ofi_endpoint_close(s);
    return status;
}

/* The peer's address, from the launcher's store, the first time. */
static onic_status_t ofi_resolve(ofi_state_t *s, uint32_t peer)
{
    ofi_peer_t *pr = &s->peers[peer];
    uint8_t addr[ONIC_BOOT_VAL_MAX];
    size_t len = sizeof(addr);
    onic_status_t status;
    int rc;

    if (pr->resolved)
        return ONIC_OK;
    if (pr->unreachable)
        return ONIC_ERR_IO;
    status = onic_boot_get(s->boot, peer, "ofi-addr", addr, &len);
    if (status == ONIC_OK && len <= OFI_SECRET_LEN) {
        onic_error("ofi: rank %u published an address of %zu bytes, too short", peer, len);
        status = ONIC_ERR_IO;
    }
    if (status == ONIC_OK) {
        len -= OFI_SECRET_LEN;
        memcpy(&pr->secret, addr + len, OFI_SECRET_LEN);
    }
    if (status == ONIC_OK && (rc = fi_av_insert(s->av, addr, 1, &pr->addr, 0, NULL)) != 1) {
        char str[128];
        size_t slen = sizeof(str);
        onic_error("ofi: cannot use rank %u's address %s: %s", peer,
                   fi_av_straddr(s->av, addr, str, &slen),
                   rc < 0 ? ofi_fn.strerror(-rc) : "not inserted");
        status = ONIC_ERR_IO;
    }
    if (status != ONIC_OK) {
        pr->unreachable = 1;
        return status;
    }
    pr->resolved = 1;
    return ONIC_OK;
}

/* Every peer this endpoint serves, into the address vector before the
 * first message from any is read, so the provider can name each sender
 * (FI_SOURCE) from the start. First called after the job's fence, when
 * every address is in the store: at the first poll or send. */
static void ofi_resolve_all(ofi_state_t *s)
{
    s->resolved_all = 1;
    for (uint32_t r = 0; r < s->size; r++)
        if (s->serve[r] && !s->peers[r].resolved)
            (void)ofi_resolve(s, r);
}

static const char *ofi_peer_str(ofi_state_t *s, uint32_t peer, char *buf, size_t len)
{
    uint8_t addr[OFI_ADDR_MAX];
    size_t alen = sizeof(addr);

    buf[0] = '\0';
    if (s->peers[peer].resolved && fi_av_lookup(s->av, s->peers[peer].addr, addr, &alen) == 0)
        fi_av_straddr(s->av, addr, buf, &len);
    return buf[0] != '\0' ? buf : "(address unknown)";
}

/* Give back what we owe peer in a message of its own (no credit needed: at
 * most two are ever in flight, and two buffers per peer wait for them). */
static void ofi_credit_send(ofi_state_t *s, uint32_t peer)
{
    ofi_peer_t *pr = &s->peers[peer];
    ofi_wire_t w = {OFI_WHO(s->rank, 0, OFI_KIND_CREDIT), (uint16_t)pr->owed, 0};
    ssize_t rc = fi_inject(s->ep, &w, sizeof(w), pr->addr);

    if (rc == 0) {
        pr->owed = 0;
        if (pr->credit_due) {
            pr->credit_due = 0;
            s->credit_pending--;
        }
    } else if (rc == -FI_EAGAIN) {
        if (!pr->credit_due) {
            pr->credit_due = 1;
            s->credit_pending++;
        }
    } else {
        ofi_perror("returning credits", (int)rc);
    }
}

/* Peer holds nothing any more (its buffer is the caller's to free or not). */
static void ofi_stage_unlist(ofi_state_t *s, uint32_t peer)
{
    for (uint32_t i = 0; i < s->nstaged; i++)
        if (s->staged[i] == peer) {
            s->staged[i] = s->staged[--s->nstaged];
            break;
        }
    s->peers[peer].stage = OFI_NONE;
}

/* Peer's held bundle leaves the stage without being sent. */
static void ofi_stage_drop(ofi_state_t *s, uint32_t peer)
{
    ofi_peer_t *pr = &s->peers[peer];
    ofi_ctx_t *c;

    if (pr->stage == OFI_NONE)
        return;
    c = &s->tx[pr->stage];
    ofi_stage_unlist(s, peer);
    ofi_tx_free(s, c);
}

/* Peer cannot be sent to any more: what is held for it is lost with it. */
static void ofi_unreachable(ofi_state_t *s, uint32_t peer)
{
    ofi_peer_t *pr = &s->peers[peer];

    pr->unreachable = 1;
    if (pr->stage != OFI_NONE) {
        onic_error("ofi: %u messages held for rank %u are dropped with it",
                   s->tx[pr->stage].len, peer);
        ofi_stage_drop(s, peer);
        s->held_lost = 1; /* the bundle's end says so, wherever this happened */
    }
}

/* A send that cannot go yet: the front end polls and tries again, and
 * credits come back, unless the peer is gone (tcp retries connecting to a
 * dead peer forever) or never calls into onic. Past ONIC_OFI_SEND_TIMEOUT
 * of trying, the send fails naming the peer. */
static onic_status_t ofi_stall(ofi_state_t *s, uint32_t peer, const char *what)
{
    ofi_peer_t *pr = &s->peers[peer];
    uint64_t now = onic_time_ns();
    char str[128];

    if (pr->stalled_ns == 0 || s->send_timeout_ns == 0) {
        pr->stalled_ns = now;
        return ONIC_ERR_NO_RESOURCE;
    }
    if (now - pr->stalled_ns < s->send_timeout_ns)
        return ONIC_ERR_NO_RESOURCE;
    onic_error("ofi: rank %u at %s has %s for %llu s (ONIC_OFI_SEND_TIMEOUT): it has died, "
               "hangs, or computes without calling onic; treating it as unreachable", peer,
               ofi_peer_str(s, peer, str, sizeof(str)), what,
               (unsigned long long)(s->send_timeout_ns / 1000000000ull));
    ofi_unreachable(s, peer);
    return ONIC_ERR_IO;
}

/* The credits we owe peer went out with a message to it. */
static void ofi_credits_given(ofi_state_t *s, ofi_peer_t *pr)
{
    if (pr->credit_due) {
        pr->credit_due = 0;
        s->credit_pending--;
    }
    pr->owed = 0;
}

static onic_status_t ofi_send_failed(ofi_state_t *s, uint32_t peer, ssize_t rc)
{
    char str[128];

    onic_error("ofi: cannot send to rank %u at %s: %s; is that address reachable from "
               "here (FI_TCP_IFACE, routes, firewalls)?", peer,
               ofi_peer_str(s, peer, str, sizeof(str)), ofi_fn.strerror((int)-rc));
    return ONIC_ERR_IO;
}

/* Send the bundle held for peer as one libfabric message. NO_RESOURCE: not
 * now, it stays held -- for ONIC_OFI_SEND_TIMEOUT at most, as a send would. */
static onic_status_t ofi_stage_flush(ofi_state_t *s, uint32_t peer)
{
    ofi_peer_t *pr = &s->peers[peer];
    ofi_ctx_t *c = &s->tx[pr->stage];
    int inject = c->off <= s->inject_max;
    uint32_t n = c->len;
    ofi_wire_t w;
    ssize_t rc;

    memcpy(&w, c->buf, sizeof(w));
    w.credits = (uint16_t)pr->owed;
    memcpy(c->buf, &w, sizeof(w));
    rc = inject ? fi_inject(s->ep, c->buf, c->off, pr->addr)
                : fi_send(s->ep, c->buf, c->off, NULL, pr->addr, c);
    if (rc == -FI_EAGAIN) /* e.g. tcp still connecting to it */
        return ofi_stall(s, peer, "taken none of our messages");
    if (rc != 0) {
        ofi_unreachable(s, peer);
        return ofi_send_failed(s, peer, rc);
    }
    /* Sent: the buffer is the provider's until its completion (fi_send),
     * or free again (inject). */
    c->peer = peer;
    ofi_stage_unlist(s, peer);
    if (inject)
        ofi_tx_free(s, c);
    if (n > 1)
        s->bundled += n;
    pr->stalled_ns = 0;
    pr->sent_bundle = s->bundle_id;
    ofi_credits_given(s, pr);
    return ONIC_OK;
}

/* Every held bundle: NO_RESOURCE if some must stay held for now, else
 * ONIC_ERR_IO if some peer turned out unreachable (its held ones lost). */
static onic_status_t ofi_flush_all(ofi_state_t *s)
{
    onic_status_t status = ONIC_OK;

    for (uint32_t i = s->nstaged; i-- > 0;) {
        onic_status_t st = ofi_stage_flush(s, s->staged[i]);
        if (st == ONIC_ERR_NO_RESOURCE)
            status = st;
        else if (st != ONIC_OK && status == ONIC_OK)
            status = st;
    }
    return status;
}

/* Add a message to the bundle in c (the caller checked it fits). */
static void ofi_stage_add(ofi_ctx_t *c, const void *user_hdr, size_t user_len,
                          const void *payload, size_t len)
{
    ofi_rec_t r = {(uint16_t)len, (uint8_t)user_len, {0}};
    uint8_t *at = c->buf + c->off;
    size_t used = sizeof(r) + user_len + len;

    memcpy(at, &r, sizeof(r));
    if (user_len > 0)
        memcpy(at + sizeof(r), user_hdr, user_len);
    if (len > 0)
        memcpy(at + sizeof(r) + user_len, payload, len);
    memset(at + used, 0, OFI_ALIGN8(used) - used); /* no stale bytes on the wire */
    c->off += (uint32_t)OFI_ALIGN8(used);
    c->len++;
}

static onic_status_t ofi_send(void *state, uint32_t peer, const void *user_hdr, size_t user_len,
                              const void *payload, size_t len)
{
    ofi_state_t *s = state;
    ofi_peer_t *pr = &s->peers[peer];
    size_t total = sizeof(ofi_wire_t) + user_len + len;
    ofi_wire_t w;
    ofi_ctx_t *c;
    uint8_t small[256];
    uint8_t *buf;
    ssize_t rc;

    if (!s->resolved_all)
        ofi_resolve_all(s);
    if ((!pr->resolved && ofi_resolve(s, peer) != ONIC_OK) || pr->unreachable) {
        onic_error("ofi: not sending to rank %u: it is unreachable since an earlier failure "
                   "(logged above)", peer);
        return ONIC_ERR_IO;
    }
    if (pr->stage != OFI_NONE) { /* behind the held ones, with them if it fits */
        c = &s->tx[pr->stage];
        if (c->off + OFI_ALIGN8(sizeof(ofi_rec_t) + user_len + len) <= OFI_BUF_SIZE) {
            ofi_stage_add(c, user_hdr, user_len, payload, len);
            return ONIC_OK;
        }
        onic_status_t status = ofi_stage_flush(s, peer); /* it stalls, if it must */
        if (status != ONIC_OK)
            return status;
    }
    if (pr->credits == 0)
        return ofi_stall(s, peer, "given no credits back"); /* the front end polls */
    if (s->bundle_on && pr->sent_bundle == s->bundle_id && s->in_poll == 0 &&
        s->tx_free != OFI_NONE) {
        /* Not its first in this bundle: hold it, for others to join. */
        c = &s->tx[s->tx_free];
        s->tx_free = c->next;
        pr->stage = (uint32_t)(c - s->tx);
        s->staged[s->nstaged++] = peer;
        w.who = OFI_WHO(s->rank, 0, OFI_KIND_BUNDLE);
        w.credits = 0; /* what is owed when it leaves */
        w.seq = pr->tx_seq++;
        memcpy(c->buf, &w, sizeof(w));
        c->off = sizeof(w);
        c->len = 0;
        ofi_stage_add(c, user_hdr, user_len, payload, len);
        pr->credits--;
        pr->stalled_ns = 0;
        return ONIC_OK;
    }
    w.who = OFI_WHO(s->rank, user_len, OFI_KIND_USER);
    w.credits = (uint16_t)pr->owed;
    w.seq = pr->tx_seq;
    if (total <= s->inject_max && total <= sizeof(small)) {
        buf = small;
        c = NULL;
    } else {
        if (s->tx_free == OFI_NONE) /* copies in flight: the front end polls */
            return ofi_stall(s, peer, "taken none of our messages");
        c = &s->tx[s->tx_free];
        buf = c->buf;
    }
    memcpy(buf, &w, sizeof(w));
    if (user_len > 0)
        memcpy(buf + sizeof(w), user_hdr, user_len);
    if (len > 0)
        memcpy(buf + sizeof(w) + user_len, payload, len);
    rc = c == NULL ? fi_inject(s->ep, buf, total, pr->addr)
                   : fi_send(s->ep, buf, total, NULL, pr->addr, c);
    if (rc == -FI_EAGAIN) /* e.g. tcp still connecting to it */
        return ofi_stall(s, peer, "taken none of our messages");
    if (rc != 0)
        return ofi_send_failed(s, peer, rc);
    if (c != NULL) {
        s->tx_free = c->next;
        c->peer = peer;
    }
    pr->stalled_ns = 0;
    pr->tx_seq++;
    pr->credits--;
    pr->sent_bundle = s->bundle_id;
    ofi_credits_given(s, pr);
    return ONIC_OK;
}

static void ofi_rma_free(ofi_state_t *s, ofi_ctx_t *c)
{
    s->peers[c->peer].window--;
    c->next = s->rma_free;
    s->rma_free = (uint32_t)(c - s->rma);
}

/* Receive buffer c, from src, has been handed up: post it again, then owe
 * the credit -- only once it is posted: a send from a callback would
 * otherwise give it back while the buffer is still in use, and the peer's
 * next message could find no buffer. */
static void ofi_rx_done(ofi_state_t *s, uint32_t src, ofi_ctx_t *c)
{
    ofi_peer_t *pr = &s->peers[src];

    (void)ofi_post_rx(s, c);
    pr->owed++;
    if (pr->owed >= s->credits / 2 && !pr->credit_due) {
        if (!pr->resolved)
            (void)ofi_resolve(s, src);
        if (pr->resolved)
            ofi_credit_send(s, src);
    }
}

/* Hand up the message in receive buffer c, from peer src, whose turn it is;
 * then post the buffer again. */
static void ofi_deliver(ofi_state_t *s, const onic_xport_params_t *p, uint32_t src,
                        ofi_ctx_t *c, size_t len)
{
    ofi_wire_t w;
    size_t ulen;

    memcpy(&w, c->buf, sizeof(w));
    ulen = OFI_ULEN(w);
    /* Its turn is over before the callback: a poll nested in it takes the
     * next message as next. */
    onic_seqwin_advance(&s->peers[src].rx_win);
    /* Post the buffer again only after the callback: it reads from it. */
    p->recv_cb(p->cb_arg, src, c->buf + sizeof(w), ulen, c->buf + sizeof(w) + ulen,
               len - sizeof(w) - ulen);
    ofi_rx_done(s, src, c);
}

/* Hand up the records of src's bundle being handed up, up to room of them.
 * A callback may poll: the nested poll hands up the records after its own,
 * and the buffer goes back once the last is out and no callback of an
 * earlier one still reads it. */
static unsigned ofi_bundle_deliver(ofi_state_t *s, const onic_xport_params_t *p, uint32_t src,
                                   unsigned room)
{
    ofi_peer_t *pr = &s->peers[src];
    unsigned n = 0;
    ofi_ctx_t *c;

    while (n < room && (c = pr->cur) != NULL) {
        const uint8_t *at = c->buf + c->off;
        ofi_rec_t r;
        memcpy(&r, at, sizeof(r));
        c->off = (uint32_t)OFI_ALIGN8(c->off + sizeof(r) + r.ulen + r.len);
        if (c->off >= c->len) { /* the last: the bundle's turn is over, as for one message */
            pr->cur = NULL;
            onic_seqwin_advance(&pr->rx_win);
        }
        c->busy++;
        p->recv_cb(p->cb_arg, src, at + sizeof(r), r.ulen, at + sizeof(r) + r.ulen, r.len);
        n++;
        if (--c->busy == 0 && c->off >= c->len)
            ofi_rx_done(s, src, c);
    }
    return n;
}

/* Receive buffer c holds src's message whose turn it is: hand it up, or
 * start on it if it is a bundle (ofi_bundle_deliver hands it up). */
static unsigned ofi_hand_up(ofi_state_t *s, const onic_xport_params_t *p, uint32_t src,
                            ofi_ctx_t *c, size_t len)
{
    ofi_wire_t w;

    memcpy(&w, c->buf, sizeof(w));
    if (OFI_KIND(w) != OFI_KIND_BUNDLE) {
        ofi_deliver(s, p, src, c, len);
        return 1;
    }
    c->len = (uint32_t)len;
    c->off = sizeof(w);
    c->busy = 0;
    s->peers[src].cur = c;
    return 0;
}

/* Whether a bundle of len bytes in buf is records that end where it does. */
static int ofi_bundle_valid(const uint8_t *buf, size_t len)
{
    size_t off = sizeof(ofi_wire_t);
    unsigned n = 0;
    ofi_rec_t r;

    while (off < len) {
        if (len - off < sizeof(r))
            return 0;
        memcpy(&r, buf + off, sizeof(r));
        if (r.ulen > ONIC_XPORT_USER_HDR || r.len > ONIC_XPORT_MAX_PAYLOAD ||
            sizeof(r) + r.ulen + r.len > len - off)
            return 0;
        off = OFI_ALIGN8(off + sizeof(r) + r.ulen + r.len);
        n++;
    }
    return n > 0 && off == len;
}

/* A malformed peer's early messages will never have their turn. */
static void ofi_drop_held(ofi_state_t *s, ofi_peer_t *pr)
{
    ofi_ctx_t *c;

    if ((c = pr->cur) != NULL) { /* the rest of its bundle too */
        pr->cur = NULL;
        c->off = c->len;
        s->drops++;
        if (c->busy == 0) /* else the callback running on it posts it */
            (void)ofi_post_rx(s, c);
        onic_seqwin_advance(&pr->rx_win);
    }
    while (pr->rx_win.nheld > 0) {
        if ((c = onic_seqwin_take(&pr->rx_win)) != NULL) {
            s->drops++;
            (void)ofi_post_rx(s, c);
        }
        onic_seqwin_advance(&pr->rx_win);
    }
    if (pr->release_due) {
        pr->release_due = 0;
        s->release_pending--;
    }
}

/* Hand up src's held messages whose turn has come, up to room of them; the
 * rest wait for the next poll, so a poll never hands up more than its
 * budget (which bounds what the layer above must queue). */
static unsigned ofi_release(ofi_state_t *s, const onic_xport_params_t *p, uint32_t src,
                            unsigned room)
{
    ofi_peer_t *pr = &s->peers[src];
    unsigned n = 0;
    ofi_ctx_t *c;

    while (n < room && !pr->malformed) {
        if (pr->cur != NULL)
            n += ofi_bundle_deliver(s, p, src, room - n);
        else if ((c = onic_seqwin_take(&pr->rx_win)) != NULL)
            n += ofi_hand_up(s, p, src, c, c->len);
        else
            break;
    }
    if (!pr->malformed &&
        (pr->cur != NULL || onic_seqwin_ready(&pr->rx_win)) != pr->release_due) {
        pr->release_due = !pr->release_due;
        if (pr->release_due)
            s->release_pending++;
        else
            s->release_pending--;
    }
    return n;
}

/* A message in receive buffer c: check it, hand it up (with those it held
 * up, within room) or hold it for its turn. Returns how many went up. */
static unsigned ofi_rx(ofi_state_t *s, const onic_xport_params_t *p, ofi_ctx_t *c, size_t len,
                       fi_addr_t from, unsigned room)
{
    ofi_wire_t w;
    ofi_peer_t *pr = NULL;
    unsigned delivered = 0;
    uint32_t src = 0;
    const char *why;

    if (len < sizeof(w)) {
        why = "shorter than the header";
        goto err_drop;
    }
    memcpy(&w, c->buf, sizeof(w));
    src = OFI_SRC(w);
    if (src >= s->size || !s->serve[src]) {
        why = "from a rank this transport does not serve";
        goto err_drop;
    }
    pr = &s->peers[src];
    if (!pr->resolved || from == FI_ADDR_NOTAVAIL || from != pr->addr) {
        /* Not the rank's address: someone outside the job, or a member
         * naming another rank. The rank itself is not blamed. */
        why = "whose header names a rank that did not send it";
        goto err_drop;
    }
    if (pr->malformed) {
        why = "from a rank that sent a malformed message before";
        goto err_drop;
    }
    if (OFI_ULEN(w) > ONIC_XPORT_USER_HDR || sizeof(w) + OFI_ULEN(w) > len ||
        OFI_KIND(w) > OFI_KIND_BUNDLE ||
        (OFI_KIND(w) == OFI_KIND_USER &&
         len - sizeof(w) - OFI_ULEN(w) > ONIC_XPORT_MAX_PAYLOAD) ||
        (OFI_KIND(w) == OFI_KIND_CREDIT && len != sizeof(w)) ||
        (OFI_KIND(w) == OFI_KIND_BUNDLE && (OFI_ULEN(w) != 0 || !ofi_bundle_valid(c->buf, len)))) {
        why = "with lengths or a kind out of bounds";
        goto err_bad_peer;
    }
    if (w.credits > s->credits - pr->credits) {
        why = "returning more credits than it had";
        goto err_bad_peer;
    }
    if (OFI_KIND(w) == OFI_KIND_CREDIT) {
        pr->credits += w.credits;
        (void)ofi_post_rx(s, c);
        return 0;
    }
    switch (onic_seqwin_check(&pr->rx_win, w.seq)) {
    case ONIC_SEQWIN_BAD:
        why = "numbered twice or beyond its credits";
        goto err_bad_peer;
    case ONIC_SEQWIN_HOLD:
        c->len = (uint32_t)len;
        if (onic_seqwin_hold(&pr->rx_win, w.seq, c) != ONIC_OK) {
            why = "before its turn, with no memory to hold it";
            goto err_bad_peer;
        }
        pr->credits += w.credits;
        break;
    case ONIC_SEQWIN_NEXT:
        if (pr->cur != NULL) { /* that number is the bundle's still being handed up */
            why = "numbered twice";
            goto err_bad_peer;
        }
        pr->credits += w.credits;
        delivered = ofi_hand_up(s, p, src, c, len);
        break;
    }
    /* Then whatever this one held up. Also after a hold: inside the
     * callback of the message before (a poll nested in it), the next one
     * may be held already, and only this hands it up -- behind that
     * message, so in order -- and gives its credit back. */
    return delivered + ofi_release(s, p, src, room > delivered ? room - delivered : 0);

err_bad_peer:
    onic_error("ofi: dropped a message of %zu bytes from rank %u %s; dropping all its "
               "messages from now on", len, src, why);
    pr->malformed = 1;
    s->drops++;
    (void)ofi_post_rx(s, c);
    ofi_drop_held(s, pr);
    return 0;
err_drop:
    s->drops++;
    onic_error("ofi: dropped a message of %zu bytes %s", len, why);
    (void)ofi_post_rx(s, c);
    return 0;
}

/* A failed operation: say which and why, fail what depended on it. */
static void ofi_cq_error(ofi_state_t *s)
{
    struct fi_cq_err_entry err;
    ofi_ctx_t *c;
    char str[128];

    memset(&err, 0, sizeof(err));
    if (fi_cq_readerr(s->cq, &err, 0) != 1)
        return;
    c = err.op_context;
    if (c == NULL)
        return;
    if (c->type == OFI_CTX_RMA) {
        onic_error("ofi: RMA with rank %u at %s failed: %s (%s)", c->peer,
                   ofi_peer_str(s, c->peer, str, sizeof(str)), ofi_fn.strerror(err.err),
                   fi_cq_strerror(s->cq, err.prov_errno, err.err_data, NULL, 0));
        onic_xport_notify_post(s->notify, c->user, ofi_rma_status(err.err));
        ofi_rma_free(s, c);
    } else if (c->type == OFI_CTX_TX) {
        onic_error("ofi: a message to rank %u at %s failed: %s (%s); is that address "
                   "reachable from here (FI_TCP_IFACE, firewalls)?", c->peer,
                   ofi_peer_str(s, c->peer, str, sizeof(str)), ofi_fn.strerror(err.err),
                   fi_cq_strerror(s->cq, err.prov_errno, err.err_data, NULL, 0));
        ofi_unreachable(s, c->peer);
        ofi_tx_free(s, c);
    } else if (err.err == FI_ETRUNC) {
        /* Longer than any message onic sends: not onic's protocol. The
         * error entry does not say who sent it (libfabric 1.17 has no
         * source address there), so nobody is blamed on the word of its
         * header; if a rank did send it, the credit it took is lost and
         * that rank's sends end in ONIC_OFI_SEND_TIMEOUT's error, not a
         * hang. */
        ofi_wire_t w;
        memcpy(&w, c->buf, sizeof(w));
        s->drops++;
        onic_error("ofi: dropped a message longer than %zu bytes (its header names rank %u)",
                   (size_t)OFI_BUF_SIZE, OFI_SRC(w));
        (void)ofi_post_rx(s, c);
    } else if (err.err != FI_ECANCELED) {
        /* Its number is lost with it: its sender's later messages wait
         * for it, and that sender's sends end in ONIC_OFI_SEND_TIMEOUT. */
        onic_error("ofi: a receive failed: %s; messages from its sender may stop here",
                   ofi_fn.strerror(err.err));
        (void)ofi_post_rx(s, c);
    }
}

static unsigned ofi_poll_run(ofi_state_t *s, const onic_xport_params_t *p, unsigned max)
{
    unsigned n = 0;
    int drained = 0; /* a read came back short: nothing more until the next poll */

    if (s->nstaged > 0)
        (void)ofi_flush_all(s);
    if (s->credit_pending > 0)
        for (uint32_t r = 0; r < s->size && s->credit_pending > 0; r++)
            if (s->peers[r].credit_due)
                ofi_credit_send(s, r);
    for (uint32_t r = 0; r < s->size && s->release_pending > 0 && n < max; r++)
        if (s->peers[r].release_due)
            n += ofi_release(s, p, r, max - n);
    while (n < max) {
        struct fi_cq_msg_entry e;
        fi_addr_t from;
        ofi_ctx_t *c;
        if (s->cq_head == s->cq_tail) {
            size_t want = max - n < OFI_CQ_BATCH ? max - n : OFI_CQ_BATCH;
            ssize_t got;
            /* Every read is a progress call, with tcp a system call or two:
             * reading again right after a short read finds nothing. */
            if (drained)
                break;
            if (!s->resolved_all)
                ofi_resolve_all(s);
            got = fi_cq_readfrom(s->cq, s->cqe, want, s->cqsrc);
            if (got == -FI_EAVAIL) {
                ofi_cq_error(s);
                continue;
            }
            if (got <= 0)
                break;
            drained = (size_t)got < want;
            s->cq_head = 0;
            s->cq_tail = (unsigned)got;
        }
        from = s->cqsrc[s->cq_head];
        e = s->cqe[s->cq_head++];
        c = e.op_context;
        if (c == NULL)
            continue;
        switch (c->type) {
        case OFI_CTX_RX:
            n += ofi_rx(s, p, c, e.len, from, max - n);
            break;
        case OFI_CTX_TX:
            ofi_tx_free(s, c);
            break;
        case OFI_CTX_RMA:
            onic_xport_notify_post(s->notify, c->user, ONIC_OK);
            ofi_rma_free(s, c);
            break;
        }
    }
    return n;
}

/* Sends made by callbacks during a poll (the layer above answering what
 * arrived) leave at once: nothing says another poll comes soon. */
static unsigned ofi_poll(void *state, const onic_xport_params_t *p, unsigned max)
{
    ofi_state_t *s = state;
    unsigned n;

    s->in_poll++;
    n = ofi_poll_run(s, p, max);
    s->in_poll--;
    return n;
}

static onic_status_t ofi_rma(void *state, uint32_t peer, int write, void *local,
                             const onic_xport_mkey_t *rkey, uint64_t roffset, size_t len,
                             void *ctx)
{
    ofi_state_t *s = state;
    ofi_peer_t *pr = &s->peers[peer];
    uint64_t raddr = s->virt_addr ? rkey->addr + roffset : roffset;
    ofi_ctx_t *c;
    ssize_t rc;

    if (!s->resolved_all)
        ofi_resolve_all(s);
    if ((!pr->resolved && ofi_resolve(s, peer) != ONIC_OK) || pr->unreachable) {
        onic_error("ofi: no RMA with rank %u: it is unreachable since an earlier failure "
                   "(logged above)", peer);
        return ONIC_ERR_IO;
    }
    if (pr->stage != OFI_NONE) {
        /* What we sent it before goes first: a message may announce data
         * this operation moves. */
        onic_status_t status = ofi_stage_flush(s, peer);
        if (status != ONIC_OK)
            return status;
    }
    if (len > s->info->ep_attr->max_msg_size) {
        onic_error("ofi: an RMA of %zu bytes is over the provider's limit of %zu", len,
                   s->info->ep_attr->max_msg_size);
        return ONIC_ERR_INVALID_PARAM;
    }
    if (s->rma_free == OFI_NONE || pr->window >= OFI_RMA_WINDOW)
        return ONIC_ERR_NO_RESOURCE;
    c = &s->rma[s->rma_free];
    c->peer = peer;
    c->user = ctx;
    if (write) {
        struct iovec iov = {local, len};
        struct fi_rma_iov riov = {raddr, len, ofi_key(rkey, pr->secret)};
        struct fi_msg_rma msg = {.msg_iov = &iov, .desc = NULL, .iov_count = 1,
                                 .addr = pr->addr, .rma_iov = &riov, .rma_iov_count = 1,
                                 .context = c, .data = 0};
        /* A message sent after this write completes must find the data in
         * place: the provider orders it (FI_ORDER_SAW) or we ask for
         * delivery before completion. */
        rc = fi_writemsg(s->ep, &msg, FI_COMPLETION | (uint64_t)s->write_flags);
    } else {
        rc = fi_read(s->ep, local, len, NULL, pr->addr, raddr, ofi_key(rkey, pr->secret), c);
    }
    if (rc == -FI_EAGAIN)
        return ONIC_ERR_NO_RESOURCE;
    if (rc != 0) {
        onic_error("ofi: cannot start an RMA %s of %zu bytes with rank %u: %s",
                   write ? "write" : "read", len, peer, ofi_fn.strerror((int)-rc));
        return ONIC_ERR_IO;
    }
    s->rma_free = c->next;
    pr->window++;
    return ONIC_OK;
}

static onic_status_t ofi_mem_reg(void *state, void *addr, size_t len, const onic_xport_mkey_t *key)
{
    ofi_state_t *s = state;
    struct fid_mr *mr;
    int rc;

    if (len == 0)
        return ONIC_OK; /* nothing to reach; RMA of 0 bytes never leaves the front end */
    if (s->nmrs == s->mrs_cap) {
        size_t cap = s->mrs_cap == 0 ? 16 : 2 * s->mrs_cap;
        ofi_mr_t *m = onic_malloc(cap * sizeof(*m));
        if (m == NULL)
            return ONIC_ERR_NO_MEMORY;
        if (s->nmrs > 0)
            memcpy(m, s->mrs, s->nmrs * sizeof(*m));
        onic_free(s->mrs);
        s->mrs = m;
        s->mrs_cap = cap;
    }
    rc = fi_mr_reg(s->domain, addr, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                   ofi_key(key, s->secret), 0,
                   &mr, NULL);
    if (rc != 0) {
        ofi_perror("registering memory", rc);
        return rc == -FI_ENOMEM ? ONIC_ERR_NO_MEMORY : ONIC_ERR_IO;
    }
    s->mrs[s->nmrs].id = key->id;
    s->mrs[s->nmrs].mr = mr;
    s->nmrs++;
    return ONIC_OK;
}

static void ofi_mem_dereg(void *state, const onic_xport_mkey_t *key)
{
    ofi_state_t *s = state;

    /* Newest first: registrations are mostly short-lived. */
    for (size_t i = s->nmrs; i-- > 0;) {
        if (s->mrs[i].id != key->id)
            continue;
        fi_close(&s->mrs[i].mr->fid);
        s->mrs[i] = s->mrs[--s->nmrs];
        return;
    }
}

/* Sleep on the completion queue's descriptor until something may have
 * completed, unless something already has (fi_trywait). */
static void ofi_sleep(void *state, uint64_t timeout_ns)
{
    ofi_state_t *s = state;
    struct fid *fids[1] = {&s->cq->fid};
    struct pollfd pfd = {s->wait_fd, POLLIN, 0};
    int ms = (int)((timeout_ns + 999999) / 1000000);

    if (s->cq_head != s->cq_tail || s->release_pending > 0 || s->nstaged > 0)
        return;
    if (s->wait_fd < 0) {
        struct timespec ts = {0, timeout_ns < 50000 ? (long)timeout_ns : 50000};
        nanosleep(&ts, NULL);
        return;
    }
    if (fi_trywait(s->fabric, fids, 1) == FI_SUCCESS)
        (void)poll(&pfd, 1, ms);
}

static onic_status_t ofi_bundle(void *state, int on)
{
    ofi_state_t *s = state;
    onic_status_t status;

    /* A new bundle (bundles do not nest): its first message to each peer
     * leaves at once. */
    if (on && !s->bundle_on) {
        s->bundle_id++;
        s->held_lost = 0;
    }
    s->bundle_on = on && s->bundle_cfg;
    if (on)
        return ONIC_OK;
    /* Its end fails if what it held for some peer was lost -- here, or
     * earlier, when a poll or a send found that peer unreachable. */
    if ((status = ofi_flush_all(s)) == ONIC_ERR_NO_RESOURCE)
        return status; /* the front end polls and ends it again */
    if (s->held_lost) {
        s->held_lost = 0;
        if (status == ONIC_OK)
            status = ONIC_ERR_IO;
    }
    return status;
}

static uint64_t ofi_bundled(const void *state)
{
    return ((const ofi_state_t *)state)->bundled;
}

static unsigned ofi_caps(const void *state, uint32_t peer)
{
    (void)state;
    (void)peer;
    return ONIC_XPORT_CAP_RMA | ONIC_XPORT_CAP_SLEEP;
}

static size_t ofi_max_payload(const void *state)
{
    return ((const ofi_state_t *)state)->max_payload;
}

static uint64_t ofi_drops(const void *state)
{
    return ((const ofi_state_t *)state)->drops;
}

const onic_xport_ops_t onic_xport_ofi_ops = {
    .name        = "ofi",
    .open        = ofi_endpoint_open,
    .close       = ofi_endpoint_close,
    .send        = ofi_send,
    .poll        = ofi_poll,
    .max_payload = ofi_max_payload,
    .drops       = ofi_drops,
    .sleep       = ofi_sleep,
    .rma         = ofi_rma,
    .caps        = ofi_caps,
    .mem_reg     = ofi_mem_reg,
    .mem_dereg   = ofi_mem_dereg,
    .bundle      = ofi_bundle,
    .bundled     = ofi_bundled,
};
