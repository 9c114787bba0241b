"""The core API: run a scenario (`api`), read and resolve scenarios (`scenario`, `cdf`, `formats`, `pias`),
the results of a run (`results`), sweeps (`sweep`) and the network-free analyses (`analyze`)."""
