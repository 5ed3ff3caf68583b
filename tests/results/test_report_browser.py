"""report.html in a real headless Chromium (Debian's package): every image loads, nothing errs.

A copy of the page gets a small script first in <head> that records errors (script errors, failed
resource loads, console.error) and, once loaded, writes the number of complete images with a
natural width into the DOM; ``--dump-dom`` prints the DOM after the page settles.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from zbench.results.report import write_report

CHROMIUM = Path("/usr/bin/chromium")
PROBE = """<script>
window.__errors = [];
window.addEventListener("error", e => window.__errors.push(
  e.message || ("failed to load " + (e.target && (e.target.src || e.target.href)))), true);
const origError = console.error;
console.error = (...a) => { window.__errors.push(a.join(" ")); origError(...a); };
window.addEventListener("load", () => {
  const imgs = Array.from(document.images);
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
  const out = document.createElement("pre");
  out.id = "zbench-check";
  out.textContent = "images=" + imgs.length + " loaded=" + ok + " errors=" +
    JSON.stringify(window.__errors);
  document.body.appendChild(out);
});
</script>"""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="/usr/bin/chromium is absent (apt-get install chromium; .ci/run installs it)",
    ),
]


def test_report_html_loads_in_chromium(h200_db: Path, tmp_path: Path) -> None:
    report = write_report(tmp_path / "out", db=h200_db)
    page = tmp_path / "checked.html"
    page.write_text(report.html.read_text().replace("<head>", "<head>\n" + PROBE, 1))
    profile = tmp_path / "profile"
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
           "--virtual-time-budget=10000", "--dump-dom", page.as_uri()]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="zbench-check">images=(\d+) loaded=(\d+) errors=(.*?)</pre>',
                      done.stdout)  # fmt: skip
    assert found, f"the check script did not run:\n{done.stderr[-2000:]}"
    images, loaded, errors = int(found[1]), int(found[2]), found[3]
    assert images == len(report.figures) >= 8
    assert loaded == images
    assert errors == "[]"
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line]
    assert not console, console
