/* test_plot.c - SVG figures: well-formed, one line per series with the right points in the
 * right places, documented ticks, escaping, gaps, degenerate data, errors, same bytes;
 * styles (colours kept across panels, dash patterns, open or no markers, joined lines) and
 * legends that name every series and the mark line. */
#include <dirent.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot.h"
#include "test.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0, k;
    char *s = malloc(cap);
    while (s && (k = fread(s + len, 1, cap - len - 1, f)) > 0) {
        len += k;
        if (cap - len < 2) {
            char *t = realloc(s, cap *= 2);
            if (!t)
                free(s);
            s = t;
        }
    }
    fclose(f);
    if (s)
        s[len] = '\0';
    return s;
}

static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == ':' || c == '_';
}

/* Length of a predefined entity reference at p ("&amp;" ...), or 0. */
static int entity_len(const char *p)
{
    static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    for (int k = 0; k < 5; k++)
        if (strncmp(p, ent[k], strlen(ent[k])) == 0)
            return (int)strlen(ent[k]);
    return 0;
}

/* 1 when s is one <svg> element (then whitespace) whose tags nest properly, whose
 * attributes are name="value" and whose text and values use only entity references for
 * '&', '<' and '>'. */
static int well_formed(const char *s)
{
    char stack[64][32];
    int depth = 0, roots = 0;
    const char *p = s;
    while (*p) {
        if (*p != '<') {
            if (*p == '>' || (depth == 0 && *p != '\n' && *p != ' '))
                return 0;
            if (*p == '&' && !entity_len(p))
                return 0;
            p++;
            continue;
        }
        int close = p[1] == '/';
        p += 1 + close;
        int n = 0;
        while (name_char(p[n]))
            n++;
        if (n == 0 || n >= 32)
            return 0;
        if (close) {
            if (depth == 0 || strncmp(stack[depth - 1], p, (size_t)n) != 0 ||
                stack[depth - 1][n] || p[n] != '>')
                return 0;
            p += n + 1;
            roots += --depth == 0;
            continue;
        }
        if (depth == 0 && (roots > 0 || n != 3 || strncmp(p, "svg", 3) != 0))
            return 0;
        if (depth == 64)
            return 0;
        memcpy(stack[depth], p, (size_t)n);
        stack[depth][n] = '\0';
        p += n;
        for (;;) {   /* attributes */
            if (*p == '>' || (p[0] == '/' && p[1] == '>'))
                break;
            if (*p != ' ')
                return 0;
            p++;
            int a = 0;
            while (name_char(p[a]))
                a++;
            if (a == 0 || p[a] != '=' || p[a + 1] != '"')
                return 0;
            for (p += a + 2; *p != '"'; p++) {
                if (!*p || *p == '<' || *p == '>' || (*p == '&' && !entity_len(p)))
                    return 0;
            }
            p++;
        }
        if (*p == '>') {
            depth++;
            p++;
        } else {
            p += 2;
            roots += depth == 0;
        }
    }
    return depth == 0 && roots == 1;
}

/* End (one past '>') of the element starting at tag. */
static const char *element_end(const char *tag)
{
    int depth = 0;
    for (const char *p = tag; (p = strchr(p, '<')) != NULL;) {
        const char *gt = strchr(p, '>');
        if (!gt)
            return NULL;
        if (p[1] == '/')
            depth--;
        else if (gt[-1] != '/')
            depth++;
        p = gt + 1;
        if (depth == 0)
            return p;
    }
    return NULL;
}

/* Number of occurrences of needle in s[0..len). */
static int count_in(const char *s, size_t len, const char *needle)
{
    int c = 0;
    size_t m = strlen(needle);
    for (const char *p = s; (p = strstr(p, needle)) != NULL && (size_t)(p - s) + m <= len; p++)
        c++;
    return c;
}

/* Value of attribute name in the tag starting at tag (NaN when absent). */
static double attr(const char *tag, const char *name)
{
    char key[40];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *gt = strchr(tag, '>'), *a = strstr(tag, key);
    return a && a < gt ? strtod(a + strlen(key), NULL) : NAN;
}

typedef struct pt {
    double x, y;
} pt;

/* Parses a d attribute starting at d: up to max vertices of M/L commands into v;
 * counts the M and Z commands. Returns the number of vertices, -1 on other syntax. */
static int parse_d(const char *d, pt *v, int max, int *nmove, int *nclose)
{
    int n = 0;
    *nmove = *nclose = 0;
    for (const char *p = d; *p != '"';) {
        char c = *p++;
        if (c == ' ')
            continue;
        if (c == 'Z') {
            ++*nclose;
            continue;
        }
        if ((c != 'M' && c != 'L') || n == max)
            return -1;
        *nmove += c == 'M';
        char *end;
        v[n].x = strtod(p, &end);
        if (end == p || *end != ' ')
            return -1;
        v[n].y = strtod(end + 1, &end);
        if (end == p)
            return -1;
        p = end;
        n++;
    }
    return n;
}

typedef struct series_out {
    int found;          /* the group exists */
    int npts, nmove;    /* line vertices and M commands (0 when no line) */
    pt p[64];
    int nmarkers;
    int nband, nband_z; /* band vertices and Z commands (0 when no band) */
    pt band[128];
} series_out;

