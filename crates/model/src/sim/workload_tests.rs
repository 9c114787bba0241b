//! Unit tests of `workload` (a file of their own to keep the module short).
use super::*;

fn sim(layout: &str) -> Sim {
    Sim::from_json(&format!(
        r#"{{"run": {{"duration": "1ms"}}, "topology": {{"kind": "detail128"}}, "scheme": {{"preset": "fh"}},
            "workload": [{{"kind": "retrieval", "rate": 100, "sizes": ["2KB"], "pattern": "front_to_back"{layout}}}]}}"#
    ))
    .unwrap()
}

fn requesters(s: &Sim) -> Vec<u32> {
    match &s.hosts.workloads[0] {
        Workload::Retrieval { requesters, .. } => requesters.iter().map(|h| s.fab.hosts.iter().position(|x| x == h).unwrap() as u32).collect(),
        _ => unreachable!(),
    }
}

#[test]
fn front_ends_are_spread_over_every_rack_by_default() {
    let s = sim("");
    let r = requesters(&s);
    assert_eq!(r, (0..64).map(|k| 2 * k).collect::<Vec<u32>>(), "every other server");
    // detail128: 8 servers per rack, so each of the 16 racks holds 4 front-ends
    for rack in 0..16 {
        assert_eq!(r.iter().filter(|&&h| h / 8 == rack).count(), 4, "rack {rack}");
    }
}

#[test]
fn front_ends_first_keeps_the_first_half() {
    let s = sim(r#", "frontend_layout": "first""#);
    assert_eq!(requesters(&s), (0..64).collect::<Vec<u32>>());
}

#[test]
fn a_spread_of_any_count_is_even_and_exact() {
    let s = sim(r#", "frontends": 48"#);
    let r = requesters(&s);
    assert_eq!(r.len(), 48);
    let gaps: Vec<u32> = r.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|&g| g == 2 || g == 3), "{gaps:?}");
}

#[test]
fn frontend_layout_without_front_to_back_is_refused() {
    let e = Sim::from_json(
        r#"{"run": {"duration": "1ms"}, "topology": {"kind": "detail128"}, "scheme": {"preset": "fh"},
            "workload": [{"kind": "retrieval", "rate": 100, "sizes": ["2KB"], "frontend_layout": "first"}]}"#,
    )
    .err()
    .expect("refused");
    assert_eq!(e.field, "workload[0].frontend_layout");
}

