// Test-only: counts heap allocations per thread, so the audio tests can prove
// the capture loop allocates nothing per period (swift-nio does the same in
// its allocation-counter tests). It interposes malloc/calloc/realloc/
// memalign/posix_memalign/aligned_alloc in the test executable and forwards
// each to glibc's __libc_* entry point; glibc 2.34 removed __malloc_hook.
#pragma once
#include <stdint.h>

/// Allocations made so far by the thread whose kernel thread id is `tid`
/// (the most recent thread with that id), or 0 if it never allocated.
uint64_t parley_malloc_count_for_thread(int32_t tid);

/// Allocations made so far by the calling thread.
uint64_t parley_malloc_count_current_thread(void);
