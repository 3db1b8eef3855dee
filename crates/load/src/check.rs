//! What a run may ask for, checked before anything connects: sane maxima for every number, a URL
//! that resolves, a request that can be built, descriptors that can be had.

use crate::h2::H2Request;
use crate::{cpu, request, url, LoadError, LoadSpec};
use std::time::Duration;

/// Most connections one run may open: beyond this the descriptor table, not the server, is measured.
pub const MAX_CONNECTIONS: usize = 1_000_000;
/// Most worker threads (each its own event loop).
pub const MAX_THREADS: usize = 1024;
/// Deepest pipeline per connection.
pub const MAX_PIPELINE: usize = 1024;
/// Most concurrent HTTP/2 streams asked for per connection.
pub const MAX_STREAMS: usize = 1024;
/// Most requests in flight at once (connections × pipeline): each has a slot kept in memory.
pub const MAX_IN_FLIGHT: usize = 1 << 22;
/// Largest batch (the request repeated `pipeline` times) kept in memory.
const MAX_BATCH_BYTES: usize = 64 << 20;
/// Longest warmup or measured window: a year (times are u64 nanoseconds, and nothing is sized
/// by the duration, but a longer figure is a typo).
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);
/// Highest offered rate, requests per second: far beyond any server, still a schedule whose
/// request times are distinct at nanosecond resolution over many seconds.
pub const MAX_RATE: f64 = 1e12;
/// Lowest offered rate, requests per second: one request every 1000 s (under 17 minutes). Below
/// it a window sees no request at all and a rate prints as a wall of digits or as 0, so a smaller
/// figure is a typo, not a load.
pub const MIN_RATE: f64 = 1e-3;
/// Longest timeout: an hour, the largest latency the histograms hold.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

fn validate(spec: &LoadSpec) -> Result<(), LoadError> {
    let bad = |m: String| Err(LoadError::InvalidSpec(m));
    if !(1..=MAX_CONNECTIONS).contains(&spec.connections) {
        return bad(format!(
            "connections must be between 1 and {MAX_CONNECTIONS}, got {}",
            spec.connections
        ));
    }
    if !(1..=MAX_THREADS).contains(&spec.threads) {
        return bad(format!(
            "threads must be between 1 and {MAX_THREADS}, got {}",
            spec.threads
        ));
    }
    if !(1..=MAX_PIPELINE).contains(&spec.pipeline) {
        return bad(format!(
            "pipeline must be between 1 and {MAX_PIPELINE}, got {}",
            spec.pipeline
        ));
    }
    if spec.connections.saturating_mul(spec.pipeline) > MAX_IN_FLIGHT {
        return bad(format!(
            "{} connections with a pipeline of {} is more than {MAX_IN_FLIGHT} requests in flight",
            spec.connections, spec.pipeline
        ));
    }
    if !(1..=MAX_STREAMS).contains(&spec.streams) {
        return bad(format!(
            "streams must be between 1 and {MAX_STREAMS}, got {}",
            spec.streams
        ));
    }
    if spec.streams > 1 && !spec.http2 {
        return bad(format!(
            "streams ({}) are HTTP/2's: ask for HTTP/2 too, or use a pipeline for HTTP/1.1",
            spec.streams
        ));
    }
    if spec.http2 && spec.pipeline > 1 {
        return bad(format!(
            "a pipeline ({}) is HTTP/1.1's: HTTP/2 runs concurrent streams instead",
            spec.pipeline
        ));
    }
    if spec.connections.saturating_mul(spec.streams) > MAX_IN_FLIGHT {
        return bad(format!(
            "{} connections with {} streams each is more than {MAX_IN_FLIGHT} requests in flight",
            spec.connections, spec.streams
        ));
    }
    if spec.duration.is_zero() || spec.duration > MAX_DURATION {
        return bad(format!(
            "duration must be more than zero and at most 365 days, got {:?}",
            spec.duration
        ));
    }
    if spec.warmup > MAX_DURATION {
        return bad(format!(
            "warmup must be at most 365 days, got {:?}",
            spec.warmup
        ));
    }
    if spec.timeout.is_zero() || spec.timeout > MAX_TIMEOUT {
        return bad(format!(
            "timeout must be more than zero and at most 1 hour, got {:?}",
            spec.timeout
        ));
    }
    if let Some(cpus) = &spec.cpus {
        let allowed = cpu::allowed_cpu_list();
        if let Some(bad) = cpus.iter().find(|c| !allowed.contains(c)) {
            return Err(LoadError::InvalidSpec(format!(
                "CPU {bad} is not available to this process (allowed: {allowed:?})"
            )));
        }
    }
    crate::stages::validate(&spec.stages, spec.measure_stage, spec.rate)?;
    if let Some(r) = spec.rate {
        if !(r.is_finite() && (MIN_RATE..=MAX_RATE).contains(&r)) {
            return bad(format!(
                "rate must be a number of requests per second between {MIN_RATE} and {MAX_RATE:e}, got {r:e}"
            ));
        }
    }
    Ok(())
}

