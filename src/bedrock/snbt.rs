//! SNBT: NBT as editable text (Java/Bedrock command style), a writer and a parser with an exact
//! round trip: `parse(to_snbt(roots)) == roots`, so NBT bytes read, printed, parsed and
//! written again are byte-identical (compound order, duplicate names, list element types of
//! empty lists, every float bit pattern).
//!
//! Syntax: compounds `{name:value, "any name":value}`, lists `[v, v]`, arrays `[B; 1b, 2b]`,
//! `[I; 1, 2]`, `[L; 1L, 2L]`; numbers `1b` byte, `2s` short, `3` int, `4L` long, `1.5f`
//! float, `2.0d` double (a bare `2.0` or `1e5` is a double, `true`/`false` are bytes 1/0);
//! strings `"…"` or `'…'` with `\\ \" \' \n \r \t \b \f \uXXXX` escapes (an unquoted word
//! that is not a number is a string, as in Java). Choices this module adds, for exactness:
//! - floats are printed with Rust's shortest representation that parses back to the same
//!   bits (`-0.0f` included); infinities as `Infinityf`/`-Infinityf` (`d` for doubles); NaN
//!   as `NaNf`/`NaNd` for the default quiet NaN (0x7fc00000, 0x7ff8000000000000) and as
//!   `NaN_<bits in hex>f`/`d` for any other payload (`NaN_7fc00001f`, `NaN_fff8000000000000d`);
//! - an empty list keeps its element type: `[]` is a list of TAG_End, `[compound;]`,
//!   `[int;]`, … (`byte short int long float double byte_array string list compound
//!   int_array long_array`) are empty lists of that type;
//! - a value holding several concatenated root tags (some Bedrock records do) is printed as
//!   one root after another, and a root with a non-empty name as `"name": value`.
//!
//! The parser takes untrusted text: nesting is bounded (`MAX_DEPTH`), and every error names the
//! line, column and byte offset where parsing stopped.

use super::nbt::{self, Root, Tag};
use crate::error::{Error, Result};

/// Deepest nesting the parser accepts (the NBT reader's default bound).
pub const MAX_DEPTH: usize = 512;

const TYPE_WORDS: [&str; 13] = [
    "end",
    "byte",
    "short",
    "int",
    "long",
    "float",
    "double",
    "byte_array",
    "string",
    "list",
    "compound",
    "int_array",
    "long_array",
];

// ---------------------------------------------------------------- writer

/// The SNBT text of a record's root tags (pretty-printed, two-space indents).
pub fn to_snbt(roots: &[Root]) -> String {
    let mut out = String::new();
    for (i, (name, tag)) in roots.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if !name.is_empty() {
            quote(&mut out, name);
            out.push_str(": ");
        }
        write_tag(&mut out, tag, 0);
    }
    out.push('\n');
    out
}

/// The SNBT text of one tag (pretty-printed).
pub fn tag_to_snbt(tag: &Tag) -> String {
    let mut out = String::new();
    write_tag(&mut out, tag, 0);
    out
}

fn is_bare(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+')
}

fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn name(out: &mut String, s: &str) {
    if !s.is_empty() && s.chars().all(is_bare) {
        out.push_str(s);
    } else {
        quote(out, s);
    }
}

fn float(out: &mut String, v: f32) {
    if v.is_nan() {
        if v.to_bits() == f32::NAN.to_bits() {
            out.push_str("NaNf");
        } else {
            out.push_str(&format!("NaN_{:08x}f", v.to_bits()));
        }
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "Infinityf" } else { "-Infinityf" });
    } else {
        out.push_str(&format!("{v:?}f"));
    }
}

