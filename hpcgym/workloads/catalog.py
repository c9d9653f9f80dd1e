"""The traces hpcgym knows: those it ships, those it can fetch, and where trace files are found.

Five traces travel with the package (``hpcgym/workloads/data``, listed in :data:`BUNDLED`); the
well-known Parallel Workloads Archive logs that are too large to ship are in :data:`ARCHIVE`,
each with a pinned SHA-256, and ``hpcgym workloads fetch`` downloads them into the cache folder
(:mod:`hpcgym.workloads.fetch`).

A trace file name is looked up, in order, in:

1. ``$HPCGYM_WORKLOADS`` when set (a user's own folder, which overrides the rest);
2. the bundled data;
3. the cache folder of fetched traces (``$HPCGYM_CACHE``, else the platform's user cache folder).

A name ending in ``.swf`` also matches ``.swf.gz`` and the other way round, so a user's folder
may hold either form.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from hpcgym.errors import WorkloadError

WORKLOADS_ENV = "HPCGYM_WORKLOADS"
"""Environment variable naming a folder of trace files searched before the bundled ones."""
CACHE_ENV = "HPCGYM_CACHE"
"""Environment variable naming the folder fetched traces go to (default: the user cache)."""
PWA = "https://www.cs.huji.ac.il/labs/parallel/workload"
"""The Parallel Workloads Archive."""
PWA_CITATION = (
    "Dror G. Feitelson, Dan Tsafrir, and David Krakov, Experience with using the Parallel "
    "Workloads Archive. J. Parallel & Distributed Comput. 74(10), pp. 2967-2982, Oct 2014"
)
"""The reference the Parallel Workloads Archive asks users of its logs to cite."""


@dataclass(frozen=True, slots=True)
class Trace:
    """One known trace file.

    Attributes:
        key: Short name (``hpcgym workloads fetch KEY``).
        file: File name, as shipped or as published.
        jobs: Job records in the file (0: not known).
        machine: The machine, from the log's header or its archive page.
        sha256: Checksum of the file as shipped (bundled) or as published (archive);
            ``None`` where no checksum could be pinned (``fetch`` then needs one given).
        source: Where the file comes from.
        url: Download address (archive logs); ``None`` for bundled files.
    """

    key: str
    file: str
    jobs: int
    machine: str
    sha256: str | None
    source: str
    url: str | None = None


BUNDLED: tuple[Trace, ...] = (
    Trace(
        "lublin-256",
        "lublin_256.swf.gz",
        10_000,
        "Lublin-Feitelson model output, 256 nodes (synthetic)",
        "ba3ee5b59b5bd8dfd369da283bab7b9f968b57fb5e77684eda4e46cfa58694c3",
        "DIR-LAB/deep-batch-scheduler data/lublin_256.swf (RLScheduler's trace), gzipped",
    ),
    Trace(
        "sdsc-sp2",
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        59_715,
        "IBM SP2, SDSC, 128 nodes, 1998-2000",
        "e03fe48be50c4ab04d6bb2285296d9c3399e9c1f27ee79b754ad32a14abd9bac",
        "Parallel Workloads Archive, cleaned log (the archive's file, byte for byte)",
        f"{PWA}/l_sdsc_sp2/SDSC-SP2-1998-4.2-cln.swf.gz",
    ),
    Trace(
        "kth-sp2",
        "KTH-SP2-1996-2.1-cln.swf.gz",
        28_476,
        "IBM SP2, KTH, 100 nodes, 1996-97 (ran EASY)",
        "d3572b4aea45fb34381a68b4dd82029e941e7fe1772df8b229ed5a1d456ba755",
        "Parallel Workloads Archive, cleaned log, via pkoperek/cloudsimplus-gateway: the "
        "archive's SWF text, gzipped again (so not the archive's .gz bytes)",
    ),
    Trace(
        "hpc2n-57d",
        "hpc2n.swf.gz",
        3_170,
        "HPC2N Seth, 120 dual-CPU nodes (240 CPUs), 2002",
        "065e19d8f1a5e39bfc08ed010c21cefcd33120077b4ad4d374eb158dccfed852",
        "aleasimulator/alea Alea/data-set/hpc2n.swf: the first 57 days of the PWA's HPC2N log, "
        "gzipped",
    ),
    Trace(
        "cea-curie-26d",
        "CEA-Curie-2011-sample.swf.gz",
        36_352,
        "CEA Curie, 93,312 cores, 2011-12",
        "dc3df9294e7e2c9698ee1f852217a3f74cc2ba4709b30c1d8fbbb0cdabee0bef",
        "jad-darrous/predictsim experiments/data/CEA-curie_sample: a 26-day excerpt of the "
        "PWA's CEA-Curie log, minimal header",
    ),
)
"""The traces shipped inside the package."""

ARCHIVE: tuple[Trace, ...] = (
    Trace(
        "ctc-sp2",
        "CTC-SP2-1996-3.1-cln.swf.gz",
        77_222,
        "IBM SP2, Cornell Theory Center, 338 processors in batch use, 1996-97",
        "9fa28ac16c4386fb81b72a91d8bd8888281df2948a9d912769d387c5ee285bb4",
        "Parallel Workloads Archive, cleaned log",
        f"{PWA}/l_ctc_sp2/CTC-SP2-1996-3.1-cln.swf.gz",
    ),
    Trace(
        "sdsc-blue",
        "SDSC-BLUE-2000-4.2-cln.swf.gz",
        243_306,
        "IBM SP Blue Horizon, SDSC, 144 nodes x 8 processors, 2000-03",
        "9aab21f3cfa108f3ecefa52391b384d996dcf4216f920186f47a734646b2c658",
        "Parallel Workloads Archive, cleaned log",
        f"{PWA}/l_sdsc_blue/SDSC-BLUE-2000-4.2-cln.swf.gz",
    ),
    Trace(
        "hpc2n",
        "HPC2N-2002-2.2-cln.swf.gz",
        202_871,
        "HPC2N Seth, 120 dual-CPU nodes (240 CPUs), 2002-06",
        "3c534857d6065cfd9cc35aac8d064c9c17172be7acf336de835006f43a626e64",
        "Parallel Workloads Archive, cleaned log (the full log of the bundled excerpt)",
        f"{PWA}/l_hpc2n/HPC2N-2002-2.2-cln.swf.gz",
    ),
    Trace(
        "cea-curie",
        "CEA-Curie-2011-2.1-cln.swf.gz",
        312_826,
        "CEA Curie, 5,544 nodes, 93,312 cores, 2011-12",
        "2a0fdbd40837590b491bbbac7d4cfe521de1f0b14c0dc39bbf82c4e49ea75bce",
        "Parallel Workloads Archive, cleaned log (the full log of the bundled sample)",
        f"{PWA}/l_cea_curie/CEA-Curie-2011-2.1-cln.swf.gz",
    ),
    Trace(
        "llnl-thunder",
        "LLNL-Thunder-2007-1.1-cln.swf.gz",
        121_039,
        "LLNL Thunder, 1,002 nodes x 4 processors, 2007",
        "00d9bce501efd3a23cd0713bbae591516b7a69217d5f4b851725f601f3b75247",
        "Parallel Workloads Archive, cleaned log",
        f"{PWA}/l_llnl_thunder/LLNL-Thunder-2007-1.1-cln.swf.gz",
    ),
    Trace(
        "lanl-cm5",
        "LANL-CM5-1994-4.1-cln.swf.gz",
        122_060,
        "TMC CM-5, LANL, 1,024 nodes, 1994-96",
        "71ff3dfa301b3ee1bd30ebc63c5363b5e8ec488e75f1f9398aa46d485ef23c3c",
        "Parallel Workloads Archive, cleaned log",
        f"{PWA}/l_lanl_cm5/LANL-CM5-1994-4.1-cln.swf.gz",
    ),
    Trace(
        "sdsc-par",
        "SDSC-Par-1996-3.1-cln.swf.gz",
        32_135,
        "Intel Paragon, SDSC, 416 nodes (400 in the header), 1996",
        "cb1aab02b5e3c34659d1c1d6f73c002d415229c59f40c03fab4e20331abdaff7",
        "Parallel Workloads Archive, cleaned log",
        f"{PWA}/l_sdsc_par/SDSC-Par-1996-3.1-cln.swf.gz",
    ),
    Trace(
        "sandia-ross",
        "Sandia-Ross-2001-1.1-cln.swf.gz",
        57_882,
        "Sandia CPlant/Ross, 1,524 nodes, 2001-05",
        "08b390c160c41c5d3a70d66c48884b5bb68aa277506988ccdc408913342b38df",
        "Parallel Workloads Archive, cleaned log",
        f"{PWA}/l_sandia_ross/Sandia-Ross-2001-1.1-cln.swf.gz",
    ),
    Trace(
        "anl-intrepid",
        "ANL-Intrepid-2009-1.swf.gz",
        68_936,
        "Blue Gene/P Intrepid, ANL, 40,960 nodes x 4 cores, 2009",
        None,
        "Parallel Workloads Archive (no checksum pinned: pass --sha256)",
        f"{PWA}/l_anl_int/ANL-Intrepid-2009-1.swf.gz",
    ),
    Trace(
        "ricc",
        "RICC-2010-2.swf.gz",
        447_794,
        "RIKEN RICC, 1,024 nodes x 8 cores, 2010",
        None,
        "Parallel Workloads Archive (no checksum pinned: pass --sha256)",
        f"{PWA}/l_ricc/RICC-2010-2.swf.gz",
    ),
    Trace(
        "kit-fh2",
        "KIT-FH2-2016-1.swf.gz",
        0,
        "KIT ForHLR II (job count and size not checked here)",
        None,
        "Parallel Workloads Archive (no checksum pinned: pass --sha256)",
        f"{PWA}/l_kit_fh2/KIT-FH2-2016-1.swf.gz",
    ),
)
"""Parallel Workloads Archive logs that ``hpcgym workloads fetch`` downloads (pinned SHA-256)."""


def known() -> dict[str, Trace]:
    """Every known trace by key: the bundled ones, then the archive logs."""
    return {t.key: t for t in (*BUNDLED, *ARCHIVE)}


def lookup(name: str) -> Trace | None:
    """The known trace whose key or file name is ``name``, if any."""
    for t in (*BUNDLED, *ARCHIVE):
        if name in (t.key, t.file):
            return t
    return None


def bundled_dir() -> Path:
    """The folder of the traces shipped with the package."""
    return Path(str(resources.files("hpcgym.workloads") / "data"))


def cache_dir() -> Path:
    """Where fetched traces go: ``$HPCGYM_CACHE``, else the platform's user cache folder."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("hpcgym")) / "workloads"


