//! The whole comparison as one JSON document: the generic model, then each
//! section's part under its key (`null` where the section built nothing), in
//! section order.

use super::format::Exporter;
use crate::report::model::Report;

pub struct Json;

/// Indents every line after the first of a pretty-printed value by one
/// level, so it reads as a member of the top-level object.
fn nested(json: &str) -> String {
    json.replace('\n', "\n  ")
}

impl Exporter for Json {
    fn render(&self, report: &Report) -> String {
        let mut s = match serde_json::to_string_pretty(report) {
            Ok(s) => s,
            Err(e) => {
                let mut s =
                    serde_json::json!({ "error": format!("cannot serialize the report: {e}") })
                        .to_string();
                s.push('\n');
                return s;
            }
        };
        // The parts are spliced in as their sections wrote them, which keeps
        // their fields in declaration order (a serde_json::Value would sort them).
        let keyed: Vec<(&str, Option<String>)> = report
            .listed_sections()
            .filter_map(|sec| {
                let key = sec.json_key()?;
                let part = report
                    .parts
                    .iter()
                    .find(|b| b.section.suite() == sec.suite())
                    .map(|b| {
                        b.part.to_json().unwrap_or_else(|e| {
                            serde_json::json!({
                                "error": format!("cannot serialize the {} part: {e}", b.part.title())
                            })
                            .to_string()
                        })
                    });
                Some((key, part))
            })
            .collect();
        if !keyed.is_empty() && s.ends_with("\n}") {
            s.truncate(s.len() - 2);
            for (key, part) in keyed {
                let key = serde_json::to_string(key).unwrap_or_else(|_| "\"part\"".into());
                let value = part.as_deref().map(nested).unwrap_or_else(|| "null".into());
                s.push_str(&format!(",\n  {key}: {value}"));
            }
            s.push_str("\n}");
        }
        s.push('\n');
        s
    }
}
