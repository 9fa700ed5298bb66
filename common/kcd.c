/* kcd.c - see kcd.h. */
#include "kcd.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <omp.h>

#include "face.h"
#include "simd.h"
#include "tasks.h"

/* The layout: T blocks of columns, 1 or Tmax (the workers at most). It starts as one block
 * and is cut into Tmax when the team first grows (kcd_split): one worker running Tmax blocks
 * in turn paid 4-8% more CPU than one block (two scans, two half rows, two caches), so a
 * machine that never has a core to spare keeps the one block of -n 1. */
struct km_kcd {
    int64_t m;
    int T, Tmax;
    km_team_policy team;   /* km_kcd_set_team */
    km_kernel k;        /* for the walk's K_WW (km_kernel_block) */
    const km_kdata *X;
    km_kmatrix **K;   /* K[t]: the rows over the columns [lo[t], lo[t + 1]) (Tmax of them) */
    int64_t *lo;
    size_t cache_bytes;   /* -m: also the bound of the walk's stored rows (kcd_walk) */
    int64_t served, computed;   /* the cache statistics of blocks cut up (km_kcd_stats) */
};

void km_kcd_free(km_kcd *W)
{
    if (!W)
        return;
    for (int t = 0; W->K && t < W->T; t++)
        km_kmatrix_free(W->K[t]);
    free(W->K);
    free(W->lo);
    free(W);
}

/* New blocks for a layout of T (1 or W->Tmax): blocks of whole cache lines (lo[0..T]), each
 * with a row cache of cache_bytes / T over its columns, empty. */
static int kcd_blocks(const km_kcd *W, int T, km_kmatrix **K, int64_t *lo, km_error *err)
{
    int64_t m = W->m, *cols = T > 1 ? malloc((size_t)m * sizeof *cols) : NULL;
    if (T > 1 && !cols)
        return km_error_nomem(err, "kernel solver");
    for (int t = 0; t < T; t++)
        lo[t] = t == 0 ? 0 : (m * t / T) & ~(int64_t)7;
    lo[T] = m;
    for (int64_t i = 0; cols && i < m; i++)
        cols[i] = i;
    int rc = KM_OK;
    for (int t = 0; t < T; t++)
        K[t] = NULL;
    for (int t = 0; t < T && rc == KM_OK; t++)
        if (!(K[t] = km_kmatrix_new(&W->k, W->X, W->cache_bytes / (size_t)T, 1, err)) ||
            (T > 1 && km_kmatrix_restrict(K[t], cols + lo[t], lo[t + 1] - lo[t], err)))
            rc = err->code ? err->code : km_error_nomem(err, "kernel solver");
    free(cols);
    for (int t = 0; rc && t < T; t++)
        km_kmatrix_free(K[t]);
    return rc;
}

/* W without blocks (their cache statistics kept). */
static void kcd_drop(km_kcd *W)
{
    for (int t = 0; t < W->T; t++) {
        int64_t sv, cp;
        km_kmatrix_stats(W->K[t], &sv, &cp);
        W->served += sv;
        W->computed += cp;
        km_kmatrix_free(W->K[t]);
    }
    W->T = 0;
}

/* The blocks K[0..T) (kcd_blocks) in place of W's. */
static void kcd_install(km_kcd *W, km_kmatrix **K, const int64_t *lo, int T)
{
    kcd_drop(W);
    memcpy(W->K, K, (size_t)T * sizeof *K);
    memcpy(W->lo, lo, (size_t)(T + 1) * sizeof *lo);
    W->T = T;
}

/* The layout of T blocks, the cached rows dropped (the old cache freed first). */
static int kcd_layout(km_kcd *W, int T, km_error *err)
{
    km_kmatrix *K[64];
    int64_t lo[65];
    kcd_drop(W);
    int rc = kcd_blocks(W, T, K, lo, err);
    if (rc == KM_OK)
        kcd_install(W, K, lo, T);
    return rc;
}

void km_kcd_set_team(km_kcd *W, km_team_policy policy)
{
    W->team = policy;
}

km_kcd *km_kcd_new(const km_kernel *k, const km_kdata *X, size_t cache_bytes, int threads,
                   km_error *err)
{
    int64_t m = km_kdata_size(X);
    int cores = km_cores();   /* more workers than cores only wait */
    int T = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    if (T > cores)
        T = cores;
    if (m < KM_KCD_PAR_MIN)
        T = 1;
    km_kcd *W = calloc(1, sizeof *W);
    if (!W || !(W->K = calloc((size_t)T, sizeof *W->K)) ||
        !(W->lo = malloc((size_t)(T + 1) * sizeof *W->lo))) {
        km_kcd_free(W);
        km_error_nomem(err, "kernel solver");
        return NULL;
    }
    W->m = m;
    W->Tmax = T;
    W->k = *k;
    W->X = X;
    W->cache_bytes = cache_bytes;
    /* one block, unless all of K fits the cache: then each block computes it at once (as
     * km_kmatrix_new does), and cutting one block later would compute it again */
    size_t all;
    int full = !__builtin_mul_overflow((size_t)m * sizeof(double), (size_t)m, &all) &&
               all <= cache_bytes;
    if (kcd_layout(W, full ? T : 1, err)) {
        km_kcd_free(W);
        return NULL;
    }
    return W;
}

void km_kcd_stats(const km_kcd *W, int64_t *served, int64_t *computed)
{
    *served = W->served;
    *computed = W->computed;
    for (int t = 0; t < W->T; t++) {
        int64_t s, c;
        km_kmatrix_stats(W->K[t], &s, &c);
        *served += s;
        *computed += c;
    }
}

/* ---- a barrier for the team: spins briefly, then sleeps on a futex (a waiting worker
 * never holds a core that the one it waits for needs: sched_yield in a loop did, and under
 * another session's load a team burnt up to 7x the CPU of one worker) ---- */
#include <linux/futex.h>
#include <sys/syscall.h>

