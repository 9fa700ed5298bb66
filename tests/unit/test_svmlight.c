/* test_svmlight.c - the svmlight reader: accepted syntax, every input error with its
 * exact FILE:LINE:COL message, gzip (members, truncation, corruption), stdin, streaming. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "svmlight.h"
#include "test.h"

static char dir[64];          /* temporary directory for this run */
static char path[128];        /* the file most recently written */
static int nfiles;

/* Writes len bytes to a new file in dir; path then names it. */
static const char *put(const char *data, size_t len)
{
    snprintf(path, sizeof path, "%s/f%03d.svm", dir, nfiles++);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        printf("FAIL - cannot write %s\n", path);
        exit(1);
    }
    return path;
}

/* Writes a C string to a new file. */
static const char *put_str(const char *text)
{
    return put(text, strlen(text));
}

/* Gzip-compresses len bytes in memory (one member); returns a malloc'd buffer. */
static unsigned char *gz_bytes(const char *data, size_t len, size_t *outlen)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        exit(1);
    size_t cap = deflateBound(&z, (uLong)len) + 64;
    unsigned char *out = malloc(cap);
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (!out || deflate(&z, Z_FINISH) != Z_STREAM_END)
        exit(1);
    *outlen = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

/* Reads text from a file and checks that it fails with exactly "PATH:want". */
static void expect_error(const char *text, const char *want)
{
    const char *p = put_str(text);
    km_problem *pb = NULL;
    km_error err;
    km_error_clear(&err);
    int rc = km_svmlight_read(p, &pb, &err);
    char full[512];
    snprintf(full, sizeof full, "%s:%s", p, want);
    int ok = rc == KM_EINPUT && err.code == KM_EINPUT && pb == NULL &&
             strcmp(err.msg, full) == 0;
    CHECK(ok, "error '%s'", want);
    if (!ok)
        printf("  input '%s'\n  got rc %d: '%s'\n", text, rc, err.msg);
    km_problem_free(pb);
}

/* Reads text from a file, expecting success. */
static km_problem *read_ok(const char *text, size_t len)
{
    const char *p = put(text, len);
    km_problem *pb = NULL;
    km_error err;
    int rc = km_svmlight_read(p, &pb, &err);
    if (rc != KM_OK) {
        printf("  unexpected error %d: %s\n", rc, err.msg);
        return NULL;
    }
    return pb;
}

/* The problem of the "syntax tour" file below, checked field by field. */
static int tour_ok(const km_problem *p)
{
    static const int64_t rp[] = {0, 2, 3, 3, 5, 6, 7};
    static const int32_t ix[] = {0, 2, 4, 6, 9, 0, 1};
    static const double va[] = {1, -0.5, 1e3, 0.25, 2, -3, 5};
    static const double y[] = {1, -1, 2.5, 0.5, -0.0, 3};
    if (!p || p->l != 6 || p->nnz != 7 || p->n != 10 || p->qid)
        return 0;
    for (int i = 0; i <= 6; i++)
        if (p->row_ptr[i] != rp[i])
            return 0;
    for (int k = 0; k < 7; k++)
        if (p->index[k] != ix[k] || p->value[k] != va[k])
            return 0;
    for (int i = 0; i < 6; i++)
        if (p->y[i] != y[i])
            return 0;
    return 1;
}

/* Comments, blank lines, tabs, CRLF, no final newline, signs and number forms. */
static const char tour[] =
    "# a comment line\n"
    "\n"
    "+1 1:1 3:-.5   # trailing comment\n"
    "   \t  \n"
    "-1\t5:1e3\n"
    "2.5\r\n"
    "  .5 7:0.25\t\t10:2.#no space before the comment\r\n"
    "-0 1:-3\n"
    "3e0 2:5.";

