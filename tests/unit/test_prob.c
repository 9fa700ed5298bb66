/* test_prob.c - class probabilities: Platt's A, B against a brute-force minimization of the
 * same smoothed likelihood, calibration on a held-back split (Brier score and expected
 * calibration error below those of the raw decision values through a plain sigmoid),
 * one-versus-all normalisation by hand, the model keys probA/probB (round trip, hostile
 * values), and km_predict_proba's refusal for models without probabilities. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmtk.h"
#include "prob.h"
#include "test.h"
#include "testutil.h"

/* Platt's smoothed cross-entropy written out here (not km_platt_objective): targets
 * (N+ + 1)/(N+ + 2) and 1/(N- + 2), P(y = 1 | f) = 1/(1 + exp(A f + B)). */
static double platt_nll(const double *f, const double *y, int n, double A, double B)
{
    double np = 0, nn = 0, F = 0;
    for (int i = 0; i < n; i++) {
        np += y[i] > 0;
        nn += y[i] <= 0;
    }
    for (int i = 0; i < n; i++) {
        double t = y[i] > 0 ? (np + 1) / (np + 2) : 1 / (nn + 2);
        double p = 1 / (1 + exp(A * f[i] + B));
        F -= t * log(p) + (1 - t) * log(1 - p);
    }
    return F;
}

/* Brute force: a 201 x 201 grid, then 12 zooms (each a 41 x 41 grid a quarter as wide). */
static void platt_brute(const double *f, const double *y, int n, double *A, double *B)
{
    double a0 = -10, a1 = 5, b0 = -8, b1 = 8, ba = 0, bb = 0, best = INFINITY;
    int g = 201;
    for (int zoom = 0; zoom <= 12; zoom++) {
        for (int i = 0; i < g; i++)
            for (int j = 0; j < g; j++) {
                double a = a0 + (a1 - a0) * i / (g - 1), b = b0 + (b1 - b0) * j / (g - 1);
                double F = platt_nll(f, y, n, a, b);
                if (F < best) {
                    best = F;
                    ba = a;
                    bb = b;
                }
            }
        double wa = (a1 - a0) / 8, wb = (b1 - b0) / 8;
        a0 = ba - wa, a1 = ba + wa, b0 = bb - wb, b1 = bb + wb;
        g = 41;
    }
    *A = ba;
    *B = bb;
}

static void test_platt_fit(void)
{
    km_rng r;
    km_rng_seed(&r, 3);
    for (int t = 0; t < 4; t++) {
        int n = 40 + 20 * t;
        double f[100], y[100];
        double sa = t == 3 ? -0.4 : -1.7 + 0.5 * t, sb = 0.3 - 0.2 * t;
        for (int i = 0; i < n; i++) {
            f[i] = 4 * unif(&r) - 2;
            y[i] = unif(&r) < 1 / (1 + exp(sa * f[i] + sb)) ? 1 : -1;
        }
        double A, B, Ab, Bb;
        int it = km_platt_fit(f, y, n, &A, &B);
        platt_brute(f, y, n, &Ab, &Bb);
        double F = platt_nll(f, y, n, A, B), Fb = platt_nll(f, y, n, Ab, Bb);
        CHECK(it >= 0 && fabs(A - Ab) < 1e-4 && fabs(B - Bb) < 1e-4,
              "set %d (%d points): Platt's Newton A %.6f B %.6f = brute force %.6f %.6f", t, n,
              A, B, Ab, Bb);
        CHECK(F <= Fb + 1e-9, "set %d: its likelihood is at least the brute force's (%.12g vs "
              "%.12g)", t, F, Fb);
        CHECK_CLOSE(km_platt_objective(f, y, n, A, B), F, 1e-12,
                    "set %d: km_platt_objective = the likelihood written here", t);
    }
    /* separable data: the smoothed targets keep A, B finite */
    double f[20], y[20], A, B;
    for (int i = 0; i < 20; i++) {
        f[i] = i < 10 ? -1 - i : 1 + i;
        y[i] = i < 10 ? -1 : 1;
    }
    int it = km_platt_fit(f, y, 20, &A, &B);
    CHECK(it >= 0 && isfinite(A) && isfinite(B) && A < 0,
          "separable decision values: finite A %.4g, B %.4g (the targets 11/12, 1/12)", A, B);
}

