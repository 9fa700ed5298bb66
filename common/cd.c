/* cd.c - coordinate descent (thesis Algorithms 1-2): one skeleton, the loss's resolvent
 * and the kernel's "dot"/"update" operations as parameters. */
#include "cd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "face.h"
#include "rng.h"

static const char *const rule_names[] = {"random", "cyclic", "aitken", "gradient",
                                         "greedy", "auto"};
#define NRULES ((int)(sizeof rule_names / sizeof *rule_names))

int km_rule_from_name(const char *name)
{
    for (int i = 0; i < NRULES; i++)
        if (strcmp(name, rule_names[i]) == 0)
            return i;
    return -1;
}

const char *km_rule_name(km_rule rule)
{
    return (unsigned)rule < (unsigned)NRULES ? rule_names[rule] : "?";
}

int km_rule_is_greedy(km_rule rule)
{
    return rule == KM_RULE_GRADIENT || rule == KM_RULE_GREEDY || rule == KM_RULE_AUTO;
}

km_cd_param km_cd_param_default(void)
{
    km_cd_param p = {0};
    p.loss = KM_LOSS_L2SVM;
    p.eps = 0.1;
    p.delta = 0;
    p.stop = KM_STOP_GAP;
    p.rule = KM_RULE_AUTO;
    p.seed = 1;
    p.max_iter = KM_CD_DEFAULT_MAX_ITER;
    p.shrinking = 1;
    return p;
}

/* Coordinate i's state, one cache line: everything a visit reads and writes but the
 * kernel's own data. A random sweep visits coordinates in random order, so the visits are
 * memory-latency bound: one line per coordinate instead of one per array, loaded ahead. */
typedef struct cd_coord {
    double c;         /* the coefficient c_i */
    double alpha;     /* 1/k_ii (see cd_run) */
    double y, C;
    double f, g;      /* the gap terms of c_i at its last visit (cd_terms) */
    int64_t b, e;     /* the kernel's: the linear kernel's row, index[b..e) of P */
} cd_coord;

/* What the skeleton needs from a kernel: z_i = k_i'c, and c_i += h reflected in that state
 * (s = &coord[i]). Optional (NULL: not needed), for a kernel that keeps z exact only on the
 * active set: shrunk, told the active set act[0..na) after each sweep that is neither the
 * last nor followed by a check (z_i must then stay exact for those i); unshrink, to make z
 * exact for every i (before a check sweep reaches the inactive coefficients, and at the
 * end); sweep, told that a macro-iteration begins. */
typedef struct cd_ops {
    double (*dot)(void *ctx, int64_t i, const cd_coord *s);
    int (*update)(void *ctx, int64_t i, const cd_coord *s, double h, km_error *err);
    int (*shrunk)(void *ctx, const int64_t *act, int64_t na, const cd_coord *coord,
                  km_error *err);
    int (*unshrink)(void *ctx, const cd_coord *coord, km_error *err);
    void (*sweep)(void *ctx);
    /* Optional: the addresses of CD_LINES cache lines that dot will read for s, which the
     * skeleton prefetches KM_CD_PREFETCH visits ahead (and s itself twice as far). The
     * skeleton issues the prefetches: GCC counts a function whose only effect is
     * __builtin_prefetch as const and drops its calls (objdump: no prefetcht0). */
    void (*lines)(void *ctx, const cd_coord *s, const void *line[]);
    /* Optional: the subspace step (face.h; linear_face_step), called when the sweeps stall;
     * *gain gets the increase of the dual (0: c unchanged). */
    int (*face)(void *ctx, int64_t m, cd_coord *coord, km_loss loss, double eps,
                double budget, int64_t visits, double *Glast, double *gain, int *paid,
                int *exact,
                km_error *err);
} cd_ops;

#define CD_LINES 5

/* The subspace step (linear_face_step): tried every KM_FACE_EVERY macro-iterations when the
 * gap estimate has not fallen below KM_FACE_STALL = 2^-1/4 times its value at the last try
 * (a quarter of a halving; twice as far apart after a step that did not pay for itself, and
 * not when a check sweep came between: the estimate jumps there); mu = KM_FACE_MU times the
 * mean k_ii; a step does at most KM_FACE_SWEEPS (1 - h/h0) sweeps' worth of work (at least
 * 1; none if its first factorization alone is over that), h < h0 = 1/4 the halvings of the
 * gap estimate since the last try. Newton directions in the features (Woodbury) when the
 * rows it moves touch at most KM_FACE_MAXDIM features, else in the coefficients
 * (linear_kside). Measured: doc/linear-solver.md. */
#ifndef KM_CD_PREFETCH
#define KM_CD_PREFETCH 24
#endif

/* The gap terms of coordinate i at (c_i, z_i): *f = C L + c z/2 (its part of F), *g = C L +
 * C L*(-c/C) + c z (its part of F - D, >= 0). A coordinate with k_ii = 0 has z_i = 0 whatever
 * c is, and the dual takes its best c_i there (term 0): it adds C L(y, 0) to F only. */
static inline __attribute__((always_inline)) void
cd_terms(const km_cd_param *par, km_loss loss, double alpha, double y, double C, double c,
         double z, double *f, double *g)
{
    double L = C * km_loss_value(loss, y, z, par->eps);
    *f = L + c * z / 2;
    *g = alpha >= 0 ? L + km_loss_conj(loss, y, c, C, par->eps) + c * z : 0;
}

/* The exact primal F and gap F - D at c: makes z exact everywhere (unshrink) and reads it
 * for every coefficient; ft/gt get the terms, in index order. */
static inline __attribute__((always_inline)) int
cd_exact_gap(const cd_ops *ops, void *ctx, int64_t m, cd_coord *coord, const km_cd_param *par,
             km_loss loss, double *F, double *G, km_error *err)
{
    int rc;
    if (ops->unshrink && (rc = ops->unshrink(ctx, coord, err)))
        return rc;
    double f = 0, g = 0;
    for (int64_t i = 0; i < m; i++) {
        cd_coord *s = &coord[i];
        double z = s->alpha > 0 ? ops->dot(ctx, i, s) : 0;
        cd_terms(par, loss, s->alpha, s->y, s->C, s->c, z, &s->f, &s->g);
        f += s->f;
        g += s->g;
    }
    *F = f;
    *G = g;
    return KM_OK;
}

static inline double cd_rel(double F, double G)
{
    if (!isfinite(F) || !isfinite(G))   /* overflow: no certificate (km_cd_relative_gap) */
        return NAN;
    return F > 0 ? (G > 0 ? G : 0) / F : 0;
}

/*
 * The skeleton of Algorithms 1-2: c_i = S_i(sum_{j!=i} k_ij c_j / k_ii) (2.13) with
 * S_i = -J_{1/k_ii} from Table 2.1; h_i = new c_i - old c_i; the kernel state is updated
 * only when h_i != 0. The caller fills coord[i]'s alpha = 1/k_ii, y, C (and b, e if its
 * kernel uses them); c gets the coefficients. A coordinate with k_ii = 0 (alpha = 0) has a
 * zero kernel row (thesis 2.3.1): it is set once to the minimizer of its conjugate term
 * (km_loss_dual_argmin; 0 in the thesis, which leaves a duality gap C L(y_i, 0) behind) and
 * never visited; alpha < 0 (k_ii < 0, an indefinite kernel) fixes c_i at 0, out of the
 * gap. Always inlined so each kernel gets direct calls in its hot loop; coordinates are
 * prefetched 2 KM_CD_PREFETCH visits ahead, the kernel's data (ops->lines) 1. loss is
 * par->loss, passed apart so that a caller can make it a constant: one copy of the loop
 * per loss, the resolvent's and the conjugate's switch folded away.
 * Stopping, KM_STOP_GAP: each visit records the gap terms of its coordinate at the c_i and
 * z_i it finds (before its step, which zeroes the term); their running sums give an
 * O(active) estimate of the relative gap at the end of a macro-iteration. When the estimate
 * is <= delta, z is made exact for every coefficient (unshrink; linear: w'x_i) and the
 * exact gap decides: converged only if it is <= delta, else the next sweep visits every
 * coefficient. KM_STOP_STEP (the thesis):
 * max_i |h_i| < delta over a macro-iteration that visits every coefficient.
 * Shrinking: a coefficient stuck on a flat piece of S_i deeper than KM_CD_SHRINK times the
 * last sweep's max |h| leaves the active set. When the active set converges, a check sweep visits everything.
 * Without ops->unshrink it visits all coefficients in one order, and none is shrunk in it;
 * with it (z exact only on the active set), it visits the active set first, then calls
 * unshrink and visits the others (each part in the rule's order), shrinking as usual, so
 * coefficients still stuck stay out.
 * res->primal and res->gap are those of the returned c, exact, whatever the rule.
 */
