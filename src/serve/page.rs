//! What every page of `rqps serve` shares: the pages themselves are the
//! report exporters' own (the HTML exporter, `history`'s, `compat`'s, or
//! the exporters' plain page of blocks), and this file adds the server's
//! part to them: the navigation, forms and links, a reload while a run is
//! being written, and the answer as HTML or JSON.

use std::sync::Arc;

use super::http::{self, Response};
use super::paths::{Target, link};
use crate::report::doc::Block;
use crate::report::export::html;
use crate::report::svg::esc;

/// Seconds between reloads of a page that shows a run being written.
pub const RELOAD_SECS: u32 = 5;

/// The server's own styles, beside the exporter's.
const STYLE: &str = "nav.serve{display:flex;flex-wrap:wrap;gap:.3em 1.2em;align-items:baseline;\
padding:.5em .8em;margin:-24px -24px 16px;background:#f3f3f3;border-bottom:1px solid #d0d0d0}\
nav.serve b{margin-right:.5em}nav.serve .where{color:#666;font-size:13px}\
form.serve{display:flex;flex-wrap:wrap;gap:.4em .9em;align-items:end;margin:.6em 0 1em}\
form.serve label{display:flex;flex-direction:column;font-size:12px;color:#555}\
form.serve input,form.serve select{font:inherit;font-size:14px;padding:2px 4px}\
td.st-running{background:#ffe9a8}td.st-failed,td.st-killed,td.st-interrupted{background:#ff9a9a}\
td.st-unreadable{background:#e4e4e4;white-space:normal;max-width:36em}td.st-ok{background:#d9f7e3}\
pre.serve{background:#f8f8f8;border:1px solid #e0e0e0;padding:.6em;overflow-x:auto;font-size:12px}\
code.cmd{display:inline-block;background:#f3f3f3;padding:2px 6px;border:1px solid #ddd}\
p.live{background:#ffe9a8;padding:.3em .6em;display:inline-block}\
.pages a,.pages span{margin-right:.8em}";

/// The page's own parts, put into an exporter's page.
#[derive(Default)]
pub struct Parts {
    /// Right after `<body>`, before the page's title.
    pub top: String,
    /// Right after the page's first heading.
    pub after_title: String,
    /// At the end of the page.
    pub bottom: String,
    /// Reload every [`RELOAD_SECS`]: a run it shows is being written.
    pub live: bool,
}

/// `page` (a whole page an exporter made) with the server's navigation,
/// styles and `parts` put in.
pub fn inject(page: &str, target: &Target, path: &str, parts: &Parts) -> String {
    let mut head = format!("<style>{STYLE}</style><link rel=\"icon\" href=\"data:,\">");
    if parts.live {
        head.push_str(&format!(
            "<meta http-equiv=\"refresh\" content=\"{RELOAD_SECS}\">"
        ));
    }
    let mut out = String::with_capacity(page.len() + 4096);
    let (before_head_end, rest) = page.split_once("</head>").unwrap_or(("", page));
    out.push_str(before_head_end);
    out.push_str(&head);
    out.push_str("</head>");
    let (body_open, body) = match rest.split_once("<body>") {
        Some((a, b)) => (format!("{a}<body>"), b),
        None => (String::from("<body>"), rest),
    };
    out.push_str(&body_open);
    out.push('\n');
    out.push_str(&nav(target, path));
    out.push_str(&parts.top);
    let (title, after) = match body.find("</h1>") {
        Some(i) => body.split_at(i + "</h1>".len()),
        None => ("", body),
    };
    out.push_str(title);
    out.push('\n');
    out.push_str(&parts.after_title);
    // Before the exporter's closing line ("Made by rqps").
    let end = after
        .rfind("<p style=\"color:#777")
        .or_else(|| after.rfind("</body>"))
        .unwrap_or(after.len());
    out.push_str(&after[..end]);
    out.push_str(&parts.bottom);
    out.push_str(&after[end..]);
    out
}

/// The navigation bar: the pages, and this page as JSON.
fn nav(target: &Target, path: &str) -> String {
    let mut pairs: Vec<(&str, &str)> = target
        .query
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    pairs.push(("format", "json"));
    format!(
        "<nav class=\"serve\"><b>rqps serve</b><a href=\"/runs\">Runs</a><a href=\"/compare\">Compare</a>\
<a href=\"/history\">History</a><a href=\"/compat\">Compatibility</a>\
<a href=\"{}\">This page as JSON</a></nav>\n",
        esc(&link(path, &pairs))
    )
}

/// A page of `blocks` (the exporters' plain page) with `parts`.
pub fn blocks_page(blocks: &[Block], target: &Target, path: &str, parts: &Parts) -> String {
    inject(&html::page(blocks), target, path, parts)
}

