//! The whole comparison as one JSON document.

use super::Exporter;
use crate::report::model::Report;

pub struct Json;

impl Exporter for Json {
    fn render(&self, report: &Report) -> String {
        let mut s = serde_json::to_string_pretty(report).unwrap_or_else(|e| {
            serde_json::json!({ "error": format!("cannot serialize the report: {e}") }).to_string()
        });
        s.push('\n');
        s
    }
}
