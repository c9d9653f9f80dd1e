/* The engine's event queue, in C: `hpcgym.sim.engine.EventHeap`.
 *
 * `hpcgym.sim.engine` defines the same type in Python (`PyEventHeap`: a list of events kept by
 * `push_event` and `pop_event`), which the pure-Python install uses; the tests hold the two to
 * the same pops. Both are binary heaps ordered by `(time, prio, seq)`, with `heapq`'s
 * algorithm, so that the same pushes and pops leave the same events in the same slots.
 *
 * An entry keeps its key as machine numbers beside the event object it orders: a comparison
 * reads a double and two integers from one contiguous array, where the list version reads
 * three attributes of two objects elsewhere in memory, through a function call per slot.
 * The caller passes the time and priority with the event (`push(time, prio, event)`): the
 * event's own fields, which this module cannot read (the engine's events are compiled
 * records). The third part of the key, `seq`, is the heap's own count of pushes: events of
 * equal time and priority leave in the order they came, as the engine's own `seq` (also
 * counted push by push) orders them in the list version, without a Python int made and
 * freed per push to carry it.
 *
 * Pure C99 and the CPython API only.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    double time;
    long long prio;
    long long seq;
    PyObject *event; /* a strong reference */
} Entry;

typedef struct {
    PyObject_HEAD
    Entry *e;
    Py_ssize_t n;
    Py_ssize_t cap;
    long long pushes; /* the next entry's seq */
} EventHeap;

/* a before b in (time, prio, seq) order, as the engine's `_before`. */
static inline int before(const Entry *a, const Entry *b) {
    if (a->time != b->time) return a->time < b->time;
    if (a->prio != b->prio) return a->prio < b->prio;
    return a->seq < b->seq;
}

static int reserve(EventHeap *h, Py_ssize_t cap) {
    if (cap <= h->cap) return 0;
    Py_ssize_t want = h->cap < 16 ? 16 : h->cap;
    while (want < cap) want *= 2;
    Entry *e = PyMem_Realloc(h->e, (size_t)want * sizeof(Entry));
    if (!e) {
        PyErr_NoMemory();
        return -1;
    }
    h->e = e;
    h->cap = want;
    return 0;
}

/* heapq._siftdown: the entry at pos moves up while it comes before its parent. */
static void sift_down(Entry *e, Py_ssize_t pos) {
    Entry item = e[pos];
    while (pos > 0) {
        Py_ssize_t up = (pos - 1) >> 1;
        if (!before(&item, &e[up])) break;
        e[pos] = e[up];
        pos = up;
    }
    e[pos] = item;
}

/* heapq._siftup: the smaller child moves up until a leaf, then the entry sifts down. */
static void sift_up(Entry *e, Py_ssize_t n, Py_ssize_t pos) {
    Entry item = e[pos];
    Py_ssize_t child = 2 * pos + 1;
    while (child < n) {
        Py_ssize_t right = child + 1;
        if (right < n && !before(&e[child], &e[right])) child = right;
        e[pos] = e[child];
        pos = child;
        child = 2 * pos + 1;
    }
    e[pos] = item;
    sift_down(e, pos);
}

static int add(EventHeap *h, double time, long long prio, long long seq, PyObject *event) {
    if (reserve(h, h->n + 1) < 0) return -1;
    Entry *slot = &h->e[h->n];
    slot->time = time;
    slot->prio = prio;
    slot->seq = seq;
    Py_INCREF(event);
    slot->event = event;
    h->n++;
    sift_down(h->e, h->n - 1);
    return 0;
}

