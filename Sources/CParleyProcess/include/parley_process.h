// CParleyProcess: starting an external app's handler. posix_spawn's Linux
// extensions (addchdir_np, addfchdir_np, addclosefrom_np) are _GNU_SOURCE
// declarations the Glibc Swift module does not expose, and SCM_RIGHTS needs
// the CMSG macros, which Swift does not import: so each is one C call.
#pragma once
#include <stddef.h>
#include <sys/types.h>

/// Starts `argv` (searched on PATH when argv[0] has no slash) with the
/// environment `envp` (NULL-terminated "KEY=value" strings) in `directory`,
/// in a process group of its own (so the whole group can be signalled), with
/// every signal at its default and none blocked, no file descriptor inherited
/// but three pipes: the child's standard input, output and error. The
/// parent's ends are close-on-exec; standard input's is non-blocking, so a
/// handler that stops reading cannot block the daemon.
/// Returns 0 and fills `pid` and `fds` (stdin write end, stdout read end,
/// stderr read end), or an errno value (ENOENT: no such program).
int parley_spawn_handler(const char *const argv[], const char *const envp[], const char *directory, pid_t *pid, int fds[3]);

/// The three pipes of a handler, nothing started: `parent` gets the
/// daemon's ends (stdin write end, non-blocking; stdout and stderr read
/// ends), `child` the handler's (stdin read end, stdout and stderr write
/// ends); all close-on-exec. Returns 0 or errno.
int parley_handler_pipes(int parent[3], int child[3]);

/// Starts `argv` as parley_spawn_handler does, but with `fds` (stdin,
/// stdout, stderr) as its standard descriptors and as its working directory
/// `directory` (a path, or NULL) else `directory_fd` (an open directory, or
/// -1 to stay). Returns 0 and fills `pid`, or an errno value.
int parley_spawn_with_fds(const char *const argv[], const char *const envp[], const char *directory, int directory_fd,
                          const int fds[3], pid_t *pid);

/// Caps the data segment of process `pid` (RLIMIT_DATA: heap and private
/// writable mappings, which a runtime's reserved-but-untouched ranges are
/// not) at `bytes`, soft and hard; its children inherit it. Returns 0 or errno.
int parley_limit_memory(pid_t pid, unsigned long long bytes);

/// Sends `length` bytes and `count` (at most 8) descriptors in one message
/// over the Unix stream socket `socket`. Returns 0 or errno.
int parley_send_with_fds(int socket, const void *bytes, size_t length, const int *fds, int count);

/// Receives one message of at most `capacity` bytes and at most `maximum`
/// (at most 8) descriptors, made close-on-exec; `received` is set to how
/// many arrived (any beyond `maximum` are closed). Returns the number of
/// bytes (0 at end of stream) or -errno.
long parley_receive_with_fds(int socket, void *bytes, size_t capacity, int *fds, int maximum, int *received);

/// A descriptor that becomes readable when process `pid` (a child) ends
/// (pidfd_open(2), Linux 5.3), close-on-exec; -errno on failure.
int parley_pidfd_open(pid_t pid);
