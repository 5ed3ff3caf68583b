"""report.html in a real headless Chromium (Debian's package): every image loads, nothing errs.

A copy of the page gets a small script first in <head> that records errors (script errors, failed
resource loads, console.error) and, once loaded, writes the number of complete images with a
natural width and the page's width into the DOM; ``--dump-dom`` prints the DOM after the page
settles. Where ``$CI`` or ``$ZBENCH_REQUIRE_BROWSER`` is set (``.ci/run`` sets it), a missing
Chromium fails the test instead of skipping it.
"""

from __future__ import annotations

import os
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
  const boxes = Array.from(document.querySelectorAll("div.scroll"));
  const scrolled = boxes.filter(b => b.scrollWidth > b.clientWidth).length;
  out.textContent = "images=" + imgs.length + " loaded=" + ok + " page=" +
    document.documentElement.scrollWidth + " window=" + window.innerWidth + " scrolled=" +
    scrolled + " errors=" + JSON.stringify(window.__errors);
  document.body.appendChild(out);
});
</script>"""

REQUIRED = bool(os.environ.get("CI") or os.environ.get("ZBENCH_REQUIRE_BROWSER"))
WIDTH = 1280  # a laptop's window: the report's widest tables scroll inside their own box

pytestmark = pytest.mark.slow


def test_report_html_loads_in_chromium(h200_db: Path, tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        missing = "/usr/bin/chromium is absent (apt-get install chromium; .ci/run installs it)"
        if REQUIRED:
            pytest.fail(missing + "; CI / ZBENCH_REQUIRE_BROWSER asks for the browser test")
        pytest.skip(missing)
    report = write_report(tmp_path / "out", db=h200_db)
    page = tmp_path / "checked.html"
    page.write_text(report.html.read_text().replace("<head>", "<head>\n" + PROBE, 1))
    profile = tmp_path / "profile"
    cmd = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--window-size={WIDTH},900",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=10000",
        "--dump-dom",
        page.as_uri(),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    pattern = (
        r'<pre id="zbench-check">images=(\d+) loaded=(\d+) page=(\d+) window=(\d+) '
        r"scrolled=(\d+) errors=(.*?)</pre>"
    )
    found = re.search(pattern, done.stdout)
    assert found, f"the check script did not run:\n{done.stderr[-2000:]}"
    images, loaded, page_w, window_w, scrolled = (int(found[i]) for i in range(1, 6))
    assert images == len(report.figures) >= 8
    assert loaded == images
    assert found[6] == "[]"
    assert window_w == WIDTH
    assert page_w <= window_w  # nothing pushes the page wider than the window...
    assert scrolled >= 1  # ...though the widest tables are wider: they scroll in their box
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line]
    assert not console, console
