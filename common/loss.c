/* loss.c - see loss.h. */
#include "loss.h"

#include <string.h>

static const char *const names[KM_LOSS_COUNT] = {"l1svm", "l2svm", "rls", "rla", "svr", "logreg"};

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
    return loss == KM_LOSS_L1SVM || loss == KM_LOSS_L2SVM || loss == KM_LOSS_LOGISTIC;
}