static void test_syntax(void)
{
    km_problem *p = read_ok(tour, strlen(tour));
    CHECK(tour_ok(p), "syntax tour: comments, blanks, tabs, CRLF, no final newline");
    km_problem_free(p);

    p = read_ok("1 2147483647:1.5\n", 17);
    CHECK(p && p->n == INT32_MAX && p->index[0] == INT32_MAX - 1,
          "index INT32_MAX is accepted, stored 0-based");
    km_problem_free(p);

    p = read_ok("1 0005:1\n", 9);
    CHECK(p && p->n == 5 && p->index[0] == 4, "leading zeros in an index");
    km_problem_free(p);

    const char *q = "1 qid:3 1:1\n0 qid:3 2:1\n# c\n1 qid:9223372036854775807 1:2\n"
                    "2\tqid:0\n";
    p = read_ok(q, strlen(q));
    CHECK(p && p->l == 4 && p->qid && p->qid[0] == 3 && p->qid[1] == 3 &&
              p->qid[2] == INT64_MAX && p->qid[3] == 0 && p->nnz == 3 &&
              p->row_ptr[4] == 3,
          "qid kept per row (including 0 and INT64_MAX)");
    km_problem_free(p);

    p = read_ok("1\n-1\n", 5);
    CHECK(p && p->l == 2 && p->nnz == 0 && p->n == 0 && p->row_ptr[2] == 0,
          "rows without features");
    km_problem_free(p);
}

