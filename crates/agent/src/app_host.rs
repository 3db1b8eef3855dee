//! The agent's application messages: sources, build, start, window marks and stop, each
//! answered on the protocol. The process work is an [`AppService`]'s: rigor's own runs the
//! application exactly as a local run does.

use super::app_wire::AppWire;
use super::error::ServiceError;
use super::protocol::{BuiltWire, FromAgent, ToAgent};
use base64::Engine as _;
use std::time::Duration;

/// What the agent does with applications; errors are messages for people.
pub trait AppService {
    /// Takes a chunk of folder `key`'s sources; the last one unpacks them: (files, bytes).
    fn sources(
        &mut self,
        key: &str,
        data: &[u8],
        last: bool,
    ) -> Result<Option<(u64, u64)>, ServiceError>;
    /// Builds `app` in folder `key` as build `name`.
    fn build(&mut self, key: &str, name: &str, app: AppWire) -> Result<BuiltWire, ServiceError>;
    /// Starts build `name` fresh as application `id` and waits until it is ready: its PID,
    /// how long that took, and what the start recorded (an iteration of the result file).
    #[allow(clippy::too_many_arguments)]
    fn start(
        &mut self,
        id: &str,
        key: &str,
        name: &str,
        app: AppWire,
        sequence: usize,
        interval: Duration,
        drop_caches: bool,
        load_url: &str,
    ) -> Result<(i32, Duration, serde_json::Value), ServiceError>;
    /// Marks a window edge (`window_start`, `window_end`) of application `id`.
    fn mark(&mut self, id: &str, mark: &str) -> Result<(), ServiceError>;
    /// Called between messages: samples what needs sampling.
    fn tick(&mut self);
    /// Applications that exited on their own since last asked, with how.
    fn exits(&mut self) -> Vec<(String, String)>;
    /// Stops application `id`: what was measured (an iteration of the result file), its log.
    fn stop(&mut self, id: &str) -> Result<(serde_json::Value, String), ServiceError>;
    /// Stops every application: the client is gone.
    fn stop_all(&mut self);
}

/// Handles an application message (others are returned untouched); every answer goes to `send`.
pub fn handle(
    host: &mut dyn AppService,
    msg: ToAgent,
    send: &dyn Fn(&FromAgent),
) -> Option<ToAgent> {
    let error = |id: &str, message: String| {
        send(&FromAgent::Error {
            id: Some(id.to_string()),
            message,
        })
    };
    match msg {
        ToAgent::Sources {
            key,
            data_base64,
            last,
        } => {
            let data = match base64::engine::general_purpose::STANDARD.decode(data_base64) {
                Ok(d) => d,
                Err(e) => {
                    error(&key, format!("the sources are not valid base64: {e}"));
                    return None;
                }
            };
            match host.sources(&key, &data, last) {
                Ok(Some((files, bytes))) => send(&FromAgent::SourcesReady { key, files, bytes }),
                Ok(None) => {}
                Err(e) => error(&key, e.to_string()),
            }
        }
        ToAgent::Build { key, build, app } => match host.build(&key, &build, app) {
            Ok(built) => send(&FromAgent::Built { build, built }),
            Err(e) => error(&build, e.to_string()),
        },
        ToAgent::StartApp {
            id,
            key,
            build,
            app,
            sequence,
            sample_interval_ns,
            drop_caches,
            load_url,
        } => {
            let interval = Duration::from_nanos(sample_interval_ns.max(1_000_000));
            match host.start(
                &id,
                &key,
                &build,
                app,
                sequence,
                interval,
                drop_caches,
                &load_url,
            ) {
                Ok((pid, ready, iteration)) => send(&FromAgent::AppStarted {
                    id,
                    pid,
                    ready_ms: ready.as_secs_f64() * 1e3,
                    iteration,
                }),
                Err(e) => error(&id, e.to_string()),
            }
        }
        ToAgent::AppMark { id, mark } => {
            if let Err(e) = host.mark(&id, &mark) {
                error(&id, e.to_string());
            }
        }
        ToAgent::StopApp { id } => match host.stop(&id) {
            Ok((iteration, log)) => send(&FromAgent::AppStopped { id, iteration, log }),
            Err(e) => error(&id, e.to_string()),
        },
        other => return Some(other),
    }
    None
}

/// Says, once each, which applications exited on their own.
pub fn report_exits(host: &mut dyn AppService, send: &dyn Fn(&FromAgent)) {
    host.tick();
    for (id, status) in host.exits() {
        send(&FromAgent::AppExited { id, status });
    }
}
