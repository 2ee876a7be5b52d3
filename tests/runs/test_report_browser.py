"""The tiny run's HTML report opened in a real browser (headless Chromium from Debian's
packages, driven by tests/browser.py): the first page opens on the answer (what ran, the
paper's claims, the best model per measure), every figure loads, every table has rows,
every category and result of the report renders, and no console error or uncaught
exception. Skipped, with the line that says how to get the browser, where there is none
(.ci/run installs it)."""

import pytest

from userfair.workflow import claims

from browser import Browser, chromium
from conftest import copy_run

NO_BROWSER = (
    "no Chromium on this machine: `apt-get install chromium` (Debian; .ci/run installs it) "
    "to open the report in a real browser"
)

# Run in the report's page once it has loaded: every result of the report checked by its
# kind, the first page's tables, then every category and result shown by the app itself.
CHECK = r"""
(async () => {
  const tick = () => new Promise(done => setTimeout(done, 50));
  for (let i = 0; i < 200 && !document.querySelector('#app').children.length; i++) await tick();
  const decode = uri => {
    const [head, body] = [uri.slice(0, uri.indexOf(',')), uri.slice(uri.indexOf(',') + 1)];
    const bytes = head.endsWith(';base64') ? atob(body) : decodeURIComponent(body);
    return new TextDecoder().decode(Uint8Array.from(bytes, c => c.charCodeAt(0)));
  };
  const out = {images: {}, pdfs: {}, tables: {}, other: [], front: {}, shown: 0};
  for (const [path, r] of Object.entries(results)) {
    const mime = r.mime_type || '';
    if (mime.startsWith('image/')) {
      out.images[path] = await new Promise(done => {
        const img = new Image();
        img.onload = () => done(img.naturalWidth > 0 && img.naturalHeight > 0);
        img.onerror = () => done(false);
        img.src = r.data_uri;
      });
    } else if (mime === 'application/pdf') {
      out.pdfs[path] = decode(r.data_uri).startsWith('%PDF');
    } else if (mime === 'text/csv' || mime === 'text/tab-separated-values') {
      out.tables[path] = decode(r.data_uri).split('\n').filter(l => l.trim()).length - 1;
    } else {
      out.other.push(path + ' ' + mime);
    }
  }
  const page = new DOMParser().parseFromString(workflow_desc, 'text/html');
  page.querySelectorAll('style').forEach(style => style.remove());  // not text a reader sees
  out.front.text = page.body.textContent.replace(/\s+/g, ' ').trim();
  out.front.tables = Array.from(page.querySelectorAll('table')).map(
    t => [t.querySelector('caption') ? t.querySelector('caption').textContent : '',
          t.querySelectorAll('tbody tr').length]);
  for (const category of Object.keys(categories)) { app.showCategory(category); await tick(); }
  for (const path of Object.keys(results)) { app.showResultInfo(path); await tick(); out.shown++; }
  return out;
})()
"""


# The first page's geometry once it has drawn, at the top of its scroll box: [x, y, width,
# height] of the page (the workflow description), of its claims table and of the rule graph.
LAYOUT = r"""
(async () => {
  const tick = () => new Promise(done => setTimeout(done, 50));
  for (let i = 0; i < 200 && !document.querySelector('#rulegraph canvas, #rulegraph svg'); i++)
    await tick();
  const box = e => { const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; };
  const claims = Array.from(document.querySelectorAll('.prose table')).find(
    t => t.caption && t.caption.textContent.startsWith("The paper's claims"));
  const page = box(document.querySelector('.prose'));
  return {page, claims: claims ? box(claims).slice(2) : [0, 0],
          graph: box(document.querySelector('#rulegraph'))};
})()
"""


@pytest.mark.slow
def test_the_report_opens_on_the_answer_in_a_real_browser(tiny_run, tmp_path):
    binary = chromium()
    if binary is None:
        pytest.skip(NO_BROWSER)
    run = copy_run(tiny_run, tmp_path / "run")
    run.snakemake("--report", "results/report.html")
    report = run.test_dir / "results" / "report.html"
    with Browser(binary) as browser:
        browser.send("Emulation.setDeviceMetricsOverride", session=browser.session,
                     width=1400, height=900, deviceScaleFactor=1, mobile=False)  # fmt: skip
        browser.open(report.as_uri())
        layout = browser.evaluate(LAYOUT)
        found = browser.evaluate(CHECK)
        errors = list(browser.errors)
    # at a 1,400-px window the first page starts at the top of its scroll box (a box centred
    # vertically lost the top 1,823 px of it) and the claims table has the page's width (it
    # had 512 px, a column beside the rule graph, which now comes below)
    assert layout["page"][1] >= 0, layout
    assert layout["claims"][0] >= 900, layout
    assert layout["graph"][1] >= layout["page"][1] + layout["page"][3], layout
    assert not errors, errors
    assert found["images"] and all(found["images"].values()), found["images"]
    assert found["pdfs"] and all(found["pdfs"].values()), found["pdfs"]
    assert "results/tables/claims.csv" in found["tables"], found["tables"]
    empty = [path for path, rows in found["tables"].items() if rows < 1]
    assert not empty, f"tables without rows: {empty}"
    assert found["shown"] == len(found["images"]) + len(found["pdfs"]) + len(found["tables"]) + len(
        found["other"]
    )
    front = found["front"]
    assert front["text"].startswith("What ran. 1 dataset: ml-100k"), front["text"][:300]
    assert front["text"].index("The paper's claims on this run") < front["text"].index(
        "This report gathers the results"
    )
    for claim in claims.CLAIMS:
        assert claim.id in front["text"]
    captions = [caption for caption, _ in front["tables"]]
    assert any(c.startswith("The paper's claims") for c in captions), captions
    assert any(c.startswith("The best model per measure on ml-100k") for c in captions)
    assert all(rows > 0 for _, rows in front["tables"]), front["tables"]
