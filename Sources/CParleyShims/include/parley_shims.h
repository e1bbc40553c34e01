// CParleyShims: the few C helpers ParleyAudio cannot express in Swift.
// Every helper is prefixed `parley_` and says why it exists.
#pragma once
#include <stdint.h>

/// Adds one to the 32-bit word at `word` (atomically, release order) and wakes
/// every thread blocked in `parley_futex_wait` on it. Exists because the
/// futex(2) system call is only reachable through the variadic syscall(2),
/// which Swift cannot call. Used by the audio ring to wake its reader without
/// a lock on the capture thread.
void parley_futex_bump_and_wake(uint32_t *word);

/// Blocks while the word at `word` still equals `expected`, at most
/// `timeout_ns` nanoseconds (negative: no limit). Returns 0 when woken or the
/// value already differed, 1 on timeout. Retries EINTR by itself.
int parley_futex_wait(uint32_t *word, uint32_t expected, int64_t timeout_ns);

/// Atomic (acquire) load of the word, for the waiter's "expected" snapshot.
uint32_t parley_futex_load(uint32_t *word);

/// Names the calling thread (pthread_setname_np, at most 15 bytes kept).
/// Exists because Glibc's Swift overlay does not expose the _GNU_SOURCE
/// declaration.
int parley_set_thread_name(const char *name);

/// eventfd(2) with EFD_NONBLOCK | EFD_CLOEXEC, for waking an audio thread out
/// of poll(2); sys/eventfd.h is not part of the Glibc Swift module.
int parley_eventfd_create(void);

/// The kernel thread id of the caller (gettid(2)), for diagnostics and the
/// allocation-counting test; not exposed by the Glibc Swift module.
int32_t parley_gettid(void);

/// Receives one of libasound's own error messages, already formatted:
/// where in alsa-lib it was raised, the errno it carries (0: none), the text,
/// and whether it is the first from that place (file and line) since the
/// callback was installed.
typedef void (*parley_alsa_error_callback)(const char *file, int line, const char *function, int err,
                                           const char *message, int first);

/// Installs `callback` as libasound's error handler; NULL restores
/// libasound's own (which prints "ALSA lib …" to stderr). Exists because
/// snd_lib_error_set_handler takes a variadic printf-style function, which
/// Swift can neither implement nor call: a C handler formats the message
/// with vsnprintf and passes the text on. Each place in alsa-lib reports
/// once; with `repeats` non-zero every later report is passed on too (some
/// come once per audio period, on the audio thread). Returns
/// snd_lib_error_set_handler's result (0 on success).
int parley_alsa_set_error_callback(parley_alsa_error_callback callback, int repeats);

/// Returns the free pages of every malloc arena to the system (malloc_trim(0)).
/// Exists because <malloc.h> is not part of the Glibc Swift module. The
/// daemon calls it once after loading its decoders: parsing the models frees
/// far more than it keeps, and glibc keeps freed pages of a thread's arena.
void parley_release_free_memory(void);

/// Caps the number of glibc malloc arenas (mallopt M_ARENA_MAX) for arenas
/// created from now on. Exists for the same reason as the one above; the
/// daemon calls it at start (idle resident memory, BENCHMARKS.md).
void parley_limit_malloc_arenas(int count);
