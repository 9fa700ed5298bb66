/* okl_figure.c - draws the figures of the OKL reproduction (seed 001, Figures 1 and 2) from
 * the tables that bench/okl/experiment{1,2}.sh write: panels over one x column, drawn by
 * km_plot_svg (common/plot.h).
 *
 *   okl_figure [options] -P PANEL [-P PANEL ...] TABLE OUT.svg
 *
 * TABLE: tab-separated, a header line of column names, then one row per x value; a cell
 * that is empty, "-", "n/a" or "nan" is a gap. PANEL: "TITLE;YLABEL;lin|log;SERIES,...[;NOTE]"
 * with SERIES = COL[/LO/HI][=LABEL][{STYLE}]: the column COL drawn as a line (LO and HI: a
 * shaded band between those columns), labelled LABEL (default: COL), styled by the words of
 * STYLE. A label keeps one colour in every panel (the next palette colour at its first
 * appearance, unless STYLE says color=N), so a colour means one thing in the figure.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plot.h"

#define MAX_PANELS 8
#define MAX_SERIES 8

static const char usage_text[] =
    "Usage: okl_figure [options] -P PANEL [-P PANEL ...] TABLE OUT.svg\n"
    "Draws panels over one x column of TABLE (tab-separated, header line of column names;\n"
    "empty, '-', 'n/a' or 'nan' cells are gaps) as a self-contained SVG (km_plot_svg).\n"
    "  -P PANEL     \"TITLE;YLABEL;lin|log;SERIES,SERIES,...[;NOTE]\", at most 8 panels of\n"
    "               8 series; NOTE: grey text under the panel's legend ('\\n': new line)\n"
    "               SERIES = COL[/LO/HI][=LABEL][{STYLE}]: LO, HI: columns of a shaded band;\n"
    "               STYLE: words among solid dashed dotted dashdot (line), circle square\n"
    "               triangle diamond nomarker (marker), open (unfilled, larger markers),\n"
    "               join (a line across missing values), color=N (palette colour 1-10:\n"
    "               blue orange green red purple brown pink grey olive cyan). Without\n"
    "               color=N a label gets the next colour at its first appearance and keeps\n"
    "               it in every panel.\n"
    "  -x COL       the x column (default: the first)\n"
    "  --log-x      logarithmic x axis\n"
    "  --mark X     dashed vertical line at x = X in every panel\n"
    "  --mark-label T  the mark line's legend text (e.g. what was selected there)\n"
    "  --title T    figure title\n"
    "  --xlabel T   x axis label (default: the x column's name)\n"
    "  -h, --help   this text\n";

typedef struct table {
    int ncol, nrow;
    char **name;     /* ncol */
    double *v;       /* nrow x ncol, row-major */
} table;

/* Splits line (modified in place) at tabs into at most max fields; returns their count. */
static int split_tabs(char *line, char **f, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = 0;
    for (char *s = line;; ) {
        if (n == max)
            return max + 1;
        f[n++] = s;
        char *t = strchr(s, '\t');
        if (!t)
            return n;
        *t = 0;
        s = t + 1;
    }
}

static double cell_value(const char *s, const char *path, int line, const char *col)
{
    if (!*s || !strcmp(s, "-") || !strcmp(s, "n/a") || !strcmp(s, "nan") || !strcmp(s, "NaN"))
        return NAN;
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end)
        km_cli_die(2, "%s:%d: column %s: '%s' is not a number", path, line, col, s);
    return v;
}

static void table_read(const char *path, table *T)
{
    FILE *f = fopen(path, "r");
    if (!f)
        km_cli_die(2, "cannot open %s", path);
    char *line = NULL, *field[1024];
    size_t cap = 0;
    int lineno = 0, cap_rows = 0;
    memset(T, 0, sizeof *T);
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        if (line[strspn(line, " \t\r\n")] == 0)
            continue;
        int n = split_tabs(line, field, 1024);
        if (!T->name) {
            if (n > 1024)
                km_cli_die(2, "%s:%d: more than 1024 columns", path, lineno);
            T->ncol = n;
            T->name = malloc(n * sizeof *T->name);
            if (!T->name)
                km_cli_die(3, "out of memory");
            for (int j = 0; j < n; j++)
                if (!(T->name[j] = strdup(field[j])))
                    km_cli_die(3, "out of memory");
            continue;
        }
        if (n != T->ncol)
            km_cli_die(2, "%s:%d: %d fields, the header has %d", path, lineno, n, T->ncol);
        if (T->nrow == cap_rows) {
            cap_rows = cap_rows ? 2 * cap_rows : 64;
            T->v = realloc(T->v, (size_t)cap_rows * T->ncol * sizeof *T->v);
            if (!T->v)
                km_cli_die(3, "out of memory");
        }
        for (int j = 0; j < n; j++)
            T->v[(size_t)T->nrow * T->ncol + j] = cell_value(field[j], path, lineno, T->name[j]);
        T->nrow++;
    }
    free(line);
    fclose(f);
    if (!T->name || T->nrow == 0)
        km_cli_die(2, "%s: no header or no rows", path);
}

