/* The idle nodes of one cluster as sorted runs of ids, in C: `hpcgym.sim.nodes.IdleRuns`.
 *
 * `hpcgym.sim.nodes` defines the same type in Python (the pure-Python install uses it, and the
 * tests hold the two to the same answers); this one is used whenever it is built. The runs are
 * disjoint and never touch: `[lo_i, hi_i)` with `hi_i < lo_{i+1}`. They are kept as machine
 * integers in one array of pairs, with free room at both ends, so that
 *
 * - a start takes the lowest idle ids from the front (FCFS and EASY start the lowest ids, so
 *   the front run shrinks or goes: O(1), no shift of the others),
 * - an end gives its runs back with one bisection each over contiguous integers and one
 *   `memmove` of the shorter side to open or close a slot,
 *
 * where the Python version holds Python ints in two lists: each comparison of a bisection
 * reads an object elsewhere in memory, and each insertion or deletion moves the whole tail.
 * A job's runs cross into Python as a flat list `[lo0, hi0, lo1, hi1, ...]` of ints, lowest
 * first, which the job keeps and gives back at its end.
 *
 * Pure C99 and the CPython API only.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    long long *r;     /* 2 * cap entries; run i of the n is [r[2(head+i)], r[2(head+i)+1]) */
    Py_ssize_t head;  /* first used pair */
    Py_ssize_t n;     /* runs held */
    Py_ssize_t cap;   /* pairs allocated */
} IdleRuns;

#define LO(s, i) ((s)->r[2 * ((s)->head + (i))])
#define HI(s, i) ((s)->r[2 * ((s)->head + (i)) + 1])

static int runs_reserve(IdleRuns *s, Py_ssize_t cap) {
    if (cap <= s->cap) return 0;
    long long *r = PyMem_Realloc(s->r, (size_t)cap * 2 * sizeof(long long));
    if (!r) {
        PyErr_NoMemory();
        return -1;
    }
    s->r = r;
    s->cap = cap;
    return 0;
}

/* Open a free pair before run i (0 <= i <= n), moving the shorter side. */
static int runs_open(IdleRuns *s, Py_ssize_t i) {
    if (s->head == 0 && s->n == s->cap) {
        if (runs_reserve(s, s->cap < 4 ? 8 : 2 * s->cap) < 0) return -1;
    }
    int left = s->head > 0 && (i < s->n - i || s->head + s->n == s->cap);
    if (left) {
        memmove(s->r + 2 * (s->head - 1), s->r + 2 * s->head, (size_t)i * 2 * sizeof(long long));
        s->head--;
    } else {
        long long *at = s->r + 2 * (s->head + i);
        memmove(at + 2, at, (size_t)(s->n - i) * 2 * sizeof(long long));
    }
    s->n++;
    return 0;
}

/* Drop run i, moving the shorter side. */
static void runs_close(IdleRuns *s, Py_ssize_t i) {
    if (i < s->n - 1 - i) {
        memmove(s->r + 2 * (s->head + 1), s->r + 2 * s->head, (size_t)i * 2 * sizeof(long long));
        s->head++;
    } else {
        long long *at = s->r + 2 * (s->head + i);
        memmove(at, at + 2, (size_t)(s->n - 1 - i) * 2 * sizeof(long long));
    }
    s->n--;
    if (!s->n) s->head = 0;
}

/* The first run at or after `start` whose lo is >= a (bisect_left over the lo's). */
static Py_ssize_t runs_place(const IdleRuns *s, Py_ssize_t start, long long a) {
    Py_ssize_t i = start, j = s->n;
    while (i < j) {
        Py_ssize_t m = (i + j) >> 1;
        if (LO(s, m) < a) i = m + 1;
        else j = m;
    }
    return i;
}

/* Merge the busy run [a, b) in, searching its place from `start`; returns the place or -1. */
static Py_ssize_t runs_give(IdleRuns *s, Py_ssize_t start, long long a, long long b) {
    Py_ssize_t i = runs_place(s, start, a);
    int left = i > 0 && HI(s, i - 1) == a;
    int right = i < s->n && LO(s, i) == b;
    if (left && right) {
        HI(s, i - 1) = HI(s, i);
        runs_close(s, i);
    } else if (left) {
        HI(s, i - 1) = b;
    } else if (right) {
        LO(s, i) = a;
    } else {
        if (runs_open(s, i) < 0) return -1;
        LO(s, i) = a;
        HI(s, i) = b;
    }
    return i;
}

