/* params.c - option values by name (kmtk.h's km_params) and their checks against a
 * method's option table. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "method.h"
#include "numparse.h"
#include "weights.h"

typedef struct entry {
    char *name, *value;
} entry;

struct km_params {
    int n, cap;
    entry *v;
    void (*progress)(void *user, const char *line);
    void *user;
    const km_method *method;   /* set by km_method_train: where defaults come from */
    double *weights;           /* km_params_set_weights: nr_weights instance weights */
    int64_t nr_weights;
    const km_model *init;      /* km_params_set_init: a warm start (borrowed) */
};

km_params *km_params_new(void)
{
    return calloc(1, sizeof(km_params));
}

void km_params_free(km_params *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n; i++) {
        free(p->v[i].name);
        free(p->v[i].value);
    }
    free(p->v);
    free(p->weights);
    free(p);
}

int km_params_set_weights(km_params *p, const double *w, int64_t l, km_error *err)
{
    int rc = w ? km_weights_check(w, l, err) : KM_OK;
    if (rc)
        return rc;
    double *copy = w ? malloc(((size_t)l + 1) * sizeof *copy) : NULL;
    if (w && !copy)
        return km_error_nomem(err, "weights");
    if (w)
        memcpy(copy, w, (size_t)l * sizeof *copy);
    free(p->weights);
    p->weights = copy;
    p->nr_weights = w ? l : 0;
    return KM_OK;
}

void km_params_set_init(km_params *p, const km_model *m)
{
    p->init = m;
}

const km_model *km_params_init(const km_params *p)
{
    return p ? p->init : NULL;
}

const double *km_params_weights(const km_params *p, int64_t *l)
{
    *l = p ? p->nr_weights : 0;
    return p ? p->weights : NULL;
}

km_params *km_params_copy(const km_params *p, km_error *err)
{
    km_params *q = km_params_new();
    for (int i = 0; q && p && i < p->n; i++)
        if (km_params_set(q, p->v[i].name, p->v[i].value, err)) {
            km_params_free(q);
            return NULL;
        }
    if (!q) {
        km_error_nomem(err, "parameters");
        return NULL;
    }
    if (p && p->weights && km_params_set_weights(q, p->weights, p->nr_weights, err)) {
        km_params_free(q);
        return NULL;
    }
    if (p) {
        q->progress = p->progress;
        q->user = p->user;
        q->method = p->method;
        q->init = p->init;
    }
    return q;
}

void km_params_progress(km_params *p, void (*fn)(void *user, const char *line), void *user)
{
    p->progress = fn;
    p->user = user;
}

void km_params_use(const km_params *p, const km_method *m)
{
    if (p)
        ((km_params *)p)->method = m;   /* a cache of where defaults come from */
}

int km_params_set(km_params *p, const char *name, const char *value, km_error *err)
{
    const km_option *o = km_option_find(name);
    if (!o)
        return km_error_set(err, KM_EUSAGE, "unknown option '%s'", name);
    int i = 0;
    if (o->type != KM_OPT_WEIGHT)
        for (i = 0; i < p->n && strcmp(p->v[i].name, o->name) != 0; i++)
            ;
    else
        i = p->n;
    if (i == p->n && p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        entry *grown = realloc(p->v, (size_t)cap * sizeof *grown);
        if (!grown)
            return km_error_nomem(err, "parameters");
        p->v = grown;
        p->cap = cap;
    }
    char *nv = strdup(value), *nn = i == p->n ? strdup(o->name) : NULL;
    if (!nv || (i == p->n && !nn)) {
        free(nv);
        free(nn);
        return km_error_nomem(err, "parameters");
    }
    if (i == p->n) {
        p->v[p->n].name = nn;
        p->v[p->n++].value = nv;
    } else {
        free(p->v[i].value);
        p->v[i].value = nv;
    }
    return KM_OK;
}

const char *km_params_get(const km_params *p, const char *name)
{
    const km_option *o = km_option_find(name);
    const char *key = o ? o->name : name;
    for (int i = p ? p->n - 1 : -1; i >= 0; i--)
        if (strcmp(p->v[i].name, key) == 0)
            return p->v[i].value;
    return NULL;
}

int km_params_each(const km_params *p, int i, const char **name, const char **value)
{
    if (!p || i >= p->n)
        return 0;
    *name = p->v[i].name;
    *value = p->v[i].value;
    return 1;
}

/* The value set, else the default of the option in the method's table. */
static const char *value_of(const km_params *p, const char *name)
{
    const char *v = km_params_get(p, name);
    if (v)
        return v;
    const km_option *o = p && p->method ? km_method_option(p->method, name) : NULL;
    return o ? o->def : NULL;
}

int km_param_is_set(const km_params *p, const char *name)
{
    return km_params_get(p, name) != NULL;
}

double km_param_number(const km_params *p, const char *name)
{
    const char *v = value_of(p, name);
    char *end;
    int ok;
    return v ? km_strtod_c(v, &end, &ok) : NAN;
}

