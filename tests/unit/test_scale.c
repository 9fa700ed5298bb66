/* test_scale.c - the scaling parameters (common/scale.c): range mode gives each kept
 * feature exactly [lower, upper] over the rows (zeros included), standardize gives mean 0
 * and sample standard deviation 1 (or sd 1 with zeros kept), constant features are
 * dropped, parameter files round-trip bit for bit (and svm-scale's are read), damaged files
 * are refused with FILE:LINE:COL. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scale.h"
#include "test.h"
#include "testutil.h"

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* A random problem whose features have wildly different scales and offsets; feature 5
 * (0-based) constant 3 on every row, feature 6 never present. */
static km_problem *unscaled(uint64_t seed)
{
    km_problem *P = random_problem(60, 8, 0.6, 1, seed);
    int64_t *rp = malloc((size_t)(P->l + 1) * sizeof *rp);
    int32_t *ix = malloc((size_t)(P->nnz + P->l) * sizeof *ix);
    double *vx = malloc((size_t)(P->nnz + P->l) * sizeof *vx);
    int64_t k = 0;
    rp[0] = 0;
    for (int64_t i = 0; i < P->l; i++) {
        for (int64_t t = P->row_ptr[i]; t < P->row_ptr[i + 1]; t++) {
            int32_t j = P->index[t];
            if (j >= 5)
                continue;
            ix[k] = j;
            vx[k++] = P->value[t] * pow(10, 2 * j - 3) + 7 * j;   /* 1e-3 .. 1e5, offsets */
        }
        ix[k] = 5;
        vx[k++] = 3;
        for (int64_t t = P->row_ptr[i]; t < P->row_ptr[i + 1]; t++)
            if (P->index[t] == 7) {
                ix[k] = 7;
                vx[k++] = P->value[t] - 2;
            }
        rp[i + 1] = k;
    }
    km_problem *R = NULL;
    km_error err;
    km_problem_from_csr(P->l, 8, rp, ix, vx, P->y, NULL, &R, &err);
    free(rp);
    free(ix);
    free(vx);
    km_problem_free(P);
    return R;
}

/* The dense matrix of P (l x n), zeros where absent. */
static double *dense(const km_problem *P)
{
    double *X = calloc((size_t)(P->l * P->n), sizeof *X);
    for (int64_t i = 0; i < P->l; i++)
        for (int64_t t = P->row_ptr[i]; t < P->row_ptr[i + 1]; t++)
            X[i * P->n + P->index[t]] = P->value[t];
    return X;
}

/* The scaled rows, dense (l x n), by km_scale_row. */
static double *scaled_dense(const km_scale *s, const km_problem *P, int64_t *nnz_out)
{
    double *Z = calloc((size_t)(P->l * P->n), sizeof *Z);
    int32_t *oi = malloc((size_t)(P->n + s->kz + 1) * sizeof *oi);
    double *ov = malloc((size_t)(P->n + s->kz + 1) * sizeof *ov);
    *nnz_out = 0;
    for (int64_t i = 0; i < P->l; i++) {
        int64_t b = P->row_ptr[i], dropped;
        int64_t o = km_scale_row(s, P->index + b, P->value + b, P->row_ptr[i + 1] - b, oi, ov,
                                 &dropped);
        for (int64_t t = 0; t < o; t++)
            Z[i * P->n + oi[t]] = ov[t];
        *nnz_out += o;
    }
    free(oi);
    free(ov);
    return Z;
}

static void test_range(void)
{
    km_problem *P = unscaled(11);
    double *X = dense(P);
    km_error err;
    for (int variant = 0; variant < 2; variant++) {
        km_scale s = {0};
        s.lower = variant ? 0 : -1;
        s.upper = variant ? 5 : 1;
        CHECK(km_scale_fit(&s, P, &err) == KM_OK, "range fit [%g, %g]", s.lower, s.upper);
        /* kept: features 0..4 and 7; dropped: 5 (constant 3) and 6 (never present) */
        CHECK(s.k == 6 && km_scale_slot(&s, 5) < 0 && km_scale_slot(&s, 6) < 0 &&
              km_scale_slot(&s, 7) == 5, "constant and absent features have no parameters");
        int64_t nnz;
        double *Z = scaled_dense(&s, P, &nnz);
        int ends = 1, affine = 1, dropped = 1;
        for (int32_t j = 0; j < P->n; j++) {
            double mn = INFINITY, mx = -INFINITY, zmn = INFINITY, zmx = -INFINITY;
            for (int64_t i = 0; i < P->l; i++) {
                mn = fmin(mn, X[i * P->n + j]);
                mx = fmax(mx, X[i * P->n + j]);
                zmn = fmin(zmn, Z[i * P->n + j]);
                zmx = fmax(zmx, Z[i * P->n + j]);
            }
            if (j == 5 || j == 6) {
                dropped &= zmn == 0 && zmx == 0;
                continue;
            }
            ends &= zmn == s.lower && zmx == s.upper;   /* exactly the ends */
            for (int64_t i = 0; i < P->l; i++) {   /* x' - lower proportional to x - min */
                double x = X[i * P->n + j], z = Z[i * P->n + j];
                double want = s.lower + (s.upper - s.lower) * (x - mn) / (mx - mn);
                affine &= fabs(z - want) <= 1e-12 * (1 + fabs(want));
            }
        }
        CHECK(ends, "every kept feature spans exactly [lower, upper] over the rows (zeros "
              "counted)");
        CHECK(affine, "x' = lower + (upper - lower)(x - min)/(max - min) within 1e-12");
        CHECK(dropped, "constant and absent features are 0 in the output");
        km_scale_free(&s);
        free(Z);
    }
    free(X);
    km_problem_free(P);
}

