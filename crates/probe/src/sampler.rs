//! A background thread that samples the app's tree at a fixed interval, so figures cover the
//! whole run and the measured window can be cut out of it afterwards.

use crate::cgroup::Cgroup;
use crate::procfs::{clock_ticks_per_second, online_cpus};
use crate::sample::{sample_tree, ProcSample};
use std::sync::mpsc::{channel, sync_channel, RecvTimeoutError, Sender, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Phase boundaries the orchestrator announces while the sampler runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// The measured window begins (warmup is over).
    WindowStart,
    /// The measured window ends.
    WindowEnd,
}

enum Msg {
    /// A mark, and where to say that its sample has been taken.
    Mark(Mark, Instant, SyncSender<()>),
    Stop,
}

/// How long [`Sampler::mark`] waits for its sample: far more than one reading of a large
/// tree takes, yet bounded so a stuck /proc cannot hang the run.
const MARK_TIMEOUT: Duration = Duration::from_secs(5);

/// One announced phase boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkRecord {
    pub mark: Mark,
    /// When it was announced.
    pub at: Instant,
    /// Index of the sample taken in answer to it; when that sample could not be taken (the
    /// app had exited), the index the next sample would get.
    pub index: usize,
    /// Whether the sample in answer was taken.
    pub sampled: bool,
}

/// Handle on the sampling thread; `stop` it to get the samples back.
pub struct Sampler {
    tx: Sender<Msg>,
    handle: Option<JoinHandle<Samples>>,
}

/// Everything a sampler collected, plus what is needed to turn it into figures.
#[derive(Debug, Clone)]
pub struct Samples {
    pub(crate) samples: Vec<ProcSample>,
    pub(crate) marks: Vec<MarkRecord>,
    pub(crate) clock_ticks: u64,
    pub(crate) cpus: usize,
}

impl Sampler {
    /// Samples `root`'s tree every `interval`, normalising CPU by the online CPUs. Fails when
    /// its thread cannot be started (a process or memory limit).
    pub fn start(
        root: i32,
        cgroup: Option<Cgroup>,
        interval: Duration,
    ) -> std::io::Result<Sampler> {
        Self::start_with(root, cgroup, interval, online_cpus())
    }

    /// Like [`Sampler::start`], with the CPU count that "100% CPU" means: pass the size of the
    /// app's cpuset when it is pinned, so a saturated pinned app reads 100%, not 100/N %.
    pub fn start_with(
        root: i32,
        cgroup: Option<Cgroup>,
        interval: Duration,
        cpus_for_normalising: usize,
    ) -> std::io::Result<Sampler> {
        let (tx, rx) = channel::<Msg>();
        let interval = interval.max(Duration::from_millis(1));
        let handle = std::thread::Builder::new()
            .name(format!("rigor-sampler-{root}"))
            .spawn(move || {
                let mut out = Samples {
                    samples: Vec::new(),
                    marks: Vec::new(),
                    clock_ticks: clock_ticks_per_second(),
                    cpus: cpus_for_normalising.max(1),
                };
                // The first sample is discarded: right after spawn it may still see the
                // launcher (before exec) and it has no predecessor to compute CPU from.
                let _ = sample_tree(root, cgroup.as_ref());
                let mut next = Instant::now() + interval;
                loop {
                    let wait = next.saturating_duration_since(Instant::now());
                    match rx.recv_timeout(wait) {
                        Ok(Msg::Mark(mark, at, done)) => {
                            let index = out.samples.len();
                            let sample = sample_tree(root, cgroup.as_ref());
                            let sampled = sample.is_some();
                            out.samples.extend(sample);
                            out.marks.push(MarkRecord {
                                mark,
                                at,
                                index,
                                sampled,
                            });
                            let _ = done.send(());
                        }
                        Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => break,
                        Err(RecvTimeoutError::Timeout) => {
                            if let Some(s) = sample_tree(root, cgroup.as_ref()) {
                                out.samples.push(s);
                            }
                            next += interval;
                            // After a stall (suspended machine, slow /proc), don't burst to catch up.
                            let now = Instant::now();
                            if next < now {
                                next = now + interval;
                            }
                        }
                    }
                }
                out
            })?;
        Ok(Sampler {
            tx,
            handle: Some(handle),
        })
    }

