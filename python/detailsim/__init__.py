"""detailsim: a fast, faithful packet-level simulator of datacenter networks for flow-completion-time tails.

    >>> import detailsim
    >>> r = detailsim.run("paper/steady", scheme="fh", duration="0.05s")   # doctest: +SKIP
    >>> r.summary["fct"]["retrieval/8KB"]["p99_ms"]                        # doctest: +SKIP
    >>> r.flows.head()                                                       # doctest: +SKIP
    >>> st = detailsim.sweep("my_sweep.toml", "results/mine")                 # doctest: +SKIP
    >>> st.pooled()                                                          # doctest: +SKIP
"""

from ._core import InternalError, ScenarioError
from .core.api import Result, run
from .core.scenario import bundled_scenarios, load_scenario
from .core.store import Store, open_store, sweep

__version__ = "0.1.0"
__all__ = ["run", "Result", "sweep", "open_store", "Store", "ScenarioError", "InternalError", "load_scenario",
           "bundled_scenarios", "__version__"]
