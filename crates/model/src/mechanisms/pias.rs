//! PIAS demotion thresholds (Bai et al., NSDI 2015).
//!
//! With S_j = F(α_j) the fraction of flows smaller than threshold j (S_0 = 0, S_K = 1), θ_l = S_l − S_{l−1}
//! and ρ the load, the paper's bound on the average FCT (each queue an M/M/1) is
//!
//! ```text
//!   T(S) = ρ · Σ_l θ_l (1 − S_{l−1}) / (1 − ρ S_{l−1})
//! ```
//!
//! The paper's closed form has no non-negative solution for usual loads (see shared/spec/pias.md), so this
//! module minimises T exactly on a grid of S by dynamic programming (an optimal partition of [0, 1] into
//! K pieces, the cost of a piece depending only on its ends), then maps S through the flow-size CDF:
//! α_j = F⁻¹(S_j). Also: the equal-split heuristic (α_j is the 100 j / K-th percentile flow size) and the
//! thresholds of the PIAS authors' own ns-2 scripts. The arithmetic follows the former numpy solver
//! operation by operation, so the thresholds are the same to the byte.

/// Packet payload of the PIAS authors' scripts (their thresholds are in packets).
pub const PKT: u64 = 1460;
/// Grid of the dynamic programme: S in steps of 1/2000.
pub const GRID: usize = 2000;

/// HKUST-SING/PIAS-NS2 scripts/run_pias_dctcp.py and run_pias_vl2.py (packets of 1460 B), 8 queues.
const PAPER_WEBSEARCH: [u64; 7] = [46, 1084, 1717, 1943, 1989, 1999, 2001];
const PAPER_DATAMINING: [(f64, [u64; 7]); 5] = [
    (0.9, [750, 1083, 1416, 13705, 14952, 21125, 28253]),
    (0.8, [745, 1083, 1391, 13689, 14936, 21149, 27245]),
    (0.7, [907, 1301, 1619, 12166, 12915, 21313, 26374]),
    (0.6, [840, 1232, 1617, 11950, 12238, 21494, 25720]),
    (0.5, [805, 1106, 1401, 10693, 11970, 21162, 22272]),
];

/// How the thresholds are chosen.
pub const METHODS: &[&str] = &["optimal", "equal-split", "paper"];

/// Thresholds and what they mean.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Solution {
    pub method: String,
    pub queues: u32,
    pub load: f64,
    /// S_1 .. S_{K−1}.
    pub fractions: Vec<f64>,
    pub thresholds_bytes: Vec<u64>,
    pub thresholds_packets: Vec<f64>,
    /// T(S).
    pub bound: f64,
}

/// T(S) for the interior fractions `s` = (S_1 .. S_{K−1}).
pub fn bound(s: &[f64], rho: f64) -> f64 {
    let mut pts = Vec::with_capacity(s.len() + 2);
    pts.push(0.0);
    pts.extend_from_slice(s);
    pts.push(1.0);
    rho * pts.windows(2).map(|w| (w[1] - w[0]) * (1.0 - w[0]) / (1.0 - rho * w[0])).sum::<f64>()
}

/// The S_1 .. S_{K−1} minimising T, exactly on a grid of `grid` steps (dynamic programming).
pub fn optimal_fractions(rho: f64, queues: u32, grid: usize) -> Result<Vec<f64>, String> {
    if !(rho > 0.0 && rho < 1.0) {
        return Err(format!("load: must be in (0, 1), got {rho}"));
    }
    if queues < 1 {
        return Err("queues: at least 1".into());
    }
    let n = grid + 1;
    // numpy.linspace(0, 1, grid + 1): i * step, the last point exactly 1
    let step = 1.0 / grid as f64;
    let mut g: Vec<f64> = (0..n).map(|i| i as f64 * step + 0.0).collect();
    g[grid] = 1.0;
    // cost of a piece from g[i] to g[j] (j >= i), in numpy's order of operations
    let cost = |i: usize, j: usize| -> f64 {
        let (a, b) = (g[i], g[j]);
        if b >= a {
            rho * (b - a) * (1.0 - a) / (1.0 - rho * a)
        } else {
            f64::INFINITY
        }
    };
    let mut best: Vec<f64> = (0..n).map(|j| cost(0, j)).collect(); // one piece from 0 to g[j]
    let mut choice: Vec<Vec<u32>> = Vec::new();
    for _ in 1..queues {
        let mut next = vec![f64::INFINITY; n];
        let mut arg = vec![0u32; n];
        for j in 0..n {
            // argmin over i of best[i] + cost(i, j), the first minimum on ties (numpy.argmin)
            let (mut m, mut mi) = (best[0] + cost(0, j), 0usize);
            for (i, &bi) in best.iter().enumerate().take(j + 1).skip(1) {
                let t = bi + cost(i, j);
                if t < m {
                    m = t;
                    mi = i;
                }
            }
            // pieces ending before they start cost infinity: i > j never wins over i = 0 (finite)
            next[j] = m;
            arg[j] = mi as u32;
        }
        best = next;
        choice.push(arg);
    }
    // backtrack from the end at 1.0
    let mut ends = vec![grid];
    for arg in choice.iter().rev() {
        ends.push(arg[*ends.last().expect("non-empty")] as usize);
    }
    ends.reverse();
    Ok(ends[..ends.len() - 1].iter().map(|&i| g[i]).collect())
}

