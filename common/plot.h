/* plot.h - line figures as self-contained SVG files (no scripts, fonts or style sheets):
 * panels stacked vertically over one shared x axis, each with its own y axis. */
#ifndef KM_PLOT_H
#define KM_PLOT_H

#include "error.h"

/* One curve over the figure's x values: y[i] at x[i]. When lo and hi are both given (both
 * or neither), the band lo[i]..hi[i] (e.g. mean +- standard error) is drawn shaded. */
typedef struct km_plot_series {
    const char *label;    /* legend text (a legend appears when a panel has > 1 series) */
    const double *y;      /* n values */
    const double *lo;     /* n values or NULL */
    const double *hi;     /* n values or NULL */
} km_plot_series;

/* One panel: its own y axis, title, y label and series; a dashed vertical line at x =
 * mark_x (NaN: none), e.g. the selected parameter. */
typedef struct km_plot_panel {
    const char *title;    /* NULL: none */
    const char *ylabel;   /* NULL: none */
    int log_y;            /* nonzero: log10 y axis */
    const km_plot_series *series;
    int nseries;          /* >= 1 */
    double mark_x;
} km_plot_panel;

typedef struct km_plot {
    const char *title;    /* NULL: none */
    const char *xlabel;   /* NULL: none */
    int log_x;            /* nonzero: log10 x axis */
    const double *x;      /* n values, any order, finite (and > 0 on a log axis) */
    int n;                /* >= 1 */
    const km_plot_panel *panels;
    int npanels;          /* >= 1 */
} km_plot;

/*
 * Writes the figure to path atomically (temporary file in the same directory, fsync,
 * rename; the file gets mode 0666 less the umask, as fopen would give). Rules:
 *  - Points are drawn in increasing x (ties in input order), joined by lines, with a
 *    marker at each point. A y value is drawn when finite (and > 0 on a log axis); any
 *    other value is a gap that splits the line. A band is drawn at i when lo[i] and hi[i]
 *    are finite (and hi[i] > 0 on a log axis, where lo[i] <= 0 is drawn at the axis
 *    bottom); elsewhere it has a gap too.
 *  - Axes cover the drawn values (and mark_x), widened to whole tick steps. Linear: the
 *    smallest step 1, 2 or 5 times a power of ten that needs at most 8 ticks on the x
 *    axis (6 on a y axis), labelled like "0.25" (like "2.5e-8" below 1e-5 steps or from
 *    1e7 up). Log: whole decades, labelled 10^k at every decade, or every 2, 5, 10, 20,
 *    ... decades when there would be more than 15 labels on the x axis (8 on a y axis).
 *    A single value v gets the linear range v -+ |v|/10 (-1..1 for 0), or the decades
 *    around it. A panel with nothing to draw gets the range 0..1 (1..10 when
 *    logarithmic) and the words "no data".
 *  - Text is XML-escaped; control characters and bytes that are not UTF-8 become U+FFFD.
 *    Coordinates have two decimals and numbers do not depend on the locale: the same
 *    figure gives the same bytes.
 *  - Structure (a stable interface for tests and tools): each panel's plotting area is a
 *    <rect class="frame">; series S of panel P (both from 0) is a <g id="pPsS"> holding its
 *    band as one <path class="band"> (when drawn), its line as one <path class="line">
 *    whose d is "M x y" then "L x y" per point, with a new M after each gap (omitted when
 *    no point is drawn), and one marker per drawn point.
 * Errors: KM_EUSAGE for an invalid figure (n, npanels or nseries < 1, a missing array,
 * only one of lo and hi, an x or mark_x that is not finite or not > 0 on a log axis,
 * values too far apart to plot); KM_EINPUT when the file cannot be written (no file is
 * left behind); KM_EINTERNAL when out of memory.
 */
int km_plot_svg(const km_plot *p, const char *path, km_error *err);

#endif
