// LD_PRELOAD: the C heap that code in one shared object holds (the MicroPython unix port's
// extension: MicroPython and the mbedtls linked into it), current and peak, in bytes.
// DUELCLOCK_MALLOC_OBJECT  a substring of that object's path
// DUELCLOCK_MALLOC_SKIP    blocks of at least this many bytes are not counted (the GC heap)
// DUELCLOCK_MALLOC_REPORT  a file the peak is written to at exit: "peak_bytes end_bytes"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS (1 << 18)
static void *(*real_malloc)(size_t), *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static void *keys[SLOTS];
static size_t sizes[SLOTS];
static size_t cur, peak, skip = (size_t)-1;
static const char *object;
static int ready, busy;
static char boot[4096];
static size_t boot_used;

static void init(void) {
    busy = 1;
    real_malloc = dlsym(RTLD_NEXT, "malloc");
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_free = dlsym(RTLD_NEXT, "free");
    object = getenv("DUELCLOCK_MALLOC_OBJECT");
    if (getenv("DUELCLOCK_MALLOC_SKIP")) skip = strtoull(getenv("DUELCLOCK_MALLOC_SKIP"), 0, 10);
    ready = 1;
    busy = 0;
}

static int ours(void *caller) {
    Dl_info info;
    if (!object || busy) return 0;
    busy = 1;
    int r = dladdr(caller, &info) && info.dli_fname && strstr(info.dli_fname, object);
    busy = 0;
    return r;
}

static size_t slot(void *p) {
    size_t i = ((uintptr_t)p >> 4) & (SLOTS - 1);
    while (keys[i] && keys[i] != p) i = (i + 1) & (SLOTS - 1);
    return i;
}

static void add(void *p, size_t n, void *caller) {
    if (!p || n >= skip || !ours(caller)) return;
    size_t i = slot(p);
    keys[i] = p;
    sizes[i] = n;
    cur += n;
    if (cur > peak) peak = cur;
}

static void drop(void *p) {
    if (!p) return;
    size_t i = slot(p);
    if (keys[i] != p) return;
    cur -= sizes[i];
    // re-insert the run after i (open addressing without tombstones)
    keys[i] = 0;
    for (size_t j = (i + 1) & (SLOTS - 1); keys[j]; j = (j + 1) & (SLOTS - 1)) {
        void *k = keys[j];
        size_t n = sizes[j];
        keys[j] = 0;
        size_t t = slot(k);
        keys[t] = k;
        sizes[t] = n;
    }
}

void *malloc(size_t n) {
    if (!ready) init();
    void *p = real_malloc(n);
    add(p, n, __builtin_return_address(0));
    return p;
}

void *calloc(size_t a, size_t b) {
    if (!ready) {
        if (busy) {                              // dlsym's own calloc, before we have one
            void *p = boot + boot_used;
            boot_used += (a * b + 15) & ~(size_t)15;
            return p;
        }
        init();
    }
    void *p = real_calloc(a, b);
    add(p, a * b, __builtin_return_address(0));
    return p;
}

void *realloc(void *old, size_t n) {
    if (!ready) init();
    drop(old);
    void *p = real_realloc(old, n);
    add(p, n, __builtin_return_address(0));
    return p;
}

void free(void *p) {
    if ((char *)p >= boot && (char *)p < boot + sizeof boot) return;
    if (!ready) init();
    drop(p);
    real_free(p);
}

__attribute__((destructor)) static void report(void) {
    const char *path = getenv("DUELCLOCK_MALLOC_REPORT");
    if (!path) return;
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%zu %zu\n", peak, cur);
        fclose(f);
    }
}
