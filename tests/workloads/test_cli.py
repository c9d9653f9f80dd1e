from __future__ import annotations

import pytest

from hpcgym.cli import main
from hpcgym.workloads.convert import read_workload
from hpcgym.workloads.registry import names
from hpcgym.workloads.swf import read_swf


def test_list(capsys):
    assert main(["workloads", "list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in names())
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert "unit: node" in lines["swf/hpc2n-v0"] and "unit: processor" in lines["swf/hpc2n-v1"]


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


def test_convert_refuses_to_write_over_the_trace_it_reads(traces_dir, tmp_path, capsys):
    src = tmp_path / "kth.swf.gz"
    src.write_bytes((traces_dir / "KTH-SP2-1996-2.1-cln.swf.gz").read_bytes())
    before = src.read_bytes()
    for dest in (str(src), str(tmp_path / "." / "kth.swf.gz")):
        assert main(["workloads", "convert", str(src), dest, "--first", "10"]) == 2
        assert "is the file being read" in capsys.readouterr().err
    assert src.read_bytes() == before


def test_errors_exit_2(capsys):
    assert main(["workloads", "show", "no/such-v0"]) == 2
    assert "no workload set 'no/such-v0'" in capsys.readouterr().err
    assert main(["workloads", "show", "synthetic/koala-mix-v0", "--option", "oops"]) == 2


FAT = """; MaxNodes: 4
; MaxProcs: 32
1 0 0 100 3 -1 -1 3 200 -1 1 1 1 -1 -1 -1 -1 -1
2 50 0 200 8 -1 -1 8 300 -1 1 2 1 -1 -1 -1 -1 -1
3 100 0 10 -1 -1 -1 12 60 -1 1 1 1 -1 -1 -1 -1 -1
4 200 0 50 32 -1 -1 32 60 -1 1 3 1 -1 -1 -1 -1 -1
"""


def test_show_prints_the_load_in_both_units(tmp_path, capsys):
    # By hand: 3,620 processor-s on 32 processors and 520 node-s on 4 nodes, over 200 s.
    path = tmp_path / "fat.swf"
    path.write_text(FAT)
    assert main(["workloads", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "offered load  0.566" in out and "32 units of one processor" in out
    assert (
        "unit          processor (load 0.566); whole 8-processor nodes would give load 0.650" in out
    )
    assert main(["workloads", "show", str(path), "--allocation", "node"]) == 0
    out = capsys.readouterr().out
    assert "offered load  0.650" in out and "4 nodes of 8 processors" in out
    assert "unit          node: whole 8-processor nodes (load 0.650" in out
    assert "processors would give load 0.566 on 32 units" in out


def test_show_names_the_unit_of_a_set(capsys):
    assert main(["workloads", "show", "swf/hpc2n-v0"]) == 0
    out = capsys.readouterr().out
    assert "platform      120 nodes of 2 processors" in out
    assert "unit          node: whole 2-processor nodes (load 0.429" in out
    assert "processors would give load 0.424 on 240 units" in out
    assert main(["workloads", "show", "swf/hpc2n-v1"]) == 0
    assert "unit          processor (load 0.424)" in capsys.readouterr().out
    assert main(["workloads", "show", "synthetic/evolving-klein-v0"]) == 0
    assert "unit          node (declared by the set)" in capsys.readouterr().out
    # A named set's unit is part of its recipe.
    assert main(["workloads", "show", "swf/hpc2n-v0", "--allocation", "processor"]) == 2
    err = capsys.readouterr().err
    assert "declares its unit (node)" in err and "hpcgym workloads show hpc2n.swf.gz" in err


def test_convert_in_whole_nodes(tmp_path, capsys):
    src = tmp_path / "fat.swf"
    src.write_text(FAT)
    dest = tmp_path / "out.swf"
    assert main(["workloads", "convert", str(src), str(dest), "--allocation", "node"]) == 0
    assert "offered load  0.650" in capsys.readouterr().out
    # The file keeps the processors: read back, it is in processors unless asked.
    assert [j.nodes for j in read_workload(dest)] == [3, 8, 12, 32]
    with pytest.raises(SystemExit) as e:
        main(["workloads", "convert", str(src), str(dest), "--allocation", "cores"])
    assert e.value.code == 2 and "invalid choice: 'cores'" in capsys.readouterr().err


# ------------------------------------------------------------------ Hardening III (issue 39, L12)
RECORD = "1 0 0 10 2 -1 -1 2 20 -1 1 3 4 -1 -1 -1 -1 -1"


def test_show_of_a_zero_second_trace_says_the_load_is_undefined(tmp_path, capsys):
    p = tmp_path / "zero.swf"
    p.write_text("; MaxProcs: 4\n" + RECORD + "\n" + RECORD.replace("1", "2", 1) + "\n")
    assert main(["workloads", "show", str(p)]) == 0
    out = capsys.readouterr().out
    assert "inf" not in out, out
    assert "offered load  undefined (the trace spans 0 s: every job arrives at once)" in out


def test_show_of_a_trace_without_jobs_says_the_load_is_undefined(tmp_path, capsys):
    p = tmp_path / "empty.swf"
    p.write_text("; MaxProcs: 4\n")
    assert main(["workloads", "show", str(p)]) == 0
    out = capsys.readouterr().out
    assert "offered load  undefined (no job)" in out, out


def test_an_env_on_a_trace_without_jobs_says_so(tmp_path):
    """It said 'the None split of ... holds no job' (no split was asked for)."""
    from hpcgym.envs import ClusterEnv
    from hpcgym.errors import SpecError

    p = tmp_path / "empty.swf"
    p.write_text("; MaxProcs: 4\n")
    env = ClusterEnv(workload=str(p), platform=None, n_jobs=None)
    with pytest.raises(SpecError, match=r"holds no job") as info:
        env.reset(seed=0)
    assert "None" not in str(info.value), str(info.value)
    assert str(p) in str(info.value)
