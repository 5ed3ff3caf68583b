"""Round 3, cases 1, 2 and 14's empty file: a copied database is another database (its own store
id, its own job folders), one database file gets one supervisor whatever path names it, and an
empty file is not silently taken for a new database."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

from tests.faults.conftest import one_line_error, zbench
from tests.jobs.jobkit import fake_spec, wait_for
from zbench import paths
from zbench.contract.config import RunConfig
from zbench.jobs import api, liveness
from zbench.store import Store

FINAL = ("done", "failed", "crashed", "oom", "timeout", "cancelled", "lost")


def test_a_copied_database_gets_a_store_id_of_its_own(home: Path) -> None:
    a = home / "a.db"
    store = Store(a)
    sid = store.store_id()
    store.close()
    shutil.copy(a, home / "b.db")
    assert Store(home / "b.db").store_id() != sid
    store = Store(a)
    assert store.store_id() == sid, "the original keeps its id"
    store.close()
    a.rename(home / "c.db")
    assert Store(home / "c.db").store_id() == sid, "a renamed file is the same database"


def test_two_starts_never_share_a_job_folder(home: Path) -> None:
    folders = {paths.new_job_dir("samestore", 7) for _ in range(20)}
    assert len(folders) == 20 and all(f.name.startswith("7-") for f in folders)
    assert all((f.stat().st_mode & 0o777) == 0o700 for f in folders)


def test_a_copy_and_its_original_running_the_same_job_id_keep_their_own_results(
    home: Path,
) -> None:
    a, b = home / "a.db", home / "b.db"
    [first] = api.submit([fake_spec("ok", steps=2)], db=a)
    wait_for(first, a, FINAL)
    Store(a).close()
    shutil.copy(a, b)
    ids: dict[Path, int] = {}

    def submit(db: Path, batch: int) -> None:
        config = RunConfig(
            workload="resnet50",
            device="cpu",
            steps=20,
            batch_size=batch,
            extra=("behave=ok", "step_s=0.05"),
        )
        [ids[db]] = api.submit([api.JobSpec(config=config)], db=db)

    threads = [threading.Thread(target=submit, args=(db, n)) for db, n in ((a, 4), (b, 16))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ids[a] == ids[b] == first + 1  # the same job id in both files
    infos = {db: wait_for(ids[db], db, FINAL) for db in (a, b)}
    assert Path(infos[a].events_path or "").parent != Path(infos[b].events_path or "").parent
    for db, batch in ((a, 4), (b, 16)):
        assert infos[db].state == "done", infos[db].reason
        run = Store(db).get_run(infos[db].run_id or 0)
        assert run is not None and run["batch_size"] == batch


def test_one_database_through_a_symlink_gets_one_supervisor(home: Path) -> None:
    db = home / "zbench.db"
    Store(db).close()
    link = home / "link.db"
    link.symlink_to(db)
    assert liveness.lock_path(link) == liveness.lock_path(db)
    [first] = api.submit([fake_spec("ok", steps=25, step_s=0.06)], db=db)
    wait_for(first, db, ("running",))
    [second] = api.submit([fake_spec("ok", steps=2)], db=link)
    one, two = wait_for(first, db, FINAL), wait_for(second, db, FINAL)
    assert one.state == two.state == "done"
    # CPU jobs run one at a time under one supervisor; a second one would have overlapped them.
    assert (two.started or 0) >= (one.ended or 0), "two supervisors ran them at once"


def test_a_database_with_a_second_hard_link_is_refused_in_one_line(home: Path) -> None:
    db = home / "zbench.db"
    Store(db).close()
    os.link(db, home / "hard.db")
    code, _, err = zbench("run", "resnet50", "--device", "cpu", "--detach", "--db", str(db))
    assert code == 2 and "has 2 hard links" in one_line_error(err)
    (home / "hard.db").unlink()
    code, _, err = zbench("jobs", "--db", str(db))
    assert code == 0, err


def test_an_empty_file_at_rest_is_refused_in_one_line(home: Path) -> None:
    home.mkdir(parents=True)
    empty = home / "empty.db"
    empty.touch()
    code, _, err = zbench("jobs", "--db", str(empty))
    assert code == 2 and "the file is empty (0 bytes)" in one_line_error(err)
    assert empty.stat().st_size == 0, "left as it was"


def test_a_new_database_is_never_seen_empty(home: Path) -> None:
    db = home / "new.db"
    Store(db).close()
    assert db.stat().st_size > 0 and (db.stat().st_mode & 0o777) == 0o600
    assert not list(home.glob(".new.db.*")), "no file left from making it"


def test_a_folder_as_the_database_is_named_a_folder(home: Path) -> None:
    # A folder's link count (one per subfolder) read as "the file has 15 hard links" before.
    (home / "runs" / "a").mkdir(parents=True)
    for args in (("results",), ("run", "resnet50", "--device", "cpu", "--detach")):
        code, _, err = zbench(*args, "--db", str(home / "runs"))
        assert code == 2 and "a folder, not a database file" in one_line_error(err), err
