#define _GNU_SOURCE
#include "parley_malloc_counter.h"
#include <errno.h>
#include <stddef.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

#define PARLEY_MAX_THREADS 8192
struct parley_slot { int32_t tid; uint64_t count; };
static struct parley_slot parley_slots[PARLEY_MAX_THREADS];
static uint32_t parley_next_slot;
static __thread int32_t parley_my_slot = -1;

static void parley_count(void) {
    int32_t slot = parley_my_slot;
    if (slot < 0) {
        uint32_t s = __atomic_fetch_add(&parley_next_slot, 1u, __ATOMIC_RELAXED);
        if (s >= PARLEY_MAX_THREADS) return;    // table full: stop counting new threads
        __atomic_store_n(&parley_slots[s].tid, (int32_t)gettid(), __ATOMIC_RELEASE);
        parley_my_slot = slot = (int32_t)s;
    }
    __atomic_fetch_add(&parley_slots[slot].count, 1u, __ATOMIC_RELAXED);
}

uint64_t parley_malloc_count_for_thread(int32_t tid) {
    uint32_t n = __atomic_load_n(&parley_next_slot, __ATOMIC_ACQUIRE);
    if (n > PARLEY_MAX_THREADS) n = PARLEY_MAX_THREADS;
    for (uint32_t i = n; i > 0; i--) {
        if (__atomic_load_n(&parley_slots[i - 1].tid, __ATOMIC_ACQUIRE) == tid)
            return __atomic_load_n(&parley_slots[i - 1].count, __ATOMIC_RELAXED);
    }
    return 0;
}

uint64_t parley_malloc_count_current_thread(void) {
    return parley_malloc_count_for_thread((int32_t)gettid());
}

#if defined(__has_feature)
#  if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#    define PARLEY_UNDER_SANITIZER 1
#  endif
#endif

#ifdef PARLEY_UNDER_SANITIZER
// Under a sanitizer (scripts/tsan.sh) the sanitizer owns malloc: interposing
// it here would hand memory the sanitizer never saw (and crashes its start).
// Its allocator calls a hook on every allocation instead, which counts the
// same allocations.
int __sanitizer_install_malloc_and_free_hooks(
    void (*malloc_hook)(const volatile void *, size_t), void (*free_hook)(const volatile void *));

static void parley_malloc_hook(const volatile void *pointer, size_t size) {
    (void)pointer;
    (void)size;
    parley_count();
}

// The sanitizer refuses (returns 0) a pair with a null hook.
static void parley_free_hook(const volatile void *pointer) { (void)pointer; }

__attribute__((constructor)) static void parley_install_malloc_hook(void) {
    __sanitizer_install_malloc_and_free_hooks(parley_malloc_hook, parley_free_hook);
}
#else
void *malloc(size_t size) { parley_count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { parley_count(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { parley_count(); return __libc_realloc(p, size); }
void *memalign(size_t alignment, size_t size) { parley_count(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { parley_count(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    parley_count();
    void *p = __libc_memalign(alignment, size);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}
#endif
