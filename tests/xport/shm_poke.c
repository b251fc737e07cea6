/* shm_poke: a process outside the job that writes into a running job's
 * shared memory, as a stray write or a same-user process would, for the
 * fail-stop tests (shm_corrupt_job.c, test_shm_corrupt.sh). It reaches the
 * memory through the target process (process_vm_readv / writev, which need
 * what ptrace needs), finding the mapping by its name in /proc/PID/maps, so
 * it works however the memory was created.
 *
 *   shm_poke SCENARIO PID REGION SENDER
 *
 * works on the lane of SENDER in the shm region of node rank REGION, as
 * process PID maps it (the layout: shm.c's region header, then one
 * onic_shm_lane_t with its slots per sender). The receiver's head is taken
 * to be the lane's consumed count (it publishes it whenever it finds the
 * lane empty, so with the receiver idle it is the head). SCENARIO:
 *
 *   garbage  random bytes over the whole line of the message at the head
 *   length   that message's payload length set to 0xffffffff
 *   slots    its ready word re-stamped (with the lane's key) for 255 slots
 *   kind     its kind set to 77
 *   assist   its kind set to 2, the transport's own request for help with a
 *            large copy (xport/shm.c), whose header is not 8 bytes long
 *   gap      the head's slot stamped with the sequence number of the next
 *            lap (an entry the receiver cannot have been sent yet)
 *   replay   the message before the head copied to the head, its last user
 *            byte changed and its ready word re-stamped for the head: a
 *            forged entry the receiver takes as the sender's next
 *   credits  the consumed count raised by four rings' worth
 *
 *   shm_poke onload-zero PID
 *   shm_poke onload-evt|onload-cmd PID RANK
 *
 * zeroes the onload engine's status segment as process PID maps it; or
 * moves the tail of rank RANK's event ring (which that process reads) or
 * command ring (which the engine reads) 2^40 records ahead, in RANK's
 * segment as process PID maps it (onload.h's onic_onload_proc_hdr_t, then
 * ring.h's header: the tail on its second line).
 *
 * Prints "shm_poke: SCENARIO done at SECONDS" (CLOCK_REALTIME) on success;
 * exit status 1 with a reason if it could not, 77 if the kernel does not let
 * it reach the process (the test then skips). */
#include "xport/shm_lane.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define POKE_SKIP 77
/* shm.c's region header: magic, then processes and slots per lane. */
#define POKE_SHM_MAGIC 0x6f6e69632d73686dull
#define POKE_REGION_HDR 64

static pid_t poke_pid;

static void poke_fail(const char *what)
{
    fprintf(stderr, "shm_poke: %s: %s\n", what, strerror(errno));
    exit(errno == EPERM ? POKE_SKIP : 1);
}

static void poke_read(uint64_t addr, void *buf, size_t len)
{
    struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};

    if (process_vm_readv(poke_pid, &l, 1, &r, 1, 0) != (ssize_t)len)
        poke_fail("cannot read the target's memory");
}

static void poke_write(uint64_t addr, const void *buf, size_t len)
{
    struct iovec l = {(void *)buf, len}, r = {(void *)(uintptr_t)addr, len};

    if (process_vm_writev(poke_pid, &l, 1, &r, 1, 0) != (ssize_t)len)
        poke_fail("cannot write the target's memory");
}

static uint64_t poke_read64(uint64_t addr)
{
    uint64_t v;

    poke_read(addr, &v, sizeof(v));
    return v;
}

/* The start of the mapping whose name ends in suffix (before " (deleted)"). */
static uint64_t poke_find(const char *suffix)
{
    char path[64], line[1024];
    FILE *f;
    size_t slen = strlen(suffix);

    snprintf(path, sizeof(path), "/proc/%d/maps", (int)poke_pid);
    f = fopen(path, "r");
    if (f == NULL)
        poke_fail("cannot read the target's maps");
    while (fgets(line, sizeof(line), f) != NULL) {
        char *name = strchr(line, '/'), *end;
        unsigned long long start;
        if (name == NULL || strstr(name, "onic-") == NULL)
            continue;
        end = name + strcspn(name, " \n");
        if ((size_t)(end - name) < slen || memcmp(end - slen, suffix, slen) != 0)
            continue;
        if (sscanf(line, "%llx-", &start) == 1) {
            fclose(f);
            return start;
        }
    }
    fclose(f);
    fprintf(stderr, "shm_poke: process %d maps no onic segment named *%s\n", (int)poke_pid,
            suffix);
    exit(1);
}

