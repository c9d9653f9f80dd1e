/* A whole FCFS or EASY run on rigid jobs in one call: hpcgym's batch core.
 *
 * `hpcgym.sim.batch` calls `run` when `Simulator.run` (or `BaseScheduler.run`) is asked for
 * `make("fcfs")` or `make("easy")` on a fresh simulator whose jobs are all rigid whole-node jobs
 * on one cluster; everything else takes the event loop of `hpcgym.sim.engine`. The rules are
 * those of the engine and of `hpcgym.baselines.classic`, and the results are the same bit for
 * bit (tests/sim/test_batch.py compares every job field and both areas with the event loop):
 *
 * - every end at an instant, then every submission at it, is seen before the pass;
 * - a job larger than the machine is rejected at its submission;
 * - a started job ends at `t + work`, or, when kills apply (`kill`), is killed at
 *   `t + walltime` when that comes first (a negative walltime: none);
 * - FCFS starts the queue head while it fits; EASY then gives the blocked head its shadow time
 *   (the earliest estimated end at which enough units are free, every end at that instant
 *   counted) and starts, in submission order, each other job that fits now and either ends by
 *   the shadow time or fits in the extra units, which it then uses up (a running job past its
 *   estimated end is planned to end `grace` seconds from now, as `hpcgym.sim.planning` does);
 * - the integrals of the allocated units and of the demand (capped at the capacity) are summed
 *   step by step, in time order, with the engine's expressions, so they round alike.
 *
 * Pure C99 and the CPython API only. EASY finds backfill candidates through a segment tree over
 * submission positions holding the smallest size and the smallest estimate of each range of
 * queued jobs, so a pass costs O(started x log n) in the usual case instead of a scan of the
 * whole queue. Compiled without floating-point contraction (setup.py), so that `a + b * c`
 * rounds twice, as Python does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <structmember.h>

enum { COMPLETED = 0, KILLED = 1, REJECTED = 2 };
enum { FCFS = 0, EASY = 1 };

typedef struct {
    double t;
    Py_ssize_t j;
} Item;

/* ------------------------------------------------------------------ heap of real ends */
static int item_less(Item a, Item b) { return a.t < b.t || (a.t == b.t && a.j < b.j); }

