/* face.c - the pieces of the duals of Table 2.1 and the dense helpers of the subspace step
 * (the step itself: cd.c, linear_face_step). */
#include "face.h"

#include <math.h>

typedef struct piece {
    double lo, hi, a, d;   /* phi(t) = a t + d t^2/2 + const on [lo, hi] */
} piece;

int km_face_loss(km_loss loss)
{
    switch (loss) {
    case KM_LOSS_L1SVM:
    case KM_LOSS_L2SVM:
    case KM_LOSS_RLS:
    case KM_LOSS_RLA:
    case KM_LOSS_SVR:
        return 1;
    default:
        return 0;
    }
}

/* The pieces of phi for a loss (face.h), in increasing order; their number (0: unknown). */
static int pieces(km_loss loss, double y, double C, double eps, piece pc[2])
{
    switch (loss) {
    case KM_LOSS_L1SVM:   /* -y c on y c in [0, C]: c between 0 and y C (the resolvent's) */
        pc[0] = (piece){y > 0 ? 0 : y * C, y > 0 ? y * C : 0, -y, 0};
        return 1;
    case KM_LOSS_L2SVM:   /* -y c + c^2/(4C) on y c >= 0 */
        pc[0] = (piece){y < 0 ? -INFINITY : 0, y > 0 ? INFINITY : 0, -y, 1 / (2 * C)};
        return 1;
    case KM_LOSS_RLS:     /* -y c + c^2/(2C) */
        pc[0] = (piece){-INFINITY, INFINITY, -y, 1 / C};
        return 1;
    case KM_LOSS_RLA:     /* -y c on [-C, C] */
        pc[0] = (piece){-C, C, -y, 0};
        return 1;
    case KM_LOSS_SVR:     /* -y c + eps |c| on [-C, C]: a kink at 0 unless eps = 0 */
        if (eps == 0) {
            pc[0] = (piece){-C, C, -y, 0};
            return 1;
        }
        pc[0] = (piece){-C, 0, -y - eps, 0};
        pc[1] = (piece){0, C, -y + eps, 0};
        return 2;
    default:
        return 0;
    }
}

int km_face_piece(km_loss loss, double y, double C, double eps, double c, double z,
                  double *lo, double *hi, double *a, double *d)
{
    piece pc[2];
    int np = pieces(loss, y, C, eps, pc), right = -1, left = -1, k = -1;
    *lo = *hi = c;
    *a = *d = 0;
    for (int j = 0; j < np; j++) {
        if (pc[j].lo < c && c < pc[j].hi) {   /* inside a piece */
            k = j;
            break;
        }
        if (c == pc[j].lo && c < pc[j].hi)
            right = j;
        if (c == pc[j].hi && pc[j].lo < c)
            left = j;
    }
    if (k < 0 && right >= 0 && z + pc[right].a + pc[right].d * c < 0)   /* descends up */
        k = right;
    else if (k < 0 && left >= 0 && z + pc[left].a + pc[left].d * c > 0)  /* descends down */
        k = left;
    if (k < 0)
        return 0;
    *lo = pc[k].lo;
    *hi = pc[k].hi;
    *a = pc[k].a;
    *d = pc[k].d;
    return 1;
}

int km_face_chol_downdate(double *L, int n, double *x)
{
    for (int k = 0; k < n; k++) {
        double lkk = L[k * n + k], r2 = lkk * lkk - x[k] * x[k];
        if (!(r2 > 1e-14 * lkk * lkk))
            return -1;
        double r = sqrt(r2), cs = r / lkk, sn = x[k] / lkk;
        L[k * n + k] = r;
        for (int i = k + 1; i < n; i++) {
            L[i * n + k] = (L[i * n + k] - sn * x[i]) / cs;
            x[i] = cs * x[i] - sn * L[i * n + k];
        }
    }
    return 0;
}
