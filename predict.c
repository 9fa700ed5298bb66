/* predict.c - command-line front end: applies a model file to svmlight test rows. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "blas.h"
#include "cli.h"
#include "metrics.h"
#include "model.h"
#include "svmlight.h"
#include "tasks.h"


static const char usage[] =
    "Usage: predict [options] test_file model_file output_file\n"
    "Writes one prediction per line of test_file (svmlight, plain or gzip; '-' = stdin)\n"
    "to output_file ('-' = stdout, metrics then go to stderr).\n"
    "options:\n"
    "  -d          write decision values instead of labels (one per class for\n"
    "              one-versus-all models, space-separated)\n"
    "  -b 0|1      1: write class probabilities: a first line 'labels L1 L2 ...' (the\n"
    "              model's classes), then per row the predicted label (the most probable\n"
    "              class) and one probability per class (-s logreg models, and classifiers\n"
    "              trained with -b 1; default 0)\n"
    "  -q          quiet: do not print the metrics\n"
    "  -n threads  threads: blocks of rows in parallel; the output of -n 1 (default:\n"
    "              the online cores, at most %d)\n"
    "  --per-task  also the metrics of each task (qid:): accuracy and, for two classes,\n"
    "              the ROC AUC of the decision values; regression: MSE\n"
    "  --codes     multi-output models (okl): write the decision values (the p codes\n"
    "              g1(x) = A'k(x)) instead of the outputs\n"
    "  --max-line BYTES  refuse test lines longer than this (default 1G; k, M, G)\n"
    "  -h, --help  this help\n"
    "Prints 'Accuracy = x%% (a/b)' for classification models, 'Mean squared error = x'\n"
    "and 'Squared correlation coefficient = x' for regression models. A multi-output\n"
    "model (train -s okl) writes its m outputs per line, space-separated, and prints the mean\n"
    "squared error over all outputs of the rows whose label has m outputs (rows with a\n"
    "single placeholder label are predicted, not scored). An mtl model (train -s mtl)\n"
    "predicts a row with the estimate of its task (qid:); a row of a task the model does\n"
    "not have gets the average task, a row without qid the model's task when it has one\n"
    "task (mtl-client estimate), else the average task.\n"
    "output_file appears whole when predict succeeds (a temporary file renamed), never half\n"
    "written; the first test row with a feature beyond the model's or a label that is not\n"
    "one of its classes is named in a warning.\n";

/* Test rows are gathered in blocks so that kernel models evaluate them with BLAS;
 * multi-output models take fewer rows per block (about 64 MB of outputs). */
#define BLOCK_ROWS 1024

typedef struct block {
    km_problem P;      /* the rows of the block (features beyond the model's dropped later) */
    int64_t cap;       /* capacity of P.index / P.value */
    int64_t rows;      /* rows per block */
    double *dec;       /* rows * nr_w decision values */
    int64_t nout;      /* multi-output: outputs per row (model->nr_output), else 1 */
    double *ys;        /* multi-output: rows * nout true outputs; has[a]: row a has them */
    char *has;
    double *out;       /* multi-output: nout predicted outputs of one row */
    double *pred;      /* single output: the predicted label of each row */
    double *prob;      /* -b 1: nr_class probabilities of one row */
    char *text;        /* single output: the output lines of the block */
    size_t len, size;
    int rc;            /* an error of the block's task, in err */
    km_error err;
} block;

/* The reading side: the next rows of the test file go into blocks. */
typedef struct reader_state {
    km_svmlight_reader *r;
    const char *name;
    const km_model *model;
    int got;           /* 1: more rows may follow; 0: end of input; else an error in err */
    km_error err;
    int warned_feature, warned_label;   /* the test data do not fit the model: said once */
    int64_t unknown_task;   /* rows of a task the (multi-task) model does not have */
    int64_t first_unknown;  /* the first such row's line, and its task (INT64_MIN: no qid) */
    int64_t first_unknown_qid;
} reader_state;

/* Warns (once each) about the first row with a feature the model never saw or a label that
 * is not one of its classes. */