static void heap_push(Item *h, Py_ssize_t *len, Item x) {
    Py_ssize_t i = (*len)++;
    while (i > 0) {
        Py_ssize_t p = (i - 1) / 2;
        if (!item_less(x, h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

static Item heap_pop(Item *h, Py_ssize_t *len) {
    Item top = h[0];
    Item x = h[--(*len)];
    Py_ssize_t n = *len, i = 0;
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && item_less(h[c + 1], h[c])) c++;
        if (!item_less(h[c], x)) break;
        h[i] = h[c];
        i = c;
    }
    if (n) h[i] = x;
    return top;
}

/* ------------------------------------------------ running jobs by estimated end (EASY) */
static Py_ssize_t ends_find(const Item *e, Py_ssize_t len, Item x) {
    Py_ssize_t lo = 0, hi = len;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (item_less(e[mid], x)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void ends_insert(Item *e, Py_ssize_t *len, Item x) {
    Py_ssize_t i = ends_find(e, *len, x);
    memmove(e + i + 1, e + i, (size_t)(*len - i) * sizeof(Item));
    e[i] = x;
    (*len)++;
}

static void ends_remove(Item *e, Py_ssize_t *len, Item x) {
    Py_ssize_t i = ends_find(e, *len, x);
    memmove(e + i, e + i + 1, (size_t)(*len - i - 1) * sizeof(Item));
    (*len)--;
}

/* ------------------------------------------------- queued jobs by submission position */
typedef struct {
    Py_ssize_t leaves; /* a power of two >= n */
    long long *size;   /* smallest size of queued jobs in the range (LLONG_MAX: none) */
    double *est;       /* smallest estimate of queued jobs in the range (inf: none) */
} Tree;

static void tree_set(Tree *T, Py_ssize_t pos, long long size, double est) {
    Py_ssize_t i = pos + T->leaves;
    T->size[i] = size;
    T->est[i] = est;
    for (i /= 2; i >= 1; i /= 2) {
        long long a = T->size[2 * i], b = T->size[2 * i + 1];
        double x = T->est[2 * i], y = T->est[2 * i + 1];
        long long s = a < b ? a : b;
        double m = x < y ? x : y;
        if (T->size[i] == s && T->est[i] == m) break;
        T->size[i] = s;
        T->est[i] = m;
    }
}

typedef struct {
    long long free, extra;
    double now, shadow;
} Fit;

/* The first position >= lo of a queued job with size <= free and (size <= extra or
 * now + est <= shadow), in node `i` covering [l, r); -1 if none. A range is skipped when its
 * smallest size and smallest estimate already fail: at a leaf the test is the exact one. */
static Py_ssize_t tree_find(const Tree *T, Py_ssize_t i, Py_ssize_t l, Py_ssize_t r,
                            Py_ssize_t lo, const Fit *f) {
    if (r <= lo) return -1;
    long long s = T->size[i];
    if (s > f->free) return -1;
    if (s > f->extra && !(f->now + T->est[i] <= f->shadow)) return -1;
    if (r - l == 1) return l;
    Py_ssize_t mid = (l + r) / 2;
    Py_ssize_t got = tree_find(T, 2 * i, l, mid, lo, f);
    if (got >= 0) return got;
    return tree_find(T, 2 * i + 1, mid, r, lo, f);
}

/* ------------------------------------------------------------------------ the run */
typedef struct {
    Py_ssize_t n;
    long long capacity;
    int policy;
    const double *submit, *work, *est, *wall;
    const long long *size;
    double *start, *end;
    signed char *state;
    /* state of the run */
    Item *heap, *ends;
    Py_ssize_t heap_len, ends_len;
    char *queued;
    Tree tree;
    long long free;
    double now, alloc_total, demand_total, alloc_area, demand_area, cap, grace;
    Py_ssize_t started, completed, killed, rejected;
} Run;

static void start_job(Run *R, Py_ssize_t j) {
    double t = R->now;
    long long k = R->size[j];
    R->queued[j] = 0;
    if (R->policy == EASY) {
        tree_set(&R->tree, j, LLONG_MAX, INFINITY);
        Item e = {t + R->est[j], j};
        ends_insert(R->ends, &R->ends_len, e);
    }
    R->start[j] = t;
    R->free -= k;
    R->alloc_total += (double)k;
    double end = t + R->work[j];
    R->state[j] = COMPLETED;
    if (R->wall[j] >= 0.0) {
        double left = R->wall[j] - 0.0;
        double deadline = t + (left > 0.0 ? left : 0.0);
        if (!(end <= deadline)) {
            end = deadline;
            R->state[j] = KILLED;
        }
    }
    R->end[j] = end;
    Item x = {end, j};
    heap_push(R->heap, &R->heap_len, x);
    R->started++;
}

/* A running job's estimated end as EASY plans with it: one at or before now is a job that
 * outlived its estimate (here: a zero-length job started at this instant, whose end is
 * processed next), expected to run `grace` seconds more (`hpcgym.sim.planning`). */
static double planned_end(const Run *R, double t) { return t > R->now ? t : R->now + R->grace; }

/* The EASY pass behind a blocked head `h`. */
static void backfill(Run *R, Py_ssize_t h) {
    long long need = R->size[h];
    long long avail = R->free;
    Fit f = {R->free, 0, R->now, INFINITY};
    Item *e = R->ends;
    Py_ssize_t m = R->ends_len;
    /* `planning.shadow` over the planned ends in the order of the estimated ones. */
    for (Py_ssize_t q = 0; q < m; q++) {
        avail += R->size[e[q].j];
        if (avail >= need) {
            double t = planned_end(R, e[q].t);
            for (q++; q < m && planned_end(R, e[q].t) == t; q++) avail += R->size[e[q].j];
            f.shadow = t;
            f.extra = avail - need;
            break;
        }
    }
    Py_ssize_t pos = h + 1;
    while (f.free > 0) {
        Py_ssize_t j = tree_find(&R->tree, 1, 0, R->tree.leaves, pos, &f);
        if (j < 0) break;
        long long k = R->size[j];
        if (R->now + R->est[j] > f.shadow) f.extra -= k;
        start_job(R, j);
        f.free = R->free;
        pos = j + 1;
    }
}

static void simulate(Run *R) {
    Py_ssize_t n = R->n, i = 0, head = 0, ended = 0;
    R->now = n ? R->submit[0] : 0.0;
    while (ended < n) {
        double t = R->heap_len ? R->heap[0].t : INFINITY;
        if (i < n && R->submit[i] < t) t = R->submit[i];
        if (t > R->now) {
            double dt = t - R->now;
            R->alloc_area += R->alloc_total * dt;
            double d = R->demand_total;
            R->demand_area += (d < R->cap ? d : R->cap) * dt;
            R->now = t;
        }
        while (R->heap_len && R->heap[0].t == t) {
            Item x = heap_pop(R->heap, &R->heap_len);
            Py_ssize_t j = x.j;
            long long k = R->size[j];
            R->free += k;
            R->alloc_total -= (double)k;
            R->demand_total -= (double)k;
            if (R->state[j] == KILLED) R->killed++;
            else R->completed++;
            ended++;
            if (R->policy == EASY) {
                Item key = {R->start[j] + R->est[j], j};
                ends_remove(R->ends, &R->ends_len, key);
            }
        }
        while (i < n && R->submit[i] == t) {
            double k = (double)R->size[i];
            R->demand_total += k;
            if (R->size[i] > R->capacity) {
                R->state[i] = REJECTED;
                R->end[i] = t;
                R->demand_total -= k;
                R->rejected++;
                ended++;
            } else {
                R->queued[i] = 1;
                if (R->policy == EASY) tree_set(&R->tree, i, R->size[i], R->est[i]);
            }
            i++;
        }
        /* Start the head jobs that fit. */
        while (head < i && !R->queued[head]) head++;
        while (head < i && R->size[head] <= R->free) {
            start_job(R, head);
            while (head < i && !R->queued[head]) head++;
        }
        if (R->policy == EASY && head < i && R->free > 0) backfill(R, head);
    }
}

/* --------------------------------------------------------------------- Python glue */
/* The list's floats; with `none_ok`, `None` (a walltime's "none") reads as -1. */
static int read_doubles(PyObject *list, Py_ssize_t n, double *out, const char *what,
                        int none_ok) {
    if (!PyList_Check(list) || PyList_GET_SIZE(list) != n) {
        PyErr_Format(PyExc_TypeError, "batch core: %s must be a list of %zd floats", what, n);
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *item = PyList_GET_ITEM(list, k);
        if (none_ok && item == Py_None) {
            out[k] = -1.0;
            continue;
        }
        double v = PyFloat_AsDouble(item);
        if (v == -1.0 && PyErr_Occurred()) return -1;
        out[k] = v;
    }
    return 0;
}

/* A run's inputs as the core reads them: `in` holds submit, work, est and wall (float64, one
 * column after the other, `m` apart), `sz` the sizes; both are returned as bytes with the run. */
typedef struct {
    Py_ssize_t n, m;
    PyObject *in_b, *size_b;
    double *in;
    long long *sz;
} Inputs;

static int inputs_new(Inputs *I, Py_ssize_t n) {
    I->n = n;
    I->m = n ? n : 1;
    I->in_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(4 * (size_t)I->m * sizeof(double)));
    I->size_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((size_t)I->m * sizeof(long long)));
    if (!I->in_b || !I->size_b) {
        Py_CLEAR(I->in_b);
        Py_CLEAR(I->size_b);
        return -1;
    }
    I->in = (double *)PyBytes_AS_STRING(I->in_b);
    I->sz = (long long *)PyBytes_AS_STRING(I->size_b);
    return 0;
}

/* The run of filled inputs (submit, work, wall with -1 for none, sizes >= 1): the tuple `run`
 * returns, or NULL with an exception set. `*unordered` is set (and NULL returned, no exception)
 * when the jobs do not come in submission order. */
static PyObject *run_inputs(int policy, long long capacity, double grace, int kill, Inputs *I,
                            int *unordered) {
    Py_ssize_t n = I->n, m = I->m;
    double *in = I->in;
    *unordered = 0;
    /* EASY plans with the walltime, else the run time; a kill applies where a walltime does. */
    for (Py_ssize_t k = 0; k < n; k++) {
        double w = in[3 * m + k];
        in[2 * m + k] = w >= 0.0 ? w : in[m + k];
        if (!kill) in[3 * m + k] = -1.0;
    }
    for (Py_ssize_t k = 1; k < n; k++) {
        if (!(in[k] >= in[k - 1])) {
            *unordered = 1;
            return NULL;
        }
    }
    Run R;
    memset(&R, 0, sizeof R);
    R.n = n;
    R.capacity = capacity;
    R.cap = (double)capacity;
    R.policy = policy;
    R.free = capacity;
    R.grace = grace;
    R.submit = in;
    R.work = in + m;
    R.est = in + 2 * m;
    R.wall = in + 3 * m;
    R.size = I->sz;
    Py_ssize_t leaves = 1;
    while (leaves < n) leaves *= 2;
    PyObject *start_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(m * sizeof(double)));
    PyObject *end_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(m * sizeof(double)));
    PyObject *state_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)m);
    R.heap = malloc((size_t)m * sizeof(Item));
    R.ends = policy == EASY ? malloc((size_t)m * sizeof(Item)) : NULL;
    R.queued = calloc((size_t)m, 1);
    if (policy == EASY) {
        R.tree.leaves = leaves;
        R.tree.size = malloc(2 * (size_t)leaves * sizeof(long long));
        R.tree.est = malloc(2 * (size_t)leaves * sizeof(double));
    }
    PyObject *result = NULL;
    if (!start_b || !end_b || !state_b || !R.heap || !R.queued ||
        (policy == EASY && (!R.ends || !R.tree.size || !R.tree.est))) {
        PyErr_NoMemory();
        goto done;
    }
    R.start = (double *)PyBytes_AS_STRING(start_b);
    R.end = (double *)PyBytes_AS_STRING(end_b);
    R.state = (signed char *)PyBytes_AS_STRING(state_b);
    for (Py_ssize_t k = 0; k < n; k++) {
        R.start[k] = NAN;
        R.end[k] = NAN;
        R.state[k] = -1;
    }
    if (policy == EASY) {
        for (Py_ssize_t k = 0; k < 2 * leaves; k++) {
            R.tree.size[k] = LLONG_MAX;
            R.tree.est[k] = INFINITY;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    simulate(&R);
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("OOOddnnnndOO", start_b, end_b, state_b, R.alloc_area, R.demand_area,
                           R.started, R.completed, R.killed, R.rejected, R.now, I->in_b,
                           I->size_b);
done:
    Py_XDECREF(start_b);
    Py_XDECREF(end_b);
    Py_XDECREF(state_b);
    free(R.heap);
    free(R.ends);
    free(R.queued);
    free(R.tree.size);
    free(R.tree.est);
    return result;
}

static int check_policy(int policy) {
    if (policy != FCFS && policy != EASY) {
        PyErr_Format(PyExc_ValueError, "batch core: policy %d is neither 0 (FCFS) nor 1 (EASY)",
                     policy);
        return -1;
    }
    return 0;
}

static PyObject *batch_run(PyObject *self, PyObject *args) {
    int policy, kill;
    long long capacity;
    double grace;
    PyObject *submit, *work, *wall, *size;
    if (!PyArg_ParseTuple(args, "iLdpO!O!O!O!", &policy, &capacity, &grace, &kill, &PyList_Type,
                          &submit, &PyList_Type, &work, &PyList_Type, &wall, &PyList_Type, &size))
        return NULL;
    if (check_policy(policy) < 0) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(submit);
    Inputs I;
    if (inputs_new(&I, n) < 0) return NULL;
    double *in = I.in;
    Py_ssize_t m = I.m;
    PyObject *result = NULL;
    if (read_doubles(submit, n, in, "submit", 0) || read_doubles(work, n, in + m, "work", 0) ||
        read_doubles(wall, n, in + 3 * m, "wall", 1))
        goto done;
    if (!PyList_Check(size) || PyList_GET_SIZE(size) != n) {
        PyErr_Format(PyExc_TypeError, "batch core: size must be a list of %zd ints", n);
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        long long v = PyLong_AsLongLong(PyList_GET_ITEM(size, k));
        if (v == -1 && PyErr_Occurred()) goto done;
        if (v < 1) {
            PyErr_Format(PyExc_ValueError, "batch core: job %zd has size %lld", k, v);
            goto done;
        }
        I.sz[k] = v;
    }
    int unordered;
    result = run_inputs(policy, capacity, grace, kill, &I, &unordered);
    if (unordered)
        PyErr_SetString(PyExc_ValueError, "batch core: jobs must come in submission order");
done:
    Py_XDECREF(I.in_b);
    Py_XDECREF(I.size_b);
    return result;
}

/* The offset at which objects of type `cls` keep the slot of data descriptor `d` when it is a
 * plain object slot of `cls` (`__slots__`), else -1. */
static Py_ssize_t slot_offset(PyObject *d, PyTypeObject *cls) {
    if (Py_IS_TYPE(d, &PyMemberDescr_Type) && ((PyDescrObject *)d)->d_type == cls) {
        PyMemberDef *def = ((PyMemberDescrObject *)d)->d_member;
        if (def->type == T_OBJECT_EX && !(def->flags & PY_AUDIT_READ)) return def->offset;
    }
    return -1;
}

/* `d.__get__(o, cls)`, a new reference or NULL with an exception set; read at `offset` (from
 * `slot_offset`, not -1) when the slot is set. `o`'s type must be `cls` itself. */
static inline PyObject *slot_get(PyObject *d, Py_ssize_t offset, PyObject *o, PyTypeObject *cls) {
    if (offset >= 0) {
        PyObject *v = *(PyObject **)((char *)o + offset);
        if (v != NULL) {
            Py_INCREF(v);
            return v;
        }
    }
    return Py_TYPE(d)->tp_descr_get(d, o, (PyObject *)cls);
}

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Whether no value of `v` (n of them) appears twice. */
static int all_unique(const long long *v, Py_ssize_t n) {
    int up = 1, down = 1;
    for (Py_ssize_t k = 1; k < n && (up || down); k++) {
        if (!(v[k] > v[k - 1])) up = 0;
        if (!(v[k] < v[k - 1])) down = 0;
    }
    if (up || down) return 1;
    long long *c = malloc((size_t)n * sizeof(long long));
    if (c == NULL) return -1;
    memcpy(c, v, (size_t)n * sizeof(long long));
    qsort(c, (size_t)n, sizeof(long long), cmp_ll);
    int ok = 1;
    for (Py_ssize_t k = 1; k < n; k++) {
        if (c[k] == c[k - 1]) {
            ok = 0;
            break;
        }
    }
    free(c);
    return ok;
}

/* The float of `v` (a Python float or int), or -1 with `*bad` set when it is neither. */
static double as_double(PyObject *v, int *bad) {
    if (PyFloat_CheckExact(v)) return PyFloat_AS_DOUBLE(v);
    if (PyLong_CheckExact(v)) {
        double x = PyLong_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            *bad = 1;
        }
        return x;
    }
    *bad = 1;
    return -1.0;
}