static PyObject *flat_list(const long long *v, Py_ssize_t len) {
    PyObject *out = PyList_New(len);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (!x) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, x);
    }
    return out;
}

/* How many runs the k lowest idle ids span: `*full` runs wholly, plus one partly when
 * `*part` (the ids it gives) is above 0; returns 0, or, when fewer than k ids are idle, -1 (an
 * error set) if `strict`, else 0 with every idle run counted as whole. Counted before anything
 * is written, so that the answer is made at its size, with no buffer between. */
static int runs_span(const IdleRuns *s, long long k, Py_ssize_t *full, long long *part,
                     int strict) {
    Py_ssize_t i = 0;
    long long left = k;
    while (left > 0) {
        if (i >= s->n) {
            if (!strict) break;
            PyErr_Format(PyExc_ValueError, "%lld idle ids wanted, %lld idle", k, k - left);
            return -1;
        }
        long long span = HI(s, i) - LO(s, i);
        if (span > left) break;
        left -= span;
        i++;
    }
    *full = i;
    *part = i < s->n && left > 0 ? left : 0;
    return 0;
}

/* Bound j (0 <= j < 2 * full + (part > 0)) of the runs `runs_span` counted. */
static long long span_bound(const IdleRuns *s, Py_ssize_t j, Py_ssize_t full, long long part) {
    Py_ssize_t i = j >> 1;
    if (i < full) return j & 1 ? HI(s, i) : LO(s, i);
    return j & 1 ? LO(s, i) + part : LO(s, i);
}

static int as_ll(PyObject *o, long long *v) {
    *v = PyLong_AsLongLong(o);
    return (*v == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* ----------------------------------------------------------------------------- methods */
static int IdleRuns_init(IdleRuns *s, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"lo", "hi", NULL};
    long long lo, hi;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "LL", kw, &lo, &hi)) return -1;
    if (runs_reserve(s, 8) < 0) return -1;
    s->head = 0;
    s->n = 0;
    if (hi > lo) {
        s->n = 1;
        LO(s, 0) = lo;
        HI(s, 0) = hi;
    }
    return 0;
}

static void IdleRuns_dealloc(IdleRuns *s) {
    PyMem_Free(s->r);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *IdleRuns_take_front(IdleRuns *s, PyObject *arg) {
    long long k;
    if (as_ll(arg, &k) < 0) return NULL;
    if (s->n) {
        long long a = LO(s, 0), span = HI(s, 0) - a;
        if (span > k) {
            LO(s, 0) = a + k;
            return PyLong_FromLongLong(a);
        }
        if (span == k) {
            runs_close(s, 0);
            return PyLong_FromLongLong(a);
        }
    }
    return PyLong_FromLong(-1);
}

/* Shared by take_runs and first_runs: the runs of the k lowest idle ids, taken or not. */
/* The k lowest idle ids' runs (taken if `take`), as a flat list of ints, or, if `packed`, as
 * bytes: native int64 pairs lo, hi (one object, no int per bound: a job's runs, kept from its
 * start to its end). */
static PyObject *lowest(IdleRuns *s, PyObject *arg, int take, int packed) {
    long long k, part;
    Py_ssize_t full;
    if (as_ll(arg, &k) < 0) return NULL;
    if (k < 0) {
        PyErr_Format(PyExc_ValueError, "a count of ids must not be negative, got %lld", k);
        return NULL;
    }
    if (runs_span(s, k, &full, &part, take) < 0) return NULL;
    Py_ssize_t m = 2 * full + (part > 0 ? 2 : 0);
    PyObject *out;
    if (packed) {
        out = PyBytes_FromStringAndSize(NULL, m * (Py_ssize_t)sizeof(long long));
        if (!out) return NULL;
        char *data = PyBytes_AS_STRING(out);
        for (Py_ssize_t j = 0; j < m; j++) {
            long long v = span_bound(s, j, full, part);
            memcpy(data + j * sizeof(long long), &v, sizeof v); /* no alignment assumed */
        }
    } else {
        out = PyList_New(m);
        if (!out) return NULL;
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *x = PyLong_FromLongLong(span_bound(s, j, full, part));
            if (!x) {
                Py_DECREF(out);
                return NULL;
            }
            PyList_SET_ITEM(out, j, x);
        }
    }
    if (take) {
        /* The runs wholly taken go from the front; a partly taken one keeps its top. */
        s->head += full;
        s->n -= full;
        if (part) LO(s, 0) += part;
        if (!s->n) s->head = 0;
    }
    return out;
}

