/* loss.h - the losses of thesis Table 2.1, each given by its value and its resolvent -J_alpha. */
#ifndef KM_LOSS_H
#define KM_LOSS_H

#include <math.h>

/*
 * Objective of every solver: F = sum_i C_i L(y_i, z_i) + ||w||^2/2 (kernel form c'Kc/2),
 * z_i = w'x_i. The losses, with C as in LIBLINEAR where LIBLINEAR has the same loss:
 *   l1svm  hinge               L = max(0, 1 - y z)             (liblinear -s 3)
 *   l2svm  squared hinge       L = max(0, 1 - y z)^2           (liblinear -s 1; thesis L2-SVM
 *                                                                with its C doubled)
 *   rls    square              L = (y - z)^2 / 2               (thesis RLS)
 *   rla    absolute            L = |y - z|                     (thesis RLA)
 *   svr    eps-insensitive     L = max(0, |y - z| - eps)       (liblinear -s 13)
 *   logreg logistic            L = log(1 + exp(-y z))          (liblinear -s 0 and -s 7)
 */
typedef enum {
    KM_LOSS_L1SVM,
    KM_LOSS_L2SVM,
    KM_LOSS_RLS,
    KM_LOSS_RLA,
    KM_LOSS_SVR,
    KM_LOSS_LOGISTIC,
    KM_LOSS_COUNT
} km_loss;

/* The loss called name ("l1svm", ...), or -1 if there is none. */
int km_loss_from_name(const char *name);

/* The name of a loss ("l1svm", ...). */
const char *km_loss_name(km_loss loss);

/* 1 if the loss is for classification (labels are classes), 0 for regression. */
int km_loss_is_classification(km_loss loss);

static inline double km_pos(double x) { return x > 0 ? x : 0; }
static inline double km_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }

/* L(y, z) for a loss as defined above (eps is used by svr only); inline: the solvers' gap
 * terms call it once per coordinate visit. */
static inline double km_loss_value(km_loss loss, double y, double z, double eps)
{
    switch (loss) {
    case KM_LOSS_L1SVM:
        return km_pos(1 - y * z);
    case KM_LOSS_L2SVM: {
        double m = km_pos(1 - y * z);
        return m * m;
    }
    case KM_LOSS_RLS:
        return (y - z) * (y - z) / 2;
    case KM_LOSS_RLA:
        return fabs(y - z);
    case KM_LOSS_SVR:
        return km_pos(fabs(y - z) - eps);
    case KM_LOSS_LOGISTIC: {   /* log(1 + e^m), m = -y z, without overflow */
        double m = -y * z;
        return m > 0 ? m + log1p(exp(-m)) : log1p(exp(m));
    }
    default:
        return 0;
    }
}

/* x log x, 0 at 0 (the limit): the entropy terms of the logistic conjugate. */
static inline double km_xlogx(double x)
{
    return x > 0 ? x * log(x) : 0;
}

/*
 * The logistic resolvent (see km_loss_resolvent): with a = y c / C in (0, 1), c minimizes
 * the one-dimensional dual of coordinate descent, C times
 *   g(a) = C a^2/(2 alpha) + a y v/alpha + a log a + (1 - a) log(1 - a),
 * whose stationarity g'(a) = (C a + y v)/alpha + log(a/(1 - a)) = 0 is (2.8) written out
 * (-c = C dL(y, z), dL = -y/(1 + e^{y z}), z = (v + c)/alpha); no closed form. As
 * LIBLINEAR's dual solver (Yu, Huang, Lin 2011, Algorithm 4) we solve it by Newton on the
 * side nearer the root: t = a when g'(1/2) >= 0 (root a <= 1/2), else t = 1 - a, so that
 *   phi(t) = log(t/(1 - t)) + p + q t = 0,  t in (0, 1/2],  q = C/alpha,
 *   p = y v/alpha (t = a)  or  p = -(C + y v)/alpha (t = 1 - a).
 * phi is increasing and concave on (0, 1/2]: Newton from the left of the root climbs
 * monotonically onto it; from the right its first step lands left of the root, or at or
 * below 0. That one case (a root far below the start: LIBLINEAR shrinks t by 0.1 a step)
 * goes to Newton on u = log t instead, psi(u) = u - log(1 - e^u) + p + q e^u: increasing
 * and convex, so from u >= u* (where phi > 0) the iterates fall monotonically onto the
 * root in O(log) steps, never leaving the domain. Each t-step costs one log. The start is
 * the old coefficient's a = warm when it is in (0, 1) (coordinate descent passes it, see
 * km_loss_resolvent_warm: one step near convergence), else t = min(1/2, e^{-p})
 * (>= the root: log t + p <= phi). The solve ends after a step of relative size r <= tol,
 * which leaves an error of about r^2/2 relative: km_loss_resolvent takes tol = 1e-5 (an
 * error below 1e-10), coordinate descent 1e-3 (an inexact step while the coefficients
 * move, exact in the limit: the error r^2/2 shrinks with the steps r themselves, so the
 * fixed point and the gap certificate are unchanged; Yu, Huang and Lin also solve the
 * sub-problem loosely and tighten it as the solver converges). t > 0 always, so log(0)
 * never occurs; a root below
 * 1e-308 rounds a to 0 or 1, whose conjugate terms km_xlogx takes.
 */