static inline __attribute__((always_inline)) int
cd_run(const cd_ops *ops, void *ctx, int64_t m, cd_coord *coord, const km_cd_param *par,
       km_loss loss, km_cd_result *res, km_error *err)
{
    size_t len = (size_t)(m > 0 ? m : 1);
    int64_t *act = malloc(len * sizeof *act);
    int rc = KM_OK;
    if (!act) {
        rc = km_error_nomem(err, "coordinate descent index list");
        goto out;
    }
    int gap_rule = par->stop != KM_STOP_STEP;
    int64_t full = 0;
    double Fs = 0, Gs = 0;   /* running sums of the terms f, g: the estimate */
    for (int64_t i = 0; i < m; i++) {
        coord[i].c = 0;
        if (coord[i].alpha > 0)
            act[full++] = i;
    }
    for (int64_t i = 0; i < m; i++) {   /* a zero row (alpha = 0): c_i is known */
        cd_coord *s = &coord[i];
        double ci = s->alpha == 0 ? km_loss_dual_argmin(loss, s->y, s->C, par->eps)
                    : s->alpha > 0 && par->c_init ? par->c_init[i] : 0;   /* warm start */
        if (ci != 0) {
            if ((rc = ops->update(ctx, i, s, ci, err)))
                goto out;
            s->c = ci;
        }
        cd_terms(par, loss, s->alpha, s->y, s->C, s->c, 0, &s->f, &s->g);
        Fs += s->f;
        Gs += s->g;
    }
    km_rng rng;
    km_rng_seed(&rng, par->seed);
    double delta = par->delta;
    if (delta <= 0 && gap_rule) {
        delta = KM_CD_DEFAULT_GAP;
    } else if (delta <= 0) {   /* default: 0.05 on the gradient scale, h_i ~ gradient_i / k_ii */
        double tr = 0;
        for (int64_t i = 0; i < m; i++)
            tr += coord[i].alpha > 0 ? 1 / coord[i].alpha : 0;
        delta = full ? KM_CD_DEFAULT_TOL * (double)full / tr : 1;
    }
    res->delta = delta;
    int64_t na = full, nin = 0;   /* act[0..na) active; a check sweep adds act[na..na+nin) */
    double max_h_old = INFINITY;   /* shrink only what is stuck deeper than last sweep moved */
    int backward = 0;
    int64_t face_every = KM_FACE_EVERY, face_at = face_every;   /* the next stall test */
    int64_t face_last = 0;        /* the macro-iteration of the last one */
    double face_ref = INFINITY;   /* the gap estimate at the last one */
    double face_G = 0;            /* G after the last subspace step (G(0) = 0 at first) */
    int64_t face_visits = 0;      /* coordinate visits since */
    int face_checked = 0;         /* a check sweep since the last stall test */
    res->iter = 0;
    res->converged = 0;
    res->max_h = 0;
    for (int64_t iter = 1; iter <= par->max_iter; iter++) {
        if (par->rule == KM_RULE_RANDOM || par->rule == KM_RULE_AUTO) {
            km_rng_shuffle(&rng, act, na);
            km_rng_shuffle(&rng, act + na, nin);
        }
        if (ops->sweep)
            ops->sweep(ctx);
        double max_h = 0;
        int64_t visited = na + nin, keep = 0;   /* survivors go to act[0..keep) */
        for (int part = 0; part < 2; part++) {
            int64_t lo = part ? na : 0, hi = part ? na + nin : na, k = hi, n = hi - lo;
            if (part == 1 && nin > 0 && (rc = ops->unshrink(ctx, coord, err)))
                goto out;
            /* act[lo + t] in visiting order (act beyond t is not rewritten yet) */
#define CD_ACT(t) act[backward ? hi - 1 - (t) : lo + (t)]
            for (int64_t t = 0; t < n; t++) {
                int64_t i = CD_ACT(t);
                cd_coord *s = &coord[i];
                if (t + 2 * KM_CD_PREFETCH < n)
                    __builtin_prefetch(&coord[CD_ACT(t + 2 * KM_CD_PREFETCH)]);
                if (ops->lines && t + KM_CD_PREFETCH < n) {
                    const void *line[CD_LINES];
                    ops->lines(ctx, &coord[CD_ACT(t + KM_CD_PREFETCH)], line);
                    for (int j = 0; j < CD_LINES; j++)
                        __builtin_prefetch(line[j]);
                }
                double zi = ops->dot(ctx, i, s);
                double ci0 = s->c, alpha = s->alpha;
                if (gap_rule) {   /* the terms before the step (after it, g_i = 0) */
                    double f, g;
                    cd_terms(par, loss, alpha, s->y, s->C, ci0, zi, &f, &g);
                    Fs += f - s->f;
                    Gs += g - s->g;
                    s->f = f;
                    s->g = g;
                }
                double v = zi * alpha - ci0;   /* v_i = z_i/k_ii - c_i */
                double stuck;
                double ci = km_loss_resolvent_warm(loss, s->y, v, alpha, s->C, par->eps, ci0,
                                                   &stuck);
                double h = ci - ci0;
                if (h != 0) {                                /* skip the update when h_i = 0 */
                    if ((rc = ops->update(ctx, i, s, h, err)))
                        goto out;
                    s->c = ci;
                    if (fabs(h) > max_h)
                        max_h = fabs(h);
                }
                if (h == 0 && par->shrinking && stuck > KM_CD_SHRINK * max_h_old)
                    continue;                                /* shrink i */
                if (backward)
                    act[--k] = i;   /* in place: k > hi - 1 - t; order kept for Aitken */
                else
                    act[keep++] = i;
            }
#undef CD_ACT
            if (backward) {
                memmove(act + keep, act + k, (size_t)(hi - k) * sizeof *act);
                keep += hi - k;
            }
        }
        na = keep;
        nin = 0;
        if (par->rule == KM_RULE_AITKEN)
            backward = !backward;
        res->iter = iter;
        res->max_h = max_h;
        if (par->progress)
            par->progress(par->user, iter, max_h, na);
        int check;   /* converged on what the rule sees: stop, or check everything */
        if (gap_rule) {
            check = cd_rel(Fs, Gs) <= delta;
            if (check) {   /* the certificate: z exact for every coefficient */
                if ((rc = cd_exact_gap(ops, ctx, m, coord, par, loss, &Fs, &Gs, err)))
                    goto out;
                if (cd_rel(Fs, Gs) <= delta) {
                    res->converged = 1;
                    break;
                }
            }
        } else {
            check = max_h < delta;
            if (check && visited == full) {
                res->converged = 1;
                break;
            }
        }
        if (check) {
            /* converged on the active set: check every coefficient in the next sweep */
            face_checked = 1;
            if (ops->unshrink) {
                char *in = calloc(len, 1);
                if (!in) {
                    rc = km_error_nomem(err, "coordinate descent");
                    goto out;
                }
                for (int64_t t = 0; t < na; t++)
                    in[act[t]] = 1;
                for (int64_t i = 0; i < m; i++)
                    if (coord[i].alpha > 0 && !in[i])
                        act[na + nin++] = i;
                free(in);
            } else {
                na = 0;
                for (int64_t i = 0; i < m; i++)
                    if (coord[i].alpha > 0)
                        act[na++] = i;
                max_h_old = INFINITY;
            }
            continue;
        }
        face_visits += visited;
        /* stalled: a subspace step */
        if (gap_rule && ops->face && !par->no_walk && iter >= face_at) {
            /* stalled: CD made fewer than h0 halvings h of the gap estimate since the last
             * test, h0 = -log2(KM_FACE_STALL) per KM_FACE_EVERY macro-iterations (a rate:
             * after walks that did not pay the tests are further apart, and the same rate
             * still calls for a walk) */
            double r = cd_rel(Fs, Gs), h = log2(face_ref / r),
                   h0 = -log2(KM_FACE_STALL) * (double)(iter - face_last) / KM_FACE_EVERY;
            if (!(h >= h0) && !face_checked) {
                double gain = 0;
                int paid = 0, exact = 0;
                /* the work it may do, in sweeps: all of KM_FACE_SWEEPS when CD has stalled,
                 * less the more of h0 CD made, down to none at h0 */
                double budget = KM_FACE_SWEEPS * (h > 0 ? 1 - h / h0 : 1);
                if ((rc = ops->face(ctx, m, coord, loss, par->eps, budget > 1 ? budget : 1,
                                    face_visits, &face_G, &gain, &paid, &exact, err)))
                    goto out;
                face_visits = 0;
                if (exact) {   /* every coefficient moved: the exact gap, and all active */
                    if ((rc = cd_exact_gap(ops, ctx, m, coord, par, loss, &Fs, &Gs, err)))
                        goto out;
                    if (cd_rel(Fs, Gs) <= delta) {
                        res->converged = 1;
                        break;
                    }
                    na = 0;
                    for (int64_t i = 0; i < m; i++)
                        if (coord[i].alpha > 0)
                            act[na++] = i;
                    max_h = INFINITY;
                }
                /* a walk that did not pay: wait twice as long for the next */
                face_every = paid ? KM_FACE_EVERY : 2 * face_every;
            }
            face_ref = r;
            face_last = iter;
            face_at = iter + face_every;
            face_checked = 0;
        }
        if (ops->shrunk && (rc = ops->shrunk(ctx, act, na, coord, err)))
            goto out;
        max_h_old = par->shrinking ? max_h : INFINITY;
    }
    if (!res->converged || !gap_rule)   /* else the terms are already exact */
        rc = cd_exact_gap(ops, ctx, m, coord, par, loss, &Fs, &Gs, err);
    res->primal = Fs;
    res->gap = cd_rel(Fs, Gs);
out:
    free(act);
    return rc;
}

/* ---- the linear kernel (Algorithm 2): z_i = x_i'w, update w += h x_i ---- */

/* sum_{k in [b, e)} value[k] w[index[k]], with four partial sums so that the additions
 * do not wait on each other (the loop is latency-bound otherwise). */
static inline double km_sparse_dot(const int32_t *index, const double *value, int64_t b,
                                   int64_t e, const double *w)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t k = b;
    for (; k + 4 <= e; k += 4) {
        s0 += value[k] * w[index[k]];
        s1 += value[k + 1] * w[index[k + 1]];
        s2 += value[k + 2] * w[index[k + 2]];
        s3 += value[k + 3] * w[index[k + 3]];
    }
    for (; k < e; k++)
        s0 += value[k] * w[index[k]];
    return (s0 + s1) + (s2 + s3);
}

