"""A real browser against ``plantune serve``: Debian's chromium driven by Playwright.

Opens the phase_counts view with a chart configured in the URL, checks that the facets
are there and that datasette-vega draws the chart, narrows the view with a facet and
saves screenshots under the test's tmp dir. Skipped only when chromium is absent, and
never when PLANTUNE_REQUIRE_BROWSER is set (CI sets it after installing chromium).
"""

import os
import re

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CHART = (
    "#g.mark=bar&g.x_column=phase&g.x_type=ordinal&g.y_column=asked&g.y_type=quantitative"
    "&g.color_column=project"
)

pytestmark = pytest.mark.browser


def _missing(reason):
    if os.environ.get("PLANTUNE_REQUIRE_BROWSER"):
        pytest.fail(f"{reason}, and PLANTUNE_REQUIRE_BROWSER is set")
    pytest.skip(f"{reason} (apt-get install chromium, as .ci/run does)")


@pytest.fixture
def browser():
    if not os.path.exists(CHROMIUM):
        _missing(f"Debian chromium is not installed at {CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


# Counts canvas pixels that are neither blank nor white: a drawn chart has thousands.
PAINTED_PIXELS = """
canvas => {
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let n = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (data[i + 3] > 0 && (data[i] < 240 || data[i + 1] < 240 || data[i + 2] < 240)) n++;
  }
  return n;
}
"""


def test_phase_counts_page_shows_facets_and_draws_a_chart(served, browser, tmp_path):
    base, _, proc = served
    page = browser.new_page(viewport={"width": 1280, "height": 1100})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # Owner-only: a browser that has not signed in gets the sign-in page, and the link
    # plantune serve printed signs it in.
    page.goto(f"{base}/plantune/phase_counts")
    assert page.locator("h1").inner_text() == "Sign in to plantune"
    page.goto(proc.sign_in)
    page.wait_for_url(re.compile(r"/plantune$"))
    page.goto(f"{base}/plantune/phase_counts?_size=max{CHART}")

    assert "phase_counts" in page.title()
    heading = page.locator("h3").first.inner_text()
    assert heading.startswith("8 rows")

    facet = page.locator("#facet-phase")
    facet.wait_for()
    facet_text = facet.inner_text()
    assert "phase" in facet_text
    # eng appears in two of the eight rows (alpha s1, beta s3)
    assert re.search(r"eng\s*2", facet_text), facet_text
    assert page.locator("#facet-project").is_visible()

    canvas = page.locator(".vega-embed canvas")
    canvas.wait_for(timeout=20000)
    page.wait_for_function(
        "() => { const c = document.querySelector('.vega-embed canvas'); return c && c.width > 100; }",
        timeout=20000,
    )
    assert canvas.evaluate(PAINTED_PIXELS) > 1000
    assert page.locator("#graphForm select[name=x_column]").input_value() == "phase"
    assert page.locator("#graphForm select[name=y_column]").input_value() == "asked"
    page.screenshot(path=str(tmp_path / "phase_counts.png"), full_page=True)

    # Narrow by a facet: the chart follows (the plugin keeps its settings in the URL hash).
    facet.get_by_role("link", name="eng").click()
    page.wait_for_url(re.compile(r"phase=eng"))
    assert page.locator("h3").first.inner_text().startswith('2 rows where phase = "eng"')
    page.wait_for_function(
        "() => { const c = document.querySelector('.vega-embed canvas'); return c && c.width > 100; }",
        timeout=20000,
    )
    assert page.locator(".vega-embed canvas").evaluate(PAINTED_PIXELS) > 500
    cells = page.locator("table.rows-and-columns td.col-phase").all_inner_texts()
    assert cells == ["eng", "eng"]
    page.screenshot(path=str(tmp_path / "phase_counts_eng.png"), full_page=True)

    assert errors == []
    assert os.path.getsize(tmp_path / "phase_counts.png") > 10000
