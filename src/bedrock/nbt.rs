//! Little-endian NBT, as Bedrock stores it in level.dat and in db values: a tree type, a
//! reader for hostile input, a writer, and a compact JSON rendering for the world viewer.
//!
//! Format: a tag id byte (0–12), for named tags a name (u16 LE length + UTF-8, decoded
//! lossily), then the payload. Several root tags may be concatenated in one value.
//!
//! Invariants of the reader (it never panics, whatever the bytes):
//! - nesting deeper than `Limits::max_depth` is an error (no unbounded recursion);
//! - every length is checked against the bytes left BEFORE anything is allocated, so an
//!   allocation never exceeds a small constant times the input size (a list claiming 2^31
//!   longs in a 20-byte value fails at once);
//! - at most `Limits::max_nodes` tags are built per call (array elements are not nodes; they
//!   are bounded by the input size).

use crate::error::{Error, Result};

pub const TAG_END: u8 = 0;
pub const TAG_BYTE: u8 = 1;
pub const TAG_SHORT: u8 = 2;
pub const TAG_INT: u8 = 3;
pub const TAG_LONG: u8 = 4;
pub const TAG_FLOAT: u8 = 5;
pub const TAG_DOUBLE: u8 = 6;
pub const TAG_BYTE_ARRAY: u8 = 7;
pub const TAG_STRING: u8 = 8;
pub const TAG_LIST: u8 = 9;
pub const TAG_COMPOUND: u8 = 10;
pub const TAG_INT_ARRAY: u8 = 11;
pub const TAG_LONG_ARRAY: u8 = 12;

/// One NBT value. Compounds keep their entries in stored order.
#[derive(Clone, Debug, PartialEq)]
pub enum Tag {
    Byte(i8),
    Short(i16),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    ByteArray(Vec<u8>),
    String(String),
    /// Element tag id (kept so an empty list round-trips) and the elements.
    List(u8, Vec<Tag>),
    Compound(Vec<(String, Tag)>),
    IntArray(Vec<i32>),
    LongArray(Vec<i64>),
}

impl Tag {
    /// The tag id of this value.
    pub fn id(&self) -> u8 {
        match self {
            Tag::Byte(_) => TAG_BYTE,
            Tag::Short(_) => TAG_SHORT,
            Tag::Int(_) => TAG_INT,
            Tag::Long(_) => TAG_LONG,
            Tag::Float(_) => TAG_FLOAT,
            Tag::Double(_) => TAG_DOUBLE,
            Tag::ByteArray(_) => TAG_BYTE_ARRAY,
            Tag::String(_) => TAG_STRING,
            Tag::List(..) => TAG_LIST,
            Tag::Compound(_) => TAG_COMPOUND,
            Tag::IntArray(_) => TAG_INT_ARRAY,
            Tag::LongArray(_) => TAG_LONG_ARRAY,
        }
    }

    /// The first entry named `name` of a compound.
    pub fn get(&self, name: &str) -> Option<&Tag> {
        match self {
            Tag::Compound(entries) => entries.iter().find(|(n, _)| n == name).map(|(_, t)| t),
            _ => None,
        }
    }

    /// Any integer tag widened to i64.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Tag::Byte(v) => Some(v as i64),
            Tag::Short(v) => Some(v as i64),
            Tag::Int(v) => Some(v as i64),
            Tag::Long(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Tag::String(s) => Some(s),
            _ => None,
        }
    }
}

/// Bounds on what one read may build.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Deepest nesting of lists and compounds. Default 512.
    pub max_depth: usize,
    /// Most tags built in one call (every compound entry and list element counts). Default
    /// 1,000,000.
    pub max_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 512,
            max_nodes: 1_000_000,
        }
    }
}

/// A root tag: its name and value.
pub type Root = (String, Tag);

/// Reads every concatenated root tag of `data` (at least one).
pub fn read_all(data: &[u8]) -> Result<Vec<Root>> {
    read_all_with(data, Limits::default())
}

pub fn read_all_with(data: &[u8], limits: Limits) -> Result<Vec<Root>> {
    let mut r = Reader::new(data, limits);
    let mut roots = Vec::new();
    loop {
        roots.push(r.root()?);
        if r.pos == data.len() {
            return Ok(roots);
        }
    }
}

/// Reads one root tag starting at `*pos` and advances `*pos` past it.
pub fn read_root(data: &[u8], pos: &mut usize) -> Result<Root> {
    read_root_with(data, pos, Limits::default())
}

pub fn read_root_with(data: &[u8], pos: &mut usize, limits: Limits) -> Result<Root> {
    let mut r = Reader::new(data, limits);
    r.pos = (*pos).min(data.len());
    let root = r.root()?;
    *pos = r.pos;
    Ok(root)
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    nodes: usize,
    limits: Limits,
}

