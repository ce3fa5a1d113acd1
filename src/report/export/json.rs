//! The whole comparison as one JSON document: the generic model, then each
//! section's part under its key (`null` where the section built nothing), in
//! section order. Written as it is serialized (streamed), never held whole.

use std::io::Write;

use super::format::{Exporter, written};
use crate::report::model::Report;

pub struct Json;

/// Indents every line after the first of a pretty-printed value by one
/// level, so it reads as a member of the top-level object.
fn nested(json: &str) -> String {
    json.replace('\n', "\n  ")
}

/// A writer that passes everything on but its last two bytes, which it
/// holds back: the top-level object's closing `\n}`, after which the parts
/// are spliced in.
struct HoldTail<'w> {
    w: &'w mut dyn Write,
    tail: Vec<u8>,
}

impl Write for HoldTail<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tail.extend_from_slice(buf);
        if self.tail.len() > 2 {
            let pass = self.tail.len() - 2;
            self.w.write_all(&self.tail[..pass])?;
            self.tail.drain(..pass);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Exporter for Json {
    fn render(&self, report: &Report) -> String {
        written(self, report)
    }

    fn write(&self, report: &Report, w: &mut dyn Write) -> std::io::Result<()> {
        // The parts are spliced in as their sections wrote them, which keeps
        // their fields in declaration order (a serde_json::Value would sort
        // them); each is made once the model is written, one at a time.
        let keyed: Vec<(&str, Option<&crate::report::model::Built>)> = report
            .listed_sections()
            .filter_map(|sec| {
                let key = sec.json_key()?;
                let part = report
                    .parts
                    .iter()
                    .find(|b| b.section.suite() == sec.suite());
                Some((key, part))
            })
            .collect();
        let mut held = HoldTail {
            w: &mut *w,
            tail: Vec::new(),
        };
        serde_json::to_writer_pretty(&mut held, report)?;
        let tail = std::mem::take(&mut held.tail);
        if !keyed.is_empty() && tail == b"\n}" {
            for (key, block) in keyed {
                let key = serde_json::to_string(key).unwrap_or_else(|_| "\"part\"".into());
                let value = block.map_or_else(
                    || "null".into(),
                    |b| {
                        nested(&b.part.to_json().unwrap_or_else(|e| {
                            serde_json::json!({
                                "error": format!("cannot serialize the {} part: {e}", b.part.title())
                            })
                            .to_string()
                        }))
                    },
                );
                write!(w, ",\n  {key}: {value}")?;
            }
        }
        w.write_all(&tail)?;
        w.write_all(b"\n")
    }
}