typedef struct linear_ctx {
    const km_problem *P;
    double *w;
    int32_t n;
    double bias;
    double rate;   /* CD's rate before the last subspace step (<= 0: none yet) */
    double tol;    /* the interior-point step's gap (linear_ipm) */
    int ipm;       /* 1 once it ran */
} linear_ctx;

/* z_i = x_i'w (s->b, s->e: the row of coordinate i). Inlined into each copy of the
 * skeleton, as is the update. */
static inline __attribute__((always_inline)) double linear_dot(void *ctx, int64_t i,
                                                               const cd_coord *s)
{
    (void)i;
    const linear_ctx *x = ctx;
    return km_sparse_dot(x->P->index, x->P->value, s->b, s->e, x->w) + x->bias * x->w[x->n];
}

/* w += h x_i, unrolled (the indices of a row are distinct: any order gives the same w). */
static inline __attribute__((always_inline)) int linear_update(void *ctx, int64_t i,
                                                               const cd_coord *s, double h,
                                                               km_error *err)
{
    (void)i;
    (void)err;
    linear_ctx *x = ctx;
    const int32_t *index = x->P->index;
    const double *value = x->P->value;
    double *w = x->w;
    int64_t k = s->b, e = s->e;
    for (; k + 4 <= e; k += 4) {
        w[index[k]] += h * value[k];
        w[index[k + 1]] += h * value[k + 1];
        w[index[k + 2]] += h * value[k + 2];
        w[index[k + 3]] += h * value[k + 3];
    }
    for (; k < e; k++)
        w[index[k]] += h * value[k];
    w[x->n] += h * x->bias;
    return KM_OK;
}

/* The lines of the row's first and last indices and of its first, middle and last values:
 * all of a row of up to 16 indices and 24 values (a prefetch never faults, so an empty row
 * is fine; longer rows wake the hardware's prefetcher). */
static inline __attribute__((always_inline)) void linear_lines(void *ctx, const cd_coord *s,
                                                               const void *line[])
{
    const linear_ctx *x = ctx;
    const int32_t *ib = x->P->index + s->b;
    const double *vb = x->P->value + s->b;
    int64_t n = s->e - s->b;
    line[0] = ib;
    line[1] = ib + n - 1;
    line[2] = vb;
    line[3] = vb + n / 2;
    line[4] = vb + n - 1;
}

/* ---- the subspace step (face.h) for the linear kernel ---- */


/*
 * The state of the walk: the coefficients W[0..nw) that move, their rows as a dense nw x nd
 * matrix X over the nd features they touch (compact numbering; the bias feature included),
 * their c, pieces (lo, hi, a, d), e = d + mu, w on the compact features (wc), and the
 * Cholesky factor L of M = I + X_W' E^-1 X_W over the coefficients still on.
 */
typedef struct face_state {
    int64_t nw;
    int nd;
    int64_t *rp;      /* row k: ri[rp[k]..rp[k+1]), rv: its compact features and values */
    int32_t *ri;
    double *rv;
    double *c, *lo, *hi, *a, *d, *e, *g, *s, *tk;
    char *on;
    double *wc, *L, *b, *v, *A, *B, *u;
    km_face_bp *bp;
} face_state;

/* x_k'v over the compact features. */
static double face_rowdot(const face_state *F, int64_t k, const double *v)
{
    double s0 = 0, s1 = 0;
    int64_t q = F->rp[k], e = F->rp[k + 1];
    for (; q + 2 <= e; q += 2) {
        s0 += F->rv[q] * v[F->ri[q]];
        s1 += F->rv[q + 1] * v[F->ri[q + 1]];
    }
    if (q < e)
        s0 += F->rv[q] * v[F->ri[q]];
    return s0 + s1;
}

/* acc += f x_k. */
static void face_rowaxpy(const face_state *F, int64_t k, double f, double *acc)
{
    for (int64_t q = F->rp[k]; q < F->rp[k + 1]; q++)
        acc[F->ri[q]] += f * F->rv[q];
}

/* L = chol(I + sum over the coefficients on of x_k x_k' / e_k); -1 if that fails. */
static int face_factor(face_state *F)
{
    int nd = F->nd;
    double *L = F->L;
    memset(L, 0, (size_t)nd * (size_t)nd * sizeof *L);
    for (int64_t k = 0; k < F->nw; k++) {
        if (!F->on[k])
            continue;
        for (int64_t p = F->rp[k]; p < F->rp[k + 1]; p++) {
            double fp = F->rv[p] / F->e[k];
            for (int64_t q = F->rp[k]; q < F->rp[k + 1]; q++)
                if (F->ri[q] <= F->ri[p])
                    L[F->ri[p] * nd + F->ri[q]] += fp * F->rv[q];
        }
    }
    for (int p = 0; p < nd; p++)
        L[p * nd + p] += 1;
    return LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', nd, L, nd) == 0 ? 0 : -1;
}

/*
 * One direction of the walk. s = -(X_W X_W' + E)^-1 g by Woodbury: s = -(g - X_W v) / e,
 * M v = X_W' (g / e), g = X_W wc + a + d c the gradient of G on W's pieces. Then the exact
 * minimizer of G along the projected path P[c + t s] (coefficients stop at their bounds one
 * by one: breakpoints from a heap; the change of w on the path is t A + B), applied to c and
 * wc; coefficients put on a bound leave W (on = 0), and so do those on a bound with s
 * pointing out of their piece (they stay put: Bertsekas' rule). Returns 0 (*gain the
 * decrease of G, *passed the breakpoints passed plus the coefficients that stayed: 0 means
 * W's optimum), 2 if s is no descent direction without those that stayed (the caller
 * updates L and asks again), -1 if the solve failed.
 */
