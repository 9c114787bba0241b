//! Routing: all shortest paths, as a bitmap of acceptable output ports per destination at every switch.
//!
//! Hosts attached to the same edge switch share a row ("destination group"), so the table has one row per
//! edge switch rather than one per host. At the edge switch itself the output is the host's own port.

#[derive(Debug, Clone, Default)]
pub struct Routes {
    /// Per node: first port (global index) and port count.
    pub port_base: Vec<u32>,
    pub nports: Vec<u32>,
    /// Per node: 64-bit words per row and offset of row 0 in `bits`.
    pub words: Vec<u32>,
    pub off: Vec<usize>,
    pub bits: Vec<u64>,
    /// Per node (meaningful for hosts): destination group, edge switch and the edge switch's port to it.
    pub group: Vec<u32>,
    pub edge: Vec<u32>,
    pub edge_port: Vec<u32>,
    /// The edge switch's port to it by its index among the switch's ports (what a part of a split run,
    /// which numbers its ports locally, adds to the switch's first port).
    pub edge_lp: Vec<u32>,
    /// Hop distance (switch links) between the edge switches of groups a and b: `dist[a * groups + b]` (only
    /// edge switches: a host's path is its edge switch's; k = 32: 1 MB, where a row per node was 19 MB).
    pub dist: Vec<u32>,
    pub groups: usize,
    /// The same acceptable ports as lists (local indices, ascending), a switch's equal lists stored once
    /// (an edge switch's uplinks serve every other group): switch s's distinct lists are
    /// `spans[lists[s].span..]`, each a (start, len) in `list`, and group g's is the `pick[lists[s].pick + g]`-th
    /// (or the g-th when the switch has more than 256 distinct lists: `pick` is `NONE`). One byte per
    /// (switch, group) keeps the table in cache as fabrics grow (k = 32: 655 KB; (start, len) per pair would
    /// be 5.2 MB). See `ports`.
    pub lists: Vec<SwitchLists>,
    pub pick: Vec<u8>,
    pub spans: Vec<(u32, u32)>,
    pub list: Vec<u32>,
}

pub const NONE: u32 = u32::MAX;