fn bad(msg: impl Into<String>) -> Error {
    Error::corruption(format!("nbt: {}", msg.into()))
}

/// The fewest payload bytes a tag of this id can occupy (for the pre-allocation check).
fn min_payload(id: u8) -> usize {
    match id {
        TAG_END => 0, // only valid with a count of 0, checked by the caller
        TAG_BYTE => 1,
        TAG_SHORT | TAG_STRING => 2,
        TAG_INT | TAG_FLOAT | TAG_BYTE_ARRAY | TAG_INT_ARRAY | TAG_LONG_ARRAY => 4,
        TAG_LONG | TAG_DOUBLE => 8,
        TAG_LIST => 5,
        _ => 1, // compound: at least its end tag
    }
}

impl<'a> Reader<'a> {
    fn new(data: &'a [u8], limits: Limits) -> Self {
        Reader {
            data,
            pos: 0,
            nodes: 0,
            limits,
        }
    }

    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(bad(format!(
                "needs {n} bytes at offset {}, {} left",
                self.pos,
                self.remaining()
            )));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// A length (i32 LE) checked against the bytes left, `unit` bytes per element.
    fn length(&mut self, unit: usize) -> Result<usize> {
        let at = self.pos;
        let n = i32::from_le_bytes(self.fixed()?);
        if n < 0 {
            return Err(bad(format!("negative length {n} at offset {at}")));
        }
        let n = n as usize;
        if n.saturating_mul(unit) > self.remaining() {
            return Err(bad(format!(
                "length {n} × {unit} bytes at offset {at} exceeds the {} bytes left",
                self.remaining()
            )));
        }
        Ok(n)
    }

    fn string(&mut self) -> Result<String> {
        let n = u16::from_le_bytes(self.fixed()?) as usize;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }

    fn count_node(&mut self) -> Result<()> {
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            return Err(bad(format!("more than {} tags", self.limits.max_nodes)));
        }
        Ok(())
    }

    fn root(&mut self) -> Result<Root> {
        let id = self.u8()?;
        if id == TAG_END || id > TAG_LONG_ARRAY {
            return Err(bad(format!("root tag id {id} at offset {}", self.pos - 1)));
        }
        let name = self.string()?;
        self.count_node()?;
        let tag = self.payload(id, 0)?;
        Ok((name, tag))
    }

    fn payload(&mut self, id: u8, depth: usize) -> Result<Tag> {
        Ok(match id {
            TAG_BYTE => Tag::Byte(self.u8()? as i8),
            TAG_SHORT => Tag::Short(i16::from_le_bytes(self.fixed()?)),
            TAG_INT => Tag::Int(i32::from_le_bytes(self.fixed()?)),
            TAG_LONG => Tag::Long(i64::from_le_bytes(self.fixed()?)),
            TAG_FLOAT => Tag::Float(f32::from_le_bytes(self.fixed()?)),
            TAG_DOUBLE => Tag::Double(f64::from_le_bytes(self.fixed()?)),
            TAG_BYTE_ARRAY => {
                let n = self.length(1)?;
                Tag::ByteArray(self.take(n)?.to_vec())
            }
            TAG_STRING => Tag::String(self.string()?),
            TAG_INT_ARRAY => {
                let n = self.length(4)?;
                let bytes = self.take(n * 4)?;
                Tag::IntArray(
                    bytes
                        .chunks_exact(4)
                        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect(),
                )
            }
            TAG_LONG_ARRAY => {
                let n = self.length(8)?;
                let bytes = self.take(n * 8)?;
                Tag::LongArray(
                    bytes
                        .chunks_exact(8)
                        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                        .collect(),
                )
            }
            TAG_LIST => {
                if depth >= self.limits.max_depth {
                    return Err(bad(format!(
                        "nesting deeper than {}",
                        self.limits.max_depth
                    )));
                }
                let elem = self.u8()?;
                if elem > TAG_LONG_ARRAY {
                    return Err(bad(format!("list element tag id {elem}")));
                }
                let at = self.pos;
                let n = self.length(min_payload(elem))?;
                if elem == TAG_END && n > 0 {
                    return Err(bad(format!("list of {n} end tags at offset {at}")));
                }
                if n > self.limits.max_nodes {
                    return Err(bad(format!("more than {} tags", self.limits.max_nodes)));
                }
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    self.count_node()?;
                    items.push(self.payload(elem, depth + 1)?);
                }
                Tag::List(elem, items)
            }
            TAG_COMPOUND => {
                if depth >= self.limits.max_depth {
                    return Err(bad(format!(
                        "nesting deeper than {}",
                        self.limits.max_depth
                    )));
                }
                let mut entries = Vec::new();
                loop {
                    let at = self.pos;
                    let id = self.u8()?;
                    if id == TAG_END {
                        break;
                    }
                    if id > TAG_LONG_ARRAY {
                        return Err(bad(format!("tag id {id} at offset {at}")));
                    }
                    let name = self.string()?;
                    self.count_node()?;
                    let tag = self.payload(id, depth + 1)?;
                    entries.push((name, tag));
                }
                Tag::Compound(entries)
            }
            other => return Err(bad(format!("tag id {other}"))),
        })
    }
}