/* Column j of T as a new array. */
static double *column(const table *T, const char *name)
{
    for (int j = 0; j < T->ncol; j++)
        if (!strcmp(T->name[j], name)) {
            double *c = malloc((size_t)T->nrow * sizeof *c);
            if (!c)
                km_cli_die(3, "out of memory");
            for (int i = 0; i < T->nrow; i++)
                c[i] = T->v[(size_t)i * T->ncol + j];
            return c;
        }
    km_cli_die(2, "no column '%s' in the table", name);
}

/* Replaces each backslash-n in s (in place) by a new line; returns s. */
static char *unescape(char *s)
{
    char *w = s;
    for (const char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] == 'n') {
            *w++ = '\n';
            r++;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
    return s;
}

/* Labels seen so far and their colours (1-based palette indexes), over all panels. */
typedef struct colors {
    const char *label[MAX_PANELS * MAX_SERIES];
    int color[MAX_PANELS * MAX_SERIES];
    int n, next;
} colors;

static int color_of(colors *C, const char *label, int want)
{
    for (int k = 0; k < C->n; k++)
        if (!strcmp(C->label[k], label)) {
            if (want && want != C->color[k])
                km_cli_die(1, "-P: '%s' has color=%d here and %d before: one colour per "
                           "label", label, want, C->color[k]);
            return C->color[k];
        }
    int c = want;
    for (int k = 0; k < C->n && want; k++)
        if ((C->color[k] - 1) % 10 == (want - 1) % 10)
            km_cli_die(1, "-P: color=%d for '%s' is already the colour of '%s': one meaning "
                       "per colour (give the labels without color=N, or in order)", want, label,
                       C->label[k]);
    if (!c) {   /* the next colour no label has yet */
        for (int used = 1; used;) {
            c = ++C->next;
            used = 0;
            for (int k = 0; k < C->n; k++)
                used |= (C->color[k] - 1) % 10 == (c - 1) % 10;
            if (C->next > 10)
                break;
        }
    }
    C->label[C->n] = label;
    C->color[C->n++] = c;
    return c;
}

/* Applies the words of STYLE (modified in place) to the style S of a series. */
static void parse_style(char *style, km_plot_style *S)
{
    static const char *const dash[] = {"solid", "dashed", "dotted", "dashdot"};
    static const char *const mark[] = {"circle", "square", "triangle", "diamond", "nomarker"};
    for (char *w = strtok(style, " "); w; w = strtok(NULL, " ")) {
        int done = 0;
        for (int k = 0; k < 4 && !done; k++)
            if (!strcmp(w, dash[k]))
                S->dash = k, done = 1;
        for (int k = 0; k < 5 && !done; k++)
            if (!strcmp(w, mark[k]))
                S->marker = KM_PLOT_CIRCLE + k, done = 1;
        if (done)
            continue;
        if (!strcmp(w, "open"))
            S->open = 1;
        else if (!strcmp(w, "join"))
            S->join = 1;
        else if (!strncmp(w, "color=", 6)) {
            char *end;
            long c = strtol(w + 6, &end, 10);
            if (end == w + 6 || *end || c < 1 || c > 10)
                km_cli_die(1, "-P: color=N takes N from 1 to 10, not '%s'", w + 6);
            S->color = (int)c;
        } else
            km_cli_die(1, "-P: unknown style word '%s' (see okl_figure -h)", w);
    }
}

/* Parses one -P spec (modified in place) into panel P with series S[MAX_SERIES], its style
 * PS with the series' styles ST[MAX_SERIES]. */
