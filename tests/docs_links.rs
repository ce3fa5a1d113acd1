//! The documentation holds together: every relative link (and image) in
//! README.md and docs/ names a file or folder that exists, and every
//! `#anchor` into a Markdown page names one of its headings, as GitHub
//! renders them. The README stays a front door: at most 300 lines.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The Markdown pages the check covers: README.md and every `.md` under docs/.
fn pages(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut out = vec![root.join("README.md")];
    walk(&root.join("docs"), &mut out);
    out.sort();
    out
}

/// The lines of a page outside fenced code blocks, with inline code spans
/// removed (a `](` inside code is not a link).
fn prose(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut kept = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                kept.push_str(part);
            }
        }
        out.push(kept);
    }
    out
}

/// The anchors GitHub gives a page's headings: lower case, punctuation
/// dropped, spaces made `-`, and `-1`, `-2`, ... on repeats. Inline code is
/// kept as text here (its backticks are punctuation).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut name = slug.clone();
        let mut n = 0;
        while out.contains(&name) {
            n += 1;
            name = format!("{slug}-{n}");
        }
        out.insert(name);
    }
    out
}

/// The targets of the inline links and images of a line: what sits between
/// `](` and its closing `)`.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let mut depth = 0;
        let mut end = None;
        for (j, c) in rest.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = Some(j);
                    break;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        if let Some(j) = end {
            // A title after the address (`[a](b "t")`) is not part of it.
            let target = rest[..j].split_whitespace().next().unwrap_or("");
            out.push(target.to_string());
            rest = &rest[j..];
        }
    }
    out
}

/// Every relative link of `files` that does not resolve, as
/// `page:line: target (why)`.
fn broken_links(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut broken = Vec::new();
    for page in files {
        let text = std::fs::read_to_string(page).unwrap();
        let shown = page
            .strip_prefix(root)
            .unwrap_or(page)
            .display()
            .to_string();
        for (n, line) in prose(&text).iter().enumerate() {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let file = if path.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(path)
                };
                let at = format!("{shown}:{}: {target}", n + 1);
                if !file.exists() {
                    broken.push(format!("{at} (no such file)"));
                    continue;
                }
                let Some(anchor) = anchor else { continue };
                if file.extension().is_some_and(|x| x == "md") {
                    let heads = anchors(&std::fs::read_to_string(&file).unwrap());
                    if !heads.contains(anchor) {
                        broken.push(format!("{at} (no heading with that anchor)"));
                    }
                }
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_in_the_readme_and_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = pages(root);
    assert!(files.len() > 10, "docs/ pages missing: {files:?}");
    let broken = broken_links(root, &files);
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_stays_under_300_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let n = std::fs::read_to_string(root.join("README.md"))
        .unwrap()
        .lines()
        .count();
    assert!(
        n <= 300,
        "README.md has {n} lines; move reference text to docs/"
    );
}

#[test]
fn a_missing_file_or_heading_is_reported_and_good_links_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("docs/suites")).unwrap();
    std::fs::write(
        root.join("README.md"),
        "# t\n\n[ok](docs/a.md#cpu-budgets---server-cpus) [img](docs/x.svg \"t\")\n\
         [gone](docs/missing.md) `[code](nowhere.md)` [web](https://example.com/x)\n\
         ```\n[fenced](nowhere.md)\n```\n",
    )
    .unwrap();
    std::fs::write(root.join("docs/x.svg"), "<svg/>").unwrap();
    std::fs::write(
        root.join("docs/a.md"),
        "# A\n\n## CPU budgets: `--server-cpus`\n\n[up](../README.md#t) [here](#a) \
         [bad](suites/b.md#nope) [self](#nothing)\n",
    )
    .unwrap();
    std::fs::write(root.join("docs/suites/b.md"), "# B\n").unwrap();
    let broken = broken_links(root, &pages(root));
    assert_eq!(
        broken,
        vec![
            "README.md:4: docs/missing.md (no such file)".to_string(),
            "docs/a.md:5: suites/b.md#nope (no heading with that anchor)".to_string(),
            "docs/a.md:5: #nothing (no heading with that anchor)".to_string(),
        ]
    );
}
