/* fuzz_svmlight.c - the svmlight reader (common/svmlight.c, common/stream.c) on the input as a
 * file: km_svmlight_read, checked against the problem's contract (kmtk.h, svmlight.h) and
 * against the row-at-a-time reader (km_svmlight_next, a separate code path); then, unless
 * the input is gzip already, the same bytes gzip-compressed must read to the same problem. */
#include <math.h>
#include <zlib.h>

#include "fuzz_util.h"
#include "svmlight.h"

static void check_problem(const km_problem *P, const char *path)
{
    FZ_CHECK(P->l >= 1 && P->nnz >= 0 && P->n >= 0, "%s: l %lld nnz %lld n %d", path,
             (long long)P->l, (long long)P->nnz, (int)P->n);
    FZ_CHECK(P->row_ptr[0] == 0 && P->row_ptr[P->l] == P->nnz, "%s: row_ptr ends", path);
    int32_t nout = km_problem_nout(P), maxi = -1;
    for (int64_t i = 0; i < P->l; i++) {
        FZ_CHECK(P->row_ptr[i] <= P->row_ptr[i + 1], "%s: row_ptr decreases at %lld", path,
                 (long long)i);
        for (int64_t k = P->row_ptr[i]; k < P->row_ptr[i + 1]; k++) {
            FZ_CHECK(P->index[k] >= 0 && P->index[k] < P->n, "%s: index %d (n %d)", path,
                     (int)P->index[k], (int)P->n);
            FZ_CHECK(k == P->row_ptr[i] || P->index[k] > P->index[k - 1],
                     "%s: indices not increasing in row %lld", path, (long long)i);
            FZ_CHECK(isfinite(P->value[k]), "%s: value not finite", path);
            if (P->index[k] > maxi)
                maxi = P->index[k];
        }
        for (int32_t j = 0; j < nout; j++)
            FZ_CHECK(isfinite(P->y[i * nout + j]), "%s: label not finite", path);
    }
    FZ_CHECK(P->n == maxi + 1, "%s: n %d, largest index %d", path, (int)P->n, (int)maxi);
}

static int same_problem(const km_problem *a, const km_problem *b)
{
    int32_t nout = km_problem_nout(a);
    return a->l == b->l && a->nnz == b->nnz && a->n == b->n &&
           km_problem_nout(b) == nout && !a->qid == !b->qid &&
           !memcmp(a->row_ptr, b->row_ptr, (size_t)(a->l + 1) * sizeof *a->row_ptr) &&
           (!a->nnz || (!memcmp(a->index, b->index, (size_t)a->nnz * sizeof *a->index) &&
                        !memcmp(a->value, b->value, (size_t)a->nnz * sizeof *a->value))) &&
           !memcmp(a->y, b->y, (size_t)(a->l * nout) * sizeof *a->y) &&
           (!a->qid || !memcmp(a->qid, b->qid, (size_t)a->l * sizeof *a->qid));
}

/* The rows of the streaming reader must be those of P (or its error the same). */
static void check_stream(const char *path, const km_problem *P, int rc, const km_error *rerr)
{
    km_error err;
    km_svmlight_reader *r = km_svmlight_open(path, &err);
    FZ_CHECK(r, "%s: open: %s", path, err.msg);
    km_row row;
    int64_t i = 0, got;
    int32_t nout = P ? km_problem_nout(P) : 0;
    while ((got = km_svmlight_next(r, &row, &err)) == 1) {
        if (P) {
            FZ_CHECK(i < P->l, "%s: more rows streamed than read", path);
            int64_t a = P->row_ptr[i];
            FZ_CHECK(row.nnz == P->row_ptr[i + 1] - a && row.nout == nout &&
                         !memcmp(row.ys, P->y + i * nout, (size_t)nout * sizeof *row.ys) &&
                         (!row.nnz ||
                          (!memcmp(row.index, P->index + a, (size_t)row.nnz * sizeof *row.index) &&
                           !memcmp(row.value, P->value + a, (size_t)row.nnz * sizeof *row.value))) &&
                         row.has_qid == !!P->qid && (!P->qid || row.qid == P->qid[i]),
                     "%s: row %lld streamed differs from the one read", path, (long long)i);
        }
        i++;
    }
    if (rc == KM_OK) {
        FZ_CHECK(got == 0 && i == P->l, "%s: stream ended with %lld after %lld rows of %lld: %s",
                 path, (long long)got, (long long)i, (long long)P->l, got ? err.msg : "");
    } else if (got < 0) {
        FZ_CHECK(!strcmp(err.msg, rerr->msg), "%s: read says '%s', stream says '%s'", path,
                 rerr->msg, err.msg);
    } else {   /* the stream ended cleanly: only "no data" or a whole-file rule remains */
        FZ_CHECK(i == 0 || strstr(rerr->msg, "outputs") || strstr(rerr->msg, "qid"),
                 "%s: read failed ('%s') where the stream read %lld rows", path, rerr->msg,
                 (long long)i);
    }
    km_svmlight_close(r);
}

static size_t gzip_bytes(const uint8_t *data, size_t size, unsigned char **out)
{
    z_stream z = {0};
    if (deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        abort();
    size_t cap = deflateBound(&z, (uLong)size) + 32;
    *out = malloc(cap);
    if (!*out)
        abort();
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)size;
    z.next_out = *out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        abort();
    size_t n = z.total_out;
    deflateEnd(&z);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[512], gzpath[512];
    fz_write(path, "in.svm", data, size);
    km_problem *P = NULL, *G = NULL;
    km_error err, gerr;
    int rc = km_svmlight_read(path, &P, &err);
    if (rc == KM_OK) {
        check_problem(P, path);
    } else {
        FZ_CHECK(!P, "problem left on error");
        FZ_CHECK(rc == KM_EINPUT || rc == KM_EINTERNAL, "code %d: %s", rc, err.msg);
        FZ_CHECK(rc != KM_EINPUT || !strncmp(err.msg, path, strlen(path)),
                 "message does not name the file: %s", err.msg);
    }
    check_stream(path, P, rc, &err);
    if (!(size >= 2 && data[0] == 0x1f && data[1] == 0x8b)) {
        unsigned char *gz;
        size_t gn = gzip_bytes(data, size, &gz);
        fz_write(gzpath, "in.svm.gz", gz, gn);
        free(gz);
        int grc = km_svmlight_read(gzpath, &G, &gerr);
        FZ_CHECK(grc == rc, "plain %d (%s), gzip %d (%s)", rc, rc ? err.msg : "", grc,
                 grc ? gerr.msg : "");
        if (rc == KM_OK)
            FZ_CHECK(same_problem(P, G), "plain and gzip read differently");
        else if (rc == KM_EINPUT)
            FZ_CHECK(!strcmp(err.msg + strlen(path), gerr.msg + strlen(gzpath)),
                     "plain '%s', gzip '%s'", err.msg, gerr.msg);
        km_problem_free(G);
    }
    km_problem_free(P);
    return 0;
}