/* l rows of dim Gaussian-ish features, y drawn from P(y = 1 | x) = sigmoid(scale u'x). */
static km_problem *logistic_data(int64_t l, int dim, double scale, uint64_t seed)
{
    km_rng r;
    km_rng_seed(&r, seed);
    double *X = malloc((size_t)(l * dim) * sizeof *X), *y = malloc((size_t)l * sizeof *y);
    int64_t *rp = malloc((size_t)(l + 1) * sizeof *rp);
    int32_t *ix = malloc((size_t)(l * dim) * sizeof *ix);
    for (int64_t i = 0; i < l; i++) {
        double z = 0;
        rp[i] = i * dim;
        for (int j = 0; j < dim; j++) {
            double x = km_rng_normal(&r);
            X[i * dim + j] = x;
            ix[i * dim + j] = j;
            z += x * (j % 2 ? 0.5 : -0.3);
        }
        y[i] = unif(&r) < 1 / (1 + exp(-scale * z)) ? 1 : -1;
    }
    rp[l] = l * dim;
    km_problem *P = NULL;
    km_error err;
    km_problem_from_csr(l, dim, rp, ix, X, y, NULL, &P, &err);
    free(X);
    free(y);
    free(rp);
    free(ix);
    return P;
}

/* Brier score and expected calibration error (10 equal-width bins) of probabilities p of
 * the positive class against labels y. */
static void calibration(const double *p, const double *y, int64_t n, double *brier,
                        double *ece)
{
    double cnt[10] = {0}, conf[10] = {0}, hit[10] = {0};
    *brier = 0;
    for (int64_t i = 0; i < n; i++) {
        double o = y[i] > 0;
        *brier += (p[i] - o) * (p[i] - o) / (double)n;
        int b = (int)(p[i] * 10);
        b = b > 9 ? 9 : b;
        cnt[b]++;
        conf[b] += p[i];
        hit[b] += o;
    }
    *ece = 0;
    for (int b = 0; b < 10; b++)
        *ece += fabs(hit[b] - conf[b]) / (double)n;
}

static km_model *train(const char *method, const km_problem *P, const char *kernel,
                       int probability)
{
    km_params *p = km_params_new();
    km_error err;
    if (kernel) {
        km_params_set(p, "kernel", kernel, &err);
        km_params_set(p, "gamma", "0.2", &err);
    }
    if (probability)
        km_params_set(p, "probability", "1", &err);
    km_model *m = NULL;
    int rc = km_method_train(km_method_find(method), P, p, &m, NULL, &err);
    if (rc)
        printf("# %s\n", err.msg);
    km_params_free(p);
    return rc ? NULL : m;
}

