//! CPU profiles of an iteration's application: perf started when the measured window opens
//! (at once for a command job, whose whole life is its window) and stopped when it closes; once
//! the application is gone, the samples are folded into a file beside the iteration's log,
//! while any `/tmp/perf-PID.map` a JIT wrote is still there for perf to read.

use crate::result::{Iteration, Warning, WarningKind};
use rigor_probe::Cgroup;
use rigor_profile::{PerfCgroup, Recorder, Settings, Target};
use std::path::{Path, PathBuf};

/// One iteration's profile, from the window's start to the folded file.
pub(super) struct Profiling {
    settings: Settings,
    data: PathBuf,
    folded: PathBuf,
    sequence: usize,
    cgroup: Option<PerfCgroup>,
    recorder: Option<Recorder>,
    recorded: Option<PathBuf>,
    problem: Option<String>,
}

/// Where an iteration's folded stacks are: beside its log.
pub fn folded_path(log: &Path) -> PathBuf {
    log.with_extension("folded")
}

impl Profiling {
    /// A profile for the iteration logging to `log`, when the run asks for one.
    pub fn of(ctx: &super::iteration_context::IterationContext) -> Option<Profiling> {
        let settings = ctx.cpu_profile.clone()?;
        Some(Profiling {
            settings,
            data: ctx.log.with_extension("perf.data"),
            folded: folded_path(&ctx.log),
            sequence: ctx.sequence,
            cgroup: None,
            recorder: None,
            recorded: None,
            problem: None,
        })
    }

    /// For a command job, as root: a cgroup and a perf already sampling it before the command
    /// starts (perf takes a while to start; the command's whole life is its window).
    pub fn before_launch(&mut self) {
        if !nix::unistd::geteuid().is_root() {
            return;
        }
        let Ok(cg) = PerfCgroup::create(&self.cgroup_name()) else {
            return;
        };
        let target = Target::Cgroup(cg.perf_name().to_string());
        match Recorder::start(&self.settings, &target, &self.data, true) {
            Ok(r) => {
                self.recorder = Some(spared(r));
                self.cgroup = Some(cg);
            }
            Err(e) => {
                self.problem = Some(e.to_string());
                let _ = cg.remove();
            }
        }
    }

    /// Once the application `pid` runs: its processes join the recording, by cgroup as root
    /// (threads and children started later included), else by their PIDs as they are now;
    /// sampled from now on when `enabled`, else from [`Profiling::enable`] on.
    pub fn attach(&mut self, pid: i32, app_cgroup: Option<&Cgroup>, enabled: bool) {
        if self.problem.is_some() {
            return;
        }
        if self.recorder.is_some() {
            if app_v2_dir(app_cgroup).is_none() {
                if let Some(cg) = &self.cgroup {
                    move_tree(cg, pid);
                }
                return;
            }
            // Moving the application out of its own cgroup v2 would lose its figures: perf is
            // started again on that cgroup instead.
            if let Some(pid) = self.recorder.take().and_then(|r| r.pid()) {
                super::reaper::unspare(pid);
            }
            if let Some(cg) = self.cgroup.take() {
                let _ = cg.remove();
            }
        }
        let target = match self.cgroup_target(pid, app_cgroup) {
            Some(t) => t,
            None => Target::Pids(rigor_probe::descendants(pid)),
        };
        match Recorder::start(&self.settings, &target, &self.data, enabled) {
            Ok(r) => self.recorder = Some(spared(r)),
            Err(e) => self.problem = Some(e.to_string()),
        }
    }

    /// The name of a cgroup made for this iteration's recording.
    fn cgroup_name(&self) -> String {
        format!("rigor-perf-{}-{}", std::process::id(), self.sequence)
    }

