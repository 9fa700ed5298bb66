/* plot.c - see plot.h. The figure is composed in memory, then written in one go. Numbers
 * are formatted from integers (pixel hundredths, tick mantissas), never by printf's %f or
 * %g, so a caller's LC_NUMERIC cannot put commas into the file. */
#include "plot.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"

/* Layout in pixels; text is 12 px sans-serif, about CHAR_W wide a character. */
enum {
    PLOT_W = 600,         /* plotting area of every panel */
    PLOT_H = 180,
    CHAR_W = 7,
    PANEL_TITLE_H = 26,   /* above a plotting area */
    TICK_LABEL_H = 24,    /* below it */
    PANEL_GAP = 14,
    PANEL_STEP = PANEL_TITLE_H + PLOT_H + TICK_LABEL_H + PANEL_GAP,
    MAX_TICKS = 16,
    NOTE_W = 200          /* least width of a legend with a note */
};

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
enum { NCOLORS = sizeof palette / sizeof *palette, NSHAPES = 4 };
/* The mark line: grey, dashed unlike any series pattern. */
#define MARK_COLOR "#555"
#define MARK_DASH " stroke-dasharray=\"5 3\""

/* ---- text buffer ---- */

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int nomem;
} sbuf;

/* Makes room for need more bytes plus a terminator; 0 on success. */
static int reserve(sbuf *b, size_t need)
{
    if (b->nomem)
        return -1;
    if (b->len + need < b->cap)
        return 0;
    size_t cap = 2 * b->cap > b->len + need + 1 ? 2 * b->cap : b->len + need + 1;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->nomem = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

static void put_raw(sbuf *b, const char *s, size_t n)
{
    if (reserve(b, n))
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0 || reserve(b, (size_t)k))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)k;
}

/* Drops the space that ends a list of path commands. */
static void trim_space(sbuf *b)
{
    if (!b->nomem && b->len > 0 && b->s[b->len - 1] == ' ')
        b->s[--b->len] = '\0';
}

/* Length of the well-formed UTF-8 sequence at p (lead byte >= 0x80) of a character XML
 * allows, or 0. Stops at the first bad byte, so never reads past a terminator. */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0], lo = 0x80, hi = 0xBF;
    int n;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, lo = c == 0xE0 ? 0xA0 : lo, hi = c == 0xED ? 0x9F : hi;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, lo = c == 0xF0 ? 0x90 : lo, hi = c == 0xF4 ? 0x8F : hi;
    else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (int k = 2; k < n; k++)
        if ((p[k] & 0xC0) != 0x80)
            return 0;
    if (c == 0xEF && p[1] == 0xBF && p[2] >= 0xBE)   /* U+FFFE, U+FFFF */
        return 0;
    return n;
}

/* Appends s as XML character data or attribute text. */
static void put_text(sbuf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = *p < 0x80 ? 1 : utf8_len(p);
        if (*p == '&')
            put_raw(b, "&amp;", 5);
        else if (*p == '<')
            put_raw(b, "&lt;", 4);
        else if (*p == '>')
            put_raw(b, "&gt;", 4);
        else if (*p == '"')
            put_raw(b, "&quot;", 6);
        else if (*p == '\'')
            put_raw(b, "&apos;", 6);
        else if (n == 0 || *p < 0x20 || *p == 0x7F)
            put_raw(b, "\xEF\xBF\xBD", 3);
        else
            put_raw(b, (const char *)p, (size_t)n);
        p += n ? n : 1;
    }
}

/* Estimated width of s in pixels (one CHAR_W per character). */
static int text_w(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n * CHAR_W;
}

/* A coordinate with two decimals. */
typedef struct num {
    char s[32];
} num;

static num fx(double v)
{
    num r;
    long long h = llround(v * 100), a = h < 0 ? -h : h;
    snprintf(r.s, sizeof r.s, "%s%lld.%02lld", h < 0 ? "-" : "", a / 100, a % 100);
    return r;
}

/* ---- axes ---- */

typedef struct axis {
    int log;
    double lo, hi;               /* range in axis units (log10 of values on a log axis) */
    int nt;                      /* labelled ticks */
    double t[MAX_TICKS];         /* their positions, axis units */
    char label[MAX_TICKS][64];   /* the number, or the exponent k of 10^k */
    int minor;                   /* log axis: unlabelled ticks at 2..9 x 10^k */
    int width;                   /* estimated width of the widest label */
} axis;

/* Where value v falls on the axis, 0 at lo to 1 at hi; v <= 0 on a log axis is 0. */
static double frac(const axis *a, double v)
{
    double u = !a->log ? v : v > 0 ? log10(v) : a->lo;
    return (u - a->lo) / (a->hi - a->lo);
}

static double p10(int k)
{
    return pow(10, k);
}

/* floor(log10(v)) for v > 0, exact at powers of ten. */
static int dec_floor(double v)
{
    int k = (int)floor(log10(v));
    if (p10(k) > v)
        k--;
    else if (p10(k + 1) <= v)
        k++;
    return k;
}