/* Every malformed input: exact message, line and column. */
static void test_errors(void)
{
    expect_error("1 1:abc\n", "1:5: expected a number as value of feature 1, got 'abc'");
    expect_error("1 1:1.5x\n", "1:5: expected a number as value of feature 1, got '1.5x'");
    expect_error("1 2:0x10\n", "1:5: expected a number as value of feature 2, got '0x10'");
    expect_error("1 2:1e\n", "1:5: expected a number as value of feature 2, got '1e'");
    expect_error("1 3\n", "1:3: expected ':' after feature index 3");
    expect_error("1 3 4:1\n", "1:3: expected ':' after feature index 3");
    expect_error("1 3x:1\n", "1:3: expected ':' after feature index 3");
    expect_error("1 1:\n", "1:5: expected a value after '1:'");
    expect_error("1 1: 2:3\n", "1:5: expected a value after '1:'");
    expect_error("1 1:#c\n", "1:5: expected a value after '1:'");
    expect_error("1 0:1\n", "1:3: expected a feature index >= 1, got 0");
    expect_error("1 -2:1\n", "1:3: expected a feature index >= 1, got '-2'");
    expect_error("1 2147483648:1\n",
                 "1:3: expected a feature index <= 2147483647, got '2147483648'");
    expect_error("1 1:1 99999999999999999999999:1\n",
                 "1:7: expected a feature index <= 2147483647, got "
                 "'99999999999999999999999'");
    expect_error("1 3:1 2:1\n", "1:7: expected a feature index > 3 (indices must "
                                "increase), got 2");
    expect_error("1 3:1 3:2\n", "1:7: expected a feature index > 3 (indices must "
                                "increase), got 3");
    expect_error("1 1:nan\n", "1:5: expected a finite value for feature 1, got 'nan'");
    expect_error("1 1:-Infinity\n",
                 "1:5: expected a finite value for feature 1, got '-Infinity'");
    expect_error("1 4:1e400\n", "1:5: expected a finite value for feature 4, got '1e400'");
    expect_error("nan 1:1\n", "1:1: expected a finite label, got 'nan'");
    expect_error("-inf\n", "1:1: expected a finite label, got '-inf'");
    expect_error("1e400 1:1\n", "1:1: expected a finite label, got '1e400'");
    expect_error("1:2 3:4\n", "1:1: expected a label before the features, got '1:2'");
    expect_error("  1:2\n", "1:3: expected a label before the features, got '1:2'");
    expect_error("abc 1:1\n", "1:1: expected a label (a real number), got 'abc'");
    expect_error("1,2 1:1\n3 1:1\n", "2:1: expected 2 outputs in the label (as on line 1), "
                                     "got 1");
    expect_error("1 1:1\n3,4 1:1\n", "2:1: expected 1 output in the label (as on line 1), "
                                     "got 2");
    expect_error("1,,2 1:1\n", "1:3: expected a real number as output 2 of the label, got "
                               "',2'");
    expect_error("1, 1:1\n", "1:3: expected a real number as output 2 of the label, got ''");
    expect_error("1,nan 1:1\n", "1:3: expected a finite label, got 'nan'");
    expect_error("1,2x 1:1\n", "1:3: expected a real number as output 2 of the label, got "
                               "'2x'");
    expect_error("1 abc:1\n", "1:3: expected a feature index (integer >= 1), got 'abc:1'");
    expect_error("1 :1\n", "1:3: expected a feature index (integer >= 1), got ':1'");
    expect_error("1 qid:abc 1:1\n", "1:7: expected a task id (integer "
                                    "0..9223372036854775807) after 'qid:', got 'abc'");
    expect_error("1 qid:-1 1:1\n", "1:7: expected a task id (integer "
                                   "0..9223372036854775807) after 'qid:', got '-1'");
    expect_error("1 qid:\n", "1:7: expected a task id (integer 0..9223372036854775807) "
                             "after 'qid:', got ''");
    expect_error("1 qid:1.5 1:1\n", "1:7: expected a task id (integer "
                                    "0..9223372036854775807) after 'qid:', got '1.5'");
    expect_error("1 qid:9223372036854775808\n",
                 "1:7: expected a task id (integer 0..9223372036854775807) after 'qid:', "
                 "got '9223372036854775808'");
    expect_error("1 1:1 qid:2\n",
                 "1:7: expected qid right after the label, got 'qid:2' after features");
    expect_error("1 qid:1 qid:2 1:1\n", "1:9: expected one qid per row, got a second "
                                        "'qid:2'");
    expect_error("1 qid:1 1:1\n# c\n2 1:1\n",
                 "3:3: expected 'qid:N' after the label (the first data row, line 1, has "
                 "one)");
    expect_error("\n1 1:1\n2 qid:1 1:1\n",
                 "3:3: expected no qid (the first data row, line 2, has none), got "
                 "'qid:1'");
    expect_error("# c\n\n1 1:1\n1 1:x\n",
                 "4:5: expected a number as value of feature 1, got 'x'");
    expect_error("1 1:1\r\n1 2:x\r\n", "2:5: expected a number as value of feature 2, got 'x'");
    expect_error("1 1:1\r2:3\n",
                 "1:5: expected a number as value of feature 1, got '1\\x0d2:3'");
    expect_error("1 1:1\n1 1:", "2:5: expected a value after '1:'");
    expect_error("1 1:1\n2 1:2 3:", "2:9: expected a value after '3:'");
    expect_error("", " no data");
    expect_error("# only a comment\n\n  \n", " no data");
}