static void check_fit(reader_state *rs, const km_row *row)
{
    const km_model *m = rs->model;
    if (m->kind->has_task && !m->kind->has_task(m, row->has_qid ? row->qid : INT64_MIN) &&
        rs->unknown_task++ == 0) {
        rs->first_unknown = row->line;
        rs->first_unknown_qid = row->has_qid ? row->qid : INT64_MIN;
    }
    if (!rs->warned_feature && row->nnz > 0 && row->index[row->nnz - 1] >= m->n) {
        rs->warned_feature = 1;
        km_cli_warn("%s:%lld: feature %lld is beyond the model's %d (nr_feature): the model "
                    "ignores such features (said once)", rs->name, (long long)row->line,
                    (long long)row->index[row->nnz - 1] + 1, (int)m->n);
    }
    if (!rs->warned_label && m->nr_class > 0 && m->nr_output == 0) {
        int k = 0;
        while (k < m->nr_class && m->labels[k] != row->y)
            k++;
        if (k == m->nr_class) {
            char classes[256] = "";
            for (int c = 0; c < m->nr_class && strlen(classes) < 200; c++)
                snprintf(classes + strlen(classes), sizeof classes - strlen(classes),
                         "%s%g", c ? ", " : "", m->labels[c]);
            rs->warned_label = 1;
            km_cli_warn("%s:%lld: label %g is not one of the model's classes (%s%s): such "
                        "rows count as errors (said once)", rs->name, (long long)row->line,
                        row->y, classes, strlen(classes) >= 200 ? ", ..." : "");
        }
    }
}

/* A pipeline round: the blocks of a batch are predicted and formatted on threads while one
 * task reads the next batch; then they are written and scored in order (the output and the
 * metrics of -n 1). */
typedef struct batch {
    block *b;
    int nb;            /* blocks of this batch */
    block *next;       /* the next batch, read by task 0 when reading */
    int nnext, cap;    /* its blocks; blocks per batch */
    int reading;
    reader_state *rs;
    const km_model *model;
    int decision;
    int proba;         /* -b 1 */
} batch;

/* Squared-error sums of a multi-output model's outputs. */
typedef struct out_score {
    double sse;
    int64_t rows, unscored;
} out_score;

/* Appends a streamed row to the block; 0 or -1 when out of memory. */
static int add_row(block *b, const km_row *row)
{
    km_problem *P = &b->P;
    if (km_problem_reserve(P, &b->cap, P->nnz + row->nnz))
        return -1;
    if (row->nnz > 0) {   /* (a block of empty rows has no arrays yet) */
        memcpy(P->index + P->nnz, row->index, (size_t)row->nnz * sizeof *row->index);
        memcpy(P->value + P->nnz, row->value, (size_t)row->nnz * sizeof *row->value);
        P->nnz += row->nnz;
    }
    if (b->ys) {
        b->has[P->l] = row->nout == b->nout;
        if (b->has[P->l])
            memcpy(b->ys + P->l * b->nout, row->ys, (size_t)b->nout * sizeof *b->ys);
    }
    P->qid[P->l] = row->has_qid ? row->qid : INT64_MIN;   /* the row's task (mtl models) */
    P->y[P->l++] = row->y;
    P->row_ptr[P->l] = P->nnz;
    return 0;
}

/* Reads rows into b[0..nb) until they are full or the input ends or fails (rs->got);
 * returns the number of blocks with rows. */
static int read_blocks(reader_state *rs, block *b, int nb)
{
    int used = 0;
    km_row row;
    while (used < nb && rs->got == 1) {
        block *cur = &b[used];
        int got = km_svmlight_next(rs->r, &row, &rs->err);
        int multi = rs->model->nr_output > 0;
        if (got == 1 && row.nout > 1 && !multi)
            got = km_error_set(&rs->err, KM_EINPUT, "%s:%lld: a label with %d outputs; only "
                               "multi-output models (train -s okl) predict multi-output data",
                               rs->name, (long long)row.line, (int)row.nout);
        else if (got == 1 && multi && row.nout != 1 && row.nout != cur->nout)
            got = km_error_set(&rs->err, KM_EINPUT, "%s:%lld: a label with %d outputs; the "
                               "model has %lld (or give one placeholder label)", rs->name,
                               (long long)row.line, (int)row.nout, (long long)cur->nout);
        else if (got == 1 && add_row(cur, &row))
            got = km_error_nomem(&rs->err, "test rows");
        if (got == 1)
            check_fit(rs, &row);
        if (got != 1)
            rs->got = got;
        else if (cur->P.l == cur->rows)
            used++;
    }
    return used + (used < nb && b[used].P.l > 0);
}