/* Writes m x 10^e: fixed with max(0, -e) decimals, or (sci) as "2.5e-8". */
static void fmt_dec(char *out, size_t size, long long m, int e, int sci)
{
    char d[24];
    int n = snprintf(d, sizeof d, "%lld", m < 0 ? -m : m);
    const char *sign = m < 0 ? "-" : "";
    if (sci) {
        if (m == 0) {
            snprintf(out, size, "0");
            return;
        }
        int exp10 = e + n - 1;
        while (n > 1 && d[n - 1] == '0')
            d[--n] = '\0';
        snprintf(out, size, "%s%c%s%se%d", sign, d[0], n > 1 ? "." : "", d + 1, exp10);
    } else if (e >= 0) {
        snprintf(out, size, "%s%s%.*s", sign, d, e, "000000000");
    } else {
        int dec = -e, lead = n > dec ? n - dec : 0;
        snprintf(out, size, "%s%.*s%s.%.*s%s", sign, lead, d, lead ? "" : "0",
                 dec > n ? dec - n : 0, "00000", d + lead);
    }
}

/* Linear axis over lo..hi (lo <= hi): ticks at the smallest step d 10^e, d = 1, 2 or 5,
 * that needs at most maxt of them; the range widened to whole steps. 0, or -1 when the
 * range overflows. */
static int lin_axis(axis *a, double lo, double hi, int maxt)
{
    double mag = fmax(fabs(lo), fabs(hi));
    if (!(hi - lo > mag * 1e-9)) {   /* one value (or nearly): v -+ |v|/10 */
        double mid = lo / 2 + hi / 2, d = mag > 1e-150 ? mag / 10 : 1;
        lo = mid - d;
        hi = mid + d;
    }
    if (!isfinite(hi - lo))
        return -1;
    static const int mult[] = {1, 2, 5};
    int e = (int)floor(log10((hi - lo) / maxt)) - 1, d = 1;
    double k0 = 0, k1 = 0;
    for (int found = 0; !found; e++) {
        for (int j = 0; j < 3 && !found; j++) {
            d = mult[j];
            double step = e >= 0 ? d * p10(e) : d / p10(-e);
            k0 = floor(lo / step + 1e-9);
            k1 = ceil(hi / step - 1e-9);
            found = k1 - k0 + 1 <= maxt;
        }
    }
    e--;
    double scale = p10(e < 0 ? -e : e), top = fmax(fabs(k0), fabs(k1)) * d;
    int sci = e < -5 || (e > 0 && top * scale >= 1e7);
    a->lo = e >= 0 ? k0 * d * scale : k0 * d / scale;
    a->hi = e >= 0 ? k1 * d * scale : k1 * d / scale;
    for (double k = k0; k <= k1; k++) {
        long long m = (long long)k * d;
        a->t[a->nt] = e >= 0 ? (double)m * scale : (double)m / scale;
        fmt_dec(a->label[a->nt], sizeof a->label[0], m, e, sci);
        int w = (int)strlen(a->label[a->nt]) * CHAR_W;
        a->width = w > a->width ? w : a->width;
        a->nt++;
    }
    return 0;
}

/* Log axis over lo..hi (0 < lo <= hi): whole decades, labelled every s decades, s the
 * first of 1, 2, 5, 10, ... that needs at most maxt labels. */
static void log_axis(axis *a, double lo, double hi, int maxt)
{
    int e0 = dec_floor(lo), e1 = dec_floor(hi);
    if (p10(e1) < hi)
        e1++;
    if (e0 == e1) {
        e0--;
        e1++;
    }
    int s = 1;
    for (int j = 0;; j++) {
        s = (j % 3 == 0 ? 1 : j % 3 == 1 ? 2 : 5) * (int)p10(j / 3);
        if ((int)ceil((double)e1 / s) - (int)floor((double)e0 / s) + 1 <= maxt)
            break;
    }
    e0 = (int)floor((double)e0 / s) * s;
    e1 = (int)ceil((double)e1 / s) * s;
    a->log = 1;
    a->lo = e0;
    a->hi = e1;
    a->minor = s == 1 && e1 - e0 <= 6;
    for (int k = e0; k <= e1; k += s) {
        a->t[a->nt] = k;
        snprintf(a->label[a->nt], sizeof a->label[0], "%d", k);
        int w = 2 * CHAR_W + (int)strlen(a->label[a->nt]) * 5;
        a->width = w > a->width ? w : a->width;
        a->nt++;
    }
}

/* Axis for the values lo..hi (lo > hi: none, a default range); 0 or -1 as lin_axis. */
static int make_axis(axis *a, int log, double lo, double hi, int maxt)
{
    memset(a, 0, sizeof *a);
    if (lo > hi) {
        lo = log ? 1 : 0;
        hi = log ? 10 : 1;
    }
    if (!log)
        return lin_axis(a, lo, hi, maxt);
    log_axis(a, lo, hi, maxt);
    return 0;
}

/* Writes tick k's label text: the number, or 10 with the exponent raised. */
static void put_tick_label(sbuf *b, const axis *a, int k)
{
    if (a->log)
        put(b, "10<tspan dy=\"-5\" font-size=\"9\">%s</tspan>", a->label[k]);
    else
        put(b, "%s", a->label[k]);
}

/* ---- data ---- */

static const km_plot_style no_style;
static const km_plot_panel_style no_panel_style;

/* The style of panel k (all 0 when none was given). */
static const km_plot_panel_style *panel_style(const km_plot_panel_style *st, int k)
{
    return st ? &st[k] : &no_panel_style;
}

/* The style of series s of panel k. */
static const km_plot_style *series_style(const km_plot_panel_style *st, int k, int s)
{
    st = panel_style(st, k);
    return st->series ? &st->series[s] : &no_style;
}


static int drawable(double v, int log)
{
    return isfinite(v) && (!log || v > 0);
}

/* Whether series s has a band at point i. */
static int band_at(const km_plot_series *s, int i, int log)
{
    return s->lo && isfinite(s->lo[i]) && isfinite(s->hi[i]) &&
           (!log || fmax(s->lo[i], s->hi[i]) > 0);
}