static inline __attribute__((always_inline)) double
km_logistic_resolvent(double y, double v, double alpha, double C, double warm, double tol)
{
    double ys = y >= 0 ? 1 : -1, q = C / alpha, yv = ys * v / alpha;
    int upper = q / 2 + yv < 0;   /* g'(1/2) < 0: the root a > 1/2, t = 1 - a */
    double p = upper ? -(q + yv) : yv;
    if (p > 745)   /* the root t <= e^{-p} is below the smallest double: t = 0 */
        return upper ? ys * C : 0;
    double t = upper ? 1 - warm : warm;   /* the warm start, when it is on this side */
    if (!(warm > 0 && warm < 1 && t > 0 && t <= 0.5))
        t = -p > -0.69314718055994531 ? 0.5 : exp(-p);
    for (int it = 0; it < 50; it++) {
        /* phi/phi' = phi r/(1 + q r), r = t (1 - t): two divisions a step */
        double r = t * (1 - t), phi = log(t / (1 - t)) + p + q * t;
        double tn = t - phi * r / (1 + q * r);
        if (tn > 0.5)
            tn = 0.5;
        if (!(tn > 0)) {   /* overshot: Newton on u = log t from t (phi(t) > 0) */
            double u = log(t);
            for (int k = 0; k < 200; k++) {
                double e = exp(u);
                double step = (u - log1p(-e) + p + q * e) / (1 / (1 - e) + q * e);
                u -= step;
                if (fabs(step) <= 1e-7 * (1 + fabs(u)))   /* quadratic: the error ~ step^2 */
                    break;
            }
            t = exp(u);
            break;
        }
        /* quadratic convergence: after a step of relative size r the error is about
         * r^2/2 (phi''/(2 phi') ~ -1/(2t)): r <= tol leaves ~tol^2/2 t */
        int done = fabs(tn - t) <= tol * tn;
        t = tn;
        if (done)
            break;
    }
    double a = upper ? 1 - t : t;
    return ys * C * a;
}

/*
 * -J_alpha(v) of thesis Table 2.1 for the term C L(y, .): the coefficient c that satisfies
 * the optimality condition (2.8), c = -J_alpha(alpha z - c), given v = alpha z - c.
 * Coordinate descent (Algorithm 1/2) calls it with alpha = 1/k_ii, the fixed-point
 * iteration (2.10) with a global alpha.
 * *stuck is set to how far the argument lies inside a flat piece of the map (a bound
 * of c or the dead zone of svr), 0 on a sloped piece: shrinking uses it.
 * The printed table lost alpha in the rla and svr rows; they are derived here from
 * -c in C dL(y, z) with z = (v + c)/alpha and checked against direct solutions in tests.
 */
static inline double km_loss_resolvent(km_loss loss, double y, double v, double alpha,
                                       double C, double eps, double *stuck)
{
    double u, c;
    switch (loss) {
    case KM_LOSS_L1SVM:  /* y min(C, (alpha - y v)_+) */
        u = alpha - y * v;
        if (u <= 0) {
            *stuck = -u;
            return 0;
        }
        if (u >= C) {
            *stuck = u - C;
            return y * C;
        }
        *stuck = 0;
        return y * u;
    case KM_LOSS_L2SVM:  /* y (alpha - y v)_+ / (1 + alpha/(2C)): thesis row with C -> 2C */
        u = alpha - y * v;
        if (u <= 0) {
            *stuck = -u;
            return 0;
        }
        *stuck = 0;
        return y * u / (1 + alpha / (2 * C));
    case KM_LOSS_RLS:  /* (alpha y - v) / (1 + alpha/C) */
        *stuck = 0;
        return (alpha * y - v) / (1 + alpha / C);
    case KM_LOSS_RLA:  /* sign(alpha y - v) min(C, |alpha y - v|) */
        u = alpha * y - v;
        if (fabs(u) >= C) {
            *stuck = fabs(u) - C;
            return km_sign(u) * C;
        }
        *stuck = 0;
        return u;
    case KM_LOSS_LOGISTIC:  /* no flat piece; Newton on the 1-D dual (km_logistic_resolvent) */
        *stuck = 0;
        return km_logistic_resolvent(y, v, alpha, C, 0, 1e-5);
    case KM_LOSS_SVR:  /* sign(alpha y - v) min(C, (|alpha y - v| - alpha eps)_+) */
        u = alpha * y - v;
        c = fabs(u) - alpha * eps;
        if (c <= 0) {
            *stuck = -c;
            return 0;
        }
        if (c >= C) {
            *stuck = c - C;
            return km_sign(u) * C;
        }
        *stuck = 0;
        return km_sign(u) * c;
    default:
        *stuck = 0;
        return 0;
    }
}