/// The entry `Routes::ports` looks up for a (switch, destination) (`Routes::ports_entry`).
pub enum PortsEntry<'a> {
    Pick(&'a u8),
    Span(&'a (u32, u32)),
}

/// Where a switch's port lists are (`Routes::ports`).
#[derive(Debug, Clone, Copy)]
pub struct SwitchLists {
    pub pick: u32,
    pub span: u32,
}

impl Routes {
    /// `is_switch[n]`; `port_node[p]` owner of port p; `peer_node[p]` node at the other end;
    /// `up[p]` whether the link through port p is usable. Ports of a node are contiguous.
    pub fn compute(is_switch: &[bool], port_base: &[u32], nports: &[u32], peer_node: &[u32], up: &[bool]) -> Routes {
        let n = is_switch.len();
        let mut r = Routes {
            port_base: port_base.to_vec(),
            nports: nports.to_vec(),
            words: vec![0; n],
            off: vec![0; n],
            bits: Vec::new(),
            group: vec![NONE; n],
            edge: vec![NONE; n],
            edge_port: vec![NONE; n],
            edge_lp: vec![NONE; n],
            dist: Vec::new(),
            groups: 0,
            lists: vec![SwitchLists { pick: NONE, span: NONE }; n],
            pick: Vec::new(),
            spans: Vec::new(),
            list: Vec::new(),
        };
        // destination groups: one per switch with attached hosts
        let mut group_switch: Vec<u32> = Vec::new();
        let mut group_of_switch = vec![NONE; n];
        for h in 0..n {
            if is_switch[h] {
                continue;
            }
            let p = port_base[h];
            let sw = peer_node[p as usize];
            r.edge[h] = sw;
            if is_switch[sw as usize] {
                if group_of_switch[sw as usize] == NONE {
                    group_of_switch[sw as usize] = group_switch.len() as u32;
                    group_switch.push(sw);
                }
                r.group[h] = group_of_switch[sw as usize];
                // the switch's port facing h
                let b = port_base[sw as usize];
                for lp in 0..nports[sw as usize] {
                    if peer_node[(b + lp) as usize] == h as u32 {
                        r.edge_port[h] = b + lp;
                        r.edge_lp[h] = lp;
                    }
                }
            }
        }
        let groups = group_switch.len();
        let mut total = 0usize;
        for s in 0..n {
            if is_switch[s] {
                r.words[s] = nports[s].div_ceil(64).max(1);
                r.off[s] = total;
                total += r.words[s] as usize * groups;
            }
        }
        r.bits = vec![0; total];
        r.groups = groups;
        r.dist = vec![u32::MAX; groups * groups];
        // Switches by their index among the switches, and per switch its usable links to other switches:
        // (local port, the neighbour's index), in port order (the only ports either pass reads: a host's port
        // never leads on, a down link never counts).
        let switches: Vec<usize> = (0..n).filter(|&s| is_switch[s]).collect();
        let mut sidx = vec![NONE; n];
        for (i, &s) in switches.iter().enumerate() {
            sidx[s] = i as u32;
        }
        let mut nbr_start = Vec::with_capacity(switches.len() + 1);
        let mut nbrs: Vec<(u32, u32)> = Vec::new();
        for &s in &switches {
            nbr_start.push(nbrs.len() as u32);
            let b = port_base[s];
            nbrs.extend(
                (0..nports[s])
                    .map(|lp| (lp, peer_node[(b + lp) as usize]))
                    .filter(|&(lp, v)| up[(b + lp) as usize] && is_switch[v as usize])
                    .map(|(lp, v)| (lp, sidx[v as usize])),
            );
        }
        nbr_start.push(nbrs.len() as u32);
        let of = |i: usize| &nbrs[nbr_start[i] as usize..nbr_start[i + 1] as usize];
        // the group whose edge switch each switch is
        let mut group_at = vec![NONE; switches.len()];
        for (a, &e) in group_switch.iter().enumerate() {
            group_at[sidx[e as usize] as usize] = a as u32;
        }
        // Sixty-four groups at a time, one bit each: a breadth-first search from all of their edge switches at
        // once, level by level. `cur[i]` holds the groups switch i is `d` hops from, `prev[i]` those it is
        // d - 1 from, `reached[i]` every group that reached it; `clist` and `plist` the switches with a `cur`
        // and a `prev`. A port of switch i at level d towards neighbour v leads one hop closer to the groups
        // of `cur[i] & prev[v]`: every row is written while its level is at hand, a switch's rows for the 64
        // groups side by side. Each level passes over its switches' links once for all 64 groups, and a
        // switch is in at most 64 levels, so no block costs more than 64 searches one group at a time.
        let ns = switches.len();
        let (mut reached, mut cur, mut prev) = (vec![0u64; ns], vec![0u64; ns], vec![0u64; ns]);
        let (mut clist, mut plist): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
        for b0 in (0..groups).step_by(64) {
            let bl = 64.min(groups - b0);
            reached.fill(0);
            for (j, &e) in group_switch[b0..b0 + bl].iter().enumerate() {
                let e = sidx[e as usize] as usize;
                reached[e] |= 1 << j;
                cur[e] |= 1 << j;
                clist.push(e as u32);
            }
            let mut d = 0u32;
            while !clist.is_empty() {
                for &u in &clist {
                    let (u, m) = (u as usize, cur[u as usize]);
                    if group_at[u] != NONE {
                        let dist = &mut r.dist[group_at[u] as usize * groups + b0..][..bl];
                        for_each_bit(m, |j| dist[j] = d);
                    }
                    let (s, w) = (switches[u], r.words[switches[u]] as usize);
                    let rows = &mut r.bits[r.off[s] + b0 * w..][..bl * w];
                    for &(lp, v) in of(u) {
                        let (word, bit) = ((lp / 64) as usize, 1u64 << (lp % 64));
                        for_each_bit(m & prev[v as usize], |j| rows[j * w + word] |= bit);
                    }
                }
                // the next level: what this one reaches that nothing reached before
                for &u in &plist {
                    prev[u as usize] = 0;
                }
                std::mem::swap(&mut prev, &mut cur);
                std::mem::swap(&mut plist, &mut clist);
                clist.clear();
                for &u in &plist {
                    let m = prev[u as usize];
                    for &(_, v) in of(u as usize) {
                        let new = m & !reached[v as usize];
                        if new != 0 {
                            if cur[v as usize] == 0 {
                                clist.push(v);
                            }
                            cur[v as usize] |= new;
                            reached[v as usize] |= new;
                        }
                    }
                }
                d += 1;
            }
            for &u in &plist {
                prev[u as usize] = 0;
            }
            plist.clear();
        }
        // the rows as lists, switch by switch, group by group, a switch's equal rows sharing one list
        let mut seen: std::collections::HashMap<&[u64], u32> = std::collections::HashMap::new();
        let mut picks: Vec<u32> = Vec::with_capacity(groups);
        for s in (0..n).filter(|&s| is_switch[s]) {
            let span = r.spans.len() as u32;
            seen.clear();
            picks.clear();
            let w = r.words[s] as usize;
            for g in 0..groups {
                let row = &r.bits[r.off[s] + g * w..][..w];
                // neighbouring groups mostly share a row (a fat tree numbers its edge switches pod by pod):
                // the group before's list, without hashing the row
                let before = &r.bits[r.off[s] + g.saturating_sub(1) * w..][..w];
                if g > 0 && if w == 1 { row[0] == before[0] } else { row == before } {
                    picks.push(picks[g - 1]);
                    continue;
                }
                let k = *seen.entry(row).or_insert_with(|| {
                    let start = r.list.len() as u32;
                    r.list.extend((0..count(row)).map(|k| nth(row, k)));
                    r.spans.push((start, r.list.len() as u32 - start));
                    r.spans.len() as u32 - 1 - span
                });
                picks.push(k);
            }
            if r.spans.len() as u32 - span <= 256 {
                r.lists[s] = SwitchLists { pick: r.pick.len() as u32, span };
                r.pick.extend(picks.iter().map(|&k| k as u8));
            } else {
                // more distinct lists than a byte names: one span per group, in group order
                let distinct: Vec<(u32, u32)> = r.spans.drain(span as usize..).collect();
                r.spans.extend(picks.iter().map(|&k| distinct[k as usize]));
                r.lists[s] = SwitchLists { pick: NONE, span };
            }
        }
        r
    }

    /// Links on a shortest path between two hosts (None if unreachable).
    pub fn host_links(&self, src: u32, dst: u32) -> Option<u32> {
        // (a host's group is its edge switch's; a host not behind a switch has none)
        let (gs, g) = (self.group[src as usize], self.group[dst as usize]);
        if gs == NONE || g == NONE {
            return None;
        }
        let d = self.dist[gs as usize * self.groups + g as usize];
        (d != u32::MAX).then(|| d + 2)
    }

    /// Acceptable local ports at switch `s` towards host `dst` (not the edge switch of `dst`), ascending: the
    /// ports of `row(s, dst)` as a list.
    #[inline]
    pub fn ports(&self, s: u32, dst: u32) -> &[u32] {
        let (l, g) = (self.lists[s as usize], self.group[dst as usize]);
        let k = if l.pick != NONE { self.pick[(l.pick + g) as usize] as u32 } else { g };
        let (start, len) = self.spans[(l.span + k) as usize];
        &self.list[start as usize..(start + len) as usize]
    }

    /// `ports(s, dst)` with every index checked (None where one is out of range): for a prefetch.
    #[inline]
    pub fn ports_checked(&self, s: u32, dst: u32) -> Option<&[u32]> {
        let l = self.lists.get(s as usize)?;
        let g = *self.group.get(dst as usize)?;
        let k = if l.pick != NONE { *self.pick.get(l.pick.checked_add(g)? as usize)? as u32 } else { g };
        let &(start, len) = self.spans.get(l.span.checked_add(k)? as usize)?;
        self.list.get(start as usize..start.checked_add(len)? as usize)
    }

    /// What `ports(s, dst)` reads first that is likely not cached (for a prefetch): the (switch, group)
    /// byte, or the span of a switch that keeps one per group.
    #[inline]
    pub fn ports_entry(&self, s: u32, dst: u32) -> Option<PortsEntry<'_>> {
        let l = self.lists.get(s as usize)?;
        let g = *self.group.get(dst as usize)?;
        if l.pick != NONE {
            self.pick.get((l.pick + g) as usize).map(PortsEntry::Pick)
        } else {
            self.spans.get((l.span + g) as usize).map(PortsEntry::Span)
        }
    }

    /// Acceptable local ports at switch `s` towards host `dst` (not the edge switch of `dst`).
    #[inline]
    pub fn row(&self, s: u32, dst: u32) -> &[u64] {
        let w = self.words[s as usize] as usize;
        let start = self.off[s as usize] + self.group[dst as usize] as usize * w;
        &self.bits[start..start + w]
    }
}

