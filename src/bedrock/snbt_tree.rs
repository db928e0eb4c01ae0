//! SNBT as a typed tree, for tree editors (the page's NBT tree editor): text parsed by `snbt`
//! and given back as JSON whose every leaf carries its exact SNBT literal, so a tree printed
//! back as SNBT (the package's `printSnbtTree`: compounds and lists rebuilt around the leaves'
//! literals) parses to the same tags, and so to the same bytes, for every value not edited.
//!
//! JSON shape: the roots as `[{"name":"…","tag":NODE}, …]`, where NODE is one of
//! - `{"t":"compound","v":[["name",NODE], …]}` (entry order and duplicate names kept);
//! - `{"t":"list","e":"<element type word>","v":[NODE, …]}` (`e` is `end` for an untyped
//!   empty list; the words are `snbt`'s: byte short int long float double byte_array string
//!   list compound int_array long_array);
//! - a leaf `{"t":"<type word>","s":"<SNBT literal>"}`, plus `"v"` (the decoded text) for a
//!   string and `"n"` (the element count) for the three array types.
//!
//! Invariants: the literal of a leaf is `snbt::tag_to_snbt` of it (exact round trip, every
//! float bit pattern); the JSON is valid for any tag (names and strings escaped); nesting is
//! bounded by the parser's `MAX_DEPTH`.

use super::nbt::{self, Root, Tag};
use super::snbt;
use crate::error::Result;

/// The type word of a tag id (as `snbt` writes empty typed lists).
fn type_word(id: u8) -> &'static str {
    match id {
        nbt::TAG_BYTE => "byte",
        nbt::TAG_SHORT => "short",
        nbt::TAG_INT => "int",
        nbt::TAG_LONG => "long",
        nbt::TAG_FLOAT => "float",
        nbt::TAG_DOUBLE => "double",
        nbt::TAG_BYTE_ARRAY => "byte_array",
        nbt::TAG_STRING => "string",
        nbt::TAG_LIST => "list",
        nbt::TAG_COMPOUND => "compound",
        nbt::TAG_INT_ARRAY => "int_array",
        nbt::TAG_LONG_ARRAY => "long_array",
        _ => "end",
    }
}

/// The roots of a record as tree JSON (see the module comment).
pub fn tree_json(roots: &[Root]) -> String {
    let mut out = String::from("[");
    for (i, (name, tag)) in roots.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        nbt::json_str(&mut out, name);
        out.push_str(",\"tag\":");
        node(&mut out, tag);
        out.push('}');
    }
    out.push(']');
    out
}

/// Parses SNBT `text` (errors name line and column) and gives its tree JSON.
pub fn parse_tree_json(text: &str) -> Result<String> {
    Ok(tree_json(&snbt::parse(text)?))
}

fn node(out: &mut String, tag: &Tag) {
    out.push_str("{\"t\":\"");
    out.push_str(type_word(tag.id()));
    out.push('"');
    match tag {
        Tag::Compound(entries) => {
            out.push_str(",\"v\":[");
            for (i, (name, t)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('[');
                nbt::json_str(out, name);
                out.push(',');
                node(out, t);
                out.push(']');
            }
            out.push(']');
        }
        Tag::List(elem, items) => {
            out.push_str(",\"e\":\"");
            out.push_str(type_word(*elem));
            out.push_str("\",\"v\":[");
            for (i, t) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                node(out, t);
            }
            out.push(']');
        }
        leaf => {
            out.push_str(",\"s\":");
            nbt::json_str(out, &snbt::tag_to_snbt(leaf));
            match leaf {
                Tag::String(s) => {
                    out.push_str(",\"v\":");
                    nbt::json_str(out, s);
                }
                Tag::ByteArray(v) => out.push_str(&format!(",\"n\":{}", v.len())),
                Tag::IntArray(v) => out.push_str(&format!(",\"n\":{}", v.len())),
                Tag::LongArray(v) => out.push_str(&format!(",\"n\":{}", v.len())),
                _ => {}
            }
        }
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_tag_with_its_literal() {
        let text = "{b: 1b, s: -2s, i: 3, l: 4L, f: 0.1f, d: -0.0d, n: NaN_7fc00001f, \
                    str: \"a\\\"b\\n\", ba: [B; 1b, -1b], ia: [I;], la: [L; 9L], \
                    e: [], ec: [compound;], li: [[1, 2], [3]], \"odd name\": {}}";
        let json = parse_tree_json(text).unwrap();
        assert_eq!(
            json,
            concat!(
                r#"[{"name":"","tag":{"t":"compound","v":["#,
                r#"["b",{"t":"byte","s":"1b"}],["s",{"t":"short","s":"-2s"}],"#,
                r#"["i",{"t":"int","s":"3"}],["l",{"t":"long","s":"4L"}],"#,
                r#"["f",{"t":"float","s":"0.1f"}],["d",{"t":"double","s":"-0.0d"}],"#,
                r#"["n",{"t":"float","s":"NaN_7fc00001f"}],"#,
                r#"["str",{"t":"string","s":"\"a\\\"b\\n\"","v":"a\"b\n"}],"#,
                r#"["ba",{"t":"byte_array","s":"[B; 1b, -1b]","n":2}],"#,
                r#"["ia",{"t":"int_array","s":"[I;]","n":0}],"#,
                r#"["la",{"t":"long_array","s":"[L; 9L]","n":1}],"#,
                r#"["e",{"t":"list","e":"end","v":[]}],"#,
                r#"["ec",{"t":"list","e":"compound","v":[]}],"#,
                r#"["li",{"t":"list","e":"list","v":[{"t":"list","e":"int","v":[{"t":"int","s":"1"},{"t":"int","s":"2"}]},{"t":"list","e":"int","v":[{"t":"int","s":"3"}]}]}],"#,
                r#"["odd name",{"t":"compound","v":[]}]]}}]"#
            )
        );
    }

    #[test]
    fn several_roots_and_named_roots() {
        let json = parse_tree_json("\"root\": {a: 1}\n{b: 2b}").unwrap();
        assert_eq!(
            json,
            r#"[{"name":"root","tag":{"t":"compound","v":[["a",{"t":"int","s":"1"}]]}},{"name":"","tag":{"t":"compound","v":[["b",{"t":"byte","s":"2b"}]]}}]"#
        );
    }

    #[test]
    fn bad_text_names_where() {
        let e = parse_tree_json("{a: 1,\n b: }").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }
}
