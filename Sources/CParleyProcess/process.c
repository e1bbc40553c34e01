#define _GNU_SOURCE
#include "parley_process.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int parley_handler_pipes(int parent[3], int child[3]) {
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) != 0) return errno;
    if (pipe2(out, O_CLOEXEC) != 0) { int e = errno; close(in[0]); close(in[1]); return e; }
    if (pipe2(err, O_CLOEXEC) != 0) {
        int e = errno; close(in[0]); close(in[1]); close(out[0]); close(out[1]); return e;
    }
    fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
    parent[0] = in[1]; parent[1] = out[0]; parent[2] = err[0];
    child[0] = in[0]; child[1] = out[1]; child[2] = err[1];
    return 0;
}

static int spawn(const char *const argv[], const char *const envp[], const char *directory, int directory_fd,
                 const int fds[3], pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
    // dup2 clears close-on-exec on the copies; everything else above 2 is closed.
    posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[2], 2);
    // The directory first: closefrom would close directory_fd.
    if (directory_fd >= 0) posix_spawn_file_actions_addfchdir_np(&actions, directory_fd);
    if (directory) posix_spawn_file_actions_addchdir_np(&actions, directory);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    // The daemon ignores SIGPIPE; a handler gets the default of every signal.
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int result = posix_spawnp(pid, argv[0], &actions, &attributes, (char *const *)argv, (char *const *)envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    return result;
}

int parley_spawn_handler(const char *const argv[], const char *const envp[], const char *directory, pid_t *pid, int fds[3]) {
    int parent[3], child[3];
    int made = parley_handler_pipes(parent, child);
    if (made != 0) return made;
    int result = spawn(argv, envp, directory, -1, child, pid);
    for (int i = 0; i < 3; i++) close(child[i]);
    if (result != 0) {
        for (int i = 0; i < 3; i++) close(parent[i]);
        return result;
    }
    for (int i = 0; i < 3; i++) fds[i] = parent[i];
    return 0;
}

int parley_spawn_with_fds(const char *const argv[], const char *const envp[], const char *directory, int directory_fd,
                          const int fds[3], pid_t *pid) {
    return spawn(argv, envp, directory, directory ? -1 : directory_fd, fds, pid);
}

int parley_limit_memory(pid_t pid, unsigned long long bytes) {
    struct rlimit limit = { .rlim_cur = bytes, .rlim_max = bytes };
    return prlimit(pid, RLIMIT_DATA, &limit, NULL) == 0 ? 0 : errno;
}

int parley_send_with_fds(int socket, const void *bytes, size_t length, const int *fds, int count) {
    if (count < 0 || count > 8) return EINVAL;
    union { char buffer[CMSG_SPACE(8 * sizeof(int))]; struct cmsghdr align; } control;
    memset(&control, 0, sizeof control);
    struct iovec vector = { .iov_base = (void *)bytes, .iov_len = length };
    struct msghdr message = { .msg_iov = &vector, .msg_iovlen = 1 };
    if (count > 0) {
        message.msg_control = control.buffer;
        message.msg_controllen = CMSG_SPACE(count * sizeof(int));
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(count * sizeof(int));
        memcpy(CMSG_DATA(header), fds, count * sizeof(int));
    }
    ssize_t sent;
    do { sent = sendmsg(socket, &message, MSG_NOSIGNAL); } while (sent < 0 && errno == EINTR);
    if (sent < 0) return errno;
    // Stream sockets: the descriptors went with the first byte; the rest is plain data.
    const char *rest = (const char *)bytes + sent;
    size_t left = length - (size_t)sent;
    while (left > 0) {
        ssize_t more = send(socket, rest, left, MSG_NOSIGNAL);
        if (more < 0 && errno == EINTR) continue;
        if (more <= 0) return more < 0 ? errno : EPIPE;
        rest += more;
        left -= (size_t)more;
    }
    return 0;
}

long parley_receive_with_fds(int socket, void *bytes, size_t capacity, int *fds, int maximum, int *received) {
    *received = 0;
    if (maximum < 0 || maximum > 8) return -EINVAL;
    union { char buffer[CMSG_SPACE(8 * sizeof(int))]; struct cmsghdr align; } control;
    struct iovec vector = { .iov_base = bytes, .iov_len = capacity };
    struct msghdr message = { .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.buffer,
                              .msg_controllen = sizeof control.buffer };
    ssize_t count;
    do { count = recvmsg(socket, &message, MSG_CMSG_CLOEXEC); } while (count < 0 && errno == EINTR);
    if (count < 0) return -errno;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        int n = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int *incoming = (int *)CMSG_DATA(header);
        for (int i = 0; i < n; i++) {
            if (*received < maximum) fds[(*received)++] = incoming[i];
            else close(incoming[i]);
        }
    }
    return (long)count;
}

int parley_pidfd_open(pid_t pid) {
    long fd = syscall(SYS_pidfd_open, pid, 0);
    return fd < 0 ? -errno : (int)fd;
}