static int face_direction(face_state *F, double *gain, int64_t *passed)
{
    int nd = F->nd;
    *gain = 0;
    *passed = 0;
    memset(F->b, 0, (size_t)nd * sizeof *F->b);
    for (int64_t k = 0; k < F->nw; k++) {
        if (!F->on[k])
            continue;
        F->g[k] = face_rowdot(F, k, F->wc) + F->a[k] + F->d[k] * F->c[k];
        face_rowaxpy(F, k, F->g[k] / F->e[k], F->b);
    }
    memcpy(F->v, F->b, (size_t)nd * sizeof *F->v);
    if (LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', nd, 1, F->L, nd, F->v, 1) != 0)
        return -1;
    int64_t nb = 0, out = 0;
    double G1 = 0, DS = 0;
    memset(F->A, 0, (size_t)nd * sizeof *F->A);
    memset(F->B, 0, (size_t)nd * sizeof *F->B);
    for (int64_t k = 0; k < F->nw; k++) {
        if (!F->on[k])
            continue;
        double sk = -(F->g[k] - face_rowdot(F, k, F->v)) / F->e[k], ck = F->c[k];
        F->s[k] = sk;
        F->tk[k] = sk > 0 ? (F->hi[k] - ck) / sk : sk < 0 ? (F->lo[k] - ck) / sk : INFINITY;
        if (!(F->tk[k] > 0)) {   /* on its bound and pointing out: stays, and leaves W */
            F->on[k] = 0;
            out++;
            continue;
        }
        G1 += F->g[k] * sk;
        DS += F->d[k] * sk * sk;
        face_rowaxpy(F, k, sk, F->A);
        if (isfinite(F->tk[k]))
            F->bp[nb++] = (km_face_bp){F->tk[k], k};
    }
    if (!(G1 < 0))   /* no descent without those that left: ask again */
        return out ? 2 : 0;
    *passed = out;
    for (int64_t i = nb / 2 - 1; i >= 0; i--)
        km_face_bp_down(F->bp, nb, i);
    double t = 0, f = 0, tbest = 0;
    for (;;) {   /* f(t) = G(P[c + t s]) - G(c), quadratic up to the next breakpoint */
        double AA = 0, BA = 0;
        for (int j = 0; j < nd; j++) {
            AA += F->A[j] * F->A[j];
            BA += F->B[j] * F->A[j];
        }
        double f1 = G1 + (DS + AA) * t + BA, f2 = DS + AA;   /* f'(t), f'' */
        double tn = nb > 0 ? F->bp[0].t : INFINITY;
        if (!(f1 < 0)) {
            tbest = t;
            break;
        }
        double ts = f2 > 0 ? t - f1 / f2 : INFINITY;
        if (ts <= tn) {
            f += f1 * (ts - t) + f2 * (ts - t) * (ts - t) / 2;
            tbest = ts;
            break;
        }
        if (!isfinite(tn))   /* no curvature, no bound: not on these pieces */
            return 0;
        f += f1 * (tn - t) + f2 * (tn - t) * (tn - t) / 2;
        t = tn;
        int64_t k = F->bp[0].k;   /* k stops on its bound */
        F->bp[0] = F->bp[--nb];
        km_face_bp_down(F->bp, nb, 0);
        ++*passed;
        double bk = F->s[k] > 0 ? F->hi[k] : F->lo[k];
        face_rowaxpy(F, k, -F->s[k], F->A);
        face_rowaxpy(F, k, bk - F->c[k], F->B);
        G1 -= F->g[k] * F->s[k];
        DS -= F->d[k] * F->s[k] * F->s[k];
    }
    if (!(f < 0))
        return 0;
    memset(F->u, 0, (size_t)nd * sizeof *F->u);
    for (int64_t k = 0; k < F->nw; k++) {   /* apply: c, and w through u = X_W' (change) */
        if (!F->on[k])
            continue;
        double cn;
        if (F->tk[k] <= tbest) {   /* on its bound now: leaves W */
            cn = F->s[k] > 0 ? F->hi[k] : F->lo[k];
            F->on[k] = 0;
        } else {
            cn = F->c[k] + tbest * F->s[k];
            cn = cn < F->lo[k] ? F->lo[k] : cn > F->hi[k] ? F->hi[k] : cn;
        }
        if (cn != F->c[k]) {
            face_rowaxpy(F, k, cn - F->c[k], F->u);
            F->c[k] = cn;
        }
    }
    for (int j = 0; j < nd; j++)
        F->wc[j] += F->u[j];
    *gain = -f;
    return 0;
}

/*
 * The coefficient side of the walk, for W's rows touching more than KM_FACE_MAXDIM
 * features (doc/linear-solver.md): the Newton directions of linear_face_step in the
 * coefficients instead of the features, s = -(K_WW + E)^-1 g with K_WW = X_W X_W' (the
 * bias column included), by the kernel solver's walk km_face_kwalk (face.h) on an nw x nw
 * factor, nw = |W| <= KM_LWALK_MAXW (the caller's test; beyond it no step). K_WW: the
 * features in at least nw/KM_LWALK_DENSE of the rows as dense columns by BLAS (dsyrk; at
 * most KM_LWALK_DENSEMAX entries), the others as sparse columns, each adding the products
 * of its entries (sum of count^2/2).
 * Work, in multiply-adds of row entries as the rest of the step: a dense flop (dsyrk, and
 * km_face_kwalk's count) 1/KM_LWALK_FLOP, a sparse column's product KM_LWALK_GATHER
 * (measured, AMD EPYC: CD's multiply-add 0.3-1.5 ns, dsyrk/dpotrf 0.05 ns, a scattered
 * product ~1.2 ns; KM_LWALK_FLOP = 64 charges the dense walk about 1/2-1/6 of its time:
 * with the measured 16 the walks on 1,000 x 700 unscaled l1svm are cut before they pay and
 * CD needs 5,251 sweeps, with 64: 71). No walk when building K_WW and its first factor
 * alone would pass the budget `limit`. The walk runs in chunks of the budget (km_face_kwalk
 * refactors K_OO whenever O changes): another chunk, at most KM_LWALK_CHUNKS, while the
 * last one ended on the budget and paid (its decrease of G per work >= rate, CD's). Then
 * w += (c_k new - c_k old) x_k over the coefficients it changed (linear_update, in index
 * order): w = X'c as CD keeps it.
 * k: W's coefficients (index order), i = W[k], with their pieces, c and z (all of length
 * nw). Adds its work to *work, its decrease of G to *gain.
 */
#ifndef KM_LWALK_MAXW
#define KM_LWALK_MAXW 1000
#endif
#ifndef KM_LWALK_FLOP
#define KM_LWALK_FLOP 64
#endif
#ifndef KM_LWALK_GATHER
#define KM_LWALK_GATHER 4
#endif
#ifndef KM_LWALK_CHUNKS
#define KM_LWALK_CHUNKS 16
#endif
#ifndef KM_LWALK_DENSE
#define KM_LWALK_DENSE 8
#endif
#ifndef KM_LWALK_DENSEMAX
#define KM_LWALK_DENSEMAX (1 << 22)
#endif

static int linear_kside(linear_ctx *x, cd_coord *coord, int64_t nw, const int64_t *W,
                        const double *plo, const double *phi, const double *pa,
                        const double *pd, const double *pc, const double *pz, double limit,
                        double rate, double *work, double *gain, km_error *err)
{
    const km_problem *P = x->P;
    int64_t n1 = (int64_t)x->n + 1;
    int64_t ns = nw;
    size_t n = (size_t)ns;
    double *v = malloc(7 * n * sizeof *v), *K = NULL, *Xd = NULL, *cv = NULL;
    int64_t *cp = NULL, *dz = NULL, *cr = NULL;
    int32_t *pos = malloc((size_t)n1 * sizeof *pos);
    int rc = KM_OK;
    if (!v || !pos) {
        rc = km_error_nomem(err, "subspace step");
        goto out;
    }
    double *lo = v, *hi = lo + n, *a = hi + n, *d = a + n, *c = d + n, *zW = c + n,
           *c0 = zW + n;
    double tr = 0, nnz = 0;
    int64_t nd = 0;   /* the features W's rows touch, compact: pos[j] */
    for (int64_t j = 0; j < n1; j++)
        pos[j] = -1;
    for (int64_t s = 0; s < ns; s++) {
        const cd_coord *r = &coord[W[s]];
        lo[s] = plo[s];
        hi[s] = phi[s];
        a[s] = pa[s];
        d[s] = pd[s];
        c[s] = c0[s] = pc[s];
        zW[s] = pz[s];
        tr += 1 / r->alpha;
        nnz += (double)(r->e - r->b);
        for (int64_t q = r->b; q < r->e; q++)
            if (pos[P->index[q]] < 0)
                pos[P->index[q]] = (int32_t)nd++;
    }
    /* a feature in at least ns / KM_LWALK_DENSE of the rows is dense (a column of Xd, at
     * most KM_LWALK_DENSEMAX entries in all), the others sparse (columns of a CSC) */
    cp = calloc((size_t)nd + 1, sizeof *cp);
    dz = malloc(((size_t)nd + 1) * sizeof *dz);
    if (!cp || !dz) {
        rc = km_error_nomem(err, "subspace step");
        goto out;
    }
    for (int64_t s = 0; s < ns; s++) {
        const cd_coord *r = &coord[W[s]];
        for (int64_t q = r->b; q < r->e; q++)
            cp[pos[P->index[q]] + 1]++;
    }
    int64_t ndz = 0, nsp = 0;
    double pairs = 0;   /* the sparse columns' products */
    for (int64_t f = 0; f < nd; f++) {
        int64_t cf = cp[f + 1];
        if (cf * KM_LWALK_DENSE >= ns && (double)(ndz + 1) * (double)ns <= KM_LWALK_DENSEMAX) {
            dz[f] = ndz++;
            cp[f + 1] = 0;
        } else {
            dz[f] = -1;
            nsp += cf;
            pairs += (double)cf * (double)(cf + 1) / 2;
        }
    }
    for (int64_t f = 0; f < nd; f++)
        cp[f + 1] += cp[f];
    double nn = (double)ns * (double)ns;
    double build = nnz + nn * (double)ndz / 2 / KM_LWALK_FLOP + KM_LWALK_GATHER * pairs;
    if (*work + build + (nn * (double)ns / 3 + 5 * nn) / KM_LWALK_FLOP > limit)
        goto out;   /* K_WW and the first factor alone are over the budget: no step */
    K = calloc(n * n, sizeof *K);
    Xd = calloc(n * (size_t)(ndz > 0 ? ndz : 1), sizeof *Xd);
    cr = malloc((size_t)(nsp > 0 ? nsp : 1) * sizeof *cr);
    cv = malloc((size_t)(nsp > 0 ? nsp : 1) * sizeof *cv);
    if (!K || !Xd || !cr || !cv) {
        rc = km_error_nomem(err, "subspace step");
        goto out;
    }
    for (int64_t s = 0; s < ns; s++) {   /* Xd, and the CSC (rows increasing) */
        const cd_coord *r = &coord[W[s]];
        for (int64_t q = r->b; q < r->e; q++) {
            int64_t f = pos[P->index[q]];
            if (dz[f] >= 0) {
                Xd[(size_t)s * (size_t)ndz + (size_t)dz[f]] = P->value[q];
            } else {
                cr[cp[f]] = s;
                cv[cp[f]++] = P->value[q];
            }
        }
    }
    for (int64_t f = nd; f > 0; f--)   /* back to the starts */
        cp[f] = cp[f - 1];
    cp[0] = 0;
    if (ndz > 0)   /* the dense columns: K = Xd Xd' (lower) */
        cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, (int)ns, (int)ndz, 1, Xd,
                    (int)ndz, 0, K, (int)ns);
    for (int64_t f = 0; f < nd; f++)   /* the sparse ones: K_pq += x_pf x_qf, p >= q */
        for (int64_t u = cp[f]; u < cp[f + 1]; u++) {
            double *Kp = K + (size_t)cr[u] * n, vu = cv[u];
            for (int64_t t = cp[f]; t <= u; t++)
                Kp[cr[t]] += vu * cv[t];
        }
    double b2 = x->bias * x->bias;   /* the bias column, and the upper triangle */
    for (size_t p = 0; p < n; p++)
        for (size_t q = 0; q <= p; q++)
            K[q * n + p] = K[p * n + q] += b2;
    *work += build;
    /* the walk in chunks of `chunk` sweeps' worth: another while the last paid */
    double chunk = limit - *work;
    for (int t = 0; t < KM_LWALK_CHUNKS; t++) {
        double kgain = 0, kwork = 0, curv[2];
        int kr = km_face_kwalk(ns, K, NULL, lo, hi, a, d, KM_FACE_MU * tr / (double)ns,
                               chunk * KM_LWALK_FLOP, c, zW, &kgain, &kwork, curv);
        if (kr < 0) {
            rc = km_error_nomem(err, "subspace step");
            goto out;
        }
        *work += kwork / KM_LWALK_FLOP;
        *gain += kgain;
        if (kr == 1)   /* X_W X_W' + D not positive definite as computed: CD goes on alone */
            break;
        /* ended by itself (W's optimum, no descent left: budget to spare), or did not pay */
        if (kwork + nn * (double)ns / 3 + 5 * nn <= chunk * KM_LWALK_FLOP || !(kgain > 0) ||
            kgain < rate * kwork / KM_LWALK_FLOP)
            break;
        chunk = limit;
    }
    for (int64_t s = 0; s < ns; s++) {   /* w += (change) x_i, c_i: w = X'c */
        if (c[s] == c0[s])
            continue;
        int64_t i = W[s];
        linear_update(x, i, &coord[i], c[s] - c0[s], err);
        coord[i].c = c[s];
    }
out:
    free(v);
    free(pos);
    free(K);
    free(Xd);
    free(cp);
    free(dz);
    free(cr);
    free(cv);
    return rc;
}

