//! What the reader asked a report to show beyond its fixed tables: which pivot (`--pivot`,
//! `--pivot-by`), whether sparklines are drawn (`--no-chart`) and how wide they may be. The
//! result alone cannot say it, and every format of one run must show the same pivot.

/// Width assumed for a report that is not shown on a terminal (a file, a pipe without
/// `COLUMNS`): wide enough for a timeline, narrow enough for a PR comment.
pub const FILE_WIDTH: usize = 100;

/// The reader's choices for one report.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// `--pivot ID`: the measurement of the pivot tables; `None` lets
    /// [`super::pivot::default_measurement`] choose (a command job's one figure), or shows none.
    pub pivot: Option<String>,
    /// `--pivot-by VAR`: the variable whose values are the pivot's rows; `None` picks the one
    /// with the most values ([`super::pivot::swept_variable`]).
    pub pivot_by: Option<String>,
    /// Draw sparklines (sweep trends, timelines); `--no-chart` turns them off.
    pub charts: bool,
    /// Characters a line may take; timelines fit their sparklines in it.
    pub width: usize,
    /// The measurement that picks each row's median iteration for its timeline (the run's
    /// primary); `None` falls back to the pivot's measurement, then `load.rps`.
    pub primary: Option<String>,
    /// `--key` or `[report] key`: the figures the headline shows for each compared pair; empty
    /// lets [`super::headline::default_key`] choose.
    pub key: Vec<String>,
    /// `--verbose`: the terminal shows the whole environment table, not its summary line.
    pub verbose: bool,
    /// `--all-measurements`: measurements that are zero on every side, or cannot apply to
    /// the run (TLS errors on `http://`), are shown rather than left out.
    pub all_measurements: bool,
    /// The report is for the terminal (set by [`View::on_terminal`]): the environment is
    /// summed up in a line unless `verbose`; files always hold the whole table.
    pub terminal: bool,
}

impl Default for View {
    /// What a report shows when nobody asked for anything: the default pivot, sparklines, the
    /// width of a file.
    fn default() -> View {
        View {
            pivot: None,
            pivot_by: None,
            charts: true,
            width: FILE_WIDTH,
            primary: None,
            key: Vec::new(),
            verbose: false,
            all_measurements: false,
            terminal: false,
        }
    }
}

impl View {
    /// This view for the terminal rigor prints to: as wide as that terminal.
    pub fn on_terminal(&self) -> View {
        View {
            width: terminal_width(),
            terminal: true,
            ..self.clone()
        }
    }

    /// This view for a file: [`FILE_WIDTH`] wide.
    pub fn in_file(&self) -> View {
        View {
            width: FILE_WIDTH,
            terminal: false,
            ..self.clone()
        }
    }

    /// This view without sparklines (the HTML page draws real charts instead).
    pub fn without_charts(&self) -> View {
        View {
            charts: false,
            ..self.clone()
        }
    }

    /// Whether the report shows the whole environment table: always in a file, on the
    /// terminal with `--verbose`.
    pub fn full_environment(&self) -> bool {
        !self.terminal || self.verbose
    }
}

/// The columns of the terminal on standard output; else `COLUMNS`; else [`FILE_WIDTH`].
pub fn terminal_width() -> usize {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        // SAFETY: TIOCGWINSZ only writes a `winsize` into the struct it is given.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
        if ok && ws.ws_col > 0 {
            return ws.ws_col as usize;
        }
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c > 0)
        .unwrap_or(FILE_WIDTH)
}