    /// The application's cgroup when perf can filter on it, else a cgroup made for perf with
    /// the application's processes moved in; `None` when not root or none could be had.
    fn cgroup_target(&mut self, pid: i32, app_cgroup: Option<&Cgroup>) -> Option<Target> {
        if !nix::unistd::geteuid().is_root() {
            return None;
        }
        let cg = match app_v2_dir(app_cgroup).and_then(|dir| PerfCgroup::existing(&dir)) {
            Some(c) => c,
            None => {
                let made = PerfCgroup::create(&self.cgroup_name()).ok()?;
                move_tree(&made, pid);
                made
            }
        };
        let target = Target::Cgroup(cg.perf_name().to_string());
        self.cgroup = Some(cg);
        Some(target)
    }

    /// Sampling on: the window opens.
    pub fn enable(&mut self) {
        if let Some(Err(e)) = self.recorder.as_mut().map(Recorder::enable) {
            self.problem = Some(e.to_string());
        }
    }

    /// Sampling off: the window closed.
    pub fn disable(&mut self) {
        if let Some(Err(e)) = self.recorder.as_mut().map(Recorder::disable) {
            self.problem = Some(e.to_string());
        }
    }

    /// Ends the recording (perf writes its file).
    fn stop(&mut self) {
        if let Some(r) = self.recorder.take() {
            let pid = r.pid();
            let stopped = r.stop();
            if let Some(pid) = pid {
                super::reaper::unspare(pid);
            }
            match stopped {
                Ok(data) => self.recorded = Some(data),
                Err(e) => self.problem = Some(e.to_string()),
            }
        }
    }

    /// Once the application has stopped: folds the samples into the file beside the log, and
    /// says in a warning why there is no profile when there is none.
    pub fn finish(mut self, it: &mut Iteration) {
        self.stop();
        if let Some(cg) = self.cgroup.take() {
            let _ = cg.remove();
        }
        let hz = self.settings.hz;
        let folded = self.recorded.take().map(|data| {
            rigor_profile::fold_perf_data(&self.settings.perf, &data)
                .map_err(|e| e.to_string())
                .and_then(|f| {
                    std::fs::write(&self.folded, f.to_text())
                        .map_err(|e| format!("{}: {e}", self.folded.display()))?;
                    Ok(f.total())
                })
        });
        let problem = match folded {
            Some(Err(e)) => Some(e),
            // An empty profile is said, not left to read as one that found nothing.
            Some(Ok(0)) => {
                it.warnings.push(Warning::new(
                    WarningKind::CpuProfile,
                    format!(
                        "the CPU profile of this iteration holds no sample: the application \
                         used less than one sample period (1/{hz} s) of CPU while perf \
                         recorded it"
                    ),
                    "lengthen the measured window, or raise --cpu-profile-hz",
                ));
                None
            }
            _ => self.problem.take(),
        };
        if let Some(why) = problem {
            it.warnings.push(Warning::of(
                WarningKind::CpuProfile,
                format!("no CPU profile for this iteration: {why}"),
            ));
        }
    }
}

impl Drop for Profiling {
    /// An iteration that ended early (its application failed to start) leaves no perf
    /// running and no cgroup behind.
    fn drop(&mut self) {
        if let Some(pid) = self.recorder.take().and_then(|r| r.pid()) {
            super::reaper::unspare(pid);
        }
        if let Some(cg) = self.cgroup.take() {
            let _ = cg.remove();
        }
    }
}

/// The directory of the application's cgroup when it is a cgroup v2 one.
fn app_v2_dir(app_cgroup: Option<&Cgroup>) -> Option<PathBuf> {
    app_cgroup
        .filter(|c| c.version() == 2)
        .and_then(|c| c.procs_path().first()?.parent().map(Path::to_path_buf))
}

/// Moves `pid` and its descendants into `cg`, children first (so none is forked outside
/// after its parent moved).
fn move_tree(cg: &PerfCgroup, pid: i32) {
    for p in rigor_probe::descendants(pid).into_iter().rev() {
        let _ = cg.add(p);
    }
}

/// `r`, kept out of the sweeps that kill what an application left behind: rigor stops perf
/// itself, after the application.
fn spared(r: Recorder) -> Recorder {
    if let Some(pid) = r.pid() {
        super::reaper::spare(pid);
    }
    r
}
