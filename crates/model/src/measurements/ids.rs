//! The ids of rigor's own measurements, named once: code that records or reads a built-in
//! figure uses these, and the catalogue is built from them.

/// Highest CPU of the application's process tree between two samples; 100 = all of the machine's
/// CPUs.
pub const APP_CPU: &str = "app.cpu";
/// CPU of the tree over the whole window (time-weighted); 100 = all CPUs.
pub const APP_CPU_AVG: &str = "app.cpu.avg";
/// Highest raw CPU of the tree; 100 = one core.
pub const APP_CORES: &str = "app.cores";
/// Highest sum of VmRSS over the tree (a page shared by N processes counts N times).
pub const APP_RSS: &str = "app.rss";
/// Highest tree RSS over every sample, start and shutdown included.
pub const APP_RSS_LIFETIME: &str = "app.rss.lifetime";
/// Highest USS (`Private_Clean + Private_Dirty`: pages no other process maps).
pub const APP_PRIVATE: &str = "app.private";
/// Highest sum of PSS over the tree (each page divided among the processes mapping it); the
/// copy-on-write heap of a pre-fork server counts once.
pub const APP_OWNED: &str = "app.owned";
/// Highest memory of the application's cgroup (the kernel's account).
pub const APP_CGROUP_MEMORY: &str = "app.cgroup.memory";
/// Page cache at the sample where cgroup memory peaked.
pub const APP_CGROUP_CACHE: &str = "app.cgroup.cache";
/// Anonymous memory (heap, stacks; a shared page once) where cgroup memory peaked.
pub const APP_CGROUP_ANON: &str = "app.cgroup.anon";
/// Threads at the window's first sample.
pub const APP_THREADS_START: &str = "app.threads.start";
/// Threads at the window's last sample.
pub const APP_THREADS_END: &str = "app.threads.end";
/// Most threads in the window.
pub const APP_THREADS_MAX: &str = "app.threads.max";
/// Involuntary context switches of the tree across the window (CPU contention).
pub const APP_CTX_SWITCHES_INVOLUNTARY: &str = "app.ctx_switches.involuntary";
/// How long the build took (one build per variant, repeated in each iteration).
pub const APP_BUILD_TIME: &str = "app.build_time";
/// From start until the readiness check passed.
pub const APP_START_TIME: &str = "app.start_time";
/// A command job's run, from spawn until it exited.
pub const APP_ELAPSED: &str = "app.elapsed";
/// CPU time a command job's tree used over its whole run (every process, short-lived ones
/// included).
pub const APP_CPU_TIME: &str = "app.cpu_time";
/// Latency of the first request to the load URL after readiness (outside the window).
pub const APP_FIRST_REQUEST: &str = "app.first_request";
/// Size of the build's `artifact` (file or folder).
pub const APP_SIZE: &str = "app.size";
/// CPU the load engine used over the window; 100 = as many cores as it has threads (at most the
/// CPUs it may use).
pub const LOAD_CPU: &str = "load.cpu";
/// The highest open-model rate whose measured window met the job's `find_rate` objective.
pub const LOAD_CAPACITY: &str = "load.capacity";
/// Requests of the window per measured second.
pub const LOAD_RPS: &str = "load.rps";
/// Responses completed in the window, any status.
pub const LOAD_REQUESTS: &str = "load.requests";
/// Mean latency.
pub const LOAD_LATENCY_MEAN: &str = "load.latency.mean";
/// Median latency.
pub const LOAD_LATENCY_P50: &str = "load.latency.p50";
/// 75th percentile.
pub const LOAD_LATENCY_P75: &str = "load.latency.p75";
/// 90th percentile.
pub const LOAD_LATENCY_P90: &str = "load.latency.p90";
/// 99th percentile.
pub const LOAD_LATENCY_P99: &str = "load.latency.p99";
/// 99.9th percentile.
pub const LOAD_LATENCY_P999: &str = "load.latency.p999";
/// Highest latency.
pub const LOAD_LATENCY_MAX: &str = "load.latency.max";
/// Responses with a status outside 200–399.
pub const LOAD_BAD_RESPONSES: &str = "load.bad_responses";
/// Sum of the `load.errors.*` kinds below.
pub const LOAD_SOCKET_ERRORS: &str = "load.socket_errors";
/// Failed connects.
pub const LOAD_ERRORS_CONNECT: &str = "load.errors.connect";
/// Failed reads.
pub const LOAD_ERRORS_READ: &str = "load.errors.read";
/// Failed writes.
pub const LOAD_ERRORS_WRITE: &str = "load.errors.write";
/// Requests unanswered within `timeout`.
pub const LOAD_ERRORS_TIMEOUT: &str = "load.errors.timeout";
/// Responses that were not valid HTTP/1.1 (the report's `parse_failures` says why, with an
/// example).
pub const LOAD_ERRORS_PARSE: &str = "load.errors.parse";
/// Requests of the window outstanding when their connection closed or failed; not re-sent and not
/// in the latency.
pub const LOAD_ERRORS_CLOSED: &str = "load.errors.closed";
/// https://: handshakes that failed or timed out, and TLS sessions that broke once open.
pub const LOAD_ERRORS_TLS: &str = "load.errors.tls";
/// HTTP/2: streams of the window the server reset (RST_STREAM) before answering.
pub const LOAD_ERRORS_RESET: &str = "load.errors.reset";
/// HTTP/2: streams of the window the server refused by ending their connection (GOAWAY) before
/// processing them; not re-sent.
pub const LOAD_ERRORS_GOAWAY: &str = "load.errors.goaway";
/// https://: TLS handshakes completed in the run (those opening the connections included).
pub const LOAD_TLS_HANDSHAKES: &str = "load.tls.handshakes";
/// https://: of those, handshakes that resumed an earlier session.
pub const LOAD_TLS_RESUMED: &str = "load.tls.resumed";
/// https://: mean handshake time, TCP connect completion to handshake done.
pub const LOAD_TLS_HANDSHAKE_MEAN: &str = "load.tls.handshake.mean";
/// https://: 99th percentile of the handshake time.
pub const LOAD_TLS_HANDSHAKE_P99: &str = "load.tls.handshake.p99";
/// Bytes read per measured second.
pub const LOAD_THROUGHPUT: &str = "load.throughput";
