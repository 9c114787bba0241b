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
