/* avx2_clones.h - forced in first (gcc -include) to build kmtk without its AVX-512 clones, for
 * measuring the AVX2 code path on an AVX-512 machine (bench/lib.bash: BENCH_AVX2=1):
 *   make OUT=/tmp/kmtk-avx2 BUILD=/tmp/kmtk-avx2/obj CFLAGS="-O2 -g -include bench/avx2_clones.h"
 * Defining common/simd.h's include guard here keeps its clone list (x86-64-v4, avx2, default)
 * out; this one has avx2 and default only. Keep the two in step. */
#ifndef KM_SIMD_H
#define KM_SIMD_H
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KM_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define KM_VECTOR_CLONES
#endif
#endif
