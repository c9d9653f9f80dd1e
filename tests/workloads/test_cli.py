from __future__ import annotations

from hpcgym.cli import main
from hpcgym.workloads.convert import read_workload
from hpcgym.workloads.registry import names
from hpcgym.workloads.swf import read_swf


def test_list(capsys):
    assert main(["workloads", "list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in names())


def test_show_set_and_file(traces_dir, capsys):
    assert main(["workloads", "show", "synthetic/koala-mix-v0", "--seed", "2", "--provenance"]) == 0
    out = capsys.readouterr().out
    assert "jobs          300" in out and '"op":"koala_mix"' in out
    assert main(["workloads", "show", str(traces_dir / "hpc2n.swf.gz")]) == 0
    out = capsys.readouterr().out
    assert "offered load" in out and "25 records skipped" in out


def test_generate_records_command_and_seed(tmp_path, capsys):
    dest = tmp_path / "evo.swf"
    argv = ["workloads", "generate", "synthetic/lublin-dfrs-128-v0", str(dest), "--seed", "7",
            "--option", "n_jobs=50"]  # fmt: skip
    assert main(argv) == 0
    h = read_swf(dest).header
    assert h.get("hpcgym-command") == "hpcgym " + " ".join(argv)
    assert h.get("hpcgym-seed") is not None
    assert len(read_workload(dest)) == 50
    assert "wrote" in capsys.readouterr().out


def test_convert(traces_dir, tmp_path, capsys):
    dest = tmp_path / "kth.swf.gz"
    src = str(traces_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    assert main(["workloads", "convert", src, str(dest), "--first", "200", "--load", "0.5"]) == 0
    w = read_workload(dest)
    assert len(w) == 200
    assert "offered load  0.500" in capsys.readouterr().out


def test_errors_exit_2(capsys):
    assert main(["workloads", "show", "no/such-v0"]) == 2
    assert "no workload set 'no/such-v0'" in capsys.readouterr().err
    assert main(["workloads", "show", "synthetic/koala-mix-v0", "--option", "oops"]) == 2