fn double(out: &mut String, v: f64) {
    if v.is_nan() {
        if v.to_bits() == f64::NAN.to_bits() {
            out.push_str("NaNd");
        } else {
            out.push_str(&format!("NaN_{:016x}d", v.to_bits()));
        }
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "Infinityd" } else { "-Infinityd" });
    } else {
        out.push_str(&format!("{v:?}d"));
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn array<T: Copy>(out: &mut String, prefix: &str, items: &[T], f: impl Fn(&mut String, T)) {
    out.push('[');
    out.push_str(prefix);
    out.push(';');
    for (i, &x) in items.iter().enumerate() {
        out.push_str(if i == 0 { " " } else { ", " });
        f(out, x);
    }
    out.push(']');
}

fn write_tag(out: &mut String, tag: &Tag, depth: usize) {
    match tag {
        Tag::Byte(v) => out.push_str(&format!("{v}b")),
        Tag::Short(v) => out.push_str(&format!("{v}s")),
        Tag::Int(v) => out.push_str(&v.to_string()),
        Tag::Long(v) => out.push_str(&format!("{v}L")),
        Tag::Float(v) => float(out, *v),
        Tag::Double(v) => double(out, *v),
        Tag::String(s) => quote(out, s),
        Tag::ByteArray(v) => array(out, "B", v, |o, x| o.push_str(&format!("{}b", x as i8))),
        Tag::IntArray(v) => array(out, "I", v, |o, x| o.push_str(&x.to_string())),
        Tag::LongArray(v) => array(out, "L", v, |o, x| o.push_str(&format!("{x}L"))),
        Tag::List(elem, items) => {
            if items.is_empty() {
                if *elem == nbt::TAG_END {
                    out.push_str("[]");
                } else {
                    let word = TYPE_WORDS.get(*elem as usize).copied().unwrap_or("end");
                    out.push_str(&format!("[{word};]"));
                }
                return;
            }
            let nested = matches!(items[0], Tag::Compound(_) | Tag::List(..));
            out.push('[');
            for (i, t) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if nested {
                    out.push('\n');
                    indent(out, depth + 1);
                } else if i > 0 {
                    out.push(' ');
                }
                write_tag(out, t, depth + 1);
            }
            if nested {
                out.push('\n');
                indent(out, depth);
            }
            out.push(']');
        }
        Tag::Compound(entries) => {
            if entries.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, (n, t)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('\n');
                indent(out, depth + 1);
                name(out, n);
                out.push_str(": ");
                write_tag(out, t, depth + 1);
            }
            out.push('\n');
            indent(out, depth);
            out.push('}');
        }
    }
}

// ---------------------------------------------------------------- parser

/// Parses SNBT text holding one or more root tags (see the module comment).
pub fn parse(text: &str) -> Result<Vec<Root>> {
    let mut p = Parser { text, pos: 0 };
    let mut roots = Vec::new();
    p.ws();
    if p.pos == text.len() {
        return Err(p.err("empty text: expected an SNBT value"));
    }
    while p.pos < text.len() {
        let start = p.pos;
        let mut root_name = String::new();
        if matches!(p.peek(), Some('"' | '\'')) {
            let s = p.quoted()?;
            p.ws();
            if p.peek() == Some(':') {
                p.pos += 1;
                p.ws();
                root_name = s;
            } else {
                p.pos = start;
            }
        }
        let tag = p.value(0)?;
        roots.push((root_name, tag));
        p.ws();
    }
    Ok(roots)
}

/// Parses SNBT text holding exactly one unnamed root tag.
pub fn parse_tag(text: &str) -> Result<Tag> {
    let mut roots = parse(text)?;
    if roots.len() != 1 || !roots[0].0.is_empty() {
        return Err(Error::invalid_argument(format!(
            "snbt: expected one unnamed value, found {} root(s)",
            roots.len()
        )));
    }
    Ok(roots.remove(0).1)
}

