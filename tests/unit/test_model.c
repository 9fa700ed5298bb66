/* test_model.c - model files round-trip exactly and damaged ones are rejected. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "rng.h"
#include "test.h"

/* Writes text to path. */
static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

int main(void)
{
    char dir[] = "/tmp/kmtk-model-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temporary directory");
    char path[256];
    snprintf(path, sizeof path, "%s/m.model", dir);
    km_error err;
    km_rng r;
    km_rng_seed(&r, 3);
    for (int shape = 0; shape < 3; shape++) {
        int nc = shape == 0 ? 0 : shape == 1 ? 2 : 4, nw = nc > 2 ? nc : 1;
        km_model *m = km_model_new(shape ? KM_LOSS_L1SVM : KM_LOSS_SVR, 50, nc, nw, &err);
        m->C = 0.1;
        m->eps = 1.0 / 3;
        m->bias = shape == 2 ? 1 : -1;
        for (int k = 0; k < nc; k++) {
            m->labels[k] = k * 2.5 - 1;
            m->label_weight[k] = 1 + k / 7.0;
        }
        for (int64_t j = 0; j < 51 * nw; j++) {
            uint64_t bits = km_rng_next(&r);
            double v;
            memcpy(&v, &bits, sizeof v);
            m->w[j] = isfinite(v) ? v : 1e-310;   /* any finite double, subnormals too */
        }
        if (shape == 0)
            m->w[3] = -0.0;
        CHECK(km_model_write(m, path, &err) == KM_OK, "write model shape %d", shape);
        km_model *q = NULL;
        int rc = km_model_read(path, &q, &err);
        CHECK(rc == KM_OK, "read model shape %d back (%s)", shape, rc ? err.msg : "");
        if (rc == KM_OK) {
            int64_t rows = 50 + (m->bias >= 0);
            CHECK(q->loss == m->loss && q->C == m->C && q->eps == m->eps && q->bias == m->bias
                  && q->n == m->n && q->nr_class == nc && q->nr_w == nw,
                  "header round-trips exactly (shape %d)", shape);
            CHECK(memcmp(q->w, m->w, (size_t)(rows * nw) * sizeof *m->w) == 0 &&
                  (nc == 0 || (memcmp(q->labels, m->labels, (size_t)nc * sizeof(double)) == 0 &&
                   memcmp(q->label_weight, m->label_weight, (size_t)nc * sizeof(double)) == 0)),
                  "weights and labels round-trip bit for bit (shape %d)", shape);
            km_model_free(q);
        }
        km_model_free(m);
    }
    struct { const char *text, *want; } bad[] = {
        {"", "empty file"},
        {"libsvm-model 1\n", ":1: not a kmtk model"},
        {"kmtk-model 2\n", ":1: model format version 2 is not supported"},
        {"kmtk-model 1\nsolver linear\nloss hinge\n", ":3: unknown loss"},
        {"kmtk-model 1\nsolver linear\ncolor blue\n", ":3: unknown header key 'color'"},
        {"kmtk-model 1\nsolver linear\nloss l1svm\n", "truncated model (no 'w' line)"},
        {"kmtk-model 1\nloss rls\nC 1\nepsilon 0\nbias -1\nnr_feature 2\nnr_class 0\nnr_w 1\n"
         "w\n0.5\n", "truncated model (1 of 2 weight lines)"},
        {"kmtk-model 1\nloss rls\nC 1\nepsilon 0\nbias -1\nnr_feature 2\nnr_class 0\nnr_w 1\n"
         "w\n0.5\nnan\n", ":11: expected nr_w weights"},
        {"kmtk-model 1\nloss rls\nC 1\nepsilon 0\nbias -1\nnr_feature 2\nnr_class 0\nnr_w 1\n"
         "w\n0.5\n1\n", "no 'end'"},
        {"kmtk-model 1\nloss rls\nC 1\nepsilon 0\nbias -1\nnr_feature 2\nnr_class 0\nnr_w 1\n"
         "w\n0.5\n1\nend\nmore\n", ":13: unexpected data after 'end'"},
        {"kmtk-model 1\nloss rls\nC 1\nepsilon 0\nbias -1\nnr_feature 2\nnr_class 3\nnr_w 1\n"
         "w\n", "header incomplete"},
    };
    for (size_t t = 0; t < sizeof bad / sizeof *bad; t++) {
        put(path, bad[t].text);
        km_model *q = NULL;
        int rc = km_model_read(path, &q, &err);
        CHECK(rc == KM_EINPUT && strstr(err.msg, bad[t].want) && strstr(err.msg, path),
              "damaged model %zu rejected with '%s' (got '%s')", t, bad[t].want, err.msg);
    }
    snprintf(path, sizeof path, "%s/no/such/dir/m.model", dir);
    km_model *m = km_model_new(KM_LOSS_RLS, 1, 0, 1, &err);
    CHECK(km_model_write(m, path, &err) == KM_EINPUT && strstr(err.msg, "cannot create"),
          "unwritable path reported");
    km_model_free(m);
    snprintf(path, sizeof path, "%s/m.model", dir);
    unlink(path);
    rmdir(dir);
    TEST_EXIT();
}