static PyObject *IdleRuns_take_runs(IdleRuns *s, PyObject *arg) { return lowest(s, arg, 1, 0); }

static PyObject *IdleRuns_take_packed(IdleRuns *s, PyObject *arg) {
    return lowest(s, arg, 1, 1);
}

static PyObject *IdleRuns_first_runs(IdleRuns *s, PyObject *arg) { return lowest(s, arg, 0, 0); }

static PyObject *IdleRuns_give(IdleRuns *s, PyObject *const *args, Py_ssize_t nargs) {
    long long a, b;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "give(a, b) takes two ids");
        return NULL;
    }
    if (as_ll(args[0], &a) < 0 || as_ll(args[1], &b) < 0) return NULL;
    if (runs_give(s, 0, a, b) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *IdleRuns_give_runs(IdleRuns *s, PyObject *runs) {
    if (!PyList_Check(runs)) {
        PyErr_SetString(PyExc_TypeError, "give_runs takes a list [lo0, hi0, lo1, hi1, ...]");
        return NULL;
    }
    Py_ssize_t len = PyList_GET_SIZE(runs), start = 0;
    long long given = 0;
    for (Py_ssize_t r = 0; r + 1 < len; r += 2) {
        long long a, b;
        if (as_ll(PyList_GET_ITEM(runs, r), &a) < 0) return NULL;
        if (as_ll(PyList_GET_ITEM(runs, r + 1), &b) < 0) return NULL;
        Py_ssize_t i = runs_give(s, start, a, b);
        if (i < 0) return NULL;
        given += b - a;
        /* The run just given is at i - 1 or i; the next one (ascending) lies after it. */
        start = i > 0 ? i - 1 : 0;
    }
    return PyLong_FromLongLong(given);
}

static PyObject *IdleRuns_give_packed(IdleRuns *s, PyObject *runs) {
    if (!PyBytes_Check(runs) || PyBytes_GET_SIZE(runs) % (2 * (Py_ssize_t)sizeof(long long))) {
        PyErr_SetString(PyExc_TypeError,
                        "give_packed takes bytes of native int64 pairs lo, hi (take_packed's)");
        return NULL;
    }
    const char *data = PyBytes_AS_STRING(runs);
    Py_ssize_t len = PyBytes_GET_SIZE(runs) / (Py_ssize_t)sizeof(long long), start = 0;
    long long given = 0;
    for (Py_ssize_t r = 0; r + 1 < len; r += 2) {
        long long ab[2];
        memcpy(ab, data + r * sizeof(long long), sizeof ab); /* no alignment assumed */
        Py_ssize_t i = runs_give(s, start, ab[0], ab[1]);
        if (i < 0) return NULL;
        given += ab[1] - ab[0];
        start = i > 0 ? i - 1 : 0;
    }
    return PyLong_FromLongLong(given);
}

/* Nodes [a, b), all idle (so inside one run), become busy; -1 (ValueError) if they are not. */
static int runs_occupy(IdleRuns *s, long long a, long long b) {
    /* The run holding a: bisect_right over the lo's, minus one. */
    Py_ssize_t i = 0, j = s->n;
    while (i < j) {
        Py_ssize_t m = (i + j) >> 1;
        if (a < LO(s, m)) j = m;
        else i = m + 1;
    }
    i -= 1;
    if (i < 0 || b > HI(s, i) || a >= b) {
        PyErr_Format(PyExc_ValueError, "ids [%lld, %lld) are not all idle", a, b);
        return -1;
    }
    long long c = LO(s, i), d = HI(s, i);
    if (c == a) {
        if (d == b) runs_close(s, i);
        else LO(s, i) = b;
    } else if (d == b) {
        HI(s, i) = a;
    } else {
        HI(s, i) = a;
        if (runs_open(s, i + 1) < 0) return -1;
        LO(s, i + 1) = b;
        HI(s, i + 1) = d;
    }
    return 0;
}

static PyObject *IdleRuns_occupy(IdleRuns *s, PyObject *const *args, Py_ssize_t nargs) {
    long long a, b;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "occupy(a, b) takes two ids");
        return NULL;
    }
    if (as_ll(args[0], &a) < 0 || as_ll(args[1], &b) < 0) return NULL;
    if (runs_occupy(s, a, b) < 0) return NULL;
    Py_RETURN_NONE;
}

