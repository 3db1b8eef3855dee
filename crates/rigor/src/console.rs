//! Lines for the user that never panic: a closed terminal or pipe (`rigor run … | head`) must
//! not end a run that is still measuring, so write errors are ignored — except by [`report`],
//! for commands whose output on stdout is the product.

use std::io::Write;

/// Text on stdout (the report), as is.
pub fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

/// Text on stdout for a command whose report is what it is run for (`rigor compare`, `rigor
/// history`): a reader that went away (`| head`) chose to stop reading and is no error, but any
/// other failure (a full disk, an I/O error) loses the report and is said, so the command can
/// exit non-zero instead of reporting success for a report nobody got.
pub fn report(text: &str) -> anyhow::Result<()> {
    let mut o = std::io::stdout().lock();
    match o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(anyhow::anyhow!(
            "the report was not written to standard output: {e}"
        )),
    }
}

/// One line on stderr (progress, warnings, errors).
pub fn err(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