/* Allocates a block for the model's rows; dies when out of memory. */
static void block_init(block *b, const km_model *model)
{
    b->nout = model->nr_output > 0 ? model->nr_output : 1;
    b->rows = BLOCK_ROWS;
    if (model->nr_output > 0) {
        int64_t fit = ((int64_t)8 << 20) / (b->nout + model->nr_w);
        b->rows = fit < 1 ? 1 : fit < BLOCK_ROWS ? fit : BLOCK_ROWS;
        b->ys = malloc((size_t)(b->rows * b->nout) * sizeof *b->ys);
        b->has = malloc((size_t)b->rows);
        b->out = malloc((size_t)b->nout * sizeof *b->out);
        if (!b->ys || !b->has || !b->out)
            km_cli_die(3, "out of memory");
    } else if (!(b->pred = malloc((size_t)b->rows * sizeof *b->pred)) ||
               !(b->prob = malloc((size_t)(model->nr_class + 1) * sizeof *b->prob))) {
        km_cli_die(3, "out of memory");
    }
    b->P.row_ptr = malloc((size_t)(b->rows + 1) * sizeof *b->P.row_ptr);
    b->P.qid = malloc((size_t)b->rows * sizeof *b->P.qid);
    b->P.y = malloc((size_t)b->rows * sizeof *b->P.y);
    b->dec = malloc((size_t)b->rows * (size_t)model->nr_w * sizeof *b->dec);
    if (!b->P.row_ptr || !b->P.qid || !b->P.y || !b->dec)
        km_cli_die(3, "out of memory");
    b->P.row_ptr[0] = 0;
    b->P.n = model->n;
}

static void block_free(block *b)
{
    free(b->P.row_ptr);
    free(b->P.qid);
    free(b->P.y);
    free(b->P.index);
    free(b->P.value);
    free(b->dec);
    free(b->ys);
    free(b->has);
    free(b->out);
    free(b->pred);
    free(b->prob);
    free(b->text);
}

/* Multi-output models: predicts the block's rows, writes them, scores them; empties the
 * block. */
static void flush(block *b, const km_model *model, int threads, int decision, FILE *out,
                  out_score *sc)
{
    km_error err = {0};
    km_problem *P = &b->P;
    int nw = model->nr_w;
    if (P->l == 0)
        return;
    if (km_model_decision_rows(model, P, NULL, P->l, b->dec, threads, &err))
        km_cli_die(err.code, "%s", err.msg);
    for (int64_t a = 0; a < P->l; a++) {
        const double *dec = b->dec + a * nw;
        if (!decision || b->has[a]) /* the outputs g(x) = B g1(x) */
            km_model_outputs(model, dec, b->out);
        if (b->has[a]) {
            const double *y = b->ys + a * b->nout;
            for (int64_t j = 0; j < b->nout; j++)
                sc->sse += (b->out[j] - y[j]) * (b->out[j] - y[j]);
            sc->rows++;
        } else {
            sc->unscored++;
        }
        const double *v = decision ? dec : b->out;
        for (int64_t j = 0, nv = decision ? nw : b->nout; j < nv; j++)
            fprintf(out, j ? " %.17g" : "%.17g", v[j]);
        fputc('\n', out);
    }
    P->l = 0;
    P->nnz = 0;
}

/* Appends a formatted number (and sep before it) to the block's text; -1 when out of memory. */
static int put(block *b, const char *sep, double v)
{
    if (b->size - b->len < 40) {
        size_t size = b->size ? 2 * b->size : 65536;
        char *t = realloc(b->text, size);
        if (!t)
            return -1;
        b->text = t;
        b->size = size;
    }
    b->len += (size_t)snprintf(b->text + b->len, b->size - b->len, "%s%.17g", sep, v);
    return 0;
}