/* Reads group p{panel}s{s} of doc. */
static series_out get_series(const char *doc, int panel, int s)
{
    series_out o;
    memset(&o, 0, sizeof o);
    char id[32];
    snprintf(id, sizeof id, "<g id=\"p%ds%d\"", panel, s);
    const char *g = strstr(doc, id), *end = g ? element_end(g) : NULL;
    if (!end)
        return o;
    o.found = 1;
    size_t len = (size_t)(end - g);
    const char *line = strstr(g, "<path class=\"line\""), *band = strstr(g, "<path class=\"band\"");
    if (line && line < end)
        o.npts = parse_d(strstr(line, " d=\"") + 4, o.p, 64, &o.nmove, &(int){0});
    if (band && band < end)
        o.nband = parse_d(strstr(band, " d=\"") + 4, o.band, 128, &(int){0}, &o.nband_z);
    o.nmarkers = count_in(g, len, "<circle") + count_in(g, len, "<rect") +
                 count_in(g, len, "<polygon");
    return o;
}

typedef struct box {
    double x, y, w, h;
} box;

/* The plotting area of panel k (w = 0 when missing). */
static box frame(const char *doc, int k)
{
    box b = {0, 0, 0, 0};
    const char *p = doc;
    for (int i = 0; p && i <= k; i++)
        if ((p = strstr(p, "<rect class=\"frame\"")) != NULL && i < k)
            p++;
    if (p)
        b = (box){attr(p, "x"), attr(p, "y"), attr(p, "width"), attr(p, "height")};
    return b;
}

/* Tick labels of class cls ("xtick", "ytick") in doc[from..to): texts and x or y. */
static int ticks(const char *from, const char *to, const char *cls, char text[][64],
                 double *pos, int max)
{
    char key[40];
    snprintf(key, sizeof key, "<text class=\"%s\"", cls);
    int n = 0;
    for (const char *p = from; (p = strstr(p, key)) != NULL && p < to && n < max; p++) {
        pos[n] = attr(p, cls[0] == 'x' ? "x" : "y");
        const char *a = strchr(p, '>') + 1, *b = strstr(a, "</text>");
        snprintf(text[n], 64, "%.*s", (int)(b - a), a);
        n++;
    }
    return n;
}

/* Start of panel k's group (or the end of doc). */
static const char *panel_at(const char *doc, int k)
{
    const char *p = doc;
    for (int i = 0; i <= k && p; i++)
        if ((p = strstr(p, "<g class=\"panel\">")) != NULL && i < k)
            p++;
    return p ? p : doc + strlen(doc);
}

static char exp_label[64];
static const char *pow_label(int k)
{
    snprintf(exp_label, sizeof exp_label, "10<tspan dy=\"-5\" font-size=\"9\">%d</tspan>", k);
    return exp_label;
}

/* Checks series (panel, s): its line has the drawable points of y (index order = x order
 * given by rank) at pixel positions affine in u(x) and v(y), v increasing upward, inside the
 * frame; one marker per point. */
static void check_series(const char *doc, int panel, int s, const double *ux, const double *y,
                         int n, int log_y, int want_moves, const char *what)
{
    series_out o = get_series(doc, panel, s);
    box f = frame(doc, panel);
    double u[64], v[64];
    int m = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(y[i]) && (!log_y || y[i] > 0)) {
            u[m] = ux[i];
            v[m++] = log_y ? log10(y[i]) : y[i];
        }
    CHECK(o.found && o.npts == m && o.nmarkers == m && o.nmove == want_moves,
          "%s: one line with %d points (got %d), %d markers, %d pieces", what, m, o.npts,
          o.nmarkers, o.nmove);
    if (o.npts != m || m < 2)
        return;
    int mono = 1, inside = 1, affine_x = 1, affine_y = 1, top = 1;
    int imax = 0, imin = 0;
    for (int j = 0; j < m; j++) {
        imax = v[j] > v[imax] ? j : imax;
        imin = v[j] < v[imin] ? j : imin;
    }
    for (int j = 0; j < m; j++) {
        mono &= j == 0 || o.p[j].x > o.p[j - 1].x;
        inside &= o.p[j].x >= f.x - 0.01 && o.p[j].x <= f.x + f.w + 0.01 &&
                  o.p[j].y >= f.y - 0.01 && o.p[j].y <= f.y + f.h + 0.01;
        double fxp = (o.p[j].x - o.p[0].x) / (o.p[m - 1].x - o.p[0].x);
        double fxd = (u[j] - u[0]) / (u[m - 1] - u[0]);
        affine_x &= fabs(fxp - fxd) < 1e-4;
        double fyp = (o.p[j].y - o.p[imax].y) / (o.p[imin].y - o.p[imax].y);
        double fyd = (v[imax] - v[j]) / (v[imax] - v[imin]);
        affine_y &= fabs(fyp - fyd) < 2e-4;
        top &= o.p[j].y >= o.p[imax].y;
    }
    CHECK(mono && inside, "%s: points increase in x and lie in the plotting area", what);
    CHECK(affine_x && affine_y && top, "%s: pixel x affine in the x scale, pixel y affine in "
          "the y scale with the largest y highest", what);
}

