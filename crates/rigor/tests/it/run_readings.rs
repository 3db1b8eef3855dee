//! `rigor run`'s readings of the application against what the test knows: what the app does on
//! shutdown stays out of the window, a readiness probe that warms the heap is named, and page
//! cache carried between iterations is caught (and dropped with --drop-caches).

use crate::common;
use common::*;

#[test]
fn what_the_app_does_on_shutdown_is_not_in_the_window() {
    let dir = temp_dir("shutdown-growth");
    let port = free_port();
    // On SIGTERM the server's workers exit, then it grows by 300 MiB and lingers.
    let toml = config(
        port,
        "--shutdown-hold-mib 300 --shutdown-linger-ms 300",
        "/plaintext",
        "",
    );
    // Frequent samples keep the sampler busy, so a window end read late would be caught.
    let (_, json) = run_exit(&dir, &toml, &["-i", "3", "--sample-interval", "20ms"], 0);
    for it in iterations(json.as_ref().unwrap()) {
        let (start, end) = (m(it, "app.threads.start"), m(it, "app.threads.end"));
        assert!(start.unwrap() >= 2.0, "threads at start {start:?}");
        assert_eq!(end, start, "threads at the window's end");
        let rss = m(it, "app.rss").unwrap();
        assert!(
            rss < 100.0,
            "app.rss {rss} MiB includes the shutdown's 300 MiB"
        );
        assert!(
            m(it, "app.ctx_switches.involuntary").is_some(),
            "context switches across the window"
        );
        // The shutdown did grow the app (by up to 300 MiB), and the lifetime figure saw it.
        let lifetime = m(it, "app.rss.lifetime").unwrap();
        assert!(lifetime > rss + 100.0, "app.rss.lifetime {lifetime}");
    }
}

