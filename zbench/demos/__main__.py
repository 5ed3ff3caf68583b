"""``python -m zbench.demos <demo> [options] --events <path|fd:N>``: one demo run as a job runner.

Exit status: 0 done, 1 the work failed (an ``error`` event says why), 2 bad options (one line).
"""

from __future__ import annotations

import sys

from zbench.demos.adapter import main

if __name__ == "__main__":
    sys.exit(main())
