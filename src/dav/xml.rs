//! WebDAV XML in and out through `quick-xml`: request bodies are read with
//! its namespace-resolving reader into a small tree of (namespace, name)
//! elements; answers are written with its writer (which escapes every text
//! and attribute) from [`Node`]s. No XML is parsed or escaped by hand.

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;
use quick_xml::writer::Writer;

pub const DAV: &str = "DAV:";
pub const CALDAV: &str = "urn:ietf:params:xml:ns:caldav";
pub const CS: &str = "http://calendarserver.org/ns/";
pub const YEYAK: &str = "urn:yeyak";
pub const APPLE: &str = "http://apple.com/ns/ical/";

/// The prefixes answers use for the namespaces they know.
const PREFIXES: [(&str, &str); 5] = [("D", DAV), ("C", CALDAV), ("CS", CS), ("Y", YEYAK), ("A", APPLE)];

/// An element of a request body: its namespace (empty when none), local
/// name, attributes, children and text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Element {
    pub ns: String,
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
    pub text: String,
}

impl Element {
    pub fn is(&self, ns: &str, name: &str) -> bool {
        self.ns == ns && self.name == name
    }

    pub fn child(&self, ns: &str, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.is(ns, name))
    }

    pub fn children_named<'a>(&'a self, ns: &'a str, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.is(ns, name))
    }

    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Every text inside, trimmed.
    pub fn text(&self) -> String {
        let mut out = self.text.clone();
        for c in &self.children {
            out.push_str(&c.text());
        }
        out.trim().to_owned()
    }
}

/// The deepest element a request body may nest (SPEC §22): WebDAV requests
/// need a handful, and a tree this shallow is safe for every recursive
/// walker (and `Drop`) of [`Element`] on the default thread stack.
pub const MAX_DEPTH: usize = 64;

/// Reads a request body into its root element; `None` when it is not
/// well-formed XML (with namespaces), or nests deeper than [`MAX_DEPTH`]
/// (refused as it is read, before a deep tree exists).
pub fn parse(body: &[u8]) -> Option<Element> {
    let mut reader = NsReader::from_reader(body);
    reader.config_mut().trim_text(true);
    let mut buf = Vec::new();
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let (ns, event) = reader.read_resolved_event_into(&mut buf).ok()?;
        let ns = match ns {
            ResolveResult::Bound(ns) => String::from_utf8(ns.as_ref().to_vec()).ok()?,
            ResolveResult::Unbound => String::new(),
            ResolveResult::Unknown(_) => return None,
        };
        match event {
            // One root element only.
            Event::Start(_) | Event::Empty(_) if root.is_some() => return None,
            Event::Start(ref e) | Event::Empty(ref e) => {
                let name = String::from_utf8(e.local_name().as_ref().to_vec()).ok()?;
                if !is_name(&name) {
                    return None;
                }
                let mut el = Element { ns, name, ..Element::default() };
                for a in e.attributes() {
                    let a = a.ok()?;
                    let key = String::from_utf8(a.key.local_name().as_ref().to_vec()).ok()?;
                    let value = a.unescape_value().ok()?.into_owned();
                    el.attrs.push((key, value));
                }
                if stack.len() >= MAX_DEPTH {
                    return None;
                }
                if matches!(event, Event::Empty(_)) {
                    close(&mut stack, &mut root, el);
                } else {
                    stack.push(el);
                }
            }
            Event::End(_) => {
                let el = stack.pop()?;
                close(&mut stack, &mut root, el);
            }
            Event::Text(t) => {
                let text = t.xml_content().ok()?;
                stack.last_mut()?.text.push_str(&text);
            }
            // Since quick-xml 0.38 references come as their own events.
            Event::GeneralRef(r) => {
                let resolved = match r.resolve_char_ref().ok()? {
                    Some(c) => c.to_string(),
                    None => quick_xml::escape::resolve_xml_entity(&r.decode().ok()?)?.to_owned(),
                };
                stack.last_mut()?.text.push_str(&resolved);
            }
            Event::CData(t) => {
                let text = String::from_utf8(t.into_inner().into_owned()).ok()?;
                stack.last_mut()?.text.push_str(&text);
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !stack.is_empty() {
        return None;
    }
    root
}

/// An XML name without its prefix (an NCName, roughly): quick-xml does not
/// check them, and an answer echoing `<"/>` or `<>` back is no XML at all
/// (found by fuzzing).
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '\u{b7}'))
}

fn close(stack: &mut [Element], root: &mut Option<Element>, el: Element) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(el),
        None => *root = Some(el),
    }
}

/// An element of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub ns: String,
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Node>,
    pub text: Option<String>,
}

impl Node {
    pub fn new(ns: &str, name: &str) -> Node {
        Node { ns: ns.to_owned(), name: name.to_owned(), attrs: Vec::new(), children: Vec::new(), text: None }
    }

    pub fn dav(name: &str) -> Node {
        Node::new(DAV, name)
    }

    pub fn caldav(name: &str) -> Node {
        Node::new(CALDAV, name)
    }

    pub fn with_text(mut self, text: impl Into<String>) -> Node {
        self.text = Some(text.into());
        self
    }