/* The int of `v` (a Python int within long long), or -1 with `*bad` set otherwise. */
static long long as_ll(PyObject *v, int *bad) {
    if (!PyLong_CheckExact(v)) {
        *bad = 1;
        return -1;
    }
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        *bad = 1;
    }
    return x;
}

/* run_specs(policy, capacity, grace, kill, cls, objects, fields, checks): the whole run of
 * `objects` (`JobSpec`s, exactly of type `cls`) read straight from their slots, in one pass, job
 * by job: `fields` are the descriptors of id, submit, work, nodes, min_nodes and walltime,
 * `checks` the `(descr, value, is_)` triples of `get_columns`. What `simulate()` runs
 * (`hpcgym.sim.batch_specs`): no column lists, no id array built in Python.
 *
 * Returns `None` when a job does not qualify for the core (another type, a failed check,
 * `min_nodes != nodes`, a number that is not a Python float or int within range, a size below
 * 1, an id seen twice, or, without kills, a work above the walltime), `False` when the jobs do
 * not come in submission order (sort them and call again), else `run`'s tuple followed by the
 * ids (int64 bytes) and the sum of `work * nodes` in job order as Python's `sum()` of floats
 * adds them (`None` on Python 3.12 and later, whose `sum` compensates: the caller sums). */
