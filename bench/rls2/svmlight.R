# bench/rls2/svmlight.R - read_svmlight(path, ncol = 0): an svmlight text file (plain) as
# list(x = dense matrix, y = labels); ncol = 0 means the largest index. Sourced by the R
# scripts of bench/rls2.
read_svmlight <- function(path, ncol = 0) {
    lines <- readLines(path)
    lines <- trimws(sub("#.*", "", lines))
    lines <- lines[nzchar(lines)]
    parts <- strsplit(lines, "[ \t]+")
    y <- as.numeric(vapply(parts, `[`, "", 1))
    pairs <- lapply(parts, function(p) p[-1][!startsWith(p[-1], "qid:")])
    idx <- lapply(pairs, function(p) as.integer(sub(":.*", "", p)))
    val <- lapply(pairs, function(p) as.numeric(sub("^[^:]*:", "", p)))
    n <- max(c(ncol, unlist(idx), 1L))
    x <- matrix(0, length(lines), n)
    for (i in seq_along(lines))
        if (length(idx[[i]]))
            x[i, idx[[i]]] <- val[[i]]
    list(x = x, y = y)
}