/* G(c) = ||w||^2/2 + sum_i phi_i(c_i) (the dual objective, minimized: -D). */
static double linear_G(const linear_ctx *x, int64_t m, const cd_coord *coord, km_loss loss,
                       double eps)
{
    double ww = 0, phi = 0;
    for (int64_t j = 0; j <= (int64_t)x->n; j++)
        ww += x->w[j] * x->w[j];
    for (int64_t i = 0; i < m; i++)
        phi += km_loss_conj(loss, coord[i].y, coord[i].c, coord[i].C, eps);
    return ww / 2 + phi;
}

/*
 * The interior-point step (face.h: km_face_ipm) for a loss whose dual terms are boxes
 * (km_face_box: l1svm, rla, svr at eps = 0) on few dense features: when more coefficients can move than
 * W's rows have features (the face is degenerate: the walk's Newton directions run along
 * the null space of X_W' and each puts about one coefficient on a bound, a simplex pivot;
 * the Union baseline of the 32-task tree, 640 x 100, needs some 450 of them), the whole
 * dual is solved by the interior-point method instead, from c, to a relative gap x->tol.
 * Only when the rows touch at most KM_FACE_MAXDIM features, the dense X (two copies: X
 * and its scaled rows) has at most KM_LWALK_DENSEMAX entries, and its expected cost
 * (KM_IPM_ITERS iterations of a dsyrk of m x nf, a factor of nf x nf, both at
 * 1/KM_LWALK_FLOP a row multiply-add, and KM_IPM_VEC m nf of vector work) plus the
 * densifying (m nf) fits `limit` with *work; else *ran = 0 and the walk runs. The point is
 * taken if the method reached its gap and the point lowers G (then w = X'c rebuilt in index
 * order, as CD's updates), else c and w stay; *gain gets the decrease, *work its work. The
 * caller runs it once per solve (x->ipm) and then has the skeleton check the exact gap.
 */
#ifndef KM_IPM_ITERS
#define KM_IPM_ITERS 25
#endif
#ifndef KM_IPM_MAXIT
#define KM_IPM_MAXIT 60
#endif
#ifndef KM_IPM_TOL   /* its gap: CD's tolerance over this */
#define KM_IPM_TOL 10
#endif
#ifndef KM_IPM_VEC
#define KM_IPM_VEC 1.0
#endif
/* The expected cost of km_face_ipm on mi rows of nf features (above), in row
 * multiply-adds. */
static double ipm_cost(double mi, double nf)
{
    double mn = mi * nf;
    return mn + KM_IPM_ITERS * ((mn * nf / 2 + nf * nf * nf / 6) / KM_LWALK_FLOP +
                                KM_IPM_VEC * mn);
}

static int linear_ipm(linear_ctx *x, int64_t m, cd_coord *coord, km_loss loss, double eps,
                      double limit, double G0, double *work, double *gain, int *ran,
                      km_error *err)
{
    const km_problem *P = x->P;
    int64_t n1 = (int64_t)x->n + 1, mi = 0;
    int nf = 0, rc = KM_OK;
    double lo, hi, a, d;
    *ran = 0;
    int32_t *pos = malloc((size_t)n1 * sizeof *pos);
    double *X = NULL, *v = NULL, *w0 = NULL;
    int64_t *R = NULL;
    if (!pos) {
        rc = km_error_nomem(err, "subspace step");
        goto out;
    }
    for (int64_t j = 0; j < n1; j++)
        pos[j] = -1;
    for (int64_t i = 0; i < m; i++) {
        const cd_coord *s = &coord[i];
        if (!(s->alpha > 0))
            continue;
        if (!km_face_box(loss, s->y, s->C, eps, &lo, &hi, &a, &d))
            goto out;
        mi++;
        for (int64_t q = s->b; q < s->e; q++)
            if (pos[P->index[q]] < 0) {
                if (nf >= KM_FACE_MAXDIM)
                    goto out;
                pos[P->index[q]] = nf++;
            }
    }
    if (x->bias != 0)
        pos[x->n] = nf++;
    double mn = (double)mi * nf;
    if (mi == 0 || nf > KM_FACE_MAXDIM || mn > KM_LWALK_DENSEMAX ||
        *work + ipm_cost((double)mi, nf) > limit)
        goto out;
    size_t M = (size_t)mi, f = (size_t)nf;
    X = calloc(M * f, sizeof *X);
    v = malloc(6 * M * sizeof *v);
    w0 = malloc(((size_t)n1 + f) * sizeof *w0);
    R = malloc(M * sizeof *R);
    if (!X || !v || !w0 || !R) {
        rc = km_error_nomem(err, "subspace step");
        goto out;
    }
    double *vlo = v, *vhi = v + M, *va = vhi + M, *vd = va + M, *c = vd + M, *c0 = c + M,
           *wc = w0 + n1;
    int64_t k = 0;
    for (int64_t i = 0; i < m; i++) {
        const cd_coord *s = &coord[i];
        if (!(s->alpha > 0))
            continue;
        km_face_box(loss, s->y, s->C, eps, &vlo[k], &vhi[k], &va[k], &vd[k]);
        c[k] = c0[k] = s->c;
        for (int64_t q = s->b; q < s->e; q++)
            X[(size_t)k * f + (size_t)pos[P->index[q]]] = P->value[q];
        if (x->bias != 0)
            X[(size_t)k * f + (size_t)pos[x->n]] = x->bias;
        R[k++] = i;
    }
    *ran = 1;
    double gap, flops = 0;
    int r = km_face_ipm(mi, nf, X, vlo, vhi, va, vd, x->tol, KM_IPM_MAXIT, c, wc, &gap, &flops);
    *work += mn + flops / KM_LWALK_FLOP;
    if (r < 0) {
        rc = km_error_nomem(err, "subspace step");
        goto out;
    }
    if (r != 0)   /* not at its gap: an interior point far from the optimum only makes */
        goto out; /* CD's and the walk's work longer (unscaled satimage); c stays */
    memcpy(w0, x->w, (size_t)n1 * sizeof *w0);
    memset(x->w, 0, (size_t)n1 * sizeof *x->w);
    for (int64_t t = 0; t < mi; t++) {
        coord[R[t]].c = c[t];
        if (c[t] != 0)
            linear_update(x, R[t], &coord[R[t]], c[t], err);
    }
    double G1 = linear_G(x, m, coord, loss, eps);
    if (G1 < G0) {
        *gain = G0 - G1;
    } else {   /* no better: back */
        for (int64_t t = 0; t < mi; t++)
            coord[R[t]].c = c0[t];
        memcpy(x->w, w0, (size_t)n1 * sizeof *w0);
    }
out:
    free(pos);
    free(X);
    free(v);
    free(w0);
    free(R);
    return rc;
}

/*
 * The subspace step for the linear kernel (face.h, doc/linear-solver.md): an active-set
 * walk on the coefficients W that can move (km_face_piece: inside a piece, or on a bound
 * with the gradient pointing in). Each direction is the Newton step of G on W's pieces,
 * regularized by mu = KM_FACE_MU times the mean k_ii (finite where the curvature is 0 and
 * K_WW singular: there it runs along K's null space), computed in the span of the data by
 * Woodbury (a dense nd x nd Cholesky factor, nd = the features W's rows touch, at most
 * KM_FACE_MAXDIM; beyond it, on the coefficient side: linear_kside, K_WW = X_W X_W' and
 * km_face_kwalk); the step is the exact minimizer of G along its projected path, and the
 * coefficients it puts on a bound leave W. G never increases: each step minimizes it along
 * a path from c; c and w are updated together at the end.
 * It ends at W's optimum, or after `budget` sweeps' worth of work (multiply-adds of row
 * entries, factorizations included). *paid says whether it beat CD's rate: the decrease of G per unit of work
 * over the `visits` coordinate visits since the last call (*Glast: G after that call, or
 * G(0) = 0 at the start; the lower of the last two intervals' rates, as CD's rate right
 * after a walk is high: it mends what the walk left); the caller waits longer after a
 * walk that did not pay.
 */