static void parse_panel(char *spec, const table *T, km_plot_panel *P, km_plot_series *S,
                        km_plot_panel_style *PS, km_plot_style *ST, double mark,
                        const char *mark_label, colors *C)
{
    char *title = spec, *ylabel = strchr(title, ';');
    char *scale = ylabel ? strchr(ylabel + 1, ';') : NULL;
    char *list = scale ? strchr(scale + 1, ';') : NULL;
    if (!list)
        km_cli_die(1, "-P: expected \"TITLE;YLABEL;lin|log;SERIES,...[;NOTE]\", not '%s'",
                   spec);
    *ylabel++ = 0;
    *scale++ = 0;
    *list++ = 0;
    char *note = strchr(list, ';');
    if (note)
        *note++ = 0;
    if (strcmp(scale, "lin") && strcmp(scale, "log"))
        km_cli_die(1, "-P: the scale is lin or log, not '%s'", scale);
    int ns = 0;
    char *save = NULL;
    for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        if (ns == MAX_SERIES)
            km_cli_die(1, "-P: more than %d series", MAX_SERIES);
        memset(&S[ns], 0, sizeof S[ns]);
        memset(&ST[ns], 0, sizeof ST[ns]);
        size_t len = strlen(s);
        if (len && s[len - 1] == '}') {
            char *open = strrchr(s, '{');
            if (!open)
                km_cli_die(1, "-P: '}' without '{' in '%s'", s);
            s[len - 1] = 0;
            *open = 0;
            parse_style(open + 1, &ST[ns]);
        }
        char *label = strchr(s, '=');
        if (label)
            *label++ = 0;
        char *lo = strchr(s, '/'), *hi = lo ? strchr(lo + 1, '/') : NULL;
        if (lo && !hi)
            km_cli_die(1, "-P: a band needs COL/LO/HI, not '%s'", s);
        if (lo) {
            *lo++ = 0;
            *hi++ = 0;
        }
        S[ns].label = label ? label : s;
        ST[ns].color = color_of(C, S[ns].label, ST[ns].color);
        S[ns].y = column(T, s);
        S[ns].lo = lo ? column(T, lo) : NULL;
        S[ns].hi = hi ? column(T, hi) : NULL;
        ns++;
    }
    if (ns == 0)
        km_cli_die(1, "-P: no series in panel '%s'", title);
    P->title = *title ? title : NULL;
    P->ylabel = *ylabel ? ylabel : NULL;
    P->log_y = !strcmp(scale, "log");
    P->series = S;
    P->nseries = ns;
    P->mark_x = mark;
    PS->series = ST;
    PS->mark_label = mark_label;
    PS->note = note && *note ? unescape(note) : NULL;
}

int main(int argc, char **argv)
{
    km_cli_init("okl_figure");
    static const struct option longopts[] = {
        {"log-x", no_argument, NULL, 'l'}, {"mark", required_argument, NULL, 'm'},
        {"mark-label", required_argument, NULL, 'L'},
        {"title", required_argument, NULL, 't'}, {"xlabel", required_argument, NULL, 'X'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    char *spec[MAX_PANELS];
    int np = 0, log_x = 0, c;
    const char *xcol = NULL, *title = NULL, *xlabel = NULL, *mark_label = NULL;
    double mark = NAN;
    while ((c = getopt_long(argc, argv, "P:x:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'P':
            if (np == MAX_PANELS)
                km_cli_die(1, "more than %d panels", MAX_PANELS);
            spec[np++] = optarg;
            break;
        case 'x': xcol = optarg; break;
        case 'l': log_x = 1; break;
        case 'm': mark = km_cli_number("--mark", optarg); break;
        case 'L': mark_label = optarg; break;
        case 't': title = optarg; break;
        case 'X': xlabel = optarg; break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: km_cli_die(1, "unknown option");
        }
    }
    if (argc - optind != 2 || np == 0)
        km_cli_die(1, "expected -P PANEL ..., TABLE and OUT.svg");
    table T;
    table_read(argv[optind], &T);
    if (!xcol)
        xcol = T.name[0];
    double *x = column(&T, xcol);
    for (int i = 0; i < T.nrow; i++)
        if (!isfinite(x[i]))
            km_cli_die(2, "%s: row %d: x (%s) is missing", argv[optind], i + 1, xcol);
    km_plot_panel P[MAX_PANELS];
    km_plot_panel_style PS[MAX_PANELS];
    static km_plot_series S[MAX_PANELS][MAX_SERIES];
    static km_plot_style ST[MAX_PANELS][MAX_SERIES];
    static colors C;
    for (int k = 0; k < np; k++)
        parse_panel(spec[k], &T, &P[k], S[k], &PS[k], ST[k], mark, mark_label, &C);
    km_plot fig = {title, xlabel ? xlabel : xcol, log_x, x, T.nrow, P, np};
    km_error err = {0};
    if (km_plot_svg_styled(&fig, PS, argv[optind + 1], &err))
        km_cli_die(err.code, "%s", err.msg);
    for (int k = 0; k < np; k++)   /* the columns, the table (LeakSanitizer runs it too) */
        for (int q = 0; q < P[k].nseries; q++) {
            free((void *)S[k][q].y);
            free((void *)S[k][q].lo);
            free((void *)S[k][q].hi);
        }
    free(x);
    for (int j = 0; j < T.ncol; j++)
        free(T.name[j]);
    free(T.name);
    free(T.v);
    return 0;
}