static int cmp_ids(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* The ids of `obj` (an int64 buffer, else any sequence of ints), sorted, in a new array of
 * `*n`; NULL with an exception set on failure. */
static long long *sorted_ids(PyObject *obj, Py_ssize_t *n) {
    long long *ids = NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) == 0) {
        const char *f = view.format ? view.format : "";
        if (*f == '<' || *f == '=' || *f == '@') f++;
        if (view.itemsize == 8 && (f[0] == 'q' || f[0] == 'l') && f[1] == '\0') {
            *n = view.len / 8;
            ids = PyMem_Malloc((size_t)(*n ? *n : 1) * sizeof(long long));
            if (ids) memcpy(ids, view.buf, (size_t)*n * sizeof(long long));
            PyBuffer_Release(&view);
            if (!ids) return (long long *)PyErr_NoMemory();
            goto sort;
        }
        PyBuffer_Release(&view);
    } else {
        PyErr_Clear();
    }
    PyObject *seq = PySequence_Fast(obj, "ids must be an int64 array or a sequence of ints");
    if (!seq) return NULL;
    *n = PySequence_Fast_GET_SIZE(seq);
    ids = PyMem_Malloc((size_t)(*n ? *n : 1) * sizeof(long long));
    if (!ids) {
        Py_DECREF(seq);
        return (long long *)PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        PyObject *x = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, i));
        ids[i] = x ? PyLong_AsLongLong(x) : -1;
        Py_XDECREF(x);
        if (ids[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            PyMem_Free(ids);
            return NULL;
        }
    }
    Py_DECREF(seq);
sort:
    for (Py_ssize_t i = 1; i < *n; i++) {
        if (ids[i - 1] >= ids[i]) {
            qsort(ids, (size_t)*n, sizeof(long long), cmp_ids);
            break;
        }
    }
    return ids;
}

/* give_ids / occupy_ids: the distinct ids of `obj`, any order, as runs, given or occupied. */
static PyObject *by_ids(IdleRuns *s, PyObject *obj, int give) {
    Py_ssize_t n = 0;
    long long *ids = sorted_ids(obj, &n);
    if (!ids) return NULL;
    for (Py_ssize_t i = 1; i < n; i++) {
        if (ids[i] == ids[i - 1]) {
            PyErr_Format(PyExc_ValueError, "id %lld is given twice", ids[i]);
            PyMem_Free(ids);
            return NULL;
        }
    }
    PyObject *result = Py_None;
    Py_ssize_t start = 0;
    for (Py_ssize_t i = 0; i < n;) {
        Py_ssize_t j = i + 1;
        while (j < n && ids[j] == ids[j - 1] + 1) j++;
        if (give) {
            Py_ssize_t at = runs_give(s, start, ids[i], ids[j - 1] + 1);
            if (at < 0) {
                result = NULL;
                break;
            }
            start = at > 0 ? at - 1 : 0;
        } else if (runs_occupy(s, ids[i], ids[j - 1] + 1) < 0) {
            result = NULL;
            break;
        }
        i = j;
    }
    PyMem_Free(ids);
    Py_XINCREF(result);
    return result;
}

static PyObject *IdleRuns_give_ids(IdleRuns *s, PyObject *obj) { return by_ids(s, obj, 1); }

static PyObject *IdleRuns_occupy_ids(IdleRuns *s, PyObject *obj) { return by_ids(s, obj, 0); }

static PyObject *IdleRuns_runs(IdleRuns *s, PyObject *unused) {
    return flat_list(s->r + 2 * s->head, 2 * s->n);
}

static PyObject *column(IdleRuns *s, int hi) {
    PyObject *out = PyList_New(s->n);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < s->n; i++) {
        PyObject *x = PyLong_FromLongLong(hi ? HI(s, i) : LO(s, i));
        if (!x) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, x);
    }
    return out;
}

static PyObject *IdleRuns_get_lo(IdleRuns *s, void *unused) { return column(s, 0); }

static PyObject *IdleRuns_get_hi(IdleRuns *s, void *unused) { return column(s, 1); }