pub fn equal_split_fractions(queues: u32) -> Vec<f64> {
    (1..queues).map(|j| j as f64 / queues as f64).collect()
}

/// F⁻¹(q) of the piecewise-linear CDF `points` (size, cumulative fraction).
pub fn quantile(points: &[[f64; 2]], q: f64) -> f64 {
    for w in points.windows(2) {
        let ([x0, p0], [x1, p1]) = (w[0], w[1]);
        if q <= p1 && p1 > p0 {
            return x0 + (q.max(p0) - p0) / (p1 - p0) * (x1 - x0);
        }
    }
    points.last().map_or(0.0, |p| p[0])
}

/// α_j = F⁻¹(S_j) in bytes (rounded up to whole bytes).
pub fn thresholds(points: &[[f64; 2]], fractions: &[f64]) -> Vec<u64> {
    fractions.iter().map(|&s| quantile(points, s).ceil() as u64).collect()
}

/// The PIAS authors' published thresholds for `cdf` at the nearest load (8 queues only).
pub fn paper_thresholds(cdf: &str, load: f64, queues: u32) -> Result<Vec<u64>, String> {
    if queues != 8 {
        return Err("pias thresholds \"paper\": the authors published sets for 8 queues only".into());
    }
    let set = match cdf {
        "websearch" => PAPER_WEBSEARCH,
        "datamining" => {
            // the nearest published load (the first on ties, as the sets are listed)
            PAPER_DATAMINING
                .iter()
                .fold(None::<(f64, [u64; 7])>, |b, &(l, s)| match b {
                    Some((bl, _)) if (bl - load).abs() <= (l - load).abs() => b,
                    _ => Some((l, s)),
                })
                .expect("non-empty")
                .1
        }
        other => return Err(format!("pias thresholds \"paper\": published for websearch and datamining, not {other:?}")),
    };
    Ok(set.iter().map(|p| p * PKT).collect())
}

/// One source of flows in a mixture: how many flows per second it starts and how their sizes are
/// distributed.
#[derive(Debug, Clone, PartialEq)]
pub enum Sizes {
    /// Sizes in bytes with weights (any positive scale: normalised here).
    Atoms(Vec<(u64, f64)>),
    /// A piecewise-linear CDF: (size in bytes, cumulative fraction) points.
    Cdf(Vec<[f64; 2]>),
}

impl Sizes {
    /// Mean size in bytes.
    pub fn mean(&self) -> f64 {
        match self {
            Sizes::Atoms(a) => {
                let w: f64 = a.iter().map(|x| x.1).sum();
                a.iter().map(|&(s, x)| s as f64 * x).sum::<f64>() / w.max(f64::MIN_POSITIVE)
            }
            Sizes::Cdf(p) => p.windows(2).map(|w| (w[0][0] + w[1][0]) / 2.0 * (w[1][1] - w[0][1])).sum(),
        }
    }
}

/// One source in `mixture`: its share of the flows, and its atoms' cumulative weights (sizes sorted) or
/// its CDF's points.
type Weighted<'a> = (f64, Vec<(f64, f64)>, Option<&'a [[f64; 2]]>);

