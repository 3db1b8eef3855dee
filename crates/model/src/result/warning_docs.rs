//! docs/warnings.md is generated from [`WarningKind`]: every kind with its meaning and default
//! advice. The test fails when the file differs from what the code says; run it with
//! `RIGOR_WRITE_DOCS=1` to rewrite the file.

use super::WarningKind;

/// The whole page, in the order the kinds are declared.
fn page() -> String {
    let mut out = String::from(
        "# Warnings\n\
         \n\
         <!-- Generated from `WarningKind` (crates/model/src/result/warning.rs) by its unit \
         tests; edit the code, then run `RIGOR_WRITE_DOCS=1 cargo test -p rigor-model \
         warning_docs`. -->\n\
         \n\
         Every warning rigor writes has a stable `kind`, a `message` with the figures of the case \
         at hand and `advice` on what to do. Reports show them as `[kind] message — advice`; the \
         result JSON holds them in `warnings` of the run, of a row or of an iteration (and \
         `rigor compare --json` in its own `warnings`). With `--strict`, any warning makes the \
         command exit with code 4.\n\
         \n\
         The advice below is the default; a warning about a particular case may give more \
         specific advice (the id to declare, how many iterations to ask for). Results written \
         by another version of rigor may hold kinds this list does not have; they load and are \
         shown as they were written.\n",
    );
    for kind in WarningKind::ALL {
        out.push_str(&format!(
            "\n## `{kind}`\n\n{}\n\nWhat to do: {}.\n",
            kind.meaning(),
            kind.advice()
        ));
    }
    out
}

#[test]
fn docs_warnings_md_lists_every_kind_as_the_code_says() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/warnings.md");
    let want = page();
    if std::env::var_os("RIGOR_WRITE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    for kind in WarningKind::ALL {
        assert!(
            have.contains(&format!("## `{kind}`")),
            "docs/warnings.md has no section for `{kind}`"
        );
    }
    assert!(
        have == want,
        "docs/warnings.md differs from WarningKind's meanings and advice; rewrite it with \
         RIGOR_WRITE_DOCS=1 cargo test -p rigor-model warning_docs"
    );
}
