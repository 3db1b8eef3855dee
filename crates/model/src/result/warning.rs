//! Warnings: a stable kind, the case at hand with its numbers, and what to do about it. Each
//! kind carries its meaning and default advice in one exhaustive match, so a kind cannot be
//! added without saying what it means and what to do (docs/warnings.md is generated from them).

use super::coded::coded_enum;
use serde::{Deserialize, Serialize};

/// A warning with its reason and what to do about it; `--strict` makes any of them fatal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Warning {
    /// Stable short code (`page_cache`, `proxy`, `debug_build`, `client_saturated`, …).
    pub kind: WarningKind,
    pub message: String,
    #[serde(default)]
    pub advice: String,
}

impl Warning {
    /// A warning whose advice fits this case better than the kind's default (it names the id,
    /// the variant or the number of iterations to ask for).
    pub fn new(kind: WarningKind, message: impl Into<String>, advice: impl Into<String>) -> Self {
        Warning {
            kind,
            message: message.into(),
            advice: advice.into(),
        }
    }

    /// A warning with its kind's default advice.
    pub fn of(kind: WarningKind, message: impl Into<String>) -> Self {
        let advice = kind.advice();
        Warning::new(kind, message, advice)
    }
}

coded_enum! {
    /// What a warning is about: the JSON `kind` and the `[kind]` the reports show.
    pub enum WarningKind {
        BadResponses = "bad_responses",
        BusyMachine = "busy_machine",
        Cancelled = "cancelled",
        CapacityUnsettled = "capacity_unsettled",
        ClientSaturated = "client_saturated",
        ClientStarved = "client_starved",
        ConflictingDeclarations = "conflicting_declarations",
        Contaminated = "contaminated",
        CpuPressure = "cpu_pressure",
        CpuProfile = "cpu_profile",
        DebugBuild = "debug_build",
        DropCaches = "drop_caches",
        ExclusionsSkipped = "exclusions_skipped",
        ForeignCpu = "foreign_cpu",
        Governor = "governor",
        IdenticalArtifacts = "identical_artifacts",
        Http2Failure = "http2_failure",
        IgnoredSigterm = "ignored_sigterm",
        IncompleteResult = "incomplete_result",
        InsecureTls = "insecure_tls",
        LatencyNotMerged = "latency_not_merged",
        LeftBehind = "left_behind",
        Leftovers = "leftovers",
        LoadErrors = "load_errors",
        Metrics = "metrics",
        MetricsNonFinite = "metrics_non_finite",
        NoCgroup = "no_cgroup",
        NoResponses = "no_responses",
        NoisyRow = "noisy_row",
        NotInterleaved = "not_interleaved",
        OutputCut = "output_cut",
        PageCache = "page_cache",
        PageCacheCarried = "page_cache_carried",
        Priority = "priority",
        Proxy = "proxy",
        RateNotMet = "rate_not_met",
        ReadinessMemory = "readiness_memory",
        ResultWarnings = "result_warnings",
        RowStopped = "row_stopped",
        Steal = "steal",
        StreamsLimited = "streams_limited",
        Throttled = "throttled",
        TooFewIterations = "too_few_iterations",
        UndeclaredMeasurement = "undeclared_measurement",
        UnmatchedRow = "unmatched_row",
        WaitedForConnection = "waited_for_connection",
    }
}