static int as_double(PyObject *o, double *v) {
    *v = PyFloat_AsDouble(o);
    return (*v == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

static int as_ll(PyObject *o, long long *v) {
    *v = PyLong_AsLongLong(o);
    return (*v == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* ----------------------------------------------------------------------------- methods */
static PyObject *EventHeap_push(EventHeap *h, PyObject *const *args, Py_ssize_t nargs) {
    double time;
    long long prio;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "push(time, prio, event) takes three arguments");
        return NULL;
    }
    if (as_double(args[0], &time) < 0 || as_ll(args[1], &prio) < 0) return NULL;
    if (add(h, time, prio, h->pushes, args[2]) < 0) return NULL;
    h->pushes++;
    Py_RETURN_NONE;
}

static PyObject *EventHeap_pop(EventHeap *h, PyObject *unused) {
    if (!h->n) {
        PyErr_SetString(PyExc_IndexError, "pop from an empty event heap");
        return NULL;
    }
    h->n--;
    Entry last = h->e[h->n];
    if (!h->n) return last.event; /* the reference passes to the caller */
    PyObject *top = h->e[0].event;
    h->e[0] = last;
    sift_up(h->e, h->n, 0);
    return top;
}

static PyObject *EventHeap_top(EventHeap *h, PyObject *unused) {
    PyObject *top = h->n ? h->e[0].event : Py_None;
    Py_INCREF(top);
    return top;
}

/* pop then top in one call: the first event is dropped (the caller holds it, from `top`),
 * and the new first returned (None when empty). */
static PyObject *EventHeap_pop_top(EventHeap *h, PyObject *unused) {
    PyObject *gone = EventHeap_pop(h, NULL);
    if (!gone) return NULL;
    Py_DECREF(gone);
    return EventHeap_top(h, NULL);
}

static PyObject *EventHeap_events(EventHeap *h, PyObject *unused) {
    PyObject *out = PyList_New(h->n);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < h->n; i++) {
        Py_INCREF(h->e[i].event);
        PyList_SET_ITEM(out, i, h->e[i].event);
    }
    return out;
}

static PyObject *EventHeap_iter(EventHeap *h) {
    PyObject *events = EventHeap_events(h, NULL);
    if (!events) return NULL;
    PyObject *it = PyObject_GetIter(events);
    Py_DECREF(events);
    return it;
}

static Py_ssize_t EventHeap_len(EventHeap *h) { return h->n; }

/* Pickled as its count of pushes and its entries, slot by slot: (time, prio, seq, event). */
static PyObject *EventHeap_reduce(EventHeap *h, PyObject *unused) {
    PyObject *state = PyList_New(h->n);
    if (!state) return NULL;
    for (Py_ssize_t i = 0; i < h->n; i++) {
        Entry *x = &h->e[i];
        PyObject *t = Py_BuildValue("(dLLO)", x->time, x->prio, x->seq, x->event);
        if (!t) {
            Py_DECREF(state);
            return NULL;
        }
        PyList_SET_ITEM(state, i, t);
    }
    return Py_BuildValue("O()(LN)", (PyObject *)Py_TYPE(h), h->pushes, state);
}

static void clear_entries(EventHeap *h) {
    Py_ssize_t n = h->n;
    h->n = 0;
    for (Py_ssize_t i = 0; i < n; i++) Py_DECREF(h->e[i].event);
}

static PyObject *EventHeap_setstate(EventHeap *h, PyObject *arg) {
    long long pushes;
    PyObject *state;
    if (!PyTuple_Check(arg) || PyTuple_GET_SIZE(arg) != 2 ||
        !PyList_Check(state = PyTuple_GET_ITEM(arg, 1))) {
        PyErr_SetString(PyExc_TypeError,
                        "EventHeap state must be (pushes, a list of its entries)");
        return NULL;
    }
    if (as_ll(PyTuple_GET_ITEM(arg, 0), &pushes) < 0) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(state);
    clear_entries(h);
    if (reserve(h, n) < 0) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(state, i);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 4) {
            clear_entries(h);
            PyErr_SetString(PyExc_TypeError, "an EventHeap entry is (time, prio, seq, event)");
            return NULL;
        }
        Entry *x = &h->e[i];
        if (as_double(PyTuple_GET_ITEM(t, 0), &x->time) < 0 ||
            as_ll(PyTuple_GET_ITEM(t, 1), &x->prio) < 0 ||
            as_ll(PyTuple_GET_ITEM(t, 2), &x->seq) < 0) {
            clear_entries(h);
            return NULL;
        }
        x->event = PyTuple_GET_ITEM(t, 3);
        Py_INCREF(x->event);
        h->n = i + 1;
    }
    h->pushes = pushes;
    Py_RETURN_NONE;
}

static int EventHeap_traverse(EventHeap *h, visitproc visit, void *arg) {
    for (Py_ssize_t i = 0; i < h->n; i++) Py_VISIT(h->e[i].event);
    return 0;
}

static int EventHeap_clear(EventHeap *h) {
    clear_entries(h);
    return 0;
}

static void EventHeap_dealloc(EventHeap *h) {
    PyObject_GC_UnTrack(h);
    clear_entries(h);
    PyMem_Free(h->e);
    Py_TYPE(h)->tp_free((PyObject *)h);
}

static PyMethodDef EventHeap_methods[] = {
    {"push", (PyCFunction)(void (*)(void))EventHeap_push, METH_FASTCALL,
     "push(time, prio, event): queue event; events leave by (time, prio), ties in the order "
     "they came."},
    {"pop", (PyCFunction)EventHeap_pop, METH_NOARGS,
     "The first event in (time, prio, push) order, removed; IndexError when empty."},
    {"top", (PyCFunction)EventHeap_top, METH_NOARGS, "The first event, kept; None when empty."},
    {"pop_top", (PyCFunction)EventHeap_pop_top, METH_NOARGS,
     "Drop the first event, then return the new first (None when empty): pop, then top, in "
     "one call; IndexError when empty."},
    {"events", (PyCFunction)EventHeap_events, METH_NOARGS,
     "Every queued event, in heap order (a new list)."},
    {"__reduce__", (PyCFunction)EventHeap_reduce, METH_NOARGS, NULL},
    {"__setstate__", (PyCFunction)EventHeap_setstate, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods EventHeap_as_sequence = {
    .sq_length = (lenfunc)EventHeap_len,
};

static PyTypeObject EventHeapType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hpcgym.sim._eventheap.EventHeap",
    .tp_doc = PyDoc_STR("EventHeap(): events queued by (time, prio, seq), first out first."),
    .tp_basicsize = sizeof(EventHeap),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)EventHeap_dealloc,
    .tp_traverse = (traverseproc)EventHeap_traverse,
    .tp_clear = (inquiry)EventHeap_clear,
    .tp_iter = (getiterfunc)EventHeap_iter,
    .tp_as_sequence = &EventHeap_as_sequence,
    .tp_methods = EventHeap_methods,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_eventheap",
                                    "The engine's event queue, in C.", -1};

PyMODINIT_FUNC PyInit__eventheap(void) {
    if (PyType_Ready(&EventHeapType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&EventHeapType);
    if (PyModule_AddObject(m, "EventHeap", (PyObject *)&EventHeapType) < 0) {
        Py_DECREF(&EventHeapType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
