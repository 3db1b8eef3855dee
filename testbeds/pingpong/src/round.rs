//! One round: `clients` clients, each with its own echo thread, exchanging messages over
//! channels until every client has had all its pings answered.

use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::thread;
use std::time::{Duration, Instant};

/// What one round measured.
pub struct Round {
    pub clients: usize,
    /// Messages exchanged: every ping and every pong.
    pub total: u64,
    pub elapsed: Duration,
    /// Threads of this process before the clients started, and while they all ran.
    pub start_threads: usize,
    pub end_threads: usize,
}

impl Round {
    /// Messages per second over the whole round.
    pub fn msgs_per_sec(&self) -> u64 {
        (self.total as f64 / self.elapsed.as_secs_f64()).round() as u64
    }

    pub fn total_ms(&self) -> f64 {
        self.elapsed.as_secs_f64() * 1e3
    }
}

/// Runs one round; panics (the run fails) if an answer is ever wrong.
pub fn run(clients: usize, messages: u64, window: u64, work: u32, delay_ns: u64) -> Round {
    let start_threads = threads();
    let (ready_tx, ready_rx) = channel::<()>();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let go = std::sync::Arc::new(std::sync::Mutex::new(go_rx));
    let mut handles = Vec::new();
    for _ in 0..clients {
        let (to_echo, echo_in) = channel::<u64>();
        let (to_client, client_in) = channel::<u64>();
        handles.push(thread::spawn(move || {
            echo(echo_in, to_client, work, delay_ns)
        }));
        let ready = ready_tx.clone();
        let go = go.clone();
        handles.push(thread::spawn(move || {
            ready.send(()).unwrap();
            // Every client starts at once: each waits for its own go.
            go.lock().unwrap().recv().unwrap();
            client(to_echo, client_in, messages, window, work);
        }));
    }
    for _ in 0..clients {
        ready_rx.recv().unwrap();
    }
    let end_threads = threads();
    let started = Instant::now();
    for _ in 0..clients {
        go_tx.send(()).unwrap();
    }
    for h in handles {
        h.join().expect("a pingpong thread failed");
    }
    Round {
        clients,
        total: 2 * messages * clients as u64,
        elapsed: started.elapsed(),
        start_threads,
        end_threads,
    }
}

/// What the echo answers to `ping`: `work` rounds of mixing, real work the client checks (and
/// what makes a message cost the same in every run, so a slowdown is a fraction of it).
fn answer(ping: u64, work: u32) -> u64 {
    let mut x = ping ^ 0x9e37_79b9_7f4a_7c15;
    for _ in 0..work {
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    }
    x
}

/// Answers every ping until the client hangs up, busy-waiting `delay_ns` on each.
fn echo(pings: Receiver<u64>, pongs: Sender<u64>, work: u32, delay_ns: u64) {
    while let Some(ping) = receive(&pings) {
        if delay_ns > 0 {
            let until = Instant::now() + Duration::from_nanos(delay_ns);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        }
        if pongs.send(answer(ping, work)).is_err() {
            return;
        }
    }
}

/// Sends `messages` pings, at most `window` unanswered, checking each answer.
fn client(pings: Sender<u64>, pongs: Receiver<u64>, messages: u64, window: u64, work: u32) {
    let mut sent = 0;
    let mut received = 0;
    while sent < messages.min(window) {
        pings.send(sent).unwrap();
        sent += 1;
    }
    while received < messages {
        let pong = receive(&pongs).expect("the echo hung up");
        // The client checks one answer in 64: checking them all would double the work.
        if received % 64 == 0 {
            assert_eq!(
                pong,
                answer(received, work),
                "wrong answer to ping {received}"
            );
        }
        received += 1;
        if sent < messages {
            pings.send(sent).unwrap();
            sent += 1;
        }
    }
}

/// The next message, `None` once the sender hung up. It yields the CPU a few times before
/// sleeping: a message is usually on its way, and waking a sleeping thread per message would
/// make the figures depend on where the scheduler put the two threads more than on the work.
fn receive(from: &Receiver<u64>) -> Option<u64> {
    for _ in 0..YIELDS {
        match from.try_recv() {
            Ok(v) => return Some(v),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => thread::yield_now(),
        }
    }
    from.recv().ok()
}

/// How often a receiver yields before it sleeps.
const YIELDS: usize = 50;

/// This process's thread count, from /proc (0 where there is none).
fn threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}