/// The NBT bytes of `roots` (what a record holds).
pub fn encode(roots: &[Root]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, tag) in roots {
        nbt::write_root(&mut out, name, tag);
    }
    out
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn err(&self, msg: impl std::fmt::Display) -> Error {
        let before = &self.text[..self.pos];
        let line = before.matches('\n').count() + 1;
        let column = before
            .rfind('\n')
            .map_or(before, |i| &before[i + 1..])
            .chars()
            .count()
            + 1;
        Error::invalid_argument(format!(
            "snbt: line {line}, column {column} (offset {}): {msg}",
            self.pos
        ))
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn found(&self) -> String {
        match self.peek() {
            None => "the end of the text".into(),
            Some(c) => format!("{c:?}"),
        }
    }

    fn ws(&mut self) {
        while let Some(c) = self.peek() {
            if !c.is_whitespace() {
                break;
            }
            self.pos += c.len_utf8();
        }
    }

    fn expect(&mut self, c: char) -> Result<()> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(format!("expected {c:?}, found {}", self.found())))
        }
    }

    fn bare(&mut self) -> &str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if !is_bare(c) {
                break;
            }
            self.pos += 1;
        }
        &self.text[start..self.pos]
    }

    fn quoted(&mut self) -> Result<String> {
        let q = self.peek().unwrap_or('"');
        self.pos += 1;
        let mut s = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err("unterminated string"));
            };
            self.pos += c.len_utf8();
            if c == q {
                return Ok(s);
            }
            if c != '\\' {
                s.push(c);
                continue;
            }
            let Some(e) = self.peek() else {
                return Err(self.err("unterminated string"));
            };
            self.pos += e.len_utf8();
            match e {
                '\\' | '"' | '\'' => s.push(e),
                'n' => s.push('\n'),
                'r' => s.push('\r'),
                't' => s.push('\t'),
                'b' => s.push('\u{8}'),
                'f' => s.push('\u{c}'),
                'u' => {
                    let hex = self.text.get(self.pos..self.pos + 4).unwrap_or("");
                    let ch = u32::from_str_radix(hex, 16)
                        .ok()
                        .filter(|_| hex.len() == 4 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
                        .and_then(char::from_u32);
                    match ch {
                        Some(ch) => {
                            s.push(ch);
                            self.pos += 4;
                        }
                        None => return Err(self.err("\\u needs 4 hex digits of a character")),
                    }
                }
                other => {
                    self.pos -= other.len_utf8() + 1;
                    return Err(self.err(format!("unknown escape \\{other}")));
                }
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Tag> {
        match self.peek() {
            Some('{') => self.compound(depth),
            Some('[') => self.list(depth),
            Some('"' | '\'') => Ok(Tag::String(self.quoted()?)),
            Some(c) if is_bare(c) => {
                let start = self.pos;
                let token = self.bare().to_string();
                scalar(&token).map_err(|msg| {
                    self.pos = start;
                    self.err(msg)
                })
            }
            _ => Err(self.err(format!("expected a value, found {}", self.found()))),
        }
    }

    fn deeper(&self, depth: usize) -> Result<usize> {
        if depth >= MAX_DEPTH {
            return Err(self.err(format!("nesting deeper than {MAX_DEPTH}")));
        }
        Ok(depth + 1)
    }

    fn compound(&mut self, depth: usize) -> Result<Tag> {
        let depth = self.deeper(depth)?;
        self.pos += 1;
        let mut entries = Vec::new();
        loop {
            self.ws();
            if self.peek() == Some('}') {
                self.pos += 1;
                return Ok(Tag::Compound(entries));
            }
            let key = match self.peek() {
                Some('"' | '\'') => self.quoted()?,
                Some(c) if is_bare(c) => self.bare().to_string(),
                _ => {
                    return Err(self.err(format!(
                        "expected a name or '}}' in a compound, found {}",
                        self.found()
                    )))
                }
            };
            self.ws();
            self.expect(':')?;
            self.ws();
            let v = self.value(depth)?;
            entries.push((key, v));
            self.ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {}
                _ => {
                    return Err(self.err(format!(
                        "expected ',' or '}}' after a compound entry, found {}",
                        self.found()
                    )))
                }
            }
        }
    }

    fn list(&mut self, depth: usize) -> Result<Tag> {
        let depth = self.deeper(depth)?;
        self.pos += 1;
        self.ws();
        // `[B;`, `[I;`, `[L;` arrays, `[compound;]` empty typed lists.
        let save = self.pos;
        let word = self.bare().to_string();
        self.ws();
        if !word.is_empty() && self.peek() == Some(';') {
            self.pos += 1;
            return match word.as_str() {
                "B" => self
                    .array(|t| match t {
                        Tag::Byte(v) => Some(Tag::Byte(v)),
                        Tag::Int(v) => i8::try_from(v).ok().map(Tag::Byte),
                        _ => None,
                    })
                    .map(|v| {
                        Tag::ByteArray(
                            v.into_iter()
                                .map(|t| match t {
                                    Tag::Byte(b) => b as u8,
                                    _ => 0,
                                })
                                .collect(),
                        )
                    }),
                "I" => self
                    .array(|t| matches!(t, Tag::Int(_)).then_some(t))
                    .map(|v| {
                        Tag::IntArray(v.iter().filter_map(Tag::as_i64).map(|x| x as i32).collect())
                    }),
                "L" => self
                    .array(|t| match t {
                        Tag::Long(v) => Some(Tag::Long(v)),
                        Tag::Int(v) => Some(Tag::Long(v as i64)),
                        _ => None,
                    })
                    .map(|v| Tag::LongArray(v.iter().filter_map(Tag::as_i64).collect())),
                w => match TYPE_WORDS.iter().position(|t| *t == w) {
                    Some(id) => {
                        self.ws();
                        self.expect(']')?;
                        Ok(Tag::List(id as u8, Vec::new()))
                    }
                    None => {
                        self.pos = save;
                        Err(self.err(format!(
                            "unknown array or list type {w:?} (B, I, L or an NBT type name)"
                        )))
                    }
                },
            };
        }
        self.pos = save;
        let mut items: Vec<Tag> = Vec::new();
        loop {
            self.ws();
            if self.peek() == Some(']') {
                self.pos += 1;
                let elem = items.first().map_or(nbt::TAG_END, Tag::id);
                return Ok(Tag::List(elem, items));
            }
            let at = self.pos;
            let v = self.value(depth)?;
            if let Some(first) = items.first() {
                if first.id() != v.id() {
                    self.pos = at;
                    return Err(self.err(format!(
                        "list element {} is a {}, the list holds {}",
                        items.len() + 1,
                        TYPE_WORDS[v.id() as usize],
                        TYPE_WORDS[first.id() as usize]
                    )));
                }
            }
            items.push(v);
            self.ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(']') => {}
                _ => {
                    return Err(self.err(format!(
                        "expected ',' or ']' after a list element, found {}",
                        self.found()
                    )))
                }
            }
        }
    }

    /// The elements of an array after its `X;`, each converted by `accept`.
    fn array(&mut self, accept: impl Fn(Tag) -> Option<Tag>) -> Result<Vec<Tag>> {
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.peek() == Some(']') {
                self.pos += 1;
                return Ok(items);
            }
            let at = self.pos;
            if !self.peek().is_some_and(is_bare) {
                return Err(self.err(format!(
                    "expected a number or ']' in an array, found {}",
                    self.found()
                )));
            }
            let token = self.bare().to_string();
            let v = scalar(&token).ok().and_then(&accept);
            match v {
                Some(v) => items.push(v),
                None => {
                    self.pos = at;
                    return Err(self.err(format!("{token:?} does not fit this array's type")));
                }
            }
            self.ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(']') => {}
                _ => {
                    return Err(self.err(format!(
                        "expected ',' or ']' in an array, found {}",
                        self.found()
                    )))
                }
            }
        }
    }
}

