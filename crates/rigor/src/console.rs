//! Lines for the user that never panic: a closed terminal or pipe (`rigor run … | head`) must
//! not end a run that is still measuring, so write errors are ignored.

use std::io::Write;

/// Text on stdout (the report), as is.
pub fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

/// One line on stderr (progress, warnings, errors).
pub fn err(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
