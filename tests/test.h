/* test.h - minimal assertions for the C unit tests; each check prints "ok" or "FAIL"
 * lines that tests/run.sh counts. */
#ifndef KM_TEST_H
#define KM_TEST_H

#include <math.h>
#include <stdio.h>

static int km_test_failed;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (cond) {                                                            \
            printf("ok - ");                                                   \
        } else {                                                               \
            printf("FAIL - %s:%d: ", __FILE__, __LINE__);                      \
            km_test_failed++;                                                  \
        }                                                                      \
        printf(__VA_ARGS__);                                                   \
        printf("\n");                                                          \
    } while (0)

/* |a - b| <= tol * max(1, |b|) */
#define CHECK_CLOSE(a, b, tol, ...)                                            \
    do {                                                                       \
        double km_a_ = (a), km_b_ = (b);                                       \
        double km_s_ = fabs(km_b_) > 1 ? fabs(km_b_) : 1;                      \
        int km_ok_ = fabs(km_a_ - km_b_) <= (tol) * km_s_;                     \
        CHECK(km_ok_, __VA_ARGS__);                                            \
        if (!km_ok_)                                                           \
            printf("  got %.17g, want %.17g (tol %g)\n", km_a_, km_b_,         \
                   (double)(tol));                                             \
    } while (0)

#define TEST_EXIT() return km_test_failed ? 1 : 0

#endif
