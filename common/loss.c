/* loss.c - see loss.h. */
#include "loss.h"

#include <string.h>

static const char *const names[KM_LOSS_COUNT] = {"l1svm", "l2svm", "rls", "rla", "svr"};

int km_loss_from_name(const char *name)
{
    for (int i = 0; i < KM_LOSS_COUNT; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

const char *km_loss_name(km_loss loss)
{
    return (unsigned)loss < KM_LOSS_COUNT ? names[loss] : "?";
}

int km_loss_is_classification(km_loss loss)
{
    return loss == KM_LOSS_L1SVM || loss == KM_LOSS_L2SVM;
}

double km_loss_value(km_loss loss, double y, double z, double eps)
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
    default:
        return 0;
    }
}
