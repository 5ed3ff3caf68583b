"""Several machines in one zbench: each host's telemetry, jobs and results, over ssh (no daemon)."""