static void test_standardize(void)
{
    km_problem *P = unscaled(12);
    double *X = dense(P);
    km_error err;
    for (int center = 0; center < 2; center++) {
        km_scale s = {0};
        s.standardize = 1;
        s.center = center;
        CHECK(km_scale_fit(&s, P, &err) == KM_OK, "standardize fit (center %d)", center);
        int64_t nnz;
        double *Z = scaled_dense(&s, P, &nnz);
        int good = 1, zeros = 1;
        for (int32_t j = 0; j < P->n; j++) {
            if (j == 5 || j == 6)
                continue;
            double m = 0, mx = 0, v = 0;
            for (int64_t i = 0; i < P->l; i++)
                m += Z[i * P->n + j], mx += X[i * P->n + j];
            m /= (double)P->l;
            mx /= (double)P->l;
            for (int64_t i = 0; i < P->l; i++)
                v += (Z[i * P->n + j] - m) * (Z[i * P->n + j] - m);
            double sd = sqrt(v / (double)(P->l - 1));
            good &= fabs(sd - 1) <= 1e-12;
            if (center)
                good &= fabs(m) <= 1e-12;
            else   /* the mean is only divided: mean(x)/sd(x) */
                good &= fabs(m - mx / s.b[km_scale_slot(&s, j)]) <= 1e-12 * (1 + fabs(m));
            for (int64_t i = 0; i < P->l && !center; i++)
                zeros &= (X[i * P->n + j] == 0) == (Z[i * P->n + j] == 0);
        }
        CHECK(good, "standardize%s: every kept feature has %ssample sd 1 (1e-12)",
              center ? " --center" : "", center ? "mean 0 and " : "");
        if (!center)
            CHECK(zeros && nnz <= P->nnz, "without --center zeros stay zeros (%lld <= %lld "
                  "entries)", (long long)nnz, (long long)P->nnz);
        else
            CHECK(nnz > P->nnz, "--center: the output is denser (%lld > %lld)", (long long)nnz,
                  (long long)P->nnz);
        km_scale_free(&s);
        free(Z);
    }
    free(X);
    km_problem_free(P);
}

static int same_params(const km_scale *a, const km_scale *b)
{
    return a->standardize == b->standardize && a->center == b->center &&
           a->lower == b->lower && a->upper == b->upper && a->y_scaling == b->y_scaling &&
           (!a->y_scaling || (a->y_lower == b->y_lower && a->y_upper == b->y_upper &&
                              a->y_min == b->y_min && a->y_max == b->y_max)) &&
           a->k == b->k && a->kz == b->kz &&
           memcmp(a->feature, b->feature, (size_t)a->k * sizeof *a->feature) == 0 &&
           memcmp(a->a, b->a, (size_t)a->k * sizeof *a->a) == 0 &&
           memcmp(a->b, b->b, (size_t)a->k * sizeof *a->b) == 0;
}

