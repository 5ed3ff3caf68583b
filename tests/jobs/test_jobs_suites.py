"""Built-in suites, user suite files (validation with one-line errors), and skipping."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from zbench.jobs.suites import MAX_JOBS, SUITES, SuiteError, load_suite


def test_builtin_suites_exist() -> None:
    assert {"review", "quick", "precision"} <= set(SUITES)


def test_review_matrix_on_two_gpus() -> None:
    suite = load_suite("review", gpu_count=2, frameworks={"torch", "tf"})
    assert not suite.skipped
    one_gpu = [s for s in suite.specs if s.config.gpus == 1]
    assert len(one_gpu) == 4 * 2 * 2
    assert {s.config.workload for s in one_gpu} == {"resnet50", "vgg16", "fasterrcnn", "unet2d"}
    assert {s.config.precision for s in suite.specs} == {"fp32"}
    assert all(s.config.batch_size is None for s in suite.specs)  # each workload's default
    scaling = [s for s in suite.specs if s.config.gpus == 2]
    assert [(s.config.workload, s.config.mode) for s in scaling] == [("resnet50", "train")] * 2


def test_review_skips_with_reasons_on_one_gpu_without_tensorflow() -> None:
    suite = load_suite("review", gpu_count=1, frameworks={"torch"})
    reasons = {r for _, r in suite.skipped}
    assert "TensorFlow is not installed" in reasons
    assert "a scaling run needs 2 or more GPUs; 1 found" in reasons
    assert all(s.config.framework == "torch" and s.config.gpus == 1 for s in suite.specs)
    # A skipped scaling run is shown as the run it would be, not as one on 1 GPU
    scaling = [s for s, r in suite.skipped if r.startswith("a scaling run")]
    assert [s.config.gpus for s in scaling] == [2]  # PyTorch's (TensorFlow: not installed)
    assert len(suite.specs) == 8


def test_quick_runs_on_cpu_without_a_gpu() -> None:
    suite = load_suite("quick", gpu_count=0, frameworks={"torch", "tf"})
    assert suite.specs and not suite.skipped
    for spec in suite.specs:
        c = spec.config
        assert c.device == "cpu" and (c.image_size or 999) <= 32 and (c.steps or 999) <= 10
    assert {s.config.framework for s in suite.specs} == {"torch", "tf"}
    on_gpu = load_suite("quick", gpu_count=1, frameworks={"torch"})
    assert {s.config.device for s in on_gpu.specs} == {"cuda"}


def test_precision_suite_covers_four_precisions() -> None:
    suite = load_suite("precision", gpu_count=1, frameworks={"torch", "tf"})
    r50 = {s.config.precision for s in suite.specs if s.config.workload == "resnet50"}
    assert r50 == {"fp32", "tf32", "fp16", "bf16"}
    assert load_suite("precision", gpu_count=0).specs == ()


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(text)
    return path


def test_user_suite_matrix_and_options(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        name = "mine"
        [defaults]
        device = "cpu"
        timeout_s = 60
        [[job]]
        workload = ["resnet50", "vgg16"]
        mode = ["train", "infer"]
        batch_size = 2
        extra = ["behave=ok"]
        """,
    )
    suite = load_suite(path, gpu_count=0, frameworks={"torch"})
    assert suite.name == "mine" and len(suite.specs) == 4
    assert all(s.timeout_s == 60 and s.config.extra == ("behave=ok",) for s in suite.specs)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[job]]\nworkload = "resnet50"\nbogus = 1\n',
            "job 1: unknown key 'bogus' (zbench suite -h lists every key)",
        ),
        (  # the plural of [[job]]: said only "unknown top-level key 'jobs'"
            '[[jobs]]\nworkload = "resnet50"\n',
            "unknown top-level key 'jobs' (did you mean 'job'? zbench suite -h lists every key)",
        ),
        ('[[job]]\nworkload = "alexnet"\n', "job 1: workload: must be one of"),
        # The runner parser's complaints name the file's key, not the command line's flag.
        (
            '[[job]]\nworkload = "resnet50"\nbatch_size = 0\n',
            "job 1: batch_size: must be at least 1",
        ),
        ('[[job]]\nworkload = "resnet50"\nsteps = "ten"\n', "job 1: steps must be a whole"),
        ('[[job]]\nworkload = "resnet50"\nrepeat = 0\n', "job 1: repeat: must be at least 1"),
        (
            '[[job]]\nworkload = "resnet50"\ntimeout_s = -1\n',
            "timeout_s must be a finite number of seconds above 0, got ",
        ),
        (
            '[[job]]\nworkload = "resnet50"\ntimeout_s = nan\n',
            "timeout_s must be a finite number of seconds above 0, got ",
        ),
        (
            '[[job]]\nworkload = "resnet50"\ntimeout_s = inf\n',
            "timeout_s must be a finite number of seconds above 0, got ",
        ),
        (
            '[[job]]\nworkload = "resnet50"\ntimeout_s = 0\n',
            "timeout_s must be a finite number of seconds above 0, got ",
        ),
        (
            '[[job]]\nworkload = "resnet50"\ntimeout_s = true\n',
            "timeout_s must be a finite number of seconds above 0, got ",
        ),
        # A value of the wrong kind: read as a bare flag, argparse's words leaked out.
        (
            '[[job]]\nworkload = "resnet50"\nsteps = true\n',
            "steps must be a whole number, got true",
        ),
        ('[[job]]\nworkload = "resnet50"\ncompile = "yes"\n', "compile must be true or false"),
        ('[[job]]\nworkload = "resnet50"\ncompile = 1\n', "compile must be true or false, got 1"),
        ('[[job]]\nworkload = "resnet50"\nmode = false\n', "mode must be one of 'train'"),
        ('[[job]]\nworkload = "resnet50"\ndata = true\n', "data must be a string, got true"),
        # A number in quotes was read as the number; a string a choice was read as the string.
        (
            '[[job]]\nworkload = "resnet50"\nsteps = "10"\n',
            "job 1: steps must be a whole number, got '10' (a TOML number is written without quotes)",
        ),
        (
            '[[job]]\nworkload = "resnet50"\nsteps = 10.0\n',
            "steps must be a whole number, got 10.0",
        ),
        ('[[job]]\nworkload = "resnet50"\ngpus = "2"\n', "gpus must be a whole number or 'all'"),
        (
            '[[job]]\nworkload = "resnet50"\nmode = 1\n',
            "mode must be one of 'train', 'infer', got 1",
        ),
        ('[[job]]\nworkload = "resnet50"\nsteps = 2024-01-02\n', "got 2024-01-02"),
        (
            '[[job]]\nworkload = "resnet50"\nsteps = {a = 1}\n',
            "steps must be a whole number, got a table",
        ),
        ("[[job]]\nworkload = 5\n", "job 1: workload must be a workload's name, got 5"),
        ('[[job]]\nmode = "train"\n', "job 1: no workload"),
        ('name = "x"\n', "no [[job]] entries"),
        ("job = []\n", "no [[job]] entries"),
        # job of another kind said "no [[job]] entries", as if the file had none
        ("job = 5\n", "job must be [[job]] tables (an array of tables), got 5"),
        (
            '[job]\nworkload = "resnet50"\n',
            "job must be [[job]] tables (an array of tables), not one [job]",
        ),
        (
            "defaults = 5\n[[job]]\nworkload = 'resnet50'\n",
            "[defaults] must be a table, got 5",
        ),
        # a key of [defaults] was blamed on job 1
        (
            "[defaults]\nbogus = 1\n[[job]]\nworkload = 'resnet50'\n",
            "[defaults]: unknown key 'bogus'",
        ),
        # name and description were made strings of whatever they were
        ('name = 5\n[[job]]\nworkload = "resnet50"\n', "mine.toml: name must be a string, got 5"),
        ('name = ""\n[[job]]\nworkload = "resnet50"\n', "name must be one line of printable text"),
        ('name = "a\\nb"\n[[job]]\nworkload = "resnet50"\n', "name must be one line of printable"),
        (
            'description = [1]\n[[job]]\nworkload = "resnet50"\n',
            "description must be a string, got [1]",
        ),
        (
            '[[job]]\nworkload = "resnet50"\nworkload = "vgg16"\n',
            "mine.toml: Cannot overwrite a value",
        ),
        ("[[job]\n", "mine.toml: "),
        # A value that looks like a flag: the runner's help was printed and the suite exited 0
        ('[[job]]\nworkload = "-h"\n', "job 1: the following arguments are required"),
        (
            '[[job]]\nworkload = "resnet50"\nmode = "--help"\n',
            "mode: must be one of train, infer, got '--help'",
        ),
    ],
)
def test_bad_suite_files_give_one_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(SuiteError) as err:
        load_suite(_write(tmp_path, text), gpu_count=0, frameworks={"torch"})
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_unknown_suite_name() -> None:
    with pytest.raises(SuiteError, match="no suite 'nope'"):
        load_suite("nope")


