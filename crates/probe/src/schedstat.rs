//! How long threads ran and how long they waited in a run queue for a CPU, from the scheduler's
//! per-thread accounts (/proc/PID/task/TID/schedstat: run ns, wait ns, timeslices).
//!
//! Waiting per unit of CPU is a figure with no ceiling: on a machine that is already fully busy
//! a share of the CPU cannot rise past 100%, but a process starved by higher-priority neighbours
//! waits 100 times as long as it runs where it used to wait about as long. Threads are read one
//! by one and remembered, so one that exits during the span still counts with its last reading.

use std::collections::HashMap;

/// CPU time and run-queue delay of a set of threads, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedTimes {
    /// Time on a CPU.
    pub run_ns: u64,
    /// Time runnable but waiting for a CPU.
    pub wait_ns: u64,
}

impl SchedTimes {
    /// Time waited for a CPU per unit of CPU time got; `None` without any CPU time.
    pub fn wait_per_cpu(&self) -> Option<f64> {
        (self.run_ns > 0).then(|| self.wait_ns as f64 / self.run_ns as f64)
    }

    /// Share of the time the threads wanted a CPU that they had one, in %.
    pub fn got_pct(&self) -> Option<f64> {
        let wanted = self.run_ns + self.wait_ns;
        (wanted > 0).then(|| self.run_ns as f64 / wanted as f64 * 100.0)
    }

    fn add(self, o: SchedTimes) -> SchedTimes {
        SchedTimes {
            run_ns: self.run_ns + o.run_ns,
            wait_ns: self.wait_ns + o.wait_ns,
        }
    }
}

/// The three fields of a schedstat file; `None` when malformed.
fn parse(text: &str) -> Option<SchedTimes> {
    let mut f = text.split_whitespace();
    Some(SchedTimes {
        run_ns: f.next()?.parse().ok()?,
        wait_ns: f.next()?.parse().ok()?,
    })
}

/// Each live thread of `pid` with its accounts (none when it is gone or the kernel keeps none),
/// only those whose name starts with `named` when given.
fn threads_of(pid: i32, named: Option<&str>) -> Vec<(i32, SchedTimes)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|t| {
            let t = t.ok()?;
            let tid = t.file_name().to_str()?.parse().ok()?;
            if let Some(prefix) = named {
                let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
                if !comm.starts_with(prefix) {
                    return None;
                }
            }
            let text = std::fs::read_to_string(t.path().join("schedstat")).ok()?;
            Some((tid, parse(&text)?))
        })
        .collect()
}

/// The threads of a set of processes watched over a span: the first reading of each thread
/// and its latest, so threads born during the span count whole and threads that exited count
/// up to their last reading.
#[derive(Debug, Clone, Default)]
pub struct SchedWatch {
    first: HashMap<i32, SchedTimes>,
    last: HashMap<i32, SchedTimes>,
    /// Whether the span's opening reading was taken (threads first seen later were born in it).
    opened: bool,
}

impl SchedWatch {
    /// Reads every thread of `pids` now; the first call opens the span.
    pub fn read(&mut self, pids: &[i32]) {
        let readings = pids.iter().flat_map(|&p| threads_of(p, None));
        self.record(readings);
    }

    /// Reads the threads of `pid` whose name starts with `prefix` now (one role's threads
    /// in a process that has others).
    pub fn read_named(&mut self, pid: i32, prefix: &str) {
        self.record(threads_of(pid, Some(prefix)).into_iter());
    }

    fn record(&mut self, readings: impl Iterator<Item = (i32, SchedTimes)>) {
        for (tid, t) in readings {
            if !self.opened {
                self.first.insert(tid, t);
            }
            self.last.insert(tid, t);
        }
        self.opened = true;
    }

    /// How many threads were read over the span.
    pub fn threads(&self) -> usize {
        self.last.len()
    }

    /// What the threads did between the first reading and each one's last; `None` when no
    /// thread was ever read (no process, or a kernel without schedstat).
    pub fn span(&self) -> Option<SchedTimes> {
        if self.last.is_empty() {
            return None;
        }
        let zero = SchedTimes::default();
        Some(self.last.iter().fold(zero, |sum, (tid, l)| {
            let f = self.first.get(tid).copied().unwrap_or(zero);
            sum.add(SchedTimes {
                run_ns: l.run_ns.saturating_sub(f.run_ns),
                wait_ns: l.wait_ns.saturating_sub(f.wait_ns),
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(run_ns: u64, wait_ns: u64) -> SchedTimes {
        SchedTimes { run_ns, wait_ns }
    }

    #[test]
    fn threads_born_and_gone_in_the_span_count() {
        let mut w = SchedWatch::default();
        assert_eq!(w.span(), None);
        w.record([(1, t(100, 10)), (2, t(50, 50))].into_iter());
        // Thread 2 exits after this reading; thread 3 is born.
        w.record([(1, t(150, 20)), (2, t(80, 90)), (3, t(5, 400))].into_iter());
        w.record([(1, t(200, 30)), (3, t(10, 900))].into_iter());
        // 1: 100 run, 20 wait; 2: 30, 40 (its last reading); 3: 10, 900 (all of its life).
        assert_eq!(w.span(), Some(t(140, 960)));
        let s = w.span().unwrap();
        assert!((s.wait_per_cpu().unwrap() - 960.0 / 140.0).abs() < 1e-12);
        assert_eq!(t(0, 5).wait_per_cpu(), None);
        assert_eq!(t(25, 75).got_pct(), Some(25.0));
    }

    #[test]
    fn schedstat_lines_parse_and_this_process_has_accounts() {
        assert_eq!(
            parse("187675718 11999601 404\n"),
            Some(t(187675718, 11999601))
        );
        assert_eq!(parse("x 1 2"), None);
        assert_eq!(parse(""), None);
        let mut w = SchedWatch::default();
        let me = std::process::id() as i32;
        w.read(&[me]);
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(30) {
            std::hint::black_box(0u64);
        }
        w.read(&[me]);
        assert!(w.span().expect("schedstat of this process").run_ns > 0);
        let mut none = SchedWatch::default();
        none.read_named(me, "no thread is called this");
        assert_eq!(none.span(), None);
    }
}
