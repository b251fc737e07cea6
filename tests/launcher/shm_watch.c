/* shm_watch: run a command and report every onic-* object created in
 * /dev/shm while it runs -- what a same-user process racing for a job's
 * names with inotify would see (issue: names can be raced).
 *
 *   shm_watch COMMAND [ARGS...]
 *
 * Prints "shm_watch: created NAME" for each, then exits with the command's
 * status (128 + signal if a signal ended it); 1 if it cannot watch. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

static void watch_drain(int in)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;

    while ((n = read(in, buf, sizeof(buf))) > 0) {
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            if (ev->len > 0 && strncmp(ev->name, "onic-", 5) == 0)
                printf("shm_watch: created %s\n", ev->name);
            p += sizeof(*ev) + ev->len;
        }
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), st = 0;
    pid_t child;

    if (argc < 2) {
        fprintf(stderr, "usage: shm_watch COMMAND [ARGS...]\n");
        return 2;
    }
    if (in < 0 || inotify_add_watch(in, "/dev/shm", IN_CREATE | IN_MOVED_TO) < 0) {
        perror("shm_watch: cannot watch /dev/shm");
        return 1;
    }
    child = fork();
    if (child < 0) {
        perror("shm_watch: fork");
        return 1;
    }
    if (child == 0) {
        execvp(argv[1], argv + 1);
        perror("shm_watch: exec");
        _exit(127);
    }
    for (;;) {
        struct pollfd pfd = {in, POLLIN, 0};
        pid_t w;
        (void)poll(&pfd, 1, 20);
        watch_drain(in);
        w = waitpid(child, &st, WNOHANG);
        if (w == child || (w < 0 && errno != EINTR))
            break;
    }
    watch_drain(in);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