static void test_calibrated(void)
{
    /* a held-back split: train on 1,500 rows, measure on 3,000 others */
    km_problem *Tr = logistic_data(1500, 6, 4, 21), *Te = logistic_data(3000, 6, 4, 22);
    const char *names[] = {"l1svm", "l2svm", "l1svm rbf"};
    for (int t = 0; t < 3; t++) {
        km_model *m = train(t == 2 ? "l1svm" : names[t], Tr, t == 2 ? "rbf" : NULL, 1);
        CHECK(m && km_model_has_probability(m) && m->prob_A && m->prob_A[0] < 0,
              "%s -b 1: a model with probabilities (A %g < 0: larger f, more likely +1)",
              names[t], m && m->prob_A ? m->prob_A[0] : NAN);
        if (!m)
            continue;
        double *pr = malloc((size_t)Te->l * 2 * sizeof *pr), *dec = malloc((size_t)Te->l * sizeof *dec);
        double *pp = malloc((size_t)Te->l * sizeof *pp), *ps = malloc((size_t)Te->l * sizeof *ps);
        km_error err;
        int rc = km_predict_proba(m, Te, pr, &err);
        rc |= km_model_decision_rows(m, Te, NULL, Te->l, dec, 1, &err);
        for (int64_t i = 0; i < Te->l; i++) {
            pp[i] = pr[2 * i + 1];                 /* labels -1 1: column 1 is +1 */
            ps[i] = 1 / (1 + exp(-dec[i]));        /* the raw decision value, squashed */
        }
        double bp, ep, bs, es;
        calibration(pp, Te->y, Te->l, &bp, &ep);
        calibration(ps, Te->y, Te->l, &bs, &es);
        CHECK(rc == KM_OK && bp < bs && ep < es, "%s: held-back Brier score %.4f < %.4f and "
              "ECE %.4f < %.4f of sigmoid(f)", names[t], bp, bs, ep, es);
        free(pr);
        free(dec);
        free(pp);
        free(ps);
        km_model_free(m);
    }
    /* logistic regression's own probabilities: calibrated on the same split */
    km_model *lr = train("logreg", Tr, NULL, 0), *sv = train("l1svm", Tr, NULL, 0);
    if (lr && sv) {
        double *pr = malloc((size_t)Te->l * 2 * sizeof *pr), *dec = malloc((size_t)Te->l * sizeof *dec);
        double *pp = malloc((size_t)Te->l * sizeof *pp), *ps = malloc((size_t)Te->l * sizeof *ps);
        km_error err;
        int rc = km_predict_proba(lr, Te, pr, &err);
        rc |= km_model_decision_rows(sv, Te, NULL, Te->l, dec, 1, &err);
        for (int64_t i = 0; i < Te->l; i++) {
            pp[i] = pr[2 * i + 1];
            ps[i] = 1 / (1 + exp(-dec[i]));
        }
        double bp, ep, bs, es;
        calibration(pp, Te->y, Te->l, &bp, &ep);
        calibration(ps, Te->y, Te->l, &bs, &es);
        CHECK(rc == KM_OK && bp < bs && ep < es, "logreg: held-back Brier %.4f < %.4f and ECE "
              "%.4f < %.4f of an SVM's sigmoid(f)", bp, bs, ep, es);
        /* an SVM without -b 1 has no probabilities */
        CHECK(!km_model_has_probability(sv) && km_predict_proba(sv, Te, pr, &err) == KM_EUSAGE,
              "km_predict_proba refuses an SVM trained without -b 1: %s", err.msg);
        free(pr);
        free(dec);
        free(pp);
        free(ps);
    }
    km_model_free(lr);
    km_model_free(sv);
    /* the same seed, the same A, B */
    km_model *a = train("l2svm", Tr, NULL, 1), *b = train("l2svm", Tr, NULL, 1);
    CHECK(a && b && a->prob_A[0] == b->prob_A[0] && a->prob_B[0] == b->prob_B[0],
          "Platt's fit is deterministic (the folds drawn with --seed)");
    km_model_free(a);
    km_model_free(b);
    km_problem_free(Tr);
    km_problem_free(Te);
}

/* Three classes, one-versus-all: p_k = sigmoid(-(A_k f_k + B_k)) / sum_j (...). */
static void test_multiclass(char *dir)
{
    km_problem *P = random_problem(240, 6, 0.8, 1, 9);
    for (int64_t i = 0; i < P->l; i++)
        P->y[i] = i % 3 == 0 ? 3 : P->y[i];
    for (int kern = 0; kern < 2; kern++) {
        km_model *m = train("l1svm", P, kern ? "rbf" : NULL, 1);
        CHECK(m && m->nr_w == 3 && m->prob_A && m->prob_B, "%s 3 classes -b 1: A, B per class",
              kern ? "kernel" : "linear");
        if (!m)
            continue;
        double *pr = malloc((size_t)P->l * 3 * sizeof *pr), *dec = malloc((size_t)P->l * 3 * sizeof *dec);
        km_error err;
        int rc = km_predict_proba(m, P, pr, &err) | km_model_decision_rows(m, P, NULL, P->l,
                                                                           dec, 1, &err);
        double bad = 0;
        for (int64_t i = 0; i < P->l; i++) {
            double q[3], s = 0;
            for (int k = 0; k < 3; k++)
                s += q[k] = 1 / (1 + exp(m->prob_A[k] * dec[i * 3 + k] + m->prob_B[k]));
            for (int k = 0; k < 3; k++)
                bad = fmax(bad, fabs(pr[i * 3 + k] - q[k] / s));
        }
        CHECK(rc == KM_OK && bad < 1e-12, "%s 3 classes: probabilities = the normalised "
              "sigmoids by hand (%.2g)", kern ? "kernel" : "linear", bad);
        /* the keys: written, read back, written again byte for byte */
        char p1[512], p2[512];
        snprintf(p1, sizeof p1, "%s/m%d.model", dir, kern);
        snprintf(p2, sizeof p2, "%s/m%d.again", dir, kern);
        km_model *q = NULL;
        rc = km_model_write(m, p1, &err);
        rc |= km_model_read(p1, &q, &err);
        if (q)
            rc |= km_model_write(q, p2, &err);
        char cmd[2200];
        snprintf(cmd, sizeof cmd, "cmp -s %s %s && grep -q '^probA ' %s && grep -q '^probB ' %s",
                 p1, p2, p1, p1);
        int same = q && q->prob_A && memcmp(q->prob_A, m->prob_A, 3 * sizeof(double)) == 0 &&
                   memcmp(q->prob_B, m->prob_B, 3 * sizeof(double)) == 0;
        CHECK(rc == KM_OK && same && system(cmd) == 0, "%s model: probA, probB read back bit "
              "for bit, the file written again byte for byte", kern ? "kernel" : "linear");
        km_model_free(q);
        free(pr);
        free(dec);
        km_model_free(m);
    }
    km_problem_free(P);
}

