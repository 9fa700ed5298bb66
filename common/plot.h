/* plot.h - line figures as self-contained SVG files (no scripts, fonts or style sheets):
 * panels stacked vertically over one shared x axis, each with its own y axis. */
#ifndef KM_PLOT_H
#define KM_PLOT_H

#include "error.h"

/* Marker shapes and dash patterns of a series (km_plot_style.marker, .dash). */
enum km_plot_marker {
    KM_PLOT_MARKER_AUTO = 0,   /* by the series' position in its panel: circle, square, ... */
    KM_PLOT_CIRCLE,
    KM_PLOT_SQUARE,
    KM_PLOT_TRIANGLE,
    KM_PLOT_DIAMOND,
    KM_PLOT_NO_MARKER          /* the line alone */
};
enum km_plot_dash {
    KM_PLOT_SOLID = 0,
    KM_PLOT_DASHED,            /* stroke-dasharray="7 4" */
    KM_PLOT_DOTTED,            /* "1.5 3.5", round caps */
    KM_PLOT_DASHDOT            /* "8 3 2 3" */
};

/* One curve over the figure's x values: y[i] at x[i]. When lo and hi are both given (both
 * or neither), the band lo[i]..hi[i] (e.g. mean +- standard error) is drawn shaded. */
typedef struct km_plot_series {
    const char *label;    /* legend text */
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

/* How a series is drawn (km_plot_svg_styled). All 0: a solid line, the colour and marker of
 * the series' position in its panel (what km_plot_svg draws). Give color to keep one colour
 * per meaning across panels, and a dash pattern and open markers to keep a curve visible
 * where it lies on another one: series are drawn in order, later ones on top; open markers
 * are larger and unfilled, so a filled marker under them still shows. */
typedef struct km_plot_style {
    int color;            /* 0: by position (palette colour s of series s); k >= 1: palette
                             colour k - 1 (of 10: blue, orange, green, red, purple, brown,
                             pink, grey, olive, cyan; wraps around) */
    int marker;           /* enum km_plot_marker */
    int open;             /* nonzero: open (unfilled, larger) markers */
    int dash;             /* enum km_plot_dash */
    int join;             /* nonzero: a missing value does not break the line, which joins
                             the drawn points on either side (for a series measured at a
                             few of the x values only) */
} km_plot_style;

/* What a panel adds to km_plot_panel (km_plot_svg_styled). */
typedef struct km_plot_panel_style {
    const km_plot_style *series;  /* nseries styles, or NULL: all 0 */
    const char *mark_label;       /* legend text of the mark line; NULL: not in the legend */
    const char *note;             /* NULL, or grey text under the legend, wrapped to its
                                     width ('\n' breaks a line) */
} km_plot_panel_style;

/*
 * Writes the figure to path atomically (temporary file in the same directory, fsync,
 * rename; the file gets mode 0666 less the umask, as fopen would give). Rules:
 *  - Points are drawn in increasing x (ties in input order), joined by lines, with a
 *    marker at each point (none with KM_PLOT_NO_MARKER). A y value is drawn when finite
 *    (and > 0 on a log axis); any other value is a gap that splits the line (unless the
 *    series is joined). A band is drawn at i when lo[i] and hi[i]
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
 *  - A legend, right of the plotting area, shows every series and the mark line (when it
 *    has a mark_label) with its colour, dash pattern, marker and band (a shaded box). It is
 *    drawn when the panel has two or more such entries, or a note (a lone series is named
 *    by the panel's title and y label).
 *  - Structure (a stable interface for tests and tools): each panel's plotting area is a
 *    <rect class="frame">; series S of panel P (both from 0) is a <g id="pPsS"> holding its
 *    band as one <path class="band"> (when drawn), its line as one <path class="line">
 *    whose d is "M x y" then "L x y" per point, with a new M after each gap (omitted when
 *    no point is drawn; a joined series has no gaps), and one marker per drawn point. A
 *    dashed line has a stroke-dasharray attribute; the legend is a <g class="legend"> with
 *    one <g class="key"> per entry (line, marker, text) and the note as <text class="note">
 *    lines; the mark line is a <line class="mark">.
 * Errors: KM_EUSAGE for an invalid figure (n, npanels or nseries < 1, a missing array,
 * only one of lo and hi, an x or mark_x that is not finite or not > 0 on a log axis,
 * values too far apart to plot); KM_EINPUT when the file cannot be written (no file is left behind); KM_EINTERNAL when
 * out of memory.
 */
int km_plot_svg(const km_plot *p, const char *path, km_error *err);

/* km_plot_svg with styles: style[k] (npanels of them; NULL: none) for panel k. Also
 * KM_EUSAGE for a color < 0 or a marker or dash outside its enum. km_plot_svg(p, path, err)
 * is km_plot_svg_styled(p, NULL, path, err). */
int km_plot_svg_styled(const km_plot *p, const km_plot_panel_style *style, const char *path,
                       km_error *err);

/* A heat map with contour lines: values z over a grid of x (columns) and y (rows), e.g. a
 * cross-validation score over log2 C and log2 gamma (grid.py's contour plot). */
typedef struct km_heatmap {
    const char *title, *xlabel, *ylabel;   /* NULL: none */
    const char *zlabel;                    /* the colour bar's name; NULL: none */
    const double *x;                       /* nx increasing finite column positions */
    int nx;
    const double *y;                       /* ny increasing finite row positions */
    int ny;
    const double *z;                       /* nx * ny values, z[j * nx + i] at (x[i], y[j]);
                                              not finite: an empty (grey) cell */
    int best;                              /* index into z of a cell to ring, or -1 */
    int nlevels;                           /* contour lines at this many levels evenly
                                              between min z and max z (0: none) */
} km_heatmap;

/*
 * Writes the heat map to path atomically (as km_plot_svg). Each value is a cell (<rect
 * class="cell">, data-i, data-j its column and row) filled by its value on a dark-blue to
 * yellow scale (viridis-like; min z darkest), labelled with its value to 4 digits when the
 * grid has at most 400 cells; ticks at every x and y (at most 12 labels an axis); a colour
 * bar with min and max; contour lines (<path class="contour">, marching squares on the cell
 * centres, linear interpolation, one path a level) and a ring (<circle class="best">) on
 * cell best. Numbers do not depend on the locale. KM_EUSAGE for nx or ny < 1, a missing or
 * unordered axis, best out of range or nlevels outside [0, 50]; KM_EINPUT when the file
 * cannot be written; KM_EINTERNAL when out of memory.
 */
int km_plot_heatmap_svg(const km_heatmap *h, const char *path, km_error *err);

#endif
