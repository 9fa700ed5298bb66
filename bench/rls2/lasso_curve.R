# bench/rls2/lasso_curve.R - the Lasso learning curve of thesis Experiment 1 (Figure 4.1)
# with R's glmnet (Debian r-cran-glmnet), for bench/rls2/experiment1.sh.
#
#   Rscript bench/rls2/lasso_curve.R TRAIN TEST "N1 N2 ..." LO HI NL
#
# For each training-set size N: the lasso min ||y - Xw||^2/(2N) + lambda ||w||_1 on the
# first N rows of TRAIN, without intercept and without standardization (the model
# y = x1 + x2 + x3 + noise has neither), on NL lambdas log-spaced in [LO, HI], tolerance
# thresh = 1e-12; prints "N best_test_rmse lambda nonzero" (the lower bound of the test RMSE
# over the lambdas; NA when glmnet cannot fit, e.g. N = 1).
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 6)
    stop("usage: Rscript lasso_curve.R TRAIN TEST SIZES LO HI NL")
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "svmlight.R"))
suppressMessages(library(glmnet))
tr <- read_svmlight(args[1])
te <- read_svmlight(args[2], ncol(tr$x))
p <- max(ncol(tr$x), ncol(te$x))
tr <- read_svmlight(args[1], p)
sizes <- as.integer(strsplit(trimws(args[3]), "[ ,]+")[[1]])
lambda <- exp(seq(log(as.numeric(args[5])), log(as.numeric(args[4])),
                  length.out = as.integer(args[6])))
for (n in sizes) {
    res <- tryCatch({
        x <- tr$x[seq_len(n), , drop = FALSE]
        fit <- glmnet(x, tr$y[seq_len(n)], family = "gaussian", alpha = 1, lambda = lambda,
                      intercept = FALSE, standardize = FALSE, thresh = 1e-12,
                      maxit = 1e6)
        pred <- predict(fit, te$x)
        rmse <- sqrt(colMeans((pred - te$y)^2))
        k <- which.min(rmse)
        sprintf("%d %.6g %.6g %d", n, rmse[k], fit$lambda[k], fit$df[k])
    }, error = function(e) sprintf("%d NA NA NA", n))
    cat(res, "\n", sep = "")
}