/// The CDF of the flow sizes of several sources together, each weighted by its flows per second:
/// F(x) = sum_i r_i F_i(x) / sum_i r_i, as (size, cumulative fraction) points at every size where a part
/// changes slope or steps. A size that occurs with positive probability (an atom at s) is a step from s - 1
/// to s, so `quantile` maps a fraction inside the step to s (rounded up). Sources with no flows are left
/// out; empty when none has any.
pub fn mixture(parts: &[(f64, Sizes)]) -> Vec<[f64; 2]> {
    let parts: Vec<&(f64, Sizes)> = parts.iter().filter(|(r, _)| *r > 0.0 && r.is_finite()).collect();
    let total: f64 = parts.iter().map(|p| p.0).sum();
    if parts.is_empty() {
        return Vec::new();
    }
    let mut xs: Vec<f64> = vec![0.0];
    // per part: atoms sorted by size with cumulative weights (normalised), or the CDF's points
    let mut sorted: Vec<Weighted> = Vec::new();
    for (r, d) in &parts {
        match d {
            Sizes::Atoms(a) => {
                let w: f64 = a.iter().map(|x| x.1).sum();
                let mut v: Vec<(u64, f64)> = a.iter().filter(|x| x.1 > 0.0).copied().collect();
                v.sort_by_key(|x| x.0);
                let mut acc = 0.0;
                let cum: Vec<(f64, f64)> = v
                    .iter()
                    .map(|&(s, x)| {
                        acc += x / w;
                        xs.push(s as f64);
                        xs.push(s.saturating_sub(1) as f64);
                        (s as f64, acc)
                    })
                    .collect();
                sorted.push((*r / total, cum, None));
            }
            Sizes::Cdf(p) => {
                xs.extend(p.iter().map(|q| q[0]));
                sorted.push((*r / total, Vec::new(), Some(p.as_slice())));
            }
        }
    }
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs.iter()
        .map(|&x| {
            let f: f64 = sorted
                .iter()
                .map(|(w, cum, cdf)| {
                    w * match cdf {
                        Some(p) => interp(x, p).clamp(0.0, 1.0),
                        None => match cum.partition_point(|c| c.0 <= x) {
                            0 => 0.0,
                            j => cum[j - 1].1,
                        },
                    }
                })
                .sum();
            [x, f.min(1.0)]
        })
        .collect()
}

/// S_j = F(α_j), by linear interpolation as numpy.interp does.
pub fn fractions_of(points: &[[f64; 2]], alphas: &[u64]) -> Vec<f64> {
    alphas.iter().map(|&a| interp(a as f64, points)).collect()
}

fn interp(x: f64, pts: &[[f64; 2]]) -> f64 {
    let n = pts.len();
    if n == 0 {
        return f64::NAN;
    }
    if x < pts[0][0] {
        return pts[0][1];
    }
    if x > pts[n - 1][0] {
        return pts[n - 1][1];
    }
    // the last j with xp[j] <= x
    let j = pts.partition_point(|p| p[0] <= x) - 1;
    if j == n - 1 {
        return pts[j][1];
    }
    let ([x0, y0], [x1, y1]) = (pts[j], pts[j + 1]);
    let slope = (y1 - y0) / (x1 - x0);
    let r = slope * (x - x0) + y0;
    if r.is_nan() {
        let r2 = slope * (x - x1) + y1;
        if r2.is_nan() && y0 == y1 {
            return y0;
        }
        return r2;
    }
    r
}