fn numeric_start(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '-' | '+' | '.'))
}

fn int_of<T: std::str::FromStr>(
    digits: &str,
    token: &str,
    kind: &str,
) -> std::result::Result<T, String> {
    digits
        .parse::<T>()
        .map_err(|_| format!("{token:?} is not a {kind} (an integer in the {kind} range)"))
}

fn float_of<T: std::str::FromStr>(
    digits: &str,
    token: &str,
    kind: &str,
) -> std::result::Result<T, String> {
    let ok = digits
        .bytes()
        .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
        && digits.bytes().any(|b| b.is_ascii_digit());
    ok.then(|| digits.parse::<T>().ok())
        .flatten()
        .ok_or_else(|| format!("{token:?} is not a {kind}"))
}

fn nan_bits(token: &str, suffix: char, hex_len: usize) -> Option<u64> {
    let body = token.strip_prefix("NaN_")?.strip_suffix(suffix)?;
    (body.len() == hex_len && body.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u64::from_str_radix(body, 16).ok())
        .flatten()
}

/// One unquoted token: a number, `true`/`false`, a special float, or a bare string.
fn scalar(token: &str) -> std::result::Result<Tag, String> {
    match token {
        "true" => return Ok(Tag::Byte(1)),
        "false" => return Ok(Tag::Byte(0)),
        "Infinityf" | "+Infinityf" => return Ok(Tag::Float(f32::INFINITY)),
        "-Infinityf" => return Ok(Tag::Float(f32::NEG_INFINITY)),
        "Infinityd" | "+Infinityd" => return Ok(Tag::Double(f64::INFINITY)),
        "-Infinityd" => return Ok(Tag::Double(f64::NEG_INFINITY)),
        "NaNf" => return Ok(Tag::Float(f32::NAN)),
        "NaNd" => return Ok(Tag::Double(f64::NAN)),
        _ => {}
    }
    if let Some(bits) = nan_bits(token, 'f', 8) {
        let v = f32::from_bits(bits as u32);
        return if v.is_nan() {
            Ok(Tag::Float(v))
        } else {
            Err(format!("{token:?}: 0x{bits:08x} is not a NaN"))
        };
    }
    if let Some(bits) = nan_bits(token, 'd', 16) {
        let v = f64::from_bits(bits);
        return if v.is_nan() {
            Ok(Tag::Double(v))
        } else {
            Err(format!("{token:?}: 0x{bits:016x} is not a NaN"))
        };
    }
    if !numeric_start(token) {
        return Ok(Tag::String(token.to_string()));
    }
    let (body, last) = token.split_at(token.len() - 1);
    let last = last.chars().next().unwrap_or(' ');
    if !body.is_empty() {
        match last {
            'b' | 'B' => return int_of::<i8>(body, token, "byte").map(Tag::Byte),
            's' | 'S' => return int_of::<i16>(body, token, "short").map(Tag::Short),
            'l' | 'L' => return int_of::<i64>(body, token, "long").map(Tag::Long),
            'f' | 'F' => return float_of::<f32>(body, token, "float").map(Tag::Float),
            'd' | 'D' => return float_of::<f64>(body, token, "double").map(Tag::Double),
            _ => {}
        }
    }
    if token
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'-' || b == b'+')
    {
        return int_of::<i32>(token, token, "int")
            .map(Tag::Int)
            .map_err(|e| format!("{e}; add L for a long"));
    }
    float_of::<f64>(token, token, "number").map(Tag::Double)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(roots: &[Root]) {
        let text = to_snbt(roots);
        let back = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(encode(&back), encode(roots), "{text}");
    }

    #[test]
    fn the_documented_example_parses() {
        let t = parse_tag(
            r#"{name:"x",count:1b,s:2s,l:3L,f:1.5f,d:2.0d,ba:[B;1b,2b],ia:[I;1,2],la:[L;1L,2L],list:[{a:1},{}]}"#,
        )
        .unwrap();
        assert_eq!(
            t,
            Tag::Compound(vec![
                ("name".into(), Tag::String("x".into())),
                ("count".into(), Tag::Byte(1)),
                ("s".into(), Tag::Short(2)),
                ("l".into(), Tag::Long(3)),
                ("f".into(), Tag::Float(1.5)),
                ("d".into(), Tag::Double(2.0)),
                ("ba".into(), Tag::ByteArray(vec![1, 2])),
                ("ia".into(), Tag::IntArray(vec![1, 2])),
                ("la".into(), Tag::LongArray(vec![1, 2])),
                (
                    "list".into(),
                    Tag::List(
                        nbt::TAG_COMPOUND,
                        vec![
                            Tag::Compound(vec![("a".into(), Tag::Int(1))]),
                            Tag::Compound(vec![])
                        ]
                    )
                ),
            ])
        );
        assert_eq!(parse_tag("true").unwrap(), Tag::Byte(1));
        assert_eq!(parse_tag("1e5").unwrap(), Tag::Double(1e5));
        assert!(parse_tag("minecraft:stone").is_err());
        assert_eq!(parse_tag("stone").unwrap(), Tag::String("stone".into()));
        assert!(parse_tag("'it''s'").is_err());
        assert_eq!(
            parse_tag(r"'a\'b\u00e9'").unwrap(),
            Tag::String("a'bé".into())
        );
    }

    #[test]
    fn exact_round_trip_of_edge_values() {
        let floats = [
            0.0f32,
            -0.0,
            1.0,
            0.1,
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
            1e-45,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::from_bits(0x7fc0_0001),
            f32::from_bits(0xffc0_0000),
            f32::from_bits(0x7f80_0001),
        ];
        let doubles = [
            0.0f64,
            -0.0,
            0.1,
            1e300,
            5e-324,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::from_bits(0xfff8_0000_0000_0000),
            f64::from_bits(0x7ff0_0000_0000_0001),
        ];
        let mut entries: Vec<(String, Tag)> = Vec::new();
        for (i, f) in floats.iter().enumerate() {
            entries.push((format!("f{i}"), Tag::Float(*f)));
        }
        for (i, d) in doubles.iter().enumerate() {
            entries.push((format!("d{i}"), Tag::Double(*d)));
        }
        for (elem, word) in TYPE_WORDS.iter().enumerate() {
            entries.push((word.to_string(), Tag::List(elem as u8, vec![])));
        }
        entries.extend([
            ("".into(), Tag::String("".into())),
            ("dup".into(), Tag::Byte(i8::MIN)),
            ("dup".into(), Tag::Short(i16::MIN)),
            ("a b:\"c\"\n".into(), Tag::Int(i32::MIN)),
            ("l".into(), Tag::Long(i64::MIN)),
            (
                "s".into(),
                Tag::String("quote \" back \\ nl \n tab \t ctl \u{1} del \u{7f} é 🌍".into()),
            ),
            ("ba".into(), Tag::ByteArray(vec![0, 127, 128, 255])),
            ("ea".into(), Tag::ByteArray(vec![])),
            ("ia".into(), Tag::IntArray(vec![i32::MIN, i32::MAX])),
            ("la".into(), Tag::LongArray(vec![i64::MIN, i64::MAX])),
            (
                "ll".into(),
                Tag::List(
                    nbt::TAG_LIST,
                    vec![
                        Tag::List(nbt::TAG_STRING, vec![]),
                        Tag::List(nbt::TAG_END, vec![]),
                    ],
                ),
            ),
            (
                "strings".into(),
                Tag::List(nbt::TAG_STRING, vec![Tag::String("true".into())]),
            ),
        ]);
        let tag = Tag::Compound(entries);
        round_trip(&[(String::new(), tag.clone())]);
        round_trip(&[
            ("root name".into(), tag.clone()),
            (String::new(), Tag::String("x".into())),
            (String::new(), Tag::Int(3)),
        ]);
        round_trip(&[
            (String::new(), Tag::String("a".into())),
            ("".into(), Tag::String("b".into())),
        ]);
    }

    #[test]
    fn errors_name_the_position() {
        for (text, says) in [
            ("", "line 1, column 1 (offset 0): empty text"),
            (
                "{a:1,",
                "line 1, column 6 (offset 5): expected a name or '}'",
            ),
            (
                "{\n  a: 1\n  b: 2}",
                "line 3, column 3 (offset 11): expected ',' or '}'",
            ),
            ("{a:300b}", "offset 3): \"300b\" is not a byte"),
            (
                "[1, 2L]",
                "offset 4): list element 2 is a long, the list holds int",
            ),
            ("[B; 1, 2L]", "offset 7): \"2L\" does not fit"),
            ("[Q; 1]", "unknown array or list type \"Q\""),
            ("\"abc", "unterminated string"),
            ("\"a\\qb\"", "offset 2): unknown escape \\q"),
            ("{a:3000000000}", "add L for a long"),
            ("{a:1.2.3}", "\"1.2.3\" is not a number"),
            ("{a:NaN_7f800000f}", "is not a NaN"),
            ("{a:}", "expected a value"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text:?}: {e}");
        }
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep)
            .unwrap_err()
            .to_string()
            .contains("nesting deeper than"));
    }
}