    /// Records a phase boundary and returns once the sampler has taken the sample that
    /// answers it, so the window's edges are exact and whatever the caller does next (such as
    /// telling the app to stop) cannot leak into the window's last reading.
    pub fn mark(&self, label: Mark) {
        let (done_tx, done_rx) = sync_channel(1);
        if self
            .tx
            .send(Msg::Mark(label, Instant::now(), done_tx))
            .is_ok()
        {
            let _ = done_rx.recv_timeout(MARK_TIMEOUT);
        }
    }

    /// Stops the thread and returns what it collected.
    pub fn stop(mut self) -> Samples {
        self.finish()
    }

    fn finish(&mut self) -> Samples {
        let _ = self.tx.send(Msg::Stop);
        match self.handle.take().map(|h| h.join()) {
            Some(Ok(samples)) => samples,
            _ => Samples {
                samples: Vec::new(),
                marks: Vec::new(),
                clock_ticks: clock_ticks_per_second(),
                cpus: 1,
            },
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        if self.handle.is_some() {
            let _ = self.finish();
        }
    }
}

impl Samples {
    /// Samples taken elsewhere (a test's own readings, a replay): `clock_ticks` per second of
    /// the tick-based accounts, `cpus` the count that "100%" CPU means.
    pub fn from_parts(
        samples: Vec<ProcSample>,
        marks: Vec<MarkRecord>,
        clock_ticks: u64,
        cpus: usize,
    ) -> Samples {
        Samples {
            samples,
            marks,
            clock_ticks,
            cpus: cpus.max(1),
        }
    }

    /// Every kept sample, in time order (the discarded first one is not here).
    pub fn samples(&self) -> &[ProcSample] {
        &self.samples
    }

    /// The samples of the measured window: from the one taken at `WindowStart` to the one taken
    /// at `WindowEnd` (or the last one if the end was never marked; the last one before it if
    /// the app was gone by then). Without a `WindowStart` mark, the whole run is the window.
    pub fn window(&self) -> &[ProcSample] {
        &self.samples[self.window_range()]
    }

    /// The marks announced, with when and at which sample index.
    pub fn marks(&self) -> &[MarkRecord] {
        &self.marks
    }

    /// The CPU count used as "100%" for `cpu_*` figures.
    pub fn cpus_for_normalising(&self) -> usize {
        self.cpus
    }

    /// The tree's CPU from sample `from` to sample `to` (indices into [`Samples::samples`]) on
    /// `app.cpu`'s scale (100 = all the CPUs it may use), by the same rule as the figures
    /// ([`crate::pair_cpu`]); `None` when either is missing or the span is too short for a rate.
    pub fn cpu_pct_between(&self, from: usize, to: usize) -> Option<f64> {
        let (a, b) = (self.samples.get(from)?, self.samples.get(to)?);
        let pct = crate::pair_cpu(a, b, self.clock_ticks)?.rate_pct()?;
        Some(pct / self.cpus.max(1) as f64)
    }

    /// Where the measured window's samples are in [`Samples::samples`] (see
    /// [`Samples::window`]).
    pub fn window_range(&self) -> std::ops::Range<usize> {
        let start = self.mark_record(Mark::WindowStart);
        let end = self.mark_record(Mark::WindowEnd);
        let n = self.samples.len();
        let from = start.map_or(0, |m| m.index).min(n);
        let to = end
            .map_or(n, |m| (m.index + usize::from(m.sampled)).min(n))
            .max(from);
        from..to
    }

    fn mark_record(&self, mark: Mark) -> Option<&MarkRecord> {
        // The last start and the first end after it, so a repeated mark doesn't widen the window.
        match mark {
            Mark::WindowStart => self
                .marks
                .iter()
                .rev()
                .find(|m| m.mark == Mark::WindowStart),
            Mark::WindowEnd => {
                let start = self.mark_record(Mark::WindowStart).map_or(0, |m| m.index);
                self.marks
                    .iter()
                    .find(|m| m.mark == Mark::WindowEnd && m.index >= start)
            }
        }
    }
}
