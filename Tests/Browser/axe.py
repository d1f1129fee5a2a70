"""Accessibility checked by axe-core 4.x in the page: its `axe.min.js` comes from PyPI's
axe-playwright-python (0.1.8 carries axe-core 4.12.1; `pip install --no-deps`, since only that
file is used — scripts/test installs it), injected into the page under test and run there."""

import importlib.util
from pathlib import Path

from browser import Browser

PACKAGE = "axe-playwright-python==0.1.8"
BLOCKING = ("serious", "critical")


def axe_source() -> str:
    spec = importlib.util.find_spec("axe_playwright_python")  # finds the file without importing Playwright
    script = Path(next(iter(spec.submodule_search_locations))) / "axe.min.js" if spec else None
    if script is None or not script.is_file():
        raise AssertionError(f"axe-core is missing: pip install --no-deps {PACKAGE} (scripts/test installs it)")
    return script.read_text()


def violations(b: Browser, impacts=BLOCKING) -> list[str]:
    """axe-core's violations of `impacts` on the page as it is now (WCAG 2.x A and AA rules and
    best practices), one line each: rule, impact, the elements."""
    if not b.js("return Boolean(window.axe)"):
        b.js(axe_source() + "\nreturn true;")
    version = b.js("return axe.version")
    assert version.startswith("4."), f"axe-core {version}, not 4.x"
    result = b.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        axe.run(document, { resultTypes: ['violations'] })
          .then((r) => done(r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                                                       nodes: v.nodes.map((n) => n.target.join(' ')) }))))
          .catch((e) => done([{ id: 'axe-error', impact: 'critical', help: String(e), nodes: [] }]));
    """)
    return [f"{v['id']} ({v['impact']}): {v['help']} — {', '.join(v['nodes'][:6])}" for v in result if v["impact"] in impacts]
