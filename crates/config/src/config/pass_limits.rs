//! `[[limits]]` tables: pass/fail bounds on a measurement's absolute value, checked when the
//! file is read (the id, `max`/`min`, their units), so a typo stops the run before anything
//! starts, each problem naming file, line and key.

use super::{Config, Problems};
use rigor_analysis::limits::{self, Limit, Op};
use rigor_model::declarations::Declarations;

impl Config {
    /// The `[[limits]]` of the file: a `max` is `<=`, a `min` is `>=` (a table with both is two
    /// limits). `decl` gives the units of ids the catalogue does not know.
    pub fn limits(&self, decl: &Declarations) -> Result<Vec<Limit>, Problems> {
        let mut problems = Problems::default();
        let mut out = Vec::new();
        for (n, raw) in self.raw.limits.iter().enumerate() {
            let at = |key: Option<&str>, message: &str| self.limit_error(n, key, message);
            let Some(id) = raw.measure.as_deref().map(str::trim) else {
                problems.add(at(
                    None,
                    "a limit needs `measure`, the measurement id it bounds",
                ));
                continue;
            };
            if raw.max.is_none() && raw.min.is_none() {
                problems.add(at(None, "a limit needs `max` or `min` (or both)"));
                continue;
            }
            let mut bounds = Vec::new();
            for (key, op, value) in [
                ("max", Op::AtMost, &raw.max),
                ("min", Op::AtLeast, &raw.min),
            ] {
                let Some(value) = value else { continue };
                match limits::limit(id, op, &value.as_text(), decl) {
                    Ok(l) => bounds.push(l),
                    Err(e) => problems.add(at(Some(key), &e.to_string())),
                }
            }
            // Both bounds of one table must leave a value that meets them.
            if let [max, min] = bounds.as_slice() {
                if min.bound > max.bound {
                    problems.add(at(
                        Some("min"),
                        &format!(
                            "{id}: min `{}` is above max `{}`: no value can meet both",
                            min.written, max.written
                        ),
                    ));
                    continue;
                }
            }
            out.extend(bounds);
        }
        problems.or_ok(out)
    }

    /// An error at the `n`th `[[limits]]` table (0-based), at `key` when it is written there.
    fn limit_error(&self, n: usize, key: Option<&str>, message: &str) -> String {
        let lines: Vec<&str> = self.text.lines().collect();
        let start = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.trim_start().starts_with("[[limits]]"))
            .nth(n)
            .map(|(i, _)| i);
        let key_line = start.zip(key).and_then(|(s, k)| {
            lines
                .iter()
                .enumerate()
                .skip(s + 1)
                .take_while(|(_, l)| !l.trim_start().starts_with('['))
                .find(|(_, l)| {
                    l.trim_start()
                        .strip_prefix(k)
                        .is_some_and(|r| r.trim_start().starts_with('='))
                })
                .map(|(i, _)| i)
        });
        let full = match key {
            Some(k) => format!("limits[{}].{k}", n + 1),
            None => format!("limits[{}]", n + 1),
        };
        match key_line.or(start) {
            Some(i) => format!("{}:{}: {full}: {message}", self.path.display(), i + 1),
            None => format!("{}: {full}: {message}", self.path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &str) -> Result<Config, Problems> {
        crate::config::parse_with_scenario(extra)
    }

    #[test]
    fn limits_are_read_with_their_units() {
        let c = parse(
            "[[limits]]\nmeasure = \"load.latency.p99\"\nmax = \"50ms\"\n\
             [[limits]]\nmeasure = \"load.rps\"\nmin = 1000\nmax = 1e6\n",
        )
        .unwrap();
        let l = c.limits(&Declarations::new()).unwrap();
        let got: Vec<(&str, Op, f64)> = l
            .iter()
            .map(|l| (l.measure.as_str(), l.op, l.bound))
            .collect();
        assert_eq!(
            got,
            vec![
                ("load.latency.p99", Op::AtMost, 50.0),
                ("load.rps", Op::AtMost, 1e6),
                ("load.rps", Op::AtLeast, 1000.0),
            ]
        );
    }

    #[test]
    fn every_bad_limit_names_its_line_and_key() {
        let err = parse(
            "[[limits]]\nmeasure = \"load.latency.p99\"\nmax = \"50MiB\"\n\
             [[limits]]\nmeasure = \"load.rps\"\n\
             [[limits]]\nmeasure = \"load.nope\"\nmin = 1\n",
        )
        .err()
        .expect("bad limits");
        let m = err.messages();
        assert_eq!(m.len(), 3, "{err}");
        // BASE has 9 lines: the first table is line 10, its `max` line 12.
        assert_eq!(
            m[0],
            "/tmp/x/rigor.toml:12: limits[1].max: load.latency.p99: `50MiB`: the measurement is in ms, and `MiB` does not convert to it"
        );
        assert_eq!(
            m[1],
            "/tmp/x/rigor.toml:13: limits[2]: a limit needs `max` or `min` (or both)"
        );
        assert!(
            m[2].starts_with(
                "/tmp/x/rigor.toml:17: limits[3].min: unknown measurement `load.nope`"
            ),
            "{}",
            m[2]
        );
        // Bounds no value can meet: below 0 on a figure that never is, and min above max.
        let err = parse(
            "[[limits]]\nmeasure = \"load.latency.p99\"\nmax = \"-5ms\"\n\
             [[limits]]\nmeasure = \"load.rps\"\nmin = \"100\"\nmax = 10\n",
        )
        .err()
        .expect("bounds never met");
        let m = err.messages();
        assert_eq!(m.len(), 2, "{err}");
        assert_eq!(
            m[0],
            "/tmp/x/rigor.toml:12: limits[1].max: load.latency.p99: `-5ms`: a bound below 0 can never be met (load.latency.p99 is never negative)"
        );
        assert_eq!(
            m[1],
            "/tmp/x/rigor.toml:15: limits[2].min: load.rps: min `100` is above max `10`: no value can meet both"
        );
        // A command's own figure may be negative: its bound is taken as written.
        let c = parse("[[limits]]\nmeasure = \"cmd.delta\"\nmax = -5\n").unwrap();
        assert_eq!(c.limits(&Declarations::new()).unwrap()[0].bound, -5.0);
        let err = parse("[[limits]]\nmax = 1\nbetter = 2\n").err().unwrap();
        assert!(err.to_string().contains("unknown field `better`"), "{err}");
    }
}
