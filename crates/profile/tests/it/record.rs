//! Real recordings of a C program: its own functions come back in the folded stacks, from its
//! cgroup (a thread started after the recording began included) and from its PID.

use rigor_profile::{fold_perf_data, CallGraph, PerfCgroup, Recorder, Settings, Target};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;
use testkit::{is_root, skip};

/// A program whose main thread waits, then starts a thread that spins in `spinner`.
const PROGRAM: &str = r#"
#include <pthread.h>
#include <unistd.h>
volatile unsigned long sink;
__attribute__((noinline)) void *spinner(void *a) {
    for (unsigned long i = 0; i < 3000000000UL; i++) sink += i;
    return a;
}
int main(void) {
    usleep(300000);
    pthread_t t;
    pthread_create(&t, 0, spinner, 0);
    pthread_join(t, 0);
    return 0;
}
"#;

fn tools() -> bool {
    if rigor_profile::check("perf").is_err() {
        skip("needs perf (Debian: apt-get install linux-perf; as root or with kernel.perf_event_paranoid=1)");
        return false;
    }
    if Command::new("cc").arg("--version").output().is_err() {
        skip("needs cc");
        return false;
    }
    true
}

fn build(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let src = dir.join("spin.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let bin = dir.join("spin");
    let st = Command::new("cc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-pthread", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    bin
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rigor-profile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn settings() -> Settings {
    Settings {
        perf: "perf".into(),
        hz: 99,
        call_graph: CallGraph::FramePointer,
    }
}

/// Records `target` for a second and stops it, and kills `child`; returns the folded text.
fn record(target: Target, data: &Path, mut child: Child) -> String {
    let mut rec = Recorder::start(&settings(), &target, data, false).unwrap();
    rec.enable().unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    let file = rec.stop();
    let _ = child.kill();
    let _ = child.wait();
    let folded = fold_perf_data("perf", &file.unwrap()).unwrap();
    folded.to_text()
}

#[test]
fn a_cgroup_recording_sees_a_thread_started_after_it_began() {
    if !tools() {
        return;
    }
    if !is_root() {
        skip("needs root (perf -a -G samples every CPU)");
        return;
    }
    let d = dir("cgroup");
    let bin = build(&d);
    let cg = PerfCgroup::create(&format!("rigor-profile-test-{}", std::process::id())).unwrap();
    let child = Command::new(&bin).spawn().unwrap();
    cg.add(child.id() as i32).unwrap();
    let text = record(
        Target::Cgroup(cg.perf_name().to_string()),
        &d.join("p.data"),
        child,
    );
    cg.remove().unwrap();
    assert!(text.contains(";spinner "), "{text}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_pid_recording_names_the_programs_functions() {
    if !tools() {
        return;
    }
    let d = dir("pids");
    let bin = build(&d);
    let child = Command::new(&bin).spawn().unwrap();
    // The thread exists before perf attaches: -p sees only threads that already run.
    std::thread::sleep(Duration::from_millis(400));
    let text = record(
        Target::Pids(vec![child.id() as i32]),
        &d.join("p.data"),
        child,
    );
    assert!(text.lines().any(|l| l.contains("spinner ")), "{text}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_failing_perf_is_an_error_with_what_it_said() {
    if !tools() {
        return;
    }
    let d = dir("fails");
    std::fs::create_dir_all(&d).unwrap();
    let e = Recorder::start(
        &settings(),
        &Target::Pids(vec![999_999_999]),
        &d.join("p.data"),
        true,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("perf record"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}
