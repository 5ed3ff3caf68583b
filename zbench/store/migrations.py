"""The schema, as the list of steps that build it: ``MIGRATIONS[i]`` moves version i to i + 1."""

from __future__ import annotations

# Each entry moves the schema one version up; never edit an entry that has shipped.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        suite TEXT,
        workload TEXT NOT NULL,
        framework TEXT NOT NULL,
        mode TEXT NOT NULL,
        precision TEXT,
        config TEXT NOT NULL,
        requested_gpus TEXT,
        gpu_ids TEXT,
        share_gpus INTEGER NOT NULL DEFAULT 0,
        timeout_s REAL,
        state TEXT NOT NULL,
        phase TEXT,
        step INTEGER,
        total INTEGER,
        samples_per_s REAL,
        reason TEXT,
        log_tail TEXT,
        created REAL NOT NULL,
        started REAL,
        ended REAL,
        pid INTEGER,
        log_path TEXT,
        events_path TEXT,
        run_id INTEGER,
        cancel_grace REAL
    );
    CREATE INDEX jobs_state ON jobs(state);
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id INTEGER,
        created REAL NOT NULL,
        workload TEXT NOT NULL,
        framework TEXT NOT NULL,
        mode TEXT NOT NULL,
        precision TEXT,
        batch_size INTEGER,
        gpus INTEGER NOT NULL,
        gpu_name TEXT,
        samples_per_s REAL,
        config TEXT NOT NULL,
        env TEXT NOT NULL,
        result TEXT NOT NULL
    );
    CREATE INDEX runs_created ON runs(created);
    CREATE TABLE phase_aggregates (
        job_id INTEGER NOT NULL,
        run_id INTEGER,
        phase TEXT NOT NULL,
        metrics TEXT NOT NULL,
        PRIMARY KEY (job_id, phase)
    );
    CREATE TABLE samples (
        job_id INTEGER NOT NULL,
        t REAL NOT NULL,
        phase TEXT,
        data TEXT NOT NULL
    );
    CREATE INDEX samples_job ON samples(job_id, t);
    CREATE TABLE supervisor (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        started REAL NOT NULL,
        heartbeat REAL NOT NULL
    );
    """,
    # 2: a user's tag on a job (`zbench run --tag`, `zbench suite --tag`), to publish one session.
    "ALTER TABLE jobs ADD COLUMN tag TEXT",
    # 3: a job's and a run's kind (contract.kinds: benchmark, demo, probe, nodes), a column rather
    # than a test on the config; rows written before it get the kind their config shows.
    """
    ALTER TABLE jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'benchmark';
    ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'benchmark';
    UPDATE jobs SET kind = CASE
        WHEN json_array_length(config, '$.nodes') > 0 THEN 'nodes'
        WHEN json_extract(config, '$.kind') IN ('demo', 'probe') THEN json_extract(config, '$.kind')
        WHEN framework = 'demo' THEN 'demo'
        WHEN workload = 'probe' THEN 'probe'
        ELSE 'benchmark' END;
    UPDATE runs SET kind = CASE
        WHEN json_array_length(config, '$.nodes') > 0 THEN 'nodes'
        WHEN json_extract(config, '$.kind') IN ('demo', 'probe') THEN json_extract(config, '$.kind')
        WHEN framework = 'demo' OR json_extract(result, '$.demo') IS NOT NULL THEN 'demo'
        WHEN workload = 'probe' THEN 'probe'
        ELSE 'benchmark' END;
    CREATE INDEX runs_kind ON runs(kind)
    """,
)