/* One block of a batch: decision values (linear models), labels, the output lines. */
static int block_task(void *ctx, int64_t t, int worker)
{
    batch *B = ctx;
    if (B->reading && t == 0) {
        B->nnext = read_blocks(B->rs, B->next, B->cap);
        return KM_OK;
    }
    block *b = &B->b[t - B->reading];
    const km_model *model = B->model;
    km_problem *P = &b->P;
    int nw = model->nr_w;
    (void)worker;
    b->len = 0;
    if ((b->rc = km_model_decision_rows(model, P, NULL, P->l, b->dec, 1, &b->err)))
        return b->rc;
    for (int64_t a = 0; a < P->l; a++) {
        const double *dec = b->dec + a * nw;
        b->pred[a] = km_model_predict_label(model, dec);
        int bad = 0;
        if (B->proba) {   /* the most probable class (the first of ties), its probabilities */
            int best = 0;
            km_model_probability(model, dec, b->prob);
            for (int k = 1; k < model->nr_class; k++)
                best = b->prob[k] > b->prob[best] ? k : best;
            b->pred[a] = model->labels[best];
            bad |= put(b, "", b->pred[a]);
            for (int k = 0; k < model->nr_class; k++)
                bad |= put(b, " ", b->prob[k]);
        } else if (B->decision)
            for (int k = 0; k < nw; k++)
                bad |= put(b, k ? " " : "", dec[k]);
        else
            bad |= put(b, "", b->pred[a]);
        if (bad)
            return b->rc = km_error_nomem(&b->err, "output");
        b->text[b->len++] = '\n';
    }
    return KM_OK;
}

/* --per-task: every row's task, label, prediction and first decision value. */
typedef struct task_row {
    int64_t qid;
    double y, pred, dec;
} task_row;

static task_row *task_rows;
static int64_t n_task_rows, cap_task_rows;

/* Keeps the rows of a predicted block for --per-task. */
static void keep_task_rows(const block *b, int nw)
{
    for (int64_t a = 0; a < b->P.l; a++) {
        if (n_task_rows == cap_task_rows) {
            cap_task_rows = cap_task_rows ? 2 * cap_task_rows : 4096;
            task_row *grown = realloc(task_rows, (size_t)cap_task_rows * sizeof *grown);
            if (!grown)
                km_cli_die(3, "out of memory");
            task_rows = grown;
        }
        task_rows[n_task_rows++] = (task_row){b->P.qid[a], b->P.y[a], b->pred[a],
                                              b->dec[a * nw]};
    }
}

static int by_task(const void *a, const void *b)
{
    int64_t x = ((const task_row *)a)->qid, y = ((const task_row *)b)->qid;
    return (x > y) - (x < y);
}

/* Prints each task's metrics (rows without qid: task "none"), then their mean. */
static void print_per_task(FILE *info, const km_model *model)
{
    qsort(task_rows, (size_t)n_task_rows, sizeof *task_rows, by_task);
    km_scored *v = malloc((size_t)(n_task_rows > 0 ? n_task_rows : 1) * sizeof *v);
    if (!v)
        km_cli_die(3, "out of memory");
    int two = model->nr_class == 2;
    double sum = 0, sum_auc = 0;
    int64_t ntask = 0, nauc = 0;
    for (int64_t a = 0; a < n_task_rows;) {
        int64_t b = a;
        km_metrics mt = {0};
        while (b < n_task_rows && task_rows[b].qid == task_rows[a].qid) {
            km_metrics_add(&mt, task_rows[b].y, task_rows[b].pred);
            v[b - a] = (km_scored){task_rows[b].dec, task_rows[b].y == model->labels[1]};
            b++;
        }
        char id[32];
        if (task_rows[a].qid == INT64_MIN)
            snprintf(id, sizeof id, "none");
        else
            snprintf(id, sizeof id, "%lld", (long long)task_rows[a].qid);
        if (model->nr_class > 0) {
            double acc = km_metrics_accuracy(&mt), auc = two ? km_metrics_auc(v, b - a) : NAN;
            fprintf(info, "task %s: %lld rows, accuracy = %g%%", id, (long long)(b - a), acc);
            if (two)
                fprintf(info, ", AUC = %.6g", auc);
            fputc('\n', info);
            sum += acc;
            if (auc == auc) {
                sum_auc += auc;
                nauc++;
            }
        } else {
            fprintf(info, "task %s: %lld rows, mean squared error = %g\n", id,
                    (long long)(b - a), km_metrics_mse(&mt));
            sum += km_metrics_mse(&mt);
        }
        ntask++;
        a = b;
    }
    if (ntask > 0 && model->nr_class > 0) {
        fprintf(info, "mean over %lld tasks: accuracy = %g%%", (long long)ntask, sum / ntask);
        if (nauc > 0)
            fprintf(info, ", AUC = %.6g (%lld tasks with both classes)", sum_auc / nauc,
                    (long long)nauc);
        fputc('\n', info);
    } else if (ntask > 0) {
        fprintf(info, "mean over %lld tasks: mean squared error = %g\n", (long long)ntask,
                sum / ntask);
    }
    free(v);
    free(task_rows);
}