enum { MAX_CHECKS = 16 };

static PyObject *run_specs(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "run_specs takes 8 arguments");
        return NULL;
    }
    long policy = PyLong_AsLong(args[0]);
    long long capacity = PyLong_AsLongLong(args[1]);
    double grace = PyFloat_AsDouble(args[2]);
    int kill = PyObject_IsTrue(args[3]);
    if (PyErr_Occurred() || check_policy(policy == FCFS || policy == EASY ? (int)policy : -1) < 0)
        return NULL;
    PyObject *objects = args[5], *fields = args[6], *checks = args[7];
    if (!PyType_Check(args[4]) || !PyList_Check(objects) || !PyTuple_Check(fields) ||
        PyTuple_GET_SIZE(fields) != 6 || !PyTuple_Check(checks)) {
        PyErr_SetString(PyExc_TypeError,
                        "run_specs: cls must be a type, objects a list, fields a tuple of 6 "
                        "descriptors and checks a tuple");
        return NULL;
    }
    PyTypeObject *cls = (PyTypeObject *)args[4];
    Py_ssize_t n = PyList_GET_SIZE(objects), nc = PyTuple_GET_SIZE(checks);
    PyObject *f[6];
    for (int c = 0; c < 6; c++) {
        f[c] = PyTuple_GET_ITEM(fields, c);
        if (Py_TYPE(f[c])->tp_descr_get == NULL) {
            PyErr_Format(PyExc_TypeError, "run_specs: %R is not a descriptor", f[c]);
            return NULL;
        }
    }
    int is_[MAX_CHECKS];
    Py_ssize_t at[6], check_at[MAX_CHECKS];
    for (int c = 0; c < 6; c++) at[c] = slot_offset(f[c], cls);
    if (nc > MAX_CHECKS) {
        PyErr_Format(PyExc_ValueError, "run_specs: at most %d checks", MAX_CHECKS);
        return NULL;
    }
    for (Py_ssize_t c = 0; c < nc; c++) {
        PyObject *t = PyTuple_GET_ITEM(checks, c);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 3 ||
            Py_TYPE(PyTuple_GET_ITEM(t, 0))->tp_descr_get == NULL) {
            PyErr_SetString(PyExc_TypeError, "run_specs: checks are (descr, value, is_) triples");
            return NULL;
        }
        check_at[c] = slot_offset(PyTuple_GET_ITEM(t, 0), cls);
        is_[c] = PyObject_IsTrue(PyTuple_GET_ITEM(t, 2));
        if (is_[c] < 0) return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (Py_TYPE(PyList_GET_ITEM(objects, i)) != cls) Py_RETURN_NONE;
    }
    Inputs I;
    if (inputs_new(&I, n) < 0) return NULL;
    PyObject *ids_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((size_t)I.m * sizeof(long long)));
    PyObject *result = NULL, *run = NULL, *demand = NULL;
    if (ids_b == NULL) goto done;
    long long *ids = (long long *)PyBytes_AS_STRING(ids_b);
    double *in = I.in, total = 0.0;
    Py_ssize_t m = I.m;
    int bad = 0;
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        PyObject *o = PyList_GET_ITEM(objects, i), *v[6];
        for (Py_ssize_t c = 0; c < nc; c++) {
            PyObject *t = PyTuple_GET_ITEM(checks, c), *value = PyTuple_GET_ITEM(t, 1);
            PyObject *got = slot_get(PyTuple_GET_ITEM(t, 0), check_at[c], o, cls);
            if (got == NULL) goto done;
            int same = got == value;
            if (!same && !is_[c]) {
                if (PyFloat_CheckExact(got) && PyFloat_CheckExact(value))
                    same = PyFloat_AS_DOUBLE(got) == PyFloat_AS_DOUBLE(value);
                else
                    same = PyObject_RichCompareBool(got, value, Py_EQ);
            }
            Py_DECREF(got);
            if (same < 0) goto done;
            if (!same) {
                bad = 1;
                break;
            }
        }
        if (bad) break;
        for (int c = 0; c < 6; c++) {
            v[c] = slot_get(f[c], at[c], o, cls);
            if (v[c] == NULL) {
                while (c--) Py_DECREF(v[c]);
                goto done;
            }
        }
        ids[i] = as_ll(v[0], &bad);
        in[i] = as_double(v[1], &bad);
        double work = as_double(v[2], &bad);
        in[m + i] = work;
        long long size = as_ll(v[3], &bad);
        long long least = as_ll(v[4], &bad);
        I.sz[i] = size;
        double wall = v[5] == Py_None ? -1.0 : as_double(v[5], &bad);
        in[3 * m + i] = wall;
        if (size < 1 || least != size || (!kill && wall >= 0.0 && work > wall)) bad = 1;
        total += work * (double)size;
        for (int c = 0; c < 6; c++) Py_DECREF(v[c]);
    }
    if (!bad) {
        int u = all_unique(ids, n);
        if (u < 0) {
            PyErr_NoMemory();
            goto done;
        }
        bad = !u;
    }
    if (bad) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    int unordered;
    run = run_inputs((int)policy, capacity, grace, kill, &I, &unordered);
    if (unordered) {
        result = Py_False;
        Py_INCREF(result);
        goto done;
    }
    if (run == NULL) goto done;
#if PY_VERSION_HEX < 0x030C0000
    /* Python's sum() of floats up to 3.11: left to right in double, from 0. */
    demand = PyFloat_FromDouble(total);
    if (demand == NULL) goto done;
#else
    (void)total;
    demand = Py_None;
    Py_INCREF(demand);
#endif
    result = PyTuple_New(PyTuple_GET_SIZE(run) + 2);
    if (result == NULL) goto done;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(run); k++) {
        PyObject *x = PyTuple_GET_ITEM(run, k);
        Py_INCREF(x);
        PyTuple_SET_ITEM(result, k, x);
    }
    PyTuple_SET_ITEM(result, PyTuple_GET_SIZE(run), ids_b);
    PyTuple_SET_ITEM(result, PyTuple_GET_SIZE(run) + 1, demand);
    ids_b = demand = NULL;