static void test_files(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/p.txt", dir);
    km_problem *P = unscaled(13);
    km_error err;
    for (int mode = 0; mode < 3; mode++) {
        km_scale s = {0}, r;
        s.standardize = mode > 0;
        s.center = mode == 2;
        s.lower = -1;
        s.upper = 1;
        s.y_scaling = mode != 1;
        s.y_lower = 0;
        s.y_upper = 1;
        CHECK(km_scale_fit(&s, P, &err) == KM_OK, "fit mode %d", mode);
        if (s.y_scaling)
            CHECK(s.y_min == -1 && s.y_max == 1 && km_scale_label(&s, -1) == 0 &&
                  km_scale_label(&s, 1) == 1, "-y 0 1 maps the labels -1, 1 onto 0, 1");
        CHECK(km_scale_save(&s, path, &err) == KM_OK, "save mode %d", mode);
        int rc = km_scale_load(path, &r, &err);
        CHECK(rc == KM_OK && same_params(&s, &r), "mode %d: the parameters read back bit for "
              "bit (%s)", mode, rc ? err.msg : "");
        km_scale_free(&s);
        km_scale_free(&r);
    }
    /* svm-scale's own format (svm-scale -y 0 1 -s), a constant feature listed as min = max */
    put(path, "y\n0 1\n-1 2\nx\n-1 1\n1 0 20\n3 0 5\n4 2 2\n");
    km_scale s;
    int rc = km_scale_load(path, &s, &err);
    CHECK(rc == KM_OK && !s.standardize && s.lower == -1 && s.upper == 1 && s.y_scaling &&
          s.y_min == -1 && s.y_max == 2 && s.k == 2 && s.feature[0] == 0 && s.feature[1] == 2,
          "svm-scale's file read (min = max dropped) (%s)", rc ? err.msg : "");
    if (rc == KM_OK) {
        int32_t ix[] = {0, 1, 2}, oi[8];
        double vx[] = {10, 4, 5}, ov[8];
        int64_t dropped, o = km_scale_row(&s, ix, vx, 3, oi, ov, &dropped);
        CHECK(o == 1 && oi[0] == 2 && ov[0] == 1 && dropped == 1,
              "a feature the file does not have is dropped; 10 in [0, 20] -> 0 is not "
              "written, 5 = max -> 1");
        int32_t e[1];
        double ev[1];
        o = km_scale_row(&s, e, ev, 0, oi, ov, &dropped);
        CHECK(o == 2 && ov[0] == -1 && ov[1] == -1, "an empty row gets the scaled zeros (-1)");
        CHECK(km_scale_label(&s, 0.5) == 0.5, "a label inside [y_min, y_max] mapped affinely");
    }
    km_scale_free(&s);
    struct { const char *text, *want; } bad[] = {
        {"", "empty file"},
        {"hello\n", ":1:1: not scaling parameters"},
        {"kmtk-scale 2\n", ":1:12: parameter format version 2 is not supported"},
        {"kmtk-scale 1\nmode foo\n", ":2:6: expected 'range' or 'standardize'"},
        {"kmtk-scale 1\nmode range\nx 1 0\n", ":3:3: the range is empty"},
        {"kmtk-scale 1\nmode range\nx -1 nan\n", ":3:6: expected LOWER UPPER"},
        {"kmtk-scale 1\nmode range\nx -1 1\nfeatures 1000000000\n1 0 1\nend\n",
         ":4:10: features 1000000000 needs at least"},
        {"kmtk-scale 1\nmode range\nx -1 1\nfeatures 2\n2 0 1\n1 0 1\nend\n",
         ":6:1: feature indices must increase"},
        {"kmtk-scale 1\nmode range\nx -1 1\nfeatures 1\n0 0 1\nend\n", ":5:1: expected a feature"},
        {"kmtk-scale 1\nmode range\nx -1 1\nfeatures 1\n2147483648 0 1\nend\n",
         ":5:1: expected a feature"},
        {"kmtk-scale 1\nmode range\nx -1 1\nfeatures 1\n1 2 1\nend\n", ":5:2: the minimum is above"},
        {"kmtk-scale 1\nmode range\nx -1 1\nfeatures 1\n1 0 1 7\nend\n", ":5:7: unexpected text"},
        {"kmtk-scale 1\nmode standardize\ncenter 1\nfeatures 1\n1 0 0\nend\n",
         ":5:2: the standard deviation must be positive"},
        {"kmtk-scale 1\nmode standardize\ncenter 2\n", ":3:8: expected 0 or 1"},
        {"kmtk-scale 1\nmode range\nx -1 1\nfeatures 2\n1 0.000000000 1.0000000000\n",
         "truncated (1 of 2 feature"},
        {"kmtk-scale 1\nmode range\nx -1 1\nfeatures 0\n", "truncated (no end line)"},
        {"kmtk-scale 1\nmode range\nx -1 1\nfeatures 0\nend\nmore\n", ":6:1: unexpected text "
         "after 'end'"},
        {"x\n-1 1\n1 0\n", ":3:4: expected INDEX MIN MAX"},
        {"x\n-1\n", ":2:3: expected LOWER UPPER"},
        {"y\n0 1\n", "truncated (no y minimum"},
    };
    for (size_t t = 0; t < sizeof bad / sizeof *bad; t++) {
        put(path, bad[t].text);
        rc = km_scale_load(path, &s, &err);
        CHECK(rc == KM_EINPUT && strstr(err.msg, bad[t].want) && strstr(err.msg, path),
              "damaged parameters %zu rejected with '%s' (got '%s')", t, bad[t].want,
              rc ? err.msg : "success");
    }
    unlink(path);
    km_problem_free(P);
}

int main(void)
{
    char dir[] = "/tmp/kmtk-scale-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temporary directory");
    test_range();
    test_standardize();
    test_files(dir);
    rmdir(dir);
    TEST_EXIT();
}