/* Predicts the batch's blocks, writes them and adds them to the metrics in order; empties
 * them. */
static void flush_batch(batch *B, int threads, FILE *out, const char *name, km_metrics *mt,
                        int per_task)
{
    int64_t failed;   /* every model's blocks are tasks (sleeping idle workers; the bits of
                         one thread: a block's kernel tiles do not depend on the threads) */
    if (km_tasks_run(B->nb + B->reading, threads, block_task, B, &failed))
        km_cli_die(B->b[failed - B->reading].err.code, "%s", B->b[failed - B->reading].err.msg);
    for (int t = 0; t < B->nb; t++) {
        block *b = &B->b[t];
        for (int64_t a = 0; a < b->P.l; a++)
            km_metrics_add(mt, b->P.y[a], b->pred[a]);
        if (per_task)
            keep_task_rows(b, B->model->nr_w);
        if (b->len && fwrite(b->text, 1, b->len, out) != b->len)
            km_cli_die(2, "%s: write error: %s", name, strerror(errno));
        b->P.l = 0;
        b->P.nnz = 0;
    }
    B->nb = 0;
}

/* The output file being written (a temporary file until it is complete). */
static km_atomic_out pending;

static void discard_pending(void)
{
    km_atomic_discard(&pending);
}

int main(int argc, char **argv)
{
    km_cli_init("predict");
    int decision = 0, codes = 0, quiet = 0, nargs = 0, threads = km_threads_default();
    int per_task = 0, proba = 0;
    size_t max_line = 0;
    const char *args[3] = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf(usage, KM_THREADS_DEFAULT_MAX);
            return 0;
        } else if (strcmp(a, "-d") == 0) {
            decision = 1;
        } else if (strcmp(a, "--codes") == 0) {
            codes = 1;
        } else if (strcmp(a, "--per-task") == 0) {
            per_task = 1;
        } else if (strcmp(a, "-q") == 0) {
            quiet = 1;
        } else if (strcmp(a, "-b") == 0) {
            if (i + 1 >= argc)
                km_cli_die(1, "option -b needs a value");
            proba = (int)km_cli_integer(a, argv[++i], 0, 1);
        } else if (strcmp(a, "-n") == 0) {
            if (i + 1 >= argc)
                km_cli_die(1, "option -n needs a value");
            threads = (int)km_cli_integer(a, argv[++i], 1, 1024);
        } else if (strcmp(a, "--max-line") == 0) {
            if (i + 1 >= argc)
                km_cli_die(1, "option --max-line needs a value");
            max_line = (size_t)km_cli_size(a, argv[++i]);
        } else if (a[0] == '-' && a[1]) {
            km_cli_die(1, "unknown option '%s'", a);
        } else if (nargs == 3) {
            km_cli_die(1, "too many arguments");
        } else {
            args[nargs++] = a;
        }
    }
    if (nargs != 3)
        km_cli_die(1, "expected test_file model_file output_file");
    km_error err = {0};
    km_model *model = NULL;
    if (km_model_read(args[1], &model, &err))
        km_cli_die(err.code, "%s", err.msg);
    int multi = model->nr_output > 0;
    if (codes && !multi)
        km_cli_die(1, "--codes needs a multi-output model (train -s okl); %s is not one",
                   args[1]);
    if (decision && multi)
        km_cli_die(1, "-d does not apply to multi-output models (their decision values are "
                   "the codes: --codes)");
    if (per_task && multi)
        km_cli_die(1, "--per-task applies to single-output models");
    if (proba && (decision || codes))
        km_cli_die(1, "-b 1 writes probabilities; -d and --codes write decision values: "
                   "choose one");
    if (proba && !km_model_has_probability(model))
        km_cli_die(1, "-b 1: %s has no probabilities (train -s logreg, or a classifier with "
                   "train -b 1)", args[1]);
    decision |= codes;
    km_svmlight_reader *r = km_svmlight_open(args[0], &err);
    if (!r)
        km_cli_die(err.code, "%s", err.msg);
    km_svmlight_set_max_line(r, max_line);
    km_svmlight_for_model(r, model);   /* e.g. a precomputed kernel's test rows */
    int to_stdout = strcmp(args[2], "-") == 0;
    FILE *out = stdout;
    if (!to_stdout) {   /* a temporary file, renamed at the end; removed on any exit before */
        if (km_atomic_open(args[2], &pending, &err))
            km_cli_die(err.code, "%s", err.msg);
        atexit(discard_pending);
        out = pending.f;
    }
    FILE *info = to_stdout ? stderr : stdout;
    km_metrics mt = {0};
    out_score sc = {0};
    /* a batch of blocks per round, 4 per thread to even out the work; multi-output models
     * at most 2 (a block's outputs can be 64 MB). OpenBLAS on one thread: its idle threads
     * only spin-yield (predict -n 1 burnt 2x its wall), and its results depend on its
     * thread count (blas.h) */
    km_blas_threads(1);
    int nb = multi ? (threads < 2 ? threads : 2) : threads > 64 ? 256 : 4 * threads;
    block *bl = calloc(2 * (size_t)nb, sizeof *bl);   /* this batch and the next */
    if (!bl)
        km_cli_die(3, "out of memory");
    for (int t = 0; t < 2 * nb; t++)
        block_init(&bl[t], model);
    reader_state rs = {r, args[0], model, 1, {0}, 0, 0, 0, 0, 0};
    batch B = {bl, 0, bl + nb, 0, nb, 0, &rs, model, decision, proba};
    if (proba) {   /* the header line, as LIBSVM's svm-predict -b 1 */
        fputs("labels", out);
        for (int k = 0; k < model->nr_class; k++)
            fprintf(out, " %.17g", model->labels[k]);
        fputc('\n', out);
    }
    if (multi) {
        while (read_blocks(&rs, bl, 1) > 0)
            flush(&bl[0], model, threads, decision, out, &sc);
    } else {
        B.nb = read_blocks(&rs, B.b, nb);
        while (B.nb > 0) {
            B.reading = rs.got == 1;
            B.nnext = 0;
            flush_batch(&B, threads, out, args[2], &mt, per_task);
            block *t = B.b;
            B.b = B.next;
            B.next = t;
            B.nb = B.nnext;
        }
    }
    if (rs.got != 0) {
        km_svmlight_close(r);
        km_cli_die(rs.err.code, "%s", rs.err.msg);
    }
    km_svmlight_close(r);
    if (rs.unknown_task > 0) {   /* said once, at the end: how many rows */
        char task[48];
        if (rs.first_unknown_qid == INT64_MIN)
            snprintf(task, sizeof task, "without qid");
        else
            snprintf(task, sizeof task, "of task %lld", (long long)rs.first_unknown_qid);
        km_cli_warn("%s: %lld rows have a task the model does not have (the first: line %lld, "
                    "%s): predicted by the average of its tasks", args[0],
                    (long long)rs.unknown_task, (long long)rs.first_unknown, task);
    }
    if (to_stdout && (fflush(out) != 0 || ferror(out)))
        km_cli_die(2, "%s: write error: %s", args[2], strerror(errno));
    if (!to_stdout && km_atomic_commit(&pending, args[2], "predictions", &err))
        km_cli_die(err.code, "%s", err.msg);
    if (!quiet && multi) {
        if (sc.rows > 0)
            fprintf(info, "Mean squared error = %g (%lld outputs x %lld rows)\n",
                    sc.sse / ((double)sc.rows * (double)bl[0].nout), (long long)bl[0].nout,
                    (long long)sc.rows);
        if (sc.unscored > 0)
            fprintf(info, "%lld rows had a single label: predicted, not scored\n",
                    (long long)sc.unscored);
    } else if (!quiet) {
        if (model->nr_class > 0) {
            fprintf(info, "Accuracy = %g%% (%lld/%lld)\n", km_metrics_accuracy(&mt),
                    (long long)mt.correct, (long long)mt.n);
        } else {
            fprintf(info, "Mean squared error = %g (regression)\n", km_metrics_mse(&mt));
            fprintf(info, "Squared correlation coefficient = %g (regression)\n",
                    km_metrics_scc(&mt));
        }
        if (per_task)
            print_per_task(info, model);
    }
    for (int t = 0; t < 2 * nb; t++)
        block_free(&bl[t]);
    free(bl);
    km_model_free(model);
    if (!to_stdout)
        km_cli_check_stdout();   /* the metrics */
    return 0;
}
