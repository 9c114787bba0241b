"""The example notebook runs from top to bottom (nbclient, the venv's own kernel) and shows what it says:
the store as an HTML table, the pooled frame and the tail figures."""

from __future__ import annotations

import nbformat
from nbclient import NotebookClient

from conftest import ROOT


def test_the_example_notebook_runs_and_shows_the_store_the_pooled_table_and_the_figures(tmp_path):
    nb = nbformat.read(ROOT / "examples" / "tails.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if o.output_type == "execute_result" and "text/html" in o.get("data", {})]
    # the store, the pooled frame (polars' own HTML) and the single run
    assert any("30 runs (30 finished, 0 failed)" in h for h in html), html[:1]
    assert any("sd_p99_hi" in h for h in html)
    assert any("scheme <b>detail</b>" in h for h in html)
    images = [o for o in outputs if o.output_type == "display_data" and "image/png" in o.get("data", {})]
    assert len(images) == 3