@pytest.mark.parametrize("name", ["missing.toml", "x/nightly"])
def test_a_missing_suite_file_is_named_missing(name: str) -> None:
    """A path (a .toml name, or one with a folder) read "no suite 'missing.toml' (built in:
    ...)", as if it were a suite's name."""
    with pytest.raises(SuiteError, match=rf"^{name}: no such file$"):
        load_suite(name)


@pytest.mark.parametrize("name", ["", " "])
def test_a_blank_suite_name_is_no_suite_not_this_folder(name: str) -> None:
    """``Path("")`` is the current folder: `zbench suite ""` said ". is a folder"."""
    with pytest.raises(SuiteError, match=rf"^no suite named '{name}' \(built in: "):
        load_suite(name)


def test_a_folder_or_a_fifo_is_no_suite_file(tmp_path: Path) -> None:
    """A folder was "no suite", as if it were not there."""
    folder = tmp_path / "mine.toml"
    folder.mkdir()
    with pytest.raises(SuiteError, match=r"mine\.toml is a folder; a suite file is a \.toml file"):
        load_suite(folder)
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(SuiteError, match=r"fifo\.toml is not a regular file"):  # nor a blocked read
        load_suite(fifo)


def test_byte_order_mark_and_crlf_are_read(tmp_path: Path) -> None:
    """A BOM (some Windows editors write one) was "Invalid statement (at line 1, column 1)"."""
    path = tmp_path / "mine.toml"
    path.write_bytes(
        b'\xef\xbb\xbfname = "mine"\r\n[[job]]\r\nworkload = "resnet50"\r\ndevice = "cpu"\r\n'
    )
    suite = load_suite(path, gpu_count=0, frameworks={"torch"})
    assert suite.name == "mine" and len(suite.specs) == 1