    pub fn with(mut self, child: Node) -> Node {
        self.children.push(child);
        self
    }

    pub fn with_all(mut self, children: impl IntoIterator<Item = Node>) -> Node {
        self.children.extend(children);
        self
    }

    pub fn attr(mut self, key: &str, value: impl Into<String>) -> Node {
        self.attrs.push((key.to_owned(), value.into()));
        self
    }

    /// `<D:href>path</D:href>`.
    pub fn href(path: impl Into<String>) -> Node {
        Node::dav("href").with_text(path)
    }
}

/// The qualified name of an element and, for a namespace without a known
/// prefix, the declaration it needs.
fn qualified(ns: &str, name: &str, extra: &mut Vec<(String, String)>) -> String {
    if let Some((prefix, _)) = PREFIXES.iter().find(|(_, n)| *n == ns) {
        return format!("{prefix}:{name}");
    }
    if ns.is_empty() {
        return name.to_owned();
    }
    extra.push(("xmlns:X".to_owned(), ns.to_owned()));
    format!("X:{name}")
}

fn write_node(w: &mut Writer<Vec<u8>>, node: &Node, root: bool) -> std::io::Result<()> {
    let mut extra = Vec::new();
    let name = qualified(&node.ns, &node.name, &mut extra);
    let mut start = BytesStart::new(name.as_str());
    if root {
        for (prefix, ns) in PREFIXES {
            start.push_attribute((format!("xmlns:{prefix}").as_str(), ns));
        }
    }
    for (k, v) in extra.iter().chain(&node.attrs) {
        start.push_attribute((k.as_str(), v.as_str()));
    }
    if node.children.is_empty() && node.text.is_none() {
        return w.write_event(Event::Empty(start));
    }
    w.write_event(Event::Start(start))?;
    if let Some(text) = &node.text {
        w.write_event(Event::Text(BytesText::new(text)))?;
    }
    for child in &node.children {
        write_node(w, child, false)?;
    }
    w.write_event(Event::End(BytesEnd::new(name.as_str())))
}

/// An XML document with `root`, every known prefix declared on it.
pub fn document(root: &Node) -> String {
    let mut w = Writer::new(Vec::with_capacity(4096));
    let written = w
        .write_event(Event::Decl(BytesDecl::new("1.0", Some("utf-8"), None)))
        .and_then(|_| write_node(&mut w, root, true));
    // Writing into a Vec cannot fail.
    debug_assert!(written.is_ok());
    String::from_utf8(w.into_inner()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_read_with_their_namespaces() {
        let body = br#"<?xml version="1.0"?>
            <d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
              <d:prop><d:displayname/><c:calendar-home-set/><x:other xmlns:x="urn:x"/></d:prop>
            </d:propfind>"#;
        let root = parse(body).unwrap();
        assert!(root.is(DAV, "propfind"));
        let prop = root.child(DAV, "prop").unwrap();
        let names: Vec<(&str, &str)> = prop.children.iter().map(|c| (c.ns.as_str(), c.name.as_str())).collect();
        assert_eq!(names, [(DAV, "displayname"), (CALDAV, "calendar-home-set"), ("urn:x", "other")]);
        let text = parse(b"<a xmlns=\"DAV:\"><href> /x&amp;y </href></a>").unwrap();
        assert_eq!(text.child(DAV, "href").unwrap().text(), "/x&y");
        for bad in [
            &b"<a><b></a>"[..],
            b"not xml",
            b"<p:a/>",
            b"",
            b"<a/><b/>",
            b"<><></></>",
            b"<\" \"=\"\"/>",
            b"<a><1/></a>",
        ] {
            assert!(parse(bad).is_none(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn nesting_deeper_than_the_bound_is_refused() {
        let nested = |n: usize| format!("{}{}", "<a>".repeat(n), "</a>".repeat(n));
        assert!(parse(nested(MAX_DEPTH).as_bytes()).is_some());
        assert!(parse(nested(MAX_DEPTH + 1).as_bytes()).is_none());
        let empty_at_the_bottom = format!("{}<b/>{}", "<a>".repeat(MAX_DEPTH), "</a>".repeat(MAX_DEPTH));
        assert!(parse(empty_at_the_bottom.as_bytes()).is_none());
        assert!(parse(nested(40_000).as_bytes()).is_none(), "refused before the tree exists");
    }

    #[test]
    fn answers_are_escaped() {
        let doc = document(
            &Node::dav("multistatus")
                .with(Node::href("/a&b<c>"))
                .with(Node::new("urn:x", "odd").attr("k", "\"q\""))
                .with(Node::new(YEYAK, "code").with_text("ROOM_TIME_TAKEN")),
        );
        assert!(doc.contains("<D:href>/a&amp;b&lt;c&gt;</D:href>"), "{doc}");
        assert!(doc.contains("xmlns:X=\"urn:x\"") && doc.contains("k=\"&quot;q&quot;\""), "{doc}");
        assert!(doc.contains("<Y:code>ROOM_TIME_TAKEN</Y:code>") && doc.contains("xmlns:D=\"DAV:\""), "{doc}");
        let back = parse(doc.as_bytes()).unwrap();
        assert_eq!(back.child(DAV, "href").unwrap().text(), "/a&b<c>");
    }
}