done:
    Py_XDECREF(run);
    Py_XDECREF(demand);
    Py_XDECREF(ids_b);
    Py_XDECREF(I.in_b);
    Py_XDECREF(I.size_b);
    return result;
}

/* set_column(descr, objects, values, per_object): `descr.__set__(objects[i], v)` for every i,
 * v being values[i] (per_object) or values itself. What `JobSpec`s built column by column need
 * (`hpcgym.sim.spec.rigid_specs`): one C call per field instead of one Python call per slot. */
static PyObject *set_column(PyObject *self, PyObject *args) {
    PyObject *descr, *objects, *values;
    int per_object;
    if (!PyArg_ParseTuple(args, "OO!Op", &descr, &PyList_Type, &objects, &values, &per_object))
        return NULL;
    descrsetfunc set = Py_TYPE(descr)->tp_descr_set;
    if (set == NULL) {
        PyErr_Format(PyExc_TypeError, "set_column: %R is not a data descriptor", descr);
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(objects);
    if (per_object && (!PyList_Check(values) || PyList_GET_SIZE(values) != n)) {
        PyErr_Format(PyExc_ValueError, "set_column: values must be a list of %zd", n);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = per_object ? PyList_GET_ITEM(values, i) : values;
        if (set(descr, PyList_GET_ITEM(objects, i), v) < 0) return NULL;
    }
    Py_RETURN_NONE;
}

/* get_columns(cls, objects, descrs, checks=()): for each data descriptor of `descrs` (a tuple),
 * the list `[descr.__get__(o, cls) for o in objects]`; `None` when an object's type is not `cls`
 * itself (a subclass may read its fields otherwise) or when, for a triple `(descr, value, is_)`
 * of `checks`, an object's `descr.__get__(o, cls)` is not `value` (`is_`) or not equal to it.
 * What `hpcgym.sim.metrics` reads the jobs' and specs' fields with for a result table: one C call
 * instead of an attribute read in Python per object and field. */
static PyObject *get_columns(PyObject *self, PyObject *args) {
    PyTypeObject *cls;
    PyObject *objects, *descrs, *checks = NULL;
    if (!PyArg_ParseTuple(args, "O!O!O!|O!", &PyType_Type, &cls, &PyList_Type, &objects,
                          &PyTuple_Type, &descrs, &PyTuple_Type, &checks))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(objects), m = PyTuple_GET_SIZE(descrs);
    Py_ssize_t nc = checks ? PyTuple_GET_SIZE(checks) : 0;
    for (Py_ssize_t c = 0; c < m + nc; c++) {
        PyObject *d = c < m ? PyTuple_GET_ITEM(descrs, c) : PyTuple_GET_ITEM(checks, c - m);
        if (c >= m) {
            if (!PyTuple_Check(d) || PyTuple_GET_SIZE(d) != 3) {
                PyErr_SetString(PyExc_TypeError,
                                "get_columns: checks are (descr, value, is_) triples");
                return NULL;
            }
            d = PyTuple_GET_ITEM(d, 0);
        }
        if (Py_TYPE(d)->tp_descr_get == NULL) {
            PyErr_Format(PyExc_TypeError, "get_columns: %R is not a descriptor", d);
            return NULL;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (Py_TYPE(PyList_GET_ITEM(objects, i)) != cls) Py_RETURN_NONE;
    }
    for (Py_ssize_t c = 0; c < nc; c++) {
        PyObject *descr = PyTuple_GET_ITEM(PyTuple_GET_ITEM(checks, c), 0);
        PyObject *value = PyTuple_GET_ITEM(PyTuple_GET_ITEM(checks, c), 1);
        int is_ = PyObject_IsTrue(PyTuple_GET_ITEM(PyTuple_GET_ITEM(checks, c), 2));
        if (is_ < 0) return NULL;
        descrgetfunc get = Py_TYPE(descr)->tp_descr_get;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = get(descr, PyList_GET_ITEM(objects, i), (PyObject *)cls);
            if (v == NULL) return NULL;
            int same = v == value ? 1 : is_ ? 0 : PyObject_RichCompareBool(v, value, Py_EQ);
            Py_DECREF(v);
            if (same < 0) return NULL;
            if (!same) Py_RETURN_NONE;
        }
    }
    PyObject *out = PyTuple_New(m);
    if (out == NULL) return NULL;
    for (Py_ssize_t c = 0; c < m; c++) {
        PyObject *descr = PyTuple_GET_ITEM(descrs, c);
        descrgetfunc get = Py_TYPE(descr)->tp_descr_get;
        PyObject *column = PyList_New(n);
        if (column == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, c, column);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = get(descr, PyList_GET_ITEM(objects, i), (PyObject *)cls);
            if (v == NULL) {
                Py_DECREF(out);
                return NULL;
            }
            PyList_SET_ITEM(column, i, v);
        }
    }
    return out;
}

/* new_objects(cls, n): `[object.__new__(cls) for _ in range(n)]`, for a class that keeps
 * object's own __new__ (its slots unset until `set_column` fills them). */
static PyObject *new_objects(PyObject *self, PyObject *args) {
    PyTypeObject *cls;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "O!n", &PyType_Type, &cls, &n)) return NULL;
    if (cls->tp_new != PyBaseObject_Type.tp_new || (cls->tp_flags & Py_TPFLAGS_IS_ABSTRACT)) {
        PyErr_Format(PyExc_TypeError, "new_objects: %R is abstract or has its own __new__", cls);
        return NULL;
    }
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "new_objects: n must be >= 0");
        return NULL;
    }
    PyObject *out = PyList_New(n);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = cls->tp_alloc(cls, 0);
        if (o == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, o);
    }
    return out;
}

/* untrack(objects): take every object of the list off the cycle collector's lists. For
 * objects that can never be part of a reference cycle: `rigid_specs`'s `JobSpec`s, frozen and
 * holding only numbers, None, enum members, an empty tuple and the shared default models.
 * Otherwise every collection of the older generations walks them again: on a 450,000-job
 * trace about a fifth of the time it takes to build them. */
static PyObject *untrack(PyObject *self, PyObject *objects) {
    if (!PyList_Check(objects)) {
        PyErr_SetString(PyExc_TypeError, "untrack: objects must be a list");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(objects); i++) {
        PyObject *o = PyList_GET_ITEM(objects, i);
        if (PyObject_IS_GC(o)) PyObject_GC_UnTrack(o);
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ observation rows
 * Two helpers of the env's observation encoder (`hpcgym.envs.observations`), which falls back
 * to numpy when this module is absent and gives the same float32 values: a list of row
 * indices converts to a numpy array at about 20 ns an item, a loop here costs a few. */

/* A writable C-contiguous float32 buffer of `out`, or -1 with an exception set. */
static int float32_buffer(PyObject *obj, Py_buffer *view, int writable) {
    int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    if (view->itemsize != 4 || view->format == NULL || strcmp(view->format, "f") != 0) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "expected a C-contiguous float32 buffer");
        return -1;
    }
    return 0;
}