/* I/O errors: missing file, directory. */
/* Multi-output labels "y1,...,ym": read into y (l x m, row-major) and streamed as ys. */
static void test_multi_output(void)
{
    const char *p = put_str("0.5,-1,2e3 qid:1 1:1\n# c\n-0.25,0,7 qid:3 2:4\n");
    km_problem *pb = NULL;
    km_error err;
    int rc = km_svmlight_read(p, &pb, &err);
    CHECK(rc == KM_OK && pb->l == 2 && pb->nout == 3 && km_problem_nout(pb) == 3,
          "multi-output read: 2 rows of 3 outputs");
    static const double want[6] = {0.5, -1, 2e3, -0.25, 0, 7};
    CHECK(rc == KM_OK && memcmp(pb->y, want, sizeof want) == 0, "outputs row-major, exact");
    CHECK(rc == KM_OK && pb->qid && pb->qid[1] == 3 && pb->index[1] == 1 && pb->value[1] == 4,
          "qid and features after a multi-output label");
    CHECK(rc == KM_OK && km_problem_single(pb, "f", &err) == KM_EINPUT &&
          strstr(err.msg, "f: 3 outputs per row"), "single-output check: %s", err.msg);
    km_problem_free(pb);
    km_svmlight_reader *r = km_svmlight_open(p, &err);
    km_row row;
    int ok = r && km_svmlight_next(r, &row, &err) == 1 && row.nout == 3 && row.y == 0.5 &&
             row.ys[2] == 2e3 && km_svmlight_next(r, &row, &err) == 1 && row.ys[0] == -0.25;
    CHECK(ok, "streamed rows carry all outputs");
    km_svmlight_close(r);
    /* a long label: 100,000 outputs on one line */
    size_t cap = 100000 * 8 + 16, k = 0;
    char *text = malloc(cap);
    for (int j = 0; j < 100000; j++)
        k += (size_t)sprintf(text + k, j ? ",%d" : "%d", j % 7);
    strcpy(text + k, " 1:1\n");
    p = put_str(text);
    rc = km_svmlight_read(p, &pb, &err);
    CHECK(rc == KM_OK && pb->nout == 100000 && pb->y[99999] == 99999 % 7, "100,000 outputs");
    km_problem_free(pb);
    free(text);
}

static void test_io_errors(void)
{
    char missing[160];
    snprintf(missing, sizeof missing, "%s/does-not-exist.svm", dir);
    km_problem *p = NULL;
    km_error err;
    int rc = km_svmlight_read(missing, &p, &err);
    char want[300];
    snprintf(want, sizeof want, "%s: No such file or directory", missing);
    CHECK(rc == KM_EINPUT && !p && strcmp(err.msg, want) == 0,
          "missing file: '%s' (got '%s')", want, err.msg);

    rc = km_svmlight_read(dir, &p, &err);
    snprintf(want, sizeof want, "%s: Is a directory", dir);
    CHECK(rc == KM_EINPUT && !p && strcmp(err.msg, want) == 0,
          "directory: '%s' (got '%s')", want, err.msg);

    km_svmlight_reader *r = km_svmlight_open(missing, &err);
    CHECK(!r && err.code == KM_EINPUT, "km_svmlight_open fails on a missing file");
}

/* One line of 200,000 features (~2 MB, beyond the initial buffer), among others. */
static void test_huge_line(void)
{
    int nf = 200000;
    size_t cap = (size_t)nf * 24 + 100;
    char *text = malloc(cap), *o = text;
    o += sprintf(o, "-1 1:1\n+1");
    for (int j = 1; j <= nf; j++)
        o += sprintf(o, " %d:%d.%d", j, j % 100, j % 7);
    o += sprintf(o, "\n1 7:7\n");
    km_problem *p = read_ok(text, (size_t)(o - text));
    int ok = p && p->l == 3 && p->nnz == nf + 2 && p->n == nf && p->row_ptr[1] == 1 &&
             p->row_ptr[2] == 1 + nf;
    for (int j = 1; ok && j <= nf; j++)
        ok = p->index[j] == j - 1 && p->value[j] == (j % 100) + (j % 7) / 10.0;
    CHECK(ok, "a line of %d features (%zu bytes) parses", nf, (size_t)(o - text));
    km_problem_free(p);
    free(text);
}

/* Many rows, so the row and pair arrays grow several times. */
static void test_many_rows(void)
{
    int rows = 100000;
    char *text = malloc((size_t)rows * 40), *o = text;
    for (int i = 0; i < rows; i++)
        o += sprintf(o, "%d %d:%d %d:0.5\n", i % 3 - 1, 1 + i % 5, i, 10 + i % 1000);
    km_problem *p = read_ok(text, (size_t)(o - text));
    int ok = p && p->l == rows && p->nnz == 2 * (int64_t)rows && p->n == 1009;
    for (int i = 0; ok && i < rows; i++)
        ok = p->y[i] == i % 3 - 1 && p->row_ptr[i] == 2 * i &&
             p->index[2 * i] == i % 5 && p->value[2 * i] == i &&
             p->index[2 * i + 1] == 9 + i % 1000;
    CHECK(ok, "%d rows, arrays grown and shrunk", rows);
    km_problem_free(p);
    free(text);
}