/* The text of attribute name in the tag starting at tag, into out ("" when absent). */
static void attr_text(const char *tag, const char *name, char *out, size_t size)
{
    char key[40];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *gt = strchr(tag, '>'), *a = strstr(tag, key);
    out[0] = '\0';
    if (a && a < gt) {
        a += strlen(key);
        const char *e = strchr(a, '"');
        snprintf(out, size, "%.*s", (int)(e - a), a);
    }
}

/* The stroke-dasharray of series (panel, s)'s line ("" when solid or missing). */
static void line_dash(const char *doc, int panel, int s, char *out, size_t size)
{
    char id[32];
    snprintf(id, sizeof id, "<g id=\"p%ds%d\"", panel, s);
    const char *g = strstr(doc, id), *end = g ? element_end(g) : NULL;
    const char *line = g ? strstr(g, "<path class=\"line\"") : NULL;
    out[0] = '\0';
    if (line && line < end)
        attr_text(line, "stroke-dasharray", out, size);
}

/* The legend of panel k: the start of its <g class="legend"> (NULL when none) and in
 * texts[] the texts of its keys; returns the number of keys. */
static int legend_keys(const char *doc, int k, char texts[][64], int max, const char **where)
{
    const char *from = panel_at(doc, k), *to = panel_at(doc, k + 1);
    const char *lg = strstr(from, "<g class=\"legend\">");
    *where = lg && lg < to ? lg : NULL;
    if (!*where)
        return 0;
    const char *end = element_end(lg);
    int n = 0;
    for (const char *p = lg; (p = strstr(p, "<g class=\"key\"")) != NULL && p < end && n < max;
         p++) {
        const char *t = strstr(p, "<text"), *a = strchr(t, '>') + 1, *b = strstr(a, "</text>");
        snprintf(texts[n++], 64, "%.*s", (int)(b - a), a);
    }
    return n;
}

static const char *gone_path(const char *dir)
{
    static char p[256];
    snprintf(p, sizeof p, "%s/never.svg", dir);
    return p;
}

