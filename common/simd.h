/* simd.h - the attribute that gives a hot loop clones for AVX-512 and AVX2 (internal). */
#ifndef KM_SIMD_H
#define KM_SIMD_H

/* Vectorise a function for AVX-512 (x86-64-v4) and AVX2 too, picked at load time where the
 * CPU has it. Plain double operations without FMA contraction (-std=c11), so every clone
 * gives the same bits (measured: exp 0.7 ns a value with AVX-512, 1.2 with AVX2). */
#if defined(__SANITIZE_THREAD__)
/* ThreadSanitizer cannot run the clones' load-time resolvers (ifuncs run before it starts) */
#define KM_VECTOR_CLONES
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(KM_NO_AVX512)
/* make XCPPFLAGS=-DKM_NO_AVX512: the AVX2 code path on an AVX-512 machine (to measure it) */
#define KM_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KM_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define KM_VECTOR_CLONES
#endif

#endif