/* Gzip: one member, concatenated members, truncated and corrupt streams. */
static void test_gzip(void)
{
    size_t n1, n2;
    size_t half = 40; /* split the tour inside a line: members need not end lines */
    unsigned char *g1 = gz_bytes(tour, half, &n1);
    unsigned char *g2 = gz_bytes(tour + half, strlen(tour) - half, &n2);
    unsigned char *cat = malloc(n1 + n2);
    memcpy(cat, g1, n1);
    memcpy(cat + n1, g2, n2);
    size_t nall;
    unsigned char *gall = gz_bytes(tour, strlen(tour), &nall);

    km_problem *p = NULL;
    km_error err;
    const char *f = put((const char *)gall, nall);
    int rc = km_svmlight_read(f, &p, &err);
    CHECK(rc == KM_OK && tour_ok(p), "gzip file (named .svm: detected by content)");
    km_problem_free(p);

    f = put((const char *)cat, n1 + n2);
    rc = km_svmlight_read(f, &p, &err);
    CHECK(rc == KM_OK && tour_ok(p), "concatenated gzip members");
    km_problem_free(p);

    char want[300];
    for (size_t cut = 1; cut <= 9; cut += 4) { /* lose the trailer, then deflate data */
        f = put((const char *)gall, nall - cut);
        p = NULL;
        rc = km_svmlight_read(f, &p, &err);
        snprintf(want, sizeof want,
                 "%s: gzip stream is truncated or corrupt (unexpected end of file)", f);
        CHECK(rc == KM_EINPUT && !p && strcmp(err.msg, want) == 0,
              "gzip cut by %zu bytes: '%s' (got '%s')", cut, want, err.msg);
    }
    f = put((const char *)gall, 2);
    rc = km_svmlight_read(f, &p, &err);
    snprintf(want, sizeof want,
             "%s: gzip stream is truncated or corrupt (unexpected end of file)", f);
    CHECK(rc == KM_EINPUT && strcmp(err.msg, want) == 0, "gzip magic only: truncated");

    gall[nall - 6] ^= 0x55; /* the CRC32 of the trailer */
    f = put((const char *)gall, nall);
    rc = km_svmlight_read(f, &p, &err);
    snprintf(want, sizeof want, "%s: gzip stream is truncated or corrupt (", f);
    CHECK(rc == KM_EINPUT && strncmp(err.msg, want, strlen(want)) == 0,
          "gzip with a bad CRC: '%s'", err.msg);
    gall[nall - 6] ^= 0x55;

    unsigned char *junk = malloc(nall + 3);
    memcpy(junk, gall, nall);
    memcpy(junk + nall, "xyz", 3);
    f = put((const char *)junk, nall + 3);
    rc = km_svmlight_read(f, &p, &err);
    CHECK(rc == KM_EINPUT && strncmp(err.msg, f, strlen(f)) == 0 &&
              strstr(err.msg, "gzip stream is truncated or corrupt"),
          "garbage after the last gzip member: '%s'", err.msg);

    size_t nbad;
    unsigned char *bad = gz_bytes("1 1:1\n2 1:x\n", 12, &nbad);
    f = put((const char *)bad, nbad);
    rc = km_svmlight_read(f, &p, &err);
    snprintf(want, sizeof want, "%s:2:5: expected a number as value of feature 1, got 'x'",
             f);
    CHECK(rc == KM_EINPUT && strcmp(err.msg, want) == 0, "error inside a gzip file: '%s'",
          err.msg);
    free(bad);
    free(junk);
    free(g1);
    free(g2);
    free(cat);
    free(gall);
}

