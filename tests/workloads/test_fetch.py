"""``hpcgym workloads fetch``, offline: file:// mirrors, corrupted files, no network."""

from __future__ import annotations

import shutil

import pytest

from hpcgym.cli import main
from hpcgym.errors import WorkloadError
from hpcgym.workloads import catalog, registry
from hpcgym.workloads.fetch import fetch, sha256

SP2 = catalog.lookup("sdsc-sp2")  # bundled, and byte-identical to the archive's file


@pytest.fixture
def mirror(tmp_path):
    """A folder holding a copy of an archive file, as a file:// mirror."""
    folder = tmp_path / "mirror"
    folder.mkdir()
    shutil.copy(catalog.bundled_dir() / SP2.file, folder / SP2.file)
    return folder


def test_pins_of_bundled_archive_files_match_the_files():
    # The bundled copies of archive logs are byte-identical to the archive's (same pin).
    for trace in catalog.BUNDLED:
        assert sha256(catalog.bundled_dir() / trace.file) == trace.sha256, trace.file


def test_fetch_from_a_file_mirror_checks_and_keeps_the_file(mirror, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv(catalog.CACHE_ENV, str(cache))
    path = fetch("sdsc-sp2", mirror=mirror.as_uri())
    assert path == cache / SP2.file
    assert sha256(path) == SP2.sha256
    assert sorted(p.name for p in cache.iterdir()) == [SP2.file]  # no temporary left
    # A second fetch keeps the checked file (the mirror is no longer needed).
    (mirror / SP2.file).unlink()
    assert fetch("sdsc-sp2", mirror=mirror.as_uri()) == path


def test_fetched_traces_are_found_by_name(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv(catalog.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv("HPCGYM_PWA_MIRROR", mirror.as_uri())
    archived = catalog.Trace("sp2-copy", "SP2-copy.swf.gz", 59_715, "x", SP2.sha256, "test", "u")
    monkeypatch.setattr(catalog, "ARCHIVE", (*catalog.ARCHIVE, archived))
    shutil.copy(mirror / SP2.file, mirror / archived.file)
    with pytest.raises(WorkloadError, match="hpcgym workloads fetch sp2-copy"):
        registry.resolve_file(archived.file)
    assert main(["workloads", "fetch", "sp2-copy"]) == 0
    assert catalog.where(archived.file) == "fetched"
    assert len(registry.load(archived.file).jobs) > 50_000


def test_a_corrupted_download_is_refused_and_nothing_is_kept(mirror, tmp_path, capsys):
    data = bytearray((mirror / SP2.file).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (mirror / SP2.file).write_bytes(bytes(data))
    dest = tmp_path / "dest"
    with pytest.raises(WorkloadError, match=r"expected SHA-256.*nothing was kept"):
        fetch("sdsc-sp2", to=dest, mirror=mirror.as_uri())
    assert not dest.exists()  # the folder it made is gone again (issue 39, L10)
    # A corrupted file already in place is replaced only by a verified download.
    dest.mkdir()
    (dest / SP2.file).write_bytes(bytes(data))
    with pytest.raises(WorkloadError, match="expected SHA-256"):
        fetch("sdsc-sp2", to=dest, mirror=mirror.as_uri())
    assert sorted(p.name for p in dest.iterdir()) == [SP2.file]
    assert main(["workloads", "fetch", "sdsc-sp2", "--to", str(dest), "--mirror", "file:///"]) == 2
    assert "cannot download" in capsys.readouterr().err


def test_without_network_the_error_names_the_url_and_the_manual_way(tmp_path):
    url = "http://127.0.0.1:9"  # the discard port: nothing listens there
    with pytest.raises(WorkloadError) as e:
        fetch("ctc-sp2", to=tmp_path, mirror=url)
    msg = str(e.value)
    assert f"{url}/CTC-SP2-1996-3.1-cln.swf.gz" in msg
    assert catalog.lookup("ctc-sp2").sha256 in msg and "HPCGYM_WORKLOADS" in msg
    assert list(tmp_path.iterdir()) == []


def test_a_failed_fetch_removes_the_folders_it_made_and_only_those(tmp_path):
    """Issue 39, L10 (seen failing before the fix: ``a/b/c`` stayed behind, empty)."""
    kept = tmp_path / "a"
    kept.mkdir()
    (kept / "mine.txt").write_text("x")
    dest = kept / "b" / "c"
    with pytest.raises(WorkloadError, match="cannot download"):
        fetch("ctc-sp2", to=dest, mirror="file:///nonexistent-mirror")
    assert not (kept / "b").exists()
    assert sorted(p.name for p in kept.iterdir()) == ["mine.txt"]
    # an existing empty destination is left as it was
    dest.mkdir(parents=True)
    with pytest.raises(WorkloadError):
        fetch("ctc-sp2", to=dest, mirror="file:///nonexistent-mirror")
    assert dest.is_dir() and list(dest.iterdir()) == []


def test_an_unpinned_log_needs_a_checksum_from_the_user(mirror, tmp_path):
    ricc = catalog.lookup("ricc")
    assert ricc.sha256 is None
    with pytest.raises(WorkloadError, match="--sha256 HEX"):
        fetch("ricc", to=tmp_path, mirror=mirror.as_uri())
    shutil.copy(mirror / SP2.file, mirror / ricc.file)
    with pytest.raises(WorkloadError, match="64 hex digits"):
        fetch("ricc", to=tmp_path, mirror=mirror.as_uri(), sha256_hex="abc")
    path = fetch("ricc", to=tmp_path, mirror=mirror.as_uri(), sha256_hex=SP2.sha256.upper())
    assert sha256(path) == SP2.sha256
    with pytest.raises(WorkloadError, match="pinned SHA-256"):
        fetch("ctc-sp2", to=tmp_path, mirror=mirror.as_uri(), sha256_hex=SP2.sha256)


def test_unknown_and_bundled_names_are_refused():
    with pytest.raises(WorkloadError, match="no known trace 'nope'"):
        fetch("nope")
    with pytest.raises(WorkloadError, match="ships with hpcgym"):
        fetch("lublin-256")


def test_list_shows_every_trace_and_where_it_is(capsys):
    assert main(["workloads", "list"]) == 0
    out = capsys.readouterr().out
    for trace in (*catalog.BUNDLED, *catalog.ARCHIVE):
        assert trace.file in out and trace.key in out
    assert "swf/lublin256-v0" in out and "(bundled)" in out
    assert "Parallel Workloads Archive" in out