/// The answer: `json` or `html` as the request asked.
pub fn respond(status: u16, target: &Target, html: Arc<str>, json: Arc<str>) -> Response {
    if target.json {
        Response::new(status, http::JSON, json)
    } else {
        Response::new(status, http::HTML, html)
    }
}

/// JSON of `v`, pretty-printed, with a newline.
pub fn to_json<T: serde::Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v)
        .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string());
    s.push('\n');
    s
}

/// A refusal or a failure as a page (with the navigation) or as JSON.
pub fn error(status: u16, target: Option<&Target>, path: &str, why: &str) -> Response {
    let json = to_json(&serde_json::json!({ "status": status, "error": why }));
    let Some(target) = target else {
        // The target did not parse: plain text, as any client reads it.
        return Response::text(status, why);
    };
    let html = blocks_page(
        &[
            Block::Heading(1, format!("{status} {}", http::reason(status))),
            Block::Para(why.to_string()),
        ],
        target,
        path,
        &Parts::default(),
    );
    respond(status, target, html.into(), json.into())
}

/// `<code>` of a command line for a person to copy.
pub fn command(cmd: &str) -> String {
    format!("<code class=\"cmd\">{}</code>", esc(cmd))
}

/// An `<a href>` to `href` saying `text`.
pub fn a(href: &str, text: &str) -> String {
    format!("<a href=\"{}\">{}</a>", esc(href), esc(text))
}

/// A `<datalist>` of `values` (the names a form's fields suggest), at most `max`.
pub fn datalist(id: &str, values: &[String], max: usize) -> String {
    let mut s = format!("<datalist id=\"{id}\">");
    for v in values.iter().take(max) {
        s.push_str(&format!("<option value=\"{}\">", esc(v)));
    }
    s.push_str("</datalist>");
    s
}

/// A text field of a form.
pub fn field(label: &str, name: &str, value: &str, list: Option<&str>) -> String {
    format!(
        "<label>{}<input name=\"{name}\" value=\"{}\"{}></label>",
        esc(label),
        esc(value),
        list.map(|l| format!(" list=\"{l}\"")).unwrap_or_default()
    )
}

/// A select of a form; the first option is `any` (empty value).
pub fn select(label: &str, name: &str, any: &str, options: &[String], chosen: &str) -> String {
    let mut s = format!(
        "<label>{}<select name=\"{name}\"><option value=\"\">{}</option>",
        esc(label),
        esc(any)
    );
    for o in options {
        s.push_str(&format!(
            "<option{}>{}</option>",
            if o == chosen { " selected" } else { "" },
            esc(o)
        ));
    }
    s.push_str("</select></label>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::Block;

    #[test]
    fn the_servers_parts_go_into_an_exporters_page() {
        let t = super::super::paths::route("/runs?name=a%22b", None).unwrap();
        let blocks = [
            Block::Heading(1, "Title".into()),
            Block::Para("body".into()),
        ];
        let parts = Parts {
            top: "<p>TOP</p>".into(),
            after_title: "<p>AFTER</p>".into(),
            bottom: "<p>BOTTOM</p>".into(),
            live: true,
        };
        let p = blocks_page(&blocks, &t, "/runs", &parts);
        let at = |s: &str| p.find(s).unwrap_or_else(|| panic!("{s} not in {p}"));
        assert!(at("<style>") < at("http-equiv=\"refresh\"") && at("http-equiv") < at("</head>"));
        assert!(
            at("<body>") < at("<nav") && at("<nav") < at("TOP") && at("TOP") < at("Title</h1>")
        );
        assert!(at("Title</h1>") < at("AFTER") && at("AFTER") < at("body</p>"));
        assert!(at("body</p>") < at("BOTTOM") && at("BOTTOM") < at("Made by rqps"));
        // The JSON link keeps the query, escaped.
        assert!(
            p.contains("href=\"/runs?name=a%22b&amp;format=json\""),
            "{p}"
        );
        // Every exporter page the server shows has the markers.
        let h = crate::report::export::html::page(&[]);
        assert!(h.contains("</head>") && h.contains("<body>"));
    }

    #[test]
    fn an_error_answers_in_the_asked_format() {
        let t = super::super::paths::route("/runs?format=json", None).unwrap();
        let r = error(404, Some(&t), "/runs", "no such run");
        assert_eq!(r.content_type, http::JSON);
        assert!(r.body.contains("\"error\": \"no such run\""));
        let r = error(400, None, "/", "bad");
        assert_eq!(r.content_type, http::TEXT);
    }
}
