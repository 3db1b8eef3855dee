//! Links of README.md and docs/: each lands on a file and heading inside the repository, and the
//! README points at every document.

use super::{heading, read, root};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The targets of the `[text](target)` links of a document.
fn links(doc: &str) -> Vec<&str> {
    doc.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .collect()
}

#[test]
fn links_in_the_readme_and_docs_stay_inside_the_repository_and_land() {
    let mut documents = vec![PathBuf::from("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).expect("docs/") {
        let path = entry.expect("docs entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            documents.push(path.strip_prefix(root()).unwrap().to_path_buf());
        }
    }
    let mut broken = Vec::new();
    for document in &documents {
        let text = read(&document.to_string_lossy());
        for link in links(&text) {
            let (file, fragment) = link.split_once('#').unwrap_or((link, ""));
            if file.contains("://") || file.starts_with("..") || file.starts_with('/') {
                broken.push(format!(
                    "{}: {link} leaves the repository",
                    document.display()
                ));
                continue;
            }
            let target = match file {
                "" => root().join(document),
                f => root().join(document).parent().unwrap().join(f),
            };
            let Ok(target) = target.canonicalize() else {
                broken.push(format!("{}: {link}: no such file", document.display()));
                continue;
            };
            if !target.starts_with(root()) {
                broken.push(format!(
                    "{}: {link} leaves the repository",
                    document.display()
                ));
            } else if !fragment.is_empty() {
                let text = std::fs::read_to_string(&target).unwrap_or_default();
                let anchors: BTreeSet<String> = text
                    .lines()
                    .filter_map(heading)
                    .map(|(_, h)| anchor(h))
                    .collect();
                if !anchors.contains(fragment) {
                    broken.push(format!(
                        "{}: {link}: no heading #{fragment}",
                        document.display()
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links: {broken:#?}");
}

#[test]
fn the_readme_says_where_each_document_is() {
    let readme = read("README.md");
    for entry in std::fs::read_dir(root().join("docs")).expect("docs/") {
        let name = entry.expect("docs entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            readme.contains(&format!("](docs/{name})")),
            "README.md does not link docs/{name}"
        );
    }
}