typedef struct barrier {
    atomic_int count, sense, sleepers;
} barrier;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void futex_wait(atomic_int *a, int val)
{
    syscall(SYS_futex, (int *)a, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake_all(atomic_int *a)
{
    syscall(SYS_futex, (int *)a, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* n: the workers that meet here, the same number in each of them. The spin covers the
 * usual skew between workers of a step (a few microseconds); past it the worker sleeps. */
static void barrier_wait(barrier *b, int *local, int n)
{
    if (n == 1)
        return;
    int s = !*local;
    *local = s;
    if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) == n - 1) {
        atomic_store_explicit(&b->count, 0, memory_order_relaxed);
        atomic_store(&b->sense, s);   /* seq_cst with the sleepers' count: one of us sees */
        if (atomic_load(&b->sleepers) > 0)   /* the other (no lost wake-up) */
            futex_wake_all(&b->sense);
        return;
    }
    for (int spin = 0; spin < 2000; spin++) {
        if (atomic_load_explicit(&b->sense, memory_order_acquire) == s)
            return;
        cpu_relax();
    }
    atomic_fetch_add(&b->sleepers, 1);
    while (atomic_load(&b->sense) != s)
        futex_wait(&b->sense, !s);   /* returns at once if sense is no longer !s */
    atomic_fetch_sub(&b->sleepers, 1);
}

/* ---- the team: how many workers work, as the machine's load asks ----
 * Every KM_KCD_CHECK steps worker 0 times the window just run (wall clock, steps per
 * second). The team runs at its best size, and after `interval` windows (at once when two
 * windows run 30% below the best size's recent rate: the load changed) runs TEAM_TRIAL
 * windows at the other size (all workers, or one); the faster size stays, compared by
 * rates averaged over windows (one window is noisy on a loaded machine). A trial that
 * keeps the size doubles the interval (TEAM_PROBE up to TEAM_PROBE_MAX): a window at the
 * losing size can cost several at the best one (2 workers while another process holds a
 * core: 1/10 to 1/3 of one worker's rate). So the team starts at one worker, and one worker
 * tries all of them only when the machine had CPU to spare since the last look (/proc/stat:
 * idle, or niced work, at least a quarter of its CPUs' time; the first look is at the start,
 * the first trial after TEAM_FIRST windows and at least 0.1 s of a 2-CPU machine; while it
 * works alone, worker 0 also looks between checks, team_early). No trial while every worker
 * had its core through the last window (team_cpu_short: the trials at one worker cost
 * 4-10% of an idle machine's solve). Workers outside the team sleep on a condition
 * variable (a loaded machine gets its core back). */
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#define TEAM_PROBE 16
#define TEAM_PROBE_MAX 512
#define TEAM_FIRST 2
#define TEAM_TRIAL 2

typedef struct loop_state {   /* what every working worker keeps the same */
    int64_t steps, since_shrink;
    int full, buf;
    int restricted;   /* rows over the columns active at the restriction (rcols) */
    /* the walk (kcd_walk): the next stall test, the steps between tests, the gap and the
     * dual G at the last test, CD's decrease of G per step before the last walk */
    int64_t walk_at, walk_every, walk_steps;
    double walk_ref, walk_G, walk_rate;
    double cd_work, walk_work;   /* flops (estimated) of CD's steps and of the walks */
} loop_state;

typedef struct team {
    int T;                     /* workers at most */
    km_team_policy policy;
    int next;                  /* the size worker 0 chose at the last check */
    int best, probing, windows;   /* probing: windows of the trial still to run */
    int interval;                 /* windows at the best size between trials */
    int slow;                     /* windows in a row far below the best size's rate */
    int churned;                  /* KM_TEAM_CHURN: turning (the rows were restricted) */
    unsigned long long idle, total;   /* /proc/stat at the last look (0: unknown) */
    double t_look;                /* team_early's last look at /proc/stat */
    clockid_t clk[64];            /* each worker's CPU clock (set as it starts) */
    double cpu[64];               /* ... at the last check of the whole team */
    int cpu_valid;                /* cpu[] was read at the last check, all workers working */
    double t_last;
    double rate[2];               /* steps per second at one worker [0] and at T [1]:
                                   * a running mean of the last windows at that size */
    int64_t steps_last;
    /* parking */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int size, gen, ended, sense;
    loop_state L;
} team;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void team_destroy(team *tm)
{
    pthread_mutex_destroy(&tm->mu);
    pthread_cond_destroy(&tm->cv);
}

/* 1 when, at this moment, fewer threads are runnable on the machine than the cores the
 * process may run on (/proc/loadavg's running count, this thread included): a core is
 * free. 0 without /proc/loadavg. */
static int core_free_now(void)
{
    for (int look = 0; look < 4; look++) {   /* 4 looks 0.5 ms apart: a moment's other */
        FILE *f = fopen("/proc/loadavg", "r");   /* process does not decide it */
        double l1, l5, l15;
        long running = 0, total;
        int got = f ? fscanf(f, "%lf %lf %lf %ld/%ld", &l1, &l5, &l15, &running, &total) : 0;
        if (f)
            fclose(f);
        if (got != 5)
            return 0;
        if (running >= 1 && running < km_cores())
            return 1;
        nanosleep(&(struct timespec){0, 500000}, NULL);
    }
    return 0;
}

/* 1 when the machine's CPUs were free for us at least a quarter of their time since the
 * last call that could tell (0 at the first call and when too little time has passed; 1
 * without /proc/stat). Free: idle, or running niced work (nice > 0) while we are not niced
 * ourselves, which a second worker would take over. */
static int machine_idle(team *tm)
{
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[8] = {0};
    int got = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                         &v[3], &v[4], &v[5], &v[6], &v[7]) : 0;
    if (f)
        fclose(f);
    if (got < 5)
        return 1;
    errno = 0;
    int prio = getpriority(PRIO_PROCESS, 0);
    unsigned long long idle = v[3] + v[4] + (prio <= 0 && errno == 0 ? v[1] : 0), total = 0;
    for (int i = 0; i < 8; i++)
        total += v[i];
    if (tm->total && total - tm->total < 20)   /* ticks (1/100 s) of all CPUs: too short */
        return 0;
    int yes = tm->total && 4 * (idle - tm->idle) >= total - tm->total;
    tm->idle = idle;
    tm->total = total;
    return yes;
}

static void team_init(team *tm, int T, km_team_policy policy)
{
    memset(tm, 0, sizeof *tm);
    tm->T = T;
    tm->policy = policy;
    tm->next = tm->best = tm->size = policy == KM_TEAM_ALL ? T : 1;
    tm->interval = TEAM_FIRST;
    tm->t_last = now_s();
    machine_idle(tm);   /* the first look: the first trial compares with it */
    pthread_mutex_init(&tm->mu, NULL);
    pthread_cond_init(&tm->cv, NULL);
}

static double clock_s(clockid_t clk)
{
    struct timespec ts;
    if (clock_gettime(clk, &ts) != 0)
        return -1;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Worker 0 at a check of the whole team, dt seconds after the last: 1 when a worker ran
 * less than 85% of dt (another process takes its core: a hog shares 2 cores 3 ways, 67%;
 * a worker waiting at a barrier spins first), 0 when all ran, -1 when unknown (the first
 * check at this size, or no per-thread clocks). */
static int team_cpu_short(team *tm, double dt)
{
    int valid = tm->cpu_valid, shy = 0;
    tm->cpu_valid = 1;
    for (int w = 0; w < tm->T; w++) {
        double c = clock_s(tm->clk[w]);
        if (c < 0)
            tm->cpu_valid = 0;
        shy |= c - tm->cpu[w] < 0.85 * dt;
        tm->cpu[w] = c;
    }
    return valid && tm->cpu_valid ? shy : -1;
}

/* Worker 0 while it works alone at the end of a step (every 16): 1 when the team should
 * try all workers now, without waiting for the next check: the machine had CPU to spare
 * since the last look (machine_idle, at least 0.1 s on 2 CPUs). The first windows of a
 * solve compute whole rows (ijcnn1: 512 steps took 0.5 s) and a trial at one worker ends
 * here too. The trial's rate counts from this step. */
static int team_early(team *tm, int64_t steps)
{
    if (tm->policy != KM_TEAM_AUTO || tm->T == 1 || tm->probing || tm->best != 1)
        return 0;
    double t = now_s();   /* /proc/stat read at most every 50 ms (a read costs ~30 us) */
    if (t - tm->t_look < 0.05)
        return 0;
    tm->t_look = t;
    if (!machine_idle(tm))
        return 0;
    tm->probing = TEAM_TRIAL;
    tm->slow = 0;
    tm->windows = 0;
    tm->rate[1] = 0;
    tm->next = tm->T;
    tm->t_last = t;
    tm->steps_last = steps;
    tm->cpu_valid = 0;
    return 1;
}

/* Worker 0 at a check, the team of size nw having run since the last: sets tm->next. */
static void team_decide(team *tm, int64_t steps, int nw, int restricted)
{
    if (tm->T == 1 || tm->policy == KM_TEAM_ALL)
        return;
    if (tm->policy == KM_TEAM_CHURN) {   /* (the first growth once the rows are restricted) */
        tm->churned |= restricted || steps >= 4 * KM_KCD_SHRINK;
        tm->next = nw == 1 && tm->churned ? tm->T : 1;
        return;
    }
    double t = now_s(), dt = t - tm->t_last;
    int64_t ds = steps - tm->steps_last;
    tm->t_last = t;
    tm->steps_last = steps;
    if (ds < KM_KCD_CHECK / 2 || dt <= 0)   /* a short window (an early check): no verdict */
        return;
    double rate = (double)ds / dt;
    int k = nw == tm->T, kb = tm->best == tm->T, other = tm->best == tm->T ? 1 : tm->T;
    int busy = k ? team_cpu_short(tm, dt) : -1;   /* 0: every worker had its core */
    /* two windows in a row 30% below the best size's recent rate: the load changed */
    int slow = !tm->probing && k == kb && tm->rate[kb] > 0 && rate < 0.7 * tm->rate[kb];
    tm->slow = slow ? tm->slow + 1 : 0;
    int sudden = tm->slow >= 2;
    tm->rate[k] = tm->rate[k] > 0 ? 0.5 * tm->rate[k] + 0.5 * rate : rate;
    if (!tm->probing && k && kb && busy == 0) {   /* every worker had its core: no trial */
        tm->windows = 0;
        tm->slow = 0;
        tm->next = tm->best;
        return;
    }
    if (tm->probing) {   /* a window of the trial at the other size */
        if (--tm->probing > 0) {
            tm->next = nw;
            return;
        }
        int keep = !(tm->rate[k] > 1.1 * tm->rate[kb]);
        tm->best = keep ? tm->best : nw;
        tm->interval = keep && tm->interval < TEAM_PROBE_MAX ? 2 * tm->interval : TEAM_PROBE;
        tm->windows = 0;
        tm->next = tm->best;
        return;
    }
    if ((++tm->windows >= tm->interval || sudden) && tm->best == 1 && !machine_idle(tm)) {
        tm->windows = 0;   /* no core to spare: no trial of all workers */
        tm->next = tm->best;
    } else if (tm->windows >= tm->interval || sudden) {
        tm->probing = TEAM_TRIAL;
        tm->slow = 0;
        tm->rate[!kb] = 0;   /* the trial measures afresh */
        tm->next = other;
    } else {
        tm->next = tm->best;
    }
}

/* Every working worker at the end of a step where the size changes from *nw to next:
 * worker 0 hands the state to the workers who join and wakes them, then all meet once (the
 * writes of those who leave are seen by those who stay). */
static void team_resize(team *tm, int w, int *nw, int next, const loop_state *L, int *sense,
                        barrier *bar, int *gen)
{
    if (w == 0) {   /* published before anyone can pass the barrier below and park */
        pthread_mutex_lock(&tm->mu);
        tm->cpu_valid = 0;   /* the workers' CPU counts again from the next check */
        tm->size = next;
        tm->L = *L;
        tm->sense = *nw > 1 ? !*sense : *sense;   /* the sense after that barrier */
        tm->gen++;
        pthread_cond_broadcast(&tm->cv);
        pthread_mutex_unlock(&tm->mu);
    }
    barrier_wait(bar, sense, *nw);
    ++*gen;   /* every working worker counts the turns, as worker 0 did */
    *nw = next;
}

/* A worker outside the team: sleeps until it is in again (then takes the team's state;
 * returns 0) or the solve ends (returns 1). */
static int team_park(team *tm, int w, int *nw, loop_state *L, int *sense, int *gen)
{
    pthread_mutex_lock(&tm->mu);
    while (!tm->ended && (tm->gen == *gen || w >= tm->size))
        pthread_cond_wait(&tm->cv, &tm->mu);
    *gen = tm->gen;
    int ended = tm->ended;
    *nw = tm->size;
    *L = tm->L;
    *sense = tm->sense;
    pthread_mutex_unlock(&tm->mu);
    return ended;
}

/* Worker 0 when the solve ends: wakes the sleepers to leave. */
static void team_end(team *tm)
{
    pthread_mutex_lock(&tm->mu);
    tm->ended = 1;
    pthread_cond_broadcast(&tm->cv);
    pthread_mutex_unlock(&tm->mu);
}

/* ---- one coordinate ----
 * The exact step on coordinate i: cn = S_i(z_i/k_ii - c_i) (Table 2.1's resolvent, alpha =
 * 1/k_ii), ranked by |h| (gradient) or by the decrease of the dual D(c) = c'Kc/2 +
 * sum_i phi_i(c_i), phi_i(c) = C_i L*(y_i, -c/C_i) (km_loss_conj):
 *   D(c) - D(c + h e_i) = -(z_i h + k_ii h^2/2 + phi_i(c_i + h) - phi_i(c_i)),
 * computed as -h (g + k' h/2) with g = z_i - y_i + (c_i/(2C_i) for l2svm, c_i/C_i for rls)
 * and k' = k_ii + (1/(2C_i), 1/C_i), minus eps (|c_i + h| - |c_i|) for svr: the gradient
 * of the smooth part once, not z_i h and y_i h apart (their difference cancels); logistic:
 * -h (z_i + k_ii h/2) - (phi_i(c_i + h) - phi_i(c_i)), phi_i by km_loss_conj.
 */

/* The best coordinate of a thread's active set, its step, and the largest |h| there. */
typedef struct cand {
    double rank, cn, h, maxh;
    int64_t i, na, k;   /* k: i's place in its block's active list */
} cand;

typedef struct kshared {
    const double *y, *C, *alpha, *kii;
    double *c, *z;
    km_loss loss;
    km_rule rule;
    double eps;
    int64_t m;
    /* y, alpha, C, k_ii and c of the active coordinates packed in their order (block b's
     * at act + lo[b] stand at + lo[b]): the scan reads them in a row, gathers z alone */
    double *py, *pa, *pC, *pk, *pc;
} kshared;

/* Packs the data of act[0..na) at offset off (after every change of the active set). */
static void pack(const kshared *S, const int64_t *act, int64_t na, int64_t off)
{
    for (int64_t k = 0; k < na; k++) {
        int64_t i = act[k];
        S->py[off + k] = S->y[i];
        S->pa[off + k] = S->alpha[i];
        S->pC[off + k] = S->C[i];
        S->pk[off + k] = S->kii[i];
        S->pc[off + k] = S->c[i];
    }
}

static inline double clamp(double u, double lo, double hi)
{
    u = u < lo ? lo : u;
    return u > hi ? hi : u;
}

/* The resolvent of km_loss_resolvent without the branches (the same values, up to the sign
 * of a zero), for loops the compiler vectorises. */
static inline __attribute__((always_inline)) double
resolvent_flat(km_loss loss, double y, double v, double a, double Ci, double eps)
{
    switch (loss) {
    case KM_LOSS_L1SVM:
        return y * clamp(a - y * v, 0, Ci);
    case KM_LOSS_L2SVM: {
        double u = a - y * v;
        return y * (u > 0 ? u : 0) / (1 + a / (2 * Ci));
    }
    case KM_LOSS_RLS:
        return (a * y - v) / (1 + a / Ci);
    case KM_LOSS_RLA: {
        double u = a * y - v;
        return copysign(fabs(u) < Ci ? fabs(u) : Ci, u);
    }
    case KM_LOSS_LOGISTIC:   /* Newton on the 1-D dual (loss.h): not branch-free */
        return km_logistic_resolvent(y, v, a, Ci, 0, 1e-5);
    default: {   /* svr */
        double u = a * y - v;
        return copysign(clamp(fabs(u) - a * eps, 0, Ci), u);
    }
    }
}

/* Phase 1 of a scan: rank[k] and cn[k] of the coordinates act[0..na); returns max |h|,
 * *top the largest rank (0 if none is positive). */
static inline __attribute__((always_inline)) double
rank_t(km_loss loss, km_rule rule, const kshared *S, const double *restrict z,
       const int64_t *restrict zix, int64_t na, int64_t off, double *restrict rank,
       double *restrict cnv, double *top)
{
    const double *restrict y = S->py + off, *restrict c = S->pc + off;
    const double *restrict al = S->pa + off, *restrict kii = S->pk + off;
    const double *restrict C = S->pC + off;
    double eps = S->eps, maxh = 0, best = 0;
    #pragma omp simd reduction(max : maxh, best)
    for (int64_t k = 0; k < na; k++) {
        double yi = y[k], zi = z[zix[k]], ci = c[k], a = al[k], Ci = C[k];
        double c1 = resolvent_flat(loss, yi, zi * a - ci, a, Ci, eps);
        double h = c1 - ci, r;
        if (rule == KM_RULE_GRADIENT) {
            r = fabs(h);
        } else {   /* -h (g + k' h/2) (- the kink of svr); see the comment above */
            double g = zi - yi, kk = kii[k];
            if (loss == KM_LOSS_LOGISTIC) {   /* phi has no -y c part: below */
                g = zi;
            } else if (loss == KM_LOSS_L2SVM) {
                g += ci / (2 * Ci);
                kk += 1 / (2 * Ci);
            } else if (loss == KM_LOSS_RLS) {
                g += ci / Ci;
                kk += 1 / Ci;
            }
            r = -h * (g + kk * h / 2);
            if (loss == KM_LOSS_SVR)
                r -= eps * (fabs(c1) - fabs(ci));
            if (loss == KM_LOSS_LOGISTIC)
                r -= km_loss_conj(loss, yi, c1, Ci, eps) - km_loss_conj(loss, yi, ci, Ci, eps);
        }
        r = h != 0 ? r : 0;
        rank[k] = r;
        best = r > best ? r : best;
        cnv[k] = c1;
        double ah = fabs(h);
        maxh = ah > maxh ? ah : maxh;
    }
    *top = best;
    return maxh;
}

KM_VECTOR_CLONES
static double rank_all(const kshared *S, const double *z, const int64_t *zix, int64_t na,
                       int64_t off, double *rank, double *cnv, double *top)
{
#define KCD_CASE(L)                                                                        \
    case L:                                                                                \
        return S->rule == KM_RULE_GRADIENT                                                 \
                   ? rank_t(L, KM_RULE_GRADIENT, S, z, zix, na, off, rank, cnv, top)       \
                   : rank_t(L, KM_RULE_GREEDY, S, z, zix, na, off, rank, cnv, top);
    switch (S->loss) {
    KCD_CASE(KM_LOSS_L1SVM)
    KCD_CASE(KM_LOSS_L2SVM)
    KCD_CASE(KM_LOSS_RLS)
    KCD_CASE(KM_LOSS_RLA)
    KCD_CASE(KM_LOSS_LOGISTIC)
    default:
    KCD_CASE(KM_LOSS_SVR)
    }
#undef KCD_CASE
}

/* The first k with rank[k] == top (-1 if top is not positive). */
static int64_t first_of(const double *rank, int64_t n, double top)
{
    if (!(top > 0))
        return -1;
    for (int64_t k = 0; k < n; k++)
        if (rank[k] == top)
            return k;
    return -1;
}

/* A thread's best coordinate (act increasing: ties keep the smallest index); work holds
 * 2 na doubles. */
/* z of act[k] is z[zix[k]] (z, act: unrestricted; a block's compact z and positions:
 * restricted). */
static void scan(const kshared *S, const int64_t *act, int64_t na, int64_t off,
                 const double *z, const int64_t *zix, double *work, cand *out)
{
    double *rank = work, *cnv = work + na;
    double top;
    out->maxh = rank_all(S, z, zix, na, off, rank, cnv, &top);
    int64_t k = first_of(rank, na, top);
    out->na = na;
    out->i = k >= 0 ? act[k] : -1;
    out->rank = k >= 0 ? rank[k] : 0;
    out->cn = k >= 0 ? cnv[k] : 0;
    out->h = k >= 0 ? cnv[k] - S->c[act[k]] : 0;
    out->k = k;
}

/* z[q] += h row[q], q < n (vectorised: the scalar loop was 40% of a solve). */
KM_VECTOR_CLONES
static void axpy_row(double *restrict z, const double *restrict row, double h, int64_t n)
{
    #pragma omp simd
    for (int64_t q = 0; q < n; q++)
        z[q] += h * row[q];
}

/* Drops from act[0..*na) (order kept) the coordinates that do not move and are stuck on a
 * flat piece of S_i deeper than maxh, the largest step of the active set. */
static void shrink(const kshared *S, int64_t *act, int64_t *na, double maxh, char *out_of)
{
    int64_t keep = 0;
    for (int64_t k = 0; k < *na; k++) {
        int64_t i = act[k];
        double stuck;
        double cn = km_loss_resolvent(S->loss, S->y[i], S->z[i] * S->alpha[i] - S->c[i],
                                      S->alpha[i], S->C[i], S->eps, &stuck);
        if (!(cn == S->c[i] && stuck > maxh))
            act[keep++] = i;
        else
            out_of[i] = 1;
    }
    *na = keep;
}

/* The gap terms of km_cd_gap_terms over [lo, hi), and separately the gap part of the
 * coordinates not shrunk (out[2]); in increasing order, so the same bits for any team. */
static void gap_terms(const kshared *S, const char *out_of, int64_t lo, int64_t hi,
                      double out[3])
{
    double F = 0, G = 0, A = 0;
    for (int64_t i = lo; i < hi; i++) {
        double Li = S->C[i] * km_loss_value(S->loss, S->y[i], S->z[i], S->eps);
        double cz = S->c[i] * S->z[i];
        double g = Li + km_loss_conj(S->loss, S->y[i], S->c[i], S->C[i], S->eps) + cz;
        F += Li + cz / 2;
        G += g;
        A += out_of[i] ? 0 : g;
    }
    out[0] = F;
    out[1] = G;
    out[2] = A;
}

/* Columns: a block's rows are restricted to its active columns (rcols, n of them) once the
 * active set is at most KM_KCD_RESTRICT of all: shorter rows, more of them in the cache.
 * Then z is kept on those columns only; c0 is c at the restriction. */
#define KM_KCD_RESTRICT 0.5

typedef struct kblocks {
    const km_kcd *W;
    double *z;                /* the solver's z */
    double *zr;               /* + lo[b]: z over block b's rcols while restricted (the rows' */
    int64_t *ppos;            /* layout: a contiguous update); ppos + lo[b]: act's places */
    int64_t *rcols, *nrc;     /* rcols + lo[b]: block b's columns, nrc[b] of them */
    double *c0;
    int64_t *chi;             /* per block (+ b m): the coefficients changed since c0 */
    double *chv;
    int64_t *outc;            /* + lo[b]: the columns of block b outside rcols */
} kblocks;

static int block_restrict(kblocks *Bk, int b, const int64_t *act, int64_t na, const double *c,
                          km_error *err)
{
    int64_t lo = Bk->W->lo[b], hi = Bk->W->lo[b + 1];
    memcpy(Bk->rcols + lo, act, (size_t)na * sizeof *act);
    Bk->nrc[b] = na;
    for (int64_t t = 0; t < na; t++)
        Bk->zr[lo + t] = Bk->z[act[t]];
    memcpy(Bk->c0 + lo, c + lo, (size_t)(hi - lo) * sizeof *c);
    return km_kmatrix_restrict(Bk->W->K[b], Bk->rcols + lo, na, err);
}

/* z[rcols] = the compact z of block b (before z is read there: the gap, shrinking, the
 * end of the restriction). */
static void block_sync(kblocks *Bk, int b)
{
    int64_t lo = Bk->W->lo[b];
    const int64_t *rc = Bk->rcols + lo;
    for (int64_t t = 0; t < Bk->nrc[b]; t++)
        Bk->z[rc[t]] = Bk->zr[lo + t];
}

/* ppos + lo[b]: the place in rcols of each of act[0..na) (both increasing). */
static void block_places(kblocks *Bk, int b, const int64_t *act, int64_t na)
{
    int64_t lo = Bk->W->lo[b], t = 0;
    const int64_t *rc = Bk->rcols + lo;
    for (int64_t k = 0; k < na; k++) {
        while (rc[t] != act[k])
            t++;
        Bk->ppos[lo + k] = t;
    }
}

/* Makes z exact on block b's columns outside rcols (z there is z at the restriction: add
 * K (c - c0) over them, the changed coefficients in increasing order) and gives the rows
 * back all the block's columns. */
static int block_restore(kblocks *Bk, int b, const double *c, double *z, int64_t m,
                         km_error *err)
{
    const km_kcd *W = Bk->W;
    int64_t lo = W->lo[b], hi = W->lo[b + 1], nout = 0, nch = 0;
    block_sync(Bk, b);
    int64_t *chi = Bk->chi + (size_t)b * (size_t)m, *outc = Bk->outc + lo;
    double *chv = Bk->chv + (size_t)b * (size_t)m;
    for (int64_t i = 0; i < m; i++)
        if (c[i] != Bk->c0[i]) {
            chi[nch] = i;
            chv[nch++] = c[i] - Bk->c0[i];
        }
    const int64_t *rc = Bk->rcols + lo;
    for (int64_t j = lo, t = 0; j < hi; j++) {
        if (t < Bk->nrc[b] && rc[t] == j)
            t++;
        else
            outc[nout++] = j;
    }
    double *zout = malloc((size_t)(nout > 0 ? nout : 1) * sizeof *zout);
    if (!zout)
        return km_error_nomem(err, "kernel solver");
    for (int64_t k = 0; k < nout; k++)
        zout[k] = z[outc[k]];
    int rc2 = km_kmatrix_addmul(W->K[b], chi, chv, nch, outc, nout, zout, err);
    for (int64_t k = 0; rc2 == KM_OK && k < nout; k++)
        z[outc[k]] = zout[k];
    free(zout);
    if (rc2)
        return rc2;
    for (int64_t j = lo; j < hi; j++)
        outc[j - lo] = j;
    return km_kmatrix_restrict(W->K[b], W->T > 1 ? outc : NULL, W->T > 1 ? hi - lo : 0, err);
}

/* The coordinates of [lo, hi) that can move (k_ii > 0), in increasing order. */
static int64_t all_active(const kshared *S, int64_t lo, int64_t hi, int64_t *act,
                          char *out_of)
{
    int64_t na = 0;
    for (int64_t i = lo; i < hi; i++) {
        out_of[i] = 0;
        if (S->alpha[i] > 0)
            act[na++] = i;
    }
    return na;
}

/* The first worker to fail hands its error to the caller; the next barrier ends the team. */
static void fail_once(atomic_int *failed, km_error *err, const km_error *e)
{
    int zero = 0;
    if (atomic_compare_exchange_strong(failed, &zero, 1))
        *err = *e;
}

/* ---- the walk (face.h, km_face_kwalk): Newton steps on the free coefficients when the gap
 * stalls ----
 * Tested every KM_FACE_EVERY sweeps' worth of steps (m each) under the gap rule: when the
 * gap has not fallen below KM_FACE_STALL = 2^-1/4 of its value at the last test, a walk on
 * W = the active coefficients km_face_piece lets move (inside a piece, or on a bound with
 * the gradient pointing in): up to KM_KWALK_MAX of them with K_WW copied from the solver's
 * rows and a Cholesky factor, more through products with K_WW by conjugate gradients (rows
 * stored up to -m bytes, the rest computed at each product); mu = KM_FACE_MU times the mean
 * k_ii of W, at most KM_FACE_SWEEPS sweeps' worth of flops; then z += K (change) over every
 * block's columns (the compact z while restricted). A walk whose decrease of G per flop is
 * below CD's over the interval before doubles the interval (a paying one resets it).
 * Worker 0 walks while the others wait: the same bits for any team. */
#ifndef KM_KWALK_AFTER
#define KM_KWALK_AFTER 1
#endif
#ifndef KM_KWALK_SHARE
#define KM_KWALK_SHARE 16
#endif

typedef struct wcand {
    double key;
    int64_t i;
} wcand;

static int wcand_cmp(const void *x, const void *y)   /* key down, then index up */
{
    const wcand *p = x, *q = y;
    if (p->key != q->key)
        return p->key > q->key ? -1 : 1;
    return (p->i > q->i) - (p->i < q->i);
}

static int wcand_by_index(const void *x, const void *y)
{
    const wcand *p = x, *q = y;
    return (p->i > q->i) - (p->i < q->i);
}

/* K_WW for the conjugate-gradient walk (km_face_kop): the first R rows of K_WW (W in
 * increasing order) stored, gathered from the solver's rows (at most -m bytes), the others
 * computed afresh at each product by km_kmatrix_addmul over W's columns of each block (the
 * exact path: the values of the rows CD adds to z, bit for bit). A product sums the rows in
 * W's order (y_j += x_k K_kj, k increasing), whatever the blocks: the same bits for any
 * team. With the linear kernel (wf != NULL, R = 0) a product goes through the features:
 * K_WW x = X_W (X_W' x) + b^2 (sum x) 1 (k(x, x') = x'x' + b^2), 2 nnz(X_W) flops instead of
 * nw^2 values: w = sum_k x_k x_(W_k) (k increasing), then y_j = x_(W_j)'w, sparse row by
 * row; a column k is y_j = x_(W_j)'x_(W_k) + b^2 the same way. Its values differ from the
 * rows' in the last bits (another summation), but it is the Gram matrix of the rows of
 * X_W as computed: p'K_WW p = ||X_W'p||^2 + b^2 (sum p)^2 >= 0 up to the rounding of w. */
typedef struct wop {
    const km_kcd *W;
    const int64_t *Wi;
    int64_t nw, R;
    const double *rows;       /* R x nw */
    const int64_t *bfirst;    /* W's places of block b: [bfirst[b], bfirst[b + 1]) */
    int64_t *ri;              /* scratch: rows not stored, and their coefficients */
    double *rc;
    km_error *err;
    double *wf;               /* linear kernel: w, one value per feature (0 between uses) */
} wop;

/* x_(W_j)'w + b^2 s for j < nw (the linear kernel's product) */
static void wop_dots(const wop *o, double s, double *y)
{
    double off = o->W->k.offset;
    for (int64_t j = 0; j < o->nw; j++) {
        const int32_t *ix;
        const double *vx;
        int64_t nx = km_kdata_row(o->W->X, o->Wi[j], &ix, &vx);
        double t = 0;
        for (int64_t q = 0; q < nx; q++)
            t += vx[q] * o->wf[ix[q]];
        y[j] = off != 0 ? t + off * s : t;
    }
}

/* w += sum_k x_k x_(W_k) over k with x_k != 0 (k increasing), or (clear) w's entries of
 * those rows set to 0 again; returns sum_k x_k */
static double wop_scatter(const wop *o, const double *x, int clear)
{
    double s = 0;
    for (int64_t k = 0; k < o->nw; k++)
        if (x[k] != 0) {
            const int32_t *ix;
            const double *vx;
            int64_t nx = km_kdata_row(o->W->X, o->Wi[k], &ix, &vx);
            if (clear)
                for (int64_t q = 0; q < nx; q++)
                    o->wf[ix[q]] = 0;
            else
                for (int64_t q = 0; q < nx; q++)
                    o->wf[ix[q]] += x[k] * vx[q];
            s += x[k];
        }
    return s;
}

static int wop_rest(wop *o, int64_t nr, double *y, double *work)
{
    for (int b = 0; b < o->W->T && nr > 0; b++) {
        int64_t f = o->bfirst[b], nc = o->bfirst[b + 1] - f;
        if (nc > 0 && km_kmatrix_addmul(o->W->K[b], o->ri, o->rc, nr, o->Wi + f, nc, y + f,
                                        o->err))
            return -1;
    }
    *work += (double)nr * (double)o->nw;   /* kernel values */
    return 0;
}

static int wop_mul(void *u, const double *x, double *y, double *work)
{
    wop *o = u;
    int64_t nw = o->nw, nr = 0;
    if (o->wf) {   /* X_W (X_W' x) + b^2 (sum x) 1 */
        wop_dots(o, wop_scatter(o, x, 0), y);
        wop_scatter(o, x, 1);
        return 0;
    }
    memset(y, 0, (size_t)nw * sizeof *y);
    for (int64_t k = 0; k < o->R; k++)
        if (x[k] != 0)
            axpy_row(y, o->rows + (size_t)k * (size_t)nw, x[k], nw);
    for (int64_t k = o->R; k < nw; k++)
        if (x[k] != 0) {
            o->ri[nr] = o->Wi[k];
            o->rc[nr++] = x[k];
        }
    return wop_rest(o, nr, y, work);
}

static int wop_col(void *u, int64_t k, double *out, double *work)
{
    wop *o = u;
    if (o->wf) {   /* X_W x_(W_k) + b^2 */
        const int32_t *ix;
        const double *vx;
        int64_t nx = km_kdata_row(o->W->X, o->Wi[k], &ix, &vx);
        for (int64_t q = 0; q < nx; q++)
            o->wf[ix[q]] = vx[q];
        wop_dots(o, 1, out);
        for (int64_t q = 0; q < nx; q++)
            o->wf[ix[q]] = 0;
        *work += (double)o->nw;   /* kernel values */
        return 0;
    }
    if (k < o->R) {
        memcpy(out, o->rows + (size_t)k * (size_t)o->nw, (size_t)o->nw * sizeof *out);
        return 0;
    }
    memset(out, 0, (size_t)o->nw * sizeof *out);
    o->ri[0] = o->Wi[k];
    o->rc[0] = 1;
    return wop_rest(o, 1, out, work);
}

/* The walk over the active sets act + lo[b] (z exact there); *gain, *work: its decrease of
 * G and its flops. W is every coefficient km_face_piece lets move: at most KM_KWALK_MAX of
 * them take the dense path (K_WW copied, Cholesky), more the conjugate-gradient one (wop)
 * when each has curvature d > 0 (rls, l2svm: K_WW + D is then conditioned for CG); without
 * (l1svm, rla, svr: K_WW + mu I, condition ~1e9 and more) the dense path takes the
 * KM_KWALK_MAX inside their pieces first, then the steepest.
 * A K found not positive semidefinite at working precision (km_face_kwalk returns 1, only
 * for losses with curvature: rls, l2svm) is KM_EINPUT. */
static int kcd_walk(const km_kcd *W, const kshared *S, kblocks *Bk, const int64_t *act,
                    const int64_t *na_blk, int restricted, double budget, double *gain,
                    double *work, km_error *err)
{
    int64_t m = W->m, nc = 0;
    int flat = 0;   /* a candidate without curvature (d = 0) */
    *gain = 0;
    *work = 0;
    size_t len = (size_t)(m > 0 ? m : 1);
    wcand *cd = malloc(len * sizeof *cd);
    double *pc = malloc(4 * len * sizeof *pc);   /* lo, hi, a, d of each candidate, by i */
    int64_t *Wi = NULL, *cols = NULL, *ri = NULL;
    double *K = NULL, *v = NULL, *wf = NULL;
    int rc = KM_OK;
    if (!cd || !pc) {
        rc = km_error_nomem(err, "kernel walk");
        goto out;
    }
    double *plo = pc, *phi = pc + len, *pa = pc + 2 * len, *pd = pc + 3 * len;
    for (int b = 0; b < W->T; b++)
        for (int64_t q = 0; q < na_blk[b]; q++) {
            int64_t i = act[W->lo[b] + q];
            double ci = S->c[i], zi = S->z[i];
            if (!km_face_piece(S->loss, S->y[i], S->C[i], S->eps, ci, zi, &plo[i], &phi[i],
                               &pa[i], &pd[i]))
                continue;
            cd[nc].i = i;
            cd[nc++].key = plo[i] < ci && ci < phi[i] ? INFINITY
                                                       : fabs(zi + pa[i] + pd[i] * ci);
            flat |= !(pd[i] > 0);
        }
    if (nc == 0)
        goto out;
    int64_t nw = nc;
    int dense = nw <= KM_KWALK_MAX || flat;
    if (nw > KM_KWALK_MAX && flat) {   /* the inside ones, then the steepest */
        qsort(cd, (size_t)nc, sizeof *cd, wcand_cmp);
        nw = KM_KWALK_MAX;
    }
    qsort(cd, (size_t)nw, sizeof *cd, wcand_by_index);
    size_t n = (size_t)nw;
    /* the CG path stores R rows of K_WW, at most -m bytes; none with the linear kernel (its
     * products go through the features) */
    int feat = !dense && W->k.type == KM_KERNEL_LINEAR;
    int64_t R = dense ? nw : feat ? 0 : (int64_t)(W->cache_bytes / (sizeof(double) * n));
    R = R > nw ? nw : R;
    Wi = malloc(n * sizeof *Wi);
    cols = malloc(len * sizeof *cols);
    K = malloc((size_t)R * n * sizeof *K + 1);
    v = malloc((dense ? 7 : 8) * n * sizeof *v);
    ri = dense ? NULL : malloc(n * sizeof *ri);
    if (feat)
        wf = calloc((size_t)km_kdata_features(W->X) + 1, sizeof *wf);
    if (!Wi || !cols || !K || !v || (!dense && !ri) || (feat && !wf)) {
        rc = km_error_nomem(err, "kernel walk");
        goto out;
    }
    double *lo = v, *hi = lo + n, *a = hi + n, *d = a + n, *c = d + n, *zW = c + n,
           *dc = zW + n;
    double tr = 0;
    for (int64_t k = 0; k < nw; k++) {
        int64_t i = cd[k].i;
        Wi[k] = i;
        lo[k] = plo[i];
        hi[k] = phi[i];
        a[k] = pa[i];
        d[k] = pd[i];
        c[k] = S->c[i];
        zW[k] = S->z[i];
        tr += S->kii[i];
    }
    /* rows 0..R-1 of K_WW: the values of the rows CD adds to z (a fresh evaluation by
     * another path may differ in the last bits, which on badly conditioned kernels is more
     * than the curvature of the dual) */
    int64_t bfirst[65];
    for (int b = 0; b < W->T; b++) {
        int64_t lo_b = W->lo[b], hi_b = W->lo[b + 1], k0 = 0, k1, t = 0;
        while (k0 < nw && Wi[k0] < lo_b)
            k0++;
        bfirst[b] = k0;
        for (k1 = k0; k1 < nw && Wi[k1] < hi_b; k1++) {   /* W's places in the rows */
            if (restricted) {
                const int64_t *rcb = Bk->rcols + lo_b;
                while (rcb[t] != Wi[k1])
                    t++;
                cols[k1] = t;
            } else {
                cols[k1] = Wi[k1] - lo_b;
            }
        }
        for (int64_t k = 0; k < R && k1 > k0; k++) {
            const double *row = km_kmatrix_row(W->K[b], Wi[k], err);
            if (!row) {
                rc = err->code;
                goto out;
            }
            for (int64_t q = k0; q < k1; q++)
                K[(size_t)k * n + (size_t)q] = row[cols[q]];
        }
        *work += (double)R * (double)(restricted ? Bk->nrc[b] : hi_b - lo_b);
    }
    bfirst[W->T] = nw;
    wop o = {W, Wi, nw, R, K, bfirst, ri, v + 7 * n, err, wf};
    km_face_kop op = {wop_mul, wop_col, &o};
    double mu = KM_FACE_MU * tr / (double)nw, curv[2];
    int kr = km_face_kwalk(nw, dense ? K : NULL, &op, lo, hi, a, d, mu, budget, c, zW, gain,
                           work, curv);
    if (kr == 1) {
        rc = km_error_set(err, KM_EINPUT, "the kernel matrix is not positive semidefinite at "
                          "working precision: its curvature along a direction of %lld free "
                          "coefficients is %.3g, against the loss's %.3g (K's rounding "
                          "errors exceed it; the dual is not convex as computed and cannot "
                          "converge); scale the features (kmtk-scale), or lower the degree "
                          "or gamma", (long long)nw, curv[0], curv[1]);
        goto out;
    }
    if (kr) {
        rc = err->code ? err->code : km_error_nomem(err, "kernel walk");
        goto out;
    }
    int64_t nch = 0;   /* the changes, in increasing order: z += K (change) */
    for (int64_t k = 0; k < nw; k++)
        if (c[k] != S->c[Wi[k]]) {
            dc[nch] = c[k] - S->c[Wi[k]];
            Wi[nch++] = Wi[k];
            S->c[Wi[k]] = c[k];
        }
    for (int b = 0; b < W->T && nch > 0; b++) {   /* z += K (change): the rows, as CD */
        int64_t lo_b = W->lo[b], hi_b = W->lo[b + 1];
        int64_t ncol = restricted ? Bk->nrc[b] : hi_b - lo_b;
        double *zb = restricted ? Bk->zr + lo_b : S->z + lo_b;
        for (int64_t k = 0; k < nch; k++) {
            const double *row = km_kmatrix_row(W->K[b], Wi[k], err);
            if (!row) {
                rc = err->code;
                goto out;
            }
            axpy_row(zb, row, dc[k], ncol);
        }
        *work += 2.0 * (double)nch * (double)ncol;
    }
out:
    free(cd);
    free(pc);
    free(Wi);
    free(cols);
    free(K);
    free(v);
    free(ri);
    free(wf);
    return rc;
}

/* idx[0..n) increasing (val alongside, if not NULL) to idx + lo[b] for each block b, cnt[b]
 * of them: to the right, as a block's entries are fewer than its columns, and those before
 * it fewer than lo[b]. */
static void cut_at_blocks(const int64_t *lo, int T, int64_t *idx, double *val, int64_t n,
                          int64_t *cnt)
{
    int64_t first[65];   /* idx[first[b]..first[b + 1]): block b's */
    for (int b = 0, k = 0; b < T; b++) {
        while (k < n && idx[k] < lo[b])
            k++;
        first[b] = k;
    }
    first[T] = n;
    for (int b = T - 1; b >= 0; b--) {
        cnt[b] = first[b + 1] - first[b];
        memmove(idx + lo[b], idx + first[b], (size_t)cnt[b] * sizeof *idx);
        if (val)
            memmove(val + lo[b], val + first[b], (size_t)cnt[b] * sizeof *val);
    }
}

/* The team grows while the layout is one block (so worker 0 runs alone): the block cut into
 * Tmax (kcd_blocks), the active list split at the blocks' bounds into act + lo[b], and so
 * are the restriction's columns and compact z if the rows are restricted: each block then
 * holds what it would have held had the solve started with Tmax blocks (z is not made exact
 * here: a restoration at another moment would sum other changes, other bits). The cached
 * rows go to the blocks' caches (km_kmatrix_take_rows): for a moment both caches are held. */
static int kcd_grow(km_kcd *W, const kshared *S, kblocks *Bk, int64_t *act, int64_t *na_blk,
                    const loop_state *L, km_error *err)
{
    km_kmatrix *K[64];
    int64_t lo[65];
    int T = W->Tmax;
    int rc = kcd_blocks(W, T, K, lo, err);
    if (rc)
        return rc;
    cut_at_blocks(lo, T, act, NULL, na_blk[0], na_blk);
    if (L->restricted)
        cut_at_blocks(lo, T, Bk->rcols, Bk->zr, Bk->nrc[0], Bk->nrc);
    for (int b = 0; b < T && rc == KM_OK; b++)
        if (L->restricted)
            rc = km_kmatrix_restrict(K[b], Bk->rcols + lo[b], Bk->nrc[b], err);
    for (int b = 0; b < T; b++)
        if (rc == KM_OK)
            km_kmatrix_take_rows(K[b], W->K[0]);
        else
            km_kmatrix_free(K[b]);
    if (rc)
        return rc;
    kcd_install(W, K, lo, T);
    for (int b = 0; b < T; b++) {
        if (L->restricted)
            block_places(Bk, b, act + lo[b], na_blk[b]);
        pack(S, act + lo[b], na_blk[b], lo[b]);
    }
    return KM_OK;
}

int km_kcd_solve(km_kcd *W, const double *y, const double *C, const km_cd_param *par,
                 double *c, double *z, km_cd_result *res, km_error *err)
{
    int64_t m = W->m;
    int Tmax = W->Tmax;
    km_rule rule = par->rule == KM_RULE_GRADIENT ? KM_RULE_GRADIENT : KM_RULE_GREEDY;
    int64_t nb = (m + KM_GAP_BLOCK - 1) / KM_GAP_BLOCK;
    size_t len = (size_t)(m > 0 ? m : 1);
    double *alpha = malloc(len * sizeof *alpha), *kii = malloc(len * sizeof *kii);
    int64_t *act = malloc(len * sizeof *act);
    cand *cands = calloc(2 * (size_t)Tmax, sizeof *cands);
    double *gp = malloc(3 * (size_t)(nb > 0 ? nb : 1) * sizeof *gp);
    char *out_of = malloc(len);   /* 1: shrunk */
    double *work = malloc(2 * len * sizeof *work);   /* the scans' ranks and steps */
    int64_t na_blk[64];   /* the active coordinates of each block: act + lo[b] */
    double *packed = malloc(5 * len * sizeof *packed);
    int64_t nrc[64];
    kblocks Bk = {W, z, malloc(len * sizeof(double)), malloc(len * sizeof(int64_t)),
                  malloc(len * sizeof(int64_t)), nrc, malloc(len * sizeof(double)),
                  malloc(len * (size_t)Tmax * sizeof(int64_t)),
                  malloc(len * (size_t)Tmax * sizeof(double)), malloc(len * sizeof(int64_t))};
    int rc = KM_OK;
    if (!alpha || !kii || !act || !cands || !gp || !out_of || !work || !packed || !Bk.zr ||
        !Bk.ppos || !Bk.rcols || !Bk.c0 || !Bk.chi || !Bk.chv || !Bk.outc) {
        rc = km_error_nomem(err, "kernel solver");
        goto out;
    }
    /* the blocks of every worker from the start: with every worker, or (the team sizing
     * itself) when a core is free as the first solve starts; else one block until the team
     * grows (kcd_grow: its copy of the cache costs a refill, 0.05-0.45 s on ijcnn1). A
     * failed layout left none: one block. */
    int64_t served, computed;
    km_kcd_stats(W, &served, &computed);
    int T0 = W->team == KM_TEAM_ALL ||
             (W->team == KM_TEAM_AUTO && W->T == 1 && computed == 0 && core_free_now())
                 ? Tmax : W->T > 0 ? W->T : 1;
    if (W->T != T0 && (rc = kcd_layout(W, T0, err)))
        goto out;
    double tr = 0;
    int64_t movable = 0;
    int64_t bad = -1;
    for (int64_t i = 0; i < m; i++) {
        kii[i] = km_kmatrix_diag(W->K[0], i);
        alpha[i] = kii[i] > 0 ? 1 / kii[i] : 0;
        tr += kii[i] > 0 ? kii[i] : 0;
        movable += kii[i] > 0;
        c[i] = 0;
        z[i] = 0;
        if (!isfinite(kii[i]) && bad < 0)
            bad = i;
    }
    if (bad >= 0)
        rc = km_error_set(err, KM_EINPUT, "the kernel value k(x, x) of row %lld is not finite: "
                          "the feature values are too large; scale them", (long long)bad + 1);
    double delta = par->delta;
    if (delta <= 0)
        delta = par->stop == KM_STOP_STEP ? (movable ? KM_CD_DEFAULT_TOL * (double)movable / tr
                                                     : 1)
                                          : KM_CD_DEFAULT_GAP;
    int64_t cap = par->max_iter > INT64_MAX / (m > 0 ? m : 1) ? INT64_MAX
                                                               : par->max_iter * (m > 0 ? m : 1);
    kshared S = {y, C, alpha, kii, c, z, par->loss, rule, par->eps, m, packed,
                 packed + len, packed + 2 * len, packed + 3 * len, packed + 4 * len};
    barrier bar = {0, 0, 0};
    atomic_int failed = 0;
    int64_t steps_out = 0;
    int converged = 0;
    double maxh_out = 0;
    int walk_on = !par->no_walk && par->stop == KM_STOP_GAP && km_face_loss(par->loss);
    double walk_res[2] = {0, 0};   /* the last walk's decrease of G and flops */
    for (int b = 0; b < W->T; b++) {   /* whole blocks (a failed solve may have left less) */
        int64_t lo = W->lo[b], n = W->lo[b + 1] - lo;
        if (km_kmatrix_ncols(W->K[b]) != n) {
            for (int64_t j = 0; j < n; j++)
                Bk.outc[lo + j] = lo + j;
            int r = km_kmatrix_restrict(W->K[b], W->T > 1 ? Bk.outc + lo : NULL,
                                        W->T > 1 ? n : 0, err);
            if (r) {
                rc = r;
                goto out;
            }
        }
    }
    /* a zero kernel row (k_ii = 0): c_i is the minimizer of its conjugate term, set once
     * (km_loss_dual_argmin; its row is added to z, which a PSD kernel leaves as it is) */
    for (int64_t i = 0; rc == KM_OK && i < m; i++) {
        double ci = kii[i] == 0 ? km_loss_dual_argmin(par->loss, y[i], C[i], par->eps)
                    : kii[i] > 0 && par->c_init ? par->c_init[i] : 0;   /* warm start */
        for (int b = 0; ci != 0 && b < W->T && rc == KM_OK; b++) {
            const double *row = km_kmatrix_row(W->K[b], i, err);
            if (!row)
                rc = err->code;
            else
                axpy_row(z + W->lo[b], row, ci, W->lo[b + 1] - W->lo[b]);
        }
        c[i] = ci;
    }
    if (rc)
        goto out;
    team tm;
    team_init(&tm, Tmax, W->team);
    for (int b = 0; b < W->T; b++) {
        na_blk[b] = all_active(&S, W->lo[b], W->lo[b + 1], act + W->lo[b], out_of);
        pack(&S, act + W->lo[b], na_blk[b], W->lo[b]);
    }

    /* The blocks are the units of work (each its columns, its row cache, its part of the
     * active set, its candidate); worker w of the nw working does the blocks b = w mod nw,
     * so the bits never depend on nw, which the team changes as the machine's load asks
     * (team_decide). */
    #pragma omp parallel num_threads(Tmax) if (Tmax > 1)
    {
        int w = omp_get_thread_num(), sense = 0, gen = 0;
        if (pthread_getcpuclockid(pthread_self(), &tm.clk[w]) != 0)
            tm.clk[w] = (clockid_t)-1;   /* (clock_s fails: the CPU shares are unknown) */
        loop_state L = {0, 0, 1, 0, 0, KM_FACE_EVERY * m, KM_FACE_EVERY, 0, INFINITY, 0, 0,
                        0, 0};
        /* (the same in every working worker) */
        int nw = tm.size;   /* one worker until a trial finds a free core (team_decide) */
        km_error e = {0};
        for (;;) {
            if (w >= nw) {   /* parked: sleep until the team grows again or ends */
                if (team_park(&tm, w, &nw, &L, &sense, &gen))
                    break;
                continue;
            }
            for (int b = w; b < W->T; b += nw)
                scan(&S, act + W->lo[b], na_blk[b], W->lo[b],
                     L.restricted ? Bk.zr + W->lo[b] : z,
                     L.restricted ? Bk.ppos + W->lo[b] : act + W->lo[b], work + 2 * W->lo[b],
                     &cands[L.buf * Tmax + b]);
            barrier_wait(&bar, &sense, nw);
            if (atomic_load(&failed))
                break;
            cand B = cands[L.buf * Tmax];   /* the best of all: the first of the largest ranks */
            int64_t active = B.na;
            for (int u = 1; u < W->T; u++) {
                const cand *o = &cands[L.buf * Tmax + u];
                if (o->rank > B.rank || (o->rank == B.rank && B.i < 0)) {
                    double mh = B.maxh > o->maxh ? B.maxh : o->maxh;
                    B = *o;
                    B.maxh = mh;
                } else if (o->maxh > B.maxh) {
                    B.maxh = o->maxh;
                }
                active += o->na;
            }
            L.buf ^= 1;
            int idle = B.i < 0 || !(B.rank > 0) || B.h == 0;
            int done = 0, next_nw = nw;
            if (idle || L.steps % KM_KCD_CHECK == 0 || L.steps >= cap ||
                (par->stop == KM_STOP_STEP && B.maxh < delta)) {
                if (w == 0)
                    team_decide(&tm, L.steps, nw, L.restricted);
                if (L.restricted) {   /* z of the restricted columns, for everyone */
                    for (int b = w; b < W->T; b += nw)
                        block_sync(&Bk, b);
                    barrier_wait(&bar, &sense, nw);
                }
                /* the exact relative duality gap, blocks shared round robin */
                for (int64_t g = w; g < nb; g += nw)
                    gap_terms(&S, out_of, g * KM_GAP_BLOCK,
                              (g + 1) * KM_GAP_BLOCK < m ? (g + 1) * KM_GAP_BLOCK : m,
                              gp + 3 * g);
                barrier_wait(&bar, &sense, nw);
                next_nw = tm.next;
                double F = 0, G = 0, A = 0;
                for (int64_t g = 0; g < nb; g++) {
                    F += gp[3 * g];
                    G += gp[3 * g + 1];
                    A += gp[3 * g + 2];
                }
                double gap = F > 0 ? (G > 0 ? G : 0) / F : 0;
                /* the active set is done when its share of the gap is a tenth of the
                 * target: the rest is in the shrunk coordinates */
                int settled = par->stop == KM_STOP_GAP && !L.full && F > 0 &&
                              A <= 0.1 * delta * F;
                /* restricted rows leave z stale off the active columns: then the gap is an
                 * estimate, and a small one calls for z made exact and a second look */
                int small = par->stop == KM_STOP_GAP ? gap <= delta
                                                     : B.maxh < delta;
                done = small && L.full && !L.restricted;
                if (par->stop == KM_STOP_GAP && small && !L.restricted)
                    done = 1;              /* a certificate whatever is shrunk */
                if (!done && (idle || settled || small)) {
                    if (!L.full) {   /* converged on the active set: bring everything back */
                        for (int b = w; b < W->T; b += nw) {
                            if (L.restricted && block_restore(&Bk, b, c, z, m, &e))
                                fail_once(&failed, err, &e);
                            na_blk[b] = all_active(&S, W->lo[b], W->lo[b + 1], act + W->lo[b],
                                                   out_of);
                            pack(&S, act + W->lo[b], na_blk[b], W->lo[b]);
                        }
                        L.full = 1;
                        L.restricted = 0;
                        L.since_shrink = 0;
                        continue;   /* look again with z exact (a new team size waits) */
                    } else if (idle) {
                        done = 1;  /* nothing can move: optimal to rounding */
                    }
                }
                int conv = done;
                if (!isfinite(F) || !isfinite(G))
                    conv = 0, done = 1;   /* overflow: the caller reports it */
                if (!done && L.steps >= cap) {
                    done = 1;
                    for (int b = w; L.restricted && b < W->T; b += nw)
                        if (block_restore(&Bk, b, c, z, m, &e))
                            fail_once(&failed, err, &e);
                }
                if (w == 0 && par->progress)
                    par->progress(par->user, (L.steps + m - 1) / (m > 0 ? m : 1), B.maxh,
                                  active);
                /* the walk, when the gap has stalled since the last test (kcd_walk) */
                int walk = 0;
                /* a CD step's flops: a row added to z, the scan of the active set */
                double step = 2.0 * (double)m + 10.0 * (double)active;
                if (walk_on && !done && L.steps >= L.walk_at) {
                    L.cd_work += (double)(L.steps - L.walk_steps) * step;
                    /* stalled, and the walks so far cost at most KM_KWALK_SHARE of CD */
                    walk = gap > KM_FACE_STALL * L.walk_ref &&
                           L.walk_work < KM_KWALK_SHARE * L.cd_work;
                    double Gd = G - F;   /* the dual G(c) = sum_i (c_i z_i/2 + phi_i) */
                    int64_t ds = L.steps - L.walk_steps;
                    double rate = ds > 0 ? (L.walk_G - Gd) / (double)ds : 0;
                    L.walk_ref = gap;
                    L.walk_steps = L.steps;
                    L.walk_G = Gd;
                    L.walk_rate = rate;
                    L.walk_at = L.steps + L.walk_every * m;
                }
                if (walk) {   /* worker 0 walks, the others wait */
                    double budget = KM_FACE_SWEEPS * (double)m * step,
                           left = KM_KWALK_SHARE * L.cd_work - L.walk_work;
                    if (w == 0) {
                        walk_res[0] = walk_res[1] = 0;
                        if (kcd_walk(W, &S, &Bk, act, na_blk, L.restricted,
                                     budget < left ? budget : left, &walk_res[0],
                                     &walk_res[1], &e))
                            fail_once(&failed, err, &e);
                    }
                    barrier_wait(&bar, &sense, nw);
                    for (int b = w; b < W->T; b += nw)
                        pack(&S, act + W->lo[b], na_blk[b], W->lo[b]);
                    L.walk_G -= walk_res[0];
                    /* paid: decreased the dual G per flop at least as fast as CD did */
                    int paid = walk_res[0] >= L.walk_rate * walk_res[1] / step;
                    L.walk_work += walk_res[1];
                    L.walk_every = paid ? KM_KWALK_AFTER : 2 * L.walk_every;
                    L.walk_at = L.steps + L.walk_every * m;
                    continue;   /* a fresh scan (a new team size waits for the next check) */
                }
                if (done) {
                    if (w == 0) {   /* every worker reached the same decision */
                        steps_out = L.steps;
                        maxh_out = B.maxh;
                        converged = conv;
                        team_end(&tm);
                    }
                    break;
                }
                if (idle)
                    continue;   /* (a new team size waits for the next check) */
            }
            for (int b = w; b < W->T; b += nw) {
                int64_t lo = W->lo[b], n = W->lo[b + 1] - lo;
                const double *row = km_kmatrix_row(W->K[b], B.i, &e);
                if (!row) {
                    fail_once(&failed, err, &e);
                    break;   /* the next barrier ends every worker */
                }
                /* z += h k_i over this block's columns (the compact z if restricted) */
                axpy_row(L.restricted ? Bk.zr + lo : z + lo, row, B.h,
                         L.restricted ? Bk.nrc[b] : n);
                if (B.i >= lo && B.i < lo + n) {
                    c[B.i] = B.cn;
                    S.pc[lo + B.k] = B.cn;
                }
            }
            L.steps++;
            L.since_shrink++;
            if (par->shrinking && L.since_shrink >= KM_KCD_SHRINK) {
                int restrict_now = !L.restricted && (double)active <= KM_KCD_RESTRICT * (double)m;
                for (int b = w; b < W->T; b += nw) {
                    if (L.restricted)
                        block_sync(&Bk, b);
                    shrink(&S, act + W->lo[b], &na_blk[b], B.maxh, out_of);
                    pack(&S, act + W->lo[b], na_blk[b], W->lo[b]);
                    if (restrict_now &&
                        block_restrict(&Bk, b, act + W->lo[b], na_blk[b], c, &e))
                        fail_once(&failed, err, &e);
                    if (L.restricted || restrict_now)
                        block_places(&Bk, b, act + W->lo[b], na_blk[b]);
                }
                L.full = 0;
                L.restricted |= restrict_now;
                L.since_shrink = 0;
            }
            if (nw == 1 && next_nw == 1 && Tmax > 1 && (L.steps & 15) == 0 &&
                team_early(&tm, L.steps))
                next_nw = Tmax;
            /* the first growth cuts the one block (only worker 0 works then) */
            if (next_nw > 1 && W->T == 1 && kcd_grow(W, &S, &Bk, act, na_blk, &L, &e)) {
                fail_once(&failed, err, &e);
                break;
            }
            if (next_nw != nw)   /* every working worker takes the same turn */
                team_resize(&tm, w, &nw, next_nw, &L, &sense, &bar, &gen);
        }
        if (w == 0)   /* (a failure: the parked workers leave too) */
            team_end(&tm);
    }
    team_destroy(&tm);
    rc = atomic_load(&failed) ? err->code : KM_OK;
    res->iter = (steps_out + m - 1) / (m > 0 ? m : 1);
    res->converged = converged;
    res->max_h = maxh_out;
    res->delta = delta;
    res->gap = km_cd_relative_gap(par->loss, par->eps, y, C, c, z, m, &res->primal);
out:
    free(alpha);
    free(kii);
    free(act);
    free(cands);
    free(gp);
    free(out_of);
    free(work);
    free(packed);
    free(Bk.zr);
    free(Bk.ppos);
    free(Bk.rcols);
    free(Bk.c0);
    free(Bk.chi);
    free(Bk.chv);
    free(Bk.outc);
    return rc;
}