/* The float of list `values` at `r`, or -1 with an exception set (`*v` unset). */
static int value_at(PyObject *values, Py_ssize_t r, double *v) {
    if (r < 0 || r >= PyList_GET_SIZE(values)) {
        PyErr_Format(PyExc_IndexError, "fill_rows: row %zd out of range of values", r);
        return -1;
    }
    *v = PyFloat_AsDouble(PyList_GET_ITEM(values, r));
    return (*v == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* fill_rows(out, table, width, rows, fits, offset, now, scale, since, since_values, until,
 * until_values): row i of `out` (float32 rows of `width`) becomes row `rows[i]` of `table`, or
 * row `rows[i] + offset` when `fits` is a list and `fits[i]` is false; then, unless the column
 * is -1, with v the row's value in the list of values:
 *   out[i, since] = x / (x + scale), x = now - v;
 *   out[i, until] = y / (y + scale) if y > 0 else 0, y = v - now.
 * Each in double, rounded once to float32, as numpy stores a Python float in a float32 array.
 * The numpy equivalent: `out[:k] = table.take(index, 0)` and a list of the values per column. */
static PyObject *fill_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 12) {
        PyErr_SetString(PyExc_TypeError, "fill_rows takes 12 arguments");
        return NULL;
    }
    PyObject *out = args[0], *table = args[1], *rows = args[3], *fits = args[4];
    PyObject *since_values = args[9], *until_values = args[11];
    Py_ssize_t width = PyLong_AsSsize_t(args[2]);
    Py_ssize_t offset = PyLong_AsSsize_t(args[5]);
    double now = PyFloat_AsDouble(args[6]);
    double scale = PyFloat_AsDouble(args[7]);
    Py_ssize_t since = PyLong_AsSsize_t(args[8]);
    Py_ssize_t until = PyLong_AsSsize_t(args[10]);
    if (PyErr_Occurred()) return NULL;
    if (!PyList_Check(rows) || !PyList_Check(since_values) || !PyList_Check(until_values)) {
        PyErr_SetString(PyExc_TypeError, "fill_rows: rows and values must be lists");
        return NULL;
    }
    Py_ssize_t k = PyList_GET_SIZE(rows);
    if (fits != Py_None && (!PyList_Check(fits) || PyList_GET_SIZE(fits) != k)) {
        PyErr_SetString(PyExc_ValueError, "fill_rows: fits must be None or a list as long as rows");
        return NULL;
    }
    if (width <= 0 || since < -1 || since >= width || until < -1 || until >= width) {
        PyErr_SetString(PyExc_ValueError, "fill_rows: a column is out of the rows' width");
        return NULL;
    }
    Py_buffer o, t;
    if (float32_buffer(out, &o, 1) < 0) return NULL;
    if (float32_buffer(table, &t, 0) < 0) {
        PyBuffer_Release(&o);
        return NULL;
    }
    float *dst = (float *)o.buf;
    const float *src = (const float *)t.buf;
    Py_ssize_t table_rows = t.len / 4 / width;
    PyObject *result = NULL;
    if (k > o.len / 4 / width) {
        PyErr_SetString(PyExc_ValueError, "fill_rows: out has fewer rows than rows");
        goto done;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        Py_ssize_t r = PyLong_AsSsize_t(PyList_GET_ITEM(rows, i));
        if (r == -1 && PyErr_Occurred()) goto done;
        Py_ssize_t at = r;
        if (fits != Py_None) {
            int f = PyObject_IsTrue(PyList_GET_ITEM(fits, i));
            if (f < 0) goto done;
            if (!f) at += offset;
        }
        if (at < 0 || at >= table_rows) {
            PyErr_Format(PyExc_IndexError, "fill_rows: row %zd out of range of the table", at);
            goto done;
        }
        float *row = dst + i * width;
        memcpy(row, src + at * width, (size_t)width * sizeof(float));
        double v;
        if (since >= 0) {
            if (value_at(since_values, r, &v) < 0) goto done;
            double x = now - v;
            row[since] = (float)(x / (x + scale));
        }
        if (until >= 0) {
            if (value_at(until_values, r, &v) < 0) goto done;
            double y = v - now;
            row[until] = (float)(y > 0 ? y / (y + scale) : 0.0);
        }
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&o);
    PyBuffer_Release(&t);
    return result;
}

/* put_floats(out, offset, values): out.flat[offset + i] = values[i] for a C-contiguous float32
 * `out` and a tuple of floats, each rounded once to float32 as numpy stores a Python float;
 * False, writing nothing, when a value is not exactly a float (the caller then asks numpy). */
static PyObject *put_floats(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "put_floats takes 3 arguments");
        return NULL;
    }
    PyObject *values = args[2];
    Py_ssize_t offset = PyLong_AsSsize_t(args[1]);
    if (offset == -1 && PyErr_Occurred()) return NULL;
    if (!PyTuple_Check(values)) {
        PyErr_SetString(PyExc_TypeError, "put_floats: values must be a tuple");
        return NULL;
    }
    Py_ssize_t k = PyTuple_GET_SIZE(values);
    for (Py_ssize_t i = 0; i < k; i++) {
        if (!PyFloat_CheckExact(PyTuple_GET_ITEM(values, i))) Py_RETURN_FALSE;
    }
    Py_buffer o;
    if (float32_buffer(args[0], &o, 1) < 0) return NULL;
    if (offset < 0 || offset + k > o.len / 4) {
        PyBuffer_Release(&o);
        PyErr_SetString(PyExc_IndexError, "put_floats: values out of range of out");
        return NULL;
    }
    float *dst = (float *)o.buf + offset;
    for (Py_ssize_t i = 0; i < k; i++) dst[i] = (float)PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(values, i));
    PyBuffer_Release(&o);
    Py_RETURN_TRUE;
}

/* ------------------------------------------------------------------ room for new tasks
 * `hpcgym.envs.capacity.Capacity.room` without numpy's temporaries: for each task (share s,
 * memory m) and each cluster, the nodes with room for it, as the engine counts them: idle
 * (`cpu == 0.0`) when s >= 1, else `cpu <= 1.0 - s + eps`; and `m <= 0.0` or
 * `mem <= 1.0 - m + eps`. The same double expressions as the numpy version, evaluated left to
 * right (no contraction), so every comparison, NaN included, comes out alike. */

