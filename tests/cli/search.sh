#!/bin/bash
# search.sh - train's cross-validation metrics (--metric), instance weights (--weights),
# warm starts (--init) and parameter search (-C, --grid).
. "$(dirname "$0")/lib.bash"
T="$BIN/train"
H="$DATA/heart_scale"

# ---- --metric ----
"$T" -q -v 5 --metric auc "$H" >"$TMP/auc.out"
check "--metric auc prints Cross Validation AUC" grep -Eq '^Cross Validation AUC = 0\.[0-9]+$' "$TMP/auc.out"
"$T" -q -v 5 --metric f1 "$H" >"$TMP/f1.out"
check "--metric f1 prints Cross Validation F1" grep -Eq '^Cross Validation F1 = 0\.[0-9]+$' "$TMP/f1.out"
"$T" -q -v 5 --metric accuracy "$H" >"$TMP/acc.out"
"$T" -q -v 5 "$H" >"$TMP/def.out"
check "--metric accuracy is the default" cmp -s "$TMP/acc.out" "$TMP/def.out"
# F1 of the larger label (+1) from the same folds' accuracy would need predictions: the
# independent count is in tests/unit/test_search.c; here the interface
expect_fail "--metric mse for a classifier" 1 'classifies' "$T" -v 5 --metric mse "$H"
expect_fail "--metric auc for regression" 1 'regression' "$T" -s rls -v 5 --metric auc "$H"
expect_fail "--metric without -v" 1 'needs -v' "$T" --metric auc "$H" "$TMP/x.model"
expect_fail "--metric unknown" 1 'unknown metric' "$T" -v 5 --metric recall "$H"