int64_t km_param_int(const km_params *p, const char *name)
{
    const char *v = value_of(p, name);
    return v ? strtoll(v, NULL, 10) : 0;
}

const char *km_param_text(const km_params *p, const char *name)
{
    return value_of(p, name);
}

int km_param_switch(const km_params *p, const char *name)
{
    return km_params_get(p, name) != NULL;
}

const char *km_param_value_at(const km_params *p, const char *name, int i)
{
    for (int q = 0; p && q < p->n; q++)
        if (strcmp(p->v[q].name, name) == 0 && i-- == 0)
            return p->v[q].value;
    return NULL;
}

void km_param_progress(const km_params *p, const char *fmt, ...)
{
    if (!p || !p->progress)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    p->progress(p->user, line);
}

/* ---- checking values ---- */

static int parse_number(const char *s, double *x)
{
    char *end;
    int ok;
    *x = km_strtod_c(s, &end, &ok);
    return ok && end != s && *end == '\0' && isfinite(*x) ? 0 : -1;
}

static int parse_integer(const char *s, long long *x)
{
    char *end;
    errno = 0;
    *x = strtoll(s, &end, 10);
    return errno || end == s || *end ? -1 : 0;
}

/* 1 when word is one of the '|'-separated choices. */
static int is_choice(const char *choices, const char *word)
{
    size_t len = strlen(word);
    for (const char *c = choices; c && *c;) {
        const char *bar = strchr(c, '|');
        size_t cl = bar ? (size_t)(bar - c) : strlen(c);
        if (cl == len && strncmp(c, word, len) == 0 && len > 0)
            return 1;
        c = bar ? bar + 1 : c + cl;
    }
    return 0;
}

int km_range_parse(const char *s, double *lo, double *hi, int *count)
{
    char buf[256];
    long long n;
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    char *c1 = strchr(buf, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2)
        return -1;
    *c1 = *c2 = 0;
    if (parse_number(buf, lo) || parse_number(c1 + 1, hi) || parse_integer(c2 + 1, &n) ||
        n < 1 || n > 100000 || !(*lo > 0) || !(*hi >= *lo) || (n > 1 && !(*hi > *lo)))
        return -1;
    *count = (int)n;
    return 0;
}

void km_param_range(const km_params *p, const char *name, double *lo, double *hi, int *count)
{
    const char *v = value_of(p, name);
    if (!v || km_range_parse(v, lo, hi, count)) {
        *lo = *hi = 0;
        *count = 0;
    }
}

int km_option_check(const km_option *o, const char *v, km_error *err)
{
    double x;
    long long i;
    const char *f = o->flag;
    switch (o->type) {
    case KM_OPT_NUMBER:
        if (parse_number(v, &x))
            return km_error_set(err, KM_EUSAGE, "%s: expected a number, got '%s'", f, v);
        if (x < o->lo || x > o->hi || (o->lo_open && x == o->lo)) {
            const char *what = o->arg ? o->arg : o->name;
            if (o->hi < INFINITY)
                return km_error_set(err, KM_EUSAGE, "%s: %s must be in %s%g, %g], got '%s'", f,
                                    what, o->lo_open ? "(" : "[", o->lo, o->hi, v);
            return km_error_set(err, KM_EUSAGE, "%s: %s must be %s %g, got '%s'", f, what,
                                o->lo_open ? ">" : ">=", o->lo, v);
        }
        return KM_OK;
    case KM_OPT_INT:
        if (parse_integer(v, &i) || (double)i < o->lo || (double)i > o->hi)
            return km_error_set(err, KM_EUSAGE, "%s: expected an integer in [%.0f, %.0f], got "
                                "'%s'", f, o->lo, o->hi, v);
        return KM_OK;
    case KM_OPT_CHOICE:
        if (!is_choice(o->choices, v))
            return km_error_set(err, KM_EUSAGE, "%s: unknown value '%s' (%s)", f, v,
                                o->choices);
        return KM_OK;
    case KM_OPT_RANGE: {
        double lo, hi;
        int n;
        if (km_range_parse(v, &lo, &hi, &n))
            return km_error_set(err, KM_EUSAGE, "%s: expected MIN:MAX:COUNT with 0 < MIN < "
                                "MAX (MIN = MAX only with COUNT 1), got '%s'", f, v);
        return KM_OK;
    }
    case KM_OPT_WEIGHT: {
        const char *colon = strrchr(v, ':');
        char label[128];
        if (!colon || (size_t)(colon - v) >= sizeof label)
            return km_error_set(err, KM_EUSAGE, "%s: expected LABEL:W, got '%s'", f, v);
        memcpy(label, v, (size_t)(colon - v));
        label[colon - v] = '\0';
        if (parse_number(label, &x) || parse_number(colon + 1, &x) || !(x > 0))
            return km_error_set(err, KM_EUSAGE, "%s: the weight of class %s must be a number "
                                "> 0, got '%s'", f, label, colon + 1);
        return KM_OK;
    }
    case KM_OPT_SWITCH:
    case KM_OPT_TEXT:
    case KM_OPT_OUTPUT:
        return KM_OK;
    }
    return KM_OK;
}
