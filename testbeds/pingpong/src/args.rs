//! The command line, parsed by hand: a testbed keeps its dependencies at none.

/// How the figures are printed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Format {
    /// RemotePingPong's table: a header line, then one line per client count.
    Table,
    /// One `##rigor {json}` line per client count and figure.
    Rigor,
    /// One crank `#StartJobStatistics … #EndJobStatistics` block at the end.
    Crank,
}

/// What to run.
#[derive(Debug)]
pub struct Args {
    pub clients: Vec<usize>,
    /// Messages each client sends (each answered, so twice as many are exchanged).
    pub messages: u64,
    /// Pings a client keeps in flight.
    pub window: u64,
    /// Mixing rounds the echo does per message.
    pub work: u32,
    pub format: Format,
    pub exit: Option<i32>,
}

impl Args {
    pub fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
        let mut a = Args {
            clients: vec![1, 5, 10, 15, 20, 25, 30],
            messages: 2000,
            window: 100,
            work: 200,
            format: Format::Table,
            exit: None,
        };
        while let Some(flag) = it.next() {
            let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--clients" => {
                    a.clients = value()?
                        .split(',')
                        .map(|c| match c.trim().parse::<usize>() {
                            Ok(n) if (1..=1000).contains(&n) => Ok(n),
                            _ => Err(format!("--clients: `{c}` is not a count from 1 to 1000")),
                        })
                        .collect::<Result<_, _>>()?
                }
                "--messages" => a.messages = positive(&flag, &value()?)?,
                "--window" => a.window = positive(&flag, &value()?)?,
                "--work" => {
                    let v = value()?;
                    a.work = v
                        .parse()
                        .map_err(|_| format!("--work `{v}` is not a whole number"))?
                }
                "--format" => {
                    a.format = match value()?.as_str() {
                        "table" => Format::Table,
                        "rigor" => Format::Rigor,
                        "crank" => Format::Crank,
                        other => {
                            return Err(format!("--format `{other}`: use table, rigor or crank"))
                        }
                    }
                }
                "--exit" => {
                    let v = value()?;
                    a.exit = Some(
                        v.parse()
                            .map_err(|_| format!("--exit `{v}` is not an exit code"))?,
                    )
                }
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        Ok(a)
    }
}

fn positive(flag: &str, v: &str) -> Result<u64, String> {
    match v.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{flag} `{v}` is not a positive whole number")),
    }
}