/* A C-contiguous buffer of 8-byte items of `kind` ('d': float64, 'q': int64), or -1. */
static int wide_buffer(PyObject *obj, Py_buffer *view, char kind, int writable) {
    int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    const char *f = view->format ? view->format : "";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    int ok = view->itemsize == 8 && f[1] == '\0' &&
             (kind == 'd' ? f[0] == 'd' : (f[0] == 'q' || f[0] == 'l'));
    if (!ok) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_TypeError, "expected a C-contiguous %s buffer",
                     kind == 'd' ? "float64" : "int64");
        return -1;
    }
    return 0;
}

/* room_counts(out, cpu_used, mem_used, share, mem, starts, eps): out[i, c] (int64, tasks x
 * clusters) = the nodes of cluster c, ids [starts[c], starts[c + 1]) (the last up to the
 * end), with room for task i. */
static PyObject *room_counts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "room_counts takes 7 arguments");
        return NULL;
    }
    PyObject *starts = args[5];
    double eps = PyFloat_AsDouble(args[6]);
    if (eps == -1.0 && PyErr_Occurred()) return NULL;
    if (!PyTuple_Check(starts) || PyTuple_GET_SIZE(starts) < 1) {
        PyErr_SetString(PyExc_TypeError, "room_counts: starts must be a non-empty tuple");
        return NULL;
    }
    Py_buffer b[5];
    const char kinds[5] = {'q', 'd', 'd', 'd', 'd'};
    int got = 0;
    PyObject *result = NULL;
    for (; got < 5; got++) {
        if (wide_buffer(args[got], &b[got], kinds[got], got == 0) < 0) goto done;
    }
    Py_ssize_t n = b[1].len / 8, tasks = b[3].len / 8, k = PyTuple_GET_SIZE(starts);
    if (b[2].len / 8 != n || b[4].len / 8 != tasks || b[0].len / 8 != tasks * k) {
        PyErr_SetString(PyExc_ValueError, "room_counts: the arrays' sizes do not agree");
        goto done;
    }
    Py_ssize_t bound[65], *bounds = bound;
    if (k + 1 > 65) {
        bounds = PyMem_Malloc((size_t)(k + 1) * sizeof(Py_ssize_t));
        if (!bounds) {
            PyErr_NoMemory();
            goto done;
        }
    }
    for (Py_ssize_t c = 0; c < k; c++) {
        bounds[c] = PyLong_AsSsize_t(PyTuple_GET_ITEM(starts, c));
        if (bounds[c] == -1 && PyErr_Occurred()) goto free_bounds;
    }
    bounds[k] = n;
    for (Py_ssize_t c = 0; c < k; c++) {
        if (bounds[c] < 0 || bounds[c] > bounds[c + 1]) {
            PyErr_SetString(PyExc_ValueError, "room_counts: starts must ascend within the nodes");
            goto free_bounds;
        }
    }
    {
        long long *out = (long long *)b[0].buf;
        const double *cpu = (const double *)b[1].buf, *mem_used = (const double *)b[2].buf;
        const double *share = (const double *)b[3].buf, *mem = (const double *)b[4].buf;
        for (Py_ssize_t i = 0; i < tasks; i++) {
            double s = share[i], m = mem[i];
            double cpu_room = 1.0 - s + eps, mem_room = 1.0 - m + eps;
            int whole = s >= 1.0, no_mem = m <= 0.0;
            for (Py_ssize_t c = 0; c < k; c++) {
                long long count = 0;
                for (Py_ssize_t j = bounds[c]; j < bounds[c + 1]; j++) {
                    int fits = whole ? cpu[j] == 0.0 : cpu[j] <= cpu_room;
                    count += fits && (no_mem || mem_used[j] <= mem_room);
                }
                out[i * k + c] = count;
            }
        }
    }
    result = Py_None;
    Py_INCREF(result);
free_bounds:
    if (bounds != bound) PyMem_Free(bounds);
done:
    for (int i = 0; i < got; i++) PyBuffer_Release(&b[i]);
    return result;
}

/* ------------------------------------------------------------------ episode summary
 * The per-job statistics of an episode summary (`hpcgym.sim.metrics.summary_of`) without the
 * numpy table: the same elementwise expressions in double, and numpy's sum of a contiguous
 * float64 array, pairwise in blocks of 8 (`pairwise_sum` of numpy's loops), started from 0. */