static void poke_done(const char *scenario)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    printf("shm_poke: %s done at %lld.%09ld\n", scenario, (long long)ts.tv_sec, ts.tv_nsec);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *scenario = argc > 1 ? argv[1] : "";
    uint64_t region, lane, slots, key, head, mask, at;
    uint32_t size, nslots, region_rank, sender;
    uint8_t line[ONIC_SHM_SLOT];
    char suffix[32];

    if ((argc == 3 || argc == 4) && strcmp(scenario, "onload-zero") == 0) {
        uint8_t zero[4 * 64] = {0};
        poke_pid = (pid_t)atoi(argv[2]);
        poke_write(poke_find("-onload"), zero, sizeof(zero));
        poke_done(scenario);
        return 0;
    }
    if (argc == 4 && (strcmp(scenario, "onload-evt") == 0 ||
                      strcmp(scenario, "onload-cmd") == 0)) {
        uint64_t off, tail;
        poke_pid = (pid_t)atoi(argv[2]);
        snprintf(suffix, sizeof(suffix), "-onload-%u", (unsigned)atoi(argv[3]));
        region = poke_find(suffix);
        /* cmd_off at byte 16 of the segment's header, evt_off at 32. */
        off = poke_read64(region + (strcmp(scenario, "onload-cmd") == 0 ? 16 : 32));
        tail = poke_read64(region + off + 64) + (1ull << 40);
        poke_write(region + off + 64, &tail, sizeof(tail));
        poke_done(scenario);
        return 0;
    }
    if (argc != 5) {
        fprintf(stderr, "usage: shm_poke garbage|length|slots|kind|assist|gap|replay|credits PID "
                "REGION SENDER\n       shm_poke onload-zero PID\n"
                "       shm_poke onload-evt|onload-cmd PID RANK\n");
        return 2;
    }
    poke_pid = (pid_t)atoi(argv[2]);
    region_rank = (uint32_t)atoi(argv[3]);
    sender = (uint32_t)atoi(argv[4]);
    snprintf(suffix, sizeof(suffix), "-shm-%u", region_rank);
    region = poke_find(suffix);
    if (poke_read64(region) != POKE_SHM_MAGIC) {
        fprintf(stderr, "shm_poke: the region has no shm magic: another layout?\n");
        return 1;
    }
    poke_read(region + 8, &size, sizeof(size));
    poke_read(region + 12, &nslots, sizeof(nslots));
    if (sender >= size || nslots == 0 || (nslots & (nslots - 1)) != 0) {
        fprintf(stderr, "shm_poke: sender %u of %u, %u slots: not a lane\n", sender, size, nslots);
        return 1;
    }
    lane = region + POKE_REGION_HDR + (uint64_t)sender * onic_shm_lane_size(nslots);
    slots = lane + sizeof(onic_shm_lane_t);
    key = poke_read64(lane + offsetof(onic_shm_lane_t, key));
    head = poke_read64(lane + offsetof(onic_shm_lane_t, consumed));
    mask = nslots - 1;
    at = slots + (head & mask) * ONIC_SHM_SLOT;

    if (strcmp(scenario, "credits") == 0) {
        uint64_t inflated = head + 4ull * nslots;
        poke_write(lane + offsetof(onic_shm_lane_t, consumed), &inflated, sizeof(inflated));
    } else if (strcmp(scenario, "gap") == 0) {
        uint64_t word = onic_shm_ready_word(key, head + nslots, 1);
        poke_write(at, &word, sizeof(word));
    } else if (strcmp(scenario, "replay") == 0) {
        /* The last message before the head, if it took one slot. */
        uint64_t prev = slots + ((head - 1) & mask) * ONIC_SHM_SLOT, word;
        poke_read(prev, line, sizeof(line));
        memcpy(&word, line, sizeof(word));
        if (head == 0 || word != onic_shm_ready_word(key, head - 1, 1)) {
            fprintf(stderr, "shm_poke: the entry before the head (%llu) is not a one-slot "
                    "message\n", (unsigned long long)head);
            return 1;
        }
        line[ONIC_SHM_SLOT - 1] ^= 0x5a; /* a changed payload */
        word = onic_shm_ready_word(key, head, 1);
        poke_write(at + 8, line + 8, sizeof(line) - 8);
        poke_write(at, &word, sizeof(word));
    } else {
        /* The message waiting at the head: it must be there. */
        onic_xport_hdr_t hdr;
        poke_read(at, &hdr, sizeof(hdr));
        if (((hdr.ready ^ key) >> 8) != head + 1) {
            fprintf(stderr, "shm_poke: no message waits at the head (%llu) of the lane\n",
                    (unsigned long long)head);
            return 1;
        }
        if (strcmp(scenario, "garbage") == 0) {
            if (getrandom(line, sizeof(line), 0) != (ssize_t)sizeof(line))
                poke_fail("no random bytes");
            poke_write(at, line, sizeof(line));
        } else if (strcmp(scenario, "length") == 0) {
            uint32_t len = 0xffffffffu;
            poke_write(at + offsetof(onic_xport_hdr_t, len), &len, sizeof(len));
        } else if (strcmp(scenario, "slots") == 0) {
            uint64_t word = onic_shm_ready_word(key, head, 255);
            poke_write(at, &word, sizeof(word));
        } else if (strcmp(scenario, "kind") == 0) {
            uint16_t kind = 77;
            poke_write(at + offsetof(onic_xport_hdr_t, kind), &kind, sizeof(kind));
        } else if (strcmp(scenario, "assist") == 0) {
            uint16_t kind = 2; /* SHM_KIND_ASSIST in xport/shm.c */
            poke_write(at + offsetof(onic_xport_hdr_t, kind), &kind, sizeof(kind));
        } else {
            fprintf(stderr, "shm_poke: unknown scenario %s\n", scenario);
            return 2;
        }
    }
    poke_done(scenario);
    return 0;
}