impl WarningKind {
    /// What the warning says about the figures: the source of docs/warnings.md.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn meaning(&self) -> &'static str {
        use WarningKind::*;
        match self {
            BadResponses => {
                "Responses in the measured window had a status other than 2xx or 3xx: the \
                 application answered, but not what the load asked for."
            }
            BusyMachine => {
                "The machine was busy before the first iteration (load average or runnable \
                 threads above half a thread per core while the CPUs were busy): other work \
                 competes with the application."
            }
            CpuProfile => {
                "A CPU profile asked for (`--cpu-profile`, `cpu_profile`) could not be taken: \
                 perf is missing or not allowed, or a recording failed. The run's figures are \
                 unaffected; the rows or iterations named have no profile."
            }
            Cancelled => {
                "The load was cancelled (Ctrl-C or a signal) before its measured window was \
                 over: the figures cover a shorter window than configured."
            }
            CapacityUnsettled => {
                "A capacity search (`find_rate`) ended without settling: its probes ran out \
                 before the highest rate met and the lowest missed were within its precision, \
                 each confirmed, or the objective held even at its `max`. `load.capacity` is \
                 then the lower end of the interval the message names, not the rate the \
                 service holds."
            }
            ClientSaturated => {
                "The load client used 90% or more of its cores: the figures may measure the \
                 client, not the application."
            }
            ClientStarved => {
                "The load client (rigor's engine or the load tool) waited in a run queue for a \
                 CPU at least as long as it ran, and for a fifth of the iteration or more \
                 (/proc/PID/task/TID/schedstat): other processes took its CPU, it sent less \
                 than it would have, and the figures may measure its starvation rather than \
                 the application."
            }
            ConflictingDeclarations => {
                "`rigor compare`: the saved results declare a measurement's direction differently, \
                 so it gets no verdict."
            }
            Contaminated => {
                "The rest of the machine (hypervisor steal plus other processes' CPU) interfered \
                 with an iteration far more than with the run's other iterations: by default it \
                 is excluded (`excluded: \"interference\"`) and re-run in the same slot, within \
                 a budget of half the planned iterations; the message says whether it was \
                 re-run or kept."
            }
            CpuPressure => {
                "CPU pressure (PSI, some, 10 s average) was above 10% before the run, or above \
                 50% of an iteration while other processes used the CPU: tasks were waiting \
                 for CPU."
            }
            DebugBuild => {
                "An artifact looks like a debug build, or a cargo profile or RUSTFLAGS compiles \
                 at opt-level 0: the figures are not those of an optimised program."
            }
            DropCaches => {
                "--drop-caches could not drop the page cache before an iteration: it started \
                 with whatever the cache held."
            }
            ExclusionsSkipped => {
                "--exclude needs more iterations with the measurement than the row has, so \
                 nothing was excluded from it."
            }
            ForeignCpu => {
                "Processes other than the application and rigor used more than 5% of the \
                 machine's CPU during an iteration: the figures carry their interference."
            }
            Governor => {
                "The CPU frequency governor is not `performance`: clock speed may drift \
                 between iterations."
            }
            IdenticalArtifacts => {
                "Two builds configured differently produced byte-identical artifacts: \
                 comparing them measures the same program."
            }
            IgnoredSigterm => {
                "The application did not exit on SIGTERM within `stop_timeout` and was killed."
            }
            IncompleteResult => {
                "`rigor compare`: a saved result did not end `complete` (interrupted, failed or \
                 still running)."
            }
            LeftBehind => {
                "Processes of the application outlived it (a daemon, a `setsid` child) and \
                 were killed."
            }
            OutputCut => {
                "A command job printed more than 64 MiB on stdout or stderr, or its log could \
                 not be written (a full disk): the log holds what was written (a log cut at the \
                 limit ends with a line saying how much was discarded), and rigor read and \
                 discarded the rest so the command never waited on its output."
            }
            Leftovers => {
                "Processes of an earlier rigor run that ended abnormally were still running \
                 when this run started, and were killed."
            }
            LoadErrors => {
                "The load engine counted socket errors (connect, read, write, timeout, parse, \
                 TLS, or requests lost with a closed connection)."
            }
            InsecureTls => {
                "An https:// load ran with `insecure`: the server's certificate was not \
                 verified, so the run cannot tell it reached the server it meant to."
            }
            Http2Failure => {
                "An HTTP/2 connection broke the protocol (a malformed frame, a header block \
                 that would not decode, a push the client had disabled) or ALPN did not choose \
                 h2: it was dropped and its requests counted as errors; the report's \
                 `http2.first_failure` says why."
            }
            StreamsLimited => {
                "The server allows fewer concurrent HTTP/2 streams per connection than the \
                 load asked for: fewer requests were in flight than planned. The limit named \
                 is the lowest any connection was given (a server may raise it later on the \
                 same connection)."
            }
            Metrics => {
                "The application's `metrics` URL could not be read at an edge of the measured \
                 window (refused, slower than 2 s, not 2xx, larger than 16 MiB, not Prometheus \
                 text), a counter was reset during the window, a `metrics_select` entry matched \
                 nothing, or the page exports more than 200 figures: some `app.metric.*` figures \
                 are missing."
            }
            MetricsNonFinite => {
                "The application's `metrics` page gave NaN or ±Inf samples for counters or \
                 gauges rigor reads: they were left out, so an `app.metric.*` figure summed over \
                 series lacks them, and one with no other sample is missing."
            }
            NoCgroup => {
                "rigor could not give the application a cgroup of its own: `app.cgroup.*` are \
                 absent, and CPU is read from the process tree."
            }
            NoResponses => "No response completed in the measured window.",
            NoisyRow => {
                "A row's primary measurement varies more than 10% (CV) across its iterations: \
                 a change smaller than that cannot be seen."
            }
            NotInterleaved => {
                "`rigor compare`: the results come from separate runs, so their iterations did \
                 not interleave and drift of the machine between them reads as a change; \
                 environment differences are listed."
            }
            PageCache => {
                "cgroup memory exceeds the process tree's RSS by more than 25% and page cache \
                 explains the gap: the cgroup total (as `docker stats` shows it) is in large part \
                 the kernel's reclaimable cache (the message gives its share)."
            }
            PageCacheCarried => {
                "The application's page cache differs materially between iterations of a row: \
                 files an earlier iteration cached are not charged to the next."
            }
            Priority => {
                "`priority = \"high\"` could not raise the priority of the application or of \
                 the load client."
            }
            Proxy => {
                "The port the load hits is owned by another process than the application's \
                 tree: the load goes through a proxy and measures it too."
            }
            RateNotMet => {
                "With a fixed `rate`, the achieved request rate stayed more than 5% below the \
                 offered one."
            }
            ReadinessMemory => {
                "The readiness probe, on another URL than the load's, grew the application's \
                 memory materially before the load: `app.rss` counts memory the load's own URL \
                 did not build."
            }
            ResultWarnings => {
                "`rigor compare`: a saved result was recorded with warnings of its own; they are \
                 listed by kind."
            }
            RowStopped => {
                "The application failed to start in a row's first iterations, so the row's \
                 other iterations were skipped."
            }
            Steal => "A hypervisor stole more than 2% of the CPU during an iteration.",
            Throttled => "The CPU was thermally throttled during an iteration.",
            TooFewIterations => {
                "The iterations kept per side can never reach significance at 95% confidence, \
                 so no comparison can reach a verdict however clear the difference."
            }
            UndeclaredMeasurement => {
                "Measurements were compared whose better direction nobody declared: they get \
                 no verdict."
            }
            UnmatchedRow => {
                "`rigor compare`: a row of one result has no row with the same scenario, matrix \
                 values and variant in the other."
            }
            LatencyNotMerged => {
                "A load tool ran on several load hosts: its outputs hold each host's latency \
                 percentiles and mean, not its samples, and percentiles of the whole load cannot \
                 be had from them, so the merged latency figures (but the maximum) are absent; \
                 each host's own are under load.hosts.NAME."
            }
            WaitedForConnection => {
                "With a fixed `rate`, requests waited for a free connection: their latency \
                 includes the wait."
            }
            Other(_) => "A kind written by another version of rigor.",
        }
    }

    /// What to do about it, when the case at hand has nothing more specific to say.
    pub fn advice(&self) -> &'static str {
        use WarningKind::*;
        match self {
            BadResponses => "check the URL, method and body of the load job (and the application's log)",
            BusyMachine => "stop other work on the machine (or wait for it to settle) and run again",
            CpuProfile => {
                "install perf (Debian: apt-get install linux-perf) and allow it: `sysctl \
                 kernel.perf_event_paranoid=1`, or run rigor as root"
            }
            Cancelled => "run again and let the window finish: a cut window is not comparable with a full one",
            CapacityUnsettled => {
                "read `load.capacity` as a lower bound: raise `max` when the objective held \
                 there; when the probes ran out, quiet the machine or widen `precision`"
            }
            ClientSaturated => {
                "give the load more threads/cores (profile `load = { cpus = … }`, `threads`), \
                 or run it on another machine"
            }
            ClientStarved => {
                "stop the other work on the load's CPUs, or pin the load to CPUs of its own \
                 (profile `load = { cpus = … }`)"
            }
            ConflictingDeclarations => "settle it with --measure ID=higher or --measure ID=lower",
            Contaminated => {
                "quiet the machine (stop other work, use a dedicated host or instance type); \
                 --keep-noisy keeps such iterations instead of re-running them"
            }
            CpuPressure => "stop other work on the machine and run again",
            DebugBuild => "benchmark release builds only: debug builds are slower, and unevenly so",
            DropCaches => {
                "run as root on a host (or a privileged container) to drop caches, or leave \
                 out --drop-caches and read app.cgroup.* with the page-cache warnings in mind"
            }
            ExclusionsSkipped => "run more iterations or exclude fewer",
            ForeignCpu => {
                "stop other work on the machine (builds, browsers, other benchmarks) and run \
                 again; a contaminated iteration varies with what else ran"
            }
            Governor => "set the governor to performance (cpupower frequency-set -g performance)",
            IdenticalArtifacts => {
                "check that each build really produces its own program (a build that skips work when \
                 its flags change, or a variant's build that only touches the file)"
            }
            IgnoredSigterm => "handle SIGTERM for a clean shutdown, or raise `stop_timeout`",
            IncompleteResult => "its rows may have fewer iterations than planned",
            InsecureTls => {
                "for figures you publish, give the server a certificate the system trusts (or \
                 point SSL_CERT_FILE at its CA) and drop `insecure`"
            }
            Http2Failure => "check the server's HTTP/2 support on this port; the reason names the frame or step",
            StreamsLimited => {
                "raise the server's limit (nginx: `http2_max_concurrent_streams`), or ask for \
                 that many `streams` and more `connections`"
            }
            LeftBehind => {
                "a daemonising or `setsid` child escapes its process group: keep it in the \
                 foreground, or stop it when the application gets SIGTERM"
            }
            OutputCut => "print less (lower the program's log level, or write the chatter to a file of its own), or free space where the results folder is",
            Leftovers => "they competed for the machine until now; nothing to do unless it happens again",
            LatencyNotMerged => {
                "for latency percentiles of the whole load, use rigor's engine on the load hosts \
                 (drop `tool`: its hosts send full histograms), or one load host"
            }
            LoadErrors => "read the application's log for this iteration; errors are counted, never dropped",
            Metrics => {
                "check that the URL answers Prometheus text quickly while the application runs \
                 (`curl` it), and name the families wanted in `metrics_select`"
            }
            MetricsNonFinite => {
                "fix the application's metric (a division by zero, an uninitialised gauge), or \
                 leave it out with `metrics_select`"
            }
            NoCgroup => "run as root on a machine with cgroup v2 or v1 memory to get app.cgroup.*",
            NoResponses => "check that the application answers the load URL at all",
            NoisyRow => {
                "quiet the machine (pin CPUs with a profile, stop other work), lengthen `duration`, \
                 or run more iterations"
            }
            NotInterleaved => {
                "for a fair A/B, make the sides variants of one `rigor run` so their iterations interleave"
            }
            PageCache => {
                "size the app by app.owned (or app.rss / app.private); cgroup totals (docker stats) \
                 include files it read"
            }
            PageCacheCarried => {
                "run with --drop-caches (as root) to start every iteration with a cold page cache, \
                 or size the app by app.rss / app.owned"
            }
            Priority => "run as root (or with CAP_SYS_NICE), or drop `priority = \"high\"`",
            Proxy => {
                "point the load at the application's own port (or run the load next to it, on the \
                 same network; for a container, `network = \"container\"` on the load job)"
            }
            RateNotMet => {
                "add connections, or lower `rate`: latency at an unmet rate is not the latency at \
                 that rate"
            }
            ReadinessMemory => {
                "make readiness a cheap URL (a health check), the load's own URL, or a TCP check"
            }
            ResultWarnings => "see that run's report; its numbers may not be comparable",
            RowStopped => "fix what stops it from starting, or pass --keep-going",
            Steal => {
                "use a dedicated host or instance type; stolen time makes figures vary with the \
                 neighbours"
            }
            Throttled => "cool the machine, or run fewer/shorter iterations with pauses",
            TooFewIterations => {
                "record more iterations per side (what --exclude drops does not count), or use \
                 --until-conclusive"
            }
            UndeclaredMeasurement => {
                "declare its direction in rigor.toml (`[measurements.\"ID\"]` with `direction = \
                 \"higher\"` or \"lower\"), or pass `--measure ID=higher` to rigor compare"
            }
            UnmatchedRow => "rows match by scenario, matrix values and variant",
            WaitedForConnection => {
                "add connections (or pipelining) so the offered rate never queues in the client"
            }
            Other(_) => "read the advice saved with the warning",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_their_codes() {
        for kind in WarningKind::ALL {
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, kind.as_str());
            assert_eq!(&serde_json::from_value::<WarningKind>(json).unwrap(), kind);
            assert!(
                !kind.meaning().is_empty() && !kind.advice().is_empty(),
                "{kind}"
            );
        }
    }

    #[test]
    fn a_kind_from_another_version_still_loads_and_is_written_back_unchanged() {
        let saved = r#"{"kind":"quantum_noise","message":"m","advice":"a"}"#;
        let w: Warning = serde_json::from_str(saved).unwrap();
        assert_eq!(w.kind, WarningKind::Other("quantum_noise".into()));
        assert_eq!(w.kind.as_str(), "quantum_noise");
        assert_eq!(serde_json::to_string(&w).unwrap(), saved);
        let old: Warning = serde_json::from_str(r#"{"kind":"proxy","message":"m"}"#).unwrap();
        assert_eq!(old.kind, WarningKind::Proxy);
        assert_eq!(old.advice, "");
    }

    #[test]
    fn warnings_take_the_default_advice_unless_given_their_own() {
        let w = Warning::of(WarningKind::Steal, "stolen");
        assert_eq!(w.advice, WarningKind::Steal.advice());
        let w = Warning::new(WarningKind::Steal, "stolen", "move");
        assert_eq!(w.advice, "move");
    }
}