/* A gzip file of many blocks (read ahead by the stream's helper thread): content,
 * an error near the end, truncation, and closing a stream early. */
static void test_gzip_large(void)
{
    int rows = 300000;
    char *text = malloc((size_t)rows * 40), *o = text;
    for (int i = 0; i < rows; i++)
        o += sprintf(o, "%d 1:%d 2:0.5 %d:%d\n", i % 2, i, 3 + i % 50, i % 7);
    size_t len = (size_t)(o - text), ng;
    unsigned char *g = gz_bytes(text, len, &ng);
    km_problem *p = NULL;
    km_error err;
    const char *f = put((const char *)g, ng);
    int rc = km_svmlight_read(f, &p, &err);
    int ok = rc == KM_OK && p->l == rows && p->nnz == 3 * (int64_t)rows;
    for (int i = 0; ok && i < rows; i++)
        ok = p->y[i] == i % 2 && p->value[3 * i] == i && p->index[3 * i + 2] == 2 + i % 50;
    CHECK(ok, "gzip of %zu text bytes read ahead in blocks", len);
    km_problem_free(p);
    free(g);

    char want[300];
    g = gz_bytes(text, len, &ng);
    f = put((const char *)g, ng / 2);
    rc = km_svmlight_read(f, &p, &err);
    snprintf(want, sizeof want,
             "%s: gzip stream is truncated or corrupt (unexpected end of file)", f);
    CHECK(rc == KM_EINPUT && strcmp(err.msg, want) == 0, "large gzip cut in half: '%s'",
          err.msg);
    free(g);

    memcpy(o - 4, ":x\n", 4); /* the last line ends "NN:x" instead of "NN:d" */
    g = gz_bytes(text, len, &ng);
    f = put((const char *)g, ng);
    rc = km_svmlight_read(f, &p, &err);
    snprintf(want, sizeof want, "%s:%d:", f, rows);
    CHECK(rc == KM_EINPUT && strncmp(err.msg, want, strlen(want)) == 0 &&
              strstr(err.msg, "got 'x'"),
          "error on the last line of a large gzip file: '%s'", err.msg);

    km_svmlight_reader *r = km_svmlight_open(f, &err);
    km_row row;
    int got = 0;
    while (got < 10 && km_svmlight_next(r, &row, &err) == 1)
        got++;
    km_svmlight_close(r); /* the helper is still inflating or waiting: must stop */
    CHECK(got == 10, "closing a gzip reader early");
    free(g);
    free(text);
}

/* Is msg "PATH:LINE:COL: expected ..." or "PATH: no data"? */
static int well_formed(const char *msg, const char *p)
{
    size_t n = strlen(p);
    if (strncmp(msg, p, n) != 0)
        return 0;
    msg += n;
    if (strcmp(msg, ": no data") == 0)
        return 1;
    long line, col;
    int used = 0;
    if (sscanf(msg, ":%ld:%ld: expected %n", &line, &col, &used) != 2 || used == 0)
        return 0;
    return line >= 1 && col >= 1;
}

/* Random byte mutations of a valid file: never a crash, always OK or a well-formed
 * message (also cross-checks km_svmlight_next against km_svmlight_read). */