def user_dir() -> Path | None:
    """``$HPCGYM_WORKLOADS`` when set (it must be an existing folder), else ``None``."""
    env = os.environ.get(WORKLOADS_ENV)
    if not env:
        return None
    p = Path(env).expanduser()
    if not p.is_dir():
        raise WorkloadError(f"${WORKLOADS_ENV} is {env!r}, which is not a folder; fix or unset it")
    return p


def search_dirs() -> list[Path]:
    """The folders a trace file name is looked up in, in order."""
    user = user_dir()
    return [*([user] if user is not None else []), bundled_dir(), cache_dir()]


def _spellings(name: str) -> tuple[str, ...]:
    if name.endswith(".gz"):
        return (name, name[:-3])
    return (name, name + ".gz")


def find(name: str) -> Path:
    """The path of the trace file called ``name`` (see the module doc for the order).

    Raises:
        WorkloadError: Found nowhere; the message lists the places tried and, for an archive
            log, the command that fetches it.
    """
    dirs = search_dirs()
    for folder in dirs:
        for spelling in _spellings(name):
            p = folder / spelling
            if p.is_file():
                return p
    hint = f"put it in a folder and set ${WORKLOADS_ENV} to that folder"
    trace = lookup(name)
    if trace is not None and trace.url is not None:
        hint = f"run `hpcgym workloads fetch {trace.key}`, or {hint}"
    raise WorkloadError(
        f"trace file {name!r} not found in {', '.join(str(d) for d in dirs)}; {hint}"
    )


def where(name: str) -> str:
    """A few words on where the trace file ``name`` is found (for listings)."""
    try:
        path = find(name)
    except WorkloadError:
        return "missing"
    user = user_dir()
    if user is not None and path.parent == user:
        return f"${WORKLOADS_ENV}"
    return "bundled" if path.parent == bundled_dir() else "fetched"
