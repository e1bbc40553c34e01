/* DeepFilterNet3 alone through the runtime's C API (the calls
 * ParleyDenoise makes: df_create, df_get_frame_length, df_process_frame),
 * on SECONDS of 48 kHz audio: a fixed pseudo-random signal (the network's
 * work per frame does not depend on what it hears). For counting its
 * instructions (training/bin/cost-neural.sh): no resampling, no decoder.
 *   deepfilter-frames LIBRARY MODEL SECONDS */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void *(*create_fn)(const char *, float, const char *);
typedef size_t (*frame_length_fn)(void *);
typedef float (*process_fn)(void *, float *, float *);
typedef void (*free_fn)(void *);

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s LIBRARY MODEL SECONDS\n", argv[0]); return 2; }
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    create_fn create = (create_fn)dlsym(lib, "df_create");
    frame_length_fn frame_length = (frame_length_fn)dlsym(lib, "df_get_frame_length");
    process_fn process = (process_fn)dlsym(lib, "df_process_frame");
    free_fn release = (free_fn)dlsym(lib, "df_free");
    if (!create || !frame_length || !process || !release) { fprintf(stderr, "a df_ symbol is missing\n"); return 1; }
    /* 100 dB: no attenuation limit, as speech.front_end: neural. */
    void *state = create(argv[2], 100.0f, NULL);
    if (!state) { fprintf(stderr, "df_create failed\n"); return 1; }
    size_t frame = frame_length(state);
    long frames = (long)(atof(argv[3]) * 48000.0 / (double)frame);
    float *in = malloc(frame * sizeof(float)), *out = malloc(frame * sizeof(float));
    uint32_t seed = 1;
    double sum = 0;
    for (long f = 0; f < frames; f++) {
        for (size_t i = 0; i < frame; i++) {
            seed = seed * 1664525u + 1013904223u;
            in[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 0.1f;
        }
        process(state, in, out);
        sum += out[0];
    }
    printf("frames=%ld frame=%zu checksum=%g\n", frames, frame, sum);
    release(state);
    return 0;
}
