"""The papers ../shared/papers holds, named for a reader: a claim's source (a file and a line) becomes
"DeTail (technical report) §6.3 Microbenchmarks, line 410" rather than "000_76fdfa378bc5f2cf.txt:410".
The section headings and slide markers are copied from the papers' text files (their line numbers there),
so that a citation needs no copy of the papers; tests/test_grading.py checks them against the files where
they are present."""

from __future__ import annotations

# papers a claim may cite that are not among ../shared/papers (issue 38): what the claim says they state is
# our summary of the published paper, in our words, with where in it; it cannot be checked against a file
# here, and docs/reproduction.md ("Cited papers") lists every such statement
CITED = {
    "dcqcn": "Zhu et al., Congestion Control for Large-Scale RDMA Deployments (DCQCN), SIGCOMM 2015",
    "hpcc": "Li et al., HPCC: High Precision Congestion Control, SIGCOMM 2019",
}
CITED_PREFIX = "cited:"

TITLES = {
    "000_76fdfa378bc5f2cf.txt": "DeTail (technical report)",
    "001_3ddd0eee06cfd50c.txt": "DIBS (Don't Drop, Detour!, poster)",
    "002_76a380528a27012d.txt": "DeTail (SIGCOMM slides)",
    "003_5c3f0d64251b88f8.txt": "PIAS (NSDI 2015)",
    "004_efb14221606a95c2.txt": "DeTail (slides, second deck)",
}

# (line, heading) of each numbered section of the DeTail report
DETAIL_SECTIONS = [
    (31, '§1 Introduction'),
    (60, '§2 Impact Of The Long Tail'),
    (66, '§2.1 Traffic Measurements'),
    (76, '§2.2 Impact on Workflows'),
    (80, '§2.2.1 Partition-Aggregate'),
    (98, '§2.2.2 Sequential'),
    (111, '§2.2.3 Takeaways'),
    (121, '§2.3 Quantifying the Tail'),
    (125, '§3 Causes Of Long Tails'),
    (129, '§3.1 Packet Losses and Retransmissions'),
    (135, '§3.2 Absence of Prioritization'),
    (141, '§3.3 Uneven Load Balancing'),
    (163, '§3.4 Current Solutions Insufficient'),
    (171, '§4 DeTail'),
    (180, '§4.1 Overview'),
    (192, "§4.2 DeTail's Details"),
    (196, '§4.2.1 Assumed Switch Architecture'),
    (208, '§4.2.2 Link Layer'),
    (222, '§4.2.3 Network Layer'),
    (243, '§4.2.4 Transport Layer'),
    (253, '§4.2.5 Application Layer'),
    (259, '§4.2.6 Feasibility Analysis'),
    (267, '§4.3 Choice of Settings'),
    (271, '§4.3.1 Link Layer Flow Control'),
    (289, '§4.3.2 Adaptive Load Balancing'),
    (295, '§4.3.3 Explicit Congestion Notification'),
    (299, '§4.3.4 End-Host Timers'),
    (309, '§5 Experimental Setup'),
    (313, '§5.1 NS-3 Simulation'),
    (332, '§5.2 Click-based Implementation'),
    (336, '§5.2.1 Design Differences'),
    (346, '§5.2.2 Parameter Modifications'),
    (356, '§6 Experimental Results'),
    (360, '§6.1 Overview'),
    (384, '§6.2 Simulator Verification'),
    (400, '§6.3 Microbenchmarks'),
    (428, '§6.4 Topological Asymmetries'),
    (448, '§6.5 Web Workloads'),
    (469, '§7 Discussion'),
    (485, '§8 Related Work'),
    (489, '§8.1 Internet Protocols'),
    (495, '§8.2 Datacenter Networks'),
    (505, '§8.3 HPC Interconnects'),
    (511, '§9 Conclusion'),
    (515, '§10 Acknowledgements'),
    (519, '§11 References'),
]
# (line, heading) of the DIBS poster's sections
DIBS_SECTIONS = [(23, "§1 Introduction"), (55, "§2 Discussion"), (83, "§3 References")]
# (line, slide number) of each "slide-N" marker of the SIGCOMM slides
SLIDES = [(12, 1), (23, 2), (32, 3), (51, 4), (72, 5), (87, 6), (101, 7), (114, 8), (131, 9), (142, 10), (163, 11), (172, 12), (190, 13), (205, 14), (216, 15), (229, 16), (240, 17), (251, 18), (268, 19), (283, 20), (298, 21), (313, 22), (332, 23), (347, 24), (356, 25), (367, 26), (379, 27), (393, 28), (408, 29), (422, 30), (435, 31), (454, 32), (468, 33)]

SECTIONS = {"000_76fdfa378bc5f2cf.txt": DETAIL_SECTIONS, "001_3ddd0eee06cfd50c.txt": DIBS_SECTIONS,
            "002_76a380528a27012d.txt": [(i, f"slide {n}") for i, n in SLIDES]}


def cite(source: str) -> str:
    """A claim's source for a reader: the paper's name, the section (or slide) the line falls in, and the
    line; a cited paper's source ("cited:NAME (where)") as it is."""
    if source.startswith(CITED_PREFIX):
        key, _, where = source.removeprefix(CITED_PREFIX).partition(" ")
        return f"{CITED.get(key, key)} {where}".strip()
    if ":" not in source:
        return source
    f, _, n = source.rpartition(":")
    name = TITLES.get(f.split("/")[-1], f)
    try:
        line = int(n)
    except ValueError:
        return source
    within = [h for i, h in SECTIONS.get(f.split("/")[-1], []) if i <= line]
    return f"{name}{' ' + within[-1] if within else ''}, line {line}"
