//! What reaches the application outside the window, against what the server itself counted:
//! a server that closes each connection after one response leaves the rest of a pipeline
//! unanswered, in the warmup as in the window; those requests never reached it.

use crate::common;
use common::*;

#[test]
fn warmup_requests_the_server_refused_are_not_counted_as_received() {
    let dir = temp_dir("outside-refused");
    let port = free_port();
    let toml = config(port, "--close-after 1", "/plaintext", "pipeline = 8");
    let (out, json) = run(&dir, &toml, &["-i", "1"]);
    let t = text(&out);
    let it = &iterations(json.as_ref().unwrap_or_else(|| panic!("no result:\n{t}")))[0];
    let served = server_stats(it)["by_path"]["/plaintext"]
        .as_f64()
        .expect("served /plaintext");
    let answered = m(it, "load.requests").unwrap();
    let load = &it["load"];
    let outside = load["outside_window"]["requests"].as_f64().unwrap();
    let in_flight = load["in_flight_at_end"].as_f64().unwrap();
    // The server answered the window's requests, the warmup's it received and rigor's first
    // request; the window's requests in flight at its end may or may not have reached it.
    let warmup = outside - in_flight;
    eprintln!("served {served}, window {answered}, outside {outside}, in flight {in_flight}");
    assert!(warmup > 0.0, "no warmup request counted\n{t}");
    assert!(
        warmup <= served - answered - 1.0,
        "{warmup} warmup requests counted, but the server answered {served} of which {answered} \
         in the window and 1 first request\n{t}"
    );
}
