//! A self-reporting benchmark for rigor's command jobs, shaped like akka.net's RemotePingPong:
//! for each client count it runs that many clients, each exchanging a fixed number of messages
//! with its own echo thread over channels, and prints one line of figures per count.
//!
//! ```text
//! pingpong [--clients 1,5,10,15,20,25,30] [--messages 2000] [--window 100] [--work 200]
//!          [--format table|rigor|crank] [--exit CODE]
//! ```
//!
//! `PINGPONG_DELAY_NS` makes the echo busy-wait that long per message, so a variant can be made
//! measurably slower. `--exit CODE` exits with that status after printing (a failing run).

mod args;
mod output;
mod round;

fn main() {
    let args = match args::Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("pingpong: {e}");
            std::process::exit(2);
        }
    };
    let delay_ns = match std::env::var("PINGPONG_DELAY_NS") {
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(ns) => ns,
            Err(_) => {
                eprintln!("pingpong: PINGPONG_DELAY_NS={v:?} is not a whole number of nanoseconds");
                std::process::exit(2);
            }
        },
        Err(_) => 0,
    };
    let mut out = output::Output::new(args.format);
    out.preamble(&args, delay_ns);
    for &clients in &args.clients {
        let r = round::run(clients, args.messages, args.window, args.work, delay_ns);
        out.round(&r);
    }
    out.finish();
    if let Some(code) = args.exit {
        eprintln!("pingpong: exiting with {code} as asked");
        std::process::exit(code);
    }
}
