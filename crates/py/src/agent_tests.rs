//! Unit tests of `agent` (a file of their own to keep the module short).
use super::*;

#[test]
fn an_agent_takes_the_flows_it_requests_or_sends_in_start_order() {
    let plan = json!({
        "hosts": [{"index": 0, "ip": "10.77.0.1"}, {"index": 1, "ip": "10.77.0.2"}, {"index": 2, "ip": "10.77.0.3"}],
        "flows": [
            // a retrieval's data flows from the responder (src) to the requester (dst)
            {"id": 7, "src": 1, "dst": 0, "size": 2048, "priority": 0, "start": 0.5, "retrieval": true},
            {"id": 8, "src": 0, "dst": 2, "size": 9000, "priority": 3, "start": 0.1, "retrieval": false},
            {"id": 9, "src": 0, "dst": 1, "size": 100, "priority": 0, "start": 0.2, "retrieval": true},
        ],
        "warm_ns": 1_000_000_000u64, "go_file": "/tmp/go", "stop_file": "/tmp/stop", "cc": "reno"
    });
    let p = parse_plan(&plan, 0).unwrap();
    let got: Vec<(u64, u32, bool)> = p.flows.iter().map(|f| (f.id, f.peer, f.retrieval)).collect();
    // host 0 sends flow 8 (to 2) and requests flow 7 (from 1); flow 9 it serves, as host 1's request
    assert_eq!(got, vec![(8, 2, false), (7, 1, true)]);
    assert_eq!(p.ips[&2].s_addr, u32::from_ne_bytes([10, 77, 0, 3]));
    assert_eq!((p.warm_ns, p.cc.as_str()), (1_000_000_000, "reno"));
    let mut bad = plan.clone();
    bad["flows"][0]["size"] = json!("big");
    assert_eq!(parse_plan(&bad, 0).err().unwrap(), "plan: flows[].size");
}

#[test]
fn two_agents_on_loopback_replay_a_large_retrieval_and_a_one_way_flow() {
    // hosts 127.0.0.1 and 127.0.0.2 (both loopback): host 0 requests 1 MB from host 1 and sends it 300 KB
    // one-way; the whole exchange (warm connections, the go file, timerfd starts, request, response,
    // header, payload, acknowledgement, the records) on real sockets. (On loopback the response lands at
    // once, so this does not exercise lowering SO_RCVLOWAT for the tail of a response above its cap.)
    let dir = std::env::temp_dir().join(format!("dsl-agent-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (go, stop) = (dir.join("go"), dir.join("stop"));
    let plan = json!({
        "hosts": [{"index": 0, "ip": "127.0.0.1"}, {"index": 1, "ip": "127.0.0.2"}],
        "flows": [
            {"id": 1, "src": 1, "dst": 0, "size": 1_048_576u64, "priority": 2, "start": 0.0, "retrieval": true},
            {"id": 2, "src": 0, "dst": 1, "size": 300_000u64, "priority": 0, "start": 0.01, "retrieval": false},
        ],
        "warm_ns": 100_000_000u64, "go_file": go.to_str().unwrap(), "stop_file": stop.to_str().unwrap(), "cc": "reno"
    });
    let plan_path = dir.join("plan.json");
    std::fs::write(&plan_path, plan.to_string()).unwrap();
    let agents: Vec<_> = (0..2u32)
        .map(|h| {
            let (p, out) = (plan_path.clone(), dir.join(format!("agent{h}.jsonl")));
            std::thread::spawn(move || run(&p, h, &out))
        })
        .collect();
    while !(0..2).all(|h| dir.join(format!("agent{h}.jsonl.ready")).exists()) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let t0 = mono_ns() + 200_000_000;
    // written whole and then renamed into place, as detailsim.live does: an agent polling for the go file
    // must never read it half written (it did, now and then, on a loaded machine)
    let tmp = dir.join("go.tmp");
    std::fs::write(&tmp, json!({"t0_ns": t0, "end_ns": t0 + 10_000_000_000u64}).to_string()).unwrap();
    std::fs::rename(&tmp, &go).unwrap();
    let give_up = mono_ns() + 10_000_000_000;
    while !dir.join("agent0.jsonl.done").exists() && mono_ns() < give_up {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::fs::write(&stop, b"stop").unwrap();
    for a in agents {
        a.join().unwrap().unwrap();
    }
    let recs = |h: u32| -> Vec<Value> {
        std::fs::read_to_string(dir.join(format!("agent{h}.jsonl"))).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let (r0, r1) = (recs(0), recs(1));
    std::fs::remove_dir_all(&dir).unwrap();
    let of = |rs: &[Value], id: u64, k: &str| rs.iter().find(|r| r["id"] == id && r.get(k).is_some()).cloned();
    // the requester timed both of its flows, the responder its answer, the one-way receiver its last byte
    let big = of(&r0, 1, "end_ns").expect("the 1 MB response completed");
    assert!(big["end_ns"].as_u64().unwrap() >= big["start_ns"].as_u64().unwrap() && big["start_ns"].as_u64().unwrap() >= t0);
    assert!(big["end_kernel_ns"].as_u64().unwrap() <= big["end_ns"].as_u64().unwrap());
    assert!(of(&r0, 2, "end_ns").is_some(), "the one-way flow was acknowledged: {r0:?}");
    assert!(of(&r1, 1, "respond_delay_ns").is_some() && of(&r1, 2, "rx_end_ns").is_some(), "{r1:?}");
    assert!(r0.iter().chain(&r1).all(|r| r.get("error").is_none() && r.get("warm_error").is_none()), "{r0:?} {r1:?}");
}