/// Call `f` with the index of every set bit of `m`, lowest first.
#[inline]
fn for_each_bit(mut m: u64, mut f: impl FnMut(usize)) {
    while m != 0 {
        f(m.trailing_zeros() as usize);
        m &= m - 1;
    }
}

/// Number of set bits in a row.
#[inline]
pub fn count(row: &[u64]) -> u32 {
    row.iter().map(|w| w.count_ones()).sum()
}

/// Local index of the `k`-th set bit (0-based) of a row.
#[inline]
pub fn nth(row: &[u64], mut k: u32) -> u32 {
    for (i, &w) in row.iter().enumerate() {
        let c = w.count_ones();
        if k < c {
            let mut w = w;
            for _ in 0..k {
                w &= w - 1;
            }
            return i as u32 * 64 + w.trailing_zeros();
        }
        k -= c;
    }
    unreachable!("nth beyond count")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fabric as `Routes::compute` reads it.
    struct Topo {
        is_switch: Vec<bool>,
        port_base: Vec<u32>,
        nports: Vec<u32>,
        peer: Vec<u32>,
        up: Vec<bool>,
    }

    impl Topo {
        fn routes(&self) -> Routes {
            Routes::compute(&self.is_switch, &self.port_base, &self.nports, &self.peer, &self.up)
        }
    }

    /// A core switch (node 0) with `n` edge switches, each with one host: the core reaches each host's
    /// group by its own port, so it has `n` distinct port lists.
    fn star(n: u32) -> Routes {
        star_with(n, |_, _| true).routes()
    }

    /// `star(n)`'s fabric with the ports for which `up(port, port_base)` is false down.
    fn star_with(n: u32, up: impl Fn(usize, &[u32]) -> bool) -> Topo {
        // nodes: 0 core, 1..=n edges, n+1..=2n hosts; ports: core's n, each edge's 2 (core, host), each host's 1
        let nodes = (1 + 2 * n) as usize;
        let mut is_switch = vec![false; nodes];
        let (mut port_base, mut nports, mut peer) = (vec![0u32; nodes], vec![0u32; nodes], Vec::new());
        is_switch[0] = true;
        nports[0] = n;
        peer.extend(1..=n);
        for e in 1..=n {
            is_switch[e as usize] = true;
            port_base[e as usize] = peer.len() as u32;
            nports[e as usize] = 2;
            peer.extend([0, e + n]);
        }
        for h in n + 1..=2 * n {
            port_base[h as usize] = peer.len() as u32;
            nports[h as usize] = 1;
            peer.push(h - n);
        }
        let up: Vec<bool> = (0..peer.len()).map(|p| up(p, &port_base)).collect();
        Topo { is_switch, port_base, nports, peer, up }
    }

    /// `m` switches on a ring, each with a chord to the switch `m / 3` on and one host, the links `down` (by
    /// the index of their port at one end) out: many groups, paths of several lengths, equal ones, and
    /// switches cut off.
    fn ring(m: u32, down: &[u32]) -> Topo {
        // nodes: 0..m switches, m..2m hosts; each switch's ports: ring next, ring previous, chord out, chord
        // in, host
        let (nodes, chord) = ((2 * m) as usize, m / 3);
        let mut is_switch = vec![false; nodes];
        let (mut port_base, mut nports) = (vec![0u32; nodes], vec![0u32; nodes]);
        let mut peer = Vec::new();
        for s in 0..m {
            is_switch[s as usize] = true;
            port_base[s as usize] = peer.len() as u32;
            nports[s as usize] = 5;
            peer.extend([(s + 1) % m, (s + m - 1) % m, (s + chord) % m, (s + m - chord) % m, m + s]);
        }
        for h in m..2 * m {
            port_base[h as usize] = peer.len() as u32;
            nports[h as usize] = 1;
            peer.push(h - m);
        }
        // a link is down at both ends: the port at the other end is the one there that leads back
        let mut up = vec![true; peer.len()];
        for &p in down {
            let (s, v) = ((p / 5) as usize, peer[p as usize] as usize);
            up[p as usize] = false;
            let back = (0..5).map(|lp| port_base[v] as usize + lp).find(|&q| peer[q] as usize == s && up[q]).expect("a port back");
            up[back] = false;
        }
        Topo { is_switch, port_base, nports, peer, up }
    }

    /// Hops from every node to switch `t` over usable links between switches, one search per target: the
    /// definition the tables are checked against.
    fn hops_to(t: usize, f: &Topo) -> Vec<u32> {
        let mut d = vec![u32::MAX; f.is_switch.len()];
        d[t] = 0;
        let mut frontier = vec![t];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for u in frontier {
                for p in f.port_base[u]..f.port_base[u] + f.nports[u] {
                    let v = f.peer[p as usize] as usize;
                    if f.up[p as usize] && f.is_switch[v] && d[v] == u32::MAX {
                        d[v] = d[u] + 1;
                        next.push(v);
                    }
                }
            }
            frontier = next;
        }
        d
    }

    #[test]
    fn every_row_holds_the_ports_one_hop_closer_and_every_distance_is_the_shortest() {
        // rings of 70 and 97 groups (more than one block of groups, the last one cut short; links down cut
        // the ring) and of 12; a star of 300 (rows of five words) with three links down
        let fabrics = [
            ring(70, &[]),
            ring(97, &[0, 5 * 40 + 2, 5 * 41 + 1, 5 * 60]),
            ring(12, &[0, 5 * 6]),
            star_with(300, |p, base| ![7, 64, base[250] as usize].contains(&p)),
        ];
        for f in &fabrics {
            let r = f.routes();
            let hosts: Vec<u32> = (0..f.is_switch.len() as u32).filter(|&h| !f.is_switch[h as usize]).collect();
            assert_eq!(r.groups, hosts.len());
            for &h in &hosts {
                let t = r.edge[h as usize] as usize;
                let d = hops_to(t, f);
                for &a in &hosts {
                    let e = r.edge[a as usize] as usize;
                    assert_eq!(r.dist[r.group[a as usize] as usize * r.groups + r.group[h as usize] as usize], d[e], "{a} to {h}");
                }
                for s in (0..f.is_switch.len()).filter(|&s| f.is_switch[s] && s != t) {
                    let row = r.row(s as u32, h);
                    for lp in 0..f.nports[s] {
                        let p = (f.port_base[s] + lp) as usize;
                        let v = f.peer[p] as usize;
                        let want = f.up[p] && f.is_switch[v] && d[s] != u32::MAX && d[v] == d[s] - 1;
                        assert_eq!(row[(lp / 64) as usize] >> (lp % 64) & 1 == 1, want, "switch {s} port {lp} towards host {h}");
                    }
                }
            }
        }
    }

    #[test]
    fn host_links_counts_the_links_between_two_hosts_edge_to_edge() {
        let n = 8u32;
        let r = star(n);
        // host, edge, core, edge, host: four links; behind the same edge switch: two
        assert_eq!(r.host_links(n + 1, n + 2), Some(4));
        assert_eq!(r.host_links(n + 1, n + 1), Some(2));
        // a switch is no host: no group
        assert_eq!(r.host_links(0, n + 1), None);
        // edge 1's uplink down (the core's port 0 and edge 1's port 0): its host reaches no other
        let r = star_with(n, |p, base| p != 0 && p != base[1] as usize).routes();
        assert_eq!(r.host_links(n + 1, n + 2), None);
        assert_eq!(r.host_links(n + 2, n + 3), Some(4));
    }

    #[test]
    fn the_port_lists_are_the_rows_with_one_byte_per_group_or_a_span_each() {
        // 8 edges: the core names its lists by a byte; 300: by a span per group (more than a byte names)
        for n in [8u32, 300] {
            let r = star(n);
            assert_eq!(r.lists[0].pick == NONE, n > 256, "{n}");
            for s in 0..=n {
                for h in n + 1..=2 * n {
                    if r.edge[h as usize] == s {
                        continue;
                    }
                    let row = r.row(s, h);
                    let want: Vec<u32> = (0..count(row)).map(|k| nth(row, k)).collect();
                    assert_eq!(r.ports(s, h), &want[..], "switch {s} to host {h} of {n}");
                    assert_eq!(r.ports_checked(s, h), Some(&want[..]), "switch {s} to host {h} of {n}");
                    assert!(!want.is_empty());
                }
            }
            // (a prefetch's guess out of range: no list, no panic)
            assert_eq!(r.ports_checked(2 * n + 5, n + 1), None);
            assert_eq!(r.ports_checked(0, 2 * n + 5), None);
        }
    }
}
