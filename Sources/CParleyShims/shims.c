#define _GNU_SOURCE
#include "parley_shims.h"
#include <alsa/asoundlib.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void parley_futex_bump_and_wake(uint32_t *word) {
    __atomic_add_fetch(word, 1u, __ATOMIC_RELEASE);
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

uint32_t parley_futex_load(uint32_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

int parley_futex_wait(uint32_t *word, uint32_t expected, int64_t timeout_ns) {
    struct timespec deadline, now, rel;
    if (timeout_ns >= 0) {
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += timeout_ns / 1000000000;
        deadline.tv_nsec += timeout_ns % 1000000000;
        if (deadline.tv_nsec >= 1000000000) { deadline.tv_sec++; deadline.tv_nsec -= 1000000000; }
    }
    for (;;) {
        if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != expected) return 0;
        struct timespec *timeout = NULL;
        if (timeout_ns >= 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            int64_t left = (int64_t)(deadline.tv_sec - now.tv_sec) * 1000000000
                + (deadline.tv_nsec - now.tv_nsec);
            if (left <= 0) return 1;
            rel.tv_sec = left / 1000000000;
            rel.tv_nsec = left % 1000000000;
            timeout = &rel;
        }
        long r = syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout, NULL, 0);
        if (r == 0) return 0;
        if (errno == EAGAIN) return 0;       // value changed before we slept
        if (errno == ETIMEDOUT) return 1;
        // EINTR: loop and recompute the remaining time.
    }
}

#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>

int parley_set_thread_name(const char *name) {
    char shortName[16];
    strncpy(shortName, name, 15);
    shortName[15] = '\0';
    return pthread_setname_np(pthread_self(), shortName);
}

int parley_eventfd_create(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

int32_t parley_gettid(void) { return (int32_t)gettid(); }

// libasound's error handler (see parley_shims.h). The callback pointer is
// atomic: alsa-lib may report from any thread that calls it (the capture
// thread reopening a device, the playback thread, the daemon at start).
static parley_alsa_error_callback alsa_callback;
static int alsa_repeats;

// Once a handler is installed, libasound also reports its internal notes
// (SNDMSG, silent under its default handler), some on every period: the file
// plugin says "invalid frames 0" each time a spool has run dry. So each
// message site (source file, line) is passed on once; repeats are dropped
// here, before any formatting, unless asked for, which keeps the audio
// threads free of allocation, locks and logging. A fixed table, claimed with
// compare-and-swap: no lock, no allocation.
#define ALSA_SITES 128
static uint64_t alsa_sites[ALSA_SITES];

/// 1 the first time this site reports, 0 after (and when the table is full).
static int parley_alsa_first_report(const char *file, int line) {
    uint64_t key = ((uint64_t)(uintptr_t)file) ^ ((uint64_t)(uint32_t)line << 48);
    if (key == 0) key = 1;
    for (int i = 0; i < ALSA_SITES; i++) {
        uint64_t seen = __atomic_load_n(&alsa_sites[i], __ATOMIC_ACQUIRE);
        if (seen == key) return 0;
        if (seen == 0) {
            uint64_t expected = 0;
            if (__atomic_compare_exchange_n(&alsa_sites[i], &expected, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 1;
            if (expected == key) return 0;
        }
    }
    return 0;
}

__attribute__((format(printf, 5, 6)))
static void parley_alsa_error_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    parley_alsa_error_callback callback = __atomic_load_n(&alsa_callback, __ATOMIC_ACQUIRE);
    if (callback == NULL) return;
    int first = parley_alsa_first_report(file, line);
    if (!first && !__atomic_load_n(&alsa_repeats, __ATOMIC_RELAXED)) return;
    // alsa-lib's messages are one short line; a longer one is cut, not dropped.
    char message[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    callback(file, line, function, err, message, first);
}

int parley_alsa_set_error_callback(parley_alsa_error_callback callback, int repeats) {
    __atomic_store_n(&alsa_repeats, repeats, __ATOMIC_RELAXED);
    if (callback != NULL) {
        for (int i = 0; i < ALSA_SITES; i++) __atomic_store_n(&alsa_sites[i], 0, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&alsa_callback, callback, __ATOMIC_RELEASE);
    return snd_lib_error_set_handler(callback != NULL ? parley_alsa_error_handler : NULL);
}

#include <malloc.h>

void parley_release_free_memory(void) {
    malloc_trim(0);
}

void parley_limit_malloc_arenas(int count) {
    mallopt(M_ARENA_MAX, count);
}