int main(void)
{
    char dir[] = "/tmp/kmtk-plot-XXXXXX", path[256], path2[256];
    CHECK(mkdtemp(dir) != NULL, "temporary directory");
    snprintf(path, sizeof path, "%s/fig.svg", dir);
    snprintf(path2, sizeof path2, "%s/fig2.svg", dir);
    km_error err;

    /* The rls2-path figure: 13 lambdas 1e-6..1e6 given out of order; a metric with bands
     * and a second series, a log panel with a 0 (a gap there), a panel with a NaN. */
    enum { N = 13 };
    static const int rank[N] = {7, 0, 12, 3, 9, 1, 5, 11, 2, 10, 4, 8, 6};
    double x[N], ux[N], y0[N], lo0[N], hi0[N], y1[N], y2[N], y3[N];
    double sy0[N], sy1[N], sy2[N], sy3[N];   /* in x order */
    for (int j = 0; j < N; j++) {
        int k = rank[j];
        x[j] = pow(10, k - 6);
        y0[j] = (k - 2) * (k - 2) / 10.0 + 1;
        lo0[j] = y0[j] - 0.2;
        hi0[j] = y0[j] + 0.3;
        y1[j] = 12 - 0.5 * k;
        y2[j] = k == 3 ? 0 : pow(2, k);
        y3[j] = k == 6 ? NAN : 10 * k + 5;
        ux[k] = k - 6;
        sy0[k] = y0[j];
        sy1[k] = y1[j];
        sy2[k] = y2[j];
        sy3[k] = y3[j];
    }
    km_plot_series s0[2] = {{"test <1>", y0, lo0, hi0}, {"validation", y1, NULL, NULL}};
    km_plot_series s1 = {"kernels", y2, NULL, NULL}, s2 = {NULL, y3, NULL, NULL};
    km_plot_panel panels[3] = {
        {"Test & validation error", "MSE", 0, s0, 2, NAN},
        {"Selected kernels", "kernels", 1, &s1, 1, NAN},
        {"Iterations", "iterations", 0, &s2, 1, 1e-2},
    };
    km_plot fig = {"Errors <&> \"q\" 'a'", "lambda", 1, x, N, panels, 3};
    int rc = km_plot_svg(&fig, path, &err);
    CHECK(rc == KM_OK, "write a three-panel figure (%s)", rc ? err.msg : "");
    char *doc = slurp(path);
    CHECK(doc != NULL, "read the figure back");
    if (!doc)
        TEST_EXIT();
    size_t len = strlen(doc);
    CHECK(strncmp(doc, "<svg ", 5) == 0 && len > 7 && strcmp(doc + len - 7, "</svg>\n") == 0,
          "starts with <svg and ends with </svg>");
    CHECK(well_formed(doc), "tags balanced, attributes quoted, one <svg> root");
    CHECK(!strstr(doc, "<script") && !strstr(doc, "<style") && !strstr(doc, "href") &&
          !strstr(doc, "@import"), "self-contained: no script, style sheet or link");
    CHECK(strstr(doc, ">Errors &lt;&amp;&gt; &quot;q&quot; &apos;a&apos;</text>") &&
          strstr(doc, "<title>Errors &lt;&amp;&gt;") && !strstr(doc, "<&>") &&
          strstr(doc, ">test &lt;1&gt;</text>") && strstr(doc, ">Test &amp; validation"),
          "titles and labels XML-escaped");
    box f0 = frame(doc, 0), f1 = frame(doc, 1), f2 = frame(doc, 2);
    CHECK(f0.w > 0 && f1.w > 0 && f2.w > 0 &&
          count_in(doc, len, "<rect class=\"frame\"") == 3, "three plotting areas");
    CHECK(f0.x == f1.x && f1.x == f2.x && f0.w == f2.w && f0.y + f0.h < f1.y &&
          f1.y + f1.h < f2.y, "panels stacked vertically with one x extent");

    check_series(doc, 0, 0, ux, sy0, N, 0, 1, "metric (linear y)");
    check_series(doc, 0, 1, ux, sy1, N, 0, 1, "second metric series");
    check_series(doc, 1, 0, ux, sy2, N, 1, 2, "kernels (log y, 0 is a gap)");
    check_series(doc, 2, 0, ux, sy3, N, 0, 2, "iterations (NaN is a gap)");
    series_out o2 = get_series(doc, 2, 0);
    CHECK(o2.npts == 12 && o2.p[6].x > o2.p[5].x, "the NaN gap starts a new piece at the "
          "7th drawn point");

    /* x ticks: every decade 10^-6..10^6 under every panel, at the points' x */
    char text[40][64];
    double pos[40];
    int nx = ticks(panel_at(doc, 0), panel_at(doc, 1), "xtick", text, pos, 40);
    series_out o0 = get_series(doc, 0, 0);
    int at = nx == 13 && o0.npts == 13;
    for (int k = 0; at && k < 13; k++)
        at &= strcmp(text[k], pow_label(k - 6)) == 0 && fabs(pos[k] - o0.p[k].x) < 0.011;
    CHECK(at, "log x axis 1e-6..1e6: labels 10^-6 .. 10^6 at the points (%d labels)", nx);
    CHECK(ticks(doc, doc + len, "xtick", text, pos, 40) == 39, "x labels under each panel");
    CHECK(fabs(o0.p[0].x - f0.x) < 0.011 && fabs(o0.p[12].x - f0.x - f0.w) < 0.011,
          "x axis spans exactly the decades of the data");
    /* y ticks: linear 1-2-5 steps; log decades */
    int ny = ticks(panel_at(doc, 0), panel_at(doc, 1), "ytick", text, pos, 40);
    CHECK(ny == 4 && !strcmp(text[0], "0") && !strcmp(text[1], "5") && !strcmp(text[2], "10")
          && !strcmp(text[3], "15"), "linear y 0.8..11.3 (bands included): ticks 0 5 10 15");
    CHECK(fabs(o0.p[0].y - (f0.y + f0.h - sy0[0] / 15 * f0.h)) < 0.011,
          "linear y maps 0..15 onto the plotting area");
    ny = ticks(panel_at(doc, 1), panel_at(doc, 2), "ytick", text, pos, 40);
    at = ny == 5;
    for (int k = 0; at && k < 5; k++)
        at &= strcmp(text[k], pow_label(k)) == 0;
    CHECK(at, "log y 1..4096: labels 10^0 .. 10^4 (%d)", ny);
    series_out o1 = get_series(doc, 1, 0);
    CHECK(o1.npts == 12 && fabs(o1.p[0].y - (f1.y + f1.h)) < 0.011 &&
          fabs(o1.p[11].y - (f1.y + f1.h * (1 - log10(4096) / 4))) < 0.011,
          "log y maps the decades 10^0..10^4 onto the plotting area");
    ny = ticks(panel_at(doc, 2), doc + len, "ytick", text, pos, 40);
    CHECK(ny == 4 && !strcmp(text[3], "150"), "linear y 5..125: ticks 0 50 100 150");

    /* band: around the line, one closed piece, upper edge forward, lower edge back */
    series_out b0 = get_series(doc, 0, 0);
    int around = b0.nband == 26 && b0.nband_z == 1;
    for (int k = 0; around && k < 13; k++)
        around &= fabs(b0.band[k].x - b0.p[k].x) < 0.011 &&
                  fabs(b0.band[25 - k].x - b0.p[k].x) < 0.011 &&
                  b0.band[k].y < b0.p[k].y && b0.band[25 - k].y > b0.p[k].y &&
                  fabs((b0.band[25 - k].y - b0.p[k].y) / (b0.p[k].y - b0.band[k].y) - 2.0 / 3)
                  < 1e-3;
    CHECK(around, "band: 13 upper then 13 lower vertices, hi above and lo below the line");
    CHECK(!get_series(doc, 0, 1).nband, "no band without lo/hi");

    /* legend only for the panel with two series; the marker line at 1e-2 */
    CHECK(count_in(doc, len, "class=\"legend\"") == 1 && strstr(doc, ">validation</text>"),
          "one legend (the panel with two series)");
    const char *mk = strstr(doc, "<line class=\"mark\"");
    CHECK(mk && count_in(doc, len, "class=\"mark\"") == 1 &&
          fabs(attr(mk, "x1") - get_series(doc, 2, 0).p[4].x) < 0.011 && mk > panel_at(doc, 2),
          "marker line in the third panel at x = 1e-2");
    CHECK(!strstr(doc, "no data"), "no 'no data' note when there is data");

    /* same input, same bytes; also under a decimal-comma locale */
    CHECK(km_plot_svg(&fig, path2, &err) == KM_OK, "write the figure again");
    char *doc2 = slurp(path2);
    CHECK(doc2 && strcmp(doc, doc2) == 0, "identical bytes for identical input");
    free(doc2);
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
                                        "fr_FR.utf8", "ru_RU.UTF-8", "nl_NL.UTF-8"};
    const char *found = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && !found; i++)
        if (setlocale(LC_NUMERIC, names[i]))
            found = names[i];
    if (found) {
        CHECK(km_plot_svg(&fig, path2, &err) == KM_OK, "write under LC_NUMERIC=%s", found);
        setlocale(LC_NUMERIC, "C");
        doc2 = slurp(path2);
        CHECK(doc2 && strcmp(doc, doc2) == 0, "identical bytes under LC_NUMERIC=%s", found);
        free(doc2);
    } else {
        printf("skip - no decimal-comma locale installed\n");
    }
    free(doc);

    /* linear x: 1-2-5 ticks with decimals; several pieces and an isolated point */
    double lx[11], ly[11];
    for (int i = 0; i < 11; i++) {
        lx[i] = i / 10.0;
        ly[i] = i == 3 || i == 5 ? NAN : 0.3 + 0.44 * i;
    }
    km_plot_series ls = {"y", ly, NULL, NULL};
    km_plot_panel lp = {NULL, NULL, 0, &ls, 1, NAN};
    km_plot lf = {NULL, "x", 0, lx, 11, &lp, 1};
    CHECK(km_plot_svg(&lf, path, &err) == KM_OK, "write a linear figure");
    doc = slurp(path);
    len = doc ? strlen(doc) : 0;
    nx = doc ? ticks(doc, doc + len, "xtick", text, pos, 40) : 0;
    static const char *const want_x[] = {"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"};
    at = nx == 6;
    for (int k = 0; at && k < 6; k++)
        at &= strcmp(text[k], want_x[k]) == 0;
    CHECK(at, "linear x 0..1: ticks 0.0 0.2 .. 1.0 (%d)", nx);
    ny = doc ? ticks(doc, doc + len, "ytick", text, pos, 40) : 0;
    CHECK(ny == 6 && !strcmp(text[0], "0") && !strcmp(text[5], "5"),
          "linear y 0.3..4.7: ticks 0 1 .. 5");
    double lu[11];
    for (int i = 0; i < 11; i++)
        lu[i] = lx[i];
    if (doc) {
        CHECK(well_formed(doc), "linear figure well-formed");
        check_series(doc, 0, 0, lu, ly, 11, 0, 3, "linear x, two NaN gaps around a lone point");
        CHECK(!strstr(doc, "<title>") && !strstr(doc, "class=\"legend\""),
              "no title element without a title, no legend for one series");
    }
    free(doc);

    /* degenerate: one point, all-NaN series, log y with nothing positive */
    double one_x = 3, one_y = 5, nan_y = NAN, neg_y = -2;
    km_plot_series d0 = {"a", &one_y, NULL, NULL}, d1 = {"b", &nan_y, NULL, NULL};
    km_plot_series d2 = {"c", &neg_y, NULL, NULL};
    km_plot_series dpair[2] = {d0, d1};
    km_plot_panel dp[3] = {{"one point", NULL, 0, dpair, 2, NAN},
                           {"nothing", NULL, 0, &d1, 1, NAN},
                           {"nothing positive", NULL, 1, &d2, 1, NAN}};
    km_plot df = {"degenerate", NULL, 1, &one_x, 1, dp, 3};
    rc = km_plot_svg(&df, path, &err);
    CHECK(rc == KM_OK, "degenerate figure written (%s)", rc ? err.msg : "");
    doc = slurp(path);
    if (doc) {
        len = strlen(doc);
        CHECK(well_formed(doc), "degenerate figure well-formed");
        series_out a = get_series(doc, 0, 0), b = get_series(doc, 0, 1);
        box fa = frame(doc, 0);
        CHECK(a.npts == 1 && a.nmove == 1 && a.nmarkers == 1 &&
              fabs(a.p[0].y - (fa.y + fa.h / 2)) < 0.011,
              "a single point: 'M x y', one marker, y = 5 in the middle of 4.5..5.5");
        ny = ticks(panel_at(doc, 0), panel_at(doc, 1), "ytick", text, pos, 40);
        CHECK(ny == 3 && !strcmp(text[0], "4.5") && !strcmp(text[1], "5.0") &&
              !strcmp(text[2], "5.5"), "equal y values: axis 4.5..5.5 (%d ticks)", ny);
        nx = ticks(panel_at(doc, 0), panel_at(doc, 1), "xtick", text, pos, 40);
        CHECK(nx == 2 && !strcmp(text[0], pow_label(0)) && !strcmp(text[1], pow_label(1)) &&
              a.p[0].x > fa.x && a.p[0].x < fa.x + fa.w,
              "one x value 3 on a log axis: the decade 10^0..10^1");
        CHECK(b.found && b.npts == 0 && b.nmarkers == 0 && !strstr(doc, "class=\"line\" fill=\"none\" "
              "stroke-width=\"1.5\" stroke-linejoin=\"round\" d=\"\""),
              "all-NaN series: group without line or markers");
        CHECK(count_in(doc, len, ">no data</text>") == 2, "'no data' in the two empty panels");
        ny = ticks(panel_at(doc, 2), doc + len, "ytick", text, pos, 40);
        CHECK(ny == 2 && !strcmp(text[0], pow_label(0)) && !strcmp(text[1], pow_label(1)),
              "empty log panel gets 10^0..10^1");
    }
    free(doc);

    /* many decades: labels every 5 decades; tiny and huge linear values in e-notation */
    double wx[2] = {1e-20, 1e20}, wy1[2] = {1e-8, 5e-8}, wy2[2] = {1e7, 5e7};
    km_plot_series ws1 = {"tiny", wy1, NULL, NULL}, ws2 = {"huge", wy2, NULL, NULL};
    km_plot_panel wp[2] = {{NULL, NULL, 0, &ws1, 1, NAN}, {NULL, NULL, 0, &ws2, 1, NAN}};
    km_plot wf = {NULL, NULL, 1, wx, 2, wp, 2};
    CHECK(km_plot_svg(&wf, path, &err) == KM_OK, "write a wide figure");
    doc = slurp(path);
    if (doc) {
        nx = ticks(panel_at(doc, 0), panel_at(doc, 1), "xtick", text, pos, 40);
        CHECK(nx == 9 && !strcmp(text[0], pow_label(-20)) && !strcmp(text[1], pow_label(-15))
              && !strcmp(text[8], pow_label(20)), "x 1e-20..1e20: labels every 5 decades");
        ny = ticks(panel_at(doc, 0), panel_at(doc, 1), "ytick", text, pos, 40);
        CHECK(ny == 5 && !strcmp(text[0], "1e-8") && !strcmp(text[4], "5e-8"),
              "y 1e-8..5e-8: labels 1e-8 .. 5e-8");
        ny = ticks(panel_at(doc, 1), doc + strlen(doc), "ytick", text, pos, 40);
        CHECK(ny == 5 && !strcmp(text[0], "1e7") && !strcmp(text[4], "5e7"),
              "y 1e7..5e7: labels 1e7 .. 5e7");
    }
    free(doc);

    /* text that is not XML: control characters and bad UTF-8 become U+FFFD */
    km_plot_panel up = {"\xc2\xb5s \x01 \xff \xed\xa0\x80 \xe2\x82", NULL, 0, &ws1, 1, NAN};
    km_plot uf = {NULL, NULL, 1, wx, 2, &up, 1};
    CHECK(km_plot_svg(&uf, path, &err) == KM_OK, "write a figure with odd text");
    doc = slurp(path);
    CHECK(doc && strstr(doc, ">\xc2\xb5s \xef\xbf\xbd \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd"
                        "\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd</text>"),
          "UTF-8 kept; control character, stray bytes, surrogate, truncated sequence "
          "replaced byte by byte");
    free(doc);

    /* styles: one colour per meaning across panels, dash patterns, open and no markers,
     * joined lines, a legend with every series, the mark line and a note */
    {
        double sx[6] = {1, 2, 3, 4, 5, 6};
        double a[6] = {5, 4, 3, 2.5, 2.2, 2.1}, c[6] = {4, 4, 4, 4, 4, 4};
        double d[6] = {NAN, 4.1, NAN, NAN, 2.21, NAN};   /* measured at two x only */
        double t1[6] = {1, 2, 4, 8, 16, 32}, t1lo[6] = {1, 1, 3, 7, 15, 30};
        double t1hi[6] = {2, 3, 5, 9, 17, 33}, t2[6] = {NAN, 5, NAN, NAN, 40, NAN};
        km_plot_series m[3] = {{"OKL", a, NULL, NULL}, {"L = I", c, NULL, NULL},
                               {"plain", d, NULL, NULL}};
        km_plot_series t[2] = {{"OKL", t1, t1lo, t1hi}, {"plain", t2, NULL, NULL}};
        km_plot_series one = {"alone", a, NULL, NULL};
        km_plot_panel sp[3] = {{"MSE", "MSE", 0, m, 3, 4}, {"time", "seconds", 1, t, 2, 4},
                               {"one", "y", 0, &one, 1, 4}};
        km_plot sf = {"styled", "p", 0, sx, 6, sp, 3};
        km_plot_style ms[3] = {{1, KM_PLOT_CIRCLE, 0, KM_PLOT_SOLID, 0},
                               {2, KM_PLOT_NO_MARKER, 0, KM_PLOT_DOTTED, 0},
                               {3, KM_PLOT_TRIANGLE, 1, KM_PLOT_DASHED, 1}};
        km_plot_style ts[2] = {ms[0], {3, KM_PLOT_TRIANGLE, 1, KM_PLOT_DASHDOT, 0}};
        km_plot_panel_style pst[3] = {
            {ms, "best p = 4", "a note that is long enough to be wrapped over more than one "
                               "line of the legend\nand a forced second paragraph"},
            {ts, "best p = 4", NULL},
            {NULL, "best p = 4", NULL}};
        rc = km_plot_svg_styled(&sf, pst, path, &err);
        CHECK(rc == KM_OK, "write a styled figure (%s)", rc ? err.msg : "");
        doc = slurp(path);
        if (doc) {
            len = strlen(doc);
            CHECK(well_formed(doc), "styled figure well-formed");
            const char *lg;
            char keys[8][64];
            int nk = legend_keys(doc, 0, keys, 8, &lg);
            CHECK(nk == 4 && !strcmp(keys[0], "OKL") && !strcmp(keys[1], "L = I") &&
                  !strcmp(keys[2], "plain") && !strcmp(keys[3], "best p = 4"),
                  "legend of panel 1: every series and the mark line, in order (%d keys)", nk);
            nk = legend_keys(doc, 1, keys, 8, &lg);
            CHECK(nk == 3 && !strcmp(keys[0], "OKL") && !strcmp(keys[1], "plain") &&
                  !strcmp(keys[2], "best p = 4") && strstr(lg, "fill-opacity=\"0.2\""),
                  "legend of panel 2: both series (the band as a shaded box) and the mark");
            nk = legend_keys(doc, 2, keys, 8, &lg);
            CHECK(nk == 2 && !strcmp(keys[0], "alone") && !strcmp(keys[1], "best p = 4"),
                  "a lone series with a labelled mark line gets a legend of both");
            CHECK(count_in(doc, len, "class=\"mark\"") == 3, "the mark line in each panel");
            /* colours: the same color index, the same colour in both panels */
            char c0[16], c1[16], c2[16], u0[16], u2[16];
            attr_text(strstr(doc, "<g id=\"p0s0\""), "stroke", c0, sizeof c0);
            attr_text(strstr(doc, "<g id=\"p0s1\""), "stroke", c1, sizeof c1);
            attr_text(strstr(doc, "<g id=\"p0s2\""), "stroke", c2, sizeof c2);
            attr_text(strstr(doc, "<g id=\"p1s0\""), "stroke", u0, sizeof u0);
            attr_text(strstr(doc, "<g id=\"p1s1\""), "stroke", u2, sizeof u2);
            CHECK(!strcmp(c0, "#1f77b4") && !strcmp(c1, "#ff7f0e") && !strcmp(c2, "#2ca02c") &&
                  !strcmp(u0, c0) && !strcmp(u2, c2),
                  "color k is palette colour k in every panel: 'plain' is green at position "
                  "3 and at position 2 (%s %s %s / %s %s)", c0, c1, c2, u0, u2);
            /* dash patterns, in the line and in its legend key */
            char da0[32], da1[32], da2[32], e1[32];
            line_dash(doc, 0, 0, da0, sizeof da0);
            line_dash(doc, 0, 1, da1, sizeof da1);
            line_dash(doc, 0, 2, da2, sizeof da2);
            line_dash(doc, 1, 1, e1, sizeof e1);
            CHECK(!da0[0] && !strcmp(da1, "1.5 3.5") && !strcmp(da2, "7 4") && !strcmp(e1, "8 3 2 3"),
                  "dash patterns: solid none, dotted '1.5 3.5', dashed '7 4', dash-dot "
                  "'8 3 2 3' ('%s' '%s' '%s' '%s')", da0, da1, da2, e1);
            legend_keys(doc, 0, keys, 8, &lg);
            const char *lge = lg ? element_end(lg) : NULL;
            CHECK(lg && count_in(lg, (size_t)(lge - lg), "stroke-dasharray=\"7 4\"") == 1 &&
                  count_in(lg, (size_t)(lge - lg), "stroke-dasharray=\"1.5 3.5\"") == 1 &&
                  count_in(lg, (size_t)(lge - lg), "stroke-dasharray=\"5 3\"") == 1,
                  "the legend keys carry the series' and the mark line's dash patterns");
            /* markers: none for the baseline; open and larger for 'plain' */
            series_out b1 = get_series(doc, 0, 1), b2 = get_series(doc, 0, 2);
            CHECK(b1.npts == 6 && b1.nmarkers == 0, "no markers: the line alone (%d markers)",
                  b1.nmarkers);
            const char *g2 = strstr(doc, "<g id=\"p0s2\"");
            const char *poly = strstr(g2, "<polygon");
            CHECK(b2.nmarkers == 2 && strstr(g2, "<g fill=\"none\" stroke-width=\"1.5\"><polygon")
                  && poly, "open triangles: an unfilled group of 2 markers");
            /* joined: one piece through the two measured points */
            CHECK(b2.npts == 2 && b2.nmove == 1, "join: one piece over the gaps (%d points, "
                  "%d pieces)", b2.npts, b2.nmove);
            series_out e = get_series(doc, 1, 1);
            CHECK(e.npts == 2 && e.nmove == 2, "not joined: a piece per run of values (%d)",
                  e.nmove);
            /* the note: several lines, the forced break kept, none wider than the legend */
            int nn = count_in(doc, len, "<text class=\"note\"");
            const char *nt = strstr(doc, "<text class=\"note\"");
            int narrow = 1, forced = 0;
            for (const char *q = nt; q && (q = strstr(q, "<text class=\"note\"")) != NULL; q++) {
                const char *x0 = strchr(q, '>') + 1, *x1 = strstr(x0, "</text>");
                narrow &= x1 - x0 <= 40;
                forced |= strncmp(x0, "and a forced", 12) == 0;
            }
            CHECK(nn >= 3 && narrow && forced, "the note wrapped into %d lines of at most 40 "
                  "characters, a new line at '\\n'", nn);
            free(doc);
        }
        /* no styles = all-zero styles = km_plot_svg */
        km_plot_panel_style zero[3] = {{NULL, NULL, NULL}, {NULL, NULL, NULL}, {NULL, NULL, NULL}};
        km_plot_style zs[3] = {{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}};
        zero[0].series = zs;
        CHECK(km_plot_svg(&sf, path, &err) == KM_OK &&
              km_plot_svg_styled(&sf, zero, path2, &err) == KM_OK, "write unstyled twice");
        doc = slurp(path);
        char *doc3 = slurp(path2);
        CHECK(doc && doc3 && !strcmp(doc, doc3) && !strstr(doc, "stroke-dasharray=\"7 4\"") &&
              !strstr(doc, "class=\"key\"><text") , "all-zero styles draw what km_plot_svg "
              "draws");
        CHECK(doc && count_in(doc, strlen(doc), "class=\"legend\"") == 2,
              "without mark labels: legends only for the panels with two or more series");
        free(doc);
        free(doc3);
        /* invalid styles */
        km_plot_style bad_st[3][3] = {{{-1, 0, 0, 0, 0}}, {{0, 6, 0, 0, 0}}, {{0, 0, 0, 4, 0}}};
        static const char *const bad_what[] = {"color -1", "marker 6", "dash 4"};
        for (int k = 0; k < 3; k++) {
            km_plot_panel_style bp[3] = {{bad_st[k], NULL, NULL}, {NULL, NULL, NULL},
                                         {NULL, NULL, NULL}};
            km_error_clear(&err);
            rc = km_plot_svg_styled(&sf, bp, gone_path(dir), &err);
            CHECK(rc == KM_EUSAGE && err.msg[0] && access(gone_path(dir), F_OK) != 0,
                  "rejected with KM_EUSAGE: %s (%s)", bad_what[k], err.msg);
        }
    }

    /* invalid figures */
    double bad_x[2] = {1, 0}, nan_x[2] = {1, NAN};
    km_plot_series half = {"h", wy1, wy1, NULL};
    km_plot_panel hp = {NULL, NULL, 0, &half, 1, NAN}, mp = {NULL, NULL, 0, &ws1, 1, -1};
    km_plot_panel zp = {NULL, NULL, 0, &ws1, 0, NAN};
    struct { km_plot f; const char *what; } bad[] = {
        {{NULL, NULL, 1, bad_x, 2, wp, 1}, "x = 0 on a log axis"},
        {{NULL, NULL, 0, nan_x, 2, wp, 1}, "x = NaN"},
        {{NULL, NULL, 0, wx, 0, wp, 1}, "no points"},
        {{NULL, NULL, 0, wx, 2, wp, 0}, "no panels"},
        {{NULL, NULL, 0, wx, 2, &zp, 1}, "a panel without series"},
        {{NULL, NULL, 0, wx, 2, &hp, 1}, "lo without hi"},
        {{NULL, NULL, 1, wx, 2, &mp, 1}, "marker at x = -1 on a log axis"},
    };
    char gone[256];
    snprintf(gone, sizeof gone, "%s/never.svg", dir);
    for (size_t t = 0; t < sizeof bad / sizeof *bad; t++) {
        km_error_clear(&err);
        rc = km_plot_svg(&bad[t].f, gone, &err);
        CHECK(rc == KM_EUSAGE && err.code == KM_EUSAGE && err.msg[0] && access(gone, F_OK) != 0,
              "rejected with KM_EUSAGE, nothing written: %s (%s)", bad[t].what, err.msg);
    }
    double huge_y[2] = {-1e308, 1e308};
    km_plot_series hs = {"h", huge_y, NULL, NULL};
    km_plot_panel hup = {NULL, NULL, 0, &hs, 1, NAN};
    km_plot hf = {NULL, NULL, 0, wx, 2, &hup, 1};
    CHECK(km_plot_svg(&hf, gone, &err) == KM_EUSAGE && access(gone, F_OK) != 0,
          "y values -1e308..1e308 rejected (%s)", err.msg);

    /* unwritable targets: KM_EINPUT and no temporary file left */
    char nodir[256], isdir[256];
    snprintf(nodir, sizeof nodir, "%s/missing/fig.svg", dir);
    rc = km_plot_svg(&fig, nodir, &err);
    CHECK(rc == KM_EINPUT && strstr(err.msg, nodir), "missing directory: KM_EINPUT naming the "
          "path (%s)", err.msg);
    snprintf(isdir, sizeof isdir, "%s/sub", dir);
    mkdir(isdir, 0700);
    rc = km_plot_svg(&fig, isdir, &err);
    CHECK(rc == KM_EINPUT && strstr(err.msg, "cannot write figure"),
          "target is a directory: KM_EINPUT (%s)", err.msg);
    DIR *d = opendir(dir);
    int entries = 0, temps = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        entries += e->d_name[0] != '.';
        temps += strstr(e->d_name, ".tmp") != NULL;
    }
    if (d)
        closedir(d);
    CHECK(entries == 3 && temps == 0, "only fig.svg, fig2.svg and sub remain (%d entries, "
          "%d temporary)", entries, temps);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0044) == (0666 & ~(mode_t)umask(022) & 0044),
          "figure readable by others as the umask allows (mode %o)", (unsigned)st.st_mode & 0777);

    unlink(path);
    unlink(path2);
    rmdir(isdir);
    rmdir(dir);
    TEST_EXIT();
}