/* Pickled as its runs' bytes (machine integers, native order: a copy within one machine). */
static PyObject *IdleRuns_reduce(IdleRuns *s, PyObject *unused) {
    PyObject *state = PyBytes_FromStringAndSize((const char *)(s->r + 2 * s->head),
                                                (Py_ssize_t)(2 * s->n * sizeof(long long)));
    if (!state) return NULL;
    return Py_BuildValue("O(ii)N", (PyObject *)Py_TYPE(s), 0, 0, state);
}

static PyObject *IdleRuns_setstate(IdleRuns *s, PyObject *state) {
    if (!PyBytes_Check(state) || PyBytes_GET_SIZE(state) % (2 * sizeof(long long))) {
        PyErr_SetString(PyExc_TypeError, "IdleRuns state must be the bytes of its runs");
        return NULL;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(state) / (Py_ssize_t)(2 * sizeof(long long));
    if (runs_reserve(s, n < 8 ? 8 : n) < 0) return NULL;
    memcpy(s->r, PyBytes_AS_STRING(state), (size_t)n * 2 * sizeof(long long));
    s->head = 0;
    s->n = n;
    Py_RETURN_NONE;
}

static PyMethodDef IdleRuns_methods[] = {
    {"take_front", (PyCFunction)IdleRuns_take_front, METH_O,
     "Take the k lowest idle ids if they are one run: its first id, else -1 (no change)."},
    {"take_runs", (PyCFunction)IdleRuns_take_runs, METH_O,
     "Take the k lowest idle ids: their runs, flat [lo0, hi0, ...], lowest first.\n\n"
     "Raises ValueError, with nothing taken, when fewer than k ids are idle."},
    {"take_packed", (PyCFunction)IdleRuns_take_packed, METH_O,
     "take_runs, the runs as bytes of native int64 pairs lo, hi (one object)."},
    {"give_packed", (PyCFunction)IdleRuns_give_packed, METH_O,
     "give_runs of take_packed's bytes; returns the nodes given."},
    {"first_runs", (PyCFunction)IdleRuns_first_runs, METH_O,
     "The runs of the k lowest idle ids (at most as many as there are), flat; nothing taken."},
    {"give", (PyCFunction)(void (*)(void))IdleRuns_give, METH_FASTCALL,
     "Nodes [a, b), all busy, become idle."},
    {"give_runs", (PyCFunction)IdleRuns_give_runs, METH_O,
     "give each run of a flat ascending list [lo0, hi0, ...] (all busy), in one pass; returns "
     "the nodes given."},
    {"occupy", (PyCFunction)(void (*)(void))IdleRuns_occupy, METH_FASTCALL,
     "Nodes [a, b), all idle (so inside one run), become busy."},
    {"give_ids", (PyCFunction)IdleRuns_give_ids, METH_O,
     "Nodes ids (distinct, any order; an int64 array or ints), all busy, become idle."},
    {"occupy_ids", (PyCFunction)IdleRuns_occupy_ids, METH_O,
     "Nodes ids (distinct, any order; an int64 array or ints), all idle, become busy."},
    {"runs", (PyCFunction)IdleRuns_runs, METH_NOARGS, "Every idle run, flat [lo0, hi0, ...]."},
    {"__reduce__", (PyCFunction)IdleRuns_reduce, METH_NOARGS, NULL},
    {"__setstate__", (PyCFunction)IdleRuns_setstate, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef IdleRuns_getset[] = {
    {"lo", (getter)IdleRuns_get_lo, NULL, "The runs' first ids (a new list).", NULL},
    {"hi", (getter)IdleRuns_get_hi, NULL, "The runs' ends, exclusive (a new list).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject IdleRunsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hpcgym.sim._idleruns.IdleRuns",
    .tp_doc = PyDoc_STR("IdleRuns(lo, hi): the idle ids of one cluster, [lo, hi) at first, "
                        "as sorted disjoint runs."),
    .tp_basicsize = sizeof(IdleRuns),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)IdleRuns_init,
    .tp_dealloc = (destructor)IdleRuns_dealloc,
    .tp_methods = IdleRuns_methods,
    .tp_getset = IdleRuns_getset,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_idleruns",
                                    "The idle nodes of a cluster as runs of ids, in C.", -1};

PyMODINIT_FUNC PyInit__idleruns(void) {
    if (PyType_Ready(&IdleRunsType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&IdleRunsType);
    if (PyModule_AddObject(m, "IdleRuns", (PyObject *)&IdleRunsType) < 0) {
        Py_DECREF(&IdleRunsType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