static int linear_face_step(void *ctx, int64_t m, cd_coord *coord, km_loss loss, double eps,
                            double budget, int64_t visits, double *Glast, double *gain,
                            int *paid, int *exact, km_error *err)
{
    linear_ctx *x = ctx;
    const km_problem *P = x->P;
    int64_t n1 = (int64_t)x->n + 1;
    size_t len = (size_t)(m > 0 ? m : 1);
    *gain = 0;
    *paid = 0;
    if (!km_face_loss(loss))
        return KM_OK;
    face_state F = {0};
    int64_t *W = malloc(len * sizeof *W), nnz = 0, nnzall = 0;
    double *buf = malloc(len * 10 * sizeof *buf);
    F.on = malloc(len);
    F.bp = malloc(len * sizeof *F.bp);
    F.rp = malloc((len + 1) * sizeof *F.rp);
    int32_t *pos = malloc((size_t)n1 * sizeof *pos), *feat = malloc((size_t)n1 * sizeof *feat);
    int rc = KM_OK;
    if (!W || !buf || !F.on || !F.bp || !F.rp || !pos || !feat) {
        rc = km_error_nomem(err, "subspace step");
        goto done;
    }
    F.c = buf;
    F.lo = F.c + m;
    F.hi = F.lo + m;
    F.a = F.hi + m;
    F.d = F.a + m;
    F.e = F.d + m;
    F.g = F.e + m;
    F.s = F.g + m;
    F.tk = F.s + m;
    for (int64_t j = 0; j < n1; j++)
        pos[j] = -1;
    double G0 = linear_G(x, m, coord, loss, eps), trace = 0;
    /* CD's rate since the last call: decrease of G per multiply-add */
    for (int64_t i = 0; i < m; i++)
        nnzall += coord[i].e - coord[i].b + (x->bias != 0);
    double rowcost = 2 * ((double)nnzall / (double)(m > 0 ? m : 1) + 1);
    double rate = visits > 0 ? (*Glast - G0) / ((double)visits * rowcost) : 0;
    double rate1 = rate;   /* right after a walk CD's rate is high (it mends the walk's
                              path): the lower of the last two intervals' */
    if (x->rate > 0 && x->rate < rate)
        rate = x->rate;
    x->rate = rate1;
    *Glast = G0;
    F.rp[0] = 0;
    double *zk = F.tk + m;   /* z_i of W's coefficients (the coefficient side's) */
    for (int64_t i = 0; i < m; i++) {   /* W and its features */
        cd_coord *c = &coord[i];
        int64_t k = F.nw;
        if (!(c->alpha > 0))
            continue;
        zk[k] = linear_dot(x, i, c);
        if (!km_face_piece(loss, c->y, c->C, eps, c->c, zk[k], &F.lo[k], &F.hi[k], &F.a[k],
                           &F.d[k]))
            continue;
        W[F.nw++] = i;
        F.c[k] = c->c;
        trace += 1 / c->alpha;
        for (int64_t q = c->b; q <= c->e; q++) {
            if (q == c->e && x->bias == 0)
                continue;
            int32_t j = q < c->e ? P->index[q] : x->n;
            if (pos[j] < 0) {
                pos[j] = F.nd;
                feat[F.nd++] = j;
            }
            nnz++;
        }
        F.rp[F.nw] = nnz;
    }
    if (F.nw == 0)
        goto done;
    double lo1, hi1, a1, d1;   /* W's rows and features: at most the step's, so its cost */
    if (F.nw > F.nd && !x->ipm && km_face_box(loss, 1, 1, eps, &lo1, &hi1, &a1, &d1) &&
        (double)F.nw * F.nd <= KM_LWALK_DENSEMAX &&
        (double)m * rowcost + ipm_cost((double)F.nw, F.nd) <= budget * (double)m * rowcost) {
        /* a degenerate face: the interior-point step, once */
        double work = (double)m * rowcost;
        rc = linear_ipm(x, m, coord, loss, eps, budget * (double)m * rowcost, G0, &work, gain,
                        &x->ipm, err);
        if (rc || *gain > 0) {
            *Glast = G0 - *gain;
            *paid = *gain >= rate * work;
            *exact = 1;
            goto done;
        }
    }
    if (F.nd > KM_FACE_MAXDIM) {   /* too many features for the dense system: K_WW */
        if (F.nw > KM_LWALK_MAXW)
            goto done;   /* and too many coefficients for K_WW: no step */
        double work = (double)m * rowcost;
        rc = linear_kside(x, coord, F.nw, W, F.lo, F.hi, F.a, F.d, F.c, zk,
                          budget * (double)m * rowcost, rate, &work, gain, err);
        *Glast = G0 - *gain;
        *paid = *gain >= rate * work;
        goto done;
    }
    int nd = F.nd;
    F.ri = malloc((size_t)nnz * sizeof *F.ri);
    F.rv = malloc((size_t)nnz * sizeof *F.rv);
    F.L = malloc((size_t)nd * (size_t)nd * sizeof *F.L);
    F.wc = malloc((size_t)nd * 7 * sizeof *F.wc);
    if (!F.ri || !F.rv || !F.L || !F.wc) {
        rc = km_error_nomem(err, "subspace step");
        goto done;
    }
    F.b = F.wc + nd;
    F.v = F.b + nd;
    F.A = F.v + nd;
    F.B = F.A + nd;
    F.u = F.B + nd;
    double *xr = F.u + nd;
    for (int j = 0; j < nd; j++)
        F.wc[j] = x->w[feat[j]];
    /* the work so far: one sweep's (G0, and z_i for every row to find W) */
    double mu = KM_FACE_MU * trace / (double)F.nw, work = (double)m * rowcost, wrow = 0;
    for (int64_t k = 0; k < F.nw; k++) {
        const cd_coord *c = &coord[W[k]];
        int64_t t = F.rp[k];
        for (int64_t q = c->b; q < c->e; q++, t++) {
            F.ri[t] = pos[P->index[q]];
            F.rv[t] = P->value[q];
        }
        if (x->bias != 0) {
            F.ri[t] = pos[x->n];
            F.rv[t] = x->bias;
        }
        F.e[k] = F.d[k] + mu;
        F.on[k] = 1;
        wrow += (double)(F.rp[k + 1] - F.rp[k]) * (double)(F.rp[k + 1] - F.rp[k]);
    }
    work += wrow + (double)nd * nd * nd / 3;   /* the factor */
    if (work > budget * (double)m * rowcost)   /* it alone is over the budget: no step */
        goto done;
    if (face_factor(&F))
        goto done;
    for (int64_t dir = 0; dir <= F.nw; dir++) {   /* each direction but the last: one out */
        if (work > budget * (double)m * rowcost)
            break;
        double g1, nnzon = 0;
        int64_t passed;
        for (int64_t k = 0; k < F.nw; k++)
            nnzon += F.on[k] ? (double)(F.rp[k + 1] - F.rp[k]) : 0;
        int r = face_direction(&F, &g1, &passed);
        if (r < 0)
            break;
        work += 5 * nnzon + 2.0 * nd * nd;   /* its multiply-adds */
        *gain += g1;
        if (r == 0 && (passed == 0 || !(g1 > 0)))
            break;
        /* those that left: downdate L by x_k / sqrt(e_k), or a fresh factor if that is
         * cheaper (many left) or a downdate fails */
        double left = 0;
        for (int64_t k = 0; k < F.nw; k++)
            left += !F.on[k] && F.e[k] > 0;
        int refactor = left * nd * nd > wrow + (double)nd * nd * nd / 3;
        for (int64_t k = 0; k < F.nw; k++) {
            if (F.on[k] || !(F.e[k] > 0))
                continue;
            if (refactor) {
                F.e[k] = 0;
                continue;
            }
            memset(xr, 0, (size_t)nd * sizeof *xr);
            face_rowaxpy(&F, k, 1 / sqrt(F.e[k]), xr);
            F.e[k] = 0;   /* out of L */
            work += (double)nd * nd;
            if (km_face_chol_downdate(F.L, nd, xr))
                refactor = 1;
        }
        if (refactor) {
            work += wrow + (double)nd * nd * nd / 3;
            if (face_factor(&F))
                break;
        }
    }
    for (int64_t k = 0; k < F.nw; k++)   /* c and w together */
        coord[W[k]].c = F.c[k];
    for (int j = 0; j < nd; j++)
        x->w[feat[j]] = F.wc[j];
    *Glast = G0 - *gain;
    *paid = *gain >= rate * work;
done:
    free(W);
    free(buf);
    free(F.on);
    free(F.bp);
    free(F.rp);
    free(F.ri);
    free(F.rv);
    free(pos);
    free(feat);
    free(F.L);
    free(F.wc);
    return rc;
}

int64_t km_linear_dim(const km_linear_data *d)
{
    return (int64_t)d->P->n + 1;
}

int km_cd_linear(const km_linear_data *d, const double *y, const double *C,
                 const km_cd_param *par, double *w, double *c, km_cd_result *res,
                 km_error *err)
{
    static const cd_ops ops = {linear_dot, linear_update, NULL, NULL, NULL, linear_lines,
                               linear_face_step};
    int64_t m = d->rows ? d->m : d->P->l;
    const km_problem *P = d->P;
    double bias = d->bias >= 0 ? d->bias : 0;
    double delta = par->delta > 0 ? par->delta : KM_CD_DEFAULT_GAP;
    linear_ctx x = {P, w, P->n, bias, 0, delta / KM_IPM_TOL, 0};
    size_t len = (size_t)(m > 0 ? m : 1);
    cd_coord *coord = aligned_alloc(64, len * sizeof *coord);
    if (!coord)
        return km_error_nomem(err, "coordinate descent");
    memset(w, 0, (size_t)km_linear_dim(d) * sizeof *w);
    for (int64_t i = 0; i < m; i++) {           /* alpha_i = 1/k_ii = 1/||x_i||^2 */
        int64_t r = d->rows ? d->rows[i] : i;
        cd_coord *s = &coord[i];
        double q = bias * bias;
        s->b = P->row_ptr[r];
        s->e = P->row_ptr[r + 1];
        for (int64_t k = s->b; k < s->e; k++)
            q += P->value[k] * P->value[k];
        s->alpha = q > 0 ? 1 / q : 0;
        s->y = y[i];
        s->C = C[i];
    }
    int rc;
    switch (par->loss) {   /* the loss a constant in each copy of the skeleton */
    case KM_LOSS_L1SVM:
        rc = cd_run(&ops, &x, m, coord, par, KM_LOSS_L1SVM, res, err);
        break;
    case KM_LOSS_L2SVM:
        rc = cd_run(&ops, &x, m, coord, par, KM_LOSS_L2SVM, res, err);
        break;
    case KM_LOSS_SVR:
        rc = cd_run(&ops, &x, m, coord, par, KM_LOSS_SVR, res, err);
        break;
    case KM_LOSS_LOGISTIC:
        rc = cd_run(&ops, &x, m, coord, par, KM_LOSS_LOGISTIC, res, err);
        break;
    default:
        rc = cd_run(&ops, &x, m, coord, par, par->loss, res, err);
        break;
    }
    if (rc == KM_OK && c)
        for (int64_t i = 0; i < m; i++)
            c[i] = coord[i].c;
    free(coord);
    return rc;
}

