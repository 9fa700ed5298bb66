/* fuzz_model.c - the model reader (common/model*.c) on the input as a file: km_model_read;
 * a model it accepts must be usable (decision values and predictions for a few rows with
 * and without task ids, features beyond the model's included) and must write out and read
 * back to the same text (the format round-trips exactly). */
#include <math.h>

#include "fuzz_util.h"
#include "model.h"

static km_problem *rows;   /* 4 rows over features 1..9 and 40, task ids 0, 1, 2, 7 */

static void make_rows(void)
{
    static const int64_t row_ptr[] = {0, 3, 3, 6, 9};
    static const int32_t index[] = {0, 2, 8, 1, 2, 39, 0, 4, 5};
    static const double value[] = {0.5, -1, 0.25, 1, 2, -0.75, -0.125, 3, 1};
    static const double y[] = {1, -1, 1, 2};
    static const int64_t qid[] = {0, 1, 2, 7};
    km_error err;
    if (km_problem_from_csr(4, 40, row_ptr, index, value, y, qid, &rows, &err)) {
        fprintf(stderr, "fuzz_model: %s\n", err.msg);
        abort();
    }
}

static void drop_rows(void)
{
    km_problem_free(rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!rows) {
        make_rows();
        atexit(drop_rows);
    }
    char path[512], out1[512], out2[512];
    fz_write(path, "in.model", data, size);
    km_model *m = NULL;
    km_error err;
    int rc = km_model_read(path, &m, &err);
    if (rc) {
        FZ_CHECK(!m, "model left on error");
        FZ_CHECK(rc == KM_EINPUT || rc == KM_EINTERNAL, "code %d: %s", rc, err.msg);
        return 0;
    }
    FZ_CHECK(m->nr_w >= 1 && m->n >= 0, "nr_w %d, n %d", m->nr_w, (int)m->n);
    if (m->nr_w <= 100000) {
        double *dec = malloc((size_t)rows->l * (size_t)m->nr_w * sizeof *dec);
        double pred[4];
        FZ_CHECK(dec, "out of memory");
        rc = km_model_decision_rows(m, rows, NULL, rows->l, dec, 1, &err);
        FZ_CHECK(rc == KM_OK || rc == KM_EINTERNAL, "decision values: %s", err.msg);
        if (rc == KM_OK) {
            for (int64_t i = 0; i < rows->l; i++)
                (void)km_model_predict_label(m, dec + i * m->nr_w);
            if (m->nr_output > 0 && m->nr_output <= 100000) {
                double *o = malloc((size_t)m->nr_output * sizeof *o);
                FZ_CHECK(o, "out of memory");
                km_model_outputs(m, dec, o);
                free(o);
            }
        }
        rc = km_predict(m, rows, pred, &err);
        FZ_CHECK(rc == KM_OK || rc == KM_EINTERNAL, "predict: %s", err.msg);
        free(dec);
    }
    fz_path(out1, "out1.model");
    fz_path(out2, "out2.model");
    if (m->kind == &km_kind_liblinear || m->kind == &km_kind_libsvm) {
        /* LIBLINEAR's and LIBSVM's files (model_liblinear.c, model_libsvm.c) are not written
         * as kmtk models; a LIBLINEAR one writes back in its own format, to the same text */
        FZ_CHECK(km_model_write(m, out1, &err) != KM_OK, "a foreign model written as kmtk's");
        rc = m->kind == &km_kind_liblinear ? km_model_write_liblinear(m, out1, &err) : KM_EUSAGE;
        FZ_CHECK(rc == KM_OK || rc == KM_EUSAGE, "write as LIBLINEAR: %s", err.msg);
        if (rc == KM_OK) {
            km_model *m3 = NULL;
            rc = km_model_read(out1, &m3, &err);
            FZ_CHECK(rc == KM_OK, "a written LIBLINEAR model does not read back: %s", err.msg);
            rc = km_model_write_liblinear(m3, out2, &err);
            FZ_CHECK(rc == KM_OK, "write as LIBLINEAR again: %s", err.msg);
            size_t n1, n2;
            char *t1 = fz_slurp(out1, &n1), *t2 = fz_slurp(out2, &n2);
            FZ_CHECK(n1 == n2 && !memcmp(t1, t2, n1), "LIBLINEAR text changes on a round trip");
            free(t1);
            free(t2);
            km_model_free(m3);
        }
        km_model_free(m);
        return 0;
    }
    rc = km_model_write(m, out1, &err);
    FZ_CHECK(rc == KM_OK, "write: %s", err.msg);
    km_model *m2 = NULL;
    rc = km_model_read(out1, &m2, &err);
    FZ_CHECK(rc == KM_OK, "a written model does not read back: %s", err.msg);
    rc = km_model_write(m2, out2, &err);
    FZ_CHECK(rc == KM_OK, "write: %s", err.msg);
    size_t n1, n2;
    char *t1 = fz_slurp(out1, &n1), *t2 = fz_slurp(out2, &n2);
    FZ_CHECK(n1 == n2 && !memcmp(t1, t2, n1), "model text changes on a round trip");
    free(t1);
    free(t2);
    km_model_free(m2);
    km_model_free(m);
    return 0;
}
