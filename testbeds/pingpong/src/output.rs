//! The three ways pingpong prints its figures: RemotePingPong's table, rigor's `##rigor` lines
//! and a crank statistics block.

use crate::args::{Args, Format};
use crate::round::Round;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

pub struct Output {
    format: Format,
    /// Rounds kept for the crank block, printed at the end.
    rounds: Vec<(String, Round)>,
}

impl Output {
    pub fn new(format: Format) -> Output {
        Output {
            format,
            rounds: Vec::new(),
        }
    }

    /// What RemotePingPong prints before its table: context a regex must skip.
    pub fn preamble(&self, args: &Args, delay_ns: u64) {
        let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
        println!("ProcessorCount: {cores}");
        println!(
            "Actor Count: {}",
            2 * args.clients.iter().max().unwrap_or(&0)
        );
        println!(
            "Messages sent/received per client: {}  ({:.0e})",
            args.messages, args.messages as f64
        );
        println!("Delay per message: {delay_ns} ns");
        println!();
        if self.format == Format::Table {
            println!("Num clients, Total [msg], Msgs/sec, Total [ms], Start Threads, End Threads");
        }
    }

    /// One round's figures (the crank block waits for the end).
    pub fn round(&mut self, r: &Round) {
        match self.format {
            Format::Table => println!(
                "{:>11}, {:>11}, {:>8}, {:>10.2}, {:>13}, {:>11}",
                r.clients,
                r.total,
                r.msgs_per_sec(),
                r.total_ms(),
                r.start_threads,
                r.end_threads
            ),
            Format::Rigor => {
                println!(
                    "##rigor {{\"name\":\"msgs_per_sec\",\"value\":{},\"unit\":\"1/s\",\
                     \"direction\":\"higher\",\"label\":\"Msgs/sec\",\"row\":{{\"clients\":\"{}\"}}}}",
                    r.msgs_per_sec(),
                    r.clients
                );
                println!(
                    "##rigor {{\"name\":\"total_ms\",\"value\":{:.3},\"unit\":\"ms\",\
                     \"direction\":\"lower\",\"label\":\"Total time\",\"row\":{{\"clients\":{}}}}}",
                    r.total_ms(),
                    r.clients
                );
            }
            Format::Crank => {
                let now = timestamp();
                self.rounds.push((
                    now,
                    Round {
                        clients: r.clients,
                        total: r.total,
                        elapsed: r.elapsed,
                        start_threads: r.start_threads,
                        end_threads: r.end_threads,
                    },
                ));
            }
        }
        let _ = std::io::stdout().flush();
    }

    /// The crank block: the best msgs/s over the client counts (`max`), the total time
    /// (`sum`), the number of rounds (`count`), and a text measurement with no metadata.
    pub fn finish(&self) {
        if self.format != Format::Crank {
            return;
        }
        let mut m = Vec::new();
        for (t, r) in &self.rounds {
            m.push(format!(
                "    {{ \"Timestamp\": \"{t}\", \"Name\": \"pingpong/msgs-per-sec\", \"Value\": {} }}",
                r.msgs_per_sec()
            ));
            m.push(format!(
                "    {{ \"Timestamp\": \"{t}\", \"Name\": \"pingpong/total-ms\", \"Value\": {:.3} }}",
                r.total_ms()
            ));
            m.push(format!(
                "    {{ \"Timestamp\": \"{t}\", \"Name\": \"pingpong/rounds\", \"Value\": {} }}",
                r.clients
            ));
        }
        m.push("    { \"Name\": \"pingpong/runtime\", \"Value\": \"rust\" }".into());
        println!("#StartJobStatistics");
        println!("{{\n  \"Metadata\": [");
        println!(
            "    {{ \"Source\": \"PingPong\", \"Name\": \"pingpong/msgs-per-sec\", \"Aggregate\": \"max\", \
             \"Reduce\": \"max\", \"Format\": \"n0\", \"ShortDescription\": \"Max msgs/sec\" }},"
        );
        println!(
            "    {{ \"Source\": \"PingPong\", \"Name\": \"pingpong/total-ms\", \"Aggregate\": \"sum\", \
             \"Reduce\": \"avg\", \"Format\": \"n2\", \"ShortDescription\": \"Total time (ms)\" }},"
        );
        println!(
            "    {{ \"Source\": \"PingPong\", \"Name\": \"pingpong/rounds\", \"Aggregate\": \"count\", \
             \"Reduce\": \"first\", \"Format\": \"n0\", \"ShortDescription\": \"Rounds\" }}"
        );
        println!("  ],\n  \"Measurements\": [\n{}\n  ]\n}}", m.join(",\n"));
        println!("#EndJobStatistics");
    }
}

/// Now as crank writes a measurement's `Timestamp`: ISO 8601 in UTC.
fn timestamp() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
