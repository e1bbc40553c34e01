/*
 * Guest instructions executed by a program under qemu-user: a TCG plugin for
 * scripts/lib/arm64-count.sh (issues 49 and 50 ask for the Pi's arm64
 * instructions per second of audio; this machine has no arm64 core, and
 * valgrind cannot run inside qemu-user).
 *
 *   qemu-aarch64 -plugin qemu-instructions.so,out=FILE[,ticks=FILE2] PROGRAM ...
 *
 * writes "instructions N" to FILE when the program exits; with ticks=, a
 * thread of the plugin's also appends "SECONDS N" to FILE2 every second
 * (monotonic clock, instructions so far), so that a window of a long-running
 * daemon is the difference of two lines, as callgrind_control -z/-d give it
 * on x86_64. Every translated
 * block adds its instruction count each time it runs, from every guest
 * thread (one atomic counter: the daemon's stages run on several threads).
 * Debian 12's qemu-user loads plugins but ships neither plugins nor their
 * header, so the few declarations of QEMU's plugin API (version 1, QEMU 7.2)
 * this needs are written out below.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct {
    const char *target_name;
    struct { int min, cur; } version;
    bool system_emulation;
} qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, void (*)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *, void (*)(unsigned int, void *),
                                          enum qemu_plugin_cb_flags, void *);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, void (*)(qemu_plugin_id_t, void *), void *);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t executed;
static char out_path[4096], ticks_path[4096];

static void block_ran(unsigned int vcpu, void *instructions) {
    (void)vcpu;
    __atomic_fetch_add(&executed, (uint64_t)(uintptr_t)instructions, __ATOMIC_RELAXED);
}

static void block_translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, block_ran, QEMU_PLUGIN_CB_NO_REGS,
                                         (void *)(uintptr_t)qemu_plugin_tb_n_insns(tb));
}

static void program_exited(qemu_plugin_id_t id, void *unused) {
    (void)id; (void)unused;
    FILE *f = out_path[0] ? fopen(out_path, "w") : stderr;
    if (!f) { perror(out_path); return; }
    fprintf(f, "instructions %" PRIu64 "\n", __atomic_load_n(&executed, __ATOMIC_RELAXED));
    if (f != stderr) fclose(f);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *tick(void *unused) {
    (void)unused;
    FILE *f = fopen(ticks_path, "w");
    if (!f) { perror(ticks_path); return NULL; }
    for (;;) {
        fprintf(f, "%.3f %" PRIu64 "\n", now(), __atomic_load_n(&executed, __ATOMIC_RELAXED));
        fflush(f);
        struct timespec second = {1, 0};
        nanosleep(&second, NULL);
    }
}

/* Copies "NAME=VALUE"'s value into `into` when argument `arg` is NAME=. */
static bool option(const char *arg, const char *name, char *into, size_t size) {
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0 || arg[n] != '=' || strlen(arg + n + 1) >= size) return false;
    strcpy(into, arg + n + 1);
    return true;
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    if (info->system_emulation) { fprintf(stderr, "qemu-instructions: for qemu-user only\n"); return 1; }
    for (int i = 0; i < argc; i++) {
        if (!option(argv[i], "out", out_path, sizeof out_path) && !option(argv[i], "ticks", ticks_path, sizeof ticks_path)) {
            fprintf(stderr, "qemu-instructions: unknown argument '%s' (expected out=FILE or ticks=FILE)\n", argv[i]);
            return 1;
        }
    }
    if (ticks_path[0]) {
        /* The ticks thread must never take a signal: the kernel gives a
         * process-wide signal (SIGCHLD when a child of the guest exits) to
         * any thread not blocking it, and qemu-user's handler assumes the
         * thread is a guest CPU's, so on this thread it crashes qemu. A new
         * thread inherits the creator's mask: block all for the creation,
         * then give the guest's thread its own mask back. */
        sigset_t all, before;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &before);
        pthread_t thread;
        int failed = pthread_create(&thread, NULL, tick, NULL);
        pthread_sigmask(SIG_SETMASK, &before, NULL);
        if (failed) { fprintf(stderr, "qemu-instructions: ticks thread: %s\n", strerror(failed)); return 1; }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, block_translated);
    qemu_plugin_register_atexit_cb(id, program_exited, NULL);
    return 0;
}