typedef struct xkey {
    double x;
    int i;
} xkey;

static int cmp_xkey(const void *pa, const void *pb)
{
    const xkey *a = pa, *b = pb;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static int check_plot(const km_plot *p, const km_plot_panel_style *st, km_error *err)
{
    if (!p || p->n < 1 || !p->x || p->npanels < 1 || !p->panels)
        return km_error_set(err, KM_EUSAGE, "plot: no points or no panels");
    for (int i = 0; i < p->n; i++)
        if (!drawable(p->x[i], p->log_x))
            return km_error_set(err, KM_EUSAGE, "plot: x value %.17g cannot be drawn on a %s "
                                "x axis", p->x[i], p->log_x ? "log" : "linear");
    for (int k = 0; k < p->npanels; k++) {
        const km_plot_panel *q = &p->panels[k];
        if (q->nseries < 1 || !q->series)
            return km_error_set(err, KM_EUSAGE, "plot: panel %d has no series", k + 1);
        if (!isnan(q->mark_x) && !drawable(q->mark_x, p->log_x))
            return km_error_set(err, KM_EUSAGE, "plot: panel %d: marker x %.17g cannot be "
                                "drawn on a %s x axis", k + 1, q->mark_x,
                                p->log_x ? "log" : "linear");
        for (int s = 0; s < q->nseries; s++) {
            const km_plot_series *T = &q->series[s];
            const km_plot_style *S = series_style(st, k, s);
            if (!T->y || !T->lo != !T->hi)
                return km_error_set(err, KM_EUSAGE, "plot: panel %d series %d: missing y, or "
                                    "only one of lo and hi", k + 1, s + 1);
            if (S->color < 0 || S->marker < KM_PLOT_MARKER_AUTO ||
                S->marker > KM_PLOT_NO_MARKER || S->dash < KM_PLOT_SOLID ||
                S->dash > KM_PLOT_DASHDOT)
                return km_error_set(err, KM_EUSAGE, "plot: panel %d series %d: color %d, "
                                    "marker %d or dash %d out of range", k + 1, s + 1,
                                    S->color, S->marker, S->dash);
        }
    }
    return KM_OK;
}

/* ---- drawing ---- */

/* The geometry shared by all panels. */
typedef struct layout {
    const km_plot *p;
    const xkey *ord;      /* points in drawing order */
    axis xa;
    double left;          /* x of the plotting areas */
    double right;         /* room right of them (legends) */
    const km_plot_panel_style *style;   /* npanels or NULL */
} layout;



/* Colour of series s (its position in the panel). */
static const char *series_color(const km_plot_style *S, int s)
{
    return palette[(S->color > 0 ? S->color - 1 : s) % NCOLORS];
}

/* Marker shape of series s: 0 circle, 1 square, 2 triangle, 3 diamond, -1 none. */
static int series_shape(const km_plot_style *S, int s)
{
    if (S->marker == KM_PLOT_NO_MARKER)
        return -1;
    return S->marker > KM_PLOT_MARKER_AUTO ? S->marker - KM_PLOT_CIRCLE : s % NSHAPES;
}

/* The attributes of a dash pattern (with a leading space), "" for a solid line. */
static const char *dash_attr(int dash)
{
    switch (dash) {
    case KM_PLOT_DASHED: return " stroke-dasharray=\"7 4\"";
    case KM_PLOT_DOTTED: return " stroke-dasharray=\"1.5 3.5\" stroke-linecap=\"round\"";
    case KM_PLOT_DASHDOT: return " stroke-dasharray=\"8 3 2 3\"";
    default: return "";
    }
}

/* The opening of a group of markers: filled, or open (outlined, 1.6 times larger). */
static void put_markers_open(sbuf *b, int open)
{
    put(b, open ? "<g fill=\"none\" stroke-width=\"1.5\">" : "<g stroke=\"none\">");
}

/* A marker of the given shape (-1: none) centred at x, y; z scales it. */
static void put_marker(sbuf *b, int shape, double z, double x, double y)
{
    if (shape < 0)
        return;
    if (shape == 0)
        put(b, "<circle cx=\"%s\" cy=\"%s\" r=\"%s\"/>", fx(x).s, fx(y).s, fx(3 * z).s);
    else if (shape == 1)
        put(b, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\"/>", fx(x - 2.75 * z).s,
            fx(y - 2.75 * z).s, fx(5.5 * z).s, fx(5.5 * z).s);
    else if (shape == 2)
        put(b, "<polygon points=\"%s,%s %s,%s %s,%s\"/>", fx(x).s, fx(y - 3.5 * z).s,
            fx(x + 3.5 * z).s, fx(y + 2.5 * z).s, fx(x - 3.5 * z).s, fx(y + 2.5 * z).s);
    else
        put(b, "<polygon points=\"%s,%s %s,%s %s,%s %s,%s\"/>", fx(x).s, fx(y - 3.8 * z).s,
            fx(x + 3.8 * z).s, fx(y).s, fx(x).s, fx(y + 3.8 * z).s, fx(x - 3.8 * z).s, fx(y).s);
}

/* Series s of panel k with the y axis ya, plotting area top at y0. */
static void put_series(sbuf *b, const layout *L, int k, int s, const axis *ya, double y0)
{
    const km_plot *p = L->p;
    const km_plot_series *S = &p->panels[k].series[s];
    const km_plot_style *st = series_style(L->style, k, s);
    const char *color = series_color(st, s);
    int n = p->n, ly = ya->log, drawn = 0, shape = series_shape(st, s);
#define PX(i) (L->left + frac(&L->xa, p->x[i]) * PLOT_W)
#define PY(v) (y0 + (1 - frac(ya, v)) * PLOT_H)
    put(b, "<g id=\"p%ds%d\" fill=\"%s\" stroke=\"%s\">\n", k, s, color, color);
    int any_band = 0;
    for (int j = 0; j < n; j++)
        any_band |= band_at(S, L->ord[j].i, ly);
    if (any_band) {
        put(b, "<path class=\"band\" fill-opacity=\"0.2\" stroke=\"none\" d=\"");
        for (int j = 0; j < n;) {
            if (!band_at(S, L->ord[j].i, ly)) {
                j++;
                continue;
            }
            int r = j;
            while (r < n && band_at(S, L->ord[r].i, ly))
                r++;
            for (int t = j; t < r; t++) {
                int i = L->ord[t].i;
                put(b, "%s%s %s ", t == j ? "M" : "L", fx(PX(i)).s,
                    fx(PY(fmax(S->lo[i], S->hi[i]))).s);
            }
            for (int t = r - 1; t >= j; t--) {
                int i = L->ord[t].i;
                put(b, "L%s %s ", fx(PX(i)).s, fx(PY(fmin(S->lo[i], S->hi[i]))).s);
            }
            put(b, "Z ");
            j = r;
        }
        trim_space(b);
        put(b, "\"/>\n");
    }
    for (int j = 0; j < n; j++)
        drawn += drawable(S->y[L->ord[j].i], ly);
    if (drawn) {
        put(b, "<path class=\"line\" fill=\"none\" stroke-width=\"1.5\" "
               "stroke-linejoin=\"round\"%s d=\"", dash_attr(st->dash));
        int gap = 1, first = 1;
        for (int j = 0; j < n; j++) {
            int i = L->ord[j].i;
            if (!drawable(S->y[i], ly)) {
                gap |= !st->join;
                continue;
            }
            put(b, "%s%s%s %s", first ? "" : " ", gap ? "M" : "L", fx(PX(i)).s,
                fx(PY(S->y[i])).s);
            gap = first = 0;
        }
        put(b, "\"/>\n");
        if (shape >= 0) {
            put_markers_open(b, st->open);
            for (int j = 0; j < n; j++) {
                int i = L->ord[j].i;
                if (drawable(S->y[i], ly))
                    put_marker(b, shape, st->open ? 1.6 : 1, PX(i), PY(S->y[i]));
            }
            put(b, "</g>\n");
        }
    }
    put(b, "</g>\n");
#undef PX
#undef PY
}

/* ---- legend ---- */

enum { KEY_W = 30, KEY_GAP = 6, KEY_STEP = 18, NOTE_STEP = 14, NOTE_CHAR_W = 6 };

/* Entries of panel q's legend (ps: its style): its series and the mark line when it has a
 * label. */
static int legend_entries(const km_plot_panel *q, const km_plot_panel_style *ps)
{
    return q->nseries + (!isnan(q->mark_x) && ps->mark_label != NULL);
}

/* Width of panel q's legend entries (without the note). */
static int legend_width(const km_plot_panel *q, const km_plot_panel_style *ps)
{
    int w = 0;
    for (int s = 0; s < q->nseries; s++) {
        int t = text_w(q->series[s].label);
        w = t > w ? t : w;
    }
    if (!isnan(q->mark_x) && ps->mark_label) {
        int t = text_w(ps->mark_label);
        w = t > w ? t : w;
    }
    return KEY_W + KEY_GAP + w + 8;
}

/* Calls line(ctx, text, len) for each line of s wrapped at width pixels (NOTE_CHAR_W a
 * character): breaks at '\n', else at the last space that fits, else mid-word. Returns
 * the number of lines. */
static int wrap(const char *s, int width, void (*line)(void *, const char *, int), void *ctx)
{
    int max = width / NOTE_CHAR_W, nl = 0;
    max = max < 8 ? 8 : max;
    while (s && *s) {
        int len = 0, chars = 0, brk = -1;
        while (s[len] && s[len] != '\n') {
            if (((unsigned char)s[len] & 0xC0) != 0x80) {
                if (chars == max)
                    break;
                chars++;
            }
            if (s[len] == ' ')
                brk = len;
            len++;
        }
        int end = len, next = len;
        if (s[len] == '\n') {
            next = len + 1;
        } else if (s[len] && brk > 0) {
            end = brk;
            next = brk + 1;
        }
        if (line)
            line(ctx, s, end);
        nl++;
        s += next;
    }
    return nl;
}

typedef struct note_ctx {
    sbuf *b;
    double x, y;
} note_ctx;

static void put_note_line(void *ctx, const char *s, int len)
{
    note_ctx *c = ctx;
    char *t = malloc((size_t)len + 1);
    if (!t) {
        c->b->nomem = 1;
        return;
    }
    memcpy(t, s, (size_t)len);
    t[len] = '\0';
    put(c->b, "<text class=\"note\" x=\"%s\" y=\"%s\" font-size=\"11\" fill=\"#555\">",
        fx(c->x).s, fx(c->y).s);
    put_text(c->b, t);
    put(c->b, "</text>\n");
    free(t);
    c->y += NOTE_STEP;
}

/* The key of one legend entry at lx, ly: a line with the entry's dash pattern, a band box
 * when it has one, its marker, and its text. */
static void put_key(sbuf *b, double lx, double ly, const char *color, const char *dash,
                    int band, int shape, int open, const char *text)
{
    put(b, "<g class=\"key\" fill=\"%s\" stroke=\"%s\">", color, color);
    if (band)
        put(b, "<rect x=\"%s\" y=\"%s\" width=\"%d\" height=\"10\" fill-opacity=\"0.2\" "
               "stroke=\"none\"/>", fx(lx).s, fx(ly - 5).s, KEY_W);
    put(b, "<path fill=\"none\" stroke-width=\"1.5\"%s d=\"M%s %sh%d\"/>", dash, fx(lx).s,
        fx(ly).s, KEY_W);
    if (shape >= 0) {
        put_markers_open(b, open);
        put_marker(b, shape, open ? 1.6 : 1, lx + KEY_W / 2.0, ly);
        put(b, "</g>");
    }
    put(b, "<text x=\"%s\" y=\"%s\" stroke=\"none\" fill=\"#000\">", fx(lx + KEY_W + KEY_GAP).s,
        fx(ly + 4).s);
    if (text)
        put_text(b, text);
    put(b, "</text></g>\n");
}

/* Panel k's legend at lx (width w), next to the plotting area whose top is y0. */
static void put_legend(sbuf *b, const layout *L, int k, double lx, double y0, double w)
{
    const km_plot_panel *q = &L->p->panels[k];
    const km_plot_panel_style *ps = panel_style(L->style, k);
    put(b, "<g class=\"legend\">\n");
    double ly = y0 + 10;
    for (int s = 0; s < q->nseries; s++, ly += KEY_STEP) {
        const km_plot_style *S = series_style(L->style, k, s);
        put_key(b, lx, ly, series_color(S, s), dash_attr(S->dash), q->series[s].lo != NULL,
                series_shape(S, s), S->open, q->series[s].label);
    }
    if (!isnan(q->mark_x) && ps->mark_label) {
        put_key(b, lx, ly, MARK_COLOR, MARK_DASH, 0, -1, 0, ps->mark_label);
        ly += KEY_STEP;
    }
    if (ps->note) {
        note_ctx c = {b, lx, ly + 4};
        wrap(ps->note, (int)w - 8, put_note_line, &c);
    }
    put(b, "</g>\n");
}

/* Panel k with the y axis ya, plotting area top at y0. */
static void put_panel(sbuf *b, const layout *L, int k, const axis *ya, double y0)
{
    const km_plot_panel *q = &L->p->panels[k];
    const axis *xa = &L->xa;
    double x0 = L->left, x1 = x0 + PLOT_W, y1 = y0 + PLOT_H;
    put(b, "<g class=\"panel\">\n");
    if (q->title) {
        put(b, "<text x=\"%s\" y=\"%s\" font-weight=\"bold\">", fx(x0).s, fx(y0 - 9).s);
        put_text(b, q->title);
        put(b, "</text>\n");
    }
    /* grid and tick marks */
    put(b, "<path class=\"grid\" stroke=\"#e4e4e4\" d=\"");
    for (int t = 0; t < xa->nt; t++) {
        double x = x0 + (xa->t[t] - xa->lo) / (xa->hi - xa->lo) * PLOT_W;
        put(b, "M%s %sV%s ", fx(x).s, fx(y0).s, fx(y1).s);
    }
    for (int t = 0; t < ya->nt; t++) {
        double y = y1 - (ya->t[t] - ya->lo) / (ya->hi - ya->lo) * PLOT_H;
        put(b, "M%s %sH%s ", fx(x0).s, fx(y).s, fx(x1).s);
    }
    trim_space(b);
    put(b, "\"/>\n<path class=\"ticks\" stroke=\"#000\" d=\"");
    for (int t = 0; t < xa->nt; t++) {
        double x = x0 + (xa->t[t] - xa->lo) / (xa->hi - xa->lo) * PLOT_W;
        put(b, "M%s %sv5 ", fx(x).s, fx(y1).s);
    }
    for (int t = 0; t < ya->nt; t++) {
        double y = y1 - (ya->t[t] - ya->lo) / (ya->hi - ya->lo) * PLOT_H;
        put(b, "M%s %sh-5 ", fx(x0).s, fx(y).s);
    }
    for (int e = (int)xa->lo; xa->minor && e < (int)xa->hi; e++)
        for (int m = 2; m <= 9; m++) {
            double x = x0 + (e + log10(m) - xa->lo) / (xa->hi - xa->lo) * PLOT_W;
            put(b, "M%s %sv3 ", fx(x).s, fx(y1).s);
        }
    for (int e = (int)ya->lo; ya->minor && e < (int)ya->hi; e++)
        for (int m = 2; m <= 9; m++) {
            double y = y1 - (e + log10(m) - ya->lo) / (ya->hi - ya->lo) * PLOT_H;
            put(b, "M%s %sh-3 ", fx(x0).s, fx(y).s);
        }
    trim_space(b);
    put(b, "\"/>\n");
    for (int t = 0; t < xa->nt; t++) {
        double x = x0 + (xa->t[t] - xa->lo) / (xa->hi - xa->lo) * PLOT_W;
        put(b, "<text class=\"xtick\" x=\"%s\" y=\"%s\" text-anchor=\"middle\">", fx(x).s,
            fx(y1 + 19).s);
        put_tick_label(b, xa, t);
        put(b, "</text>\n");
    }
    for (int t = 0; t < ya->nt; t++) {
        double y = y1 - (ya->t[t] - ya->lo) / (ya->hi - ya->lo) * PLOT_H;
        put(b, "<text class=\"ytick\" x=\"%s\" y=\"%s\" text-anchor=\"end\">", fx(x0 - 8).s,
            fx(y + 4).s);
        put_tick_label(b, ya, t);
        put(b, "</text>\n");
    }
    if (q->ylabel) {
        double cy = y0 + PLOT_H / 2.0;
        put(b, "<text x=\"16\" y=\"%s\" text-anchor=\"middle\" transform=\"rotate(-90 16 %s)\">",
            fx(cy).s, fx(cy).s);
        put_text(b, q->ylabel);
        put(b, "</text>\n");
    }
    int any = 0;
    for (int s = 0; s < q->nseries; s++)
        for (int i = 0; i < L->p->n; i++)
            any |= drawable(q->series[s].y[i], ya->log) || band_at(&q->series[s], i, ya->log);
    if (!any)
        put(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" fill=\"#888\">no data</text>\n",
            fx(x0 + PLOT_W / 2.0).s, fx(y0 + PLOT_H / 2.0).s);
    if (!isnan(q->mark_x)) {
        double x = x0 + frac(xa, q->mark_x) * PLOT_W;
        put(b, "<line class=\"mark\" x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"%s\" "
               "stroke-width=\"1.5\"%s/>\n", fx(x).s, fx(y0).s, fx(x).s, fx(y1).s, MARK_COLOR,
            MARK_DASH);
    }
    for (int s = 0; s < q->nseries; s++)
        put_series(b, L, k, s, ya, y0);
    put(b, "<rect class=\"frame\" x=\"%s\" y=\"%s\" width=\"%d\" height=\"%d\" fill=\"none\" "
           "stroke=\"#000\"/>\n", fx(x0).s, fx(y0).s, PLOT_W, PLOT_H);
    const km_plot_panel_style *ps = panel_style(L->style, k);
    if (legend_entries(q, ps) > 1 || ps->note)
        put_legend(b, L, k, x1 + 12, y0, L->right - 12);
    put(b, "</g>\n");
}

static int write_buffer(FILE *f, const void *ctx)
{
    const sbuf *b = ctx;
    return fwrite(b->s, 1, b->len, f) == b->len ? 0 : -1;
}

int km_plot_svg(const km_plot *p, const char *path, km_error *err)
{
    return km_plot_svg_styled(p, NULL, path, err);
}

int km_plot_svg_styled(const km_plot *p, const km_plot_panel_style *style, const char *path,
                       km_error *err)
{
    int rc = check_plot(p, style, err);
    if (rc != KM_OK)
        return rc;
    int n = p->n, np = p->npanels;
    layout L = {.p = p, .style = style};
    xkey *ord = malloc((size_t)n * sizeof *ord);
    axis *ya = malloc((size_t)np * sizeof *ya);
    sbuf b = {0};
    if (!ord || !ya || reserve(&b, 1 << 16)) {
        free(ord);
        free(ya);
        free(b.s);
        return km_error_nomem(err, "figure");
    }
    for (int i = 0; i < n; i++)
        ord[i] = (xkey){p->x[i], i};
    qsort(ord, (size_t)n, sizeof *ord, cmp_xkey);
    L.ord = ord;

    /* axes */
    double xlo = ord[0].x, xhi = ord[n - 1].x;
    for (int k = 0; k < np; k++)
        if (!isnan(p->panels[k].mark_x)) {
            xlo = fmin(xlo, p->panels[k].mark_x);
            xhi = fmax(xhi, p->panels[k].mark_x);
        }
    rc = make_axis(&L.xa, p->log_x, xlo, xhi, p->log_x ? PLOT_W / 40 : PLOT_W / 75);
    int ytick_w = 0, legend_w = 0, any_ylabel = 0;
    for (int k = 0; k < np && rc == 0; k++) {
        const km_plot_panel *q = &p->panels[k];
        double lo = INFINITY, hi = -INFINITY;
        for (int s = 0; s < q->nseries; s++) {
            const km_plot_series *S = &q->series[s];
            for (int i = 0; i < n; i++) {
                if (drawable(S->y[i], q->log_y)) {
                    lo = fmin(lo, S->y[i]);
                    hi = fmax(hi, S->y[i]);
                }
                if (band_at(S, i, q->log_y)) {
                    double a = fmin(S->lo[i], S->hi[i]), c = fmax(S->lo[i], S->hi[i]);
                    lo = drawable(a, q->log_y) ? fmin(lo, a) : lo;
                    lo = fmin(lo, c);
                    hi = fmax(hi, c);
                }
            }
        }
        const km_plot_panel_style *ps = panel_style(style, k);
        if (legend_entries(q, ps) > 1 || ps->note) {
            int w = 12 + legend_width(q, ps);
            w = ps->note && w < 12 + NOTE_W ? 12 + NOTE_W : w;
            legend_w = w > legend_w ? w : legend_w;
        }
        rc = make_axis(&ya[k], q->log_y, lo, hi, q->log_y ? PLOT_H / 22 : PLOT_H / 30);
        ytick_w = ya[k].width > ytick_w ? ya[k].width : ytick_w;
        any_ylabel |= q->ylabel != NULL;
    }
    if (rc != 0) {
        free(ord);
        free(ya);
        free(b.s);
        return km_error_set(err, KM_EUSAGE, "plot: values too far apart to plot");
    }

    /* layout */
    int half_x = L.xa.width / 2 + 8;
    L.left = (any_ylabel ? 30 : 8) + ytick_w + 8;
    L.left = L.left < half_x ? half_x : L.left;
    L.right = legend_w > half_x ? legend_w : half_x;
    double top = p->title ? 40 : 8;
    double W = L.left + PLOT_W + L.right;
    W = p->title && text_w(p->title) * 1.25 + 20 > W ? text_w(p->title) * 1.25 + 20 : W;
    double H = top + np * PANEL_STEP - PANEL_GAP + (p->xlabel ? 26 : 0) + 8;
    put(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%s\" height=\"%s\" "
            "viewBox=\"0 0 %s %s\" font-family=\"sans-serif\" font-size=\"12\">\n",
        fx(W).s, fx(H).s, fx(W).s, fx(H).s);
    if (p->title) {
        put(&b, "<title>");
        put_text(&b, p->title);
        put(&b, "</title>\n");
    }
    put(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n");
    if (p->title) {
        put(&b, "<text x=\"%s\" y=\"26\" text-anchor=\"middle\" font-size=\"15\">",
            fx(W / 2).s);
        put_text(&b, p->title);
        put(&b, "</text>\n");
    }
    for (int k = 0; k < np; k++)
        put_panel(&b, &L, k, &ya[k], top + k * PANEL_STEP + PANEL_TITLE_H);
    if (p->xlabel) {
        put(&b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\">",
            fx(L.left + PLOT_W / 2.0).s, fx(top + np * PANEL_STEP - PANEL_GAP + 20).s);
        put_text(&b, p->xlabel);
        put(&b, "</text>\n");
    }
    put(&b, "</svg>\n");
    free(ord);
    free(ya);
    rc = b.nomem ? km_error_nomem(err, "figure") : km_write_atomic(path, "figure", write_buffer, &b, err);
    free(b.s);
    return rc;
}

/* ---- heat maps ---- */

/* A number to 4 significant digits, '.' whatever the locale. */
static num fnum(double v)
{
    num r;
    snprintf(r.s, sizeof r.s, "%.4g", v);
    for (char *c = r.s; *c; c++)
        if (*c == ',')
            *c = '.';
    return r;
}

/* Viridis-like colour of t in [0, 1] (5 stops, linear between them). */
static void heat_color(double t, char out[8])
{
    static const int stop[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98},
                                   {253, 231, 37}};
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double u = t * 4;
    int k = u >= 4 ? 3 : (int)u;
    double f = u - k;
    int rgb[3];
    for (int c = 0; c < 3; c++)
        rgb[c] = (int)lround(stop[k][c] + f * (stop[k + 1][c] - stop[k][c]));
    snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

int km_plot_heatmap_svg(const km_heatmap *h, const char *path, km_error *err)
{
    int nx = h->nx, ny = h->ny;
    if (nx < 1 || ny < 1 || !h->x || !h->y || !h->z || nx > 10000 || ny > 10000)
        return km_error_set(err, KM_EUSAGE, "heat map: needs nx, ny >= 1 and x, y, z");
    for (int i = 0; i < nx; i++)
        if (!isfinite(h->x[i]) || (i && !(h->x[i] > h->x[i - 1])))
            return km_error_set(err, KM_EUSAGE, "heat map: x must be finite and increasing");
    for (int j = 0; j < ny; j++)
        if (!isfinite(h->y[j]) || (j && !(h->y[j] > h->y[j - 1])))
            return km_error_set(err, KM_EUSAGE, "heat map: y must be finite and increasing");
    if (h->best < -1 || h->best >= nx * ny || h->nlevels < 0 || h->nlevels > 50)
        return km_error_set(err, KM_EUSAGE, "heat map: best or nlevels out of range");
    double zlo = INFINITY, zhi = -INFINITY;
    for (int q = 0; q < nx * ny; q++)
        if (isfinite(h->z[q])) {
            zlo = fmin(zlo, h->z[q]);
            zhi = fmax(zhi, h->z[q]);
        }
    const double cell_w = nx > 30 ? 600.0 / nx : 44, cell_h = ny > 30 ? 420.0 / ny : 30;
    double left = (h->ylabel ? 34 : 8) + 56, top = h->title ? 44 : 12;
    double pw = cell_w * nx, ph = cell_h * ny, W = left + pw + 110, H = top + ph + 40 +
                                                                        (h->xlabel ? 22 : 0);
    sbuf b = {0};
    if (reserve(&b, 1 << 16))
        return km_error_nomem(err, "figure");
    put(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%s\" height=\"%s\" "
            "viewBox=\"0 0 %s %s\" font-family=\"sans-serif\" font-size=\"12\">\n",
        fx(W).s, fx(H).s, fx(W).s, fx(H).s);
    if (h->title) {
        put(&b, "<title>");
        put_text(&b, h->title);
        put(&b, "</title>\n");
    }
    put(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n");
    if (h->title) {
        put(&b, "<text x=\"%s\" y=\"26\" text-anchor=\"middle\" font-size=\"15\">",
            fx(W / 2).s);
        put_text(&b, h->title);
        put(&b, "</text>\n");
    }
    /* cells: row j = 0 at the bottom */
    int labels = nx * ny <= 400 && cell_w >= 30;
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            double v = h->z[j * nx + i], x0 = left + i * cell_w, y0 = top + (ny - 1 - j) * cell_h;
            char col[8] = "#cccccc";
            double t = zhi > zlo ? (v - zlo) / (zhi - zlo) : 0.5;
            if (isfinite(v))
                heat_color(t, col);
            put(&b, "<rect class=\"cell\" data-i=\"%d\" data-j=\"%d\" x=\"%s\" y=\"%s\" "
                    "width=\"%s\" height=\"%s\" fill=\"%s\"/>\n", i, j, fx(x0).s, fx(y0).s,
                fx(cell_w).s, fx(cell_h).s, col);
            if (labels && isfinite(v))
                put(&b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" font-size=\"10\" "
                        "fill=\"%s\">%s</text>\n", fx(x0 + cell_w / 2).s,
                    fx(y0 + cell_h / 2 + 4).s, t > 0.6 ? "#000" : "#fff", fnum(v).s);
        }
    /* contour lines: marching squares over the cell centres */
    for (int lv = 1; lv <= h->nlevels && zhi > zlo; lv++) {
        double c = zlo + (zhi - zlo) * lv / (h->nlevels + 1);
        int any = 0;
        for (int j = 0; j + 1 < ny; j++)
            for (int i = 0; i + 1 < nx; i++) {
                double v[4] = {h->z[j * nx + i], h->z[j * nx + i + 1],
                               h->z[(j + 1) * nx + i + 1], h->z[(j + 1) * nx + i]};
                double px[4] = {i, i + 1, i + 1, i}, py[4] = {j, j, j + 1, j + 1};
                if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]) || !isfinite(v[3]))
                    continue;
                double ex[4], ey[4];
                int ne = 0;
                for (int e = 0; e < 4; e++) {   /* edges where the level is crossed */
                    int a = e, d = (e + 1) % 4;
                    if ((v[a] < c) != (v[d] < c)) {
                        double f = (c - v[a]) / (v[d] - v[a]);
                        ex[ne] = px[a] + f * (px[d] - px[a]);
                        ey[ne++] = py[a] + f * (py[d] - py[a]);
                    }
                }
                for (int s = 0; s + 1 < ne; s += 2) {
                    if (!any)
                        put(&b, "<path class=\"contour\" data-level=\"%s\" fill=\"none\" "
                                "stroke=\"#fff\" stroke-width=\"1.2\" d=\"", fnum(c).s);
                    any = 1;
                    put(&b, "M%s %s L%s %s ", fx(left + (ex[s] + 0.5) * cell_w).s,
                        fx(top + (ny - 0.5 - ey[s]) * cell_h).s,
                        fx(left + (ex[s + 1] + 0.5) * cell_w).s,
                        fx(top + (ny - 0.5 - ey[s + 1]) * cell_h).s);
                }
            }
        if (any) {
            trim_space(&b);
            put(&b, "\"/>\n");
        }
    }
    if (h->best >= 0) {
        int i = h->best % nx, j = h->best / nx;
        put(&b, "<circle class=\"best\" cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"none\" "
                "stroke=\"#d62728\" stroke-width=\"2.5\"/>\n", fx(left + (i + 0.5) * cell_w).s,
            fx(top + (ny - 0.5 - j) * cell_h).s, fx(fmin(cell_w, cell_h) / 2 - 1).s);
    }
    put(&b, "<rect class=\"frame\" x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"none\" "
            "stroke=\"#000\"/>\n", fx(left).s, fx(top).s, fx(pw).s, fx(ph).s);
    /* ticks: at most 12 labels an axis */
    int sx = (nx + 11) / 12, sy = (ny + 11) / 12;
    for (int i = 0; i < nx; i += sx)
        put(&b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\">%s</text>\n",
            fx(left + (i + 0.5) * cell_w).s, fx(top + ph + 16).s, fnum(h->x[i]).s);
    for (int j = 0; j < ny; j += sy)
        put(&b, "<text x=\"%s\" y=\"%s\" text-anchor=\"end\">%s</text>\n", fx(left - 6).s,
            fx(top + (ny - 0.5 - j) * cell_h + 4).s, fnum(h->y[j]).s);
    if (h->xlabel) {
        put(&b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\">", fx(left + pw / 2).s,
            fx(top + ph + 36).s);
        put_text(&b, h->xlabel);
        put(&b, "</text>\n");
    }
    if (h->ylabel) {
        put(&b, "<text transform=\"translate(%s %s) rotate(-90)\" text-anchor=\"middle\">",
            fx(16).s, fx(top + ph / 2).s);
        put_text(&b, h->ylabel);
        put(&b, "</text>\n");
    }
    /* colour bar */
    double bx = left + pw + 24, bh = ph < 200 ? ph : 200;
    for (int s = 0; s < 20; s++) {
        char col[8];
        heat_color((19 - s) / 19.0, col);
        put(&b, "<rect x=\"%s\" y=\"%s\" width=\"16\" height=\"%s\" fill=\"%s\"/>\n", fx(bx).s,
            fx(top + s * bh / 20).s, fx(bh / 20 + 0.3).s, col);
    }
    if (zhi >= zlo) {
        put(&b, "<text x=\"%s\" y=\"%s\">%s</text>\n", fx(bx + 20).s, fx(top + 10).s,
            fnum(zhi).s);
        put(&b, "<text x=\"%s\" y=\"%s\">%s</text>\n", fx(bx + 20).s, fx(top + bh).s,
            fnum(zlo).s);
    }
    if (h->zlabel) {
        put(&b, "<text x=\"%s\" y=\"%s\">", fx(bx).s, fx(top + bh + 18).s);
        put_text(&b, h->zlabel);
        put(&b, "</text>\n");
    }
    put(&b, "</svg>\n");
    int rc = b.nomem ? km_error_nomem(err, "figure")
                     : km_write_atomic(path, "figure", write_buffer, &b, err);
    free(b.s);
    return rc;
}