double km_linear_decision(const km_problem *P, int64_t i, const double *w, int32_t n,
                          double bias)
{
    double z = 0;
    for (int64_t k = P->row_ptr[i]; k < P->row_ptr[i + 1]; k++)
        if (P->index[k] < n)
            z += P->value[k] * w[P->index[k]];
    return bias >= 0 ? z + bias * w[n] : z;
}

double km_linear_objective(const km_linear_data *d, const double *y, const double *C,
                           km_loss loss, double eps, const double *w)
{
    int64_t m = d->rows ? d->m : d->P->l;
    int64_t dim = km_linear_dim(d);
    double F = 0;
    for (int64_t j = 0; j < dim; j++)
        F += w[j] * w[j];
    F /= 2;
    for (int64_t i = 0; i < m; i++) {
        int64_t r = d->rows ? d->rows[i] : i;
        double z = km_linear_decision(d->P, r, w, d->P->n, d->bias);
        F += C[i] * km_loss_value(loss, y[i], z, eps);
    }
    return F;
}

/* ---- general kernels (Algorithm 1): z = Kc kept up to date, update z += h k_i ---- */

/* When shrinking has cut the active set to this fraction of the columns the kernel rows
 * cover, the rows are restricted to the active set (shorter rows: cheaper to compute, and
 * more of them fit the cache). */
#ifndef KM_CD_RESTRICT
#define KM_CD_RESTRICT 0.9
#endif

/*
 * z = Kc, kept for the columns cols[0..ncols) the kernel rows are restricted to (all m at
 * first) in zc (zc[t] = z of cols[t]; pos[i] = t). The skeleton needs z exact only on the
 * active set, a subset of cols: a coefficient dropped from cols at the e-th restriction
 * since z was last exact everywhere keeps z0[j], its z then, and ep[j] = e; prev holds c of
 * the last restriction and the log the values c had at each earlier one where it changed
 * since, so z_j = z0[j] + K (c - c at restriction e) when j is visited again. While exact
 * (all): z of the others, out[0..nout), is kept in zo (pos[i] = -2 - k for out[k]), each
 * change adding its row over them. Without a restriction zc == z and pos is the identity.
 */
typedef struct kernel_ctx {
    km_kmatrix *K;
    double *z;
    int64_t m;
    double *zc, *zbuf, *zo, *z0, *prev;
    int64_t *pos, *cols, ncols, *out, nout, *ep, nep;
    int64_t *logi, *logstart, nlog, caplog, capep;   /* logstart[e]: restriction e's entries */
    double *logv;
    int all;   /* z exact for every coefficient */
} kernel_ctx;

/* z_i: from zc, or from zo (i outside the columns while z is exact everywhere). */
static double kernel_dot(void *ctx, int64_t i, const cd_coord *s)
{
    (void)s;
    const kernel_ctx *x = ctx;
    int64_t p = x->pos[i];
    return p >= 0 ? x->zc[p] : x->zo[-2 - p];
}

/* A column update costs one kernel row (thesis 2.3.1), over the restricted columns (and
 * over the others too while z is exact everywhere). */
static int kernel_update(void *ctx, int64_t i, const cd_coord *s, double h, km_error *err)
{
    (void)s;
    kernel_ctx *x = ctx;
    int rc = km_kmatrix_axpy(x->K, i, h, x->zc, err);   /* z += h k_i */
    if (rc)
        return rc;
    if (x->all && x->nout > 0)
        return km_kmatrix_addmul(x->K, &i, &h, 1, x->out, x->nout, x->zo, err);
    return KM_OK;
}

/* z of every coefficient into x->z (from zc, and from zo while exact everywhere). */
static void kernel_gather_z(kernel_ctx *x)
{
    if (x->zc != x->z)
        for (int64_t t = 0; t < x->ncols; t++)
            x->z[x->cols[t]] = x->zc[t];
    for (int64_t k = 0; x->all && k < x->nout; k++)
        x->z[x->out[k]] = x->zo[k];
}

/* A new restriction (epoch): logs where c changed since the last one (their old values),
 * then prev = c. */
static int kernel_epoch(kernel_ctx *x, const cd_coord *coord, km_error *err)
{
    if (x->nep + 2 > x->capep) {
        int64_t cap = 2 * x->capep + 16, *ls = realloc(x->logstart, (size_t)cap * sizeof *ls);
        if (!ls)
            return km_error_nomem(err, "coordinate descent");
        x->logstart = ls;
        x->capep = cap;
    }
    x->logstart[++x->nep] = x->nlog;
    if (x->nep == 1) {
        for (int64_t i = 0; i < x->m; i++)
            x->prev[i] = coord[i].c;
        return KM_OK;
    }
    for (int64_t i = 0; i < x->m; i++) {
        if (coord[i].c == x->prev[i])
            continue;
        if (x->nlog == x->caplog) {
            int64_t cap = 2 * x->caplog + 1024, *li = realloc(x->logi, (size_t)cap * sizeof *li);
            double *lv = li ? realloc(x->logv, (size_t)cap * sizeof *lv) : NULL;
            if (li)
                x->logi = li;
            if (!li || !lv)
                return km_error_nomem(err, "coordinate descent");
            x->logv = lv;
            x->caplog = cap;
        }
        x->logi[x->nlog] = i;
        x->logv[x->nlog++] = x->prev[i];
        x->prev[i] = coord[i].c;
    }
    return KM_OK;
}

/* After a sweep, act[0..na) active: restrict the rows (and zc) to it once it is at most
 * KM_CD_RESTRICT of the current columns, or whenever z is exact everywhere but not kept so
 * on whole rows (after a check sweep). The columns dropped keep their z and this epoch. */
static int kernel_shrunk(void *ctx, const int64_t *act, int64_t na, const cd_coord *coord,
                         km_error *err)
{
    kernel_ctx *x = ctx;
    int64_t m = x->m, nc = 0;
    if ((double)na > KM_CD_RESTRICT * (double)x->ncols && (!x->all || x->ncols == m))
        return KM_OK;
    kernel_gather_z(x);
    if (x->all) {   /* z exact everywhere: a new series of restrictions */
        x->nep = 0;
        x->nlog = 0;
    }
    char *in = calloc((size_t)(m > 0 ? m : 1), 1);
    int rc = in ? kernel_epoch(x, coord, err) : km_error_nomem(err, "coordinate descent");
    if (rc) {
        free(in);
        return rc;
    }
    for (int64_t t = 0; t < na; t++)
        in[act[t]] = 1;
    for (int64_t i = 0; i < m; i++) {
        if (in[i]) {
            x->cols[nc] = i;
            x->zbuf[nc] = x->z[i];
            x->pos[i] = nc++;
            continue;
        }
        if (x->pos[i] >= 0 || x->all) {   /* dropped now, z exact */
            x->z0[i] = x->z[i];
            x->ep[i] = x->nep;
        }
        x->pos[i] = -1;
    }
    free(in);
    x->all = 0;
    x->nout = 0;
    x->zc = x->zbuf;
    x->ncols = nc;
    return km_kmatrix_restrict(x->K, x->cols, nc, err);
}

/* Makes z exact everywhere: z of a coefficient j outside the columns is z0[j] + K (c - c at
 * its epoch), the changed coefficients added in increasing order, epoch by epoch from the
 * last (the same bits whatever the cache). */
static int kernel_unshrink(void *ctx, const cd_coord *coord, km_error *err)
{
    kernel_ctx *x = ctx;
    if (x->all)
        return KM_OK;
    int64_t m = x->m, nep = x->nep;
    int64_t *ch = malloc((size_t)m * sizeof *ch), *grp = malloc((size_t)m * sizeof *grp);
    int64_t *start = calloc((size_t)nep + 2, sizeof *start);
    double *dc = malloc((size_t)m * sizeof *dc), *w = malloc((size_t)m * sizeof *w);
    double *v = malloc((size_t)m * sizeof *v);
    int rc = KM_OK;
    if (!ch || !grp || !start || !dc || !w || !v) {
        rc = km_error_nomem(err, "coordinate descent");
        goto done;
    }
    for (int64_t i = 0; i < m; i++)   /* the columns out, by epoch, increasing within */
        if (x->pos[i] < 0)
            start[x->ep[i] + 1]++;
    for (int64_t e = 1; e <= nep; e++)
        start[e + 1] += start[e];
    for (int64_t i = 0; i < m; i++)
        if (x->pos[i] < 0)
            grp[start[x->ep[i]]++] = i;
    for (int64_t e = nep; e >= 1; e--)   /* back to where each epoch began */
        start[e] = e > 1 ? start[e - 1] : 0;
    memcpy(w, x->prev, (size_t)m * sizeof *w);   /* c at the last epoch */
    for (int64_t e = nep; e >= 1 && rc == KM_OK; e--) {
        if (e < nep)   /* w: c at epoch e */
            for (int64_t q = x->logstart[e + 1]; q < (e + 1 < nep ? x->logstart[e + 2] : x->nlog); q++)
                w[x->logi[q]] = x->logv[q];
        int64_t g0 = start[e], g1 = start[e + 1];
        int64_t nch = 0;
        for (int64_t i = 0; i < m; i++)
            if (coord[i].c != w[i]) {
                ch[nch] = i;
                dc[nch++] = coord[i].c - w[i];
            }
        for (int64_t k = g0; k < g1; k++)
            v[k] = x->z0[grp[k]];
        rc = km_kmatrix_addmul(x->K, ch, dc, nch, grp + g0, g1 - g0, v + g0, err);
        for (int64_t k = g0; k < g1; k++)
            x->z0[grp[k]] = v[k];
    }
    x->nout = 0;
    for (int64_t i = 0; rc == KM_OK && i < m; i++)
        if (x->pos[i] < 0) {
            x->pos[i] = -2 - x->nout;
            x->zo[x->nout] = x->z0[i];
            x->out[x->nout++] = i;
        }
    if (rc == KM_OK)
        x->all = 1;
done:
    free(ch);
    free(grp);
    free(start);
    free(dc);
    free(w);
    free(v);
    return rc;
}