def test_a_file_that_is_not_utf8_says_so(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_bytes(b'[[job]]\nworkload = "resnet50"\n# caf\xe9\n')
    with pytest.raises(SuiteError) as err:
        load_suite(path, gpu_count=0, frameworks={"torch"})
    assert str(err.value) == (
        f"{path}: not UTF-8 text (byte 0xe9 on line 3); a suite file is TOML, which is UTF-8"
    )


def test_too_many_jobs_are_refused_before_they_are_made(tmp_path: Path) -> None:
    """A matrix of a million jobs was expanded (minutes, gigabytes) and would have been queued."""
    lists = "\n".join(f"{k} = {list(range(1, 101))}" for k in ("steps", "warmup", "seed"))
    path = _write(tmp_path, f'[[job]]\nworkload = "resnet50"\n{lists}\n')
    with pytest.raises(
        SuiteError, match=r"job 1: the suite would run 1,000,000 or more jobs; at most 1,000"
    ):
        load_suite(path, gpu_count=0, frameworks={"torch"})
    many = "".join(f'[[job]]\nworkload = "resnet50"\nseed = {n}\n' for n in range(MAX_JOBS + 1))
    with pytest.raises(SuiteError, match=f"job {MAX_JOBS + 1}: the suite would run"):
        load_suite(_write(tmp_path, many), gpu_count=0, frameworks={"torch"})
    at_most = '[defaults]\ndevice = "cpu"\n' + "".join(
        f'[[job]]\nworkload = "resnet50"\nseed = {n}\n' for n in range(MAX_JOBS)
    )
    assert (
        len(load_suite(_write(tmp_path, at_most), gpu_count=0, frameworks={"torch"}).specs)
        == MAX_JOBS
    )


def test_a_users_own_suites_run_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NAME.toml beside the config file is `zbench suite NAME`, in help, errors and the TUI."""
    from typer.testing import CliRunner

    from zbench.cli import app
    from zbench.jobs.suites import suites, user_suites_dir
    from zbench.tui.services import LocalServices

    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    monkeypatch.delenv("ZBENCH_CONFIG", raising=False)
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    assert user_suites_dir() == tmp_path / "suites"
    assert list(suites()) == list(SUITES)  # no folder: the built-in ones
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "mine.toml").write_text('[[job]]\nworkload = "vgg16"\ndevice = "cpu"\n')
    (tmp_path / "suites" / "quick.toml").write_text('[[job]]\nworkload = "vgg16"\n')
    (tmp_path / "suites" / "notes.txt").write_text("not a suite")
    assert list(suites()) == [*SUITES, "mine"]  # a built-in's name stays the built-in's
    assert [s.config.workload for s in load_suite("mine", gpu_count=0).specs] == ["vgg16"]
    assert load_suite("quick", gpu_count=0) == load_suite(SUITES["quick"], gpu_count=0)
    with pytest.raises(SuiteError) as caught:
        load_suite("nope")
    assert str(caught.value) == (
        f"no suite 'nope' (built in: {', '.join(SUITES)}; yours in {tmp_path / 'suites'}: mine; "
        "or a .toml file)"
    )
    assert LocalServices(db=tmp_path / "z.db").suite_names() == [*SUITES, "mine"]
    cli = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})
    help_text = " ".join(cli.invoke(app, ["suite", "-h"]).output.replace("│", " ").split())
    assert f"A suite by name ({', '.join(SUITES)}, mine; your own: NAME.toml in" in help_text
    dry = cli.invoke(app, ["suite", "mine", "--dry-run"])
    assert dry.exit_code == 0 and "would run: vgg16 torch train default on cpu" in dry.output
    hidden = tmp_path / "suites" / "quick.toml"
    said = cli.invoke(app, ["suite", "quick", "--dry-run"]).output
    assert (
        f"zbench: suite: note: runs the built-in 'quick', not {hidden} (run that file by its path)"
        in said
    )
    assert "note:" not in cli.invoke(app, ["suite", "review", "--dry-run"]).output


def test_a_job_on_a_gpu_the_machine_lacks_is_skipped_in_runs_words(tmp_path: Path) -> None:
    """`gpu_ids = [7]` on a machine of 2 GPUs was queued (its shape was all a suite checked),
    where `zbench run --gpu-ids 7` is refused: the job is skipped, saying which GPU is missing."""
    path = tmp_path / "pinned.toml"
    path.write_text(
        '[[job]]\nworkload = "resnet50"\ngpu_ids = [7]\n\n'
        '[[job]]\nworkload = "resnet50"\ngpu_ids = [1]\n'
    )
    suite = load_suite(str(path), gpu_count=2, frameworks={"torch"})
    assert [s.gpu_ids for s in suite.specs] == [(1,)]
    assert [r for _, r in suite.skipped] == [
        "gpu_ids: no GPU 7 on this machine (it offers GPUs 0,1)"
    ]