#[test]
fn a_readiness_probe_that_warms_the_heap_is_named() {
    // Ready on /json, which makes the server hold 150 MiB; the load is on /plaintext.
    let dir = temp_dir("ready-warms");
    let port = free_port();
    let toml = config(port, "--hold-mib 150 --hold-after /json", "/plaintext", "").replace(
        &format!("http://127.0.0.1:{port}/health"),
        &format!("http://127.0.0.1:{port}/json"),
    );
    let (_, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    let it = &iterations(json.as_ref().unwrap())[0];
    let msg = message(&it["warnings"], "readiness_memory");
    eprintln!("{msg}");
    assert!(msg.contains("/json"), "{msg}");
    assert!(msg.contains("/plaintext"), "{msg}");
    assert!(m(it, "app.rss").unwrap() >= 150.0);

    // The same growth caused by the load's own URL is the load's: no warning.
    let dir = temp_dir("ready-cheap");
    let port = free_port();
    let toml = config(port, "--hold-mib 150 --hold-after /json", "/json", "");
    let (_, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    let it = &iterations(json.as_ref().unwrap())[0];
    assert!(!kinds(&it["warnings"]).contains(&"readiness_memory".to_string()));
    assert!(m(it, "app.rss").unwrap() >= 150.0);
}

/// A TCP forwarder from `front` to `back` on loopback: accepts at once, closes a connection it
/// cannot pass on (as `socat TCP-LISTEN:…,fork TCP:…` does).
const FORWARDER: &str = r#"
import socket, sys, threading
front, back = int(sys.argv[1]), int(sys.argv[2])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", front))
ls.listen(128)
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
def serve(c):
    try:
        s = socket.create_connection(("127.0.0.1", back))
    except OSError:
        c.close()
        return
    threading.Thread(target=pipe, args=(c, s), daemon=True).start()
    pipe(s, c)
    c.close()
    s.close()
while True:
    c, _ = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"#;

#[test]
fn a_front_that_accepts_before_the_server_starts_is_not_the_probes_growth() {
    // The app's command starts the real server late (it takes 150 MiB, then waits 300 ms
    // before it listens) behind a forwarder that accepts at once: the start-up is not the
    // readiness probe's doing. (The memory is read before each poll until the server itself
    // first answers, not once before the first poll the front accepted.)
    let dir = temp_dir("ready-front");
    let script = dir.join("forward.py");
    std::fs::write(&script, FORWARDER).unwrap();
    let run = |server_flags: &str| {
        let (port, back) = (free_port(), free_port());
        let command = format!(
            "(sleep 0.5; exec {} --port {back} --threads 1 {server_flags}) & exec python3 {} {port} {back}",
            hello_server().display(),
            script.display()
        );
        let toml = with_command(&config(port, "", "/plaintext", ""), port, &command)
            .replace(
                &format!("http://127.0.0.1:{port}/health"),
                &format!("http://127.0.0.1:{port}/json"),
            )
            .replace("connections = 8", "connections = 2");
        let (_, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
        let it = iterations(json.as_ref().unwrap())[0].clone();
        assert!(m(&it, "app.rss").unwrap() >= 150.0, "the server's 150 MiB");
        it
    };
    let it = run("--hold-mib 150 --listen-delay-ms 300");
    assert!(
        !kinds(&it["warnings"]).contains(&"readiness_memory".to_string()),
        "{}",
        it["warnings"]
    );
    // Behind the same front, the probe that does warm the heap is still named.
    let it = run("--hold-mib 150 --hold-after /json");
    let msg = message(&it["warnings"], "readiness_memory");
    assert!(msg.contains("/json"), "{msg}");
}

#[test]
#[ignore = "needs root"]
fn page_cache_carried_between_iterations_is_caught_and_drop_caches_ends_it() {
    // Cgroups and dropping caches need root.
    require_root();
    let dir = temp_dir("carried-cache");
    let file = dir.join("data.bin");
    cold_file(&file, 64);
    let port = free_port();
    // The app reads a file at start (as a server loads its assets) without evicting it.
    let command = format!(
        "cat {} > /dev/null; exec {} --port {port} --threads 1",
        file.display(),
        hello_server().display()
    );
    let toml = with_command(&config(port, "", "/plaintext", ""), port, &command);

    let (_, json) = run_exit(&dir, &toml, &["-i", "3"], 0);
    let json = json.unwrap();
    let its = iterations(&json);
    if its.iter().any(|i| m(i, "app.cgroup.cache").is_none()) {
        eprintln!("no cgroup for the application: {}", its[0]["warnings"]);
        skip("needs a cgroup");
        return;
    }
    let caches: Vec<f64> = its
        .iter()
        .map(|i| m(i, "app.cgroup.cache").unwrap())
        .collect();
    eprintln!("app.cgroup.cache by iteration: {caches:?}");
    // The first iteration read the file cold; the later ones found it cached.
    assert!(caches[0] >= 48.0, "{caches:?}");
    assert!(caches[1..].iter().all(|c| *c < 16.0), "{caches:?}");
    let carried = message(&json["rows"][0]["warnings"], "page_cache_carried");
    assert!(
        carried.contains("page cache differs by iteration (")
            && carried.contains("in iteration 1,"),
        "{carried}"
    );

    let (_, json) = run_exit(&dir, &toml, &["-i", "2", "--drop-caches"], 0);
    let json = json.unwrap();
    let its = iterations(&json);
    if its[0]["caches_dropped"] == false {
        eprintln!("{}", its[0]["warnings"]);
        skip("needs drop_caches");
        return;
    }
    let caches: Vec<f64> = its
        .iter()
        .map(|i| m(i, "app.cgroup.cache").unwrap())
        .collect();
    eprintln!("with --drop-caches: {caches:?}");
    for it in its {
        assert_eq!(it["caches_dropped"], true);
    }
    assert!(caches.iter().all(|c| *c >= 48.0), "{caches:?}");
    assert!(!kinds(&json["rows"][0]["warnings"]).contains(&"page_cache_carried".to_string()));
}

#[test]
fn cpu_of_children_shorter_than_a_sample_is_counted() {
    let dir = temp_dir("short-children");
    let port = free_port();
    let reference = dir.join("reference.txt");
    // A shell that keeps forking busy subshells of a few ms each (far shorter than the 250 ms
    // sampling interval) beside a lightly loaded server; on SIGTERM it writes the kernel's
    // account of its reaped children (`times`) and its lifetime, the test's reference.
    let bin = hello_server();
    let command = format!(
        "start=$(date +%s.%N); \
         trap 'end=$(date +%s.%N); times > {r}.t; echo $start $end >> {r}.t; mv {r}.t {r}; kill $srv; exit 0' TERM; \
         {bin} --port {port} --threads 1 & srv=$!; \
         while :; do (i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done); done",
        r = reference.display(),
        bin = bin.display(),
    );
    let toml = with_command(&config(port, "", "/plaintext", "rate = 50"), port, &command)
        .replace("duration = \"1s\"", "duration = \"3s\"");
    let (_, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    let it = &iterations(json.as_ref().unwrap())[0];
    let text = std::fs::read_to_string(&reference).expect("the shell's reference");
    let lines: Vec<&str> = text.lines().collect();
    // `times`: the shell's own user/system, then its reaped children's; then start and end.
    let secs = |f: &str| -> f64 {
        let (m, s) = f.trim_end_matches('s').split_once('m').unwrap();
        m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap()
    };
    let cpu: f64 = lines[..2]
        .iter()
        .flat_map(|l| l.split_whitespace())
        .map(secs)
        .sum();
    let (start, end) = lines[2].split_once(' ').unwrap();
    let life = end.parse::<f64>().unwrap() - start.parse::<f64>().unwrap();
    let truth = cpu / life * 100.0;
    let cores: f64 = m(it, "app.cpu.avg").unwrap() * online_cpus();
    eprintln!("app.cpu.avg in cores {cores:.1}%, the shell's own account {truth:.1}% of a core");
    assert!(truth > 5.0, "the children got only {truth:.1}% of a core");
    // The reference is the shell's whole life and the figure the window inside it; on a busy
    // machine the share the children get varies over time, hence the wide band. Missing the
    // children reads a few percent at most.
    assert!(
        (0.5 * truth..=1.5 * truth + 5.0).contains(&cores),
        "app.cpu.avg {cores:.1}% of a core vs {truth:.1}%"
    );
    let max = m(it, "app.cores").unwrap();
    assert!(
        max >= cores - 1e-6,
        "app.cores {max} below the mean {cores}"
    );
    // One child runs at a time (the shell waits for it) beside a server at 50 requests/s:
    // about one core at most, with no clock tick of error to lift it above.
    assert!(max <= 115.0, "app.cores {max}");
}

/// The CPU count that 100% of app.cpu means for an unpinned app: the online CPUs.
fn online_cpus() -> f64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) as f64 }
}

#[test]
fn memory_a_pre_fork_server_shares_with_its_workers_is_owned_once() {
    // The parent touches 96 MiB, forks two workers that keep it shared copy-on-write, and
    // serves HTTP itself.
    let dir = temp_dir("pre-fork");
    let port = free_port();
    let script = dir.join("prefork.py");
    std::fs::write(
        &script,
        format!(
            r#"import os, time
from http.server import HTTPServer, BaseHTTPRequestHandler
heap = bytearray(96 << 20)
for i in range(0, len(heap), 4096):
    heap[i] = 1
for _ in range(2):
    if os.fork() == 0:
        while True:
            time.sleep(60)
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a):
        pass
HTTPServer(("127.0.0.1", {port}), H).serve_forever()
"#
        ),
    )
    .unwrap();
    // The script answers every path; its interpreters start slower than the testbed.
    let command = format!("python3 {}", script.display());
    let toml = with_command(&config(port, "", "/", "rate = 50"), port, &command)
        .replace("connections = 8", "connections = 1")
        .replace("timeout = \"10s\"", "timeout = \"20s\"");
    let (_, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    let it = &iterations(json.as_ref().unwrap())[0];
    let (owned, private, rss) = (
        m(it, "app.owned").expect("app.owned"),
        m(it, "app.private").unwrap(),
        m(it, "app.rss").unwrap(),
    );
    eprintln!("app.owned {owned:.1} MiB, app.private {private:.1} MiB, app.rss {rss:.1} MiB");
    // USS misses the shared heap, RSS counts it three times; owned counts it once, plus the
    // interpreters' own footprint (well under 16 MiB each).
    assert!(private < 60.0, "app.private {private}");
    assert!(rss > 3.0 * 96.0, "app.rss {rss}");
    assert!((96.0..96.0 + 48.0).contains(&owned), "app.owned {owned}");
    // The kernel's own count, where there is a cgroup: its anonymous memory holds the heap once.
    if let Some(anon) = m(it, "app.cgroup.anon") {
        eprintln!("app.cgroup.anon {anon:.1} MiB");
        assert!(
            (96.0..96.0 + 48.0).contains(&anon),
            "app.cgroup.anon {anon}"
        );
    }
}

#[test]
fn drop_caches_without_permission_is_said_and_recorded() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = temp_dir("drop-caches-denied");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let port = free_port();
    std::fs::write(dir.join("rigor.toml"), config(port, "", "/plaintext", "")).unwrap();
    let mut cmd = rigor_command(&dir, &[RUN, &["-i", "1", "--drop-caches"]].concat());
    if is_root() {
        // Root may drop caches: run as nobody to meet the case a normal user meets.
        cmd.uid(65534).gid(65534);
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let json = result(&dir);
    let it = &iterations(&json)[0];
    assert_eq!(it["caches_dropped"], false, "{it}");
    let msg = message(&it["warnings"], "drop_caches");
    assert!(msg.contains("not permitted"), "{msg}");
    assert!(text(&out).contains("drop_caches"), "{}", text(&out));
}
