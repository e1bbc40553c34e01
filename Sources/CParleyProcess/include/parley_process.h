// CParleyProcess: starting an external app's handler. posix_spawn's Linux
// extensions (addchdir_np, addclosefrom_np) are _GNU_SOURCE declarations the
// Glibc Swift module does not expose, so the whole spawn is one C call.
#pragma once
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

/// Caps the data segment of process `pid` (RLIMIT_DATA: heap and private
/// writable mappings, which a runtime's reserved-but-untouched ranges are
/// not) at `bytes`, soft and hard; its children inherit it. Returns 0 or errno.
int parley_limit_memory(pid_t pid, unsigned long long bytes);