/* km_loss_resolvent with the coefficient c0 it replaces as a hint: the logistic Newton
 * starts there (the same root, fewer steps); the closed forms ignore it. */
static inline __attribute__((always_inline)) double km_loss_resolvent_warm(km_loss loss, double y, double v, double alpha,
                                            double C, double eps, double c0, double *stuck)
{
    if (loss == KM_LOSS_LOGISTIC) {
        *stuck = 0;
        return km_logistic_resolvent(y, v, alpha, C, (y >= 0 ? c0 : -c0) / C, 1e-3);
    }
    return km_loss_resolvent(loss, y, v, alpha, C, eps, stuck);
}

/*
 * The minimizer of C L*(y, -c/C) over c: the coefficient of a row whose kernel row is zero
 * (k_ii = 0: an empty row under a dot-product kernel), where (2.8) reduces to c in
 * -C dL(y, 0) and the resolvent's limit as alpha -> inf. Its gap term is then 0.
 */
static inline double km_loss_dual_argmin(km_loss loss, double y, double C, double eps)
{
    switch (loss) {
    case KM_LOSS_L1SVM:
        return y * C;
    case KM_LOSS_L2SVM:   /* -y c + c^2/(4C) */
        return 2 * C * y;
    case KM_LOSS_RLS:     /* -y c + c^2/(2C) */
        return C * y;
    case KM_LOSS_RLA:     /* -y c on |c| <= C */
        return km_sign(y) * C;
    case KM_LOSS_SVR:     /* -y c + eps |c| on |c| <= C */
        return fabs(y) > eps ? km_sign(y) * C : 0;
    case KM_LOSS_LOGISTIC:   /* C (a log a + (1-a) log(1-a)), a = y c/C: a = 1/2 */
        return (y >= 0 ? 1 : -1) * C / 2;
    default:
        return 0;
    }
}

/*
 * C L*(y, -c/C): the conjugate term of the dual of (2.2),
 *   D(c) = -c'Kc/2 - sum_i C_i L*(y_i, -c_i/C_i),   L*(y, s) = sup_z (s z - L(y, z)),
 * for a coefficient c that the resolvent can return (c = -C dL: y c in [0, C] for l1svm,
 * y c >= 0 for l2svm, |c| <= C for rla and svr); +inf outside that set. In closed form:
 *   l1svm, rla  -y c          l2svm  -y c + c^2/(4C)
 *   rls         -y c + c^2/(2C)        svr    -y c + eps |c|
 *   logreg      C (a log a + (1 - a) log(1 - a)),  a = y c/C in [0, 1]  (0 log 0 = 0)
 * The duality gap P - D at z = Kc is the sum over i of
 *   C_i L(y_i, z_i) + C_i L*(y_i, -c_i/C_i) + c_i z_i >= 0   (Fenchel-Young),
 * 0 for every i exactly when c satisfies the optimality condition (2.8).
 */
static inline double km_loss_conj(km_loss loss, double y, double c, double C, double eps)
{
    double slack = 1e-12 * C;   /* rounding of c computed from C */
    switch (loss) {
    case KM_LOSS_L1SVM:
        return y * c >= -slack && y * c <= C + slack ? -y * c : INFINITY;
    case KM_LOSS_L2SVM:
        return y * c >= -slack ? -y * c + c * c / (4 * C) : INFINITY;
    case KM_LOSS_RLS:
        return -y * c + c * c / (2 * C);
    case KM_LOSS_RLA:
        return fabs(c) <= C + slack ? -y * c : INFINITY;
    case KM_LOSS_SVR:
        return fabs(c) <= C + slack ? -y * c + eps * fabs(c) : INFINITY;
    case KM_LOSS_LOGISTIC: {
        double a = (y >= 0 ? c : -c) / C;
        if (a < -1e-12 || a > 1 + 1e-12)
            return INFINITY;
        a = a < 0 ? 0 : a > 1 ? 1 : a;
        return C * (km_xlogx(a) + km_xlogx(1 - a));
    }
    default:
        return INFINITY;
    }
}

#endif