/// Source addresses of one family the server has an address of (a name may resolve to both;
/// the run connects to the first address that answers from them), and enough of them for the
/// connections: each has the kernel's ephemeral port range towards one server address and port.
fn check_sources(spec: &LoadSpec, addrs: &[std::net::SocketAddr]) -> Result<(), LoadError> {
    let bad = |m: String| Err(LoadError::InvalidSpec(m));
    let Some(&first) = addrs.first() else {
        return Ok(());
    };
    let to = spec
        .source_addrs
        .first()
        .and_then(|s| addrs.iter().find(|a| a.is_ipv4() == s.is_ipv4()))
        .copied()
        .unwrap_or(first);
    if let Some(a) = spec
        .source_addrs
        .iter()
        .find(|a| a.is_ipv4() != to.is_ipv4())
    {
        return bad(format!(
            "source address {a} cannot reach {to}: give {} source addresses",
            if to.is_ipv4() { "IPv4" } else { "IPv6" }
        ));
    }
    let ports = crate::source::local_ports();
    let sources = spec.source_addrs.len().max(1);
    if spec.connections > ports * sources {
        let needed = spec.connections.div_ceil(ports);
        return bad(format!(
            "{} connections to {to} need more than the {ports} local ports {} has \
             (net.ipv4.ip_local_port_range): spread them over {needed} source addresses, \
             e.g. --source-addr 127.0.0.1-127.0.0.{needed} on loopback",
            spec.connections,
            if spec.source_addrs.is_empty() {
                "one source address".to_string()
            } else {
                format!("each of {} source addresses", sources)
            }
        ));
    }
    Ok(())
}

/// Descriptors a run needs: one per connection, plus each worker's poll and timer and slack.
fn fds_needed(spec: &LoadSpec) -> u64 {
    let threads = spec.threads.min(spec.connections) as u64;
    spec.connections as u64 + 16 * threads + 64
}

/// Everything about `spec` that can be known without connecting: the numbers are in range, the
/// URL parses and resolves, the request can be built, the descriptors can be had. Callers run
/// this before printing anything, so a bad flag is an error, not a failed run.
pub fn check(spec: &LoadSpec) -> Result<(), LoadError> {
    prepare(spec).map(drop)
}

/// What a checked spec sends, and where.
pub(crate) struct Prepared {
    pub target: url::Target,
    /// The HTTP/1.1 request (also kept for HTTP/2 runs, whose probes speak HTTP/1.1 never).
    pub request: Vec<u8>,
    /// HTTP/2 runs: the request as frames.
    pub h2: Option<H2Request>,
    /// A request mix, serialised (replaces `request` and `h2` on the wire).
    pub mix: Option<crate::mix::PreparedMix>,
}

/// [`check`], returning the target and the serialised request.
pub(crate) fn prepare(spec: &LoadSpec) -> Result<Prepared, LoadError> {
    validate(spec)?;
    let target = url::parse(&spec.url)?;
    let h2 = spec
        .http2
        .then(|| H2Request::new(&target, &spec.method, &spec.headers, spec.body.as_deref()))
        .transpose()?;
    let request = request::serialize(
        &target,
        &spec.method,
        &spec.headers,
        spec.body.as_deref(),
        false,
    )?;
    let mix = spec
        .mix
        .as_ref()
        .map(|m| crate::mix::PreparedMix::new(m, &target, spec.http2))
        .transpose()?;
    let longest = mix
        .as_ref()
        .map_or(request.len(), |m| m.max_len(spec.http2).max(request.len()));
    if longest.saturating_mul(spec.pipeline) > MAX_BATCH_BYTES {
        return Err(LoadError::InvalidSpec(format!(
            "a pipeline of {} requests of {} bytes is more than {} MiB in one write",
            spec.pipeline,
            longest,
            MAX_BATCH_BYTES >> 20
        )));
    }
    if mix.is_some() && spec.io == crate::IoMode::IoUring {
        return Err(LoadError::InvalidSpec(
            "a request mix runs on the epoll path (io_uring sends one request's bytes): \
             use io auto or epoll"
                .into(),
        ));
    }
    check_sources(spec, &target.addrs)?;
    if target.tls {
        // The server name is checked now, not when the first connection needs it.
        crate::tls::TlsClient::new(&spec.url, &target, spec.insecure, 0, spec.http2)?;
    } else if spec.insecure {
        return Err(LoadError::InvalidSpec(format!(
            "accepting any certificate (insecure) applies to https:// URLs only, and `{}` is not one",
            spec.url
        )));
    }
    // The I/O path asked for must be one this machine (where the engine runs) can take.
    crate::io::resolve(spec.io, target.tls, spec.http2)?;

    cpu::ensure_fd_limit(fds_needed(spec)).map_err(|e| LoadError::Resources(e.to_string()))?;
    Ok(Prepared {
        target,
        request,
        h2,
        mix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_checked_against_the_servers_address_of_their_family() {
        let spec = |sources: &str| LoadSpec {
            url: "http://localhost:8080/".into(),
            connections: 4,
            source_addrs: crate::source::parse_sources(sources, 16).unwrap(),
            ..Default::default()
        };
        // A name that resolves to both families, IPv6 first (as `localhost` often does).
        let both = [
            "[::1]:8080".parse().unwrap(),
            "127.0.0.1:8080".parse().unwrap(),
        ];
        assert!(check_sources(&spec("127.0.0.2-127.0.0.3"), &both).is_ok());
        assert!(check_sources(&spec("::1"), &both).is_ok());
        let e = check_sources(&spec("127.0.0.2"), &both[..1])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("source address 127.0.0.2 cannot reach [::1]:8080"),
            "{e}"
        );
        let mixed = check_sources(&spec("127.0.0.2,::1"), &both)
            .unwrap_err()
            .to_string();
        assert!(
            mixed.contains("source address ::1 cannot reach 127.0.0.1:8080"),
            "{mixed}"
        );
    }
}
