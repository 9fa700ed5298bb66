# bench/rls2/glmnet.R - times R's glmnet lasso path (Debian r-cran-glmnet) on an svmlight
# regression file, for bench/rls2/glmnet.sh.
#
#   Rscript bench/rls2/glmnet.R FILE NLAMBDA REPEAT [FORCE]
#
# Reads FILE (plain svmlight text) into a dense matrix (bench/rls2/svmlight.R), then calls
#   glmnet(x, y, family = "gaussian", nlambda = NLAMBDA)
# REPEAT times with glmnet's defaults otherwise (alpha = 1, standardize = TRUE, intercept =
# TRUE, thresh = 1e-7, lambda.min.ratio = 0.01 when rows < columns). glmnet stops its path
# early when the deviance explained passes 0.999 or stops changing; with FORCE = 1 that
# rule is switched off (glmnet.control(fdev = 0, devmax = 1)) so that all NLAMBDA lambdas
# are computed. The time is system.time() around the glmnet() call alone (reading the file
# and building the matrix are outside it). Prints key=value lines: the fastest and median
# elapsed and user+system seconds, the number of lambdas returned, the non-zero
# coefficients at the first and last lambda, then "path LAMBDA DF DEV_RATIO" lines.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 3)
    stop("usage: Rscript glmnet.R FILE NLAMBDA REPEAT [FORCE]")
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "svmlight.R"))
nlambda <- as.integer(args[2])
repeats <- as.integer(args[3])
force <- length(args) >= 4 && args[4] == "1"
suppressMessages(library(glmnet))
if (force)
    glmnet.control(fdev = 0, devmax = 1)

d <- read_svmlight(args[1])
cat(sprintf("rows=%d\ncolumns=%d\nglmnet_version=%s\nR_version=%s\nforce=%d\n", nrow(d$x),
            ncol(d$x), as.character(packageVersion("glmnet")), getRversion(), force))
elapsed <- numeric(repeats)
cpu <- numeric(repeats)
fit <- NULL
for (r in seq_len(repeats)) {
    tm <- system.time(fit <- glmnet(d$x, d$y, family = "gaussian", nlambda = nlambda))
    elapsed[r] <- tm[["elapsed"]]
    cpu[r] <- tm[["user.self"]] + tm[["sys.self"]]
}
cat(sprintf("elapsed_min=%.4f\nelapsed_median=%.4f\ncpu_min=%.4f\ncpu_median=%.4f\n",
            min(elapsed), median(elapsed), min(cpu), median(cpu)))
cat(sprintf("lambdas=%d\ndf_first=%d\ndf_last=%d\nlambda_first=%.6g\nlambda_last=%.6g\n",
            length(fit$lambda), fit$df[1], fit$df[length(fit$df)], fit$lambda[1],
            fit$lambda[length(fit$lambda)]))
cat(sprintf("dev_last=%.5f\n", fit$dev.ratio[length(fit$dev.ratio)]))
for (k in seq_along(fit$lambda))
    cat(sprintf("path %.6g %d %.5f\n", fit$lambda[k], fit$df[k], fit$dev.ratio[k]))