static void test_fuzz(void)
{
    static const char alphabet[] = "0123456789:. \t\n\r#-+eEqid:xnaf\0,";
    uint64_t st = 88172645463325252ull;
    int bad = 0, n = 1500, errors = 0;
    char text[sizeof tour + 16];
    for (int i = 0; i < n; i++) {
        size_t len = strlen(tour);
        memcpy(text, tour, len);
        int muts = 1 + (int)(st % 3);
        for (int m = 0; m < muts; m++) {
            st ^= st << 13, st ^= st >> 7, st ^= st << 17;
            size_t at = (size_t)(st % len);
            text[at] = alphabet[(st >> 20) % (sizeof alphabet - 1)];
        }
        const char *f = put(text, len);
        km_problem *p = NULL;
        km_error err;
        int rc = km_svmlight_read(f, &p, &err);
        km_svmlight_reader *r = km_svmlight_open(f, &err);
        int64_t rows = 0, nnz = 0;
        km_row row;
        km_error err2;
        int rc2;
        while ((rc2 = km_svmlight_next(r, &row, &err2)) == 1)
            rows++, nnz += row.nnz;
        km_svmlight_close(r);
        if (rc == KM_OK)
            bad += rc2 != 0 || rows != p->l || nnz != p->nnz;
        else
            bad += !well_formed(err.msg, f) ||
                   (rc2 == -1 ? strcmp(err.msg, err2.msg) != 0 : !strstr(err.msg, "no data"));
        errors += rc != KM_OK;
        km_problem_free(p);
        unlink(f);
        nfiles--;
    }
    CHECK(bad == 0, "%d mutated files (%d rejected): no crash, messages well formed, "
          "next agrees with read (%d bad)", n, errors, bad);
}

/* Runs fn with fd 0 replaced by fd; restores the old standard input afterwards. */
static int with_stdin(int fd, km_problem **p, km_error *err)
{
    int saved = dup(0);
    dup2(fd, 0);
    close(fd);
    int rc = km_svmlight_read("-", p, err);
    dup2(saved, 0);
    close(saved);
    return rc;
}

