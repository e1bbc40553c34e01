#define _GNU_SOURCE
#include "parley_process.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <unistd.h>

int parley_spawn_handler(const char *const argv[], const char *const envp[], const char *directory, pid_t *pid, int fds[3]) {
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) != 0) return errno;
    if (pipe2(out, O_CLOEXEC) != 0) { int e = errno; close(in[0]); close(in[1]); return e; }
    if (pipe2(err, O_CLOEXEC) != 0) {
        int e = errno; close(in[0]); close(in[1]); close(out[0]); close(out[1]); return e;
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
    // dup2 clears close-on-exec on the copies; everything else above 2 is closed.
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (directory) posix_spawn_file_actions_addchdir_np(&actions, directory);
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
    close(in[0]);
    close(out[1]);
    close(err[1]);
    if (result != 0) {
        close(in[1]); close(out[0]); close(err[0]);
        return result;
    }
    fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
    fds[0] = in[1];
    fds[1] = out[0];
    fds[2] = err[0];
    return 0;
}

int parley_limit_memory(pid_t pid, unsigned long long bytes) {
    struct rlimit limit = { .rlim_cur = bytes, .rlim_max = bytes };
    return prlimit(pid, RLIMIT_DATA, &limit, NULL) == 0 ? 0 : errno;
}
