//! A flat view of an XML document's elements (name, depth, attributes), used for the SRDF and
//! for checks that the URDF parser does not make.

use std::path::Path;

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// One element: its tag name, its depth (the root element has depth 0) and its attributes.
#[derive(Debug, Clone)]
pub(crate) struct Element {
    pub name: String,
    pub depth: usize,
    pub attributes: Vec<(String, String)>,
}

impl Element {
    /// The value of an attribute.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Every element of the document in document order; an error message (with the byte
/// position) when the XML is malformed or truncated.
pub(crate) fn elements(text: &str, file: &Path) -> Result<Vec<Element>, String> {
    let mut reader = Reader::from_str(text);
    let mut out = Vec::new();
    let mut depth = 0usize;
    loop {
        let event = reader.read_event().map_err(|e| {
            format!(
                "{}: XML error at byte {}: {e}",
                file.display(),
                reader.error_position()
            )
        })?;
        match event {
            Event::Start(e) => {
                out.push(element(&e, depth)?);
                depth += 1;
            }
            Event::Empty(e) => out.push(element(&e, depth)?),
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Eof => break,
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!(
            "{}: truncated XML ({depth} element(s) not closed)",
            file.display()
        ));
    }
    if out.is_empty() {
        return Err(format!("{}: no XML element", file.display()));
    }
    Ok(out)
}

fn element(e: &BytesStart<'_>, depth: usize) -> Result<Element, String> {
    let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
    let mut attributes = Vec::new();
    for attr in e.attributes() {
        let attr = attr.map_err(|err| format!("element <{name}>: bad attribute: {err}"))?;
        let key = String::from_utf8_lossy(attr.key.as_ref()).into_owned();
        let value = attr
            .unescape_value()
            .map_err(|err| format!("element <{name}>: attribute {key}: {err}"))?
            .into_owned();
        attributes.push((key, value));
    }
    Ok(Element {
        name,
        depth,
        attributes,
    })
}