/// Appends one named root tag.
pub fn write_root(out: &mut Vec<u8>, name: &str, tag: &Tag) {
    out.push(tag.id());
    write_string(out, name);
    write_payload(out, tag);
}

fn write_string(out: &mut Vec<u8>, s: &str) {
    // Names longer than u16 are cut at a char boundary (the format cannot hold more).
    let mut end = s.len().min(u16::MAX as usize);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    out.extend_from_slice(&(end as u16).to_le_bytes());
    out.extend_from_slice(&s.as_bytes()[..end]);
}

fn write_len(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n.min(i32::MAX as usize) as i32).to_le_bytes());
}

fn write_payload(out: &mut Vec<u8>, tag: &Tag) {
    match tag {
        Tag::Byte(v) => out.push(*v as u8),
        Tag::Short(v) => out.extend_from_slice(&v.to_le_bytes()),
        Tag::Int(v) => out.extend_from_slice(&v.to_le_bytes()),
        Tag::Long(v) => out.extend_from_slice(&v.to_le_bytes()),
        Tag::Float(v) => out.extend_from_slice(&v.to_le_bytes()),
        Tag::Double(v) => out.extend_from_slice(&v.to_le_bytes()),
        Tag::ByteArray(v) => {
            write_len(out, v.len());
            out.extend_from_slice(v);
        }
        Tag::String(s) => write_string(out, s),
        Tag::List(elem, items) => {
            let elem = items.first().map_or(*elem, Tag::id);
            out.push(elem);
            write_len(out, items.len());
            for t in items {
                write_payload(out, t);
            }
        }
        Tag::Compound(entries) => {
            for (name, t) in entries {
                write_root(out, name, t);
            }
            out.push(TAG_END);
        }
        Tag::IntArray(v) => {
            write_len(out, v.len());
            v.iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
        }
        Tag::LongArray(v) => {
            write_len(out, v.len());
            v.iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
        }
    }
}

/// Compact JSON: compounds as objects, lists and arrays as arrays, numbers as numbers (longs
/// beyond ±2^53 and non-finite floats as strings). Arrays longer than `max_array` are
/// summarized as `{"array":"int","len":N,"head":[first max_array]}`.
pub fn to_json(tag: &Tag, max_array: usize) -> String {
    let mut out = String::new();
    json(&mut out, tag, max_array);
    out
}

/// `s` as a JSON string literal.
pub(crate) fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn json_f64(out: &mut String, v: f64) {
    if v.is_finite() {
        out.push_str(&format!("{v}"));
    } else {
        json_str(out, &format!("{v}"));
    }
}

fn json_i64(out: &mut String, v: i64) {
    if v.unsigned_abs() <= 1 << 53 {
        out.push_str(&v.to_string());
    } else {
        json_str(out, &v.to_string());
    }
}

fn json_array<T: Copy>(
    out: &mut String,
    kind: &str,
    items: &[T],
    max: usize,
    f: impl Fn(&mut String, T),
) {
    let shown = &items[..items.len().min(max)];
    let summarized = shown.len() < items.len();
    if summarized {
        out.push_str(&format!(
            "{{\"array\":\"{kind}\",\"len\":{},\"head\":",
            items.len()
        ));
    }
    out.push('[');
    for (i, &x) in shown.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        f(out, x);
    }
    out.push(']');
    if summarized {
        out.push('}');
    }
}

fn json(out: &mut String, tag: &Tag, max: usize) {
    match tag {
        Tag::Byte(v) => out.push_str(&v.to_string()),
        Tag::Short(v) => out.push_str(&v.to_string()),
        Tag::Int(v) => out.push_str(&v.to_string()),
        Tag::Long(v) => json_i64(out, *v),
        Tag::Float(v) => json_f64(out, *v as f64),
        Tag::Double(v) => json_f64(out, *v),
        Tag::String(s) => json_str(out, s),
        Tag::ByteArray(v) => json_array(out, "byte", v, max, |o, x| {
            o.push_str(&(x as i8).to_string())
        }),
        Tag::IntArray(v) => json_array(out, "int", v, max, |o, x| o.push_str(&x.to_string())),
        Tag::LongArray(v) => json_array(out, "long", v, max, json_i64),
        Tag::List(_, items) => {
            out.push('[');
            for (i, t) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json(out, t, max);
            }
            out.push(']');
        }
        Tag::Compound(entries) => {
            out.push('{');
            for (i, (name, t)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_str(out, name);
                out.push(':');
                json(out, t, max);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
#[path = "nbt_tests.rs"]
mod tests;