/* A sweep asks for each moving coefficient's row about once: tell the cache. */
static void kernel_sweep(void *ctx)
{
    km_kmatrix_pass(((kernel_ctx *)ctx)->K);
}

int km_cd_kernel(km_kmatrix *K, const double *y, const double *C, const km_cd_param *par,
                 double *c, double *z, km_cd_result *res, km_error *err)
{
    static const cd_ops ops = {kernel_dot, kernel_update, kernel_shrunk, kernel_unshrink,
                               kernel_sweep, NULL, NULL};
    int64_t m = km_kmatrix_size(K);
    size_t len = (size_t)(m > 0 ? m : 1);
    kernel_ctx x = {0};
    x.K = K;
    x.z = x.zc = z;
    x.m = x.ncols = m;
    x.all = 1;
    x.zbuf = malloc(len * sizeof(double));
    x.zo = malloc(len * sizeof(double));
    x.z0 = malloc(len * sizeof(double));
    x.prev = malloc(len * sizeof(double));
    x.ep = malloc(len * sizeof(int64_t));
    x.pos = malloc(len * sizeof(int64_t));
    x.cols = malloc(len * sizeof(int64_t));
    x.out = malloc(len * sizeof(int64_t));
    cd_coord *coord = aligned_alloc(64, len * sizeof *coord);
    int rc = KM_OK;
    if (!coord || !x.zbuf || !x.zo || !x.z0 || !x.prev || !x.ep || !x.pos || !x.cols || !x.out) {
        rc = km_error_nomem(err, "coordinate descent");
        goto done;
    }
    if (km_kmatrix_ncols(K) != m && (rc = km_kmatrix_restrict(K, NULL, 0, err)))
        goto done;
    for (int64_t i = 0; i < m; i++) {
        double kii = km_kmatrix_diag(K, i);
        if (!isfinite(kii)) {
            rc = km_error_set(err, KM_EINPUT, "the kernel value k(x, x) of row %lld is not "
                              "finite: the feature values are too large; scale them",
                              (long long)i + 1);
            goto done;
        }
        /* -1: fixed at 0 (indefinite) */
        coord[i] = (cd_coord){.alpha = kii > 0 ? 1 / kii : kii == 0 ? 0 : -1, .y = y[i],
                              .C = C[i]};
        z[i] = 0;
        x.pos[i] = i;
    }
    rc = cd_run(&ops, &x, m, coord, par, par->loss, res, err);
    if (rc == KM_OK) {
        kernel_gather_z(&x);
        for (int64_t i = 0; i < m; i++)
            c[i] = coord[i].c;
    }
    if (x.zc != z) {   /* leave K whole */
        km_error e2;
        int rc2 = km_kmatrix_restrict(K, NULL, 0, rc ? &e2 : err);
        rc = rc ? rc : rc2;
    }
done:
    free(coord);
    free(x.zbuf);
    free(x.zo);
    free(x.z0);
    free(x.prev);
    free(x.ep);
    free(x.logi);
    free(x.logv);
    free(x.logstart);
    free(x.pos);
    free(x.cols);
    free(x.out);
    return rc;
}

void km_cd_gap_terms(km_loss loss, double eps, const double *y, const double *C,
                     const double *c, const double *z, int64_t lo, int64_t hi, double out[2])
{
    double F = 0, G = 0;
    for (int64_t i = lo; i < hi; i++) {
        double Li = C[i] * km_loss_value(loss, y[i], z[i], eps), cz = c[i] * z[i];
        F += Li + cz / 2;
        G += Li + km_loss_conj(loss, y[i], c[i], C[i], eps) + cz;   /* Fenchel-Young, >= 0 */
    }
    out[0] += F;
    out[1] += G;
}

double km_cd_relative_gap(km_loss loss, double eps, const double *y, const double *C,
                          const double *c, const double *z, int64_t m, double *primal)
{
    double F = 0, G = 0;
    for (int64_t b = 0; b < m; b += KM_GAP_BLOCK) {
        double part[2] = {0, 0};
        km_cd_gap_terms(loss, eps, y, C, c, z, b, b + KM_GAP_BLOCK < m ? b + KM_GAP_BLOCK : m,
                        part);
        F += part[0];
        G += part[1];
    }
    if (primal)
        *primal = F;
    if (!isfinite(F) || !isfinite(G))   /* overflow or NaN: no certificate */
        return NAN;
    return F > 0 ? (G > 0 ? G : 0) / F : 0;
}

/* Largest |eigenvalue| of K by power iteration (for alpha = 1/||K||_2). */
static int spectral_norm(km_kmatrix *K, int threads, double *out, km_error *err)
{
    int64_t m = km_kmatrix_size(K);
    double *v = malloc((size_t)m * sizeof *v), *Kv = malloc((size_t)m * sizeof *Kv);
    if (!v || !Kv) {
        free(v);
        free(Kv);
        return km_error_nomem(err, "power iteration");
    }
    for (int64_t i = 0; i < m; i++)   /* a fixed start with no symmetry to hide behind */
        v[i] = 1 + 1.0 / (double)(i + 1);
    double lambda = 0, nv = cblas_dnrm2((int)m, v, 1);
    cblas_dscal((int)m, 1 / nv, v, 1);
    int rc = KM_OK;
    for (int it = 0; it < 300; it++) {
        if ((rc = km_kmatrix_matvec(K, v, Kv, threads, err)))
            break;
        double nk = cblas_dnrm2((int)m, Kv, 1);
        if (nk == 0)
            break;
        double prev = lambda;
        lambda = nk;
        for (int64_t i = 0; i < m; i++)
            v[i] = Kv[i] / nk;
        if (it > 2 && fabs(lambda - prev) <= 1e-6 * lambda)
            break;
    }
    free(v);
    free(Kv);
    *out = lambda;
    return rc;
}

int km_fixedpoint(km_kmatrix *K, const double *y, const double *C, const km_cd_param *par,
                  km_alpha_rule rule, int threads, double *c, double *z, km_cd_result *res,
                  km_error *err)
{
    int64_t m = km_kmatrix_size(K);
    double scale = 0;   /* tr(K) or ||K||_2; alpha = 1/scale satisfies (2.11) */
    int rc = KM_OK;
    if (rule == KM_ALPHA_NORM2) {
        if ((rc = spectral_norm(K, threads, &scale, err)))
            return rc;
    } else {
        for (int64_t i = 0; i < m; i++)
            scale += fabs(km_kmatrix_diag(K, i));
    }
    double alpha = scale > 0 ? 1 / scale : 1;
    int gap_rule = par->stop != KM_STOP_STEP;
    double delta = par->delta > 0 ? par->delta
                   : gap_rule ? KM_CD_DEFAULT_GAP : KM_CD_DEFAULT_TOL * alpha;
    res->iter = 0;
    res->converged = 0;
    res->max_h = 0;
    res->delta = delta;
    for (int64_t i = 0; i < m; i++)
        c[i] = par->c_init ? par->c_init[i] : 0;   /* warm start */
    for (int64_t iter = 1; iter <= par->max_iter; iter++) {
        if ((rc = km_kmatrix_matvec(K, c, z, threads, err)))      /* step 1: z = K c */
            return rc;
        if (gap_rule && iter > 1 &&   /* z = Kc exact: the gap of c, at O(m) */
            km_cd_relative_gap(par->loss, par->eps, y, C, c, z, m, NULL) <= delta) {
            res->converged = 1;
            break;
        }
        double max_h = 0;
        for (int64_t i = 0; i < m; i++) {
            double v = alpha * z[i] - c[i], stuck;                  /* step 2 */
            double ci = km_loss_resolvent(par->loss, y[i], v, alpha, C[i], par->eps, &stuck);
            double h = fabs(ci - c[i]);                             /* step 3 */
            max_h = h > max_h ? h : max_h;
            c[i] = ci;
        }
        res->iter = iter;
        res->max_h = max_h;
        if (par->progress)
            par->progress(par->user, iter, max_h, m);
        if (!gap_rule && max_h < delta) {
            res->converged = 1;
            break;
        }
    }
    if (!res->converged || !gap_rule)
        rc = km_kmatrix_matvec(K, c, z, threads, err);            /* z of the final c */
    if (rc == KM_OK)
        res->gap = km_cd_relative_gap(par->loss, par->eps, y, C, c, z, m, &res->primal);
    return rc;
}