/* numpy's DOUBLE_pairwise_sum over a contiguous array (PW_BLOCKSIZE 128). */
static double pairwise_sum(const double *a, Py_ssize_t n) {
    if (n < 8) {
        double res = 0.;
        for (Py_ssize_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        Py_ssize_t i;
        for (int j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8) {
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        }
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

/* np.maximum(a, b) of two doubles: NaN when either is. */
static double np_maximum(double a, double b) {
    if (isnan(a)) return a;
    if (isnan(b)) return b;
    return a >= b ? a : b;
}

enum { N_STATS = 8 };

/* column_stats(submit, start, end, work, waste, tau): for each of wait, response, run,
 * slowdown, bsld, stretch, bounded_stretch and waste (`metrics._MEANS`), over the started jobs
 * (start not NaN) whose value is finite, the mean and the max (0.0 when none), as
 * `summary_of` computes them from `derive_columns`'s table; then the first submission (np.min)
 * and the last end of a started job (np.nanmax; NaN when no started job has a finite end).
 * `None` when a statistic's value is -0.0 for a started job (the caller then asks numpy).  Lists of floats, one
 * entry per job. */
static PyObject *column_stats(PyObject *self, PyObject *args) {
    PyObject *submit_l, *start_l, *end_l, *work_l, *waste_l;
    double tau;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!d", &PyList_Type, &submit_l, &PyList_Type, &start_l,
                          &PyList_Type, &end_l, &PyList_Type, &work_l, &PyList_Type, &waste_l,
                          &tau))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(submit_l);
    if (PyList_GET_SIZE(start_l) != n || PyList_GET_SIZE(end_l) != n ||
        PyList_GET_SIZE(work_l) != n || PyList_GET_SIZE(waste_l) != n) {
        PyErr_SetString(PyExc_ValueError, "column_stats: the lists differ in length");
        return NULL;
    }
    double *vals = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) * N_STATS);
    if (vals == NULL) return PyErr_NoMemory();
    Py_ssize_t count[N_STATS] = {0};
    double first = 0.0, last = NAN;
    int any_end = 0, any_finite_end = 0;
    PyObject *result = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        double submit = PyFloat_AsDouble(PyList_GET_ITEM(submit_l, i));
        double start = PyFloat_AsDouble(PyList_GET_ITEM(start_l, i));
        double end = PyFloat_AsDouble(PyList_GET_ITEM(end_l, i));
        double work = PyFloat_AsDouble(PyList_GET_ITEM(work_l, i));
        double waste = PyFloat_AsDouble(PyList_GET_ITEM(waste_l, i));
        if (PyErr_Occurred()) goto done;
        if (i == 0 || submit < first || isnan(submit)) {
            if (!(i > 0 && isnan(first))) first = submit; /* np.min: NaN wins */
        }
        if (isnan(start)) continue;
        if (!isnan(end) && (!any_end || end > last)) {
            last = end; /* np.nanmax over the started jobs' ends */
            any_end = 1;
        }
        if (isfinite(end)) any_finite_end = 1;
        double wait = start - submit, response = end - submit, run = end - start;
        double v[N_STATS] = {
            wait,
            response,
            run,
            response / np_maximum(run, 1.0),
            np_maximum(1.0, (wait + run) / np_maximum(run, tau)),
            response / work,
            np_maximum(response, tau) / np_maximum(work, tau),
            waste,
        };
        for (int c = 0; c < N_STATS; c++) {
            if (v[c] == 0.0 && signbit(v[c])) {
                /* which zero np.max returns among -0.0 and 0.0 is its loop's choice */
                free(vals);
                Py_RETURN_NONE;
            }
            if (isfinite(v[c])) vals[c * n + count[c]++] = v[c];
        }
    }
    result = PyTuple_New(2 * N_STATS + 2);
    if (result == NULL) goto done;
    for (int c = 0; c < N_STATS; c++) {
        const double *col = vals + c * n;
        Py_ssize_t k = count[c];
        double mean = 0.0, max = 0.0;
        if (k) {
            mean = pairwise_sum(col, k) / (double)k;
            max = col[0];
            for (Py_ssize_t i = 1; i < k; i++) {
                if (col[i] > max) max = col[i];
            }
        }
        PyObject *a = PyFloat_FromDouble(mean), *b = PyFloat_FromDouble(max);
        if (a == NULL || b == NULL) {
            Py_XDECREF(a);
            Py_XDECREF(b);
            Py_CLEAR(result);
            goto done;
        }
        PyTuple_SET_ITEM(result, 2 * c, a);
        PyTuple_SET_ITEM(result, 2 * c + 1, b);
    }
    PyObject *f = PyFloat_FromDouble(first), *l = PyFloat_FromDouble(any_finite_end ? last : NAN);
    if (f == NULL || l == NULL) {
        Py_XDECREF(f);
        Py_XDECREF(l);
        Py_CLEAR(result);
        goto done;
    }
    PyTuple_SET_ITEM(result, 2 * N_STATS, f);
    PyTuple_SET_ITEM(result, 2 * N_STATS + 1, l);
done:
    free(vals);
    return result;
}

static PyMethodDef methods[] = {
    {"fill_rows", (PyCFunction)(void (*)(void))fill_rows, METH_FASTCALL,
     "fill_rows(out, table, width, rows, fits, offset, now, scale, since, since_values, until, "
     "until_values)\n\n"
     "out[:k] = table.take([r if fits is None or f else r + offset ...], 0) on float32 rows of "
     "width; then, for a column other than -1, out[i, since] = x / (x + scale) with "
     "x = now - since_values[rows[i]], out[i, until] = y / (y + scale) where y = "
     "until_values[rows[i]] - now is positive, else 0."},
    {"room_counts", (PyCFunction)(void (*)(void))room_counts, METH_FASTCALL,
     "room_counts(out, cpu_used, mem_used, share, mem, starts, eps) -> None\n\n"
     "out[i, c] = the nodes of cluster c (ids from starts[c] to the next start) with room for "
     "a task of (share[i], mem[i]), as hpcgym.envs.capacity counts them."},
    {"put_floats", (PyCFunction)(void (*)(void))put_floats, METH_FASTCALL,
     "put_floats(out, offset, values) -> bool\n\n"
     "out.flat[offset + i] = values[i] on a C-contiguous float32 array, for a tuple of floats "
     "(each rounded once to float32); False, writing nothing, when a value is not a float."},
    {"new_objects", new_objects, METH_VARARGS,
     "new_objects(cls, n)\n\n[object.__new__(cls) for _ in range(n)], in C."},
    {"untrack", untrack, METH_O,
     "untrack(objects)\n\nTake the objects off the cycle collector's lists (they must never "
     "be part of a reference cycle)."},
    {"get_columns", get_columns, METH_VARARGS,
     "get_columns(cls, objects, descrs, checks=())\n\n"
     "([d.__get__(o, cls) for o in objects] for d in descrs), or None when an object's type is "
     "not cls itself or, for a triple (d, value, is_) of checks, d.__get__(o, cls) is not value "
     "(is_) or does not equal it."},
    {"set_column", set_column, METH_VARARGS,
     "set_column(descr, objects, values, per_object)\n\n"
     "descr.__set__(objects[i], values[i] if per_object else values) for every object."},
    {"run_specs", (PyCFunction)(void (*)(void))run_specs, METH_FASTCALL,
     "run_specs(policy, capacity, grace, kill, cls, objects, fields, checks)\n\n"
     "run()'s tuple, then the ids (int64 bytes) and the sum of work * nodes (None from Python "
     "3.12), for objects of exactly type cls read through fields (id, submit, work, nodes, "
     "min_nodes, walltime) and checks (descr, value, is_); None when one does not qualify, "
     "False when they are not in submission order."},
    {"column_stats", column_stats, METH_VARARGS,
     "column_stats(submit, start, end, work, waste, tau) -> (mean_wait, max_wait, ..., "
     "mean_waste, max_waste, first_submit, last_end)\n\n"
     "The per-job means and maxima of an episode summary over the started jobs, as "
     "hpcgym.sim.metrics.summary_of computes them with numpy; last_end is NaN when no started "
     "job has ended; None when a started job's value is -0.0 (numpy's max decides its sign)."},
    {"run", batch_run, METH_VARARGS,
     "run(policy, capacity, grace, kill, submit, work, wall, size) -> (start, end, state, "
     "alloc_area, "
     "demand_area, started, completed, killed, rejected, now, inputs, sizes)\n\n"
     "One FCFS (0) or EASY (1) run of rigid jobs in submission order (wall: -1 or None where a "
     "job has no walltime); start, end (float64) and "
     "state (int8: 0 completed, 1 killed, 2 rejected) as bytes, one entry per job; inputs: "
     "submit, work, est and wall (float64, one after the other: est the walltime, else the "
     "work; wall -1 where no kill applies), sizes (int64)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_batchcore",
                                    "hpcgym's batch core: whole FCFS and EASY runs of rigid jobs; slots read and set column "
                                    "by column; the env observation's rows gathered.",
                                    -1, methods};

PyMODINIT_FUNC PyInit__batchcore(void) { return PyModule_Create(&module); }