/* Damaged probability keys: a clear KM_EINPUT naming the line, no crash. */
static void test_hostile(const char *dir)
{
    const char *head = "kmtk-model 1\nsolver linear\nloss l1svm\n";
    const char *tail = "C 1\nepsilon 0.1\nbias -1\nnr_feature 2\nnr_class 2\nlabels -1 1\n"
                       "label_weights 1 1\nnr_w 1\nw\n0.5\n-0.25\nend\n";
    const char *keys[][2] = {
        {"probA -1.5\nprobB 0.5\n", NULL},                 /* fine */
        {"probA -1.5\n", "together"},                      /* no probB */
        {"probA -1.5 2\nprobB 0.5\n", "nr_w numbers"},     /* two for nr_w 1 */
        {"probA nan\nprobB 0.5\n", "finite"},
        {"probA\nprobB 0.5\n", "nr_w numbers"},
        {"probA 1e999\nprobB 0\n", "nr_w numbers|finite"},
    };
    for (size_t t = 0; t < sizeof keys / sizeof *keys; t++) {
        char path[512];
        snprintf(path, sizeof path, "%s/h%zu.model", dir, t);
        FILE *f = fopen(path, "w");
        fprintf(f, "%s%s%s", head, keys[t][0], tail);
        fclose(f);
        km_model *m = NULL;
        km_error err = {0};
        int rc = km_model_read(path, &m, &err);
        if (!keys[t][1]) {
            double dec = 2, pr[2];
            if (m)
                km_model_probability(m, &dec, pr);
            CHECK(rc == KM_OK && m && km_model_has_probability(m) &&
                  fabs(pr[1] - 1 / (1 + exp(-1.5 * 2 + 0.5))) < 1e-15,
                  "a model with probA, probB reads; P(1 | f = 2) = 1/(1 + exp(A f + B))");
        } else {
            CHECK(rc == KM_EINPUT && strstr(err.msg, "h") && !m,
                  "damaged probability keys (case %zu): %s", t, err.msg);
        }
        km_model_free(m);
    }
    /* regression models take no probability keys */
    char path[512];
    snprintf(path, sizeof path, "%s/reg.model", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "kmtk-model 1\nsolver linear\nloss rls\nprobA 1\nprobB 0\nC 1\nepsilon 0.1\n"
               "bias -1\nnr_feature 1\nnr_class 0\nnr_w 1\nw\n0.5\nend\n");
    fclose(f);
    km_model *m = NULL;
    km_error err = {0};
    CHECK(km_model_read(path, &m, &err) == KM_EINPUT && !m,
          "probability keys in a regression model: %s", err.msg);
}

int main(void)
{
    char dir[] = "/tmp/kmtk_test_prob_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    test_platt_fit();
    test_calibrated();
    test_multiclass(dir);
    test_hostile(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
    TEST_EXIT();
}