/// Thresholds by `method` for flows of CDF `points` (named `cdf`, for the published sets) at `load`.
pub fn solve(points: &[[f64; 2]], cdf: &str, load: f64, queues: u32, method: &str) -> Result<Solution, String> {
    let (s, alphas) = match method {
        "optimal" => {
            let s = optimal_fractions(load, queues, GRID)?;
            let a = thresholds(points, &s);
            (s, a)
        }
        "equal-split" => {
            let s = equal_split_fractions(queues);
            let a = thresholds(points, &s);
            (s, a)
        }
        "paper" => {
            let a = paper_thresholds(cdf, load, queues)?;
            (fractions_of(points, &a), a)
        }
        other => return Err(format!("pias thresholds: unknown method {other:?}; allowed: optimal, equal-split, paper, or a list")),
    };
    Ok(Solution {
        method: method.into(),
        queues,
        load,
        bound: bound(&s, load),
        thresholds_packets: alphas.iter().map(|&a| (a as f64 / PKT as f64 * 10.0).round() / 10.0).collect(),
        fractions: s,
        thresholds_bytes: alphas,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mixture_weights_each_source_by_its_flows_per_second() {
        // 1 flow/s of 1,000 B and 3 flows/s of 10,000 B: a quarter of the flows are small
        let m = mixture(&[(1.0, Sizes::Atoms(vec![(1000, 5.0)])), (3.0, Sizes::Atoms(vec![(10_000, 1.0)]))]);
        let at = |x: f64| m.iter().find(|p| p[0] == x).map(|p| p[1]);
        assert_eq!((at(999.0), at(1000.0), at(9999.0), at(10_000.0)), (Some(0.0), Some(0.25), Some(0.25), Some(1.0)));
        // a fraction inside a step maps to the step's size; below the first atom, to it as well
        assert_eq!(thresholds(&m, &[0.5, 0.1]), vec![10_000, 1000]);
        // a CDF part mixes in by its own points: uniform on [0, 2000] at 1 flow/s beside the atom at 10 KB
        let m = mixture(&[(1.0, Sizes::Cdf(vec![[0.0, 0.0], [2000.0, 1.0]])), (1.0, Sizes::Atoms(vec![(10_000, 1.0)])), (0.0, Sizes::Atoms(vec![(5, 1.0)]))]);
        assert_eq!(m.iter().find(|p| p[0] == 2000.0).unwrap()[1], 0.5);
        assert_eq!(quantile(&m, 0.25), 1000.0);
        assert_eq!(m.last().unwrap(), &[10_000.0, 1.0]);
        assert!(mixture(&[(0.0, Sizes::Atoms(vec![(1, 1.0)]))]).is_empty());
        assert_eq!(Sizes::Atoms(vec![(1000, 1.0), (3000, 3.0)]).mean(), 2500.0);
        assert_eq!(Sizes::Cdf(vec![[0.0, 0.0], [2000.0, 1.0]]).mean(), 1000.0);
    }

    #[test]
    fn two_queues_by_hand() {
        // K = 2: T(s) = rho [s + (1 - s)^2 / (1 - rho s)]; at rho = 0.5 the minimum is at s = 2 - sqrt(2)
        let s = optimal_fractions(0.5, 2, 20_000).unwrap();
        assert!((s[0] - (2.0 - 2f64.sqrt())).abs() < 1e-4, "{s:?}");
    }

    #[test]
    fn the_optimum_beats_every_other_grid_partition_for_three_queues() {
        let rho = 0.7;
        let grid = 100;
        let s = optimal_fractions(rho, 3, grid).unwrap();
        let t = bound(&s, rho);
        for i in 0..=grid {
            for j in i..=grid {
                let other = [i as f64 / grid as f64, j as f64 / grid as f64];
                assert!(t <= bound(&other, rho) + 1e-12, "{other:?} beats {s:?}");
            }
        }
    }

    #[test]
    fn thresholds_map_fractions_through_the_cdf() {
        let pts = [[0.0, 0.0], [1000.0, 0.5], [3000.0, 1.0]];
        assert_eq!(thresholds(&pts, &[0.25, 0.5, 0.75]), vec![500, 1000, 2000]);
        assert_eq!(fractions_of(&pts, &[500, 2000, 9000]), vec![0.25, 0.75, 1.0]);
        let eq = solve(&pts, "x", 0.5, 4, "equal-split").unwrap();
        assert_eq!(eq.thresholds_bytes, vec![500, 1000, 2000]);
        assert!(solve(&pts, "x", 0.5, 4, "optimal").unwrap().bound < eq.bound);
    }

    #[test]
    fn the_published_sets_and_their_limits() {
        let web = paper_thresholds("websearch", 0.3, 8).unwrap();
        assert_eq!(web[0], 46 * 1460);
        // datamining: the nearest published load
        assert_eq!(paper_thresholds("datamining", 0.62, 8).unwrap()[0], 840 * 1460);
        assert!(paper_thresholds("datamining", 0.8, 4).unwrap_err().contains("8 queues"));
        assert!(paper_thresholds("hadoop", 0.8, 8).unwrap_err().contains("not \"hadoop\""));
        assert!(solve(&[[0.0, 0.0], [1.0, 1.0]], "", 0.5, 8, "best").unwrap_err().contains("unknown method"));
        assert!(optimal_fractions(1.0, 8, 10).unwrap_err().starts_with("load"));
    }
}