/* Standard input: plain and gzip from a file, gzip through a pipe, errors. */
static void test_stdin(void)
{
    km_problem *p = NULL;
    km_error err;
    int rc = with_stdin(open(put_str(tour), O_RDONLY), &p, &err);
    CHECK(rc == KM_OK && tour_ok(p), "plain text on standard input");
    km_problem_free(p);

    rc = with_stdin(open(put_str("1 1:1\n1 0:1\n"), O_RDONLY), &p, &err);
    CHECK(rc == KM_EINPUT && strcmp(err.msg, "<stdin>:2:3: expected a feature index >= 1, "
                                             "got 0") == 0,
          "errors on standard input are named <stdin>: '%s'", err.msg);

    rc = with_stdin(open(put_str(""), O_RDONLY), &p, &err);
    CHECK(rc == KM_EINPUT && strcmp(err.msg, "<stdin>: no data") == 0,
          "empty standard input: '%s'", err.msg);

    /* A pipe fed by a child, much more than a pipe buffer: gzip over a non-seekable fd. */
    int rows = 50000;
    char *text = malloc((size_t)rows * 32), *o = text;
    for (int i = 0; i < rows; i++)
        o += sprintf(o, "%d 1:%d 3:0.%d\n", i % 2, i, i % 10);
    size_t ng;
    unsigned char *g = gz_bytes(text, (size_t)(o - text), &ng);
    int fds[2];
    if (pipe(fds) != 0)
        exit(1);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        for (size_t k = 0; k < ng;) { /* small writes: the reader sees short reads */
            size_t chunk = ng - k < 1000 ? ng - k : 1000;
            ssize_t w = write(fds[1], g + k, chunk);
            if (w <= 0)
                _exit(1);
            k += (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    rc = with_stdin(fds[0], &p, &err);
    int status;
    waitpid(pid, &status, 0);
    int ok = rc == KM_OK && p->l == rows && p->nnz == 2 * (int64_t)rows;
    for (int i = 0; ok && i < rows; i++)
        ok = p->value[2 * i] == i && p->y[i] == i % 2;
    CHECK(ok, "gzip through a pipe on standard input (%zu compressed bytes)", ng);
    km_problem_free(p);
    free(g);
    free(text);
}

/* km_svmlight_next: rows, line numbers, qid, end, sticky errors. */
static void test_next(void)
{
    km_error err;
    km_svmlight_reader *r = km_svmlight_open(put_str("# h\n1 qid:4 2:1 5:2\n\n-1 qid:5\n"
                                                     "2 qid:6 1:x\n3 qid:7 1:1\n"),
                                             &err);
    km_row row;
    int rc = km_svmlight_next(r, &row, &err);
    CHECK(rc == 1 && row.y == 1 && row.has_qid && row.qid == 4 && row.nnz == 2 &&
              row.index[0] == 1 && row.index[1] == 4 && row.value[1] == 2 && row.line == 2,
          "next: first row");
    rc = km_svmlight_next(r, &row, &err);
    CHECK(rc == 1 && row.y == -1 && row.qid == 5 && row.nnz == 0 && row.line == 4,
          "next: empty row keeps its line number");
    rc = km_svmlight_next(r, &row, &err);
    char want[300];
    snprintf(want, sizeof want, "%s:5:11: expected a number as value of feature 1, got 'x'",
             path);
    CHECK(rc == -1 && err.code == KM_EINPUT && strcmp(err.msg, want) == 0,
          "next: error '%s'", err.msg);
    km_error_clear(&err);
    rc = km_svmlight_next(r, &row, &err);
    CHECK(rc == -1 && strcmp(err.msg, want) == 0, "next: the error is sticky");
    km_svmlight_close(r);

    r = km_svmlight_open(put_str("1 1:1"), &err);
    rc = km_svmlight_next(r, &row, &err);
    int rc2 = km_svmlight_next(r, &row, &err);
    int rc3 = km_svmlight_next(r, &row, &err);
    CHECK(rc == 1 && rc2 == 0 && rc3 == 0, "next: 1 row, then 0 at end (and again)");
    km_svmlight_close(r);
    km_svmlight_close(NULL);
}

/* Out of memory is KM_EINTERNAL: a child with a small address-space limit. Skipped
 * under the sanitizers, which reserve terabytes of address space. */
static void test_nomem(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    printf("skip - out-of-memory check under a sanitizer\n");
#else
    int nf = 400000;
    char *text = malloc((size_t)nf * 16), *o = text;
    o += sprintf(o, "1");
    for (int j = 1; j <= nf; j++)
        o += sprintf(o, " %d:1", j);
    const char *f = put(text, (size_t)(o - text));
    free(text);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = {64u << 20, 64u << 20};
        /* The line buffer (4 MB) and pair arrays (~5 MB) fit; then exhaust the rest. */
        setrlimit(RLIMIT_AS, &rl);
        void *hog[4096];
        int k = 0;
        while (k < 4096 && (hog[k] = malloc(1 << 20)) != NULL)
            k++;
        for (int j = 0; j < 2 && k > 0; j++) /* leave ~2 MB: too little for this file */
            free(hog[--k]);
        km_problem *p = NULL;
        km_error err;
        int rc = km_svmlight_read(f, &p, &err);
        if (rc != KM_EINTERNAL)
            printf("  child: rc %d %s\n", rc, rc ? err.msg : "");
        fflush(stdout);
        _exit(rc == KM_EINTERNAL && strncmp(err.msg, "out of memory", 13) == 0 ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "out of memory while reading gives KM_EINTERNAL 'out of memory (...)'");
#endif
}

/* Removes the temporary files and directory. */
static void cleanup(void)
{
    char f[200];
    for (int i = 0; i < nfiles; i++) {
        snprintf(f, sizeof f, "%s/f%03d.svm", dir, i);
        unlink(f);
    }
    rmdir(dir);
}

int main(void)
{
    test_multi_output();
    strcpy(dir, "/tmp/kmtk-svmlight-XXXXXX");
    if (!mkdtemp(dir)) {
        printf("FAIL - mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    test_syntax();
    test_errors();
    test_io_errors();
    test_huge_line();
    test_many_rows();
    test_gzip();
    test_gzip_large();
    test_stdin();
    test_next();
    test_fuzz();
    test_nomem();
    cleanup();
    TEST_EXIT();
}