#[test]
fn client_server_keys_are_checked() {
    let run = |extra: &str| {
        Sim::from_json(&format!(
            r#"{{"run": {{"duration": "1ms"}}, "topology": {{"kind": "single_switch", "hosts": 4}}, "scheme": {{"preset": "dctcp"}},
                "workload": [{{"kind": "cdf", "points": [[1000, 0], [2000, 1]], "load": 0.5{extra}}}]}}"#
        ))
        .err()
    };
    assert!(run(r#", "client": 0"#).is_none());
    assert_eq!(run(r#", "client": 4"#).expect("refused").field, "workload[0].client");
    assert_eq!(run(r#", "request_size": 100"#).expect("refused").field, "workload[0].request_size");
    assert_eq!(run(r#", "client": 1, "request_size": 0"#).expect("refused").field, "workload[0].request_size");
}

/// Request-response traffic on one switch of 16 hosts, sparse enough that each request is alone in the
/// fabric (`kind` "retrieval": 8 KB retrievals between random hosts, 5 a second from each host for 1 s; any
/// other: memcached-like queries, host 0 asking the 15 others for 1 KB each, 50 a second for 200 ms), with
/// the servers taking `server_time` on each request; `threads` parts.
fn served(kind: &str, server_time: &str, threads: u32) -> Sim {
    let dur = if kind == "retrieval" { "1s" } else { "200ms" };
    let w = match kind {
        "retrieval" => r#""kind": "retrieval", "rate": 5, "sizes": ["8KB"]"#,
        _ => r#""kind": "partition_aggregate", "rate": 50, "fanouts": [15], "size": "1KB", "frontends": 1, "frontend_layout": "first""#,
    };
    let mut s = Sim::from_json(&format!(
        r#"{{"run": {{"duration": "{dur}", "threads": {threads}}}, "topology": {{"kind": "single_switch", "hosts": 16, "link_rate": "1Gbps", "link_delay": "24us"}},
            "scheme": {{"preset": "dctcp"}}, "workload": [{{{w}, "server_time": "{server_time}"}}]}}"#
    ))
    .unwrap();
    s.run();
    s
}

#[test]
fn a_server_time_delays_each_response_by_that() {
    let shift = Time::from_us(400).0;
    // a retrieval alone ends the server's time later, less at most one header-only frame (576 ns at 1 Gbps):
    // without a server time the response's first frame waits at the server's NIC behind the request's
    // acknowledgement, with one the acknowledgement has long gone. Its ideal completion time counts the
    // server's time
    let (a, b) = (served("retrieval", "0s", 1), served("retrieval", "400us", 1));
    let (fa, fb) = (&a.rec.flows, &b.rec.flows);
    assert!(fa.id.len() > 50, "{} flows", fa.id.len());
    assert_eq!(fa.id, fb.id);
    for i in 0..fa.id.len() {
        assert_ne!(fa.end_ps[i], u64::MAX);
        let (da, db) = (fa.end_ps[i] - fa.start_ps[i], fb.end_ps[i] - fb.start_ps[i]);
        assert!(db <= da + shift && db + 576_000 >= da + shift, "flow {i}: {da} ps, then {db} ps");
        assert_eq!(fb.ideal_ps[i], fa.ideal_ps[i] + shift, "flow {i}");
    }
    // a query: its 15 responses meet at the client's port in both runs; with the server's time each
    // server acknowledges its request alone first (nothing to carry the acknowledgement), which moves the
    // responses by a few frames at most
    let (a, b) = (served("query", "0s", 1), served("query", "400us", 1));
    let (fa, fb) = (&a.rec.flows, &b.rec.flows);
    assert!(fa.id.len() > 100, "{} flows", fa.id.len());
    assert_eq!(fa.id, fb.id);
    for i in 0..fa.id.len() {
        let (da, db) = (fa.end_ps[i] - fa.start_ps[i], fb.end_ps[i] - fb.start_ps[i]);
        assert!(db.abs_diff(da + shift) < Time::from_us(15).0, "flow {i}: {da} ps, then {db} ps");
    }
    // split in two parts: the same flow table
    let c = served("query", "400us", 2);
    assert_eq!(c.rec.flows.end_ps, fb.end_ps);
}

#[test]
fn server_time_is_checked() {
    let run = |w: &str| {
        Sim::from_json(&format!(
            r#"{{"run": {{"duration": "1ms"}}, "topology": {{"kind": "single_switch", "hosts": 4}}, "scheme": {{"preset": "dctcp"}}, "workload": [{w}]}}"#
        ))
        .err()
        .map(|e| (e.field, e.msg))
    };
    let (f, m) = run(r#"{"kind": "retrieval", "rate": 100, "sizes": ["2KB"], "server_time": "7200s"}"#).expect("refused");
    assert_eq!(f, "workload[0].server_time");
    assert!(m.contains("at most 3600 s"), "{m}");
    let (f, m) = run(r#"{"kind": "cdf", "points": [[1000, 0], [2000, 1]], "load": 0.5, "server_time": "1ms"}"#).expect("refused");
    assert_eq!(f, "workload[0].server_time");
    assert!(m.contains("only applies with client"), "{m}");
    assert!(run(r#"{"kind": "cdf", "points": [[1000, 0], [2000, 1]], "load": 0.5, "client": 0, "server_time": "1ms"}"#).is_none());
    assert!(run(r#"{"kind": "incast", "server_time": "10us"}"#).is_none());
}
