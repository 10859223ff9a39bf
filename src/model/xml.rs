//! A flat view of an XML document's elements (name, depth, attributes), used for the SRDF and
//! for checks that the URDF parser does not make.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// Deepest element nesting accepted (a URDF nests 4 levels, an SRDF 3): deeper documents
/// are refused before any recursive parser sees them.
pub(crate) const MAX_DEPTH: usize = 32;

/// One element: its tag name, its depth (the root element has depth 0), its attributes and
/// the line where it starts.
#[derive(Debug, Clone)]
pub(crate) struct Element {
    pub name: String,
    pub depth: usize,
    pub attributes: Vec<(String, String)>,
    pub line: usize,
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

/// Line (1-based) of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Line numbers of increasing byte offsets, counting each newline once (the document is
/// read front to back, so the lines of all its elements cost one pass over the text).
struct LineCounter<'a> {
    text: &'a str,
    offset: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            offset: 0,
            line: 1,
        }
    }

    /// Line (1-based) of `offset`, which must not be before the previous offset asked for.
    fn line_at(&mut self, offset: usize) -> usize {
        let offset = offset.clamp(self.offset, self.text.len());
        self.line += self.text.as_bytes()[self.offset..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.offset = offset;
        self.line
    }
}

/// Every element of the document in document order (iteratively, no recursion, in time
/// linear in the text); an error message (with the line and byte position) when the XML
/// is malformed, truncated or nested deeper than [`MAX_DEPTH`].
pub(crate) fn elements(text: &str) -> Result<Vec<Element>, String> {
    let mut reader = Reader::from_str(text);
    let mut lines = LineCounter::new(text);
    let mut out = Vec::new();
    let mut depth = 0usize;
    loop {
        let start = reader.buffer_position() as usize;
        let event = reader.read_event().map_err(|e| {
            let at = reader.error_position() as usize;
            format!("XML error at line {} (byte {at}): {e}", line_of(text, at))
        })?;
        let mut line = || lines.line_at(start + leading_space(&text[start.min(text.len())..]));
        match event {
            Event::Start(e) => {
                if depth >= MAX_DEPTH {
                    return Err(format!(
                        "line {}: elements nested deeper than {MAX_DEPTH} levels",
                        line()
                    ));
                }
                out.push(element(&e, depth, line())?);
                depth += 1;
            }
            Event::Empty(e) => out.push(element(&e, depth, line())?),
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Eof => break,
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("truncated XML ({depth} element(s) not closed)"));
    }
    if out.is_empty() {
        return Err("no XML element".to_string());
    }
    Ok(out)
}

fn leading_space(text: &str) -> usize {
    text.len() - text.trim_start().len()
}

fn element(e: &BytesStart<'_>, depth: usize, line: usize) -> Result<Element, String> {
    let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
    let mut attributes = Vec::new();
    for attr in e.attributes() {
        let attr =
            attr.map_err(|err| format!("line {line}: element <{name}>: bad attribute: {err}"))?;
        let key = String::from_utf8_lossy(attr.key.as_ref()).into_owned();
        let value = attr
            .unescape_value()
            .map_err(|err| format!("line {line}: element <{name}>: attribute {key}: {err}"))?
            .into_owned();
        attributes.push((key, value));
    }
    Ok(Element {
        name,
        depth,
        attributes,
        line,
    })
}
